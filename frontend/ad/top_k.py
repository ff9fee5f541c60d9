"""Derivative rules of chlo.top_k (frontend/ops/top_k.py): the values' (co)tangents are the
operand's at the chosen indices; the indices have none."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.ad._util import zeros_like
from hloforge.frontend.registry import def_rule


def _one_hot(indices, n):
    """indices (..., k) -> bool (..., k, n), true where the last position equals the index."""
    shape = (*indices.shape, n)
    wide = ops.broadcast_in_dim(indices, shape, tuple(range(indices.ndim)))
    return ops.compare(wide, ops.iota(shape, np.int32, indices.ndim), "EQ")


def _sum_last(x, axis):
    return ops.reduce(x, 0, [axis])


@def_rule("jvp", "chlo.top_k")
def _top_k_jvp(ins, outs, ts, k):
    """t_values[..., j] = t[..., indices[..., j]] (a select per position, so no inf * 0)."""
    (x,), (t,) = ins, ts
    if t is None:
        return [None, None]
    indices = outs[1]
    hot = _one_hot(indices, x.shape[-1])
    lead = tuple(range(x.ndim - 1))
    spread = ops.broadcast_in_dim(t, hot.shape, (*lead, x.ndim))
    return [_sum_last(ops.select(hot, spread, zeros_like(spread)), x.ndim), None]


@def_rule("vjp", "chlo.top_k")
def _top_k_vjp(ins, outs, cts, k):
    """ct_x[..., i] = sum_j ct_values[..., j] where indices[..., j] == i."""
    x = ins[0]
    ct = cts[0]
    if ct is None:
        return [None]
    hot = _one_hot(outs[1], x.shape[-1])
    spread = ops.broadcast_in_dim(ct, hot.shape, tuple(range(ct.ndim)))
    return [_sum_last(ops.select(hot, spread, zeros_like(spread)), x.ndim - 1)]
