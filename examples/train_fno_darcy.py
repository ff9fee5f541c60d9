"""Train FNO-2D on Darcy flow (Li et al. 2021): data from hloforge's own solver (darcy_data.py),
gradients from hf.value_and_grad, Adam from optax through hf.from_jax.

    python examples/train_fno_darcy.py           # the paper's run: 85x85 (subsampled from 421x421),
                                                 # modes 12, width 32, 4 layers, 1000/100 samples, 500 epochs
    python examples/train_fno_darcy.py --quick   # a smaller run (a few minutes on 2 cores)
    python examples/train_fno_darcy.py --resume  # continue from the last checkpoint (--epochs N: to epoch N)

Every setting of the configuration has its option (--train, --resolution, --grid, --modes, ...), which
overrides the chosen preset; --planes keeps the spectral weights as pairs of real planes (a TPU splits and
combines every complex leaf of a step: docs/limits.md, "On a TPU"). Writes checkpoint.npz (every epoch),
loss_curve.png and prediction.png to --out (default runs/darcy/ in the current directory). The samples (train + test) are read from
OUT/darcy_r<resolution>_g<grid>_n<train + test>_s<seed>.npz, the files darcy_data.py writes by default
(``python examples/darcy_data.py`` makes the full preset's); when one is missing, the samples are
solved on the grid and written there for every resolution the run needs. After training, the model is
also tested zero-shot on the finer resolutions the grid subsamples to (--zero-shot: the full preset's
141, 211 and 421): the FNO's weights do not depend on the grid. The last line of stdout is
``test relative L2: <value>`` (at the training resolution). Needs the train extra: pip install -e '.[train]'.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import hloforge as hf
from hloforge import numpy as hnp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import darcy_data  # noqa: E402
import train_fno_1d  # noqa: E402

# Li et al.: 421x421 solutions subsampled to 85x85, padding 9 for the non-periodic domain, Adam 1e-3
# halved every 100 epochs, batch 20.
# precision: the model's contractions' ("default": on a TPU one bfloat16 pass per float32 product, as
# jax's default; "highest": float32 throughout, about 3-6 passes)
FULL = dict(train=1000, test=100, resolution=85, grid=421, modes=12, width=32, layers=4, padding=9, epochs=500,
            batch=20, lr=1e-3, decay_every=100, weight_decay=1e-4, seed=0, precision="default")
QUICK = dict(train=300, test=50, resolution=29, grid=57, modes=8, width=24, layers=4, padding=4, epochs=40,
             batch=10, lr=3e-3, decay_every=10, weight_decay=1e-4, seed=0, precision="default")
COUNTED_OPS = ("stablehlo.fft", "stablehlo.dot_general")


def relative_l2(pred, target):
    """Mean over the batch of ||pred - target|| / ||target|| over the grid (the paper's loss and metric)."""
    diff = hnp.sqrt(hnp.sum((pred - target) ** 2, axis=(-2, -1)))
    return hnp.mean(diff / hnp.sqrt(hnp.sum(target ** 2, axis=(-2, -1))))


def make_inputs(a):
    """(batch, 3, R, R) channels: a(x, y) mapped from {3, 12} to {-1, 1}, x and y."""
    a = (np.asarray(a, np.float32) - (darcy_data.HIGH + darcy_data.LOW) / 2) / (
        (darcy_data.HIGH - darcy_data.LOW) / 2)
    grid = np.linspace(0, 1, a.shape[-1], dtype=np.float32)
    gx, gy = np.meshgrid(grid, grid, indexing="ij")
    coords = np.broadcast_to(np.stack([gx, gy]), (a.shape[0], 2) + a.shape[1:])
    return np.concatenate([a[:, None], coords], axis=1).astype(np.float32)


def padding_at(config, resolution: int) -> int:
    """The padding at ``resolution`` that keeps the training padded domain's size: (R + p) / (R - 1) =
    (r + p_r) / (r - 1) for training resolution R and padding p (rounded: 9 at 85 is 16 at 141, 24 at
    211, 49 at 421)."""
    size = (config["resolution"] + config["padding"]) / (config["resolution"] - 1)
    return max(0, round(size * (resolution - 1) - resolution))


def model_precision(config):
    """hf.nn.FNO's precision for the configuration's ("default": None)."""
    return None if config["precision"] == "default" else config["precision"]


def data_path(config, out_dir, resolution=None):
    """Where the run's samples at ``resolution`` (default: the training one) are kept: darcy_data.py's
    default file for them, in ``out_dir``."""
    n = config["train"] + config["test"]
    return os.path.join(out_dir, darcy_data.file_name(n, resolution or config["resolution"], config["grid"],
                                                      config["seed"]))


def zero_shot_resolutions(config) -> tuple:
    """The resolutions finer than the training one that the grid subsamples to (darcy_data.RESOLUTIONS
    and the grid itself): where the trained model is tested zero-shot by default."""
    finer = sorted({*darcy_data.RESOLUTIONS, config["grid"]})
    return tuple(r for r in finer if config["resolution"] < r <= config["grid"]
                 and (config["grid"] - 1) % (r - 1) == 0)


def load_data(config, out_dir, resolutions) -> dict:
    """{resolution: (a, u)} of the train + test samples, read from the files or solved on the grid (and
    written, one file per resolution)."""
    n, grid, seed = config["train"] + config["test"], config["grid"], config["seed"]
    paths = {r: data_path(config, out_dir, r) for r in resolutions}
    if all(os.path.exists(path) for path in paths.values()):
        data = {}
        for r, path in paths.items():
            with np.load(path) as stored:
                data[r] = stored["a"], stored["u"]
            if data[r][0].shape != (n, r, r) or data[r][1].shape != (n, r, r):
                raise SystemExit(f"{path} holds samples of shape {data[r][0].shape}, not ({n}, {r}, {r}): remove it")
        print(f"data: {n} Darcy solutions ({grid}x{grid}) at {', '.join(map(str, resolutions))} from {out_dir}")
        return data
    start = time.perf_counter()
    data = darcy_data.dataset(n, grid, resolutions, seed)
    for r, (a, u) in data.items():
        darcy_data.save(paths[r], a, u)
    print(f"data: {n} Darcy solutions on {grid}x{grid} in {time.perf_counter() - start:.1f} s, subsampled to "
          f"{', '.join(map(str, resolutions))} and written to {out_dir}")
    return data


def split(config, a, u):
    """((x_train, y_train), (x_test, y_test)) and the scale the targets were divided by."""
    n = config["train"]
    # (the solutions are ~0.01: train on them scaled to unit size; relative L2 does not depend on it)
    scale = float(u[:n].std())
    x, y = make_inputs(a), (u / scale).astype(np.float32)
    return ((x[:n], y[:n]), (x[n:], y[n:])), scale


def test_set(config, a, u, scale):
    """(x_test, y_test) of samples at another resolution, the targets divided by the training ``scale``."""
    n = config["train"]
    return make_inputs(a[n:]), (u[n:] / scale).astype(np.float32)


class Trainer(train_fno_1d.Trainer):
    """The 1-D example's trainer (checkpoints, --resume, the epoch loop) with the FNO-2D and its plots."""
    metric = staticmethod(relative_l2)

    def __init__(self, config, out_dir):
        super().__init__(config, out_dir)
        model = self.model
        self.predict = hf.jit(lambda params, x: model(x, params)[:, 0])

    def zero_shot_error(self, params, x, y) -> float:
        """The paper's metric (mean over samples of ||pred - u|| / ||u||) of the trained model on ``x``,
        ``y`` at another resolution, in batches of the training batch size (a 421x421 test set at once
        would not fit a TPU's memory). The padding is scaled with the grid (padding_at) so that the
        padded domain, and so what each Fourier mode means, keeps its physical size."""
        config = dict(self.config, padding=padding_at(self.config, x.shape[-1]))
        model = self.build_model(config)
        evaluate = hf.jit(lambda params, x, y: self.metric(model(x, params)[:, 0], y))
        return self.test_error(params, x, y, evaluate)

    def build_model(self, config):
        return hf.nn.FNO(n_dims=2, modes=config["modes"], width=config["width"], n_layers=config["layers"],
                         in_channels=3, padding=config["padding"], precision=model_precision(config))

    def op_counts(self, state, x, y):
        """{op: (before optimize(), after)} for the FFTs and dots of the training step's module."""
        module = self.step.lower(state["params"], state["opt"], x[:self.config["batch"]], y[:self.config["batch"]])
        before = module.op_counts()
        module.optimize()
        after = module.op_counts()
        return {op: (before.get(op, 0), after.get(op, 0)) for op in COUNTED_OPS}

    def plots(self, state, x_test, y_test, scale=1.0):
        """loss_curve.png, and prediction.png: the first test sample's a, u, prediction and error
        (u and prediction on one colour scale; solutions times ``scale``)."""
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 3.5))
        ax.semilogy(np.arange(1, len(state["losses"]) + 1), state["losses"])
        ax.set_xlabel("epoch"), ax.set_ylabel("train relative L2"), ax.set_title("FNO-2D on Darcy flow")
        fig.tight_layout(), fig.savefig(os.path.join(self.out_dir, "loss_curve.png"), dpi=120)

        truth = y_test[0] * scale
        pred = np.asarray(self.predict(state["params"], x_test[:1]))[0] * scale
        error = np.linalg.norm(pred - truth) / np.linalg.norm(truth)
        lo, hi = min(truth.min(), pred.min()), max(truth.max(), pred.max())
        a = x_test[0, 0] * (darcy_data.HIGH - darcy_data.LOW) / 2 + (darcy_data.HIGH + darcy_data.LOW) / 2
        panels = [("coefficient a", a, dict(cmap="gray")),
                  ("truth u", truth, dict(vmin=lo, vmax=hi)),
                  ("FNO prediction", pred, dict(vmin=lo, vmax=hi)),
                  (f"error: prediction - truth\n(relative L2 {error:.3f})", pred - truth, dict(cmap="RdBu_r"))]
        fig, axes = plt.subplots(1, 4, figsize=(15, 3.6))
        for ax, (title, image, style) in zip(axes, panels):
            if title.startswith("error"):
                bound = float(np.abs(image).max()) or 1.0
                style = dict(style, vmin=-bound, vmax=bound)
            shown = ax.imshow(image.T, origin="lower", extent=(0, 1, 0, 1), **style)
            fig.colorbar(shown, ax=ax, fraction=0.046, pad=0.04)
            ax.set_title(title), ax.set_xlabel("x")
        axes[0].set_ylabel("y")
        fig.suptitle("FNO-2D on Darcy flow: the operator maps the coefficient a(x, y) to the solution u(x, y)")
        fig.tight_layout(), fig.savefig(os.path.join(self.out_dir, "prediction.png"), dpi=120)
        plt.close("all")


