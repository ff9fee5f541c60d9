"""hf.to_jax's performance: hloforge's passes inside a plain JAX training loop, in one process,
interleaved, median of repeats.

- ``fno2d_step``: a pure-JAX FNO-2D (benchmarks/models.py's ``fno`` on jax.numpy; batch 8, 64x64,
  width 32, 12 modes, 4 layers) trained with ``jax.value_and_grad`` and ``optax.adam``, the whole
  step in ``jax.jit``; the model once as it is and once through ``@hf.optimize``
  (``hf.to_jax(hf.from_jax(model))``). Targets: the step at most 0.8x plain jax's, the forward
  alone at most 0.6x, and the same losses over the steps (float32 tolerance 1e-4 relative).
- ``tiny``: the bridge's overhead: a small elementwise function inside a jax.jit step, through
  ``hf.to_jax`` against the same function in jax (target <= 1.1).

Run: python benchmarks/to_jax.py [--quick]
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
import optax

import hloforge as hf
from hloforge import numpy as hnp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import models  # noqa: E402

TARGETS = {"step": 0.8, "forward": 0.6, "tiny": 1.1}
MODES, WIDTH, LAYERS, GRID, BATCH, IN_CH = (12, 12), 32, 4, 64, 8, 3


def _steady(fns, args, repeats):
    """Interleaved medians of 3-call medians, one per function (run.py's steady state)."""
    for f in fns:
        jax.block_until_ready(f(*args))
    times = [[] for _ in fns]
    for _ in range(repeats):
        for f, ts in zip(fns, times):
            samples = []
            for _ in range(3):
                t = time.perf_counter()
                jax.block_until_ready(f(*args))
                samples.append(time.perf_counter() - t)
            ts.append(statistics.median(samples))
    return [statistics.median(ts) for ts in times]


def fno_model(params, x):
    return models.fno(jnp, x, params, MODES, 0)


def training_step(model, optimizer):
    def loss_fn(params, x, y):
        return jnp.mean((model(params, x) - y) ** 2)

    @jax.jit
    def step(params, state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, state = optimizer.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss
    return step


def fno2d(repeats, steps):
    rng = np.random.default_rng(0)
    params = jax.tree_util.tree_map(jnp.asarray, models.fno_params(2, MODES, WIDTH, LAYERS, IN_CH, rng))
    x = jnp.asarray(rng.standard_normal((BATCH, IN_CH, GRID, GRID)).astype(np.float32))
    y = jnp.asarray(rng.standard_normal((BATCH, 1, GRID, GRID)).astype(np.float32))
    optimizer = optax.adam(1e-3)
    bridged = hf.optimize(fno_model)
    forward_jax, forward_hf = jax.jit(fno_model), jax.jit(bridged)
    f_jax, f_hf = _steady([forward_jax, forward_hf], (params, x), repeats)
    step_jax, step_hf = training_step(fno_model, optimizer), training_step(bridged, optimizer)
    losses = {}
    for name, step in (("jax", step_jax), ("hloforge", step_hf)):
        p, s, out = params, optimizer.init(params), []
        for _ in range(steps):
            p, s, loss = step(p, s, x, y)
            out.append(float(loss))
        losses[name] = np.array(out)
    gap = float(np.max(np.abs(losses["hloforge"] - losses["jax"]) / np.abs(losses["jax"])))
    state = optimizer.init(params)
    s_jax, s_hf = _steady([step_jax, step_hf], (params, state, x, y), repeats)
    print(f"fno2d forward   jax {f_jax * 1e3:8.2f} ms   hf.optimize {f_hf * 1e3:8.2f} ms   "
          f"ratio {f_hf / f_jax:.3f}  (target <= {TARGETS['forward']})")
    print(f"fno2d step      jax {s_jax * 1e3:8.2f} ms   hf.optimize {s_hf * 1e3:8.2f} ms   "
          f"ratio {s_hf / s_jax:.3f}  (target <= {TARGETS['step']})")
    print(f"fno2d losses    {steps} steps, largest relative gap {gap:.2e} (target <= 1e-4); "
          f"jax {losses['jax'][0]:.6f} -> {losses['jax'][-1]:.6f}")
    return {"forward": f_hf / f_jax, "step": s_hf / s_jax, "loss_gap": gap}


def tiny(repeats):
    x = jnp.linspace(0, 1, 64, dtype=jnp.float32)
    bridged = hf.to_jax(lambda v: hnp.tanh(v) * 2.0 + 1.0)
    plain = jax.jit(lambda v: jnp.tanh(v) * 2.0 + 1.0)
    through = jax.jit(lambda v: bridged(v))
    t_jax, t_hf = _steady([plain, through], (x,), repeats * 10)
    print(f"tiny            jax {t_jax * 1e6:8.1f} us   hf.to_jax   {t_hf * 1e6:8.1f} us   "
          f"ratio {t_hf / t_jax:.3f}  (target <= {TARGETS['tiny']})")
    return {"tiny": t_hf / t_jax}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args(argv)
    repeats = 5 if args.quick else 15
    results = {**fno2d(repeats, 5 if args.quick else 10), **tiny(repeats)}
    missed = [k for k, target in TARGETS.items() if results[k] > target]
    if results["loss_gap"] > 1e-4:
        missed.append("loss_gap")
    print("all targets met" if not missed else f"missed: {', '.join(missed)}")
    return results


if __name__ == "__main__":
    main()
