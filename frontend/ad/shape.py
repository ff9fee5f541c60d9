"""Derivative rules of the data-movement ops (frontend/ops/shape.py): reshape, transpose, reverse,
broadcast_in_dim, slice, concatenate, dynamic_slice, all linear in their data operands (index
operands get no cotangent); constant and iota have no tangents."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.ad._util import full, instantiate, zero_rules, zeros_like
from hloforge.frontend.registry import def_rule


def _same_op(builder):
    """jvp of an op linear in its first operand: the op itself on the tangent."""
    def jvp(ins, outs, ts, **params):
        return [builder(ts[0], **params)]
    return jvp


# ---------------------------------------------------------------- reshape, transpose, reverse, broadcast

def_rule("jvp", "stablehlo.reshape")(_same_op(ops.reshape))
def_rule("vjp", "stablehlo.reshape")(lambda ins, outs, cts, shape: [ops.reshape(cts[0], ins[0].shape)])
def_rule("jvp", "stablehlo.transpose")(_same_op(ops.transpose))
def_rule("vjp", "stablehlo.transpose")(
    lambda ins, outs, cts, permutation: [ops.transpose(cts[0], tuple(np.argsort(permutation)))])
def_rule("jvp", "stablehlo.reverse")(_same_op(ops.reverse))
def_rule("vjp", "stablehlo.reverse")(lambda ins, outs, cts, dimensions: [ops.reverse(cts[0], dimensions)])


@def_rule("vjp", "stablehlo.broadcast_in_dim")
def _broadcast_vjp(ins, outs, cts, shape, broadcast_dimensions):
    x, c = ins[0], cts[0]
    dims = broadcast_dimensions
    expanded = [i for i in range(x.ndim) if x.shape[i] == 1 and shape[dims[i]] != 1]
    summed = sorted(set(d for d in range(len(shape)) if d not in dims) | {dims[i] for i in expanded})
    r = ops.reduce(c, 0, tuple(summed), "add") if summed else c
    kept = sorted((i for i in range(x.ndim) if i not in expanded), key=lambda i: dims[i])
    if kept != sorted(kept):  # the remaining dims are in result order; put them in operand order
        r = ops.transpose(r, tuple(kept.index(i) for i in sorted(kept)))
    return [ops.reshape(r, x.shape) if r.shape != x.shape else r]


def_rule("jvp", "stablehlo.broadcast_in_dim")(_same_op(ops.broadcast_in_dim))


# ---------------------------------------------------------------- slices, concatenate

@def_rule("vjp", "stablehlo.slice")
def _slice_vjp(ins, outs, cts, start_indices, limit_indices, strides):
    x, c = ins[0], cts[0]
    if 0 in c.shape:
        return [zeros_like(x)]
    high = [n - (s + (m - 1) * st + 1) for n, s, m, st in zip(x.shape, start_indices, c.shape, strides)]
    return [ops.pad(c, 0, start_indices, high, [st - 1 for st in strides])]


def_rule("jvp", "stablehlo.slice")(_same_op(ops.slice))


@def_rule("jvp", "stablehlo.concatenate")
def _concat_jvp(ins, outs, ts, dimension):
    return [ops.concatenate([instantiate(t, x) for t, x in zip(ts, ins)], dimension)]


@def_rule("vjp", "stablehlo.concatenate")
def _concat_vjp(ins, outs, cts, dimension):
    c, out, start = cts[0], [], 0
    for x in ins:
        begin = [0] * c.ndim
        limit = list(c.shape)
        begin[dimension], limit[dimension] = start, start + x.shape[dimension]
        out.append(ops.slice(c, begin, limit))
        start += x.shape[dimension]
    return out


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
