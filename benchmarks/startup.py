"""Startup: `import hloforge`, the first call in a fresh process, and the first call in a second process
(the persistent executable cache warm), each against jax in fresh processes, interleaved, medians.

Rows (ratio hloforge/jax, lower is better):

- ``import/plain``: ``import hloforge`` against ``import jax, jax.numpy`` (target <= 1.05).
- ``import/numpy``: ``import hloforge, hloforge.numpy`` against the same (what a program imports; no target).
- ``import/KIND_increment``: jax's import plus hloforge's part of the import, timed after jax's in one
  process, against jax's import: the same ratio, much less noisy on a loaded machine.
- ``CASE/first_call``: ``hf.jit(f)(*args)`` in a fresh process with an empty cache directory (a fresh home)
  against ``jax.jit(f)(*args)`` in a fresh process with jax's default settings (target <= 1.0).
- ``CASE/cached_call``: the same hloforge call in a second process, default settings and a home whose
  ``~/.cache/hloforge`` the first process filled, against jax's fresh-process first call (target <= 0.3).
- ``CASE/cached_less_run``: that call less the same process's second call: trace, passes and loading the
  executable, without the program's own run (which no cache removes; no target).

Imports and inputs are made (and put on the device, which starts the backend) before a first call is
timed; each time is measured inside its process. Children run with bytecode caching on, in a private
``PYTHONPYCACHEPREFIX`` warmed once, so neither side compiles Python sources while it is timed (an
installed package has its .pyc files; a checkout under ``PYTHONDONTWRITEBYTECODE`` would not).

Run: python benchmarks/startup.py [--repeats N] [--only CASE,CASE] [--no-imports]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = ("fno2d_b8", "fno2d", "fno1d", "round_trip")
TARGETS = {"import/plain": 1.05, "first_call": 1.0, "cached_call": 0.3}

_IMPORT = {"plain": {"hloforge": "import hloforge", "jax": "import jax, jax.numpy"},
           "numpy": {"hloforge": "import hloforge, hloforge.numpy", "jax": "import jax, jax.numpy"}}
_TIMED_IMPORT = "import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
# hloforge's own part: the same import after jax's, in one process (far less noisy on a loaded machine
# than the difference of two medians of whole imports)
_INCREMENT = "import jax, jax.numpy; " + _TIMED_IMPORT


def case_inputs(name: str):
    """(program, args) of benchmarks/run.py's case ``name`` (its full-size shapes)."""
    import functools

    import numpy as np

    import models
    rng = np.random.default_rng(0)
    b = 20
    if name == "fno1d":
        x, p = rng.standard_normal((b, 2, 1024)).astype(np.float32), models.fno_params(1, (16,), 64, 4, 2, rng)
        return functools.partial(models.fno, modes=(16,), padding=16), (x, p)
    if name == "fno2d":
        x, p = rng.standard_normal((b, 3, 85, 85)).astype(np.float32), models.fno_params(2, (12, 12), 32, 4, 3, rng)
        return functools.partial(models.fno, modes=(12, 12), padding=9), (x, p)
    if name == "fno2d_b8":  # the 4-layer FNO-2D of issues 15 and 29: batch 8, width 32, 64x64
        x, p = rng.standard_normal((8, 3, 64, 64)).astype(np.float32), models.fno_params(2, (12, 12), 32, 4, 3, rng)
        return functools.partial(models.fno, modes=(12, 12), padding=0), (x, p)
    if name == "round_trip":
        x, w = rng.standard_normal((b, 64, 64)).astype(np.float32), rng.standard_normal((64, 64)).astype(np.float32)
        return models.round_trips, (x, w)
    raise ValueError(f"unknown case {name!r}; expected one of {CASES}")


def child(framework: str, case: str) -> None:
    """One timed first call in this (fresh) process, then a second call; prints both in seconds."""
    import functools
    import time

    import jax
    if framework == "jax":
        import jax.numpy as xp
        jit = jax.jit
    else:
        import hloforge as hf
        from hloforge import numpy as xp
        jit = hf.jit
    sys.path.insert(0, HERE)
    program, args = case_inputs(case)
    args = jax.block_until_ready(jax.device_put(args))
    fn = jit(functools.partial(program, xp))
    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    first = time.perf_counter() - start
    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    print(first, time.perf_counter() - start)


def _env(home: str, pycache: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HLOFORGE_CACHE", "XDG_CACHE_HOME", "JAX_COMPILATION_CACHE", "PYTHONDONTWRITEBYTECODE"))}
    return dict(env, HOME=home, PYTHONPYCACHEPREFIX=pycache)


def _seconds(argv, env) -> float:
    out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])} failed: {out.stderr[-2000:]}")
    return float(out.stdout.strip().splitlines()[-1])


def _call_seconds(argv, env) -> tuple:
    """(first call, second call) seconds of a child."""
    out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])} failed: {out.stderr[-2000:]}")
    first, second = out.stdout.strip().splitlines()[-1].split()
    return float(first), float(second)


