"""Leak check: compile and run many distinct small modules with a bounded executable cache.

    python benchmarks/leak_check.py [--cycles 10000] [--cache-size 64]

Each cycle traces ``x * 2 + i`` (a new constant, so a new module and a cache miss), compiles it
through ``Module.compile`` and runs it once. Live PJRT executables and arrays must stay bounded
by the cache size, and resident memory must level off. Prints checkpoints; exit 1 on a leak.
(tests/runtime/test_cache.py runs 300 cycles; this is the full-size run: 10,000 cycles took 283 s on a
shared 2-core machine, live executables stayed at 66 = 64 cached + 2 of jax's own, RSS 233 -> 234 MiB.)
"""
from __future__ import annotations

import argparse
import gc
import sys
import time

import numpy as np

import hloforge as hf
from hloforge.runtime import pjrt


def rss_mib() -> float:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=10_000)
    parser.add_argument("--cache-size", type=int, default=64)
    args = parser.parse_args(argv)
    hf.config.cache_size = args.cache_size
    hf.config.cache_dir = None  # (10,000 throwaway executables do not belong in the persistent cache)
    x = np.ones(3, np.float32)
    checkpoints = sorted({args.cycles // 10, args.cycles // 2, args.cycles - 1})
    rows, start = [], time.perf_counter()
    for i in range(args.cycles):
        exe = hf.trace(lambda a: a * 2.0 + float(i), hf.ShapeDtype((3,), np.float32)).compile()
        y = exe(x)
        if float(y[0]) != 2.0 + i:
            print(f"cycle {i}: wrong result {float(y[0])}")
            return 1
        del exe, y
        if i in checkpoints:
            gc.collect()
            executables, arrays = pjrt.live_counts()
            rows.append((i + 1, executables, arrays, rss_mib(), time.perf_counter() - start))
            print(f"cycle {i + 1:6d}: live executables {executables:4d}  live arrays {arrays:4d}  "
                  f"rss {rows[-1][3]:8.1f} MiB  {rows[-1][4]:7.1f} s", flush=True)
    first, last = rows[0], rows[-1]
    leaks = []
    if last[1] > args.cache_size + 2:
        leaks.append(f"{last[1]} live executables with a cache of {args.cache_size}")
    if last[2] > first[2] + 2:
        leaks.append(f"live arrays grew from {first[2]} to {last[2]}")
    if last[3] > first[3] * 1.5 + 50:
        leaks.append(f"resident memory grew from {first[3]:.0f} to {last[3]:.0f} MiB")
    per_cycle = 1e3 * last[4] / args.cycles
    print(f"{args.cycles} cycles, {per_cycle:.1f} ms each: " + ("; ".join(leaks) if leaks else "no leak"))
    return 1 if leaks else 0


if __name__ == "__main__":
    sys.exit(main())
