"""Executable caches: memory hits, LRU eviction, the persistent directory across processes (on by
default, size-bounded, shared by concurrent writers, read-only or unusable directories), corrupt
entries, compile errors with source locations, execution errors, and no leaks."""
import errno
import glob
import gc
import hashlib
import json
import os
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest

import hloforge as hf
from hloforge.runtime import cache, cache_entry, pjrt
from hloforge.runtime.cli import cache_command
from hloforge.runtime.cli.main import main
from hloforge.runtime.settings import Config
from helpers import assert_close


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


def test_one_program_from_two_call_sites_compiles_once(fresh):
    spec = hf.ShapeDtype((3,), np.float32)
    first = hf.trace(lambda x: x * 2.0, spec)
    second = hf.trace(lambda x: x * 2.0, spec)  # another line: other locations, the same program
    assert first.as_text(debug_info=True) != second.as_text(debug_info=True)
    assert (first.compile().source, second.compile().source) == ("compiled", "memory")
    third = hf.trace(lambda x: x * 3.0, spec)  # another program still compiles
    assert third.compile().source == "compiled" and cache.stats()["compiles"] == 2


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
    with pytest.warns(RuntimeWarning, match=r"sub: cannot create the directory \(Not a directory\)"):
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
    hf.config.cache_size = 4  # (small, so that 15 times its size is few compiles)
    x = np.ones(3, np.float32)
    gc.collect()
    baseline = pjrt.live_counts()[0]  # executables other tests keep alive
    counts = []
    for i in range(60):  # (15 times the cache's size)
        y = _module(i).compile()(x)
        assert float(y[0]) == 2.0 + i
        del y
        if i in (20, 59):
            counts.append(pjrt.live_counts())
    executables, arrays = counts[-1]
    assert executables <= counts[0][0] and executables <= baseline + 4 + 4
    assert arrays <= counts[0][1] + 2


# ---------------------------------------------------------------- the persistent cache: default, bound, sharing


def _python(code, *args, env=None, timeout=120):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=timeout)


def _home_env(home, **extra):
    """The environment of a user whose home is ``home``, with hloforge's cache settings unset."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HLOFORGE_CACHE", "XDG_CACHE_HOME"))}
    return dict(env, HOME=str(home), **extra)


def test_the_default_directory_is_the_users_cache_directory():
    assert Config({"HOME": "/home/u"}).cache_dir == "/home/u/.cache/hloforge"
    assert Config({"HOME": "/home/u", "XDG_CACHE_HOME": "/var/cache/u"}).cache_dir == "/var/cache/u/hloforge"
    assert Config({"HOME": "/home/u", "XDG_CACHE_HOME": "rel"}).cache_dir == "/home/u/.cache/hloforge"  # (XDG: ignored)
    assert Config({"HOME": "/home/u", "HLOFORGE_CACHE_DIR": "/c"}).cache_dir == "/c"
    assert Config({"HOME": "/home/u", "HLOFORGE_CACHE_DIR": ""}).cache_dir is None  # the off switch
    c = Config({"HOME": "/home/u"})
    c.cache_dir = ""
    assert c.cache_dir is None


def test_the_directory_expands_home_and_refuses_what_no_file_system_takes(monkeypatch, tmp_path):
    """Issue 49: "\\x00bad" failed only at the first compile (embedded null byte), and "~/x" made a
    directory named "~" in the working directory."""
    monkeypatch.setenv("HOME", str(tmp_path))
    c = Config({"HOME": str(tmp_path)})
    c.cache_dir = "~/x"
    assert c.cache_dir == str(tmp_path / "x")
    c.cache_dir = "~"
    assert c.cache_dir == str(tmp_path)
    assert Config({"HLOFORGE_CACHE_DIR": "~/cache"}).cache_dir == str(tmp_path / "cache")
    with pytest.raises(ValueError, match=r"config.cache_dir must be a path without null bytes, got '\\x00bad'"):
        c.cache_dir = "\x00bad"
    with pytest.raises(ValueError, match=r"config.cache_dir: cannot expand '~no-such-user-49/x' \(no such user, "
                                         r"or no home directory\)"):
        c.cache_dir = "~no-such-user-49/x"
    assert c.cache_dir == str(tmp_path)  # (a refused value changes nothing)
    with pytest.raises(ValueError, match=r"HLOFORGE_CACHE_DIR: config.cache_dir must be a path without null bytes"):
        Config({"HLOFORGE_CACHE_DIR": "a\x00b"})


def test_the_size_bound_reads_the_environment_and_validates():
    assert Config({}).cache_max_bytes == cache.DEFAULT_MAX_BYTES == 1 << 30
    for text, expected in (("4096", 4096), ("512M", 512 << 20), ("2g", 2 << 30), ("1GiB", 1 << 30), ("64 KB", 64 << 10),
                           ("0", 0)):
        assert Config({"HLOFORGE_CACHE_MAX_BYTES": text}).cache_max_bytes == expected, text
    with pytest.raises(ValueError, match=r"HLOFORGE_CACHE_MAX_BYTES: expected a size in bytes such as 1073741824, "
                                         r"512M or 1G, got 'lots'"):
        Config({"HLOFORGE_CACHE_MAX_BYTES": "lots"})
    with pytest.raises(ValueError, match=r"config.cache_max_bytes must be an integer >= 0, got -1"):
        Config({}).cache_max_bytes = -1
    with pytest.raises(ValueError, match=r"config.cache_max_bytes must be an integer >= 0, got '1G'"):
        Config({}).cache_max_bytes = "1G"


_FIRST_CALL = """
    import json
    import numpy as np
    import hloforge as hf
    from hloforge.runtime import cache
    f = hf.jit(lambda x: hf.numpy.sin(x) * 2.0 + 1.0)
    y = np.asarray(f(np.arange(3, dtype=np.float32)))
    print(json.dumps({"dir": hf.config.cache_dir, "stats": cache.stats(), "y": y.tolist()}))
