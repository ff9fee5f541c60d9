"""Pads move below layout ops (part of ``pad-push``): a transpose, a reshape or a broadcast_in_dim of a pad
becomes the pad of the moved operand, so that the pad meets the next pad, slice or FFT. Every pattern is
exact.
"""
from __future__ import annotations

from typing import NamedTuple

from hloforge.frontend.context import stablehlo
from hloforge.passes._ir import build, ints, needs_operand, shape_of
from hloforge.passes.pad import PAD, paddings, single_use_pad


def plan_transpose_of_pad(op):
    """The pad of ``transpose_of_pad`` for the transpose ``op`` (pure), or why it does not fire."""
    pad = single_use_pad(op.operands[0])
    return "the operand is not a pad with no other user" if pad is None else pad


@needs_operand(PAD)
def transpose_of_pad(op, rewriter):
    """transpose(pad(x, v, low, high, interior), p) -> pad(transpose(x, p), v, low[p], high[p], interior[p])

    Preconditions: the pad has no other user.
    """
    pad = plan_transpose_of_pad(op)
    if isinstance(pad, str):
        return pad
    perm = ints(op, "permutation")
    low, high, interior = paddings(pad)
    with rewriter.ip:
        t = build("stablehlo.transpose", [pad.operands[0]], permutation=perm, loc=op.location)
        out = build(PAD, [t, pad.operands[1]], low=[low[p] for p in perm], high=[high[p] for p in perm],
                    interior=[interior[p] for p in perm], loc=op.location)
    rewriter.replace_op(op, [out])


def _standalone_dims(before, after):
    """For each dim i of ``before`` that a reshape to ``after`` keeps whole (the same size, with the
    same number of elements before it in row-major order), the dim of ``after`` it becomes."""
    keep, prefix_after = {}, {}
    acc = 1
    for j, n in enumerate(after):
        prefix_after.setdefault((acc, n), j)
        acc *= n
    acc = 1
    for i, n in enumerate(before):
        j = prefix_after.get((acc, n))
        if j is not None and n > 1:
            keep[i] = j
        acc *= n
    return keep


class _MovedPad(NamedTuple):
    x: object       # what the pad pads
    value: object   # its padding value
    shape: list     # x's shape after the layout op
    low: list       # the paddings after the layout op
    high: list
    interior: list


def _moved_pad(pad, after, where):
    """The pad ``pad`` moved below a layout op with result shape ``after`` that sends each padded dim
    i of the pad to dim ``where[i]``."""
    x = pad.operands[0]
    low, high, interior = paddings(pad)
    shape = list(after)
    moved = [[0] * len(after) for _ in range(3)]
    for i, j in where.items():
        shape[j] = shape_of(x)[i]
        moved[0][j], moved[1][j], moved[2][j] = low[i], high[i], interior[i]
    return _MovedPad(x, pad.operands[1], shape, *moved)


def _padded_dims(pad) -> list:
    low, high, interior = paddings(pad)
    return [i for i in range(len(low)) if low[i] or high[i] or interior[i]]


def plan_reshape_of_pad(op):
    """The moved pad of ``reshape_of_pad`` for the reshape ``op`` (pure), or why it does not fire."""
    pad = single_use_pad(op.operands[0])
    if pad is None:
        return "the operand is not a pad with no other user"
    padded = _padded_dims(pad)
    keep = _standalone_dims(shape_of(pad.result), shape_of(op.result))
    if not padded:
        return "the pad pads nothing"
    if any(i not in keep for i in padded):
        return "the reshape splits or merges a padded dim"
    return _moved_pad(pad, shape_of(op.result), {i: keep[i] for i in padded})


@needs_operand(PAD)
def reshape_of_pad(op, rewriter):
    """reshape(pad(x, v, low, high, interior)) -> pad(reshape(x), v, low', high', interior')

    Preconditions: the pad has no other user, and every padded dim is kept whole by the reshape
    (same size and the same number of elements before it, so only unpadded dims are split, merged,
    added or removed).
    """
    plan = plan_reshape_of_pad(op)
    if isinstance(plan, str):
        return plan
    with rewriter.ip:
        r = build("stablehlo.reshape", [plan.x], shape=plan.shape, loc=op.location)
        out = build(PAD, [r, plan.value], low=plan.low, high=plan.high, interior=plan.interior, loc=op.location)
    rewriter.replace_op(op, [out])


def plan_broadcast_of_pad(op):
    """The moved pad of ``broadcast_of_pad`` for the broadcast_in_dim ``op`` (pure), or why it does
    not fire."""
    pad = single_use_pad(op.operands[0])
    if pad is None:
        return "the operand is not a pad with no other user"
    dims, before, after = ints(op, "broadcast_dimensions"), shape_of(pad.result), shape_of(op.result)
    padded = _padded_dims(pad)
    if not padded:
        return "the pad pads nothing"
    if any(after[dims[i]] != before[i] for i in padded):
        return "the broadcast expands a padded dim"
    return _moved_pad(pad, after, {i: dims[i] for i in padded})


@needs_operand(PAD)
def broadcast_of_pad(op, rewriter):
    """broadcast_in_dim(pad(x, v, low, high, interior), dims) -> pad(broadcast_in_dim(x, dims), v, ...)

    Preconditions: the pad has no other user and no padded dim is expanded by the broadcast (its
    result dim has the pad's size).
    """
    plan = plan_broadcast_of_pad(op)
    if isinstance(plan, str):
        return plan
    with rewriter.ip:
        b = build("stablehlo.broadcast_in_dim", [plan.x], shape=plan.shape,
                  broadcast_dimensions=ints(op, "broadcast_dimensions"), loc=op.location)
        out = build(PAD, [b, plan.value], low=plan.low, high=plan.high, interior=plan.interior, loc=op.location)
    rewriter.replace_op(op, [out])


PATTERNS = {
    "transpose_of_pad": (stablehlo.TransposeOp, transpose_of_pad),
    "reshape_of_pad": (stablehlo.ReshapeOp, reshape_of_pad),
    "broadcast_of_pad": (stablehlo.BroadcastInDimOp, broadcast_of_pad),
}
