"""Derivative rules of the data-movement ops (frontend/ops/shape.py): reshape, transpose, reverse,
broadcast_in_dim, slice and concatenate are linear (``deflinear``: only their transposes are
written); dynamic_slice is linear in its operand (index operands get no cotangent); constant and
iota have no tangents."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.ad._util import deflinear, full, zero_rules, zeros_like
from hloforge.frontend.registry import def_rule


# ---------------------------------------------------------------- linear: only the transposes

deflinear("stablehlo.reshape", lambda ct, x, shape: [ops.reshape(ct, x.shape)])
deflinear("stablehlo.transpose", lambda ct, x, permutation: [ops.transpose(ct, tuple(np.argsort(permutation)))])
deflinear("stablehlo.reverse", lambda ct, x, dimensions: [ops.reverse(ct, dimensions)])


def _broadcast_t(c, x, shape, broadcast_dimensions):
    dims = broadcast_dimensions
    expanded = [i for i in range(x.ndim) if x.shape[i] == 1 and shape[dims[i]] != 1]
    summed = sorted(set(d for d in range(len(shape)) if d not in dims) | {dims[i] for i in expanded})
    r = ops.reduce(c, 0, tuple(summed), "add") if summed else c
    kept = sorted((i for i in range(x.ndim) if i not in expanded), key=lambda i: dims[i])
    if kept != sorted(kept):  # the remaining dims are in result order; put them in operand order
        r = ops.transpose(r, tuple(kept.index(i) for i in sorted(kept)))
    return [ops.reshape(r, x.shape) if r.shape != x.shape else r]


deflinear("stablehlo.broadcast_in_dim", _broadcast_t)


def _slice_t(c, x, start_indices, limit_indices, strides):
    if 0 in c.shape:
        return [zeros_like(x)]
    high = [n - (s + (m - 1) * st + 1) for n, s, m, st in zip(x.shape, start_indices, c.shape, strides)]
    return [ops.pad(c, 0, start_indices, high, [st - 1 for st in strides])]


deflinear("stablehlo.slice", _slice_t)


def _concat_t(c, *ins, dimension):
    out, start = [], 0
    for x in ins:
        begin = [0] * c.ndim
        limit = list(c.shape)
        begin[dimension], limit[dimension] = start, start + x.shape[dimension]
        out.append(ops.slice(c, begin, limit))
        start += x.shape[dimension]
    return out


deflinear("stablehlo.concatenate", _concat_t)


# ---------------------------------------------------------------- dynamic_slice (linear in the operand only)

@def_rule("jvp", "stablehlo.dynamic_slice")
def _dynamic_slice_jvp(ins, outs, ts, slice_sizes):
    return [ops.dynamic_slice(ts[0], ins[1:], slice_sizes)]


@def_rule("vjp", "stablehlo.dynamic_slice")
def _dynamic_slice_vjp(ins, outs, cts, slice_sizes):
    """Pad the cotangent by n - s on both sides of each dim and slice n at (n - s) - start, with
    start clamped into [0, n - s] as the op does: no dynamic_update_slice needed."""
    x, starts, c = ins[0], ins[1:], cts[0]
    edges = [n - s for n, s in zip(x.shape, slice_sizes)]
    padded = ops.pad(c, 0, edges, edges)
    offsets = []
    for s, e in zip(starts, edges):
        clamped = ops.clamp(full(0, (), s.dtype), s, full(e, (), s.dtype))
        offsets.append(ops.subtract(full(e, (), s.dtype), clamped))
    return [ops.dynamic_slice(padded, offsets, x.shape)] + [None] * len(starts)


zero_rules("stablehlo.iota")
zero_rules("stablehlo.constant")
