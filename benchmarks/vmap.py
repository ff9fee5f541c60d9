"""hf.vmap's performance, in one process, interleaved, median of repeats.

- ``dpsgd``: the DP-SGD step of an MLP (``vmap(grad(loss), in_axes=(None, 0, 0))``, each example's
  gradient clipped to an L2 norm bound, averaged, an SGD update; the program of
  examples/per_example_gradients.py without the noise) in one hf.jit against the same step in
  jax.jit with jax.vmap: steady state with jax arrays and with numpy arrays (target <= 1.05), the
  cold first call (trace + passes + compile + run, caches cleared; run.py's target <= 1.0) and the
  trace (``hf.trace`` against ``jax.jit(step).lower``, fresh functions; target <= 0.5).
- ``fno2d_b8`` (and ``fno2d`` without --quick): ``hf.vmap`` of a one-example FNO-2D forward
  (benchmarks/models.py's ``fno`` on ``x[None]``) over the batch against the batched forward
  itself, both hloforge, steady state (target: no slower, <= 1.02 as run.py's steady rows allow
  for noise); jax.vmap against jax's batched forward for comparison (no target); and the trace of
  the vmapped forward, ``hf.trace(hf.vmap(f))`` against ``jax.jit(jax.vmap(f)).lower`` (<= 0.5).

Run: python benchmarks/vmap.py [--quick] [--only dpsgd,fno2d_b8,fno2d]
"""
from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import time
import types

import jax
import jax.numpy as jnp
import numpy as np
from jax import tree_util

import hloforge as hf
from hloforge import numpy as hnp
from hloforge.runtime import cache as hf_cache

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
import models  # noqa: E402
from timing import steady  # noqa: E402
import per_example_gradients as dp  # noqa: E402

HLOFORGE = types.SimpleNamespace(np=hnp, grad=hf.grad, vmap=hf.vmap)
JAX = types.SimpleNamespace(np=jnp, grad=jax.grad, vmap=jax.vmap)
CLIP, LR = 1.0, 0.1
# metric -> the largest acceptable ratio (None: no target)
TARGETS = {"steady_jax_arrays": 1.05, "steady_numpy_arrays": 1.05, "first_call": 1.0, "trace": 0.5,
           "vmap_vs_batched_jax_arrays": 1.02, "vmap_vs_batched_numpy_arrays": 1.02,
           "jax_vmap_vs_batched_jax_arrays": None}


def dpsgd_step(api):
    xp = api.np

    def step(params, xs, ys):
        grads = api.vmap(api.grad(lambda p, x, y: dp.mlp_loss(xp, p, x, y)), in_axes=(None, 0, 0))(params, xs, ys)
        mean = dp.clip_and_average(xp, grads, CLIP)
        return tree_util.tree_map(lambda p, g: p - LR * g, params, mean)
    return step


def fno_example(xp, x, params, modes, padding):
    """The FNO-2D forward of one example: x is (channels, *grid)."""
    return models.fno(xp, x[None], params, modes, padding)[0]


def _traces(make_h, make_j, args, repeats):
    """hf.trace against jax.jit(...).lower, each on a fresh function (jax caches traces per function)."""
    for _ in range(2):  # warm-up of both frameworks' Python paths
        hf.trace(make_h(), *args), jax.jit(make_j()).lower(*args)
    trace_h, trace_j = [], []
    for _ in range(repeats):
        fresh_h, fresh_j = make_h(), make_j()
        t = time.perf_counter(); hf.trace(fresh_h, *args); trace_h.append(time.perf_counter() - t)
        t = time.perf_counter(); jax.jit(fresh_j).lower(*args); trace_j.append(time.perf_counter() - t)
    return statistics.median(trace_h), statistics.median(trace_j)


def _first_calls(make_h, make_j, dev_args, repeats):
    """Cold first calls (caches cleared), alternating which framework goes first."""
    first_h, first_j = [], []

    def first_hloforge():
        hf_cache.clear()
        t = time.perf_counter(); jax.block_until_ready(hf.jit(make_h())(*dev_args)); first_h.append(time.perf_counter() - t)

    def first_jax():
        jax.clear_caches()
        t = time.perf_counter(); jax.block_until_ready(jax.jit(make_j())(*dev_args)); first_j.append(time.perf_counter() - t)

    for i in range(max(5, repeats)):
        for first in ((first_hloforge, first_jax) if i % 2 == 0 else (first_jax, first_hloforge)):
            first()
    return statistics.median(first_h), statistics.median(first_j)


