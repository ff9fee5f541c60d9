"""XLA:CPU's LLVM optimization level: hloforge's level 2 (runtime/pjrt.py ``backend_options``)
against XLA's default level 3, on the programs of run.py (hloforge's optimized modules) and on a few
jax programs of other kinds (threefry random numbers, sort, scatter-add, a scalar fori_loop,
cumsum/cumprod, an MLP gradient, erf/gelu).

Per program: the median compile time at each level, the median steady-state run time of each
executable, and whether the two executables' outputs are the same bits (they must be: the level
is not allowed to change results). The persistent cache is off.

Run: python benchmarks/llvm_level.py [--quick] [--only NAME,NAME]
"""
from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import hloforge as hf
from hloforge import numpy as hnp
from hloforge.runtime import pjrt
from hloforge.target import PARTIAL_DFT_ATTR

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402

LEVEL_OPTION = "xla_backend_optimization_level"


def jax_programs():
    """(name, a jax function, its arguments): kinds of program run.py does not have."""
    rng = np.random.default_rng(0)
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    key = jax.random.key_data(jax.random.key(0))
    return [
        ("random", lambda k: jax.random.normal(jax.random.wrap_key_data(k), (512, 1024)), (key,)),
        ("sort", lambda x: jnp.sort(x, axis=-1) + jnp.argsort(x, axis=0), (f32(256, 1024),)),
        ("scatter_add", lambda x, i: jnp.zeros(4096).at[i].add(x),
         (f32(100_000), rng.integers(0, 4096, 100_000).astype(np.int32))),
        ("fori_loop", lambda x: jax.lax.fori_loop(0, 1000, lambda i, c: jnp.sin(c) * 0.9 + jnp.cos(c[::-1]), x),
         (f32(1024),)),
        ("cumsum", lambda x: jnp.cumsum(x, axis=1) * jnp.cumprod(x * 0.01 + 1, axis=0), (f32(512, 512),)),
        ("mlp_grad", jax.grad(lambda w, x: jnp.sum(jax.nn.log_softmax(jnp.tanh(x @ w[0]) @ w[1]))),
         ((f32(256, 512), f32(512, 10)), f32(128, 256))),
        ("erf_gelu", lambda x: jax.nn.gelu(x, approximate=False) + jnp.log1p(jnp.abs(x)), (f32(1024, 1024),)),
    ]


def programs(quick: bool):
    """(name, StableHLO text, flat arguments) for every program measured."""
    out = []
    for name, program, args in run.cases(quick):
        module = hf.jit(functools.partial(program, hnp)).lower(*args)
        module.optimize()
        out.append((name, module.text, jax.tree.leaves(args)))
    for name, fn, args in jax_programs():
        out.append((name, jax.jit(fn).lower(*args).as_text(), jax.tree.leaves(args)))
    return out


def _options(text, level):
    dev = jax.devices("cpu")[0]
    options = pjrt.compile_options((dev,), partial_dfts=PARTIAL_DFT_ATTR in text)
    overrides = dict(options.env_option_overrides)
    overrides[LEVEL_OPTION] = level
    options.env_option_overrides = list(overrides.items())
    return options


def measure(text, args, repeats, levels=(3, 2)):
    """Per level: (median compile seconds, median run seconds, outputs). Compiles and runs alternate
    between the levels (a run-time ratio of two sequential batches is off by up to 20% here)."""
    dev = jax.devices("cpu")[0]
    compiles, runs, loaded = {lv: [] for lv in levels}, {lv: [] for lv in levels}, {}
    for i in range(repeats):
        for level in levels if i % 2 == 0 else levels[::-1]:
            start = time.perf_counter()
            loaded[level] = pjrt.compile(text, (dev,), _options(text, level))
            compiles[level].append(time.perf_counter() - start)
    arrays = [jax.device_put(a, dev) for a in args]
    outs = {lv: [np.asarray(o) for o in jax.block_until_ready(pjrt.execute(loaded[lv], arrays))] for lv in levels}
    start = time.perf_counter()
    jax.block_until_ready(pjrt.execute(loaded[levels[0]], arrays))
    batch = max(1, min(20, int(0.02 / max(time.perf_counter() - start, 1e-6))))  # (about 20 ms per batch)
    for i in range(repeats * 6):
        for level in levels if i % 2 == 0 else levels[::-1]:
            start = time.perf_counter()
            for _ in range(batch):
                jax.block_until_ready(pjrt.execute(loaded[level], arrays))
            runs[level].append((time.perf_counter() - start) / batch)
    return {lv: (statistics.median(compiles[lv]), statistics.median(runs[lv]), outs[lv]) for lv in levels}


def same_bits(a, b) -> bool:
    return all(x.shape == y.shape and x.tobytes() == y.tobytes() for x, y in zip(a, b))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="run.py's quick cases, fewer repeats")
    parser.add_argument("--only", default=None, help="comma-separated program names")
    args = parser.parse_args(argv)
    hf.config.cache_dir = None
    repeats = 3 if args.quick else 5
    only = None if args.only is None else set(args.only.split(","))
    print(f"{'program':12s} {'compile L3':>11s} {'compile L2':>11s} {'ratio':>6s} {'run L3':>10s} "
          f"{'run L2':>10s} {'ratio':>6s}  same bits")
    mismatched = []
    for name, text, flat in programs(args.quick):
        if only is not None and name not in only:
            continue
        got = measure(text, flat, repeats)
        (c3, r3, o3), (c2, r2, o2) = got[3], got[2]
        same = same_bits(o3, o2)
        mismatched += [] if same else [name]
        print(f"{name:12s} {c3 * 1e3:9.1f}ms {c2 * 1e3:9.1f}ms {c2 / c3:6.2f} {r3 * 1e3:8.2f}ms "
              f"{r2 * 1e3:8.2f}ms {r2 / r3:6.2f}  {same}", flush=True)
    if mismatched:
        print(f"different bits: {', '.join(mismatched)}")
    return 1 if mismatched else 0


if __name__ == "__main__":
    sys.exit(main())
