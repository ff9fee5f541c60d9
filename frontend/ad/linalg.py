"""Derivative rules of the contraction and reduction ops (frontend/ops/linalg.py): dot_general
(bilinear: ``defbilinear``, only its two transposes are written) and reduce (add bodies are
linear; mul, max, min and argmax-like variadic reduces)."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.ad._util import (
    add_any, defbilinear, full, instantiate, like, needs, splat, sum_to_scalar, zeros_like)
from hloforge.frontend.registry import def_rule


# ---------------------------------------------------------------- dot_general

def _dot_dims(lhs, rhs, c, lb, rb, lc, rc):
    """(lhs free dims, rhs free dims, and the cotangent's batch, lhs-free and rhs-free dims)."""
    nb = len(lb)
    lfree = [d for d in range(lhs.ndim) if d not in lb and d not in lc]
    rfree = [d for d in range(rhs.ndim) if d not in rb and d not in rc]
    return (lfree, rfree, tuple(range(nb)), tuple(range(nb, nb + len(lfree))),
            tuple(range(nb + len(lfree), c.ndim)))


def in_dtype_of(x, like):
    """``x`` converted to ``like``'s dtype where it differs. The transposes of a contraction with a
    ``preferred_element_type`` contract in the cotangent's (the result's) dtype and convert the
    cotangent back to the operand's, as jax's do."""
    return x if x.dtype == like.dtype else ops.convert(x, like.dtype)


def _dot_lhs_t(c, lhs, rhs, precision, preferred_element_type, lhs_batching_dimensions, rhs_batching_dimensions,
               lhs_contracting_dimensions, rhs_contracting_dimensions):
    """The lhs cotangent: a dot_general of the cotangent with rhs, transposed into lhs's layout;
    of the two operand orders the one that needs no transpose is used when there is one."""
    rhs = in_dtype_of(rhs, c)
    lb, rb, lc, rc = (lhs_batching_dimensions, rhs_batching_dimensions, lhs_contracting_dimensions,
                      rhs_contracting_dimensions)
    lfree, rfree, c_batch, c_lfree, c_rfree = _dot_dims(lhs, rhs, c, lb, rb, lc, rc)
    # the lhs dim each result dim holds, for dot(c, rhs) and for dot(rhs, c)
    contracted = [lc[rc.index(r)] for r in sorted(rc)]
    return in_dtype_of(_contract_pick(
        list(lb) + lfree + contracted,
        lambda: ops.dot_general(c, rhs, c_batch, rb, c_rfree, tuple(rfree), precision=precision),
        list(lb) + contracted + lfree,
        lambda: ops.dot_general(rhs, c, rb, c_batch, tuple(rfree), c_rfree, precision=precision)), lhs)


def _dot_rhs_t(c, lhs, rhs, precision, preferred_element_type, lhs_batching_dimensions, rhs_batching_dimensions,
               lhs_contracting_dimensions, rhs_contracting_dimensions):
    """The rhs cotangent: a dot_general of lhs with the cotangent, as ``_dot_lhs_t``."""
    lhs = in_dtype_of(lhs, c)
    lb, rb, lc, rc = (lhs_batching_dimensions, rhs_batching_dimensions, lhs_contracting_dimensions,
                      rhs_contracting_dimensions)
    lfree, rfree, c_batch, c_lfree, c_rfree = _dot_dims(lhs, rhs, c, lb, rb, lc, rc)
    # the rhs dim each result dim holds, for dot(lhs, c) and for dot(c, lhs)
    contracted = [rc[lc.index(l)] for l in sorted(lc)]
    with_lhs_first = (list(rb) + contracted + rfree,
                      lambda: ops.dot_general(lhs, c, lb, c_batch, tuple(lfree), c_lfree, precision=precision))
    with_c_first = (list(rb) + rfree + contracted,
                    lambda: ops.dot_general(c, lhs, c_batch, lb, c_lfree, tuple(lfree), precision=precision))
    if all(lhs.shape[d] == 1 for d in lfree):  # an outer product (a dense layer's weight gradient): jax's order
        order, make = with_c_first
        return in_dtype_of(_permute(make(), [order.index(d) for d in range(len(order))]), rhs)
    return in_dtype_of(_contract_pick(*with_lhs_first, *with_c_first), rhs)


def _contract_pick(first, make_first, second, make_second):
    """Build the contraction whose transpose into the operand's layout moves the fewest pairs of dims
    (none when one comes out in that layout); on a tie the first, jax's order (``first``/``second``:
    the operand dim each result dim holds). Fewer moved pairs keep the operand's minor dims in order,
    so a TPU stores the result with no transposing copy where the operand's layout keeps them."""
    if _inversions(second) < _inversions(first):
        first, make_first = second, make_second
    return _permute(make_first(), [first.index(d) for d in range(len(first))])


def _inversions(order):
    return sum(a > b for i, a in enumerate(order) for b in order[i + 1:])


def _permute(x, perm):
    return x if list(perm) == list(range(x.ndim)) else ops.transpose(x, tuple(perm))


defbilinear("stablehlo.dot_general", _dot_lhs_t, _dot_rhs_t)


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


@def_rule("jvp", "stablehlo.reduce")
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


@def_rule("vjp", "stablehlo.reduce")
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
