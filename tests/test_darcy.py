"""The FNO-2D Darcy example: the CG solver against a dense solve, training steps against pure JAX,
the command lines (data cache, checkpoints, --resume)."""
import os
import re
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
sys.path.insert(0, os.path.join(HERE, "..", "benchmarks"))
import darcy_data  # noqa: E402
import train  # noqa: E402  (benchmarks/train.py: the pure-JAX twin)
import train_fno_darcy  # noqa: E402

TINY = dict(train_fno_darcy.QUICK, train=8, test=4, resolution=16, grid=16, modes=4, width=8, layers=2, padding=2,
            epochs=1, batch=4)
TINY_ARGS = ["--quick", "--train", "8", "--test", "4", "--batch", "4", "--resolution", "16", "--grid", "16",
             "--modes", "4", "--width", "8", "--layers", "2", "--padding", "2"]


@pytest.fixture(autouse=True)
def _one_compile_per_program(monkeypatch):
    """The truncated programs at once (``hf.config.first_call = "steady"``): the default mode would
    compile each training step twice, with its FFTs first (test_first_call.py tests that mode)."""
    monkeypatch.setattr(hf.config, "first_call", "steady")


@pytest.mark.parametrize("precision", darcy_data.PRECISIONS)
def test_cg_matches_the_dense_solve(precision):
    a = darcy_data.coefficients(3, 16, seed=1)
    u, residual, steps = darcy_data.solve(a, precision=precision)
    assert u.shape == (3, 16, 16) and u.dtype == np.float64 and steps > 0
    assert residual.max() < 1e-9
    for i in range(3):
        reference = darcy_data.dense_solve(a[i])
        assert np.linalg.norm(u[i] - reference) / np.linalg.norm(reference) < 1e-8
    assert not np.any(u[:, 0]) and not np.any(u[:, :, -1])  # u = 0 on the boundary
    assert u[:, 1:-1, 1:-1].min() > 0  # (a positive source: a positive solution)


def test_the_preconditioner_inverts_the_unit_coefficient_operator():
    ones = np.ones((2, 13, 13))
    ax, ay = darcy_data._faces(ones)
    u = np.random.default_rng(0).standard_normal((2, 11, 11))
    applied = np.asarray(hf.jit(darcy_data._apply)(u, ax, ay))
    np.testing.assert_allclose(np.asarray(hf.jit(darcy_data._precondition)(applied)), u, rtol=1e-5, atol=1e-5)


def test_cg_steps_do_not_grow_with_the_grid():
    """The preconditioned operator's condition number is at most 12 / 3 on every grid: a finer grid takes
    as many CG steps (23 and 24 here; Jacobi's preconditioner took 83 and 658)."""
    steps = [darcy_data.solve(darcy_data.coefficients(2, grid, seed=5), 1e-8)[2] for grid in (17, 129)]
    assert max(steps) <= 40 and steps[1] <= steps[0] + 8, steps


def test_the_coefficient_is_a_thresholded_cosine_series():
    resolution = 9
    z = darcy_data.gaussian_field(2, resolution, seed=3)
    xi = np.asarray(hf.random.normal(hf.random.key(3), (2, resolution, resolution), np.float32))
    nodes = np.cos(np.pi * np.outer(np.arange(resolution) / (resolution - 1), np.arange(resolution)))
    expected = np.einsum("ik,nkl,jl->nij", nodes, xi * darcy_data._field_std(resolution), nodes)
    assert z.dtype == np.float32  # (a TPU has no complex128 for the float64 series' FFTs)
    np.testing.assert_allclose(z, expected, atol=2e-6 * np.abs(expected).max())
    a = darcy_data.coefficients(20, 32, seed=0)
    assert set(np.unique(a)) == {3.0, 12.0} and 0.3 < (a == 12).mean() < 0.7


