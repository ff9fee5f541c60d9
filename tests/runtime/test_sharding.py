"""SPMD through XLA's partitioner: jax Mesh/NamedSharding/PartitionSpec on hf.jit and
Module.compile. The 8-device checks run in one subprocess (tests/runtime/sharding_checks.py) with
XLA_FLAGS=--xla_force_host_platform_device_count=8, which must be set before jax starts."""
import os
import sys

import numpy as np
import pytest

import hloforge as hf
from helpers import run_on_eight_devices

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sharding_checks  # noqa: E402  (only for the names of its checks)


@pytest.fixture(scope="module")
def results():
    return run_on_eight_devices(os.path.join(HERE, "sharding_checks.py"))


@pytest.mark.parametrize("name", list(sharding_checks.CHECKS))
def test_eight_devices(results, name):
    result = results[name]
    assert result.get("ok"), result.get("error")


def _f(a):
    return a + 1.0


def test_partition_spec_needs_a_mesh():
    with pytest.raises(ValueError, match="shardings given as PartitionSpecs need a mesh: pass mesh=..."):
        hf.jit(_f, in_shardings=hf.P("x"))(np.ones(2, np.float32))


def test_device_and_shardings_exclude_each_other():
    mesh = hf.Mesh(np.array(hf.devices("cpu")[:1]), ("x",))
    with pytest.raises(ValueError, match="jit: pass either device or shardings .* got device='cpu'"):
        hf.jit(_f, in_shardings=hf.P("x"), mesh=mesh, device="cpu")
    m = hf.trace(_f, np.ones(2, np.float32))
    with pytest.raises(ValueError, match="compile: pass either device or shardings .* got device='cpu'"):
        m.compile("cpu", in_shardings=hf.P("x"), mesh=mesh)


def test_sharding_type_and_prefix_errors():
    mesh = hf.Mesh(np.array(hf.devices("cpu")[:1]), ("x",))
    x = np.ones((2, 2), np.float32)
    with pytest.raises(TypeError, match="in_shardings\\[0\\]: expected a NamedSharding, PartitionSpec or None, got str 'x'"):
        hf.jit(_f, in_shardings=("x",), mesh=mesh)(x)
    with pytest.raises(ValueError, match="in_shardings .* is not a pytree prefix of the 1 value"):
        hf.jit(_f, in_shardings=(hf.P("x"), hf.P("x")), mesh=mesh)(x)
    with pytest.raises(ValueError, match="in_shardings\\[0\\]: .* has 3 entries for a value of shape \\[2, 2\\]"):
        hf.jit(_f, in_shardings=hf.P("x", None, None), mesh=mesh)(x)
    with pytest.raises(TypeError, match="mesh must be a jax.sharding.Mesh, got str"):
        hf.jit(_f, in_shardings=hf.P("x"), mesh="x")(x)
    other = hf.Mesh(np.array(hf.devices("cpu")[:1]), ("y",))
    with pytest.raises(ValueError, match="all shardings must use one mesh"):
        hf.jit(_f, in_shardings=hf.NamedSharding(other, hf.P("y")), mesh=mesh)(x)


def test_one_device_mesh_runs_in_process():
    mesh = hf.Mesh(np.array(hf.devices("cpu")[:1]), ("x",))
    y = hf.jit(_f, in_shardings=hf.P("x"), mesh=mesh)(np.arange(4, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(y), np.arange(4) + 1)
