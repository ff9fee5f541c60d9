"""An FNO-2D training step (value_and_grad of an MSE loss plus an SGD update), hloforge against
jax.jit(jax.value_and_grad(...)) in one process, interleaved.

Metrics (median of repeats): steady-state step time, and trace + differentiate + passes
(hloforge: ``hf.jit(step).lower`` + ``optimize``) against jax's trace + lower of the same step.
Targets: steady <= 1.05x, trace+differentiate+passes <= 0.5x.

Run: python benchmarks/ad.py [--quick]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import tree_util

import hloforge as hf
from hloforge import numpy as hnp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

TARGETS = {"steady": 1.05, "trace_ad_passes": 0.5}
LR = 1e-3


def make_step(xp, value_and_grad, modes, padding):
    def loss(params, x, y):
        return xp.mean((models.fno(xp, x, params, modes, padding) - y) ** 2)

    def step(params, x, y):
        value, grads = value_and_grad(loss)(params, x, y)
        return value, tree_util.tree_map(lambda p, g: p - LR * g, params, grads)
    return step


def _block(out):
    for leaf in tree_util.tree_leaves(out):
        leaf.block_until_ready()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else 7
    rng = np.random.default_rng(0)
    b = 4 if args.quick else 20
    modes, padding = (12, 12), 9
    x = rng.standard_normal((b, 3, 85, 85)).astype(np.float32)
    y = rng.standard_normal((b, 1, 85, 85)).astype(np.float32)
    params = models.fno_params(2, modes, 32, 4, 3, rng)
    step_h = make_step(hnp, hf.value_and_grad, modes, padding)
    step_j = make_step(jnp, jax.value_and_grad, modes, padding)

    trace_h, trace_j = [], []
    for _ in range(repeats):  # fresh functions: jax caches traces per function object
        fresh_h = make_step(hnp, hf.value_and_grad, modes, padding)
        fresh_j = make_step(jnp, jax.value_and_grad, modes, padding)
        t = time.perf_counter()
        m = hf.jit(fresh_h).lower(params, x, y)
        m.optimize()
        trace_h.append(time.perf_counter() - t)
        t = time.perf_counter()
        jax.jit(fresh_j).lower(params, x, y)
        trace_j.append(time.perf_counter() - t)

    dev = jax.device_put((params, x, y))
    f_h, f_j = hf.jit(step_h), jax.jit(step_j)
    out_h, out_j = f_h(*dev), f_j(*dev)
    _block((out_h, out_j))
    np.testing.assert_allclose(np.asarray(out_h[0]), np.asarray(out_j[0]), rtol=1e-4)
    f_h.finish_compiling()  # (hf.config.first_call: the truncated program from here on)
    steady_h, steady_j = [], []
    for _ in range(repeats):
        for f, times in ((f_h, steady_h), (f_j, steady_j)):
            t = time.perf_counter()
            for _ in range(3):
                _block(f(*dev))
            times.append((time.perf_counter() - t) / 3)
    rows = {"steady": (statistics.median(steady_h), statistics.median(steady_j)),
            "trace_ad_passes": (statistics.median(trace_h), statistics.median(trace_j))}
    ok = True
    print(f"FNO-2D training step, batch {b}, 85x85, width 32, 4 layers, modes {modes}")
    for name, (h, j) in rows.items():
        ratio = h / j
        met = ratio <= TARGETS[name]
        ok &= met
        print(f"{name:16s} hloforge {h * 1e3:9.2f} ms  jax {j * 1e3:9.2f} ms  ratio {ratio:5.2f}  "
              f"target <= {TARGETS[name]}  {'ok' if met else 'MISS'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
