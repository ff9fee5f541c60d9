"""Executable caches: memory hits, LRU eviction, the persistent directory across processes,
corrupt entries, compile errors with source locations, execution errors, and no leaks."""
import glob
import gc
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import hloforge as hf
from hloforge.runtime import cache, pjrt
from helpers import assert_close


@pytest.fixture
def fresh(monkeypatch):
    """An empty memory cache and zeroed counters; the old size and directory come back after."""
    monkeypatch.setattr(hf.config, "cache_size", hf.config.cache_size)
    monkeypatch.setattr(hf.config, "cache_dir", None)
    cache.clear()
    cache.reset_stats()
    yield
    cache.clear()


def _module(i=0):
    return hf.trace(lambda x: x * 2.0 + float(i), hf.ShapeDtype((3,), np.float32))


def test_second_compile_is_a_memory_hit(fresh):
    first = _module().compile()
    second = _module().compile()  # traced again: the same text, the same fingerprint
    assert (first.source, first.from_cache, second.source, second.from_cache) == ("compiled", False, "memory", True)
    assert first.compile_seconds > 0 and second.compile_seconds == 0
    assert cache.stats()["compiles"] == 1 and cache.stats()["memory_hits"] == 1
    x = np.arange(3, dtype=np.float32)
    assert_close(second(x), x * 2)


def test_jitted_functions_share_the_cache(fresh):
    def f(x):
        return x - 1.0
    x = np.ones(4, np.float32)
    hf.jit(f)(x)
    hf.jit(f)(x)
    assert cache.stats()["compiles"] == 1


def test_lru_eviction(fresh):
    hf.config.cache_size = 2
    for i in range(3):
        _module(i).compile()
    assert len(cache.MEMORY) == 2
    assert _module(2).compile().source == "memory"
    assert _module(0).compile().source == "compiled"  # the least recently used went first
    hf.config.cache_size = 1
    assert len(cache.MEMORY) == 1
    hf.config.cache_size = 0
    assert len(cache.MEMORY) == 0 and _module(1).compile().source == "compiled" and len(cache.MEMORY) == 0


_SECOND_PROCESS = textwrap.dedent("""
    import json, sys
    import numpy as np
    import hloforge as hf
    from hloforge.runtime import cache
    exe = hf.Module.load(sys.argv[1]).compile()
    y = np.asarray(exe(np.arange(3, dtype=np.float32)))
    print(json.dumps({"source": exe.source, "stats": cache.stats(), "y": y.tolist()}))
""")


def test_persistent_cache_second_process_does_not_compile(fresh, tmp_path):
    path = str(tmp_path / "m.mlir")
    _module().save(path)  # the same text (locations included) in both processes
    hf.config.cache_dir = str(tmp_path / "cache")
    assert hf.Module.load(path).compile().source == "compiled"
    assert len(glob.glob(str(tmp_path / "cache" / "*.hfx"))) == 1 and cache.stats()["disk_writes"] == 1
    env = dict(os.environ, HLOFORGE_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", _SECOND_PROCESS, path], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["source"] == "disk"
    assert result["stats"]["compiles"] == 0 and result["stats"]["disk_hits"] == 1
    assert result["y"] == [0.0, 2.0, 4.0]


def test_corrupt_and_stale_entries_are_ignored_and_rebuilt(fresh, tmp_path):
    hf.config.cache_dir = str(tmp_path)
    _module().compile()
    (path,) = glob.glob(str(tmp_path / "*.hfx"))
    x = np.arange(3, dtype=np.float32)
    for broken in (b"not an executable", None):
        if broken is None:  # a good checksum over bytes XLA cannot deserialize (another jaxlib)
            broken = cache.encode_entry(os.path.basename(path)[:-len(".hfx")], b"\x00" * 64)
        with open(path, "wb") as f:
            f.write(broken)
        cache.clear()
        errors = cache.stats()["disk_errors"]
        exe = _module().compile()
        assert exe.source == "compiled" and cache.stats()["disk_errors"] == errors + 1
        assert_close(exe(x), x * 2)
        cache.clear()
        assert _module().compile().source == "disk"  # rebuilt and rewritten


def test_unwritable_cache_dir_still_compiles(fresh, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    hf.config.cache_dir = str(blocker / "sub")  # cannot be created
    assert _module().compile().source == "compiled"


def test_compile_error_names_module_and_op_location(fresh):
    m = hf.Module.parse("""
    func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
      %0 = stablehlo.custom_call @no_such_target(%a) : (tensor<3xf32>) -> tensor<3xf32> loc("model.py":12:3)
      return %0 : tensor<3xf32>
    }""")
    with pytest.raises(hf.CompileError) as info:
        m.compile()
    text = str(info.value)
    assert text.startswith("main: XLA could not compile the module:")
    assert "no_such_target" in text
    assert 'the op(s) it names: stablehlo.custom_call at "model.py":12:3' in text


def test_compile_error_for_an_unsupported_opcode(fresh):
    m = hf.Module.parse("""
    func.func @step(%a: tensor<3xf32>) -> tensor<3xf32> {
      %0 = stablehlo.create_token : !stablehlo.token
      %1:2 = "stablehlo.recv"(%0) {channel_handle = #stablehlo.channel_handle<handle = 5, type = 3>,
             is_host_transfer = true} : (!stablehlo.token) -> (tensor<3xf32>, !stablehlo.token) loc("io.py":7:1)
      return %1#0 : tensor<3xf32>
    }""")
    with pytest.raises(hf.CompileError, match=r'(?s)^step: XLA could not compile.*recv.*stablehlo.recv at "io.py":7:1'):
        m.compile()


_OOM = textwrap.dedent("""
    import resource
    import numpy as np
    import hloforge as hf
    m = hf.Module.parse('''
    func.func @huge(%a: tensor<f32>) -> tensor<274877906944xf32> {
      %0 = stablehlo.broadcast_in_dim %a, dims = [] : (tensor<f32>) -> tensor<274877906944xf32>
      return %0 : tensor<274877906944xf32>
    }''')
    exe = m.compile()
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (64 << 30, hard))  # 1 TiB can never be allocated
    try:
        exe(np.float32(1)).block_until_ready()
    except hf.ExecutionError as e:
        print("ExecutionError:", e)
""")


def test_out_of_memory_raises_execution_error_with_the_name():
    out = subprocess.run([sys.executable, "-c", _OOM], capture_output=True, text=True, timeout=120)
    assert "ExecutionError: huge: execution failed: RESOURCE_EXHAUSTED" in out.stdout, out.stderr[-2000:]


def test_no_leak_over_many_compile_and_run_cycles(fresh):
    """Distinct modules, bounded cache: live executables and arrays stay flat (the full 10,000
    cycles run in benchmarks/leak_check.py)."""
    hf.config.cache_size = 8
    x = np.ones(3, np.float32)
    gc.collect()
    baseline = pjrt.live_counts()[0]  # executables other tests keep alive
    counts = []
    for i in range(300):
        y = _module(i).compile()(x)
        assert float(y[0]) == 2.0 + i
        del y
        if i in (50, 299):
            counts.append(pjrt.live_counts())
    executables, arrays = counts[-1]
    assert executables <= counts[0][0] and executables <= baseline + 8 + 4
    assert arrays <= counts[0][1] + 2
