"""benchmarks/fno_layer_kernel.py's Pallas FNO layer (an issue 46 experiment, timed on the TPU) computes the
same layer as XLA's program, checked in Pallas's interpreter so the experiment stays runnable off the chip."""
import os
import sys

import jax
import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import fno_layer_kernel as kernel  # noqa: E402


@pytest.mark.parametrize("rows, precision", [(8, "highest"), (16, "highest"), (8, "default"), (8, "high3")])
def test_the_one_pass_layer_is_xlas_layer(rows, precision):
    rng = np.random.default_rng(0)
    inverse, forward = kernel.dft_matrices(128, 4)
    args = [rng.standard_normal((2, 8, 16, 128)).astype(np.float32),
            (0.1 * rng.standard_normal((2, 8, 16, 8))).astype(np.float32),
            (rng.standard_normal((8, 8)) / np.sqrt(8)).astype(np.float32),
            (0.1 * rng.standard_normal((8, 1))).astype(np.float32), inverse, forward]
    want = jax.jit(kernel.xla_layer)(*args)
    got = jax.jit(lambda *a: kernel.kernel_layer(*a, rows=rows, precision=precision, interpret=True))(*args)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        if precision == "high3":  # (three bfloat16 products: about 16 bits of each operand, against the largest value)
            assert np.max(np.abs(g - w)) <= 1e-5 * np.max(np.abs(w))
        else:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_the_dft_matrices_are_rffts_first_bins_and_irffts_weights():
    rng = np.random.default_rng(1)
    inverse, forward = kernel.dft_matrices(16, 5)
    x = rng.standard_normal((3, 16))
    spectrum = np.fft.rfft(x)[:, :5]
    np.testing.assert_allclose(x @ forward, np.concatenate([spectrum.real, spectrum.imag], 1), atol=1e-5)
    padded = np.concatenate([spectrum, np.zeros((3, 4))], 1)
    np.testing.assert_allclose(np.concatenate([spectrum.real, spectrum.imag], 1) @ inverse, np.fft.irfft(padded, 16),
                               atol=1e-5)


def test_the_variants_are_each_precision_and_each_part_left_out(capsys):
    kernel.main(["--interpret", "--variants", "--packed"])
    lines = [line.strip() for line in capsys.readouterr().out.splitlines() if "kernel" in line]
    assert [line.split(":")[0] for line in lines] == [
        "kernel highest R=8", "kernel default R=8", "kernel high3 R=8", "kernel without conv R=8",
        "kernel without inverse R=8", "kernel without gelu R=8", "kernel without forward R=8",
        "kernel without conv+inverse+gelu+forward R=8", "packed kernel (p=4) R=32", "rows-outer kernel (p=4) R=32"]
    gaps = [float(line.rsplit(" ", 1)[1]) for line in lines[:3] + lines[-2:]]
    assert max(gaps) < 1e-5  # (high3's three bfloat16 products: about 16 bits of each operand)


@pytest.mark.parametrize("layout", ["packed", "rows outer"])
def test_the_lane_dense_layers_are_xlas_layer_packed(layout):
    rng = np.random.default_rng(2)
    inverse, forward = kernel.dft_matrices(128, 12)  # (2k = 24 lanes, zero-padded to 32: p = 4 rows per row)
    args = [rng.standard_normal((2, 8, 64, 128)).astype(np.float32),
            (0.1 * rng.standard_normal((2, 8, 64, 24))).astype(np.float32),
            (rng.standard_normal((8, 8)) / np.sqrt(8)).astype(np.float32),
            (0.1 * rng.standard_normal((8, 1))).astype(np.float32), inverse, forward]
    want = [np.asarray(a) for a in jax.jit(kernel.xla_layer)(*args)]
    prepared, p = kernel.packed_args(args)
    assert p == 4 and prepared[0].shape == (2, 8, 16, 512) and prepared[1].shape == (2, 8, 16, 128)
    if layout == "packed":
        out, t = jax.jit(lambda *a: kernel.packed_layer(*a, rows=32, interpret=True))(*prepared)
    else:
        outer = [kernel.rows_outer(prepared[0]), kernel.rows_outer(prepared[1])] + prepared[2:]
        out, t = (kernel.rows_outer(a) for a in jax.jit(
            lambda *a: kernel.rows_outer_layer(*a, rows=32, interpret=True))(*outer))
    for got, w in [(np.asarray(out).reshape(want[0].shape), want[0]), (np.asarray(kernel.unpacked_t(t, p, 24)), want[1])]:
        assert np.max(np.abs(got - w)) <= 1e-6 * np.max(np.abs(w))  # (sums over Y in another order)