def test_dataset_is_solved_on_the_grid_and_subsampled(capsys, tmp_path):
    assert darcy_data.main(["--n", "3", "--grid", "23", "--resolutions", "12,23", "--seed", "2",
                            "--out", str(tmp_path)]) == 0
    line = capsys.readouterr().out.splitlines()[0]
    assert line.startswith("relative residual: ") and float(line.split()[2]) <= 1e-6
    assert "solved on 23x23 in mixed precision" in line
    with np.load(tmp_path / "darcy_r23_g23_n3_s2.npz") as fine, np.load(tmp_path / "darcy_r12_g23_n3_s2.npz") as coarse:
        assert fine["u"].shape == (3, 23, 23) and coarse["a"].shape == (3, 12, 12) and coarse["u"].dtype == np.float32
        np.testing.assert_array_equal(coarse["u"], fine["u"][:, ::2, ::2])  # (every 2nd node of the solve)
        np.testing.assert_array_equal(coarse["a"], fine["a"][:, ::2, ::2])
    assert darcy_data.stride(421, 85) == 5 and darcy_data.stride(421, 141) == 3 and darcy_data.stride(421, 421) == 1


def test_the_data_step_refuses_bad_input(capsys):
    with pytest.raises(ValueError, match=r"a must be \(n, R, R\) with R >= 3, got shape \(4, 4\)"):
        darcy_data.solve(np.ones((4, 4)))
    with pytest.raises(ValueError, match="a must be finite and positive, got min -1.0"):
        darcy_data.solve(-np.ones((1, 4, 4)))
    with pytest.raises(ValueError, match=r"precision must be one of \('mixed', 'float64'\), got 'half'"):
        darcy_data.solve(np.ones((1, 4, 4)), precision="half")
    with pytest.raises(ValueError, match=r"a 23-node grid does not subsample to 10 nodes"):
        darcy_data.stride(23, 10)
    with pytest.raises(SystemExit, match="2"):
        darcy_data.main(["--grid", "23", "--resolutions", "10"])
    assert "a 23-node grid does not subsample to 10 nodes" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="2"):
        darcy_data.main(["--resolutions", "85,x"])
    assert "expected comma-separated integers, got '85,x'" in capsys.readouterr().err


def test_mixed_precision_reaches_what_float32_alone_cannot():
    """Rounding the float64 solution to float32 leaves a residual far above the data's 1e-6 (the reason for
    the refinement); the mixed solve reaches the float64 solve's solution."""
    a = darcy_data.coefficients(2, 41, seed=4)
    u64, _, _ = darcy_data.solve(a, precision="float64")
    u, residual, _ = darcy_data.solve(a, tol=1e-8)
    assert residual.max() <= 1e-8
    assert np.linalg.norm(u - u64) / np.linalg.norm(u64) < 1e-7
    ax, ay = darcy_data._faces(a)
    b = np.full((2, 39, 39), 1 / 40 ** 2)

    def residual_of(u):
        padded = np.pad(u[:, 1:-1, 1:-1], [(0, 0), (1, 1), (1, 1)])
        fx, fy = ax * np.diff(padded[:, :, 1:-1], axis=1), ay * np.diff(padded[:, 1:-1], axis=2)
        return np.linalg.norm(b - (fx[:, :-1] - fx[:, 1:] + fy[:, :, :-1] - fy[:, :, 1:])) / np.linalg.norm(b)
    assert residual_of(u64) < 1e-8 < 1e-6 < residual_of(u64.astype(np.float32).astype(np.float64))


def _steps(step, params, state, batches):
    losses = []
    for x, y in batches:
        params, state, loss = step(params, state, x, y)
        losses.append(float(loss))
    return np.array(losses)


def test_the_corrections_run_on_a_device_other_than_the_hosts():
    """On a TPU the float32 corrections run on the chip and the float64 refinement on the host's CPU: the
    residual that crosses must go to the chip (mixing the two devices' arrays in one call is refused). A
    second CPU device stands in for the chip here."""
    code = textwrap.dedent(f"""
        import sys, jax, numpy as np
        sys.path.insert(0, {os.path.join(HERE, "..", "examples")!r})
        import darcy_data
        darcy_data._correction_device = lambda: jax.devices("cpu")[1]
        u, residual, steps = darcy_data.solve(darcy_data.coefficients(2, 12, seed=1))
        print(float(residual.max()), steps)
        """)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    residual, steps = out.stdout.split()
    assert float(residual) < 1e-9 and int(steps) > 0


