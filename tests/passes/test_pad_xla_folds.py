"""passes/pad.py's ``makes_xla_fold``: a pad (or a slice of one) that holds no element of its run-time
operand becomes a broadcast of its constant padding value only where no op below would then have
constant operands only. XLA folds such an op with its HLO evaluator, which computes complex division
(and library functions, signed zeros) otherwise than its kernels; the optimize sweep
(benchmarks/optimize_sweep.py, seed 279) found ``(-1.5-0j) / (1.5+0j)`` turned from -1+0j into -1-0j."""
from __future__ import annotations

import numpy as np
import pytest

import hloforge as hf
from hloforge import ops

C128 = np.complex128
X = np.array([complex(-0.0, -0.0), complex(np.nan, 0.0), 2 - 1j], C128)


def _crop_divided(x):
    p = ops.pad(x, complex(1.5), (2,), (-3,))  # (two elements, both padding)
    return ops.divide(ops.neg(p), ops.constant(np.full(2, 1.5 + 0j, C128)))


def _slice_divided(x):
    p = ops.slice(ops.pad(x, complex(1.5), (0,), (4,)), (4,), (6,))  # (all padding)
    return ops.divide(ops.neg(p), ops.constant(np.full(2, 1.5 + 0j, C128)))


def _run_time_divisor(x):
    """seed 279: XLA rewrites x / c as x * (1/c) once the divisor is a constant: (-1.5-0j) * (1/1.5) is -1-0j."""
    p = ops.pad(x, complex(1.5), (2,), (-3,))
    return ops.divide(ops.neg(ops.slice(x, (0,), (2,))) * 0 + ops.constant(np.full(2, -1.5 + 0j, C128)), p)


@pytest.mark.parametrize("fn,pattern", [(_crop_divided, "negative_pad"), (_slice_divided, "slice_of_pad"),
                                        (_run_time_divisor, "negative_pad")])
def test_an_all_padding_value_feeding_a_computation_stays_a_run_time_value(fn, pattern):
    m = hf.trace(fn, hf.ShapeDtype((3,), C128))
    want = np.asarray(m.compile()(X))
    report = m.optimize(finite_math=False, debug=True)
    assert report.fired[pattern] == 0
    assert "makes_xla_fold" in report.explain()
    assert np.asarray(m.compile()(X)).tobytes() == want.tobytes(), m


@pytest.mark.parametrize("fn,pattern", [
    (lambda x: ops.reshape(ops.pad(x, complex(1.5), (2,), (-3,)), (1, 2)), "negative_pad"),
    (lambda x: ops.concatenate([ops.slice(ops.pad(x, complex(1.5), (0,), (4,)), (4,), (6,)), x], 0), "slice_of_pad"),
])
def test_an_all_padding_value_that_only_moves_becomes_a_broadcast(fn, pattern):
    m = hf.trace(fn, hf.ShapeDtype((3,), C128))
    want = np.asarray(m.compile()(X))
    assert m.optimize(finite_math=False).fired[pattern] == 1
    assert "stablehlo.pad" not in m.op_counts()
    assert np.asarray(m.compile()(X)).tobytes() == want.tobytes(), m
