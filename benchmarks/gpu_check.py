"""Device check: the fft/pad/passes tests and the FNO examples on a GPU, as one short table.

    python benchmarks/gpu_check.py            # needs a GPU: pip install 'hloforge[cuda12]'
    python benchmarks/gpu_check.py --device cpu   # the same run on CPU (to try the script)

The tests and examples/fno_1d.py, examples/fno_2d.py run in subprocesses with
HLOFORGE_DEVICE=gpu, so every ``hf.jit``/``Module.compile`` without an explicit device uses the
GPU. Then ``hloforge demo`` (FNO-1D spectral block) and the FNO-2D of tests/fno2d.py run on the
GPU and are compared with numpy and with the CPU.
Exit code: 0 all passed, 1 something failed, 2 no GPU. Takes well under 5 minutes.
"""
from __future__ import annotations

import argparse
import glob
import os
import re
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = ["tests/numpy/test_numpy_fft.py", "tests/numpy/test_numpy_pad.py", "tests/ops/test_fft.py", "tests/ops/test_pad.py",
         "tests/ops/test_sort.py", "tests/passes/"]


def run_tests(device: str, timeout: int) -> tuple:
    files = [f for pattern in TESTS for f in sorted(glob.glob(os.path.join(ROOT, pattern)))]
    env = dict(os.environ, HLOFORGE_DEVICE=device)
    start = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, f"timed out after {timeout} s", time.perf_counter() - start
    lines = out.stdout.strip().splitlines()
    summary = lines[-1] if lines else out.stderr.strip()[-200:]
    if out.returncode != 0:
        failed = [line for line in lines if line.startswith(("FAILED", "ERROR"))][:5]
        summary += "".join(f"\n    {line[:150]}" for line in failed)
    return out.returncode == 0, re.sub(r"=+", "", summary).strip(), time.perf_counter() - start


def run_example(path: str, device: str, timeout: int = 120) -> tuple:
    """An examples/ script in a subprocess with HLOFORGE_DEVICE=device; passes on exit code 0."""
    env = dict(os.environ, HLOFORGE_DEVICE=device)
    start = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, path], cwd=os.path.dirname(path), env=env,
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, f"timed out after {timeout} s", time.perf_counter() - start
    text = out.stdout.strip() if out.returncode == 0 else (out.stderr.strip() or out.stdout.strip())
    lines = text.splitlines()
    return out.returncode == 0, lines[-1][:200] if lines else "", time.perf_counter() - start


def run_demo(device: str) -> tuple:
    from hloforge.runtime.cli import demo
    lines = []
    start = time.perf_counter()
    code = demo.run(device=device, quiet=True, print_fn=lines.append)
    return code == 0, lines[0] if lines else "", time.perf_counter() - start


def run_fno2d(device: str) -> tuple:
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
    y = np.asarray(y)
    err_np = float(np.max(np.abs(y - fno2d.forward_numpy(params, x))))
    err_cpu = float(np.max(np.abs(y - np.asarray(hf.jit(fno2d.forward, device="cpu")(params, x)))))
    ok = err_np < 1e-3 and err_cpu < 1e-3
    text = (f"{y.dtype}{list(y.shape)} on {next(iter(f(params, x).devices()))}; max err vs numpy {err_np:.1e}, "
            f"vs cpu {err_cpu:.1e}; first call {first:.2f} s, then {per_call * 1e3:.2f} ms/call")
    return ok, text, time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="gpu", choices=("gpu", "cpu"))
    parser.add_argument("--timeout", type=int, default=200, help="seconds for the test subset")
    args = parser.parse_args(argv)
    import hloforge as hf
    try:
        devices = hf.devices(args.device)
    except hf.DeviceNotFoundError as e:
        print(f"gpu_check: no {args.device.upper()} on this machine, nothing to check.\n  {e}")
        return 2
    print(f"gpu_check on {devices[0].device_kind} ({len(devices)} device(s))", flush=True)
    rows = []
    checks = [("pytest fft/pad/passes", lambda: run_tests(args.device, args.timeout))]
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "fno_*d.py"))):
        checks.append((f"examples/{os.path.basename(path)}", lambda path=path: run_example(path, args.device)))
    checks += [("hloforge demo (FNO-1D block)", lambda: run_demo(args.device)),
               ("FNO-2D data-parallel model", lambda: run_fno2d(args.device))]
    for name, check in checks:
        try:
            rows.append((name, *check()))
        except Exception as e:  # noqa: BLE001 (a row of the table)
            rows.append((name, False, f"{type(e).__name__}: {str(e).splitlines()[0][:200]}", 0.0))
        print(f"  {name}: {'PASS' if rows[-1][1] else 'FAIL'}", flush=True)
    width = max(len(r[0]) for r in rows)
    print(f"\n{'check':<{width}}  result  seconds  details")
    for name, ok, text, seconds in rows:
        print(f"{name:<{width}}  {'PASS' if ok else 'FAIL':<6}  {seconds:7.1f}  {text}")
    return 0 if all(r[1] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