@pytest.mark.parametrize("planes", [False, True])
def test_training_steps_match_jax(planes):
    config = dict(TINY, planes=planes)
    batches = train.darcy_batches(config, 3)
    trainer = train_fno_darcy.Trainer(config, "unused")
    jax_step = train.jax_darcy_trainer(config, trainer.optimizer)
    params = train.darcy_params(trainer)
    jparams = jax.tree_util.tree_map(jnp.asarray, params)
    ours = _steps(trainer.step, params, trainer.optimizer.init(params), batches)
    theirs = _steps(jax_step, jparams, trainer.optimizer.init(jparams), batches)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    with jax.enable_x64(True):
        params64 = train.darcy_params(trainer, np.float64)
        wide = [(x.astype(np.float64), y.astype(np.float64)) for x, y in batches]
        ours = _steps(trainer.step, params64, trainer.optimizer.init(params64), wide)
        jparams64 = jax.tree_util.tree_map(jnp.asarray, params64)
        theirs = _steps(train.jax_darcy_trainer(config, trainer.optimizer), jparams64,
                        trainer.optimizer.init(jparams64), wide)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10)
    assert ours[-1] < ours[0]


def test_the_benchmarks_planes_option_is_one_of_darcys(capsys):
    with pytest.raises(SystemExit, match="2"):
        train.main(["--planes"])
    assert "error: --planes is an option of --darcy" in capsys.readouterr().err


def test_the_planes_option_trains_real_weights_from_the_same_start():
    batches = train.darcy_batches(TINY, 3)
    trainers = [train_fno_darcy.Trainer(dict(TINY, planes=planes), "unused") for planes in (False, True)]
    states = [trainer.init_state() for trainer in trainers]
    spectral = states[1]["params"]["layers"][0]["spectral"]
    assert isinstance(spectral, tuple) and all(plane.dtype == np.float32 for plane in spectral)
    complex_losses, plane_losses = (_steps(t.step, s["params"], s["opt"], batches) for t, s in zip(trainers, states))
    np.testing.assert_allclose(plane_losses[0], complex_losses[0], rtol=1e-6)  # (the same model before a step)
    assert plane_losses[-1] < plane_losses[0]
    counts = trainers[1].op_counts(states[1], np.zeros((4, 3, 16, 16), np.float32), np.ones((4, 16, 16), np.float32))
    assert counts["stablehlo.fft"] == (8, 0)


def test_the_training_step_keeps_no_fft():
    trainer = train_fno_darcy.Trainer(TINY, "unused")
    counts = trainer.op_counts(trainer.init_state(), np.zeros((4, 3, 16, 16), np.float32),
                               np.ones((4, 16, 16), np.float32))
    # forward and backward: an rfft and an irfft per layer each, all truncated into DFT contractions
    assert counts["stablehlo.fft"] == (8, 0)
    assert counts["stablehlo.dot_general"][1] > counts["stablehlo.dot_general"][0]


