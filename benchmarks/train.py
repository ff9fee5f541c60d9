"""FNO training (1-D Burgers, or 2-D Darcy flow with --darcy), hloforge against pure JAX, side by side
in one process.

The same model (hloforge.nn.FNO and a jax.numpy twin with the same parameters), the same
initialization, data, data order and steps; hloforge trains with hf.value_and_grad and optax through
hf.from_jax, JAX with jax.value_and_grad and optax. Prints the steady step time ratio of the float32
runs (target <= 1.05) and both loss curves' largest relative gap over the first 100 steps (target
1e-3), in float32 and in float64: the two programs round differently, and over ~100 Adam steps the
training amplifies float32's rounding differences past 1e-3 (they start near 1e-7), while in float64
the curves stay together. Writes benchmarks/train.png. Run: python benchmarks/train.py [--quick]

--darcy: the FNO-2D of examples/train_fno_darcy.py (the paper's 85x85, modes 12, width 32, 4 layers,
padding 9, batch 20; --quick its quick preset) on Darcy data from darcy_data.py, float32 step times
(target: hloforge at most 0.7x jax's, whose FFTs stay FFTs while fft-truncate turns hloforge's
truncated spectra into small DFT contractions), and the losses of the first --check-steps steps in
float64 (target: relative gap 1e-9). Run: python benchmarks/train.py --darcy [--quick] [--steps 30]
[--parts: the forward pass, value_and_grad and the step timed apart, the batch on the device; and an epoch]
[--planes: the spectral weights as real (re, im) planes on both sides, as train_fno_darcy.py --planes]
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

import hloforge as hf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
import burgers_data  # noqa: E402
import darcy_data  # noqa: E402
import train_fno_1d  # noqa: E402
import train_fno_darcy  # noqa: E402
import models  # noqa: E402
from timing import use_device  # noqa: E402


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


def jax_spectral_2d(h, weights, modes):
    """hloforge.nn.SpectralConv(2, modes, ...) in jax.numpy: the low positive and negative rows."""
    n1, n2 = h.shape[-2:]
    m1, m2 = modes
    if isinstance(weights, (tuple, list)):  # (real planes: hf.nn.FNO.init(planes=True))
        weights = jax.lax.complex(*weights)
    spectrum = jnp.fft.rfft2(h)
    top = jnp.einsum("bixy,ioxy->boxy", spectrum[:, :, :m1, :m2], weights[0])
    bottom = jnp.einsum("bixy,ioxy->boxy", spectrum[:, :, n1 - m1:, :m2], weights[1])
    gap = jnp.zeros(top.shape[:2] + (n1 - 2 * m1, m2), top.dtype)
    mixed = jnp.concatenate([top, gap, bottom], axis=2)
    mixed = jnp.pad(mixed, [(0, 0), (0, 0), (0, 0), (0, n2 // 2 + 1 - m2)])
    return jnp.fft.irfft2(mixed, s=(n1, n2))


def jax_fno_2d(x, params, modes, padding):
    """hloforge.nn.FNO(n_dims=2, padding=padding) in jax.numpy."""
    h = jax_pointwise(x, *params["lift"])
    if padding:
        h = jnp.pad(h, [(0, 0), (0, 0), (0, padding), (0, padding)])
    layers = params["layers"]
    for i, layer in enumerate(layers):
        h = jax_spectral_2d(h, layer["spectral"], modes) + jax_pointwise(h, *layer["skip"])
        if i < len(layers) - 1:
            h = jax_gelu(h)
    if padding:
        h = h[:, :, :-padding, :-padding]
    return jax_pointwise(jax_gelu(jax_pointwise(h, *params["proj1"])), *params["proj2"])


def jax_relative_l2_2d(pred, target):
    diff = jnp.sqrt(jnp.sum((pred - target) ** 2, axis=(-2, -1)))
    return jnp.mean(diff / jnp.sqrt(jnp.sum(target ** 2, axis=(-2, -1))))


def jax_darcy_trainer(config, optimizer):
    """The training step of examples/train_fno_darcy.py in pure JAX."""
    modes, padding = (config["modes"],) * 2, config["padding"]

    def loss_fn(params, x, y):
        return jax_relative_l2_2d(jax_fno_2d(x, params, modes, padding)[:, 0], y)

    @jax.jit
    def step(params, state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, state = optimizer.update(models.descent(grads), state, params)
        return optax.apply_updates(params, updates), state, loss

    precision = config.get("precision", "default")
    if precision == "default":
        return step

    def step_at_precision(*args):  # (the example's hf.nn.FNO(precision=...): every einsum of the model)
        with jax.default_matmul_precision(precision):
            return step(*args)
    return step_at_precision


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
        updates, state = optimizer.update(models.descent(grads), state, params)
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
    return np.array(losses), float(np.median(times[5:] or times))


def run_interleaved(runs, batches):
    """``run`` for several (step, params, state) at once, alternating their steps batch by batch, so
    that a machine's changing load weighs on all of them alike."""
    runs = [list(r) for r in runs]
    losses, times = [[] for _ in runs], [[] for _ in runs]
    for x, y in batches:
        for i, (step, params, state) in enumerate(runs):
            start = time.perf_counter()
            params, state, loss = step(params, state, x, y)
            losses[i].append(float(loss))
            times[i].append(time.perf_counter() - start)
            runs[i][1:] = params, state
    return [(np.array(l), float(np.median(t[5:]))) for l, t in zip(losses, times)]


