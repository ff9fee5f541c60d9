"""Pads into windowed ops and reductions: a pad of a convolution's input (with zeros), or of a
reduce_window's operand (with its init value), becomes the op's own padding, which pads with the same
value; a reduce of a pad with its init value reduces the pad's operand and pads the result.

The op dilates its input before it pads it, and a pad before the op is dilated with the input: a pad
of ``l`` and ``h`` elements becomes ``l * d`` and ``h * d`` of the op's padding on a dimension dilated
by ``d``.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from hloforge.frontend.context import stablehlo
from hloforge.frontend.registry import OPS
from hloforge.passes._ir import build, element_type, finite_math, needs_operand, params_of, rebuild, shape_of, tensor
from hloforge.passes.pad import PAD, is_float, paddings, same_value, scalar_constant, single_use_pad


class _WindowPlan(NamedTuple):
    x: object       # what the pad pads
    padding: tuple  # the op's new (low, high) per window dimension


def _plan(pad, window_dims, padding, dilations):
    """The plan for a pad feeding a windowed op whose window dimensions are ``window_dims`` (operand
    dimensions, in the order of ``padding`` and ``dilations``), or why not."""
    low, high, interior = paddings(pad)
    if any(interior) or any(p < 0 for p in low + high):
        return "the pad has interior padding or crops"
    if any((low[i] or high[i]) for i in range(len(low)) if i not in window_dims):
        return "the pad pads a dimension the window does not pad (batch or feature)"
    padding = padding or ((0, 0),) * len(window_dims)
    dilations = dilations or (1,) * len(window_dims)
    new = tuple((lo + low[i] * d, hi + high[i] * d) for i, (lo, hi), d in zip(window_dims, padding, dilations))
    return _WindowPlan(pad.operands[0], new)


def plan_convolution_of_pad(op):
    """The plan of ``convolution_of_pad`` for the convolution ``op`` (pure), or why it does not fire."""
    if not finite_math():
        return "finite math is off (Inf * 0 in the padding; XLA may sum in another order)"
    pad = single_use_pad(op.operands[0])
    if pad is None:
        return "the input is not a pad with no other user"
    zero = scalar_constant(pad.operands[1])
    if zero is None or zero.tobytes() != np.zeros((), zero.dtype).tobytes():
        return "the pad's value is not +0"
    p = params_of(op)
    return _plan(pad, p["dimension_numbers"].input_spatial_dimensions, p["padding"], p["lhs_dilation"])


@needs_operand(PAD)
def convolution_of_pad(op, rewriter):
    """convolution(pad(x, 0, l, h), w, padding p) -> convolution(x, w, padding p + (l, h) * lhs_dilation)

    Preconditions: the input is a pad with no other user, padding value +0, no interior padding,
    no crops, and padding only spatial dimensions. Finite math only: the padding's zeros no longer
    meet the kernel (Inf * 0 is NaN), and XLA may sum a padded convolution in another order.
    """
    plan = plan_convolution_of_pad(op)
    if isinstance(plan, str):
        return plan
    with rewriter.ip:
        out = rebuild(op, [plan.x, op.operands[1]], padding=plan.padding)
    rewriter.replace_op(op, [out])


_EXACT_BODIES = ("max", "min")  # (padding elements equal to the init value change no max or min)


def plan_reduce_window_of_pad(op):
    """The plan of ``reduce_window_of_pad`` for the reduce_window ``op`` (pure), or why it does not fire."""
    if len(op.operands) != 2:
        return "a variadic reduce_window"
    p = params_of(op)
    if p["body"] not in _EXACT_BODIES and not finite_math():
        return f"a {p['body'] if isinstance(p['body'], str) else 'custom'} body without finite math"
    pad = single_use_pad(op.operands[0])
    if pad is None:
        return "the operand is not a pad with no other user"
    if not same_value(pad.operands[1], op.operands[1]):
        return "the pad's value is not the init value"
    rank = len(p["window_dimensions"])
    return _plan(pad, tuple(range(rank)), p["padding"], p["base_dilations"])


@needs_operand(PAD)
def reduce_window_of_pad(op, rewriter):
    """reduce_window(pad(x, v, l, h), v, padding p) -> reduce_window(x, v, padding p + (l, h) * base_dilations)

    Preconditions: one operand, a pad with no other user whose value is the init value v (the same
    value, or constants with the same bits), with no interior padding and no crops. Exact for max
    and min bodies; other bodies under finite math only (XLA may reduce a padded window in another
    order).
    """
    plan = plan_reduce_window_of_pad(op)
    if isinstance(plan, str):
        return plan
    info = OPS[op.name]
    padding = info.attributes(**info.params(**{**params_of(op), "padding": plan.padding}))["padding"]
    with rewriter.ip:
        copy = op.clone()  # (its body region comes along; the result type stays: the padding moved)
        copy.operands[0] = plan.x
        copy.attributes["padding"] = padding
    rewriter.replace_op(op, list(copy.results))


_IDEMPOTENT = ("max", "min", "and", "or")  # (more copies of the init value change nothing)
_IDENTITY = {"add": 0, "or": 0, "mul": 1}


def plan_reduce_of_pad(op):
    """The plan of ``reduce_of_pad`` for the reduce ``op`` (pure): (the pad, the paddings of the kept
    dims), or why it does not fire."""
    if len(op.operands) != 2:
        return "a variadic reduce"
    p = params_of(op)
    body = p["body"]
    if not isinstance(body, str) or body not in _IDEMPOTENT + tuple(_IDENTITY):
        return "a custom body"
    pad = single_use_pad(op.operands[0])
    if pad is None:
        return "the operand is not a pad with no other user"
    if not same_value(pad.operands[1], op.operands[1]):
        return "the pad's value is not the init value"
    if body not in _IDEMPOTENT:
        init = scalar_constant(op.operands[1])
        if init is None or init != _IDENTITY[body]:
            return f"the init value is not {body}'s identity"
        if is_float(op.result) and not finite_math():
            return f"a float {body} without finite math (-0.0 + 0.0 is +0.0)"
    elif is_float(op.result) and not finite_math():
        # (the optimize sweep, seed 1795: XLA:CPU compares a subnormal as zero, and whether min(-0.0, -0.0,
        # 4e-45) keeps -0.0 or 4e-45, whether min(2.0, 2.0, 4e-45) flushes it to +0.0, depends on how many
        # elements it reduces and in what order, which the padding's copies of v change)
        return f"a float {body} without finite math (ties of -0.0, +0.0 and subnormals go by XLA's order)"
    low, high, interior = paddings(pad)
    if any(q < 0 for q in low + high):
        return "the pad crops"
    kept = [d for d in range(len(low)) if d not in p["dimensions"]]
    return pad, [low[d] for d in kept], [high[d] for d in kept], [interior[d] for d in kept]


@needs_operand(PAD)
def reduce_of_pad(op, rewriter):
    """reduce(pad(x, v, l, h, i), v, dims) -> pad(reduce(x, v, dims), v, l, h, i on the kept dims)

    Preconditions: one operand, a pad with no other user and no crops whose value is the init value
    v (the same value, or constants with the same bits); a named body: max, min, and, or (more copies
    of v change nothing: exact for integers and booleans; a float max or min only under finite math:
    XLA:CPU keeps one of -0.0, +0.0 and a subnormal it compares as zero, or flushes the subnormal, by the
    number and order of the elements), or add, or, mul with v its identity (float add and mul under finite
    math: -0.0 + 0.0 is +0.0). The padded elements of the reduced dims vanish; a kept dim's padding
    becomes rows of v.
    """
    plan = plan_reduce_of_pad(op)
    if isinstance(plan, str):
        return plan
    pad, low, high, interior = plan
    x, v = pad.operands
    kept = [n for d, n in enumerate(shape_of(x)) if d not in params_of(op)["dimensions"]]
    with rewriter.ip:
        copy = op.clone()  # (its body region comes along)
        copy.operands[0] = x
        copy.results[0].set_type(tensor(kept, element_type(op.result)))
        out = build(PAD, [copy.results[0], v], low=low, high=high, interior=interior, loc=op.location)
    rewriter.replace_op(op, [out])


PATTERNS = {
    "convolution_of_pad": (stablehlo.ConvolutionOp, convolution_of_pad),
    "reduce_window_of_pad": (stablehlo.ReduceWindowOp, reduce_window_of_pad),
    "reduce_of_pad": (stablehlo.ReduceOp, reduce_of_pad),
}
