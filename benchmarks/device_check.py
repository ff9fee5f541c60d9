"""Device check: the device-independent part of the test suite, the demo and the examples on one device.

    python benchmarks/device_check.py --device tpu     # on a TPU VM (or gpu on a GPU machine)
    python benchmarks/device_check.py --device cpu     # the same run on the CPU (to try the script)

The tests (ops numerics, fft, pad, passes, AD, vmap, to_jax, random, eager calls, lax, the examples'
quick paths) run in ONE pytest process with HLOFORGE_DEVICE set (a TPU is held by one process at a
time: no ``-n``), so every ``hf.jit``/``Module.compile`` without an explicit device and jax's own
reference programs use that device; tests/helpers.py widens float tolerances where the platform
computes differently (docs/limits.md, "On a TPU"). Then ``hloforge demo``, the FNO examples and the
FNO-2D of tests/fno2d.py run on the device and are compared with numpy and the CPU, and darcy_data.py
solves a few samples (its corrections on the device, its refinement on the host's CPU).
Prints a table per test file and check, then ``N passed, M failed``. Exit code: 0 all passed, 1
something failed, 2 no such device.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the device-independent tests, most informative first (a run cut short by --timeout keeps the first)
TESTS = ["tests/ops/test_elementwise.py", "tests/ops/test_fft.py", "tests/ops/test_pad.py", "tests/ops/test_shape.py",
         "tests/ops/test_sort.py", "tests/ops/test_compare.py", "tests/ops/test_convert.py",
         "tests/ops/test_control_flow.py", "tests/ops/test_tuples.py", "tests/passes/test_fft_truncate.py",
         "tests/test_spectral.py", "tests/passes/test_fold.py", "tests/ad/test_ad_fft.py", "tests/ad/test_ad_api.py",
         "tests/ad/test_ad_elementwise.py", "tests/batching/test_vmap_fft.py", "tests/batching/test_vmap_elementwise.py",
         "tests/batching/test_vmap_pad.py", "tests/batching/test_vmap_api.py", "tests/test_to_jax.py",
         "tests/lax/test_lax.py", "tests/test_accuracy.py", "tests/numpy/test_numpy_pad.py",
         "tests/numpy/test_numpy_fft.py", "tests/random/test_random.py", "tests/test_jit_compiler_options.py"]
_RESULT = re.compile(r"^(tests/\S+?)::(.+) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)(?: |$)")
_REASON = "device_check reason: "


def pytest_runtest_logreport(report):
    """(this file is also the tests' pytest plugin, -p device_check) each failure's reason, printed as it
    happens: a run stopped by --timeout never reaches pytest's summary."""
    if report.failed:
        lines = str(report.longrepr).strip().splitlines()
        where = next((line for line in reversed(lines) if re.match(r"^(/|tests/)\S+:\d+: ", line)), "")
        print(f"\n{_REASON}{report.nodeid} [{report.when}]: {(where or (lines[-1] if lines else ''))[:400]}",
              flush=True)


def _pytest(files, env, timeout, deselect):
    command = [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-p", "device_check",
               "-o", "console_output_style=classic",
               "--tb=line", "--continue-on-collection-errors", *files]
    for test in deselect:
        command += ["--deselect", test]
    try:
        out = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=max(timeout, 1))
        return out.stdout + out.stderr, False
    except subprocess.TimeoutExpired as e:
        return (e.stdout.decode() if isinstance(e.stdout, bytes) else e.stdout or ""), True


