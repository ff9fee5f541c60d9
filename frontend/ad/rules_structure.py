"""Derivative rules of the data-movement, padding, contraction, reduction and sort ops
(frontend/ops/shape.py, pad.py, linalg.py, sort.py). All are linear in their data operands except
reduce with mul/max/min bodies and sort; index operands get no cotangent."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.ad._util import (
    add_any, full, instantiate, like, needs, set_rules, splat, sum_to_scalar, zeros_like)


def _same_op(builder):
    """jvp of an op linear in its first operand: the op itself on the tangent."""
    def jvp(ins, outs, ts, **params):
        return [builder(ts[0], **params)]
    return jvp


# ---------------------------------------------------------------- reshape, transpose, reverse, broadcast

set_rules("stablehlo.reshape", _same_op(ops.reshape), lambda ins, outs, cts, shape: [ops.reshape(cts[0], ins[0].shape)])
set_rules("stablehlo.transpose", _same_op(ops.transpose),
     lambda ins, outs, cts, permutation: [ops.transpose(cts[0], tuple(np.argsort(permutation)))])
set_rules("stablehlo.reverse", _same_op(ops.reverse), lambda ins, outs, cts, dimensions: [ops.reverse(cts[0], dimensions)])


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


set_rules("stablehlo.broadcast_in_dim", _same_op(ops.broadcast_in_dim), _broadcast_vjp)


# ---------------------------------------------------------------- slices, pad, concatenate

def _slice_vjp(ins, outs, cts, start_indices, limit_indices, strides):
    x, c = ins[0], cts[0]
    if 0 in c.shape:
        return [zeros_like(x)]
    high = [n - (s + (m - 1) * st + 1) for n, s, m, st in zip(x.shape, start_indices, c.shape, strides)]
    return [ops.pad(c, 0, start_indices, high, [st - 1 for st in strides])]


set_rules("stablehlo.slice", _same_op(ops.slice), _slice_vjp)


def _pad_jvp(ins, outs, ts, low, high, interior):
    x, v = ins
    return [ops.pad(instantiate(ts[0], x), instantiate(ts[1], v), low, high, interior)]


def _pad_vjp(ins, outs, cts, low, high, interior):
    """Undo the edges (negative edges were crops: their cotangent is 0), then take every
    (interior + 1)-th element; the padding value gets the sum of the rest."""
    c = cts[0]
    if not any(interior) and min(low + high, default=0) >= 0:
        ct_x = ops.slice(c, low, [n - hi for n, hi in zip(c.shape, high)])
    else:
        ct_x = ops.pad(c, 0, [-lo for lo in low], [-hi for hi in high], [0] * c.ndim)
        if any(interior):
            ct_x = ops.slice(ct_x, [0] * c.ndim, ct_x.shape, [i + 1 for i in interior])
    ct_v = ops.subtract(sum_to_scalar(c), sum_to_scalar(ct_x)) if needs(1) else None
    return [ct_x, ct_v]


set_rules("stablehlo.pad", _pad_jvp, _pad_vjp)


def _concat_jvp(ins, outs, ts, dimension):
    return [ops.concatenate([instantiate(t, x) for t, x in zip(ts, ins)], dimension)]


def _concat_vjp(ins, outs, cts, dimension):
    c, out, start = cts[0], [], 0
    for x in ins:
        begin = [0] * c.ndim
        limit = list(c.shape)
        begin[dimension], limit[dimension] = start, start + x.shape[dimension]
        out.append(ops.slice(c, begin, limit))
        start += x.shape[dimension]
    return out


set_rules("stablehlo.concatenate", _concat_jvp, _concat_vjp)


def _dynamic_slice_jvp(ins, outs, ts, slice_sizes):
    return [ops.dynamic_slice(ts[0], ins[1:], slice_sizes)]


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


set_rules("stablehlo.dynamic_slice", _dynamic_slice_jvp, _dynamic_slice_vjp)


# ---------------------------------------------------------------- dot_general

def _dot_jvp(ins, outs, ts, precision, **dims):
    lhs, rhs = ins
    out = None
    if ts[0] is not None:
        out = ops.dot_general(ts[0], rhs, precision=precision, **dims)
    if ts[1] is not None:
        out = add_any(out, ops.dot_general(lhs, ts[1], precision=precision, **dims))
    return [out]


def _dot_vjp(ins, outs, cts, precision, lhs_batching_dimensions, rhs_batching_dimensions,
             lhs_contracting_dimensions, rhs_contracting_dimensions):
    """Each operand's cotangent is a dot_general of the cotangent with the other operand, then a
    transpose into the operand's layout; of the two operand orders the one that needs no
    transpose is used when there is one."""
    lhs, rhs = ins
    c = cts[0]
    lb, rb, lc, rc = (lhs_batching_dimensions, rhs_batching_dimensions, lhs_contracting_dimensions,
                      rhs_contracting_dimensions)
    nb = len(lb)
    lfree = [d for d in range(lhs.ndim) if d not in lb and d not in lc]
    rfree = [d for d in range(rhs.ndim) if d not in rb and d not in rc]
    c_batch = tuple(range(nb))
    c_lfree = tuple(range(nb, nb + len(lfree)))
    c_rfree = tuple(range(nb + len(lfree), c.ndim))
    out = [None, None]
    if needs(0):  # the lhs dim each result dim holds, for dot(c, rhs) and for dot(rhs, c)
        contracted = [lc[rc.index(r)] for r in sorted(rc)]
        out[0] = _contract_pick(
            list(lb) + lfree + contracted,
            lambda: ops.dot_general(c, rhs, c_batch, rb, c_rfree, tuple(rfree), precision=precision),
            list(lb) + contracted + lfree,
            lambda: ops.dot_general(rhs, c, rb, c_batch, tuple(rfree), c_rfree, precision=precision))
    if needs(1):  # the rhs dim each result dim holds, for dot(lhs, c) and for dot(c, lhs)
        contracted = [rc[lc.index(l)] for l in sorted(lc)]
        out[1] = _contract_pick(
            list(rb) + contracted + rfree,
            lambda: ops.dot_general(lhs, c, lb, c_batch, tuple(lfree), c_lfree, precision=precision),
            list(rb) + rfree + contracted,
            lambda: ops.dot_general(c, lhs, c_batch, lb, c_lfree, tuple(lfree), precision=precision))
    return out


def _contract_pick(first, make_first, second, make_second):
    """Build the contraction whose result is already in the operand's layout if one is, else the
    first, transposed (``first``/``second``: the operand dim each result dim holds)."""
    if second == sorted(second) and first != sorted(first):
        return make_second()
    return _permute(make_first(), [first.index(d) for d in range(len(first))])


def _permute(x, perm):
    return x if list(perm) == list(range(x.ndim)) else ops.transpose(x, tuple(perm))


set_rules("stablehlo.dot_general", _dot_jvp, _dot_vjp)


# ---------------------------------------------------------------- reduce

def _expand(r, x, dimensions):
    """A reduce result broadcast back over the reduced dims of x."""
    kept = [d for d in range(x.ndim) if d not in dimensions]
    value = splat(r)
    return full(value, x.shape, r.dtype) if value is not None else ops.broadcast_in_dim(r, x.shape, tuple(kept))


def _check_body(body, name="stablehlo.reduce"):
    if not isinstance(body, str) or body not in ("add", "mul", "max", "min", "and", "or"):
        raise NotImplementedError(f"hloforge AD: {name} with a custom body is not differentiable; only "
                                  "add, mul, max and min bodies and argmax-like variadic reduces are")


def _is_chooser(ins, body):
    """A variadic reduce of one float operand with integer companions (jax's argmax/argmin: the
    body picks an element and its index): the float result is one of the reduced elements."""
    n = len(ins) // 2
    kinds = [x.dtype.kind for x in ins[:n]]
    return not isinstance(body, str) and n > 1 and kinds.count("f") == 1 and all(k in "iub" for k in kinds if k != "f")


def _chooser_jvp(ins, outs, ts, dimensions):
    n = len(ins) // 2
    i = next(k for k in range(n) if ins[k].dtype.kind == "f")
    out = [None] * n
    if ts[i] is not None:
        x = ins[i]
        out[i] = ops.reduce(ops.multiply(ts[i], _reduce_partial(x, None, outs[i], dimensions, "max")), 0, dimensions, "add")
    return out


def _chooser_vjp(ins, outs, cts, dimensions):
    n = len(ins) // 2
    i = next(k for k in range(n) if ins[k].dtype.kind == "f")
    out = [None] * len(ins)
    if cts[i] is not None:
        x = ins[i]
        out[i] = ops.multiply(_expand(cts[i], x, dimensions), _reduce_partial(x, None, outs[i], dimensions, "max"))
    return out


def _reduce_jvp(ins, outs, ts, dimensions, body):
    if _is_chooser(ins, body):
        return _chooser_jvp(ins, outs, ts, dimensions)
    _check_body(body)
    x, init = ins
    tx, ti = ts
    if body == "add":
        tx = instantiate(tx, x)
        return [ops.reduce(tx, instantiate(ti, init), dimensions, "add")]
    if body in ("and", "or"):
        return [None]
    out = None
    if tx is not None:
        out = ops.reduce(ops.multiply(tx, _reduce_partial(x, init, outs[0], dimensions, body)), 0, dimensions, "add")
    if ti is not None and body == "mul":
        out = add_any(out, ops.multiply(ti, _prod(x, dimensions)))
    return [out]


def _prod(x, dimensions):
    return ops.reduce(x, 1, dimensions, "mul")


def _reduce_partial(x, init, out, dimensions, body):
    """d out / d x, broadcast to x's shape."""
    if body == "mul":
        # zero-safe: the product of the other elements (times init)
        zero = zeros_like(x)
        is_zero = ops.compare(x, zero, "EQ")
        nonzero = ops.select(is_zero, like(1, x), x)
        p = _expand(ops.multiply(_prod(nonzero, dimensions), ops.broadcast_in_dim(init, out.shape, ())), x, dimensions)
        count = _expand(ops.reduce(ops.convert(is_zero, np.int32), 0, dimensions, "add"), x, dimensions)
        none = ops.compare(count, full(0, count.shape, np.int32), "EQ")
        one = ops.compare(count, full(1, count.shape, np.int32), "EQ")
        return ops.select(is_zero, ops.select(one, p, zero), ops.select(none, ops.divide(p, nonzero), zero))
    # max/min: the places that attain the result share the cotangent equally
    hit = ops.convert(ops.compare(x, _expand(out, x, dimensions), "EQ"), x.dtype)
    counts = _expand(ops.reduce(hit, 0, dimensions, "add"), x, dimensions)
    return ops.divide(hit, counts)


