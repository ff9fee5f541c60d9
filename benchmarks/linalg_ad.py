"""Gradients through numpy.linalg's LU functions (solve, inv, slogdet, det), hloforge against
jax.jit(jax.grad(...)) in one process, float32, batched, steady state (median), with jax arrays
and with numpy arrays as inputs.

Target: each ratio <= 1.2 (their rules solve with the matrix, as jax's do, instead of
differentiating its LU factorization).

Run: python benchmarks/linalg_ad.py [--quick]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import hloforge as hf
from hloforge import numpy as hnp

TARGET = 1.2


def losses(xp):
    return {"solve": lambda a, b: xp.sum(xp.linalg.solve(a, b) ** 2),
            "inv": lambda a, b: xp.sum(xp.linalg.inv(a) ** 2),
            "slogdet": lambda a, b: xp.sum(xp.linalg.slogdet(a)[1]),
            "det": lambda a, b: xp.sum(xp.linalg.det(a / a.shape[-1]))}


def _median_time(f, args, repeats):
    jax.block_until_ready(f(*args))
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        jax.block_until_ready(f(*args))
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    repeats = 15 if args.quick else 101
    sizes = [(64, 16)] if args.quick else [(64, 16), (256, 4)]
    rng = np.random.default_rng(0)
    ok = True
    print(f"{'case':22s} {'inputs':6s} {'hloforge':>10s} {'jax':>10s}  ratio  target")
    for n, batch in sizes:
        a = rng.standard_normal((batch, n, n)).astype(np.float32) + n * np.eye(n, dtype=np.float32)
        b = rng.standard_normal((batch, n, 3)).astype(np.float32)
        inputs = {"jax": jax.device_put((a, b)), "numpy": (a, b)}
        ours, theirs = losses(hnp), losses(jnp)
        for name in ours:
            gh = hf.jit(hf.grad(ours[name], argnums=(0, 1)))
            gj = jax.jit(jax.grad(theirs[name], argnums=(0, 1)))
            for kind, xs in inputs.items():
                got, want = gh(*xs), gj(*xs)
                for g, w in zip(got, want):
                    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-3, atol=1e-5)
                th, tj = _median_time(gh, xs, repeats), _median_time(gj, xs, repeats)
                met = th / tj <= TARGET
                ok &= met
                print(f"{name + f' n={n} b={batch}':22s} {kind:6s} {th * 1e3:8.3f}ms {tj * 1e3:8.3f}ms  "
                      f"{th / tj:5.2f}  <= {TARGET} {'ok' if met else 'MISS'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
