"""Spectral truncation's accuracy against jax's own on the same program and device: the truncated FNO-2D
(partial DFTs at HIGHEST precision, the rest at the platform's default precision) is as close to a
float64 numpy reference as jax.jit's FNO-2D is. On the CPU both errors are float32 rounding; on a TPU
(benchmarks/device_check.py) both are bfloat16 passes of the dots (docs/limits.md, "On a TPU")."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import tree_util

import hloforge as hf
from hloforge import target
import fno2d

ALWAYS_DFT = target.CostModel("always-dft", dict(target.CPU.fft_ns), flop_ns=0.0, byte_ns=0.0)


def _relative_error(y, exact) -> float:
    return float(np.max(np.abs(np.asarray(y, np.float64) - exact)) / np.max(np.abs(exact)))


@pytest.mark.parametrize("modes, width", [(6, 8), (8, 16)])
def test_truncated_fno_is_as_accurate_as_jax(modes, width):
    params = fno2d.init(width=width, modes=modes, layers=2, seed=modes)
    x = np.random.default_rng(modes).uniform(-1, 1, (4, 3, 32, 32)).astype(np.float32)
    wide = tree_util.tree_map(lambda a: a.astype(np.complex128 if a.dtype.kind == "c" else np.float64), params)
    exact = fno2d._forward(np, wide, x.astype(np.float64))
    m = hf.trace(fno2d.forward, params, x)
    ffts = m.op_counts()["stablehlo.fft"]
    m.optimize(cost_model=ALWAYS_DFT)
    assert m.op_counts().get("stablehlo.fft", 0) < ffts  # (FFTs became partial DFTs)
    ours = m.compile()(*tree_util.tree_leaves((params, x)))
    theirs = jax.jit(lambda p, v: fno2d._forward(jnp, p, v))(params, x)
    ours_error, jax_error = _relative_error(ours, exact), _relative_error(theirs, exact)
    assert ours_error <= 2 * jax_error + 1e-6, (ours_error, jax_error)
