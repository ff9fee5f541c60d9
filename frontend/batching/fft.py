"""Batching rule of ``frontend/ops/fft.py``: fft transforms its operand's trailing dimensions and
treats the leading ones as batch dimensions, so the vmap batch dimension stays where it is when it
is a leading one, and moves to the front when it sits among the transformed dimensions."""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.batching._util import moveaxis
from hloforge.frontend.registry import def_rule


@def_rule("batch", "stablehlo.fft")
def _fft_batch(size, ins, dims, *, fft_type, fft_length):
    """Pattern: fft(x[b at d]) -> fft(x)[b at d] for d before the transformed dimensions, else
    fft(moveaxis(x, d, 0))[b at 0]."""
    (x,), (d,) = ins, dims
    if d > x.ndim - 1 - len(fft_length):
        x, d = moveaxis(x, d, 0), 0
    return [ops.fft(x, fft_type, fft_length)], [d]
