"""benchmarks/fno_kernel_model.py's FNO-2D with its grid work in Pallas layers (an issue 46 experiment, timed on
the TPU) computes models.fno, checked in Pallas's interpreter so the experiment stays runnable off the chip."""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import fno_kernel_model  # noqa: E402
import models  # noqa: E402


@pytest.mark.parametrize("layout", fno_kernel_model.LAYOUTS)
@pytest.mark.parametrize("modes", [16, 12])  # (2k = 32 lanes, and 24 zero-padded to 32)
def test_the_kernel_fno_is_models_fno(layout, modes):
    rng = np.random.default_rng(0)
    params = jax.tree.map(jnp.asarray, models.fno_params(2, (modes, modes), 8, 4, 3, rng))
    x = jnp.asarray(rng.standard_normal((2, 3, 64, 64)).astype(np.float32))
    want = np.asarray(jax.jit(lambda p, v: models.fno(jnp, v, p, (modes, modes), 0))(params, x))
    got = np.asarray(jax.jit(lambda p, v: fno_kernel_model.kernel_fno(p, v, modes, layout, interpret=True))(params, x))
    assert got.shape == want.shape
    assert np.max(np.abs(got - want)) <= 1e-5 * np.max(np.abs(want))


def test_the_x_matrices_are_the_kept_modes_of_an_fft_and_its_inverse():
    x = np.random.default_rng(1).standard_normal((3, 16))
    forward, inverse = fno_kernel_model.x_matrices(16, 3)
    kept = np.fft.fft(x)[:, [0, 1, 2, 13, 14, 15]]
    np.testing.assert_allclose(x @ forward, kept, atol=1e-5)
    full = np.zeros((3, 16), complex)
    full[:, [0, 1, 2, 13, 14, 15]] = kept
    np.testing.assert_allclose(kept @ inverse, np.fft.ifft(full), atol=1e-5)
