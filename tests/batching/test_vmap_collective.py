"""Batching rules of the collectives (frontend/batching/collective.py): the 8-device checks run in one
subprocess (tests/batching/vmap_collective_checks.py: the vmapped program against the per-example program run
on each example, bit for bit); the IR of the rules and the operand-less ops in process."""
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import hloforge as hf
from hloforge import ops
from hloforge.frontend.registry import OPS
from helpers import run_on_eight_devices

HERE = os.path.dirname(os.path.abspath(__file__))
ALL = [list(range(8))]
CH = dict(channel_handle=(1, 1), use_global_device_ids=True)


@pytest.fixture(scope="module")
def results():
    return run_on_eight_devices(os.path.join(HERE, "vmap_collective_checks.py"))


def test_eight_devices(results):
    failed = {k: v["error"] for k, v in results.items() if not v.get("ok")}
    assert len(results) == 22 and not failed, failed


def _text(fn, *specs, in_axes=0, out_axes=0):
    return hf.trace(hf.vmap(fn, in_axes=in_axes, out_axes=out_axes), *specs).text


def test_variadic_all_reduce_and_broadcast_keep_batch_dims():
    """Every element alike: the batch dims stay where they are (collective_broadcast does not compile on
    XLA:CPU: IR only)."""
    fn = lambda x, y: (*ops.all_reduce([x, y], ALL, **CH), ops.collective_broadcast(x, ALL, channel_handle=(1, 1)))
    text = _text(fn, hf.ShapeDtype((3, 2), np.float32), hf.ShapeDtype((4, 2), np.float32), in_axes=(1, None),
                 out_axes=(1, None, 1))
    assert "stablehlo.transpose" not in text, text
    assert "(tensor<3x2xf32>, tensor<4x2xf32>) -> (tensor<3x2xf32>, tensor<4x2xf32>)" in text, text
    assert "stablehlo.collective_broadcast" in text, text


def test_ids_are_never_batched():
    """partition_id and replica_id read no operand: a vmapped program keeps them unbatched (the rule raises)."""
    text = _text(lambda x: (ops.partition_id(), x), hf.ShapeDtype((3,), np.float32), out_axes=(None, 0))
    assert "stablehlo.partition_id" in text
    for name in ("stablehlo.partition_id", "stablehlo.replica_id"):
        with pytest.raises(RuntimeError, match="take no operands and are never batched"):
            OPS[name].batch(2, [], [])


@settings(max_examples=10, deadline=None)
@given(rank=st.integers(1, 3), axis=st.integers(0, 3), dim=st.integers(0, 2), seed=st.integers(0, 3))
def test_hypothesis_dims_shift_past_the_batch(rank, axis, dim, seed):
    axis, dim = min(axis, rank), min(dim, rank - 1)
    shape = tuple(8 * (1 + (seed + k) % 2) for k in range(rank))
    batched = shape[:axis] + (3,) + shape[axis:]
    out = hf.vmap(lambda x: (ops.all_gather(x, dim, ALL, **CH), ops.reduce_scatter(x, dim, ALL, **CH),
                             ops.all_to_all(x, dim, rank - 1, 8, ALL, channel_handle=(1, 1))), in_axes=axis)
    got = hf.trace(out, hf.ShapeDtype(batched, np.float32))
    gathered, scattered, exchanged = (list(shape) for _ in range(3))
    gathered[dim] *= 8
    scattered[dim] //= 8
    exchanged[dim] //= 8
    exchanged[rank - 1] *= 8
    results = got.text.split("->")[1].split("{")[0].replace("(", "").replace(")", "").split(",")
    want = [f"tensor<{'x'.join(map(str, [3] + s))}xf32>" for s in (gathered, scattered, exchanged)]
    assert [r.strip() for r in results] == want, got.text