def parse_config(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small model, grid and dataset")
    parser.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint.npz")
    parser.add_argument("--out", default=darcy_data.RUN_DIR,
                        help=f"where checkpoints and plots go (default: {darcy_data.RUN_DIR})")
    parser.add_argument("--data-dir", help="the folder of the samples' .npz files, read or written (default: OUT; "
                                           "darcy_r<resolution>_g<grid>_n<train + test>_s<seed>.npz, darcy_data.py's)")
    parser.add_argument("--zero-shot", type=darcy_data._resolutions, default=None,
                        help="comma-separated finer resolutions to test the trained model at (default: those the "
                             "grid subsamples to, of 85,141,211,421 and the grid)")
    for key, value in FULL.items():
        parser.add_argument(f"--{key.replace('_', '-')}", dest=key, type=type(value),
                            help=f"override the preset's {key} (full: {value}, quick: {QUICK[key]})")
    parser.add_argument("--planes", action="store_true", help=train_fno_1d.PLANES_HELP)
    args = parser.parse_args(argv)
    config = dict(QUICK if args.quick else FULL)
    config.update({k: getattr(args, k) for k in FULL if getattr(args, k) is not None})
    if args.planes:  # (in the configuration only when set: earlier checkpoints still resume)
        config["planes"] = True
    limit = (config["resolution"] + config["padding"]) // 2
    if config["modes"] > limit or min(config["train"], config["test"], config["batch"], config["epochs"]) < 1:
        parser.error(f"need modes <= (resolution + padding) // 2 = {limit} and positive train, test, batch, "
                     f"epochs; got {config}")
    if config["train"] % config["batch"]:
        parser.error(f"--train {config['train']} must be a multiple of --batch {config['batch']}")
    if not config["lr"] > 0 or not config["weight_decay"] >= 0:
        parser.error(f"--lr must be positive and --weight-decay not negative, got {config['lr']} and "
                     f"{config['weight_decay']}")
    if config["precision"] not in ("default", "high", "highest"):
        parser.error(f"--precision must be default, high or highest, got {config['precision']!r}")
    try:
        for resolution in (config["resolution"], *(args.zero_shot or ())):
            darcy_data.stride(config["grid"], resolution)
    except ValueError as e:
        parser.error(str(e))
    if args.zero_shot is None:
        args.zero_shot = zero_shot_resolutions(config)
    return args, config


def main(argv=None) -> int:
    args, config = parse_config(argv)
    os.makedirs(args.out, exist_ok=True)
    trainer = Trainer(config, args.out)
    state = train_fno_1d.start_state(trainer, args.resume)
    done = train_fno_1d.finished(trainer, state)
    if done:  # (before the data: nothing is solved or traced)
        print(done)
        return 0
    first = state["epoch"]
    start = time.perf_counter()
    samples = load_data(config, args.data_dir or args.out, (config["resolution"], *args.zero_shot))
    data, scale = split(config, *samples[config["resolution"]])

    counts = trainer.op_counts(state, *data[0])
    print("training step, before -> after optimize(): " + ", ".join(
        f"{op} {b} -> {a}" for op, (b, a) in counts.items()))
    trained_from = time.perf_counter()
    state, test = trainer.fit(state, data)
    trainer.plots(state, *data[1], scale)
    epochs = state["epoch"] - first
    print(f"{train_fno_1d.trained(state, first, time.perf_counter() - start)} (training "
          f"{(time.perf_counter() - trained_from) / max(epochs, 1):.2f} s per epoch); plots in {args.out}/")
    for resolution in args.zero_shot:
        x, y = test_set(config, *samples[resolution], scale)
        print(f"zero-shot test relative L2 at {resolution}x{resolution}: "
              f"{trainer.zero_shot_error(state['params'], x, y):.4f} (padding {padding_at(config, resolution)})")
    print(f"test relative L2: {test:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