def _reduce_vjp(ins, outs, cts, dimensions, body):
    if _is_chooser(ins, body):
        return _chooser_vjp(ins, outs, cts, dimensions)
    _check_body(body)
    if len(ins) != 2:
        raise NotImplementedError("hloforge AD: variadic stablehlo.reduce is not differentiable")
    x, init = ins
    c = cts[0]
    if body in ("and", "or"):
        return [None, None]
    if body == "add":
        return [_expand(c, x, dimensions), sum_to_scalar(c) if needs(1) else None]
    ct_x = ops.multiply(_expand(c, x, dimensions), _reduce_partial(x, init, outs[0], dimensions, body))
    ct_init = sum_to_scalar(ops.multiply(c, _prod(x, dimensions))) if body == "mul" else None
    return [ct_x, ct_init]


set_rules("stablehlo.reduce", _reduce_jvp, _reduce_vjp)


# ---------------------------------------------------------------- sort

def _keys_only(comparator, n):
    """The comparator over the first ``n`` operand pairs, ignoring the pairs appended after them."""
    if isinstance(comparator, str):
        return comparator
    return lambda *args: comparator(*args[:2 * n])


def _sort_jvp(ins, outs, ts, dimension, comparator, is_stable):
    """Sort the tangents along with the operands: the same permutation applies to them."""
    n = len(ins)
    carried = [instantiate(t, x) for t, x in zip(ts, ins)]
    out = ops.sort(list(ins) + carried, dimension, _keys_only(comparator, n), is_stable=is_stable)
    return list(out[n:])


def _sort_vjp(ins, outs, cts, dimension, comparator, is_stable):
    """The permutation from sorting an iota with the operands; sorting the cotangents by it undoes it."""
    n = len(ins)
    x = ins[0]
    index = ops.iota(x.shape, np.int32, dimension)
    perm = ops.sort(list(ins) + [index], dimension, _keys_only(comparator, n), is_stable=is_stable)[n]
    carried = [instantiate(c, o) for c, o in zip(cts, outs)]
    back = ops.sort([perm] + carried, dimension, "LT", is_stable=True)
    return [b if c is not None else None for b, c in zip(back[1:], cts)]


set_rules("stablehlo.sort", _sort_jvp, _sort_vjp)
