"""Eager calls: hloforge.numpy functions on concrete jax arrays outside a trace (frontend/eager.py)
against jax.numpy's, in one process, interleaved, median of repeats.

A loop of small eager ops (sin, add, multiply by a Python scalar, exp, sum, mean over an axis,
reshape, matmul, where) on a 32x32 float32 jax array, each op's result blocked on; target: the
loop at most 1.5x jax.numpy's. Run: python benchmarks/eager.py [--quick]
"""
from __future__ import annotations

import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

from hloforge import numpy as hnp

TARGET = 1.5


def loop(xp, x, n):
    start = time.perf_counter()
    for _ in range(n):
        y = xp.sin(x)
        y = xp.add(y, x)
        y = xp.multiply(y, 0.5)
        y = xp.exp(y)
        s = xp.sum(y)
        m = xp.mean(y, axis=0)
        r = xp.reshape(y, (16, 64))
        p = xp.matmul(y, x)
        w = xp.where(y > 1.0, y, x)
        jax.block_until_ready((s, m, r, p, w))
    return (time.perf_counter() - start) / n


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    x = jnp.asarray(np.random.default_rng(0).standard_normal((32, 32)).astype(np.float32))
    n, repeats = (20, 5) if args.quick else (50, 15)
    loop(hnp, x, 3), loop(jnp, x, 3)  # (compiles)
    times = {"hloforge": [], "jax": []}
    for _ in range(repeats):
        times["hloforge"].append(loop(hnp, x, n))
        times["jax"].append(loop(jnp, x, n))
    h, j = statistics.median(times["hloforge"]), statistics.median(times["jax"])
    ok = h / j <= TARGET
    print(f"eager loop (9 ops)   hloforge.numpy {h * 1e6:8.1f} us   jax.numpy {j * 1e6:8.1f} us   "
          f"ratio {h / j:.2f}  (target <= {TARGET})  {'ok' if ok else 'MISS'}")
    return h / j


if __name__ == "__main__":
    main()
