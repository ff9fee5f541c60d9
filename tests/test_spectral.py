"""hloforge.nn.SpectralConv and FNO against the plain-numpy reference in examples/."""
import os
import subprocess
import sys

import numpy as np
import pytest

import hloforge as hf
from hloforge import nn
from helpers import PLATFORM, assert_close

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
sys.path.insert(0, EXAMPLES)
import fno_reference  # noqa: E402


@pytest.mark.parametrize("grid,modes", [((16,), (5,)), ((16,), (9,)), ((8, 10), (3, 4)), ((8, 8), (4, 5)),
                                        ((6, 8, 6), (2, 3, 2))])
def test_spectral_conv_matches_numpy(grid, modes):
    layer = nn.SpectralConv(len(grid), modes, 3, 2)
    w = layer.init(seed=0)
    x = np.random.default_rng(1).standard_normal((2, 3) + grid).astype(np.float32)
    y = hf.jit(layer)(x, w)
    assert_close(y, fno_reference.spectral_conv(x, w, modes).astype(np.float32))  # (float32's tolerance)


def test_spectral_conv_errors():
    layer = nn.SpectralConv(2, (5, 3), 3, 2)
    with pytest.raises(ValueError, match="5 modes on grid axis 0 of size 8 exceed 4"):
        hf.trace(layer, np.ones((1, 3, 8, 8), np.float32), layer.init())
    with pytest.raises(ValueError, match=r"input shape \(1, 2, 8, 8\) must be \(batch, 3, 2 grid dims\)"):
        hf.trace(layer, np.ones((1, 2, 8, 8), np.float32), layer.init())
    with pytest.raises(ValueError, match=r"modes \(0, 1\) must be 2 positive ints"):
        nn.SpectralConv(2, (0, 1), 3, 2)


@pytest.mark.parametrize("grid,modes", [((16,), (5,)), ((8, 10), (3, 4)), ((6, 8, 6), (2, 3, 2))])
def test_spectral_conv_takes_its_weights_as_real_planes(grid, modes):
    layer = nn.SpectralConv(len(grid), modes, 3, 2)
    w, planes = layer.init(seed=0), layer.init(seed=0, planes=True)
    np.testing.assert_array_equal(planes[0] + 1j * planes[1], w)
    x = np.random.default_rng(1).standard_normal((2, 3) + grid).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(hf.jit(layer)(x, planes)), np.asarray(hf.jit(layer)(x, w)))
    # jax's convention: a complex weight's gradient is d/dre - i d/dim, the planes' (d/dre, d/dim)
    loss = lambda w, x: (layer(x, w) ** 2).sum()  # noqa: E731
    g, (g_re, g_im) = hf.grad(loss)(w, x), hf.grad(loss)(planes, x)
    assert_close(g_re, np.real(g))
    assert_close(g_im, -np.imag(g))
    m = hf.trace(layer, hf.ShapeDtype(x.shape, x.dtype), tuple(hf.ShapeDtype(p.shape, p.dtype) for p in planes))
    report = m.optimize(cost_model="gpu")  # spectral truncation sees through stablehlo.complex
    assert report.fired["truncated_inverse_fft"] == 1 and "stablehlo.fft" not in m.op_counts(), str(m)


def test_fno_init_with_planes_gives_the_same_model():
    model = nn.FNO(2, 3, width=8, n_layers=2, in_channels=2, hidden=16)
    params, planes = model.init(seed=0), model.init(seed=0, planes=True)
    assert all(isinstance(layer["spectral"], tuple) for layer in planes["layers"])
    x = np.random.default_rng(2).standard_normal((3, 2, 12, 12)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(hf.jit(model)(x, planes)), np.asarray(hf.jit(model)(x, params)))


@pytest.mark.parametrize("weights, error, message", [
    (lambda w: (w.real,) * 3, ValueError, r"SpectralConv: weights as planes are a pair \(real, imag\), got 3 arrays"),
    (lambda w: (w.real, w.imag[:1]), ValueError, r"SpectralConv: the imag plane's shape \(1, 3, 2, 3, 4\) must be "
                                                 r"\(2, 3, 2, 3, 4\)"),
    (lambda w: (w.real, w.imag.astype(np.float64)), TypeError, "the planes must share one float dtype, got float32 "
                                                               "and float64"),
    (lambda w: (w.real.astype(np.int32),) * 2, TypeError, "got int32 and int32"),
])
def test_spectral_conv_planes_errors(weights, error, message):
    layer = nn.SpectralConv(2, (3, 4), 3, 2)
    with pytest.raises(error, match=message):
        hf.trace(layer, np.ones((1, 3, 8, 10), np.float32), weights(layer.init()))
    with pytest.raises(TypeError, match="SpectralConv.init: planes must be True or False, got 'yes'"):
        layer.init(planes="yes")


