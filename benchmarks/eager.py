"""Eager calls: hloforge.numpy functions on concrete jax arrays outside a trace (frontend/eager.py)
against jax.numpy's, in one process, interleaved, median of repeats.

A loop of small eager ops (sin, add, multiply by a Python scalar, exp, sum, mean over an axis,
reshape, matmul, where) on a 32x32 float32 array, each op's result blocked on; target: the loop at
most 1.5x jax.numpy's, with a jax array and with a numpy array as the input (what users pass). Also
the loop's cold first pass on a shape neither framework has seen (every op compiles: hloforge's
hf.jit per signature against jax's per-primitive executables), reported against jax's (target 1.5).
Run: python benchmarks/eager.py [--quick]
"""
from __future__ import annotations

import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import hloforge as hf
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
        r = xp.reshape(y, (x.shape[0] // 2, -1))
        p = xp.matmul(y, x)
        w = xp.where(y > 1.0, y, x)
        jax.block_until_ready((s, m, r, p, w))
    return (time.perf_counter() - start) / n


def _first_passes(repeats):
    """The loop's first pass on a fresh shape per repeat (nothing cached), alternating who goes first."""
    firsts = {"hloforge": [], "jax": []}
    for i in range(repeats):
        n = 34 + 2 * i
        x = np.random.default_rng(i).standard_normal((n, n)).astype(np.float32)
        for name in (("hloforge", "jax") if i % 2 == 0 else ("jax", "hloforge")):
            firsts[name].append(loop(hnp if name == "hloforge" else jnp, x, 1))
    return statistics.median(firsts["hloforge"]), statistics.median(firsts["jax"])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    hf.config.cache_dir = None  # (first passes measure compiles, not the persistent cache)
    x_np = np.random.default_rng(0).standard_normal((32, 32)).astype(np.float32)
    n, repeats = (20, 5) if args.quick else (50, 15)
    ratios = {}
    for what, x in (("jax array", jnp.asarray(x_np)), ("numpy array", x_np)):
        loop(hnp, x, 3), loop(jnp, x, 3)  # (compiles)
        times = {"hloforge": [], "jax": []}
        for _ in range(repeats):
            times["hloforge"].append(loop(hnp, x, n))
            times["jax"].append(loop(jnp, x, n))
        h, j = statistics.median(times["hloforge"]), statistics.median(times["jax"])
        ratios[what] = h / j
        print(f"eager loop (9 ops), {what:11s}  hloforge.numpy {h * 1e6:8.1f} us   jax.numpy {j * 1e6:8.1f} us   "
              f"ratio {h / j:.2f}  (target <= {TARGET})  {'ok' if h / j <= TARGET else 'MISS'}")
    h, j = _first_passes(3 if args.quick else 7)
    ratios["first pass"] = h / j
    print(f"eager loop, first pass       hloforge.numpy {h * 1e3:8.1f} ms   jax.numpy {j * 1e3:8.1f} ms   "
          f"ratio {h / j:.2f}  (target <= {TARGET})  {'ok' if h / j <= TARGET else 'MISS'}")
    return ratios


if __name__ == "__main__":
    main()
