"""passes/cost.py: the run-time estimate hf.optimize compares before handing back its rewrite."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
from hloforge import target
from hloforge.passes.cost import estimate


def _spectral(x, w):
    spectrum = jnp.fft.rfft(x)
    mixed = jnp.einsum("bim,iom->bom", spectrum[..., :8], w)
    return jnp.fft.irfft(jnp.zeros_like(spectrum).at[..., :8].set(mixed), n=x.shape[-1])


X = np.ones((4, 8, 256), np.float32)
W = np.ones((8, 8, 8), np.complex64)


def _module(fn, *args):
    return hf.Module.parse(jax.jit(fn).lower(*args).as_text())


@pytest.mark.parametrize("model", [target.CPU, target.GPU, target.TPU], ids=lambda m: m.name)
def test_the_estimate_is_the_cost_models_ffts_and_dots(model):
    fft_only = _module(lambda x: jnp.fft.rfft(x), X)
    assert estimate(fft_only, model) == pytest.approx(model.fft_cost("RFFT", 4 * 8, (256,)))
    dot_only = _module(lambda a, b: a @ b, np.ones((16, 32), np.float32), np.ones((32, 8), np.float32))
    assert estimate(dot_only, model) == pytest.approx(model.dft_cost(2 * 16 * 8 * 32))
    complex_dot = _module(lambda a, b: a @ b, np.ones((16, 32), np.complex64), np.ones((32, 8), np.complex64))
    assert estimate(complex_dot, model) == pytest.approx(4 * estimate(dot_only, model))
    assert estimate(_module(jnp.tanh, X), model) == 0.0  # (elementwise work is not counted)


def test_a_function_counts_once_per_call_so_inlining_changes_nothing():
    inner = jax.jit(lambda x: jnp.fft.irfft(jnp.tanh(jnp.fft.rfft(x).real), n=256))
    twice = _module(lambda x: inner(inner(x) * 2.0), X)
    assert twice.op_counts()["stablehlo.fft"] == 2  # (one function, called twice)
    once = estimate(_module(lambda x: inner(x), X), target.CPU)
    assert estimate(twice, target.CPU) == pytest.approx(2 * once)
    inlined = twice.clone()
    inlined.optimize()
    assert inlined.op_counts()["stablehlo.fft"] == 4 and len(inlined.functions()) == 1
    assert estimate(inlined, target.CPU) == pytest.approx(estimate(twice, target.CPU))


def test_spectral_truncation_lowers_the_estimate_where_the_model_lets_it_fire():
    m = _module(_spectral, X, W)
    truncated = m.clone()
    truncated.optimize(cost_model="cpu")
    assert "stablehlo.fft" not in truncated.op_counts()
    assert estimate(truncated, target.CPU) < 0.5 * estimate(m, target.CPU)
    kept = m.clone()
    kept.optimize(cost_model="keep-ffts")
    assert estimate(kept, target.CPU) == pytest.approx(estimate(m, target.CPU))
