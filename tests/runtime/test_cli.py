"""The hloforge command line, run as a user runs it: through subprocess, checking exit codes.
Error paths after the first run in this process (``in_process``): the same ``main`` with its output
captured, without paying for another interpreter and jax import each."""
import functools
import importlib.metadata
import json
import types
import os
import re
import subprocess
import sys
import threading
import tomllib

import numpy as np
import pytest

import hloforge as hf
from hloforge import numpy as hnp
from hloforge.runtime import files as runtime_files
from hloforge.runtime.cli import commands
from hloforge.runtime.cli.main import main

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "check")
COMMANDS = ["demo", "opt", "run", "inspect", "graph", "convert", "check"]


def cli(*args, input=None):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1")
    return subprocess.run([sys.executable, "-m", "hloforge.runtime.cli.main", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=120, input=input)


@pytest.fixture
def in_process(capsys):
    """Runs ``hloforge ARGS`` through ``main`` here; returns what ``cli`` returns."""
    def run(*args):
        capsys.readouterr()
        code = main([str(a) for a in args])
        out = capsys.readouterr()
        return types.SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)
    return run


@pytest.fixture(scope="module")
def module_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "m.mlir"
    hf.trace(lambda x, w: hnp.tanh(x @ w), hf.ShapeDtype((4, 8), np.float32),
             hf.ShapeDtype((8, 3), np.float32)).save(path)
    return path


def _assert_one_line_error(result, what):
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines and "Traceback" not in result.stderr, result.stderr
    assert what in lines[-1]


def test_demo_succeeds():
    result = cli("demo")
    assert result.returncode == 0, result.stderr
    assert "stablehlo.fft" in result.stdout and "max abs error vs numpy" in result.stdout
    assert result.stdout.strip().endswith("OK")


def test_help_on_every_command():
    from hloforge.runtime.cli.main import build_parser
    parser = build_parser()
    for command in COMMANDS:
        with pytest.raises(SystemExit) as exit_info:
            parser.parse_args([command, "--help"])
        assert exit_info.value.code == 0


