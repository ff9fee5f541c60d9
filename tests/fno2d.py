"""A small FNO-2D (lift -> Fourier layers -> project) in hloforge.numpy, with a numpy reference.

Used by the sharding tests (data parallel over the batch) and benchmarks/device_check.py.
"""
from __future__ import annotations

import numpy as np

from hloforge import numpy as hnp


def init(in_ch=3, width=8, out_ch=1, modes=6, layers=2, seed=0) -> dict:
    """Parameters: lift (in, w), per layer spectral weights (w, w, modes, modes) x2 complex64 and a
    pointwise (w, w) matrix, project (w, out)."""
    rng = np.random.default_rng(seed)

    def cplx(*shape):
        return ((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) / (width * width)).astype(np.complex64)

    return {
        "lift": (rng.standard_normal((in_ch, width)) / in_ch).astype(np.float32),
        "layers": [{"low": cplx(width, width, modes, modes), "high": cplx(width, width, modes, modes),
                    "point": (rng.standard_normal((width, width)) / width).astype(np.float32)}
                   for _ in range(layers)],
        "project": (rng.standard_normal((width, out_ch)) / width).astype(np.float32),
    }


def _spectral(xp, x, low_w, high_w):
    """x: (batch, ch, h, w) real -> the same shape; keeps modes x modes low/high frequency rows."""
    b, _, h, w = x.shape
    m = low_w.shape[-1]
    o = low_w.shape[1]
    xf = xp.fft.rfft2(x)                                             # (b, c, h, w//2+1)
    low = xp.einsum("bixy,ioxy->boxy", xf[:, :, :m, :m], low_w)
    high = xp.einsum("bixy,ioxy->boxy", xf[:, :, h - m:, :m], high_w)
    mid = xp.zeros((b, o, h - 2 * m, m), np.complex64)
    cols = xp.concatenate([low, mid, high], axis=2)                  # (b, o, h, m)
    rest = xp.zeros((b, o, h, w // 2 + 1 - m), np.complex64)
    return xp.fft.irfft2(xp.concatenate([cols, rest], axis=3), s=(h, w))


def _forward(xp, params, x):
    """x: (batch, in_ch, h, w) float32 -> (batch, out_ch, h, w)."""
    y = xp.einsum("bihw,io->bohw", x, params["lift"])
    for layer in params["layers"]:
        y = _spectral(xp, y, layer["low"], layer["high"]) + xp.einsum("bihw,io->bohw", y, layer["point"])
        y = xp.maximum(y, 0.0)
    return xp.einsum("bihw,io->bohw", y, params["project"])


def forward(params, x):
    """The traced model (hloforge.numpy)."""
    return _forward(hnp, params, x)


def forward_numpy(params, x):
    """The numpy reference (float32 results)."""
    return _forward(np, params, x).astype(np.float32)
