"""Dot layouts: a contraction whose result is transposed to put the activation's leading dims first
is computed as a batched contraction that produces that layout itself.

jax lowers a channel mixing such as ``einsum("co,bchw->bohw", w, x)`` (an FNO's pointwise layer, a
1x1 convolution) to a ``dot_general`` whose result puts the batch dim after or before the channels
(``[o, b, h, w]`` or ``[b, h, w, o]``) and a ``transpose`` to ``[b, o, h, w]``. XLA:CPU then copies
every activation between the two layouts around each layer. Broadcasting the small operand over the
leading dims and contracting per batch (``[b, o, c] x [b, c, h, w]``) gives ``[b, o, h, w]`` with no
copy: the pointwise stack of an FNO runs about twice as fast on the CPU.

When the activation keeps several free dims (``h, w``), the batched contraction runs on them flattened
(``[b, c, h*w]``, as XLA:CPU computes it anyway) and its result is reshaped back; the reshape then moves
down through the elementwise ops after it (a bias, a GELU) until it meets the next contraction, which
flattens the same dims again. Without that, XLA:CPU reads the contraction's result through a reshape inside
the elementwise fusion and gives the fusion a buffer of its own instead of overwriting its operand: an
FNO-2D's projection (32 -> 128 -> 1 channels, batch 8, 64x64) then needs 32 MB of temporaries, which glibc
maps afresh on every call (docs/runtime.md, "Host memory"); with it the whole forward needs 26.8 MB.

The sums are the same but XLA's kernels add them in another order, so results may differ in the last
bits: the family changes rounding and runs only under ``finite_math`` (on by default; pipeline.py's
``FINITE_MATH_ONLY``), on the CPU's cost model only (where it was measured). Moving a reshape is exact.
"""
from __future__ import annotations

import math
from typing import NamedTuple

from hloforge.frontend.registry import names
from hloforge.passes._ir import (
    build, constant, cost_model, element_type, has_one_use, needs_operand, params_of, producer, rebuild, shape_of,
    splat_value, tensor)

ELEMENTWISE_OPS = names("elementwise")
RESHAPE = "stablehlo.reshape"

# x's free elements per batch below which the batched form does not pay (measured on the CPU: 4096 (an FNO's
# 64x64) ran 1.4-1.6x faster, 1024 at 64 channels 8% slower, 64 at 32 channels the same)
MIN_PER_BATCH = 4096


class _Batched(NamedTuple):
    weights: object      # the operand broadcast over the batch (ir.Value)
    activation: object   # the operand whose leading dims become the batch (ir.Value)
    batch: int           # how many leading dims of ``activation``
    weights_contracting: tuple
    activation_contracting: tuple
    rest: tuple          # the activation's free dims after the batch, in order
    weights_first: bool  # whether ``weights`` was the dot's lhs (its precision pair keeps its order)


def _free(rank: int, contracting) -> list:
    return [d for d in range(rank) if d not in contracting]


def plan_batched_dot_layout(op):
    """The _Batched plan of ``batched_dot_layout`` for the transpose ``op`` (pure), or why it does not fire."""
    model = cost_model()
    if model is None or model.name != "cpu":
        return "the cost model is not the CPU's"
    dot = producer(op.operands[0], "stablehlo.dot_general")
    if dot is None or not has_one_use(dot.result):
        return "the operand is not a dot_general used only here"
    p = params_of(dot)
    if p["lhs_batching_dimensions"]:
        return "the dot_general has batching dims"
    perm = list(params_of(op)["permutation"])
    lhs, rhs = dot.operands
    lhs_free = _free(len(shape_of(lhs)), p["lhs_contracting_dimensions"])
    rhs_free = _free(len(shape_of(rhs)), p["rhs_contracting_dimensions"])
    # the dot's result dims: lhs's free dims, then rhs's; name each by (operand, its dim)
    result_dims = [("lhs", d) for d in lhs_free] + [("rhs", d) for d in rhs_free]
    order = [result_dims[i] for i in perm]
    for side, weights_free in (("lhs", rhs_free), ("rhs", lhs_free)):
        act_free = lhs_free if side == "lhs" else rhs_free
        k = next((i for i, d in enumerate(act_free) if d != i), len(act_free))  # its leading free dims 0..k-1
        other = "rhs" if side == "lhs" else "lhs"
        for batch in range(1, k + 1):
            want = ([(side, d) for d in act_free[:batch]] + [(other, d) for d in weights_free]
                    + [(side, d) for d in act_free[batch:]])
            if order == want and act_free[batch:]:
                break
        else:
            continue
        act, weights = (lhs, rhs) if side == "lhs" else (rhs, lhs)
        act_shape = shape_of(act)
        if math.prod(act_shape[d] for d in act_free[batch:]) < MIN_PER_BATCH:
            return "too few activation elements per batch for a batched contraction to pay"
        if math.prod(act_shape[:batch]) * math.prod(shape_of(weights)) > math.prod(act_shape):
            return "the broadcast weights would be larger than the activation"
        contracting = (p["lhs_contracting_dimensions"], p["rhs_contracting_dimensions"])
        weights_c, act_c = (contracting[1], contracting[0]) if side == "lhs" else contracting
        return _Batched(weights, act, batch, tuple(weights_c), tuple(act_c), tuple(act_free[batch:]),
                        side == "rhs")
    return "the transpose does not move the leading dims of an operand in front of the other's free dims"


