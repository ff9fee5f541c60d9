"""Batching rule of ``frontend/ops/sort.py``: every operand goes to one batch dimension (the
batched operands' own when they agree) and the sort dimension shifts around it; the comparator
is the same scalar computation."""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.batching._util import common_dim
from hloforge.frontend.registry import def_rule


@def_rule("batch", "stablehlo.sort")
def _sort_batch(size, ins, dims, *, dimension, comparator, is_stable):
    """Pattern: sort(x[b at d], y, k) -> sort(x, broadcast(y) at d, k + (k >= d))[b at d]."""
    xs, d = common_dim(ins, dims, size)
    out = ops.sort(list(xs), dimension + (dimension >= d), comparator, is_stable=is_stable)
    return list(out), [d] * len(out)
