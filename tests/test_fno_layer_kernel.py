"""benchmarks/fno_layer_kernel.py's Pallas FNO layer (an issue 46 experiment, timed on the TPU) computes the
same layer as XLA's program, checked in Pallas's interpreter so the experiment stays runnable off the chip."""
import os
import sys

import jax
import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import fno_layer_kernel as kernel  # noqa: E402


@pytest.mark.parametrize("rows", [8, 16])
def test_the_one_pass_layer_is_xlas_layer(rows):
    rng = np.random.default_rng(0)
    inverse, forward = kernel.dft_matrices(128, 4)
    args = [rng.standard_normal((2, 8, 16, 128)).astype(np.float32),
            (0.1 * rng.standard_normal((2, 8, 16, 8))).astype(np.float32),
            (rng.standard_normal((8, 8)) / np.sqrt(8)).astype(np.float32),
            (0.1 * rng.standard_normal((8, 1))).astype(np.float32), inverse, forward]
    want = jax.jit(kernel.xla_layer)(*args)
    got = jax.jit(lambda *a: kernel.kernel_layer(*a, rows=rows, interpret=True))(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5)


def test_the_dft_matrices_are_rffts_first_bins_and_irffts_weights():
    rng = np.random.default_rng(1)
    inverse, forward = kernel.dft_matrices(16, 5)
    x = rng.standard_normal((3, 16))
    spectrum = np.fft.rfft(x)[:, :5]
    np.testing.assert_allclose(x @ forward, np.concatenate([spectrum.real, spectrum.imag], 1), atol=1e-5)
    padded = np.concatenate([spectrum, np.zeros((3, 4))], 1)
    np.testing.assert_allclose(np.concatenate([spectrum.real, spectrum.imag], 1) @ inverse, np.fft.irfft(padded, 16),
                               atol=1e-5)