def _gap(a, b) -> float:
    return float(np.max(np.abs(a[:100] - b[:100]) / np.abs(b[:100])))


def darcy_batches(config, steps, seed=0):
    """``steps`` training batches of Darcy data (at most 200 samples, solved at the training resolution: a
    step's time does not depend on the grid solved on; cycled in a shuffled order)."""
    n = min(config["train"], max(steps, 1) * config["batch"], 200)
    a, u = darcy_data.dataset(n, config["resolution"], (config["resolution"],), seed)[config["resolution"]]
    x, y = train_fno_darcy.make_inputs(a), (u / u.std()).astype(np.float32)
    order = np.random.default_rng(1234).permutation(np.resize(np.arange(n), steps * config["batch"]))
    return [(x[order[i * config["batch"]:(i + 1) * config["batch"]]],
             y[order[i * config["batch"]:(i + 1) * config["batch"]]]) for i in range(steps)]


def darcy_params(trainer, dtype=np.float32):
    """The example's initial parameters (seed 0), complex or as planes as its configuration says."""
    return trainer.model.init(seed=0, dtype=dtype, planes=trainer.config.get("planes", False))


def darcy(args) -> int:
    config = dict(train_fno_darcy.QUICK if args.quick else train_fno_darcy.FULL)
    if args.planes:
        config["planes"] = True
    batches = darcy_batches(config, args.steps)
    trainer = train_fno_darcy.Trainer(config, out_dir=HERE)
    jax_step = jax_darcy_trainer(config, trainer.optimizer)
    params = darcy_params(trainer)
    counts = trainer.op_counts({"params": params, "opt": trainer.optimizer.init(params)}, *batches[0])
    jparams = jax.tree_util.tree_map(jnp.asarray, params)
    trainer.step(params, trainer.optimizer.init(params), *batches[0])
    trainer.step.finish_compiling()  # (hf.config.first_call: the truncated step is timed from the first step)
    (hf_losses, hf_time), (jax_losses, jax_time) = run_interleaved(
        [(trainer.step, params, trainer.optimizer.init(params)),
         (jax_step, jparams, trainer.optimizer.init(jparams))], batches)
    check = min(args.check_steps, len(batches))
    gap32 = float(np.max(np.abs(hf_losses[:check] - jax_losses[:check]) / np.abs(jax_losses[:check])))
    # float64 needs complex128 spectra, which a TPU has not: the float64 check runs off a TPU only
    gap64 = None if on_tpu(args.device) else float64_gap(config, trainer, batches[:check])
    # (the target's step: queued as a training loop queues them, numpy batches; the latency of a step
    # waited for, which run_interleaved measures, is dominated on a TPU by the transfers and the wait)
    ours, theirs = darcy_epochs(config, trainer, batches)
    step_ours, step_theirs = ours / len(batches), theirs / len(batches)
    ratio = step_ours / step_theirs
    target = 0.45 if args.device in ("gpu", "tpu") else 0.7
    print(f"Darcy FNO-2D training step: {len(batches)} steps, batch {config['batch']}, "
          f"{config['resolution']}x{config['resolution']} + padding {config['padding']}, width {config['width']}, "
          f"modes {config['modes']}, {config['layers']} layers"
          + (", spectral weights as real planes" if args.planes else ""))
    print("hloforge's step, before -> after optimize(): " + ", ".join(
        f"{op} {b} -> {a}" for op, (b, a) in counts.items()))
    print(f"losses, first {check} steps: largest relative gap float32 {gap32:.2e}, " + (
        "float64 not checked on a TPU (no complex128)" if gap64 is None else
        f"float64 {gap64:.2e} (target 1e-9): {'ok' if gap64 <= 1e-9 else 'MISS'}"))
    print(f"steady step (queued, numpy batches, as in training): hloforge {step_ours * 1e3:.2f} ms, jax "
          f"{step_theirs * 1e3:.2f} ms, ratio {ratio:.3f} (target {target}): {'ok' if ratio <= target else 'MISS'}")
    print(f"a step waited for (latency): hloforge {hf_time * 1e3:.2f} ms, jax {jax_time * 1e3:.2f} ms, "
          f"ratio {hf_time / jax_time:.3f}")
    if args.parts:
        print("per call, the parameters and the batch on the device, calls queued (hloforge ms, jax ms, ratio):")
        for name, (ours, theirs) in darcy_parts(config, trainer, batches[0]).items():
            print(f"  {name:17s} {ours:9.3f} {theirs:9.3f} {ours / theirs:7.3f}")
        n_batches = config["train"] // config["batch"]
        ours, theirs = darcy_epochs(config, trainer, darcy_batches(config, n_batches))
        print(f"epoch of {n_batches} steps as train_fno_darcy.py runs it (numpy batches, losses read after it): "
              f"hloforge {ours:.3f} s, jax {theirs:.3f} s, ratio {ours / theirs:.3f}")
    return 0


