"""FNO-2D in the Darcy setting (85x85 grid, 12x12 modes, width 32, 4 Fourier layers, batch 20).

Same structure as fno_1d.py: hloforge.nn.FNO with padding for the non-periodic domain,
optimized, run, and checked against the plain-numpy model.
Run: python examples/fno_2d.py
"""
import sys

import numpy as np

import hloforge as hf
import fno_reference

BATCH, GRID, MODES, WIDTH, LAYERS, PADDING = 20, 85, 12, 32, 4, 9


def main() -> int:
    model = hf.nn.FNO(n_dims=2, modes=(MODES, MODES), width=WIDTH, n_layers=LAYERS, in_channels=3,
                      padding=PADDING)
    params = model.init(seed=0)
    rng = np.random.default_rng(1)
    coeff = rng.standard_normal((BATCH, 1, GRID, GRID)).astype(np.float32)
    gx, gy = np.meshgrid(np.linspace(0, 1, GRID), np.linspace(0, 1, GRID), indexing="ij")
    coords = np.broadcast_to(np.stack([gx, gy]).astype(np.float32), (BATCH, 2, GRID, GRID))
    x = np.concatenate([coeff, coords], axis=1)  # (a(x, y), x, y) channels

    return fno_reference.run_and_check(model, x, params, (MODES, MODES), PADDING)


if __name__ == "__main__":
    sys.exit(main())
