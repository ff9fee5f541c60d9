"""FNO-1D training on Burgers, hloforge against pure JAX, side by side in one process.

The same model (hloforge.nn.FNO and a jax.numpy twin with the same parameters), the same
initialization, data, data order and steps; hloforge trains with hf.value_and_grad and optax through
hf.from_jax, JAX with jax.value_and_grad and optax. Prints the steady step time ratio of the float32
runs (target <= 1.05) and both loss curves' largest relative gap over the first 100 steps (target
1e-3), in float32 and in float64: the two programs round differently, and over ~100 Adam steps the
training amplifies float32's rounding differences past 1e-3 (they start near 1e-7), while in float64
the curves stay together. Writes benchmarks/train.png. Run: python benchmarks/train.py [--quick]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
import burgers_data  # noqa: E402
import train_fno_1d  # noqa: E402

import hloforge as hf  # noqa: E402


def jax_gelu(x):
    return 0.5 * x * (1 + jnp.tanh(jnp.sqrt(2 / jnp.pi).astype(x.dtype) * (x + 0.044715 * x ** 3)))


def jax_pointwise(x, w, b):
    return jnp.einsum("bi...,io->bo...", x, w) + b.reshape((1, -1) + (1,) * (x.ndim - 2))


def jax_fno_1d(x, params, modes):
    """hloforge.nn.FNO(n_dims=1, padding=0) in jax.numpy."""
    h = jax_pointwise(x, *params["lift"])
    n = h.shape[-1]
    layers = params["layers"]
    for i, layer in enumerate(layers):
        spectrum = jnp.fft.rfft(h)
        mixed = jnp.einsum("bix,iox->box", spectrum[..., :modes], layer["spectral"][0])
        mixed = jnp.pad(mixed, [(0, 0), (0, 0), (0, n // 2 + 1 - modes)])
        h = jnp.fft.irfft(mixed, n=n) + jax_pointwise(h, *layer["skip"])
        if i < len(layers) - 1:
            h = jax_gelu(h)
    return jax_pointwise(jax_gelu(jax_pointwise(h, *params["proj1"])), *params["proj2"])


def jax_relative_l2(pred, target):
    diff = jnp.sqrt(jnp.sum((pred - target) ** 2, axis=-1))
    return jnp.mean(diff / jnp.sqrt(jnp.sum(target ** 2, axis=-1)))


def jax_trainer(config, optimizer):
    modes = config["modes"]

    def loss_fn(params, x, y):
        return jax_relative_l2(jax_fno_1d(x, params, modes)[:, 0], y)

    @jax.jit
    def step(params, state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        grads = jax.tree_util.tree_map(lambda g: jnp.conj(g) if jnp.iscomplexobj(g) else g, grads)
        updates, state = optimizer.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss
    return step


def run(step, params, state, batches):
    """Losses of every step and the median time of the steps after the first few."""
    losses, times = [], []
    for x, y in batches:
        start = time.perf_counter()
        params, state, loss = step(params, state, x, y)
        losses.append(float(loss))  # (blocks until the step is done)
        times.append(time.perf_counter() - start)
    return np.array(losses), float(np.median(times[5:]))


def _gap(a, b) -> float:
    return float(np.max(np.abs(a[:100] - b[:100]) / np.abs(b[:100])))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the example's --quick model and data")
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args(argv)
    config = dict(train_fno_1d.QUICK if args.quick else train_fno_1d.FULL)
    a, u = burgers_data.dataset(config["train"], config["grid"], config["solve_grid"], config["steps"], seed=0)
    x, y = train_fno_1d.make_inputs(a), (u / u.std()).astype(np.float32)
    rng = np.random.default_rng(1234)
    order = np.concatenate([rng.permutation(config["train"]) for _ in range(args.steps * config["batch"]
                                                                          // config["train"] + 1)])
    batches = [(x[order[i * config["batch"]:(i + 1) * config["batch"]]],
                y[order[i * config["batch"]:(i + 1) * config["batch"]]]) for i in range(args.steps)]

    trainer = train_fno_1d.Trainer(config, out_dir=HERE)
    jax_step = jax_trainer(config, trainer.optimizer)
    params = trainer.model.init(seed=0)
    hf_losses, hf_time = run(trainer.step, params, trainer.optimizer.init(params), batches)
    jparams = jax.tree_util.tree_map(jnp.asarray, params)
    jax_losses, jax_time = run(jax_step, jparams, trainer.optimizer.init(jparams), batches)
    gaps = {"float32": _gap(hf_losses, jax_losses)}
    with jax.enable_x64(True):  # (scoped to this thread: optax keeps float64 states, jax float64 data)
        params64 = trainer.model.init(seed=0, dtype=np.float64)
        wide = [(bx.astype(np.float64), by.astype(np.float64)) for bx, by in batches[:100]]
        hf64, _ = run(trainer.step, params64, trainer.optimizer.init(params64), wide)
        jparams64 = jax.tree_util.tree_map(jnp.asarray, params64)
        jax64, _ = run(jax_trainer(config, trainer.optimizer), jparams64, trainer.optimizer.init(jparams64), wide)
    gaps["float64"] = _gap(hf64, jax64)

    ratio = hf_time / jax_time
    print(f"steps: {args.steps}, batch {config['batch']}, grid {config['grid']}, width {config['width']}, "
          f"modes {config['modes']}")
    for dtype, gap in gaps.items():
        print(f"loss curves in {dtype}, first 100 steps: largest relative gap {gap:.2e} (target 1e-3): "
              f"{'ok' if gap <= 1e-3 else 'MISS'}")
    print(f"steady step: hloforge {hf_time * 1e3:.2f} ms, jax {jax_time * 1e3:.2f} ms, ratio {ratio:.3f} "
          f"(target 1.05): {'ok' if ratio <= 1.05 else 'MISS'}")
    print(f"final loss: hloforge {hf_losses[-1]:.5f}, jax {jax_losses[-1]:.5f}")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.semilogy(hf_losses, label="hloforge")
        ax.semilogy(jax_losses, "--", label="jax")
        ax.set_xlabel("step"), ax.set_ylabel("train relative L2"), ax.legend()
        fig.tight_layout(), fig.savefig(os.path.join(HERE, "train.png"), dpi=120)
    except ImportError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
