"""Derivative rules of stablehlo.fft (frontend/ops/fft.py), JAX's conventions.

All four types are linear (``deflinear``: the jvp is the fft of the tangent). Under the bilinear
pairing Re(a * b) that JAX's complex cotangents use, FFT and IFFT are their own transposes (the
DFT matrix is symmetric). RFFT's transpose is ``N * irfft(conj(ct) / mask)`` and IRFFT's is
``conj(mask * rfft(ct) / N)`` where N is the product of the lengths and ``mask`` weights the bins
rfft de-duplicates by 2 (all but DC and, for even lengths, Nyquist). When an RFFT cotangent is
exactly an IRFFT cotangent of the same lengths (the backward pass of ``irfft(... rfft(x) ...)``
with nothing between them), the two conjugations and masks cancel and the rule emits
``irfft(rfft(ct))``, which Module.optimize removes.
"""
from __future__ import annotations

import math

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.ad._util import ad_state, conj, deflinear


def _irfft_cotangents(t) -> dict:
    """Per trace: ir.Value of an IRFFT cotangent -> (the rfft of the incoming cotangent, lengths)."""
    return ad_state(t.builder).irfft_cotangents


def _mask(n_bins, length, shape, dtype, scale=1.0, invert=False):
    """``scale`` times the mask (1 for DC and, even length, Nyquist; 2 for the other bins) or its
    inverse, along the last dim of ``shape``: one constant and one broadcast."""
    m = np.full(n_bins, 2.0)
    m[0] = 1.0
    if length % 2 == 0:
        m[-1] = 1.0
    c = ops.constant((scale / m if invert else scale * m).astype(dtype))
    return ops.broadcast_in_dim(c, shape, (len(shape) - 1,))


def _transpose(c, x, fft_type, fft_length):
    n = math.prod(fft_length)
    if fft_type in ("FFT", "IFFT"):
        return [ops.fft(c, fft_type, fft_length)]
    if fft_type == "IRFFT":
        r = ops.fft(c, "RFFT", fft_length)
        out = conj(ops.multiply(r, _mask(r.shape[-1], fft_length[-1], r.shape, r.dtype, 1 / n)))
        _irfft_cotangents(out)[out.value] = (r, tuple(fft_length))
        return [out]
    # RFFT
    known = _irfft_cotangents(c).get(c.value)
    if known is not None and known[1] == tuple(fft_length):
        return [ops.fft(known[0], "IRFFT", fft_length)]
    weighted = ops.multiply(conj(c), _mask(c.shape[-1], fft_length[-1], c.shape, c.dtype, n, invert=True))
    return [ops.fft(weighted, "IRFFT", fft_length)]


deflinear("stablehlo.fft", _transpose)
