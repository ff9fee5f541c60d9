"""hf.jit's pipeline entries (runtime/compiler.py): with a cache directory, a later process that
traces the same program loads the optimized program's executable without running the pass
pipeline. A "later process" here is a new hf.jit after the memory cache was emptied, with the pass
pipeline made to fail, so a test passes only if it was skipped."""
import glob
import os

import numpy as np
import pytest

import hloforge as hf
from hloforge.frontend import first_call
from hloforge.runtime import cache
from test_first_call import _inputs, _reference, _running, spectral


@pytest.fixture
def cache_dir(tmp_path):
    before = (hf.config.cache_dir, hf.config.first_call)
    hf.config.cache_dir, hf.config.first_call = str(tmp_path), "fast"
    cache.MEMORY.clear()
    cache.reset_stats()
    yield tmp_path
    hf.config.cache_dir, hf.config.first_call = before


def _first_process(x, w):
    """Call twice (the second call starts the truncated compile) and wait for it; the pipeline
    entry is written once the final program is compiled."""
    f = hf.jit(spectral)
    f(x, w)
    f(x, w)
    assert f.finish_compiling()
    return f


def _later_process(monkeypatch):
    cache.MEMORY.clear()
    cache.reset_stats()

    def no_passes(*args, **kwargs):
        raise AssertionError("the pass pipeline ran")

    monkeypatch.setattr(first_call, "plan", no_passes)
    return hf.jit(spectral)


def test_a_later_process_skips_the_passes_and_runs_the_truncated_program(cache_dir, monkeypatch):
    x, w = _inputs()
    f = _first_process(x, w)
    want = np.asarray(f(x, w))
    assert cache.stats()["pipeline_writes"] == 1
    g = _later_process(monkeypatch)
    got = np.asarray(g(x, w))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, _reference(x, w), rtol=1e-4, atol=1e-4)
    assert "fft(" not in _running(g).hlo_text and not g._deferred  # (the truncated program at once)
    stats = cache.stats()
    assert stats["pipeline_hits"] == 1 and stats["disk_hits"] == 1 and stats["compiles"] == 0
    assert _running(g).source == "disk"


def _untruncated(x, w):
    """FFTs that fft-truncate leaves (every mode is read): the first call's program is the final one."""
    import hloforge.numpy as hnp
    return hnp.fft.irfft2(hnp.fft.rfft2(x) * w[0, 0], s=x.shape[1:])


def test_a_program_nothing_truncates_gets_its_entry_from_the_second_call(cache_dir, monkeypatch):
    x, w = _inputs()
    f = hf.jit(_untruncated)
    want = np.asarray(f(x, w))
    assert cache.stats()["pipeline_writes"] == 0
    f(x, w)
    assert f.finish_compiling() and cache.stats()["pipeline_writes"] == 1 and cache.stats()["compiles"] == 1
    cache.MEMORY.clear()
    cache.reset_stats()
    monkeypatch.setattr(first_call, "plan", lambda *a: pytest.fail("the pass pipeline ran"))
    g = hf.jit(_untruncated)
    np.testing.assert_array_equal(np.asarray(g(x, w)), want)
    assert cache.stats()["pipeline_hits"] == 1 and "fft(" in _running(g).hlo_text and not g._deferred


def test_no_entry_for_a_program_called_once_nor_without_a_directory(cache_dir):
    x, w = _inputs()
    hf.jit(spectral)(x, w)  # (its FFT program runs; the truncated one was never compiled)
    assert cache.stats()["pipeline_writes"] == 0
    hf.config.cache_dir = None
    cache.MEMORY.clear()
    _first_process(x, w)
    assert cache.stats()["pipeline_writes"] == 0


@pytest.mark.parametrize("change", ["cost_model", "sources", "arguments"])
def test_another_cost_model_source_or_signature_runs_the_passes(cache_dir, monkeypatch, change):
    x, w = _inputs()
    _first_process(x, w)
    cache.MEMORY.clear()
    cache.reset_stats()
    plans = []
    monkeypatch.setattr(first_call, "plan", lambda *a, plan=first_call.plan: plans.append(1) or plan(*a))
    if change == "cost_model":
        monkeypatch.setattr(hf.config, "cost_model", "keep-ffts")
    elif change == "sources":
        monkeypatch.setattr(cache, "_stamp", ["an edited hloforge"])
    else:
        x = np.concatenate([x, x])
    got = np.asarray(hf.jit(spectral)(x, w))
    np.testing.assert_allclose(got, _reference(x, w), rtol=1e-4, atol=1e-4)
    assert cache.stats()["pipeline_hits"] == 0 and plans == [1]


def _pipeline_entries(directory):
    """The pipeline entries: the small files (an executable is kilobytes at least)."""
    return [p for p in glob.glob(os.path.join(str(directory), "*.hfx")) if os.path.getsize(p) < 1000]


@pytest.mark.parametrize("damage", ["corrupt entry", "executable gone"])
def test_a_damaged_entry_or_a_missing_executable_falls_back_to_the_passes(cache_dir, damage):
    x, w = _inputs()
    want = np.asarray(_first_process(x, w)(x, w))
    (entry,) = _pipeline_entries(cache_dir)
    if damage == "corrupt entry":
        key = os.path.basename(entry)[:-len(".hfx")]
        with open(entry, "wb") as f:
            f.write(cache.encode_entry(key, b"not json"))
    else:
        for path in glob.glob(os.path.join(str(cache_dir), "*.hfx")):
            if path != entry:
                os.remove(path)
    cache.MEMORY.clear()
    cache.reset_stats()
    got = np.asarray(hf.jit(spectral)(x, w))  # (the program with FFTs first, as on a first run)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    stats = cache.stats()
    assert stats["pipeline_hits"] == 0
    if damage == "corrupt entry":  # (deleted; the FFT program's executable is still on disk)
        assert stats["disk_errors"] == 1 and stats["compiles"] == 0 and stats["disk_hits"] == 1
        assert entry not in _pipeline_entries(cache_dir)
    else:
        assert stats["disk_errors"] == 0 and stats["compiles"] == 1