@pytest.mark.parametrize("n_dims,grid,modes,padding", [(1, (32,), (6,), 4), (2, (12, 12), (3, 3), 3)])
def test_fno_matches_numpy(n_dims, grid, modes, padding):
    model = nn.FNO(n_dims, modes, width=8, n_layers=2, in_channels=2, hidden=16, padding=padding)
    params = model.init(seed=0)
    x = np.random.default_rng(2).standard_normal((3, 2) + grid).astype(np.float32)
    m = hf.jit(model).lower(x, params)
    assert m.op_counts()["stablehlo.pad"] >= 1  # the non-periodic domain is padded
    y = np.asarray(hf.jit(model)(x, params))
    ref = fno_reference.fno(x, params, modes, padding)
    assert y.shape == ref.shape
    rtol = 1e-4 if PLATFORM != "tpu" else 2e-2  # (a TPU's f32 dots at default precision: one bfloat16 pass)
    np.testing.assert_allclose(y, ref, rtol=rtol, atol=rtol / 10 * np.abs(ref).max())


@pytest.mark.child_processes
@pytest.mark.every_case  # (each page and example is a promise to users)
@pytest.mark.parametrize("script", ["fno_1d.py", "fno_2d.py", "optimize_jax_module.py",
                                    "per_example_gradients.py", "jax_training_with_hloforge.py"])
def test_examples_run_and_check_themselves(script):
    result = subprocess.run([sys.executable, os.path.join(EXAMPLES, script)], capture_output=True, text=True,
                            timeout=120, cwd=EXAMPLES)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "max abs" in result.stdout


@pytest.mark.child_processes
def test_quickstart_shows_a_pattern_firing_and_where_its_executable_came_from(tmp_path):
    """The quickstart's pipeline report names the patterns that fired, and its compile lines say
    whether XLA compiled or a cache answered (a second run: the disk cache)."""
    env = dict(os.environ, HLOFORGE_CACHE_DIR=str(tmp_path / "cache"))
    outputs = []
    for _ in range(2):
        result = subprocess.run([sys.executable, os.path.join(EXAMPLES, "quickstart.py")], capture_output=True,
                                text=True, timeout=120, cwd=tmp_path, env=env)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        outputs.append(result.stdout.splitlines())
    first, second = outputs
    fired = next(line for line in first if line.startswith("fired: "))
    assert "truncated_inverse_fft" in fired or "truncated_forward_fft" in fired, fired
    report = next(line for line in first if line.startswith("PassReport: "))
    before, after = (int(n) for n in report.split(", ")[1].split(" ops")[0].split(" -> "))
    assert before != after, report
    assert any(line.startswith("XLA compiled in ") for line in first), first[-6:]
    assert "the same module again: loaded from the memory cache (XLA did not compile)" in first
    assert any(line.startswith("loaded from the disk cache") for line in second), second[-6:]
    assert first[-1].startswith("max abs error vs numpy: ") and second[-1] == first[-1]
    assert os.listdir(tmp_path) == ["cache"]


@pytest.mark.slow
def test_fno_2d_of_a_hundred_samples_at_once_equals_it_in_batches():
    # (the Darcy example's test set at 85x85: on a TPU v5e, 2026-12-06, one call on all 100 samples gave a
    # relative L2 of 0.168 where batches of 20 or 50 gave 0.0125, as the CPU did; with or without passes)
    model = nn.FNO(2, 12, width=32, n_layers=4, in_channels=3, padding=9)
    params = model.init(seed=0)
    x = np.random.default_rng(3).standard_normal((100, 3, 85, 85)).astype(np.float32)
    f = hf.jit(model)
    whole = np.asarray(f(x, params))
    batched = np.concatenate([np.asarray(f(x[i:i + 20], params)) for i in range(0, 100, 20)])
    rtol = 1e-5 if PLATFORM != "tpu" else 1e-2
    np.testing.assert_allclose(whole, batched, rtol=rtol, atol=rtol * np.abs(batched).max())
