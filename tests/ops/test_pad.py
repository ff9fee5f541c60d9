"""hloforge.ops, pad family (frontend/ops/pad.py): ops.pad (negative and interior padding) against
numpy and a numpy reference of StableHLO's pad over a dtype grid, Python zeros that keep their sign
bit, its registration as one op, and its validation messages (hloforge.numpy.pad:
tests/numpy/test_numpy_pad.py)."""
import numpy as np
import pytest

import hloforge as hf
from hloforge import ops
from hloforge.frontend import registry
from helpers import assert_close, check_all, random, run
from ops_helpers import F32


def test_pad_single_op():
    x = random((3, 8), np.float32, seed=15)
    p = run(lambda x: ops.pad(x, 0.0, (1, -1), (0, 2), (0, 1)), x)
    # interior 1 on dim 1, then low (1, -1), high (0, 2)
    spread = np.zeros((3, 15), np.float32)
    spread[:, ::2] = x
    ref = np.pad(spread, ((1, 0), (0, 2)))[:, 1:]
    assert_close(p, ref)


def reference_pad(x, value, low, high, interior):
    """StableHLO pad in numpy: dilate by ``interior``, then pad (positive) or crop (negative) edges."""
    dilated = np.full([n + max(n - 1, 0) * i for n, i in zip(x.shape, interior)], value, x.dtype)
    dilated[tuple(slice(None, None, i + 1) for i in interior)] = x
    out = np.pad(dilated, [(max(lo, 0), max(hi, 0)) for lo, hi in zip(low, high)], constant_values=value)
    return out[tuple(slice(-min(lo, 0), n + min(hi, 0)) for n, lo, hi in zip(out.shape, low, high))]


OPS_PAD_CASES = [((1, -1), (-2, 2), (0, 1)), ((0, 0), (0, 0), (2, 3)), ((-1, 2), (1, -3), (1, 0)),
                 ((-3, 0), (0, -4), (0, 0)), ((2, -5), (-1, 3), (1, 2))]


@pytest.mark.parametrize("dtype,value", [(np.bool_, True), (np.int8, -3), (np.uint16, 7), (np.float16, 1.5),
                                         (np.float32, np.float32(-2.25)), (np.complex64, 1 - 1j)])
def test_ops_pad_matches_reference(dtype, value):
    x = random((3, 4), dtype)
    got = run(lambda a: [ops.pad(a, value, lo, hi, it) for lo, hi, it in OPS_PAD_CASES]
              + [ops.pad(a, a[0, 0], (1, 0), (0, 2))], x)
    expected = [reference_pad(x, value, *case) for case in OPS_PAD_CASES]
    expected.append(reference_pad(x, x[0, 0], (1, 0), (0, 2), (0, 0)))
    check_all(got, expected, OPS_PAD_CASES + ["tensor value"])


@pytest.mark.parametrize("dtype,value", [(np.float32, 0.0), (np.float32, -0.0), (np.int8, 0), (np.bool_, 0),
                                         (np.complex64, 0j), (np.complex64, complex(-0.0, -0.0))])
def test_ops_pad_with_python_zeros_keeps_the_sign_bit(dtype, value):
    got = np.asarray(run(lambda a: ops.pad(a, value, (1,), (0,)), np.ones(2, dtype)))
    expected = np.asarray(value).astype(dtype)
    assert got[0].tobytes() == expected.tobytes() and got.dtype == dtype


def test_ops_pad_is_registered_and_one_op():
    assert registry.lookup("stablehlo.pad").builder is ops.pad.__wrapped__  # (ops.pad: its eager wrapper)
    counts = hf.trace(lambda a: ops.pad(a, 0.0, (1, -1), (0, 2), (1, 0)), F32).op_counts()
    assert counts["stablehlo.pad"] == 1


# ---------------------------------------------------------------- validation messages

@pytest.mark.parametrize("fn,exc,match", [
    (lambda x: ops.pad(x, 0.0, (0, 0), (0, -4)), ValueError, r"pad: result shape \(2, -1\) has a negative dimension"),
    (lambda x: ops.pad(x, 0.0, (0, 0), (0, 0), (0, -1)), ValueError, r"pad: interior_padding \[0, -1\] must be >= 0"),
])
def test_validation_messages(fn, exc, match):
    with pytest.raises(exc, match=match):
        hf.trace(fn, F32)


OPS_PAD_ERRORS = [
    (lambda a: ops.pad(a, 0.0, (0, 0), (0, 0), (0, -1)), ValueError,
     r"interior_padding \[0, -1\] must be >= 0"),
    (lambda a: ops.pad(a, 0.0, (-2, 0), (-1, 0)), ValueError,
     r"result shape \(-1, 3\) has a negative dimension \(operand \(2, 3\), low \[-2, 0\], high \[-1, 0\]"),
    (lambda a: ops.pad(a, 0.0, (1,), (0, 0)), ValueError, r"edge_padding_low \[1\] must have 2 entries"),
    (lambda a: ops.pad(a, 0.0, (1, "a"), (0, 0)), TypeError,
     r"edge_padding_low must be a sequence of ints, got \(1, 'a'\)"),
    (lambda a: ops.pad(a.astype(np.int32), 1.5, (1, 1), (1, 1)), TypeError,
     r"padding_value 1.5 cannot be represented exactly in int32"),
    (lambda a: ops.pad(a.astype(np.uint8), -1, (1, 1), (1, 1)), TypeError,
     r"padding_value -1 cannot be represented exactly in uint8 \(it would become 255\)"),
    (lambda a: ops.pad(a.astype(np.int8), 300, (1, 1), (1, 1)), TypeError,
     r"padding_value 300 cannot be represented exactly in int8"),
    (lambda a: ops.pad(a, 1 + 1j, (1, 1), (1, 1)), TypeError,
     r"padding_value \(1\+1j\) cannot be represented exactly in float32"),
    (lambda a: ops.pad(a, np.array([1.0, 2.0]), (1, 1), (1, 1)), TypeError,
     r"padding_value must be a scalar, got array\(\[1., 2.\]\) of shape \(2,\)"),
    (lambda a: ops.pad(a, a[0, 0].astype(np.float64), (1, 1), (1, 1)), TypeError,
     r"padding_value must be a 0-d float32 tensor, got Tensor\(shape=\(\), dtype=float64\)"),
    (lambda a: ops.pad(a, "x", (1, 1), (1, 1)), TypeError, r"padding_value 'x' is not a number"),
]


@pytest.mark.parametrize("fn,error,match", OPS_PAD_ERRORS, ids=[m[:30] for _, _, m in OPS_PAD_ERRORS])
def test_ops_pad_errors(fn, error, match):
    with pytest.raises(error, match=match):
        hf.trace(fn, F32)