def run_tests(device: str, timeout: int, log_path: str | None, files=None) -> dict:
    """pytest over ``files`` (default TESTS) in one process on ``device``; per file: Counter of outcomes,
    and the failing test ids. A test that kills the process (XLA aborting in C++) counts as failed, the
    rest of its file as not run ("CRASHED"), and pytest starts again without them."""
    files = files or TESTS
    # every case of every grid (the suite samples them by default: tests/conftest.py)
    env = dict(os.environ, HLOFORGE_DEVICE=device, HLOFORGE_TEST_CASES="all")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), os.path.dirname(__file__)]))
    if device == "cpu":  # (jax's reference programs on the CPU too)
        env["JAX_PLATFORMS"] = "cpu"
    start = time.perf_counter()
    per_file = collections.defaultdict(collections.Counter)
    failing = collections.defaultdict(list)
    done, logs, reasons, timed_out = [], [], [], False
    while True:
        text, timed_out = _pytest(files, env, timeout - (time.perf_counter() - start), done)
        logs.append(text)
        crashed = None
        for line in text.splitlines():
            match = _RESULT.match(line)
            if match:
                path, test, outcome = match.groups()
                per_file[path][outcome] += 1
                done.append(f"{path}::{test}")
                if outcome in ("FAILED", "ERROR"):
                    failing[path].append(test)
            elif "Fatal Python error" in line and "::" in line:
                crashed = line.split(" Fatal Python error")[0]
        reasons += [line[len(_REASON):] for line in text.splitlines() if line.startswith(_REASON)]
        if crashed is None or timed_out:
            break
        path = crashed.split("::")[0]
        per_file[path]["FAILED"] += 1
        per_file[path]["CRASHED"] += 1
        failing[path].append(crashed.split("::", 1)[1] + " (the process aborted)")
        files = [f for f in files if f != path]  # (its module fixtures would abort again)
    if log_path:
        with open(log_path, "w") as f:
            f.write("\n".join(logs))
    return {"per_file": per_file, "failing": failing, "seconds": time.perf_counter() - start,
            "timed_out": timed_out, "reasons": reasons}


def run_example(path: str, device: str, args=(), timeout: int = 300) -> tuple:
    """An examples/ script in a subprocess with HLOFORGE_DEVICE=device; passes on exit code 0."""
    env = dict(os.environ, HLOFORGE_DEVICE=device, MPLBACKEND="Agg")
    start = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, path, *args], cwd=os.path.dirname(path), env=env,
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, f"timed out after {timeout} s", time.perf_counter() - start
    text = out.stdout.strip() if out.returncode == 0 else (out.stderr.strip() or out.stdout.strip())
    lines = text.splitlines()
    return out.returncode == 0, lines[-1][:200] if lines else "", time.perf_counter() - start


def run_darcy_data(device: str) -> tuple:
    """examples/darcy_data.py on a few small samples: its float32 corrections run on the device, its float64
    refinement on the host's CPU (the files it writes go to a temporary folder)."""
    with tempfile.TemporaryDirectory(prefix="device_check_darcy_") as out:
        return run_example(os.path.join(ROOT, "examples", "darcy_data.py"), device,
                           ["--n", "8", "--grid", "29", "--resolutions", "29", "--out", out])


def run_demo(device: str) -> tuple:
    from hloforge.runtime.cli import demo
    lines = []
    start = time.perf_counter()
    code = demo.run(device=device, quiet=True, print_fn=lines.append)
    return code == 0, lines[0] if lines else "", time.perf_counter() - start


def run_fno2d(device: str, tolerance: float) -> tuple:
    import hloforge as hf
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import fno2d
    params = fno2d.init()
    x = np.random.default_rng(0).uniform(-1, 1, (16, 3, 64, 64)).astype(np.float32)
    start = time.perf_counter()
    f = hf.jit(fno2d.forward, device=device)
    y = f(params, x)
    y.block_until_ready()
    first = time.perf_counter() - start
    f.finish_compiling()  # (hf.config.first_call: the truncated program from here on)
    t = time.perf_counter()
    for _ in range(20):
        y = f(params, x)
    y.block_until_ready()
    per_call = (time.perf_counter() - t) / 20
    on = next(iter(y.devices()))
    y = np.asarray(y)
    want = fno2d.forward_numpy(params, x)
    err_np = float(np.max(np.abs(y - want)) / np.max(np.abs(want)))
    err_cpu = float(np.max(np.abs(y - np.asarray(hf.jit(fno2d.forward, device="cpu")(params, x)))) / np.max(np.abs(want)))
    ok = err_np < tolerance and err_cpu < tolerance
    text = (f"{y.dtype}{list(y.shape)} on {on}; max err / max |y| vs numpy {err_np:.1e}, vs cpu {err_cpu:.1e}; "
            f"first call {first:.2f} s, then {per_call * 1e3:.2f} ms/call")
    return ok, text, time.perf_counter() - start


