"""Comparison and choice: compare, select, clamp."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import attributes as attr
from hloforge.frontend.ops import _evaluate as ev
from hloforge.frontend.ops._common import (
    BOOL, COMPLEX, FLOAT, SINT, UINT, category, check_dtype, operand, same_shape_and_dtype)
from hloforge.frontend.ops.elementwise import binary_operands
from hloforge.frontend.registry import bind, register

DIRECTIONS = ("EQ", "NE", "GE", "GT", "LE", "LT")
COMPARE_TYPES = ("FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED")
# the comparison type StableHLO's verifier and XLA expect for each dtype category
NATURAL_COMPARE_TYPE = {BOOL: "UNSIGNED", SINT: "SIGNED", UINT: "UNSIGNED", FLOAT: "FLOAT", COMPLEX: "FLOAT"}


def _compare_params(direction, compare_type=None):
    if isinstance(direction, str):
        direction = direction.upper()
    if direction not in DIRECTIONS:
        raise ValueError(f"compare: direction {direction!r} is not one of {', '.join(DIRECTIONS)}")
    if compare_type is not None and compare_type not in COMPARE_TYPES:
        raise ValueError(f"compare: compare_type {compare_type!r} is not one of {', '.join(COMPARE_TYPES)} or None")
    return {"direction": direction, "compare_type": compare_type}


def _compare_rule(lhs, rhs, direction, compare_type):
    same_shape_and_dtype("compare", lhs, rhs)
    if category(lhs.dtype) == COMPLEX and direction not in ("EQ", "NE"):
        raise TypeError(f"compare: complex operands support only EQ and NE, got {direction}")
    return lhs.shape, np.dtype(bool)


def _compare_attributes(direction, compare_type):
    out = {"comparison_direction": attr.comparison_direction(direction)}
    if compare_type is not None:
        out["compare_type"] = attr.comparison_type(compare_type)
    return out


def _compare_decode(op):
    return {"direction": attr.read_comparison_direction(op), "compare_type": attr.read_comparison_type(op)}


_COMPARE = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
            "GT": np.greater, "GE": np.greater_equal}


def _compare_evaluate(a, b, direction, compare_type=None):
    natural = {"f": "FLOAT", "c": "FLOAT", "i": "SIGNED", "u": "UNSIGNED", "b": "UNSIGNED"}[ev.kind(a)]
    if compare_type not in (None, natural) or not ev.safe_inputs([a, b], exact_complex=True):
        return None  # TOTALORDER, a signedness other than the dtype's, or flushed subnormals
    with np.errstate(all="ignore"):
        return _COMPARE[direction](ev.wide(a), ev.wide(b))


@register("stablehlo.compare", rule=_compare_rule, params=_compare_params, attributes=_compare_attributes,
          decode=_compare_decode, evaluate=_compare_evaluate, traits={"elementwise", "binary"})
def compare(lhs, rhs, direction: str, compare_type: str | None = "natural", *, loc=None):
    """Elementwise comparison; emits ``stablehlo.compare``.

    Args:
      lhs, rhs: Tensors of one shape and dtype.
      direction: one of "EQ", "NE", "GE", "GT", "LE", "LT".
      compare_type: "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED", None (no attribute), or
        "natural" (default: the type that follows the dtype).
    Returns:
      A bool Tensor of the operands' shape.
    Example:
      >>> mask = ops.compare(x, y, "LT")
    """
    lhs, rhs = binary_operands("compare", lhs, rhs)
    if compare_type == "natural":
        compare_type = NATURAL_COMPARE_TYPE[category(lhs.dtype)]
    return bind("stablehlo.compare", [lhs, rhs], direction=direction, compare_type=compare_type, loc=loc)


def _select_rule(pred, on_true, on_false):
    same_shape_and_dtype("select", on_true, on_false)
    if pred.dtype != np.bool_:
        raise TypeError(f"select: pred dtype must be bool, got {pred.dtype}")
    if pred.shape not in ((), on_true.shape):
        raise ValueError(f"select: pred shape {pred.shape} must be () or {on_true.shape}")
    return on_true.shape, on_true.dtype


def _select_evaluate(pred, on_true, on_false):
    return np.where(pred, on_true, on_false)


@register("stablehlo.select", rule=_select_rule, evaluate=_select_evaluate, traits={"elementwise", "linear"})
def select(pred, on_true, on_false, *, loc=None):
    """``on_true`` where ``pred`` else ``on_false``; emits ``stablehlo.select``.

    Args:
      pred: bool Tensor of the branches' shape, or a 0-d bool Tensor.
      on_true, on_false: Tensors of one shape and dtype.
    Returns:
      A Tensor of the branches' shape and dtype.
    Example:
      >>> y = ops.select(ops.compare(x, 0.0, "GT"), x, 0.0 * x)
    """
    pred = operand("select", pred, "pred")
    on_true, on_false = binary_operands("select", on_true, on_false)
    return bind("stablehlo.select", [pred, on_true, on_false], loc=loc)


def _clamp_rule(lo, x, hi):
    for name, bound in (("min", lo), ("max", hi)):
        if bound.dtype != x.dtype:
            raise TypeError(f"clamp: {name} dtype {bound.dtype} differs from operand dtype {x.dtype}")
        if bound.shape not in ((), x.shape):
            raise ValueError(f"clamp: {name} shape {bound.shape} must be () or {x.shape}")
    check_dtype("clamp", x, (SINT, UINT, FLOAT))
    return x.shape, x.dtype


def _clamp_evaluate(lo, x, hi):
    if not ev.safe_inputs([lo, x, hi]):
        return None
    if x.dtype.kind == "f" and any((v == 0).any() for v in (lo, x, hi)):
        return None  # which zero max(-0, +0) keeps is not pinned down
    with np.errstate(all="ignore"):
        return ev.finish(np.minimum(np.maximum(ev.wide(x), ev.wide(lo)), ev.wide(hi)), x.dtype)


@register("stablehlo.clamp", rule=_clamp_rule, evaluate=_clamp_evaluate, traits={"elementwise"})
def clamp(min, x, max, *, loc=None):
    """``minimum(maximum(x, min), max)``; emits ``stablehlo.clamp``.

    Args:
      min, max: bounds of x's dtype, 0-d or of x's shape (Python scalars become constants).
      x: Tensor.
    Returns:
      A Tensor of x's shape and dtype.
    Example:
      >>> y = ops.clamp(0.0, x, 1.0)
    """
    x = operand("clamp", x)
    lo = operand("clamp", min, "min", dtype=x.dtype)
    hi = operand("clamp", max, "max", dtype=x.dtype)
    return bind("stablehlo.clamp", [lo, x, hi], loc=loc)