def test_run_with_args_and_random_inputs(module_file, tmp_path, in_process):
    x, w = np.ones((4, 8), np.float32), np.full((8, 3), 0.1, np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "w.npy", w)
    result = cli("run", module_file, "--arg", tmp_path / "x.npy", "--arg", tmp_path / "w.npy",
                 "--save-dir", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert "output 0: float32[4, 3]" in result.stdout
    np.testing.assert_allclose(np.load(tmp_path / "out" / "output_0.npy"), np.tanh(x @ w), rtol=1e-6)
    random_run = in_process("run", module_file, "--random-inputs", "--seed", 3)
    assert random_run.returncode == 0 and "output 0: float32[4, 3]" in random_run.stdout


def test_run_of_a_jax_module_with_lapack_calls(tmp_path):
    # (a fresh process: its lapack_* kernels segfaulted unless it had emitted such a call itself)
    import jax
    import jax.numpy as jnp
    a = np.array([[4, 1, 0], [1, 3, 1], [0, 1, 2]], np.float32)
    b = np.arange(6, dtype=np.float32).reshape(3, 2)
    path = tmp_path / "solve.mlir"
    path.write_text(jax.jit(jnp.linalg.solve).lower(a, b).as_text())
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    result = cli("run", path, "--arg", tmp_path / "a.npy", "--arg", tmp_path / "b.npy", "--save-dir", tmp_path / "out")
    assert result.returncode == 0, (result.returncode, result.stderr[-3000:])
    np.testing.assert_allclose(np.load(tmp_path / "out" / "output_0.npy"), np.linalg.solve(a, b), rtol=1e-5, atol=1e-6)


def test_run_bad_inputs(module_file, tmp_path, in_process):
    np.save(tmp_path / "bad.npy", np.ones((2, 2), np.float32))
    _assert_one_line_error(in_process("run", module_file, "--arg", tmp_path / "bad.npy", "--arg", tmp_path / "bad.npy"),
                           r"argument 0: expected float32[4, 8], got float32[2, 2]")
    _assert_one_line_error(in_process("run", module_file), "pass --arg FILE.npy for each, or --random-inputs")
    _assert_one_line_error(in_process("run", tmp_path / "missing.mlir"), "no such file")
    (tmp_path / "broken.mlir").write_text("func.func @main( {")
    _assert_one_line_error(in_process("inspect", tmp_path / "broken.mlir"), "invalid MLIR")


def test_run_args_of_strings_and_npz_archives(module_file, tmp_path, in_process):
    """Issue 49: a string array (and any .npz, read as the array of its names) said "got str32[1]"."""
    x, w = np.ones((4, 8), np.float32), np.full((8, 3), 0.1, np.float32)
    np.save(tmp_path / "s.npy", np.array(["x"]))
    np.savez(tmp_path / "s.npz", names=np.array(["x"]))
    np.save(tmp_path / "b.npy", np.array([b"x"]))
    np.savez(tmp_path / "two.npz", x=x, w=w)
    np.savez(tmp_path / "x.npz", x=x)
    np.save(tmp_path / "w.npy", w)
    run = lambda first: in_process("run", module_file, "--arg", tmp_path / first, "--arg", tmp_path / "w.npy")  # noqa: E731
    _assert_one_line_error(run("s.npy"), f"--arg {tmp_path / 's.npy'} (argument 0, float32[4, 8]): string arrays "
                                         f"are not supported (dtype <U1); arguments are numeric or bool arrays")
    _assert_one_line_error(run("s.npz"), f"--arg {tmp_path / 's.npz'} (array 'names', argument 0, float32[4, 8]): "
                                         f"string arrays are not supported (dtype <U1)")
    _assert_one_line_error(run("b.npy"), "(argument 0, float32[4, 8]): bytes arrays are not supported (dtype |S1)")
    _assert_one_line_error(run("two.npz"), "(argument 0, float32[4, 8]): an .npz archive of 2 arrays (x, w); pass "
                                           "one .npy file, or an .npz of one array, per argument")
    result = run("x.npz")
    assert result.returncode == 0 and "output 0: float32[4, 3]" in result.stdout, result.stderr


def test_inspect_graph_convert(module_file, tmp_path, in_process):
    result = cli("inspect", module_file, "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["op_counts"]["stablehlo.tanh"] == 1
    assert info["inputs"][0] == {"shape": [4, 8], "dtype": "float32"}
    assert cli("graph", module_file, "-o", tmp_path / "g.dot").returncode == 0
    assert (tmp_path / "g.dot").read_text().startswith("digraph")
    assert in_process("convert", module_file, "-o", tmp_path / "m.mlirbc", "--portable", "week4").returncode == 0
    assert hf.Module.load(tmp_path / "m.mlirbc").op_counts()["stablehlo.tanh"] == 1
    _assert_one_line_error(in_process("convert", module_file, "-o", tmp_path / "m.txt"), "unknown output extension")


def test_check_exit_codes(in_process):
    good = [os.path.join(DATA, f) for f in sorted(os.listdir(DATA)) if "wrong" not in f]
    result = cli("check", *good)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert all(line.startswith("PASS ") and "::" in line for line in lines[:-1])  # (one line per test function)
    assert {re.sub(r":\d+$", "", line[5:].split("::")[0]) for line in lines[:-1]} == set(good)  # (file:LINE of a piece)
    assert lines[-1] == f"{len(lines) - 1} passed, 0 failed"
    failing = in_process("check", os.path.join(DATA, "wrong_expected.mlir"), good[0])
    assert failing.returncode == 1
    assert failing.stdout.splitlines()[0].startswith("FAIL ")
    assert failing.stdout.splitlines()[-1] == "1 passed, 1 failed"


def test_opt_pipeline_stats_and_dump(tmp_path, in_process):
    path = tmp_path / "rt.mlir"
    hf.trace(lambda x: hnp.fft.irfftn(hnp.fft.rfftn(x), s=x.shape), hf.ShapeDtype((4, 6), np.float32)).save(path)
    result = cli("opt", path, "--stats", "--dump-dir", tmp_path / "dumps", "-o", tmp_path / "out.mlir")
    assert result.returncode == 0, result.stderr
    assert "irfft_of_rfft" in result.stdout and "PassReport" in result.stdout
    assert hf.Module.load(tmp_path / "out.mlir").op_counts().get("stablehlo.fft", 0) == 0
    assert os.listdir(tmp_path / "dumps")
    single = in_process("opt", path, "-p", "pattern:irfft_of_rfft")
    assert single.returncode == 0 and "stablehlo.fft" not in single.stdout
    _assert_one_line_error(in_process("opt", path, "-p", "no-such-pass"), "no-such-pass")


def test_check_with_optimize_keeps_results(in_process):
    result = in_process("check", "--optimize", os.path.join(DATA, "fft_roundtrip_almost_eq.mlir"),
                 os.path.join(DATA, "pad_eq_old_style.mlir"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("PASS") == 2


# ---------------------------------------------------------------- one error path (issue 18)

_TOKEN = """func.func @main(%t: !stablehlo.token, %x: tensor<2xf32>) -> (!stablehlo.token, tensor<2xf32>) {
  return %t, %x : !stablehlo.token, tensor<2xf32>
}"""
_F8 = """func.func @main(%x: tensor<2xf8E4M3FN>) -> tensor<2xf8E4M3FN> {
  return %x : tensor<2xf8E4M3FN>
}"""
_I4 = """func.func @main() -> tensor<2xi4> {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi4>
  return %0 : tensor<2xi4>
}"""
_DYNAMIC = """func.func @main(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = stablehlo.add %a, %a : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}"""
_QUANT = """func.func @main() {
  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = stablehlo.uniform_quantize %a : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5:3>>
  %1 = stablehlo.uniform_dequantize %0 : (tensor<2x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<2xf32>
  check.expect_eq_const %1, dense<[1.0, 2.0]> : tensor<2xf32>
  return
}"""


@pytest.fixture
def files(tmp_path, module_file):
    for name, text in (("token", _TOKEN), ("f8", _F8), ("i4", _I4), ("dyn", _DYNAMIC), ("quant", _QUANT)):
        (tmp_path / f"{name}.mlir").write_text(text)
    (tmp_path / "a_file").write_text("")
    (tmp_path / "garbage.bin").write_bytes(b"\xff\xfe\x00\x01binary")
    return tmp_path, str(module_file)


@pytest.mark.parametrize("argv,what", [
    (["opt", "{m}", "-o", "/nonexistent/x.mlir"], "cannot write output /nonexistent/x.mlir: directory /nonexistent does not exist"),
    (["opt", "{m}", "--dump-dir", "{t}/a_file"], "--dump-dir {t}/a_file exists and is not a directory"),
    (["run", "{m}", "--random-inputs", "--seed", "-5"], "argument --seed: expected an integer >= 0, got -5"),
    (["run", "{m}", "--random-inputs", "--save-dir", "{t}/a_file"], "--save-dir {t}/a_file exists and is not a directory"),
    (["run", "{t}/dyn.mlir", "--random-inputs"], "main: argument 0, dimension 0 is dynamic (?)"),
    (["run", "{t}/token.mlir"], "@main argument 0: unsupported type !stablehlo.token"),
    (["run", "{t}/f8.mlir", "--random-inputs"], "@main argument 0: unsupported element type f8E4M3FN"),
    (["run", "{t}/i4.mlir"], "@main result 0: unsupported element type i4"),
    (["run", "{t}/quant.mlir"], "stablehlo.uniform_quantize uses the quantized type "
                                "tensor<2x!quant.uniform<i8:f32, 0.5:3>>: quantized modules are not supported"),
    (["run", "{t}"], "is a directory, not a module file"),
    (["graph", "{m}", "-o", "/nonexistent/g.dot"], "cannot write output /nonexistent/g.dot"),
    (["convert", "{m}", "-o", "/nonexistent/c.mlirbc"], "cannot write output /nonexistent/c.mlirbc"),
    (["demo", "--device", "npu"], "argument --device: invalid choice: 'npu'"),
    (["inspect", "{t}/garbage.bin"], "is neither MLIR text nor MLIR bytecode"),
    (["inspect", "{t}/a_file"], "{t}/a_file is empty"),
    (["run", "-", "--arg", "-"], "standard input ('-') can be only one of the inputs"),
    (["check", "-", "{m}", "-"], "standard input ('-') can be only one of the inputs"),
])
def test_every_error_is_one_line_and_exit_2(files, capsys, argv, what):
    tmp, module = files
    argv = [a.format(m=module, t=tmp) for a in argv]
    try:
        code = main(argv)
    except SystemExit as e:  # (argparse's errors)
        code = e.code
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith(f"hloforge {argv[0]}: error: "), err
    assert what.format(t=tmp) in err, err


def test_inspect_json_takes_dynamic_and_token_modules(files, capsys):
    tmp, _ = files
    assert main(["inspect", "--json", str(tmp / "token.mlir")]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["inputs"] == [{"type": "!stablehlo.token"}, {"shape": [2], "dtype": "float32"}]
    assert main(["inspect", "--json", str(tmp / "dyn.mlir")]) == 0
    assert json.loads(capsys.readouterr().out)["outputs"] == [{"shape": [None, 4], "dtype": "float32"}]


def test_check_reports_bad_files_and_goes_on(files, capsys):
    tmp, _ = files
    good = os.path.join(DATA, "add_expect_close.mlir")
    assert main(["check", str(tmp / "garbage.bin"), str(tmp / "quant.mlir"), good]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"FAIL {tmp / 'garbage.bin'}: not a UTF-8 MLIR text file")
    assert lines[1] == f"PASS {tmp / 'quant.mlir'}::main"  # (check lowers per-tensor quantized programs; run does not)
    assert lines[2] == f"PASS {good}::main"
    assert lines[3] == "2 passed, 1 failed"


def test_out_of_memory_is_one_line(tmp_path):
    path = tmp_path / "huge.mlir"
    path.write_text("""func.func @main(%a: tensor<f32>) -> tensor<274877906944xf32> {
      %0 = stablehlo.broadcast_in_dim %a, dims = [] : (tensor<f32>) -> tensor<274877906944xf32>
      return %0 : tensor<274877906944xf32>
    }""")
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (16 << 30, resource.RLIM_INFINITY)); "
            "from hloforge.runtime.cli.main import main; sys.exit(main(sys.argv[1:]))")
    result = subprocess.run([sys.executable, "-c", code, "run", str(path), "--random-inputs"],
                            capture_output=True, text=True, timeout=120)
    _assert_one_line_error(result, "main: execution failed: RESOURCE_EXHAUSTED")


def _quiet_env():
    env = dict(os.environ)
    for name in ("TF_CPP_MIN_LOG_LEVEL", "HLOFORGE_LOG"):
        env.pop(name, None)
    return env


def test_quiet_by_default_and_verbose_on_request(module_file, in_process):
    run = [sys.executable, "-m", "hloforge.runtime.cli", "run", str(module_file), "--random-inputs"]
    quiet = subprocess.run(run, capture_output=True, text=True, env=_quiet_env(), timeout=120)
    assert quiet.returncode == 0
    assert not [line for line in quiet.stderr.splitlines() if line[:1] in "IW" and ".cc:" in line], quiet.stderr
    verbose = subprocess.run(run + ["--verbose"], capture_output=True, text=True, env=_quiet_env(), timeout=120)
    assert verbose.returncode == 0 and "pjrt_client.cc" in verbose.stderr, verbose.stderr
    logged = subprocess.run(run, capture_output=True, text=True, env=dict(_quiet_env(), HLOFORGE_LOG="info"),
                            timeout=120)
    assert "pjrt_client.cc" in logged.stderr, logged.stderr
    failing = in_process("run", "/nonexistent.mlir")
    assert failing.returncode == 2 and failing.stderr == "hloforge run: error: no such file: /nonexistent.mlir\n"


def test_importing_hloforge_prints_nothing():
    code = ("import numpy as np, hloforge as hf; "
            "print(np.asarray(hf.jit(lambda x: x + 1.0)(np.ones(2, np.float32))).tolist())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_quiet_env(), timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "[2.0, 2.0]"
    assert out.stderr == "", out.stderr


def test_check_runs_each_file_in_isolation(monkeypatch, capsys):
    from hloforge.runtime.cli import check_batch

    class DiesOnCrashFiles(check_batch._Worker):
        def run(self, path):
            if "crash" in os.path.basename(path):
                self.process.kill()  # (as a file that makes XLA abort would)
            return super().run(path)

    monkeypatch.setattr(check_batch, "_Worker", DiesOnCrashFiles)
    good = os.path.join(DATA, "add_expect_close.mlir")
    assert main(["check", good, "/tmp/crash.mlir", good]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"PASS {good}::main", "FAIL /tmp/crash.mlir: the process running this file was killed by SIGKILL",
                     f"PASS {good}::main", "2 passed, 1 failed"]


# ---------------------------------------------------------------- as MLIR's tools do (issue 50)

@pytest.fixture
def stdin(monkeypatch, tmp_path):
    """``stdin(data)``: standard input is a file holding ``data`` (in-process runs)."""
    opened = []

    def set_stdin(data):
        path = tmp_path / f"stdin_{len(opened)}"
        path.write_bytes(data)
        opened.append(open(path, "rb"))
        monkeypatch.setattr(sys, "stdin", opened[-1])
    yield set_stdin
    for f in opened:
        f.close()


def test_every_command_reads_its_module_from_stdin(module_file, tmp_path, in_process, stdin):
    text = module_file.read_bytes()
    runs = {("inspect", "-"): "@main(float32[4, 8], float32[8, 3])",
            ("opt", "-", "-p", "inline"): "stablehlo.tanh",
            ("run", "-", "--random-inputs"): "output 0: float32[4, 3]",
            ("graph", "-", "-o", tmp_path / "g.dot"): "",
            ("convert", "-", "-o", tmp_path / "m.mlirbc"): ""}
    for argv, shown in runs.items():
        stdin(text)
        result = in_process(*argv)
        assert result.returncode == 0 and shown in result.stdout, (argv, result.stderr)
    assert (tmp_path / "g.dot").read_text().startswith("digraph")
    assert hf.Module.load(tmp_path / "m.mlirbc").op_counts()["stablehlo.tanh"] == 1
    np.save(tmp_path / "x.npy", np.ones((4, 8), np.float32))
    with open(tmp_path / "x.npy", "rb") as f:
        stdin(f.read())
    result = in_process("run", module_file, "--arg", "-", "--arg", tmp_path / "x.npy")
    assert result.returncode == 2 and "argument 1: expected float32[8, 3], got float32[4, 8]" in result.stderr
    stdin(b"")
    _assert_one_line_error(in_process("inspect", "-"), "<stdin> is empty")


def test_check_reads_a_test_file_from_stdin(in_process, stdin):
    good = os.path.join(DATA, "add_expect_close.mlir")
    with open(good, "rb") as f:
        stdin(f.read())
    result = in_process("check", "-", good)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == ["PASS <stdin>::main", f"PASS {good}::main", "2 passed, 0 failed"]


_UNDECLARED = "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = stablehlo.add %x, %y : tensor<2xf32>\n" \
              "  return %0 : tensor<2xf32>\n}\n"


def test_diagnostics_and_locations_name_the_input(tmp_path, in_process, stdin):
    stdin(_UNDECLARED.encode())
    _assert_one_line_error(in_process("inspect", "-"), 'loc("<stdin>":2:26): use of undeclared SSA value name')
    path = tmp_path / "bad.mlir"
    path.write_text(_UNDECLARED)
    _assert_one_line_error(in_process("opt", path), f'loc("{path}":2:26): use of undeclared SSA value name')
    stdin(_UNDECLARED.replace("%y", "%x").encode())
    shown = in_process("opt", "-", "-p", "inline", "--debug-info")
    assert shown.returncode == 0 and 'loc("<stdin>":2:8)' in shown.stdout and '"-"' not in shown.stdout


def test_pipes_and_dev_stdin_are_inputs(module_file):
    text = module_file.read_text()
    piped = cli("inspect", "-", input=text)
    assert piped.returncode == 0 and "@main(float32[4, 8], float32[8, 3])" in piped.stdout, piped.stderr
    named = cli("opt", "/dev/stdin", input=_UNDECLARED)  # (a FIFO: it was refused as one)
    _assert_one_line_error(named, 'loc("/dev/stdin":2:26): use of undeclared SSA value name')


def test_a_fifo_is_read_once_written_and_one_nobody_writes_is_one_error(module_file, tmp_path, in_process,
                                                                        monkeypatch):
    fifo = tmp_path / "m.fifo"
    os.mkfifo(fifo)

    def write():
        with open(fifo, "wb") as f:  # (blocks until the command opens it to read)
            f.write(module_file.read_bytes())
    writer = threading.Thread(target=write)
    writer.start()
    result = in_process("inspect", fifo)
    writer.join()
    assert result.returncode == 0 and "@main(float32[4, 8], float32[8, 3])" in result.stdout, result.stderr
    monkeypatch.setattr(runtime_files, "FIFO_WAIT_SECONDS", 0.1)
    _assert_one_line_error(in_process("inspect", fifo), f"{fifo} is a FIFO no process wrote to within 0.1 s")
    _assert_one_line_error(in_process("check", fifo), f"{fifo} is a FIFO no process wrote to within 0.1 s")


def test_version(in_process, monkeypatch, capsys):
    with open(os.path.join(os.path.dirname(hf.__file__), "pyproject.toml"), "rb") as f:  # (the checkout's)
        pyproject = tomllib.load(f)["project"]["version"]
    for installed, shown in (("9.8.7", "9.8.7"), (None, pyproject)):
        def version(name, installed=installed):
            assert name == "hloforge"
            if installed is None:
                raise importlib.metadata.PackageNotFoundError(name)
            return installed
        monkeypatch.setattr(importlib.metadata, "version", version)
        with pytest.raises(SystemExit) as exit_info:
            main(["--version"])
        assert exit_info.value.code == 0 and capsys.readouterr().out == f"hloforge {shown}\n"


def test_a_closed_pipe_ends_the_command_quietly(tmp_path, in_process, monkeypatch):
    path = tmp_path / "big.mlir"  # (its text is larger than a pipe holds: writing it must meet the closed end)
    hf.trace(lambda x: functools.reduce(lambda y, _: hnp.sin(y), range(3000), x),
             hf.ShapeDtype((4,), np.float32)).save(path)
    command = [sys.executable, "-m", "hloforge.runtime.cli", "opt", str(path), "-p", "inline"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline().startswith("module")
    process.stdout.close()  # (as `| head -1` does)
    code, err = process.wait(timeout=120), process.stderr.read()
    process.stderr.close()
    assert code == 141 and err == "", err  # (no "error: Broken pipe", no "Exception ignored")

    def gone(args):
        raise BrokenPipeError(32, "Broken pipe")
    monkeypatch.setattr(commands, "inspect", gone)
    result = in_process("inspect", path)
    assert (result.returncode, result.stdout, result.stderr) == (141, "", "")
