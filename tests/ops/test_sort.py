"""hloforge.ops, sort family (frontend/ops/sort.py): ops.sort against numpy (NaNs, infinities, bools,
complex numbers, descending), several operands with a callable comparator, its registration as one
op, and its validation messages."""
import numpy as np
import pytest

import hloforge as hf
from hloforge import ops
from hloforge.frontend import registry
from helpers import assert_close, random, run
from ops_helpers import F32


def test_sort_matches_numpy():
    nan, inf = np.nan, np.inf
    xf = np.array([[3, nan, -1, 0, 2, inf, -inf, 2], [nan, 1, nan, -5, 0.5, 7, 1, -1]], np.float32)
    xi, xb = random((3, 6), np.int8), random((2, 5), np.bool_)
    xc = np.array([[1 + 2j, 1 - 1j, -3, 1 + 2j, 5j, complex(nan, 1), complex(1, nan), 2j]], np.complex64)
    got = run(lambda f, i, b, c: (ops.sort(f, 1), ops.sort(f, 1, "GT"), ops.sort(i, 0), ops.sort(b, 1),
                                  ops.sort(c, 1)), xf, xi, xb, xc)
    expected = [np.sort(xf, 1), np.sort(xf, 1)[:, ::-1], np.sort(xi, 0), np.sort(xb, 1), np.sort(xc, 1)]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
        assert g.dtype == e.dtype


def test_sort_several_operands_and_a_comparator():
    x = np.array([[3, -1, 2, -3, 1, -2, 1, 3]], np.int32)

    def fn(a):
        index = ops.iota(a.shape, np.int32, 1)
        values, order = ops.sort([a, index], 1, is_stable=True)
        by_magnitude = ops.sort(a, 1, lambda p, q: ops.compare(ops.abs(p), ops.abs(q), "LT"), is_stable=True)
        return values, order, by_magnitude

    values, order, by_magnitude = run(fn, x)
    assert_close(values, np.sort(x, 1))
    assert_close(order, np.argsort(x, 1, kind="stable").astype(np.int32))
    assert_close(by_magnitude, np.take_along_axis(x, np.argsort(np.abs(x), 1, kind="stable"), 1))


def test_sort_is_registered_and_one_op():
    assert registry.lookup("stablehlo.sort").builder is ops.sort.__wrapped__
    counts = hf.trace(lambda a: ops.sort(a, 0), F32).op_counts()
    assert counts["stablehlo.sort"] == 1


# ---------------------------------------------------------------- validation messages

SORT_ERRORS = [
    (lambda a: ops.sort([a, a[0]], 0), ValueError,
     r"operand 1 shape \(3,\) differs from operand 0 shape \(2, 3\)"),
    (lambda a: ops.sort(a, 2), ValueError, r"dimension \[2\] out of range for rank 2"),
    (lambda a: ops.sort(a, 0, "EQ"), ValueError, r"comparator 'EQ' is not one of LT, GT or a callable"),
    (lambda a: ops.sort(a, 0, 3), TypeError, r"comparator must be 'LT', 'GT' or a callable, got int"),
    (lambda a: ops.sort(a, 0, lambda p, q: ops.add(p, q)), TypeError,
     r"comparator must return a 0-d bool Tensor, got Tensor\(shape=\(\), dtype=float32\)"),
    (lambda a: ops.sort(a[0, 0], 0), ValueError, r"operands must have rank >= 1"),
    (lambda a: ops.sort([], 0), ValueError, r"needs at least one operand"),
]


@pytest.mark.parametrize("fn,error,match", SORT_ERRORS, ids=[m[:30] for _, _, m in SORT_ERRORS])
def test_sort_errors(fn, error, match):
    with pytest.raises(error, match=match):
        hf.trace(fn, F32)
