"""Batching rule of ``frontend/ops/pad.py``. A batched padding value (one per example) cannot be
pad's scalar operand: the operand is padded with zeros, and a mask padded the same way selects
each example's padding value into the padded positions (jax's ``_pad_batch_rule`` does the same)."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.batching._util import bdim_at
from hloforge.frontend.registry import def_rule


def _inserted(config, d, value=0) -> list:
    out = list(config)
    out.insert(d, value)
    return out


@def_rule("batch", "stablehlo.pad")
def _pad_batch(size, ins, dims, *, low, high, interior):
    """Patterns: pad(x[b at d], v) -> pad(x, v) with no padding at d [b at d];
    pad(x, v[b]) -> select(pad(ones, false), pad(x, 0), broadcast(v))[b at d]."""
    (x, value), (xd, vd) = ins, dims
    d = 0 if xd is None else xd
    low, high, interior = (_inserted(c, d) for c in (low, high, interior))
    if vd is None:
        return [ops.pad(x, value, low, high, interior)], [d]
    x = bdim_at(x, xd, size, d)
    padded = ops.pad(x, ops.constant(np.zeros((), x.dtype)), low, high, interior)
    inside = ops.broadcast_in_dim(ops.constant(np.True_), x.shape, ())
    mask = ops.pad(inside, ops.constant(np.False_), low, high, interior)
    values = ops.broadcast_in_dim(bdim_at(value, vd, size, 0), padded.shape, (d,))
    return [ops.select(mask, padded, values)], [d]