def darcy_parts(config, trainer, batch, rounds: int = 7, calls: int = 10) -> dict:
    """{part: (hloforge ms, jax ms)} per call of the forward pass, value_and_grad (also with numpy parameters)
    and the whole step, the parameters and the batch already on the device and ``calls`` calls queued back to
    back (as a training loop runs them), the two frameworks interleaved round by round; medians over ``rounds``."""
    modes, padding, model = (config["modes"],) * 2, config["padding"], trainer.model
    # (the parameters on the device on both sides, as a training loop holds them after its first step)
    host = darcy_params(trainer)
    params = jax.device_put(host)
    jparams = jax.tree_util.tree_map(jnp.asarray, params)
    x, y = (jax.device_put(a) for a in batch)

    def hf_loss(p, x, y):
        return trainer.metric(model(x, p)[:, 0], y)

    def jax_loss(p, x, y):
        return jax_relative_l2_2d(jax_fno_2d(x, p, modes, padding)[:, 0], y)

    hf_grad, jax_grad = hf.jit(hf.value_and_grad(hf_loss)), jax.jit(jax.value_and_grad(jax_loss))
    parts = {
        "forward": ((hf.jit(lambda p, x: model(x, p)), (params, x)),
                    (jax.jit(lambda p, x: jax_fno_2d(x, p, modes, padding)), (jparams, x))),
        "value_and_grad": ((hf_grad, (params, x, y)), (jax_grad, (jparams, x, y))),
        # (both sides sent numpy parameters on every call: what a transfer adds on either side)
        "v&g numpy params": ((hf_grad, (host, x, y)), (jax_grad, (host, x, y))),
        "step": ((trainer.step, (params, trainer.optimizer.init(params), x, y)),
                 (jax_darcy_trainer(config, trainer.optimizer), (jparams, trainer.optimizer.init(jparams), x, y))),
    }
    times = {}
    for name, runs in parts.items():
        for f, args in runs:
            jax.block_until_ready(f(*args))  # (compiled, then the first call's transfers done)
            if hasattr(f, "finish_compiling"):  # (hf.config.first_call: the truncated program from here on;
                f.finish_compiling()            # without it these rows timed the first call's FFT program)
        rows = [[], []]
        for _ in range(rounds):
            for i, (f, args) in enumerate(runs):
                start = time.perf_counter()
                for _ in range(calls):
                    out = f(*args)
                jax.block_until_ready(out)
                rows[i].append((time.perf_counter() - start) / calls)
        times[name] = tuple(float(np.median(r)) * 1e3 for r in rows)
    return times


