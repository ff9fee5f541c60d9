"""hf.jit's first call of spectrally truncated programs (frontend/first_call.py, hf.config.first_call)."""

import jax
import numpy as np
import pytest

import hloforge as hf
import hloforge.numpy as hnp
from hloforge.frontend import first_call, jit as jit_module
from hloforge.runtime import cache
from hloforge.runtime.settings import Config

MODES = 4


def spectral(x, w):
    """One FNO-style spectral layer: keep the low modes, mix them, zero-fill the rest."""
    z = hnp.fft.rfft2(x)[:, :MODES, :MODES] * w
    out = hnp.zeros((x.shape[0], x.shape[1], x.shape[2] // 2 + 1), z.dtype).at[:, :MODES, :MODES].set(z)
    return hnp.fft.irfft2(out, s=x.shape[1:])


def _inputs():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 16, 16)).astype(np.float32)
    w = (rng.standard_normal((MODES, MODES)) + 1j * rng.standard_normal((MODES, MODES))).astype(np.complex64)
    return x, w


def _reference(x, w):
    z = np.fft.rfft2(x.astype(np.float64))[:, :MODES, :MODES] * w
    out = np.zeros((x.shape[0], x.shape[1], x.shape[2] // 2 + 1), np.complex128)
    out[:, :MODES, :MODES] = z
    return np.fft.irfft2(out, s=x.shape[1:])


def _running(f):
    """The executable the signature's cache entry runs now."""
    (entry,) = f._cache.values()
    return entry[0]


@pytest.fixture
def mode():
    cache.MEMORY.clear()  # (an executable an earlier test compiled would be used at once)
    before = hf.config.first_call
    yield lambda value: setattr(hf.config, "first_call", value)
    hf.config.first_call = before


def test_first_call_keeps_ffts_and_the_second_starts_the_truncated_compile(mode):
    mode("fast")
    x, w = _inputs()
    f = hf.jit(spectral)
    first = np.asarray(f(x, w))
    assert "fft(" in _running(f).hlo_text  # (the program with its FFTs)
    (deferred,) = f._deferred.values()
    assert deferred.thread is None  # (a program called once compiles once)
    second = np.asarray(f(x, w))
    assert deferred.thread is not None
    assert f.finish_compiling()
    assert not f._deferred and "fft(" not in _running(f).hlo_text
    steady = np.asarray(f(x, w))
    np.testing.assert_array_equal(first, second)
    want = _reference(x, w)
    for got in (first, steady):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_the_truncated_program_goes_to_the_cpp_loop_once_ready(mode, monkeypatch):
    mode("fast")
    x, w = (jax.device_put(a) for a in _inputs())
    f = hf.jit(spectral)
    f(x, w)
    f.finish_compiling()
    calls = []
    python_path = jit_module.Jitted._call
    monkeypatch.setattr(jit_module.Jitted, "_call", lambda self, *a, **k: calls.append(1) or python_path(self, *a, **k))
    for _ in range(4):
        f(x, w)
    assert len(calls) == 1  # (the new loop's one miss; then C++ runs the truncated executable)


def test_steady_mode_compiles_the_truncated_program_at_once(mode):
    mode("steady")
    x, w = _inputs()
    f = hf.jit(spectral)
    f(x, w)
    assert not f._deferred and "fft(" not in _running(f).hlo_text
    assert f.finish_compiling()


def test_a_truncated_program_in_the_disk_cache_runs_from_the_first_call(mode, tmp_path):
    mode("fast")
    x, w = _inputs()
    before = hf.config.cache_dir
    hf.config.cache_dir = str(tmp_path)
    try:
        f = hf.jit(spectral)
        f(x, w)
        f(x, w)
        f.finish_compiling()
        cache.MEMORY.clear()  # (a second process: only the disk cache holds the executables)
        cache.reset_stats()
        g = hf.jit(spectral)
        g(x, w)
        assert not g._deferred and "fft(" not in _running(g).hlo_text
        assert cache.stats()["disk_hits"] == 1 and cache.stats()["compiles"] == 0
    finally:
        hf.config.cache_dir = before


def test_programs_without_ffts_compile_once(mode):
    mode("fast")
    f = hf.jit(lambda x, w: hnp.tanh(x) * 2.0)
    f(*_inputs())
    assert not f._deferred


def test_an_fft_program_nothing_truncates_compiles_once(mode):
    mode("fast")
    f = hf.jit(lambda x, w: hnp.fft.irfft2(hnp.fft.rfft2(x) * w[0, 0], s=x.shape[1:]))  # (every mode read)
    x, w = _inputs()
    want = np.asarray(f(x, w))
    executable = _running(f)
    cache.reset_stats()
    np.testing.assert_array_equal(np.asarray(f(x, w)), want)  # (starts the second pipeline run)
    assert f.finish_compiling()
    assert _running(f) is executable and "fft(" in executable.hlo_text  # (nothing to switch to)
    assert cache.stats()["compiles"] == 0


def test_keep_ffts_defers_nothing(mode):
    mode("fast")
    before = hf.config.cost_model
    hf.config.cost_model = "keep-ffts"
    try:
        f = hf.jit(spectral)
        f(*_inputs())
        assert not f._deferred
    finally:
        hf.config.cost_model = before


def test_a_failed_truncated_compile_keeps_the_first_program(mode, monkeypatch):
    mode("fast")
    x, w = _inputs()
    f = hf.jit(spectral)
    want = np.asarray(f(x, w))
    (deferred,) = f._deferred.values()
    executable = _running(f)

    def fail(module):
        raise RuntimeError("no memory left")
    deferred.compile = fail
    with pytest.warns(RuntimeWarning, match="truncated program failed, so the program with FFTs keeps running: "
                                            "no memory left"):
        f(x, w)
        f.finish_compiling()
    assert not f._deferred and _running(f) is executable
    np.testing.assert_array_equal(np.asarray(f(x, w)), want)


def test_static_arguments_finish_every_signature(mode):
    mode("fast")
    x, w = _inputs()
    f = hf.jit(lambda x, w, scale: spectral(x, w) * scale, static_argnums=2)
    for scale in (1.0, 2.0):
        f(x, w, scale)
        f(x, w, scale)
    assert f.finish_compiling()


def test_plan_keeps_ffts_first_and_leaves_a_traced_copy_for_later(mode):
    mode("fast")
    m = hf.trace(spectral, *(hf.ShapeDtype(a.shape, a.dtype) for a in _inputs()))
    traced = m.to_text()
    now, later = first_call.plan(m, None)
    assert now is m and now.op_counts()["stablehlo.fft"] == 2
    assert later.to_text() == traced  # (the pipeline with the real cost model runs from the second call)
    later.optimize()
    assert "stablehlo.fft" not in later.op_counts()
    mode("steady")
    m = hf.trace(spectral, *(hf.ShapeDtype(a.shape, a.dtype) for a in _inputs()))
    now, later = first_call.plan(m, None)
    assert now is m and later is None and "stablehlo.fft" not in m.op_counts()


def test_first_call_setting_is_validated():
    assert Config({}).first_call == "fast"
    assert Config({"HLOFORGE_FIRST_CALL": "Steady"}).first_call == "steady"
    with pytest.raises(ValueError, match=r"HLOFORGE_FIRST_CALL must be one of \('fast', 'steady'\), got 'soon'"):
        Config({"HLOFORGE_FIRST_CALL": "soon"})
    with pytest.raises(ValueError, match=r"config.first_call must be one of \('fast', 'steady'\), got True"):
        Config({}).first_call = True
