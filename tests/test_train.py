"""The FNO-1D training example: Burgers data against numpy, a few training steps, checkpoints, the CLI."""
import os
import sys

import numpy as np
import pytest

import hloforge as hf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
import burgers_data  # noqa: E402
import train_fno_1d  # noqa: E402

TINY = dict(train=40, test=10, grid=64, solve_grid=128, steps=200, modes=8, width=16, layers=2, epochs=3,
            batch=10, lr=3e-3, decay_every=50)


@pytest.fixture(autouse=True)
def _one_compile_per_program(monkeypatch):
    """The truncated programs at once (``hf.config.first_call = "steady"``): the default mode would
    compile each training step twice, with its FFTs first (test_first_call.py tests that mode)."""
    monkeypatch.setattr(hf.config, "first_call", "steady")


def test_burgers_solver_matches_numpy():
    a = burgers_data.initial_conditions(3, 128, seed=2)
    ours, reference = burgers_data.solve(a, 200), burgers_data.numpy_solve(a, 200)
    assert np.linalg.norm(ours - reference) / np.linalg.norm(reference) < 1e-4
    assert np.abs(a).max() > 10 * np.abs(ours).max() > 0  # (nu = 0.1 damps the field strongly by t = 1)


def test_initial_conditions_follow_the_covariance():
    a = burgers_data.initial_conditions(2000, 64, seed=0)
    coeff = np.fft.rfft(a.astype(np.float64)) / 64
    expected = 25.0 / (4 * np.pi ** 2 * np.arange(1, 4) ** 2 + 25.0)  # sqrt of the k = 1..3 eigenvalues
    np.testing.assert_allclose(np.sqrt(np.mean(np.abs(coeff[:, 1:4]) ** 2, axis=0)), expected, rtol=0.1)
    assert abs(coeff[:, 0]).max() < 1e-6  # mean zero


def _data(config):
    a, u = burgers_data.dataset(config["train"] + config["test"], config["grid"], config["solve_grid"],
                                config["steps"], seed=0)
    x, y = train_fno_1d.make_inputs(a), (u / u.std()).astype(np.float32)
    return (x[:config["train"]], y[:config["train"]]), (x[config["train"]:], y[config["train"]:])


def test_a_few_steps_lower_the_loss_and_checkpoints_round_trip(tmp_path):
    trainer = train_fno_1d.Trainer(dict(TINY), str(tmp_path))
    state, test = trainer.fit(trainer.init_state(), _data(TINY))
    assert state["epoch"] == 3 and len(state["losses"]) == 3
    assert state["losses"][-1] < state["losses"][0]
    assert 0 < test < 1.5
    loaded = trainer.load()
    assert loaded["epoch"] == 3 and loaded["losses"] == state["losses"]
    for got, want in zip(*(np.asarray(l) for l in (loaded["params"]["lift"][0], state["params"]["lift"][0]))):
        np.testing.assert_array_equal(got, want)
    # --resume: a trainer with more epochs continues from the checkpoint's epoch, not from zero
    more = train_fno_1d.Trainer(dict(TINY, epochs=4), str(tmp_path))
    state, _ = more.fit(more.load(), _data(TINY))
    assert state["epoch"] == 4 and len(state["losses"]) == 4
    with pytest.raises(SystemExit, match="another configuration"):
        train_fno_1d.Trainer(dict(TINY, width=8), str(tmp_path)).load()


def test_checkpoints_of_weights_as_planes_round_trip(tmp_path):
    trainer = train_fno_1d.Trainer(dict(TINY, planes=True), str(tmp_path))
    state = trainer.init_state()
    trainer.save(state)
    loaded = trainer.load()
    for got, want in zip(*(hf.tree_util.tree_leaves(s["params"]) for s in (loaded, state))):
        np.testing.assert_array_equal(got, want)
    assert isinstance(loaded["params"]["layers"][0]["spectral"], tuple)
    with pytest.raises(SystemExit, match="another configuration"):
        train_fno_1d.Trainer(dict(TINY), str(tmp_path)).load()


def test_the_command_line_prints_the_test_error_last(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # (the default --out is runs/fno_1d in the current directory)
    run = tmp_path / "runs" / "fno_1d"
    assert train_fno_1d.main(["--quick", "--epochs", "1"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-2].startswith("trained 1 epoch in ") and out[-2].endswith("plots in runs/fno_1d/"), out[-2]
    assert out[-1].startswith("test relative L2: ") and float(out[-1].split(": ")[1]) > 0
    for name in ("loss_curve.png", "prediction.png", "checkpoint.npz"):
        assert (run / name).exists()
    assert sorted(os.listdir(tmp_path)) == ["runs"]
    # --resume with nothing left to train says so, and trains (and solves) nothing
    assert train_fno_1d.main(["--quick", "--epochs", "1", "--resume", "--out", str(run)]) == 0
    assert capsys.readouterr().out == (f"nothing to do: {run}/ already holds all 1 epoch "
                                       f"(use --epochs N, N > 1, to train further)\n")
    assert train_fno_1d.main(["--quick", "--epochs", "2", "--resume"]) == 0
    assert "trained epoch 2 in " in capsys.readouterr().out
    with np.load(run / "checkpoint.npz") as data:
        assert int(data["epoch"]) == 2 and len(data["losses"]) == 2
    assert train_fno_1d.main(["--quick", "--epochs", "1", "--resume"]) == 0
    assert "already holds 2 epochs (--epochs 1)" in capsys.readouterr().out
