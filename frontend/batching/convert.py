"""Batching rule of ``frontend/ops/convert.py``: convert is elementwise, the batch dimension stays."""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.registry import def_rule


@def_rule("batch", "stablehlo.convert")
def _convert_batch(size, ins, dims, *, dtype):
    """Pattern: convert(x[b at d], t) -> convert(x, t)[b at d]."""
    return [ops.convert(ins[0], dtype)], [dims[0]]
