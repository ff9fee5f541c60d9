"""``hloforge demo``: one FNO spectral block built with hloforge.ops, checked against numpy.

rfft over the grid -> keep the low modes -> complex channel mixing -> zero-pad -> irfft.
"""
from __future__ import annotations

import numpy as np

import hloforge as hf
from hloforge import ops

BATCH, IN_CH, OUT_CH, GRID, MODES = 4, 8, 8, 64, 8
TOLERANCE = 1e-4


def spectral_block(x, weights):
    """x: (batch, in_ch, grid) float32; weights: (in_ch, out_ch, modes) complex64."""
    bins = GRID // 2 + 1
    xf = ops.fft(x, "RFFT", (GRID,))                                      # (b, i, bins)
    low = ops.slice(xf, (0, 0, 0), (BATCH, IN_CH, MODES))                 # (b, i, modes)
    # (HIGHEST: exact float32 products on every device; a TPU's default is one bfloat16 pass)
    mixed = ops.dot_general(low, weights, (2,), (2,), (1,), (0,), precision="HIGHEST")  # (modes, b, o)
    mixed = ops.transpose(mixed, (1, 2, 0))                               # (b, o, modes)
    padded = ops.pad(mixed, 0, (0, 0, 0), (0, 0, bins - MODES))           # (b, o, bins)
    return ops.fft(padded, "IRFFT", (GRID,))                              # (b, o, grid)


def numpy_spectral_block(x, weights):
    xf = np.fft.rfft(x, axis=-1)
    mixed = np.einsum("bik,iok->bok", xf[..., :MODES], weights)
    out = np.zeros((x.shape[0], weights.shape[1], GRID // 2 + 1), np.complex128)
    out[..., :MODES] = mixed
    return np.fft.irfft(out, n=GRID, axis=-1)


def run(device=None, quiet=False, print_fn=print) -> int:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, IN_CH, GRID)).astype(np.float32)
    scale = 1.0 / (IN_CH * OUT_CH)
    weights = (scale * (rng.standard_normal((IN_CH, OUT_CH, MODES))
                        + 1j * rng.standard_normal((IN_CH, OUT_CH, MODES)))).astype(np.complex64)

    module = hf.trace(spectral_block, x, weights)
    if not quiet:
        print_fn("# FNO spectral block (rfft -> keep 8 modes -> complex mixing -> zero-pad -> irfft)")
        print_fn(module.text)
    executable = module.compile(device)
    y = np.asarray(executable(x, weights))
    error = float(np.max(np.abs(y - numpy_spectral_block(x, weights))))
    print_fn(f"output {y.dtype}{list(y.shape)} on {executable.device}; max abs error vs numpy: {error:.3e} "
             f"(tolerance {TOLERANCE:g})")
    if not error <= TOLERANCE:
        print_fn("FAIL: error above tolerance")
        return 1
    print_fn("OK")
    return 0
