"""Executable keys from the IR: a cache hit neither prints nor scans the module's text, locations aside the
key tells every module apart, and a disk hit in a fresh process prepares the module's custom calls."""
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np

import hloforge as hf
import hloforge.numpy as hnp
from hloforge import ops
from hloforge.frontend.module import Module
from hloforge.runtime import cache, compiler
from hloforge.runtime.module_key import ir_text

SPEC = hf.ShapeDtype((64, 64), np.float32)


def _fft_layers(w):
    def f(x):
        for _ in range(3):  # (ops.constant keeps every bit: hnp's operators make splats of equal values)
            x = hnp.fft.irfft2(hnp.fft.rfft2(x) * ops.constant(w.astype(np.complex64)), s=(64, 64))
        return x
    return f


def _weights(bump=None):
    w = np.random.default_rng(0).standard_normal((64, 33)).astype(np.float32)
    if bump is not None:
        w[bump] = np.nextafter(w[bump], np.float32(np.inf))
    return w


def _refuse_text(mp):
    """Printing the module (with or without locations) or scanning it for compiling raise, and so does
    the text key of anything longer than ``ir_text``'s stand-in."""
    def refused(*args, **kwargs):
        raise AssertionError("a cache hit printed or scanned the module's text")
    mp.setattr(Module, "_code_for_compile", refused)
    mp.setattr(Module, "to_text", refused)
    original = compiler.without_locations
    mp.setattr(compiler, "without_locations", lambda code: original(code) if len(code) < 200 else refused())


def test_a_memory_or_disk_hit_does_not_print_the_module(fresh, tmp_path, monkeypatch):
    hf.config.cache_dir = str(tmp_path)
    first, again, later = (hf.trace(_fft_layers(_weights()), SPEC) for _ in range(3))  # (one program)
    assert first.compile().source == "compiled"
    with monkeypatch.context() as mp:
        _refuse_text(mp)
        hit = again.compile()
        cache.clear()
        disk = later.compile()
    assert (hit.source, disk.source) == ("memory", "disk") and cache.stats()["compiles"] == 1
    x = np.random.default_rng(1).standard_normal((64, 64)).astype(np.float32)
    want = np.asarray(first.compile()(x))
    np.testing.assert_array_equal(np.asarray(hit(x)), want)
    np.testing.assert_array_equal(np.asarray(disk(x)), want)


def test_the_key_ignores_locations_and_nothing_else(fresh):
    f, g = _fft_layers(_weights()), _fft_layers(_weights())  # (other lines: other locations)
    first, second = hf.trace(f, SPEC), hf.trace(lambda x: g(x), SPEC)
    assert first.to_text(debug_info=True) != second.to_text(debug_info=True)
    assert ir_text(first) == ir_text(second)
    zeros, negative_zero = np.zeros((64, 33), np.float32), np.zeros((64, 33), np.float32)
    negative_zero[3, 4] = -0.0
    others = [hf.trace(_fft_layers(_weights(bump=(5, 7))), SPEC),  # one constant one ulp apart
              hf.trace(_fft_layers(zeros), SPEC), hf.trace(_fft_layers(negative_zero), SPEC),
              hf.trace(_fft_layers(_weights()), hf.ShapeDtype((64, 64), np.float64)),
              hf.trace(lambda x: f(x) + 1.0, SPEC)]
    assert len({ir_text(m) for m in [first] + others}) == 1 + len(others)
    assert [m.compile().source for m in [first, second] + others] == ["compiled", "memory"] + ["compiled"] * 5


_RUN_PARSED = """
import sys
import numpy as np
import hloforge as hf
hf.config.cache_dir = sys.argv[2]
a = np.load(sys.argv[3])
exe = hf.Module.load(sys.argv[1]).compile()
np.save(sys.argv[4], np.asarray(exe(a)))
print(exe.source)
"""


def test_a_disk_hit_in_a_fresh_process_prepares_lapack_calls(tmp_path):
    # (jax's lapack_* kernels crash a process that never initialized them, deserialized ones too)
    a = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32) + 4 * np.eye(4, dtype=np.float32)
    path = tmp_path / "inv.mlir"
    path.write_text(jax.jit(jnp.linalg.inv).lower(a).as_text())
    assert "lapack_" in path.read_text()
    np.save(tmp_path / "a.npy", a)
    sources = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", textwrap.dedent(_RUN_PARSED), str(path), str(tmp_path / "cache"),
                              str(tmp_path / "a.npy"), str(tmp_path / "inv.npy")], capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, (out.returncode, out.stderr[-3000:])  # (-11: the segfault)
        sources.append(out.stdout.split()[-1])
        np.testing.assert_allclose(np.load(tmp_path / "inv.npy"), np.linalg.inv(a.astype(np.float64)), rtol=1e-4)
    assert sources == ["compiled", "disk"]