"""


def test_the_cache_is_on_by_default_and_a_second_process_does_not_compile(tmp_path):
    env = _home_env(tmp_path)
    runs = []
    for _ in range(2):
        out = _python(_FIRST_CALL, env=env)
        assert out.returncode == 0, out.stderr[-3000:]
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert runs[0]["dir"] == str(tmp_path / ".cache" / "hloforge")
    assert runs[0]["stats"]["compiles"] == 1 and runs[0]["stats"]["disk_writes"] == 1
    assert runs[1]["stats"]["compiles"] == 0 and runs[1]["stats"]["disk_hits"] == 1
    assert runs[0]["y"] == runs[1]["y"]
    assert os.stat(tmp_path / ".cache" / "hloforge").st_mode & 0o077 == 0


def test_the_off_switch_writes_nothing(tmp_path):
    out = _python(_FIRST_CALL, env=_home_env(tmp_path, HLOFORGE_CACHE_DIR=""))
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["dir"] is None and result["stats"]["disk_writes"] == 0 and result["stats"]["compiles"] == 1
    assert not (tmp_path / ".cache").exists()


def _entry_paths(directory):
    return sorted(glob.glob(os.path.join(str(directory), "*.hfx")))


def _age(path, seconds):
    """Make ``path`` look last used ``seconds`` ago (mtime is the entry's last use)."""
    when = time.time() - seconds
    os.utime(path, (when, when))


def _compile_new_entry(directory, i):
    """Compile module ``i``; the path of the entry that appeared."""
    before = set(_entry_paths(directory))
    assert _module(i).compile().source == "compiled"
    (path,) = set(_entry_paths(directory)) - before
    return path


def test_the_directory_is_bounded_and_the_least_recently_used_entry_goes(fresh, tmp_path):
    hf.config.cache_dir = str(tmp_path)
    zero, one = (_compile_new_entry(tmp_path, i) for i in range(2))
    sizes = [os.path.getsize(p) for p in (zero, one)]
    hf.config.cache_max_bytes = sum(sizes) + min(sizes) // 2  # room for two entries, not three
    _age(zero, 300)
    _age(one, 200)
    cache.clear()
    assert _module(0).compile().source == "disk"  # a hit marks module 0 as just used
    assert os.path.getmtime(zero) > time.time() - 60
    two = _compile_new_entry(tmp_path, 2)
    assert os.path.exists(zero) and os.path.exists(two) and not os.path.exists(one)  # 1: least recently used
    assert len(_entry_paths(tmp_path)) == 2 and cache.stats()["disk_evictions"] == 1
    assert sum(os.path.getsize(p) for p in _entry_paths(tmp_path)) <= hf.config.cache_max_bytes


def test_an_entry_larger_than_the_bound_is_not_written(fresh, tmp_path):
    hf.config.cache_dir = str(tmp_path)
    hf.config.cache_max_bytes = 1024  # (an entry is a few KiB)
    assert _module().compile().source == "compiled"
    assert _entry_paths(tmp_path) == [] and cache.stats()["disk_writes"] == 0


def test_eviction_leaves_other_files_and_removes_stale_temp_files(fresh, tmp_path):
    hf.config.cache_dir = str(tmp_path)
    (tmp_path / "notes.txt").write_text("mine")
    stale, fresh_temp = tmp_path / ".tmp-dead.hfx", tmp_path / ".tmp-writing.hfx"
    stale.write_bytes(b"x" * 100)
    fresh_temp.write_bytes(b"x" * 100)
    _age(stale, 2 * 3600)
    _module(0).compile()
    hf.config.cache_max_bytes = 0
    cache.evict(str(tmp_path), 0)
    assert _entry_paths(tmp_path) == []
    assert (tmp_path / "notes.txt").read_text() == "mine" and fresh_temp.exists() and not stale.exists()


def test_an_unusable_directory_warns_once_and_keeps_executables_in_memory(fresh, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    hf.config.cache_dir = str(blocker)  # a file where the directory should be
    with pytest.warns(RuntimeWarning, match=r"hf.config.cache_dir .*file: cannot create the directory \(File exists\); "
                                            r"compiled executables are kept in memory only"):
        assert _module(0).compile().source == "compiled"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (one warning per directory and process)
        assert _module(1).compile().source == "compiled"
        assert _module(0).compile().source == "memory"


def test_a_read_only_directory_serves_its_entries_and_warns_once_on_writes(fresh, tmp_path, monkeypatch):
    hf.config.cache_dir = str(tmp_path)
    _module(0).compile()
    cache.clear()

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(cache.tempfile, "mkstemp", read_only)  # (chmod cannot stop root from writing)
    assert _module(0).compile().source == "disk"
    with pytest.warns(RuntimeWarning, match=r"cannot write to the directory \(Read-only file system\); compiled "
                                            r"executables are kept in memory only"):
        assert _module(1).compile().source == "compiled"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _module(2).compile().source == "compiled"
    assert len(_entry_paths(tmp_path)) == 1


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes read-only directories")
def test_a_chmod_read_only_directory(fresh, tmp_path):
    hf.config.cache_dir = str(tmp_path / "c")
    _module(0).compile()
    cache.clear()
    os.chmod(tmp_path / "c", 0o500)
    try:
        assert _module(0).compile().source == "disk"
        with pytest.warns(RuntimeWarning, match=r"cannot write to the directory \(Permission denied\)"):
            assert _module(1).compile().source == "compiled"
    finally:
        os.chmod(tmp_path / "c", 0o700)


def test_another_jaxlib_version_misses_the_cache(fresh, tmp_path, monkeypatch):
    hf.config.cache_dir = str(tmp_path)
    _module().compile()
    cache.clear()
    with monkeypatch.context() as patch:
        patch.setattr(pjrt.jaxlib, "__version__", "0.0.1")
        assert _module().compile().source == "compiled"  # (a new key: the old entry is never looked up)
    assert len(_entry_paths(tmp_path)) == 2
    cache.clear()
    assert _module().compile().source == "disk"


_WRITER = """
    import json, sys
    import numpy as np
    import hloforge as hf
    from hloforge.runtime import cache
    hf.config.cache_dir, hf.config.cache_max_bytes = sys.argv[1], int(sys.argv[2])
    x = np.arange(3, dtype=np.float32)
    bad = []
    for round in range(int(sys.argv[3])):
        i = round % 6
        for _ in range(2):  # (the second read finds the entry just written, unless the other process evicted it)
            cache.clear()  # (every read goes to the directory: a load, or a compile, a write and an eviction)
            exe = hf.trace(lambda a: a * 2.0 + float(i), hf.ShapeDtype((3,), np.float32)).compile()
            if np.asarray(exe(x)).tolist() != (x * 2 + i).tolist():
                bad.append(round)
    print(json.dumps({"stats": cache.stats(), "bad": bad}))
"""


def test_concurrent_writers_share_a_bounded_directory(tmp_path):
    """Two processes, the same six modules, a bound of about three entries: every round reads,
    writes or evicts while the other process does too (and reads its own module again, so hits
    do not depend on the two overlapping in time). No reader sees a partial entry."""
    bound = 3 * 8 << 10  # (an entry is about 5-8 KiB)
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(_WRITER), str(tmp_path), str(bound), "40"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, err[-3000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    for r in results:
        assert r["bad"] == [] and r["stats"]["disk_errors"] == 0, r
        assert r["stats"]["compiles"] + r["stats"]["disk_hits"] == 2 * 40, r
    assert sum(r["stats"]["disk_evictions"] for r in results) > 0 and sum(r["stats"]["disk_hits"] for r in results) > 0
    assert sum(os.path.getsize(p) for p in _entry_paths(tmp_path)) <= bound
    assert not glob.glob(str(tmp_path / ".tmp-*"))


def test_cli_cache_shows_and_clears(fresh, tmp_path, capsys):
    hf.config.cache_dir = str(tmp_path)
    for i in range(2):
        _module(i).compile()
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["cache", "--list"]) == 0
    out = capsys.readouterr().out
    assert f"location: {tmp_path} (in use)" in out and "entries:  2" in out
    assert "of at most 1.0 GiB" in out and out.count(".hfx") == 2
    assert main(["cache", "clear"]) == 0
    assert capsys.readouterr().out.startswith(f"cleared {tmp_path}: 2 entries, ")
    assert _entry_paths(tmp_path) == [] and (tmp_path / "notes.txt").exists()  # (only hloforge's files)
    hf.config.cache_dir = None
    assert main(["cache"]) == 0
    assert capsys.readouterr().out.startswith("the persistent executable cache is off")
    hf.config.cache_dir = str(tmp_path / "new")
    assert main(["cache"]) == 0
    assert "(not created yet; the first compile creates it)" in capsys.readouterr().out


def _older_entry(directory, key, payload):
    """An entry file as hloforge wrote them before entries said what they hold."""
    name = key.encode() + b"\n"
    path = os.path.join(str(directory), key + ".hfx")
    with open(path, "wb") as f:
        f.write(cache_entry.MAGIC_V2 + name + hashlib.sha256(name + payload).digest() + payload)
    return path


def test_cli_cache_list_says_each_programs_name_device_kind_size_and_age(fresh, tmp_path, capsys):
    hf.config.cache_dir = str(tmp_path)
    _module(0).compile()

    def scaled(x):
        return x * 3.0
    hf.jit(scaled)(np.ones(3, np.float32))  # (an executable, and the pipeline entry that names it)
    older = _older_entry(tmp_path, "ab" * 32, b"payload")
    _age(older, 60)
    assert main(["cache", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = lines[[i for i, line in enumerate(lines) if line.split()[:1] == ["PROGRAM"]][0]:]
    assert rows[0].split() == ["PROGRAM", "DEVICE", "KIND", "SIZE", "AGE", "LAST", "USE", "FILE"]
    assert len(rows) == 5 and rows[-1].split()[:5] == ["?", "?", "?", str(os.path.getsize(older)), "bytes"]  # (oldest: last)
    assert rows[-1].split()[5] == "?" and rows[-1].endswith("ab" * 32 + ".hfx")
    where = f"({os.path.basename(__file__)}:"
    made = [row.split() for row in rows[1:-1]]
    assert sorted((r[0], r[1], r[2], r[3]) for r in made) == sorted([
        ("main", where + str(scaled.__code__.co_firstlineno) + ")", "cpu:0", "executable"),
        ("main", where + str(scaled.__code__.co_firstlineno) + ")", "cpu:0", "pipeline"),
        ("main", where + str(_module.__code__.co_firstlineno + 1) + ")", "cpu:0", "executable")])
    assert all(r[7] == "s" and 0 <= int(r[6]) < 600 for r in made), rows  # (age: seconds since written)


def test_entries_of_the_format_before_still_load_and_say_nothing(tmp_path):
    path = _older_entry(tmp_path, "cd" * 32, b"payload")
    with open(path, "rb") as f:
        assert cache.decode_entry(f.read(), "cd" * 32) == b"payload"
    assert cache.entry_about(path) == {}
    data = cache.encode_entry("ef" * 32, b"payload", {"name": "f", "device": "cpu:0", "kind": "executable"})
    assert cache.decode_entry(data, "ef" * 32) == b"payload" and cache.decode_entry(data[:-1] + b"P", "ef" * 32) is None
    line = data.split(b"\n")[2]  # (magic, key, then the line about the program, inside the checksum)
    assert cache.decode_entry(data.replace(line, line.replace(b'"f"', b'"g"')), "ef" * 32) is None
    assert json.loads(line)["name"] == "f" and abs(json.loads(line)["written"] - time.time()) < 600


def _sha256_entry(directory, key, payload, line=b'{"name": "g"}\n'):
    """An entry file as hloforge wrote them before the CRC (``MAGIC_V3``: a sha256 of key, line and payload)."""
    name = key.encode() + b"\n"
    path = os.path.join(str(directory), key + ".hfx")
    with open(path, "wb") as f:
        f.write(cache_entry.MAGIC_V3 + name + line + hashlib.sha256(name + line + payload).digest() + payload)
    return path


def test_entries_of_every_format_load_from_the_directory_and_damage_is_found(tmp_path):
    os.chmod(tmp_path, 0o700)
    _older_entry(tmp_path, "cd" * 32, b"v2 payload")
    _sha256_entry(tmp_path, "ef" * 32, b"v3 payload")
    assert cache.disk_load(str(tmp_path), "cd" * 32) == b"v2 payload"
    assert cache.disk_load(str(tmp_path), "ef" * 32) == b"v3 payload"
    assert cache.entry_about(os.path.join(str(tmp_path), "ef" * 32 + ".hfx")) == {"name": "g"}
    key = "ab" * 32
    path = os.path.join(str(tmp_path), key + ".hfx")
    good = cache.encode_entry(key, bytes(range(256)) * 64, {"name": "f"})
    assert good.startswith(cache_entry.MAGIC)
    half = len(good) // 2
    damaged = [good[:-1], good + b"\0", good[:-5000], good[:half] + b"\0" * (len(good) - half),
               good[:-3] + bytes([good[-3] ^ 0x10]) + good[-2:], good.replace(b'"f"', b'"h"')]
    for data in [good] + damaged:
        with open(path, "wb") as f:
            f.write(data)
        errors = cache.stats()["disk_errors"]
        found = cache.disk_load(str(tmp_path), key)
        assert (found == bytes(range(256)) * 64) if data is good else (found is None and not os.path.exists(path))
        assert cache.stats()["disk_errors"] == errors + (data is not good)
        assert cache.decode_entry(data, key) == found


def test_ages_read_as_people_say_them():
    assert [cache_command.human_age(s) for s in (None, 45, 700, 5400, 90000, 30 * 86400)] == [
        "?", "45 s", "11 min", "1.5 h", "1.0 d", "30 d"]


def test_the_key_drops_location_references_and_definitions_only():
    from hloforge.runtime.compiler import without_locations
    code = ('#loc = loc(unknown)\nmodule {\n  %0 = stablehlo.add %a, %b : tensor<f32> loc(#loc3)\n'
            '  %1 = stablehlo.constant dense<"0x6C6F6328"> : tensor<i32> loc(unknown)\n}\n'
            '#loc1 = loc("f.py":3:1)\n#loc3 = loc(callsite(#loc1 at #loc2))\n#local = 1')
    assert without_locations(code) == ('\nmodule {\n  %0 = stablehlo.add %a, %b : tensor<f32>\n'
                                       '  %1 = stablehlo.constant dense<"0x6C6F6328"> : tensor<i32>\n}\n\n\n#local = 1')
