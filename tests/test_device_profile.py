"""benchmarks/device_profile.py (where a program's device time goes, issues 46 and 47) reads a jax.profiler
trace on the CPU too, and sorts XLA's ops of a TPU profile by kind."""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import device_profile  # noqa: E402

# lines of a TPU v5e profile of the FNO-2D (2026-12-07), as op_times keys them
TPU_OPS = {
    "%fusion.9 = f32[8,32,64,64]{3,2,1,0:T(8,128)S(1)} fusion(%fusion.27, %fusion.51), kind=kOutput, "
    "calls=%fused_computation.14": [32.59, 1],
    "%fusion.13 = f32[8,32,64,64]{3,2,1,0} fusion(%a, %b), kind=kOutput, calls=%fused_computation.15": [32.59, 1],
    "%copy.125 = f32[8,32,12,64,2]{3,1,4,2,0:T(8,128)S(1)} copy(%fusion.49)": [13.72, 1],
    '%custom-call.6 = f32[2,32,32,12,12]{2,1,4,3,0} custom-call(%p), custom_call_target="X64SplitLow"': [7.91, 1],
    "%fusion.5 = f32[8,64,64]{2,1,0} fusion(%a), kind=kLoop, calls=%fused_computation.5": [11.12, 1],
}


def test_ops_of_a_tpu_profile_are_grouped_by_kind():
    table = {text: [us, count, text] for text, (us, count) in TPU_OPS.items()}
    kinds = device_profile.by_kind(table)
    assert kinds == {"fusion kOutput": (65.18, 2), "copy": (13.72, 1), "custom-call X64SplitLow": (7.91, 1),
                     "fusion kLoop": (11.12, 1)}


def test_a_cpu_trace_gives_xlas_ops_and_no_framework_events():
    f = jax.jit(lambda x: jnp.sin(x) @ x)
    module, table = device_profile.op_times(f, (jnp.ones((64, 64)),), calls=2)
    assert module is None  # (XLA:CPU's trace has no module line)
    assert table and all(us >= 0 and count >= 1 for us, count, _ in table.values())
    assert not [name for name in table if "::" in name or name.startswith("end:")]
    assert {device_profile.kind(name) for name in table} & {"fusion", "dot", "sine"}


def test_the_fno_cases_profile_both_frameworks_at_a_small_size(capsys):
    totals = device_profile.main(["--device", "cpu", "--size", "1,16,4,3", "--calls", "1"])
    assert set(totals) == {"forward", "value_and_grad"}
    assert all(t > 0 for row in totals.values() for t in row.values())
    out = capsys.readouterr().out
    assert "FNO-2D b1 16² width 4 modes 3, forward" in out and "the call" in out


def test_the_step_cases_profile_jax_the_model_through_hf_and_the_whole_step_through_hf(capsys):
    totals = device_profile.main(["--device", "cpu", "--size", "1,16,4,3", "--calls", "1", "--step"])
    assert set(totals["step"]) == {"jax", "hf", "hf-whole"} and all(t > 0 for t in totals["step"].values())
    assert "FNO-2D b1 16² width 4 modes 3, step" in capsys.readouterr().out


def test_the_three_steps_compute_the_same_step():
    cases = device_profile.step_cases(2, 16, 4, 3)
    (want_params, _, want_loss), *others = [fn(*args) for fn, args in cases.values()]
    for params, _, loss in others:
        np.testing.assert_allclose(loss, want_loss, rtol=1e-5)
        for got, want in zip(jax.tree.leaves(params), jax.tree.leaves(want_params)):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


def test_the_steps_with_weights_as_planes_agree_and_start_from_the_complex_loss():
    # (Adam normalizes each plane by itself where a complex weight is normalized by its modulus: the two
    # steps' updates differ by design, their losses do not)
    cases = device_profile.step_cases(2, 16, 4, 3, planes=True)
    _, _, complex_loss = cases["step jax"][0](*cases["step jax"][1])
    (want_params, _, want_loss), (params, _, loss) = [fn(*args) for fn, args in
                                                       (cases["step jax-planes"], cases["step hf-planes"])]
    np.testing.assert_allclose(want_loss, complex_loss, rtol=1e-5)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-5)
    for got, want in zip(jax.tree.leaves(params), jax.tree.leaves(want_params)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    assert all(leaf.dtype == np.float32 for leaf in jax.tree.leaves(params))


@pytest.mark.parametrize("argv, message", [
    (["--size", "8,64"], "expected batch,grid,width,modes (four positive integers), got '8,64'"),
    (["--size", "8,64,0,12"], "got '8,64,0,12'"),
    (["--calls", "-3"], "expected a positive integer, got '-3'"),
    (["--device", "npu"], "invalid choice: 'npu'"),
    (["--planes"], "--planes adds cases to --step's table: pass --step too"),
])
def test_bad_arguments_are_one_line_and_exit_status_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        device_profile.main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2 and message in err[-1], err


def test_host_times_split_a_call_into_its_enqueue_and_its_waits(capsys):
    times = device_profile.host_times(jax.jit(lambda x: x * 2), (jnp.ones(8),), rounds=2, deep=4)
    assert set(times) == {"enqueue", "waited", "queued 5", "queued 40"} and all(t > 0 for t in times.values())
    assert times["enqueue"] <= times["queued 40"]
    totals = device_profile.main(["--device", "cpu", "--size", "1,16,4,3", "--calls", "1", "--host"])
    assert set(totals["host"]) == {"forward jax", "forward hf", "value_and_grad jax", "value_and_grad hf"}
    out = capsys.readouterr().out
    assert "forward: µs per call from the host, and the device's time" in out and "queued 40" in out