def test_the_command_line_caches_data_checkpoints_and_resumes(tmp_path, capsys):
    assert train_fno_darcy.main(TINY_ARGS + ["--epochs", "1", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0].startswith("relative residual: ")
    assert "stablehlo.fft 8 -> 0" in "\n".join(out)
    assert out[-1].startswith("test relative L2: ") and 0 < float(out[-1].split(": ")[1]) < 2
    for name in ("darcy_r16_g16_n12_s0.npz", "checkpoint.npz", "loss_curve.png", "prediction.png"):
        assert (tmp_path / name).exists(), name
    assert train_fno_darcy.main(TINY_ARGS + ["--epochs", "2", "--resume", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert "from" in out[0] and out[-1].startswith("test relative L2: ")  # (the cached data)
    with np.load(tmp_path / "checkpoint.npz") as data:
        assert int(data["epoch"]) == 2 and len(data["losses"]) == 2
    with pytest.raises(SystemExit, match="another configuration"):
        train_fno_darcy.main(TINY_ARGS + ["--width", "4", "--resume", "--out", str(tmp_path)])
    with pytest.raises(SystemExit, match="another configuration"):  # (planes are another parameter tree)
        train_fno_darcy.main(TINY_ARGS + ["--planes", "--resume", "--out", str(tmp_path)])


def test_the_data_step_writes_the_file_training_reads(tmp_path, capsys, monkeypatch):
    """darcy_data.py's default file is the one train_fno_darcy.py looks for (runs/darcy/ in the
    current directory): the data step first, and training solves nothing; a finished run's --resume
    says there is nothing to do."""
    monkeypatch.chdir(tmp_path)
    assert darcy_data.main(["--n", "12", "--grid", "16", "--resolutions", "16", "--seed", "0"]) == 0
    path = os.path.join("runs", "darcy", "darcy_r16_g16_n12_s0.npz")
    assert capsys.readouterr().out.splitlines()[-1] == f"wrote {path}: a and u of shape (12, 16, 16)"
    assert train_fno_darcy.main(TINY_ARGS + ["--epochs", "1"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0] == "data: 12 Darcy solutions (16x16) at 16 from runs/darcy"  # (no "relative residual": not solved)
    assert out[-2].startswith("trained 1 epoch in ") and out[-2].endswith("plots in runs/darcy/")
    assert sorted(os.listdir(tmp_path / "runs" / "darcy")) == [
        "checkpoint.npz", "darcy_r16_g16_n12_s0.npz", "loss_curve.png", "prediction.png"]
    assert sorted(os.listdir(tmp_path)) == ["runs"]
    assert train_fno_darcy.main(TINY_ARGS + ["--epochs", "1", "--resume"]) == 0
    assert capsys.readouterr().out == ("nothing to do: runs/darcy/ already holds all 1 epoch "
                                       "(use --epochs N, N > 1, to train further)\n")
    # another seed is another file; a file of other samples is refused, not trained on
    assert not os.path.exists(train_fno_darcy.data_path(dict(TINY, seed=1), os.path.join("runs", "darcy")))
    small = dict(TINY, train=4, test=2)
    os.replace(path, train_fno_darcy.data_path(small, os.path.join("runs", "darcy")))
    with pytest.raises(SystemExit, match=r"holds samples of shape \(12, 16, 16\), not \(6, 16, 16\)"):
        train_fno_darcy.load_data(small, os.path.join("runs", "darcy"), (16,))


def test_the_trained_model_is_tested_zero_shot_on_finer_grids(tmp_path, capsys):
    args = TINY_ARGS + ["--grid", "31", "--epochs", "1", "--out", str(tmp_path)]
    assert train_fno_darcy.main(args) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert "subsampled to 16, 31" in out[0]
    zero_shot = re.fullmatch(r"zero-shot test relative L2 at 31x31: (\S+) \(padding 5\)", out[-2])
    assert zero_shot and 0 < float(zero_shot.group(1)) < 2  # (padding 2 at 16 keeps its size at 31: 5)
    assert [train_fno_darcy.padding_at(train_fno_darcy.FULL, r) for r in (85, 141, 211, 421)] == [9, 16, 24, 49]
    assert sorted(p.name for p in tmp_path.glob("darcy_*")) == ["darcy_r16_g31_n12_s0.npz", "darcy_r31_g31_n12_s0.npz"]
    assert train_fno_darcy.zero_shot_resolutions(train_fno_darcy.FULL) == (141, 211, 421)
    with pytest.raises(SystemExit, match="2"):
        train_fno_darcy.main(TINY_ARGS + ["--zero-shot", "20"])
    assert "a 16-node grid does not subsample to 20 nodes" in capsys.readouterr().err


def test_the_command_line_refuses_modes_the_grid_cannot_hold(capsys):
    with pytest.raises(SystemExit, match="2"):
        train_fno_darcy.main(["--quick", "--resolution", "16", "--padding", "2", "--modes", "10"])
    assert "need modes <= (resolution + padding) // 2 = 9" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="2"):
        train_fno_darcy.main(["--quick", "--weight-decay", "-1"])
    assert "--lr must be positive and --weight-decay not negative, got 0.003 and -1.0" in capsys.readouterr().err


def test_the_precision_option_reaches_every_contraction_of_the_step(capsys):
    trainer = train_fno_darcy.Trainer(dict(TINY, precision="highest"), "unused")
    state = trainer.init_state()
    text = trainer.step.lower(state["params"], state["opt"], np.zeros((4, 3, 16, 16), np.float32),
                              np.ones((4, 16, 16), np.float32)).text
    dots = [line for line in text.splitlines() if "stablehlo.dot_general" in line]
    assert dots and all("HIGHEST" in line for line in dots)
    with pytest.raises(SystemExit, match="2"):
        train_fno_darcy.main(TINY_ARGS + ["--precision", "max"])
    assert "--precision must be default, high or highest, got 'max'" in capsys.readouterr().err