def measure_imports(kind: str, repeats: int, env: dict) -> dict:
    """Medians of hloforge's import, jax's, and hloforge's import after jax's in one process."""
    codes = {"hloforge": _TIMED_IMPORT.format(statement=_IMPORT[kind]["hloforge"]),
             "jax": _TIMED_IMPORT.format(statement=_IMPORT[kind]["jax"]),
             "increment": _INCREMENT.format(statement=_IMPORT[kind]["hloforge"])}
    times = {k: [] for k in codes}
    for i in range(repeats):  # (alternating the order)
        for kind_ in (("hloforge", "jax", "increment") if i % 2 == 0 else ("increment", "jax", "hloforge")):
            times[kind_].append(_seconds([sys.executable, "-c", codes[kind_]], env))
    return {k: statistics.median(v) for k, v in times.items()}


def measure_first_calls(case: str, repeats: int, env: dict, root: str) -> dict:
    """Medians of hloforge's cold first call (a new empty home each time), its cached first call (a
    home the first process filled), the cached first call less that process's second call (what is
    left once the program's own run is taken out), and jax's first call."""
    me = [sys.executable, os.path.abspath(__file__), "--child"]
    warm_home = tempfile.mkdtemp(dir=root)
    _call_seconds(me + ["hloforge", case], dict(env, HOME=warm_home))  # (fills warm_home/.cache/hloforge)
    times = {"cold": [], "cached": [], "cached_less_run": [], "jax": []}
    for i in range(repeats):
        order = ("cold", "jax", "cached") if i % 2 == 0 else ("cached", "jax", "cold")
        for kind in order:
            if kind == "jax":
                times["jax"].append(_call_seconds(me + ["jax", case], env)[0])
                continue
            home = warm_home if kind == "cached" else tempfile.mkdtemp(dir=root)
            first, second = _call_seconds(me + ["hloforge", case], dict(env, HOME=home))
            times[kind].append(first)
            if kind == "cached":
                times["cached_less_run"].append(max(first - second, 0.0))
    return {k: statistics.median(v) for k, v in times.items()}


def _row(rows, name, hloforge_s, jax_s, target):
    ratio = hloforge_s / jax_s
    ok = "" if target is None else ("yes" if ratio <= target else "MISS")
    rows.append((name, hloforge_s, jax_s, ratio, target, ok))


def report(rows) -> str:
    lines = [f"{'row':26} {'hloforge':>10} {'jax':>10} {'ratio':>6} {'target':>6}  ok"]
    for name, h, j, ratio, target, ok in rows:
        lines.append(f"{name:26} {h * 1e3:8.1f}ms {j * 1e3:8.1f}ms {ratio:6.2f} {'' if target is None else target:>6}  {ok}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="fresh processes per measurement (default 7)")
    parser.add_argument("--import-repeats", type=int, default=None, help="for the import rows (default: 2x --repeats)")
    parser.add_argument("--only", default=",".join(CASES), help=f"comma-separated cases (default {','.join(CASES)})")
    parser.add_argument("--no-imports", action="store_true", help="skip the import rows")
    parser.add_argument("--json", action="store_true", help="also print the rows as JSON")
    parser.add_argument("--device", default=None, choices=("cpu", "gpu", "tpu"),
                        help="the children's device (HLOFORGE_DEVICE; jax's default device too)")
    parser.add_argument("--child", nargs=2, metavar=("FRAMEWORK", "CASE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    if args.repeats < 1:
        parser.error(f"--repeats must be >= 1, got {args.repeats}")
    cases = [c for c in args.only.split(",") if c]
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        parser.error(f"unknown cases {unknown}; expected some of {list(CASES)}")
    root = tempfile.mkdtemp(prefix="hloforge-startup-")
    try:
        env = _env(os.path.join(root, "home"), os.path.join(root, "pycache"))
        if args.device:  # (both frameworks' children on that device: hloforge's setting, jax's platform)
            env.update(HLOFORGE_DEVICE=args.device, JAX_PLATFORMS={"gpu": "cuda"}.get(args.device, args.device))
        subprocess.run([sys.executable, "-c", "import jax, jax.numpy, hloforge, hloforge.numpy, hloforge.nn"],
                       env=env, check=True, timeout=600)  # (warms the private bytecode cache)
        rows = []
        if not args.no_imports:
            for kind in ("plain", "numpy"):
                t = measure_imports(kind, args.import_repeats or 2 * args.repeats, env)
                _row(rows, f"import/{kind}", t["hloforge"], t["jax"], TARGETS.get(f"import/{kind}"))
                _row(rows, f"import/{kind}_increment", t["jax"] + t["increment"], t["jax"],
                     TARGETS.get(f"import/{kind}"))
        for case in cases:
            t = measure_first_calls(case, args.repeats, env, root)
            _row(rows, f"{case}/first_call", t["cold"], t["jax"], TARGETS["first_call"])
            _row(rows, f"{case}/cached_call", t["cached"], t["jax"], TARGETS["cached_call"])
            _row(rows, f"{case}/cached_less_run", t["cached_less_run"], t["jax"], None)
            print("\n".join(report(rows[-3:]).splitlines()[1:]), file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(report(rows))
    if args.json:
        print(json.dumps([dict(zip(("row", "hloforge_s", "jax_s", "ratio", "target", "ok"), r)) for r in rows]))
    missed = [r[0] for r in rows if r[5] == "MISS"]
    print(f"targets missed: {', '.join(missed)}" if missed else "all targets met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
