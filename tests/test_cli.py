"""The hloforge command line, run as a user runs it: through subprocess, checking exit codes."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import hloforge as hf
from hloforge import numpy as hnp

DATA = os.path.join(os.path.dirname(__file__), "data", "check")
COMMANDS = ["demo", "opt", "run", "inspect", "graph", "convert", "check"]


def cli(*args):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1")
    return subprocess.run([sys.executable, "-m", "hloforge.runtime.cli.main", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=120)


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


def test_run_with_args_and_random_inputs(module_file, tmp_path):
    x, w = np.ones((4, 8), np.float32), np.full((8, 3), 0.1, np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "w.npy", w)
    result = cli("run", module_file, "--arg", tmp_path / "x.npy", "--arg", tmp_path / "w.npy",
                 "--save-dir", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert "output 0: float32[4, 3]" in result.stdout
    np.testing.assert_allclose(np.load(tmp_path / "out" / "output_0.npy"), np.tanh(x @ w), rtol=1e-6)
    random_run = cli("run", module_file, "--random-inputs", "--seed", 3)
    assert random_run.returncode == 0 and "output 0: float32[4, 3]" in random_run.stdout


def test_run_bad_inputs(module_file, tmp_path):
    np.save(tmp_path / "bad.npy", np.ones((2, 2), np.float32))
    _assert_one_line_error(cli("run", module_file, "--arg", tmp_path / "bad.npy", "--arg", tmp_path / "bad.npy"),
                           r"argument 0: expected float32[4, 8], got float32[2, 2]")
    _assert_one_line_error(cli("run", module_file), "pass --arg FILE.npy for each, or --random-inputs")
    _assert_one_line_error(cli("run", tmp_path / "missing.mlir"), "no such file")
    (tmp_path / "broken.mlir").write_text("func.func @main( {")
    _assert_one_line_error(cli("inspect", tmp_path / "broken.mlir"), "invalid MLIR")


def test_inspect_graph_convert(module_file, tmp_path):
    result = cli("inspect", module_file, "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["op_counts"]["stablehlo.tanh"] == 1
    assert info["inputs"][0] == {"shape": [4, 8], "dtype": "float32"}
    assert cli("graph", module_file, "-o", tmp_path / "g.dot").returncode == 0
    assert (tmp_path / "g.dot").read_text().startswith("digraph")
    assert cli("convert", module_file, "-o", tmp_path / "m.mlirbc", "--portable", "week4").returncode == 0
    assert hf.Module.load(tmp_path / "m.mlirbc").op_counts()["stablehlo.tanh"] == 1
    _assert_one_line_error(cli("convert", module_file, "-o", tmp_path / "m.txt"), "unknown output extension")


def test_check_exit_codes():
    good = [os.path.join(DATA, f) for f in sorted(os.listdir(DATA)) if "wrong" not in f]
    result = cli("check", *good)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("PASS ") == len(good)
    failing = cli("check", os.path.join(DATA, "wrong_expected.mlir"), good[0])
    assert failing.returncode == 1
    assert failing.stdout.splitlines()[0].startswith("FAIL ")


def test_opt_pipeline_stats_and_dump(tmp_path):
    path = tmp_path / "rt.mlir"
    hf.trace(lambda x: hnp.fft.irfftn(hnp.fft.rfftn(x), s=x.shape), hf.ShapeDtype((4, 6), np.float32)).save(path)
    result = cli("opt", path, "--stats", "--dump-dir", tmp_path / "dumps", "-o", tmp_path / "out.mlir")
    assert result.returncode == 0, result.stderr
    assert "irfft_of_rfft" in result.stdout and "PassReport" in result.stdout
    assert hf.Module.load(tmp_path / "out.mlir").op_counts().get("stablehlo.fft", 0) == 0
    assert os.listdir(tmp_path / "dumps")
    single = cli("opt", path, "-p", "pattern:irfft_of_rfft")
    assert single.returncode == 0 and "stablehlo.fft" not in single.stdout
    _assert_one_line_error(cli("opt", path, "-p", "no-such-pass"), "no-such-pass")


def test_check_with_optimize_keeps_results():
    result = cli("check", "--optimize", os.path.join(DATA, "fft_roundtrip_almost_eq.mlir"),
                 os.path.join(DATA, "pad_eq_old_style.mlir"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("PASS") == 2
