"""A plain JAX + optax training loop whose FNO-2D goes through hloforge's passes: ``@hf.optimize``.

The model is pure jax.numpy (benchmarks/models.py's ``fno``). ``hf.optimize(model)`` is
``hf.to_jax(hf.from_jax(model))``: jax lowers the model, hloforge's passes rewrite it (spectral
truncation turns the FFTs of the truncated spectra into small DFT contractions), and the result is
a jax function again. ``jax.value_and_grad`` differentiates it with hloforge's AD of the rewritten
module (its backward pass is truncated too), ``optax.adam`` updates the parameters, and the whole
step is one ``jax.jit``. The same loop runs with the model as it is; the example checks that both
give the same losses at every step and prints both step times.

Small by default (a few seconds); ``--full`` is benchmarks/to_jax.py's size (batch 8, 64x64,
width 32, 12 modes, 4 layers). Run: python examples/jax_training_with_hloforge.py [--full] [--steps N]
"""
import argparse
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

import hloforge as hf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import models  # noqa: E402

LOSS_RTOL = 1e-4


def make_step(model, optimizer):
    def loss_fn(params, x, y):
        return jnp.mean((model(params, x) - y) ** 2)

    @jax.jit
    def step(params, state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        # (jax's convention: the gradient of a real loss in a complex weight is the conjugate of the
        # descent direction; optax expects the direction)
        grads = jax.tree.map(lambda g: jnp.conj(g) if jnp.iscomplexobj(g) else g, grads)
        updates, state = optimizer.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss
    return step


def train(step, params, optimizer, x, y, steps):
    state, losses = optimizer.init(params), []
    for _ in range(steps):
        params, state, loss = step(params, state, x, y)
        losses.append(float(loss))
    start = time.perf_counter()
    jax.block_until_ready(step(params, state, x, y))
    return np.array(losses), time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="batch 8, 64x64, width 32, 12 modes, 4 layers")
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args(argv)
    batch, grid, width, modes, layers = (8, 64, 32, 12, 4) if args.full else (4, 24, 8, 5, 2)

    def model(params, x):  # pure jax
        return models.fno(jnp, x, params, (modes, modes), 0)

    rng = np.random.default_rng(0)
    params = jax.tree_util.tree_map(jnp.asarray, models.fno_params(2, (modes, modes), width, layers, 3, rng))
    x = jnp.asarray(rng.standard_normal((batch, 3, grid, grid)).astype(np.float32))
    y = jnp.asarray(np.sin(np.asarray(x[:, :1]) * 2.0).astype(np.float32))
    optimizer = optax.adam(1e-2)

    jax_losses, jax_time = train(make_step(model, optimizer), params, optimizer, x, y, args.steps)
    hf_losses, hf_time = train(make_step(hf.optimize(model), optimizer), params, optimizer, x, y, args.steps)
    gap = float(np.max(np.abs(hf_losses - jax_losses) / np.abs(jax_losses)))
    for i, (a, b) in enumerate(zip(jax_losses, hf_losses)):
        print(f"step {i}: loss jax {a:.6f}   @hf.optimize {b:.6f}")
    print(f"one step: jax {jax_time * 1e3:.1f} ms, @hf.optimize {hf_time * 1e3:.1f} ms")
    print(f"max abs relative loss gap {gap:.2e} (tolerance {LOSS_RTOL})")
    if not gap <= LOSS_RTOL or not jax_losses[-1] < jax_losses[0]:
        print("FAILED: the losses differ, or the loss did not go down")
        return 1
    print("OK: the same losses as plain JAX")
    return 0


if __name__ == "__main__":
    sys.exit(main())