def probe(device: str | None) -> tuple:
    """(kind, device name, count) of ``device`` (None: jax's default), asked of a child process: a TPU is
    held by the first process that opens it, and the tests' process must be that one."""
    code = ("import sys, hloforge as hf; from hloforge import target; d = hf.devices(sys.argv[1] or None); "
            "d = hf.devices(target.kind_of(d[0].platform)); print(target.kind_of(d[0].platform), len(d), d[0].device_kind)")
    out = subprocess.run([sys.executable, "-c", code, device or ""], cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        lines = out.stderr.strip().splitlines()
        raise LookupError(lines[-1] if lines else "no device")
    kind, count, name = out.stdout.strip().splitlines()[-1].split(" ", 2)
    return kind, name, int(count)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, choices=("cpu", "gpu", "tpu"),
                        help="cpu, gpu or tpu (default: jax's default device)")
    parser.add_argument("--timeout", type=int, default=480, help="seconds for the test subset")
    parser.add_argument("--log", default=None, help="write pytest's whole output here")
    parser.add_argument("--tests-only", action="store_true", help="skip the demo and the examples")
    parser.add_argument("--files", default=None, help="comma-separated test files instead of the default list")
    parser.add_argument("--part", default=None, metavar="K/N",
                        help="only the K-th of N slices of the test list (on a TPU v5e, 2026-12-06: 1/2 did not "
                             "finish in 520 s, 2/2 took 257 s; use N=3 for calls of 10 minutes)")
    args = parser.parse_args(argv)
    if args.part:
        try:
            k, n = map(int, args.part.split("/"))
        except ValueError:
            k = n = 0
        if not 1 <= k <= n:
            parser.error(f"--part must be K/N with 1 <= K <= N, got {args.part!r}")
        args.files = args.files or ",".join(TESTS[k - 1::n])
    try:
        device, name, count = probe(args.device)
    except LookupError as e:
        print(f"device_check: {e}")
        return 2
    print(f"device_check on {name} ({device}, {count} device(s)); {time.strftime('%Y-%m-%d')}", flush=True)
    files = args.files.split(",") if args.files else None
    tests = run_tests(device, args.timeout, args.log, files)
    rows = []
    for path in files or TESTS:
        counts = tests["per_file"].get(path, collections.Counter())
        rows.append((path, counts["PASSED"] + counts["XFAIL"], counts["FAILED"] + counts["ERROR"], counts["SKIPPED"]))
    if not args.tests_only:
        checks = []
        for example in ("fno_1d.py", "fno_2d.py", "quickstart.py", "optimize_jax_module.py"):
            path = os.path.join(ROOT, "examples", example)
            checks.append((f"examples/{example}", lambda path=path: run_example(path, device)))
        checks.append(("examples/darcy_data.py (8 samples, 29x29)", lambda: run_darcy_data(device)))
        # (last: from here on this process holds the device)
        checks += [("hloforge demo (FNO-1D block)", lambda: run_demo(device)),
                   ("FNO-2D (tests/fno2d.py)", lambda: run_fno2d(device, 2e-2 if device == "tpu" else 1e-4))]
        for label, check in checks:
            try:
                ok, text, seconds = check()
            except Exception as e:  # noqa: BLE001 (a row of the table)
                ok, text, seconds = False, f"{type(e).__name__}: {str(e).splitlines()[0][:200]}", 0.0
            rows.append((label, int(ok), int(not ok), 0))
            print(f"  {label}: {'PASS' if ok else 'FAIL'} ({seconds:.1f} s) {text}", flush=True)
    width = max(len(r[0]) for r in rows)
    print(f"\n{'tests / check':<{width}}  passed  failed  skipped")
    for label, passed, failed, skipped in rows:
        print(f"{label:<{width}}  {passed:6d}  {failed:6d}  {skipped:7d}")
    for path, tests_failing in tests["failing"].items():
        for test in tests_failing:
            print(f"FAILED {path}::{test}")
    for line in tests["reasons"][:300]:
        print(f"  reason: {line[:300]}")
    if tests["timed_out"]:
        print(f"the tests were stopped after {args.timeout} s: the files after the last one counted did not run")
    passed, failed = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"tests took {tests['seconds']:.0f} s")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and not tests["timed_out"] else 1


if __name__ == "__main__":
    sys.exit(main())
