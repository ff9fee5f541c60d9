"""Collectives for manual-SPMD code: the 8-device checks run in one subprocess
(tests/collective_checks.py) with XLA_FLAGS=--xla_force_host_platform_device_count=8; the
errors in process."""
import os
import sys

import numpy as np
import pytest

import hloforge as hf
from hloforge import ops
from helpers import run_on_eight_devices

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tests/, where collective_checks.py is
sys.path.insert(0, HERE)
import collective_checks  # noqa: E402  (only for the names of its checks)


@pytest.fixture(scope="module")
def results():
    return run_on_eight_devices(os.path.join(HERE, "collective_checks.py"))


@pytest.mark.parametrize("name", list(collective_checks.CHECKS))
def test_eight_devices(results, name):
    result = results[name]
    assert result.get("ok"), result.get("error")


X = hf.ShapeDtype((8, 4), np.float32)
G = [[0, 1, 2, 3], [4, 5, 6, 7]]


@pytest.mark.parametrize("fn,error,match", [
    (lambda x: ops.all_reduce(x, [[0, 1], [2]]), ValueError,
     r"all_reduce: replica_groups \[\[0, 1\], \[2\]\] must be non-empty groups of one size"),
    (lambda x: ops.all_reduce(x, [[0, 0]]), ValueError, r"replica_groups \[\[0, 0\]\] must hold distinct ids >= 0"),
    (lambda x: ops.all_reduce(x, "01"), TypeError, r"all_reduce: replica_groups must be a sequence of sequences of ints"),
    (lambda x: ops.all_reduce(x, G, computation="sum"), ValueError,
     r"all_reduce: computation 'sum' is not one of add, mul, max, min, and, or or a callable"),
    (lambda x: ops.all_reduce(x, G, computation="or"), TypeError,
     r"all_reduce: computation 'or' needs bool or integer operands, got float32"),
    (lambda x: ops.all_reduce([x, ops.convert(x, np.int32)], G), TypeError, r"all_reduce: operands .* must share a dtype"),
    (lambda x: ops.all_reduce(x, G, channel_handle=1), TypeError,
     r"all_reduce: channel_handle must be a \(handle, type\) pair of ints or None, got 1"),
    (lambda x: ops.all_gather(x, 2, G), ValueError, r"all_gather: all_gather_dim \[2\] out of range for rank 2"),
    (lambda x: ops.reduce_scatter(x, 1, [list(range(8))]), ValueError,
     r"reduce_scatter: dimension 1 of Tensor\(shape=\(8, 4\), dtype=float32\) is not divisible by the group size 8"),
    (lambda x: ops.all_to_all(x, 0, 1, 2, G), ValueError, r"all_to_all: split_count 2 must equal the group size 4"),
    (lambda x: ops.all_to_all(x, 1, 0, 8, [list(range(8))]), ValueError,
     r"all_to_all: dimension 1 of .* is not divisible by split_count 8"),
    (lambda x: ops.collective_permute(x, [(0, 1), (0, 2)]), ValueError,
     r"collective_permute: source_target_pairs \[\[0, 1\], \[0, 2\]\] must have distinct sources"),
    (lambda x: ops.collective_permute(x, [(0, 1, 2)]), ValueError,
     r"collective_permute: source_target_pairs must be \(source, target\) int pairs"),
    (lambda x: ops.collective_broadcast(x, []), ValueError, r"collective_broadcast: replica_groups \[\] must be non-empty"),
])
def test_errors(fn, error, match):
    with pytest.raises(error, match=match):
        hf.trace(fn, X)