def batched_dot_layout(op, rewriter):
    """transpose(dot_general(w, x), perm) -> dot_general(broadcast(w), x, batching dims = x's leading dims)

    // Pattern: transpose(dot_general(w: 32x32, x: 8x32x64x64, contracting [0] x [1]), [1, 0, 2, 3])
    //          -> dot_general(broadcast_in_dim(w, 8x32x32), x, batching [0] x [0], contracting [1] x [1])
    Preconditions: the dot_general has no batching dims and no other use; the transpose orders its
    result as x's leading free dims (dims 0..k-1 of x, k >= 1), then all of w's free dims, then x's other
    free dims (at least one), each group in its order; those hold MIN_PER_BATCH elements or more; the
    broadcast w is no larger than x; the CPU's cost model. Changes rounding
    (finite_math only). When x's other free dims are two or more trailing dims, the product runs on them
    flattened and its result is reshaped back (reshape_below_elementwise then moves that reshape down).
    """
    plan = plan_batched_dot_layout(op)
    if isinstance(plan, str):
        return plan
    dot = op.operands[0].owner
    p = params_of(dot)
    batch_shape = list(shape_of(plan.activation)[:plan.batch])
    w_shape = list(shape_of(plan.weights))
    precision = p["precision"]
    if not isinstance(precision, str) and not plan.weights_first:
        precision = tuple(reversed(precision))
    activation, act_shape = plan.activation, shape_of(plan.activation)
    flat = len(plan.rest) > 1 and plan.rest == tuple(range(len(act_shape) - len(plan.rest), len(act_shape)))
    with rewriter.ip:
        if flat:  # (trailing free dims as one, as XLA:CPU computes the product anyway)
            kept = act_shape[:len(act_shape) - len(plan.rest)]
            activation = build(RESHAPE, [activation], shape=kept + (math.prod(act_shape[len(kept):]),),
                               loc=op.location)
        wide = build("stablehlo.broadcast_in_dim", [plan.weights], shape=batch_shape + w_shape,
                     broadcast_dimensions=tuple(range(plan.batch, plan.batch + len(w_shape))), loc=op.location)
        out = build("stablehlo.dot_general", [wide, activation],
                    lhs_batching_dimensions=tuple(range(plan.batch)),
                    rhs_batching_dimensions=tuple(range(plan.batch)),
                    lhs_contracting_dimensions=tuple(d + plan.batch for d in plan.weights_contracting),
                    rhs_contracting_dimensions=plan.activation_contracting,
                    precision=precision, preferred_element_type=p["preferred_element_type"], loc=op.location)
        if flat:
            out = build(RESHAPE, [out], shape=shape_of(op.result), loc=op.location)
    rewriter.replace_op(op, [out])


# ---------------------------------------------------------------- reshapes below elementwise ops

class _Below(NamedTuple):
    shape: tuple     # the reshapes' operand shape: the shape the op computes in
    prefix: int      # leading dims the reshape keeps
    suffix: int      # trailing dims it keeps