def _assert_trees_close(got, want, rtol, atol):
    for g, w in zip(tree_util.tree_leaves(got), tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


def measure_dpsgd(quick, repeats):
    features, hidden, classes, batch = (64, 128, 10, 32) if quick else (128, 256, 10, 128)
    rng = np.random.default_rng(0)
    sizes = [features, hidden, hidden, classes]
    params = [((rng.standard_normal((i, o)) / np.sqrt(i)).astype(np.float32), np.zeros(o, np.float32))
              for i, o in zip(sizes[:-1], sizes[1:])]
    xs = rng.standard_normal((batch, features)).astype(np.float32)
    ys = np.eye(classes, dtype=np.float32)[rng.integers(0, classes, batch)]
    args = (params, xs, ys)
    dev_args = jax.device_put(args)
    f_h, f_j = hf.jit(dpsgd_step(HLOFORGE)), jax.jit(dpsgd_step(JAX))
    _assert_trees_close(f_h(*dev_args), f_j(*dev_args), rtol=1e-4, atol=1e-6)
    rows = []
    for kind, a in (("jax_arrays", dev_args), ("numpy_arrays", args)):
        rows.append((f"steady_{kind}", *steady((f_h, f_j), a, repeats * 3), "hloforge", "jax"))
    rows.append(("first_call", *_first_calls(lambda: dpsgd_step(HLOFORGE), lambda: dpsgd_step(JAX), dev_args, repeats),
                 "hloforge", "jax"))
    rows.append(("trace", *_traces(lambda: dpsgd_step(HLOFORGE), lambda: dpsgd_step(JAX), args, repeats),
                 "hloforge", "jax"))
    title = f"DP-SGD step: MLP {'-'.join(map(str, sizes))}, batch {batch}, clip {CLIP}"
    return title, rows


def fno_case(name):
    rng = np.random.default_rng(0)
    if name == "fno2d_b8":  # run.py's fno2d_b8: batch 8, 3 -> 32 channels on 64x64, modes 12, no padding
        x, modes, padding = rng.standard_normal((8, 3, 64, 64)).astype(np.float32), (12, 12), 0
    else:  # run.py's fno2d: batch 20 on 85x85, 9 cells of padding
        x, modes, padding = rng.standard_normal((20, 3, 85, 85)).astype(np.float32), (12, 12), 9
    return x, models.fno_params(2, modes, 32, 4, 3, rng), modes, padding


def measure_fno(name, repeats):
    x, params, modes, padding = fno_case(name)
    args, dev_args = (x, params), jax.device_put((x, params))

    def vmapped(api):
        return api.vmap(functools.partial(fno_example, api.np, modes=modes, padding=padding), in_axes=(0, None))

    batched_h = hf.jit(functools.partial(models.fno, hnp, modes=modes, padding=padding))
    vmapped_h = hf.jit(vmapped(HLOFORGE))
    batched_j = jax.jit(functools.partial(models.fno, jnp, modes=modes, padding=padding))
    vmapped_j = jax.jit(vmapped(JAX))
    want = np.asarray(batched_j(*dev_args))
    for f in (batched_h, vmapped_h, vmapped_j):
        np.testing.assert_allclose(np.asarray(f(*dev_args)), want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    rows = []
    for kind, a in (("jax_arrays", dev_args), ("numpy_arrays", args)):
        rows.append((f"vmap_vs_batched_{kind}", *steady((vmapped_h, batched_h), a, repeats * 3),
                     "hf.vmap", "hloforge batched"))
    rows.append(("jax_vmap_vs_batched_jax_arrays", *steady((vmapped_j, batched_j), dev_args, repeats * 3),
                 "jax.vmap", "jax batched"))
    rows.append(("trace", *_traces(lambda: vmapped(HLOFORGE), lambda: vmapped(JAX), args, repeats),
                 "hf.vmap", "jax.vmap"))
    title = f"FNO-2D forward ({name}): batch {x.shape[0]}, {x.shape[2]}x{x.shape[3]}, padding {padding}"
    return title, rows


def report(title, rows) -> bool:
    def fmt(s):
        return f"{s * 1e6:8.1f}us" if s < 1e-3 else f"{s * 1e3:8.2f}ms"

    print(title)
    ok = True
    for metric, t, base, what, base_what in rows:
        ratio, target = t / base, TARGETS[metric]
        met = None if target is None else ratio <= target
        ok &= met is not False
        print(f"  {metric:32s} {fmt(t):>10} {fmt(base):>10}  ratio {ratio:5.2f}  target {target or '-':>4}  "
              f"{'-' if met is None else 'ok' if met else 'MISS'}  ({what} / {base_what})")
    return ok


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller MLP, fewer repeats, fno2d_b8 only")
    parser.add_argument("--only", default=None, help="comma-separated cases: dpsgd, fno2d_b8, fno2d")
    args = parser.parse_args(argv)
    hf.config.cache_dir = None  # (first calls measure XLA's compiles, not the persistent cache)
    repeats = 3 if args.quick else 7
    names = ["dpsgd", "fno2d_b8"] + ([] if args.quick else ["fno2d"])
    if args.only is not None:
        names = [n for n in names if n in args.only.split(",")]
    ok = True
    for name in names:
        print(f"measuring {name} ...", flush=True)
        ok &= report(*(measure_dpsgd(args.quick, repeats) if name == "dpsgd" else measure_fno(name, repeats)))
    print("targets: " + ("all met" if ok else "some MISSED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
