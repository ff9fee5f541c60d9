"""hloforge.passes on modules lowered by jax: jnp.fft round trips must lose all their FFTs."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close, random

import hloforge as hf

F32, C64 = np.float32, np.complex64

ROUND_TRIPS = {
    "irfftn_rfftn_2d": (lambda x: jnp.fft.irfftn(jnp.fft.rfftn(x), s=x.shape), (4, 6), F32),
    "irfftn_rfftn_3d_odd": (lambda x: jnp.fft.irfftn(jnp.fft.rfftn(x), s=x.shape), (3, 5, 7), F32),
    "irfft_rfft_odd": (lambda x: jnp.fft.irfft(jnp.fft.rfft(x), n=x.shape[-1]), (3, 7), F32),
    "irfft_rfft_ortho": (lambda x: jnp.fft.irfft(jnp.fft.rfft(x, norm="ortho"), n=9, norm="ortho"), (2, 9), F32),
    "irfftn_rfftn_ortho": (lambda x: jnp.fft.irfftn(jnp.fft.rfftn(x, norm="ortho"), s=x.shape, norm="ortho"),
                           (6, 5), F32),
    "irfft_rfft_forward": (lambda x: jnp.fft.irfft(jnp.fft.rfft(x, norm="forward"), n=8, norm="forward"), (8,), F32),
    "ifft_fft": (lambda x: jnp.fft.ifft(jnp.fft.fft(x)), (3, 5), C64),
    "fft_ifft_ortho": (lambda x: jnp.fft.fft(jnp.fft.ifft(x, norm="ortho"), norm="ortho"), (4, 6), C64),
    "ifft2_fft2": (lambda x: jnp.fft.ifft2(jnp.fft.fft2(x)), (2, 3, 5), C64),
    "ifftn_fftn_ortho": (lambda x: jnp.fft.ifftn(jnp.fft.fftn(x, norm="ortho"), norm="ortho"), (3, 4, 5), C64),
    "real_through_complex": (lambda x: jnp.fft.ifft(jnp.fft.fft(x)).real, (7,), F32),
}


def lowered(fn, shape, dtype) -> hf.Module:
    return hf.Module.parse(jax.jit(fn).lower(np.zeros(shape, dtype)).as_text())


def run(m, x):
    return np.asarray(m.compile()(x))


@pytest.mark.parametrize("name", list(ROUND_TRIPS))
def test_round_trip_loses_all_ffts(name):
    fn, shape, dtype = ROUND_TRIPS[name]
    m = lowered(fn, shape, dtype)
    assert "func.call" in m.op_counts()
    x = random(shape, dtype, seed=1)
    want = run(m, x)
    report = m.optimize()
    counts = m.op_counts()
    assert "stablehlo.fft" not in counts, f"{name} kept an FFT:\n{m}\n{report}"
    assert counts["func.func"] == 1 and "func.call" not in counts, str(m)
    assert_close(run(m, x), want)
    assert_close(run(m, x), np.asarray(fn(x)))


@pytest.mark.parametrize("norm", [None, "ortho"])
def test_rfft_of_irfft_keeps_both(norm):
    fn = lambda y: jnp.fft.rfft(jnp.fft.irfft(y, norm=norm), norm=norm)  # noqa: E731
    m = lowered(fn, (3, 5), C64)
    y = random((3, 5), C64, seed=2)
    want = run(m, y)
    m.optimize()
    assert m.op_counts()["stablehlo.fft"] == 2, "rfft(irfft(y)) is a projection, not the identity"
    assert_close(run(m, y), want)


def test_finite_math_false_keeps_ffts():
    fn, shape, dtype = ROUND_TRIPS["irfft_rfft_ortho"]
    m = lowered(fn, shape, dtype)
    report = m.optimize(finite_math=False)
    assert m.op_counts()["stablehlo.fft"] == 2
    assert report.fired["call_of_function"] > 0 and "func.call" not in m.op_counts()


def test_a_filter_is_not_a_round_trip():
    """A per-frequency gain between rfft and irfft must stay (it is a convolution)."""
    fn = lambda x: jnp.fft.irfft(jnp.fft.rfft(x) * jnp.arange(5), n=8)  # noqa: E731
    m = lowered(fn, (8,), F32)
    x = random((8,), F32, seed=3)
    want = run(m, x)
    m.optimize()
    assert m.op_counts()["stablehlo.fft"] == 2
    assert_close(run(m, x), want)
