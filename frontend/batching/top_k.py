"""Batching rule of chlo.top_k (frontend/ops/top_k.py): it works on the last dimension, so any
other batch dimension stays where it is."""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.registry import def_rule


@def_rule("batch", "chlo.top_k")
def _top_k_batch(size, ins, dims, *, k):
    """Pattern: top_k(x[b]) -> top_k(x)[b] for a leading b; a last-dimension b moves to the front."""
    (x,), (d,) = ins, dims
    if d == x.ndim - 1:
        x = ops.transpose(x, (d, *range(d)))
        d = 0
    return list(ops.top_k(x, k)), [d, d]
