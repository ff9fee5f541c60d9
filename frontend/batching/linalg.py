"""Batching rules of ``frontend/ops/linalg.py``: dot_general and reduce.

dot_general takes the batch dimension as one more batching dimension when both operands are
batched and as one more free dimension when one is, so no operand is transposed; reduce shifts
its axes around the batch dimension. A batched init value (a reduction whose start depends on the
example) is combined by the body's op with the reduction from the body's identity (named bodies),
or is reduced example by example (bodies given as callables: no identity known).
"""
from __future__ import annotations

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.batching._loop import per_example
from hloforge.frontend.batching._util import bdim_at, common_dim, unbatched_axes
from hloforge.frontend.ops.linalg import REDUCERS
from hloforge.frontend.registry import OPS, def_rule


@def_rule("batch", "stablehlo.dot_general")
def _dot_general_batch(size, ins, dims, *, lhs_batching_dimensions, rhs_batching_dimensions,
                       lhs_contracting_dimensions, rhs_contracting_dimensions, precision, preferred_element_type):
    """Patterns: dot(l[b], r[b]) -> dot(l, r) with b a batching dimension [b at 0];
    dot(l[b at d], r) -> dot(l, r)[b where free dimension d falls]; likewise for r."""
    (lhs, rhs), (ld, rd) = ins, dims
    lb, lc = list(lhs_batching_dimensions), list(lhs_contracting_dimensions)
    rb, rc = list(rhs_batching_dimensions), list(rhs_contracting_dimensions)
    if ld is not None:
        lb, lc = list(unbatched_axes(lb, ld)), list(unbatched_axes(lc, ld))
    if rd is not None:
        rb, rc = list(unbatched_axes(rb, rd)), list(unbatched_axes(rc, rd))
    if ld is not None and rd is not None:
        out = ops.dot_general(lhs, rhs, [ld] + lb, [rd] + rb, lc, rc, precision=precision,
                              preferred_element_type=preferred_element_type)
        return [out], [0]
    out = ops.dot_general(lhs, rhs, lb, rb, lc, rc, precision=precision, preferred_element_type=preferred_element_type)
    if ld is not None:
        free_before = sum(1 for a in range(ld) if a not in lb and a not in lc)
        return [out], [len(lb) + free_before]
    lhs_free = lhs.ndim - len(lb) - len(lc)
    free_before = sum(1 for a in range(rd) if a not in rb and a not in rc)
    return [out], [len(lb) + lhs_free + free_before]


# the identity of each named body per dtype kind: (bool, integer, float/complex)
def _identity(body: str, dtype: np.dtype):
    if dtype == np.bool_:
        return np.array(body in ("mul", "and", "min"))
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        value = {"add": 0, "mul": 1, "max": info.min, "min": info.max, "and": -1 if dtype.kind == "i" else info.max,
                 "or": 0}[body]
    else:
        value = {"add": 0, "mul": 1, "max": -np.inf, "min": np.inf}[body]
    return np.array(value, dtype)


@def_rule("batch", "stablehlo.reduce")
def _reduce_batch(size, ins, dims, *, dimensions, body):
    """Pattern: reduce(x[b at d], init, axes) -> reduce(x, init, axes shifted around d)[b at d - #axes
    before d]; a batched init: op(reduce(x, identity), init) for a named body's op, otherwise one
    reduce per example."""
    n = len(ins) // 2
    xs, x_dims, inits, init_dims = ins[:n], dims[:n], ins[n:], dims[n:]
    if all(d is None for d in init_dims):
        xs, d = common_dim(xs, x_dims, size)
        return _reduced(xs, inits, d, dimensions, body)
    if isinstance(body, str) and dimensions:
        # (reduced from the identity, then the init joins once per result element: a slab of
        # inits concatenated along one reduced axis held one init per element of the others,
        # which add and mul counted that many times)
        (x,), (x_dim,) = xs, x_dims
        start = ops.constant(_identity(body, x.dtype))
        if x_dim is None:
            acc, out_d = ops.reduce(x, start, dimensions, body), None
        else:
            (acc,), (out_d,) = _reduced([x], [start], x_dim, dimensions, body)
        out_d = 0 if out_d is None else out_d
        acc = bdim_at(acc, None if x_dim is None else out_d, size, out_d)
        init = ops.broadcast_in_dim(bdim_at(inits[0], init_dims[0], size, 0), acc.shape, (out_d,))
        return [OPS[REDUCERS[body]].builder(acc, init)], [out_d]
    return _reduce_per_example(size, xs, x_dims, inits, init_dims, dimensions, body)


def _reduced(xs, inits, d, dimensions, body):
    axes = unbatched_axes(dimensions, d)
    out = ops.reduce(list(xs), list(inits), axes, body)
    out_d = d - sum(1 for a in axes if a < d)
    return list(out), [out_d] * len(out)


def _reduce_per_example(size, xs, x_dims, inits, init_dims, dimensions, body):
    """One reduce per example, stacked along a new leading dimension (exactly the loop)."""
    n = len(xs)

    def emit(*operands):
        return list(ops.reduce(list(operands[:n]), list(operands[n:]), dimensions, body))
    return per_example(size, list(xs) + list(inits), list(x_dims) + list(init_dims), emit)