def _kept_ends(source: tuple, result: tuple) -> tuple:
    """How many leading and trailing dims a reshape from ``source`` to ``result`` keeps as they are."""
    prefix = 0
    while prefix < min(len(source), len(result)) and source[prefix] == result[prefix]:
        prefix += 1
    suffix = 0
    while (suffix < min(len(source), len(result)) - prefix
           and source[len(source) - 1 - suffix] == result[len(result) - 1 - suffix]):
        suffix += 1
    return prefix, suffix


def _moved_dims(dims, operand_shape, plan: _Below, rank: int):
    """A broadcast's dims (into the op's result, of ``rank``) moved to the reshapes' operand shape, with
    the operand's dims to drop (size 1, inside the reshaped middle), or None when one of size > 1 is there."""
    moved, drop = [], []
    for i, d in enumerate(dims):
        if d < plan.prefix:
            moved.append(d)
        elif d >= rank - plan.suffix:
            moved.append(d - rank + len(plan.shape))
        elif operand_shape[i] == 1:
            drop.append(i)
        else:
            return None
    return tuple(moved), tuple(drop)


def plan_reshape_below_elementwise(op):
    """The _Below plan of ``reshape_below_elementwise`` for the elementwise ``op`` (pure), or why it does
    not fire."""
    model = cost_model()
    if model is None or model.name != "cpu":
        return "the cost model is not the CPU's"
    if len(op.regions) or len(op.results) != 1:
        return "the op has regions or several results"
    result = shape_of(op.result)
    sources = {shape_of(r.operands[0]) for v in op.operands if (r := producer(v, RESHAPE)) is not None}
    if len(sources) != 1:
        return "no operand is a reshape, or the reshapes start from different shapes"
    (source,) = sources
    if source == result:
        return "the reshape keeps its operand's shape"
    plan = _Below(source, *_kept_ends(source, result))
    for v in op.operands:
        if shape_of(v) != result:
            return "an operand is a scalar (a select predicate or clamp bound)"
        if producer(v, RESHAPE) is not None or splat_value(v) is not None:
            continue
        b = producer(v, "stablehlo.broadcast_in_dim")
        if b is None or _moved_dims(params_of(b)["broadcast_dimensions"], shape_of(b.operands[0]), plan,
                                    len(result)) is None:
            return "an operand is neither a reshape, a splat constant nor a broadcast along the kept dims"
    return plan


@needs_operand(RESHAPE)  # (the driver skips the elementwise ops without a reshape operand)
def reshape_below_elementwise(op, rewriter):
    """f(reshape(a), reshape(b), ...) -> reshape(f(a, b, ...))

    // Pattern: add(reshape(d: 8x128x4096 -> 8x128x64x64), broadcast_in_dim(bias: 128, dims = [1]))
    //          -> reshape(add(d, broadcast_in_dim(bias, 8x128x4096, dims = [1])) -> 8x128x64x64)
    Preconditions: f is elementwise, without regions, one result; at least one operand is a reshape, all
    reshapes start from one shape other than f's result; every other operand is a splat constant or a
    broadcast_in_dim whose operand dims of size > 1 land in the dims the reshape keeps at either end;
    the CPU's cost model. Exact: f computes the same elements in another shape.
    """
    plan = plan_reshape_below_elementwise(op)
    if isinstance(plan, str):
        return plan
    rank = len(shape_of(op.result))
    with rewriter.ip:
        operands = []
        for v in op.operands:
            if (r := producer(v, RESHAPE)) is not None:
                operands.append(r.operands[0])
            elif (value := splat_value(v)) is not None:
                operands.append(constant(value, tensor(plan.shape, element_type(v)), op.location))
            else:
                b = producer(v, "stablehlo.broadcast_in_dim")
                u = b.operands[0]
                dims, drop = _moved_dims(params_of(b)["broadcast_dimensions"], shape_of(u), plan, rank)
                if drop:
                    u = build(RESHAPE, [u], shape=tuple(n for i, n in enumerate(shape_of(u)) if i not in drop),
                              loc=op.location)
                operands.append(build("stablehlo.broadcast_in_dim", [u], shape=plan.shape,
                                      broadcast_dimensions=dims, loc=op.location))
        out = build(RESHAPE, [rebuild(op, operands)], shape=shape_of(op.result), loc=op.location)
    rewriter.replace_op(op, [out])


PATTERNS = {
    "batched_dot_layout": (("stablehlo.transpose",), batched_dot_layout),
    "reshape_below_elementwise": (ELEMENTWISE_OPS, reshape_below_elementwise),
}
