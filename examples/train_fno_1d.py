"""Train FNO-1D on viscous Burgers (Li et al. 2020): data from hloforge's own solver, gradients from
hf.value_and_grad, Adam from optax through hf.from_jax.

    python examples/train_fno_1d.py            # the paper's model: modes 16, width 64, 4 layers
    python examples/train_fno_1d.py --quick    # a smaller run (a few minutes on 2 cores)
    python examples/train_fno_1d.py --resume   # continue from the last checkpoint (--epochs N: to epoch N)

Writes loss_curve.png, prediction.png and checkpoint.npz (every epoch) to --out (default
runs/fno_1d/ in the current directory); the last line of stdout is ``test relative L2: <value>``.
Needs the train extra: pip install -e '.[train]'.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
import optax
from jax import tree_util
from tqdm import tqdm

import hloforge as hf
from hloforge import numpy as hnp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import burgers_data  # noqa: E402

FULL = dict(train=1000, test=100, grid=1024, solve_grid=1024, steps=1000, modes=16, width=64, layers=4,
            epochs=100, batch=20, lr=1e-3, decay_every=20)
QUICK = dict(train=400, test=50, grid=128, solve_grid=256, steps=500, modes=12, width=32, layers=4,
             epochs=200, batch=20, lr=1e-3, decay_every=50)


PLANES_HELP = ("the spectral weights as pairs of real planes (hf.nn.FNO.init(planes=True)): a TPU splits and "
               "combines every complex leaf of a step; Adam then normalizes each plane by itself, as torch's "
               "Adam does with complex weights")


def relative_l2(pred, target):
    """Mean over the batch of ||pred - target|| / ||target|| (the paper's loss and metric)."""
    diff = hnp.sqrt(hnp.sum((pred - target) ** 2, axis=-1))
    return hnp.mean(diff / hnp.sqrt(hnp.sum(target ** 2, axis=-1)))


def make_inputs(a):
    """(batch, 2, grid) channels: u0(x) and x."""
    grid = np.linspace(0, 1, a.shape[-1], endpoint=False, dtype=np.float32)
    return np.stack([a, np.broadcast_to(grid, a.shape)], axis=1).astype(np.float32)


class Trainer:
    metric = staticmethod(relative_l2)  # the loss and the test metric (the 2-D trainer's sums two axes)

    def __init__(self, config, out_dir):
        self.config, self.out_dir = config, out_dir
        self.model = self.build_model(config)
        schedule = optax.exponential_decay(config["lr"], transition_steps=config["decay_every"] * (
            config["train"] // config["batch"]), decay_rate=0.5, staircase=True)
        # (weight_decay: the paper's torch Adam(weight_decay=1e-4), an L2 term added to the gradient)
        self.optimizer = optax.chain(optax.add_decayed_weights(config.get("weight_decay", 0.0)), optax.adam(schedule))
        update, apply = hf.from_jax(self.optimizer.update), hf.from_jax(optax.apply_updates)
        model, metric = self.model, self.metric

        def loss_fn(params, x, y):
            return metric(model(x, params)[:, 0], y)

        def step(params, state, x, y):
            loss, grads = hf.value_and_grad(loss_fn)(params, x, y)
            # (jax's convention, which hf.grad follows: the gradient of a real loss in a complex
            # weight is the conjugate of the descent direction; optax expects the direction)
            grads = tree_util.tree_map(lambda g: hnp.conj(g) if g.dtype.kind == "c" else g, grads)
            updates, state = update(grads, state, params)
            return apply(params, updates), state, loss

        devices = hf.devices()
        if len(devices) > 1 and config["batch"] % len(devices) == 0:
            mesh = hf.Mesh(np.array(devices), ("batch",))
            data = hf.NamedSharding(mesh, hf.P("batch"))
            replicated = hf.NamedSharding(mesh, hf.P())
            self.step = hf.jit(step, in_shardings=(replicated, replicated, data, data))
            print(f"data-parallel over {len(devices)} devices")
        else:
            self.step = hf.jit(step)
        self.evaluate = hf.jit(lambda params, x, y: metric(model(x, params)[:, 0], y))
        self.predict = hf.jit(lambda params, x: model(x, params)[:, 0])


    def build_model(self, config):
        """The FNO this trainer trains (the 2-D Darcy trainer overrides it)."""
        return hf.nn.FNO(n_dims=1, modes=config["modes"], width=config["width"], n_layers=config["layers"],
                         in_channels=2, padding=0)
    def init_state(self):
        # (planes: the spectral weights as real (re, im) pairs, PLANES_HELP)
        params = self.model.init(seed=0, planes=self.config.get("planes", False))
        return {"params": params, "opt": self.optimizer.init(params), "epoch": 0, "losses": []}

    # ---------------------------------------------------------------- checkpoints

    def save(self, state):
        leaves = tree_util.tree_leaves((state["params"], state["opt"]))
        path = os.path.join(self.out_dir, "checkpoint.npz")
        np.savez(path + ".tmp.npz", *[np.asarray(l) for l in leaves], epoch=state["epoch"],
                 losses=np.asarray(state["losses"], np.float64), config=json.dumps(self.config))
        os.replace(path + ".tmp.npz", path)

    def load(self):
        path = os.path.join(self.out_dir, "checkpoint.npz")
        fresh = self.init_state()
        with np.load(path) as data:
            saved = json.loads(str(data["config"]))
            if {k: v for k, v in saved.items() if k != "epochs"} != {k: v for k, v in self.config.items() if k != "epochs"}:
                raise SystemExit(f"{path} was written with another configuration; drop --resume")
            tree = tree_util.tree_structure((fresh["params"], fresh["opt"]))
            leaves = [data[f"arr_{i}"] for i in range(tree.num_leaves)]
            params, opt = tree_util.tree_unflatten(tree, leaves)
            return {"params": params, "opt": opt, "epoch": int(data["epoch"]), "losses": list(data["losses"])}

    # ---------------------------------------------------------------- training

    def fit(self, state, data):
        (x_train, y_train), (x_test, y_test) = data
        c = self.config
        n_batches = c["train"] // c["batch"]
        rng = np.random.default_rng(1234)
        for _ in range(state["epoch"]):  # (the data order of the epochs already done)
            rng.permutation(c["train"])
        params, opt = state["params"], state["opt"]
        bar = tqdm(range(state["epoch"], c["epochs"]), desc="epochs", file=sys.stderr, initial=state["epoch"],
                   total=c["epochs"])
        for epoch in bar:
            order = rng.permutation(c["train"])
            losses = []
            for b in range(n_batches):
                idx = order[b * c["batch"]:(b + 1) * c["batch"]]
                params, opt, loss = self.step(params, opt, x_train[idx], y_train[idx])
                losses.append(loss)  # (read after the epoch: a read per step would wait for each step)
            state.update(params=params, opt=opt, epoch=epoch + 1)
            state["losses"].append(sum(float(loss) for loss in losses) / n_batches)
            self.save(state)
            bar.set_postfix(loss=f"{state['losses'][-1]:.4f}")
        return state, self.test_error(params, x_test, y_test)

    def test_error(self, params, x, y, evaluate=None) -> float:
        """The metric's mean over the samples of ``x``, ``y``, in batches of the training batch size
        (``evaluate``: the compiled metric, default this trainer's)."""
        evaluate, batch = evaluate or self.evaluate, self.config["batch"]
        return sum(float(evaluate(params, x[i:i + batch], y[i:i + batch])) * len(x[i:i + batch])
                   for i in range(0, len(x), batch)) / len(x)

    def plots(self, state, x_test, y_test, scale=1.0):
        """loss_curve.png, and prediction.png: for three test samples, the input u0(x), the truth
        u(x, t=1) with the prediction over it, and their difference, each on its own axis (the inputs
        are about 50x larger than the solutions; solutions times ``scale``, the factor the training
        targets were divided by)."""
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 3.5))
        ax.semilogy(np.arange(1, len(state["losses"]) + 1), state["losses"])
        ax.set_xlabel("epoch"), ax.set_ylabel("train relative L2"), ax.set_title("FNO-1D on Burgers")
        fig.tight_layout(), fig.savefig(os.path.join(self.out_dir, "loss_curve.png"), dpi=120)
        pred = np.asarray(self.predict(state["params"], x_test[:3])) * scale
        fig, axes = plt.subplots(3, 3, figsize=(12, 7), sharex=True, sharey="row",
                                 gridspec_kw=dict(height_ratios=(1, 1.4, 0.8)))
        grid = x_test[0, 1]
        for i in range(3):
            truth = y_test[i] * scale
            error = np.linalg.norm(pred[i] - truth) / np.linalg.norm(truth)
            top, middle, bottom = axes[:, i]
            top.plot(grid, x_test[i, 0], color="tab:gray")
            top.set_title(f"test sample {i}: relative L2 {error:.4f}")
            middle.plot(grid, truth, label="truth u(x, t=1)", linewidth=2)
            middle.plot(grid, pred[i], "--", label="FNO prediction")
            bottom.plot(grid, pred[i] - truth, color="tab:red")
            bottom.axhline(0, color="black", linewidth=0.5)
            bottom.set_xlabel("x")
        axes[0, 0].set_ylabel("input u0(x)"), axes[1, 0].set_ylabel("u(x, t=1)")
        axes[2, 0].set_ylabel("prediction - truth")
        axes[1, 0].legend(fontsize="small")
        fig.suptitle("FNO-1D on viscous Burgers: the operator maps u0(x) to u(x, t=1)")
        fig.tight_layout(), fig.savefig(os.path.join(self.out_dir, "prediction.png"), dpi=120)
        plt.close("all")


def finished(trainer, state) -> str | None:
    """The message that ``--resume`` has nothing to train (the checkpoint holds the epochs asked
    for), or None."""
    have, want = state["epoch"], trainer.config["epochs"]
    if have < want:
        return None
    held = f"all {_epochs(have)}" if have == want else f"{_epochs(have)} (--epochs {want})"
    return (f"nothing to do: {os.path.join(trainer.out_dir, '')} already holds {held} "
            f"(use --epochs N, N > {have}, to train further)")


def start_state(trainer, resume: bool):
    """The checkpoint's state with ``resume`` (when there is one), else a fresh one."""
    path = os.path.join(trainer.out_dir, "checkpoint.npz")
    if not resume:
        return trainer.init_state()
    if not os.path.exists(path):
        print(f"--resume: no {path} yet, starting from epoch 0")
        return trainer.init_state()
    return trainer.load()


def _epochs(n: int) -> str:
    return f"{n} epoch{'s' if n != 1 else ''}"


def trained(state, first: int, seconds: float) -> str:
    """``trained 200 epochs in ...``, or after a resume from epoch 200 ``trained epochs 201-300 in ...``."""
    last = state["epoch"]
    epochs = _epochs(last) if first == 0 else f"epoch {last}" if last == first + 1 else f"epochs {first + 1}-{last}"
    return f"trained {epochs} in {seconds:.1f} s"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small model and dataset")
    parser.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint.npz")
    parser.add_argument("--epochs", type=int, help="override the number of epochs")
    parser.add_argument("--planes", action="store_true", help=PLANES_HELP)
    parser.add_argument("--out", default=os.path.join("runs", "fno_1d"),
                        help="where checkpoints and plots go (default: runs/fno_1d)")
    args = parser.parse_args(argv)
    config = dict(QUICK if args.quick else FULL)
    if args.epochs is not None:
        config["epochs"] = args.epochs
    if args.planes:  # (in the configuration only when set: earlier checkpoints still resume)
        config["planes"] = True
    os.makedirs(args.out, exist_ok=True)
    trainer = Trainer(config, args.out)
    state = start_state(trainer, args.resume)
    done = finished(trainer, state)
    if done:  # (before the data: nothing is solved or traced)
        print(done)
        return 0
    first = state["epoch"]

    start = time.perf_counter()
    a, u = burgers_data.dataset(config["train"] + config["test"], config["grid"], config["solve_grid"],
                                config["steps"], seed=0)
    # (the solutions are about 50x smaller than the initial conditions at nu = 0.1: train on them scaled
    # to unit size; the relative L2 error does not depend on that scale)
    scale = float(u[:config["train"]].std())
    x, y = make_inputs(a), (u / scale).astype(np.float32)
    data = ((x[:config["train"]], y[:config["train"]]), (x[config["train"]:], y[config["train"]:]))
    print(f"data: {len(a)} Burgers solutions on {config['grid']} points in {time.perf_counter() - start:.1f} s")

    state, test = trainer.fit(state, data)
    trainer.plots(state, *data[1], scale)
    print(f"{trained(state, first, time.perf_counter() - start)}; plots in {args.out}/")
    print(f"test relative L2: {test:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