def darcy_epochs(config, trainer, batches, epochs: int = 3) -> tuple:
    """(hloforge s, jax s): the median time of an epoch as the example's loop runs it (numpy batches,
    steps queued, the losses read after the epoch), the two frameworks alternating epoch by epoch."""
    params = darcy_params(trainer)
    jparams = jax.tree_util.tree_map(jnp.asarray, params)
    runs = [[trainer.step, params, trainer.optimizer.init(params)],
            [jax_darcy_trainer(config, trainer.optimizer), jparams, trainer.optimizer.init(jparams)]]
    times = [[], []]
    for epoch in range(epochs + 1):  # (the first: compiles)
        for i, run_ in enumerate(runs):
            step, p, state = run_
            start = time.perf_counter()
            losses = []
            for x, y in batches:
                p, state, loss = step(p, state, x, y)
                losses.append(loss)
            sum(float(loss) for loss in losses)
            if epoch:
                times[i].append(time.perf_counter() - start)
            run_[1:] = p, state
    return tuple(float(np.median(t)) for t in times)


def on_tpu(device) -> bool:
    return (device or jax.default_backend()) == "tpu"


def float64_gap(config, trainer, batches) -> float:
    """The largest relative gap between hloforge's and jax's float64 losses over ``batches``."""
    with jax.enable_x64(True):  # (scoped to this thread: optax keeps float64 states, jax float64 data)
        params64 = darcy_params(trainer, np.float64)
        wide = [(bx.astype(np.float64), by.astype(np.float64)) for bx, by in batches]
        hf64, _ = run(trainer.step, params64, trainer.optimizer.init(params64), wide)
        jparams64 = jax.tree_util.tree_map(jnp.asarray, params64)
        jax64, _ = run(jax_darcy_trainer(config, trainer.optimizer), jparams64,
                       trainer.optimizer.init(jparams64), wide)
    return float(np.max(np.abs(hf64 - jax64) / np.abs(jax64)))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the example's --quick model and data")
    parser.add_argument("--darcy", action="store_true", help="the FNO-2D Darcy example instead of FNO-1D")
    parser.add_argument("--steps", type=int, default=None, help="training steps timed (200; 30 with --darcy)")
    parser.add_argument("--check-steps", type=int, default=10, help="--darcy: steps compared in float64")
    parser.add_argument("--device", default=None, choices=("cpu", "gpu", "tpu"),
                        help="both frameworks on this device (default: jax's default device)")
    parser.add_argument("--parts", action="store_true", help="--darcy: also time the forward pass, "
                        "value_and_grad and the step apart (the batch on the device, calls queued), and an "
                        "epoch of each as the example runs it")
    parser.add_argument("--planes", action="store_true", help="--darcy: the spectral weights as real (re, im) "
                        "planes on both sides (train_fno_darcy.py --planes)")
    args = parser.parse_args(argv)
    use_device(args.device)
    if args.darcy:
        args.steps = 30 if args.steps is None else args.steps
        if args.steps < 6:
            parser.error(f"--steps must be >= 6 (the first 5 are not timed), got {args.steps}")
        return darcy(args)
    if args.planes:
        parser.error("--planes is an option of --darcy")
    args.steps = 200 if args.steps is None else args.steps
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
