"""FNO-1D in the Burgers setting (grid 1024, 16 modes, width 64, 4 Fourier layers, batch 20).

Builds the model with hloforge.nn (lifting, spectral convolutions, pointwise skips, GELU,
projection; the non-periodic grid is zero-padded with hloforge.numpy.pad and cropped back),
optimizes and runs it, and checks it against a plain-numpy implementation of the same model.
Run: python examples/fno_1d.py
"""
import sys

import numpy as np

import hloforge as hf
import fno_reference

BATCH, GRID, MODES, WIDTH, LAYERS, PADDING = 20, 1024, 16, 64, 4, 16


def main() -> int:
    model = hf.nn.FNO(n_dims=1, modes=MODES, width=WIDTH, n_layers=LAYERS, in_channels=2, padding=PADDING)
    params = model.init(seed=0)
    rng = np.random.default_rng(1)
    grid = np.linspace(0, 1, GRID, dtype=np.float32)
    u0 = rng.standard_normal((BATCH, 1, GRID)).astype(np.float32)
    x = np.concatenate([u0, np.broadcast_to(grid, (BATCH, 1, GRID))], axis=1)  # (u0(x), x) channels

    return fno_reference.run_and_check(model, x, params, (MODES,), PADDING)


if __name__ == "__main__":
    sys.exit(main())
