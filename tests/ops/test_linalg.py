"""hloforge.ops, linalg family (frontend/ops/linalg.py): dot_general and reduce against numpy, and
their validation messages."""
import numpy as np
import pytest

import hloforge as hf
from hloforge import ops
from helpers import assert_close, random, run
from ops_helpers import F32


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.int32], ids=str)
def test_dot_general(dtype):
    a = random((2, 3, 4), dtype, seed=10)
    b = random((2, 4, 5), dtype, seed=11)
    out = run(lambda a, b: ops.dot_general(a, b, (0,), (0,), (2,), (1,)), a, b)
    assert_close(out, np.einsum("bij,bjk->bik", a, b), dtype=np.dtype(dtype))


def test_dot_general_preferred_element_type_is_the_result_type():
    a = random((2, 3), np.int8, seed=12)
    m = hf.trace(lambda a: ops.dot_general(a, a, (), (), (1,), (1,), preferred_element_type=np.int32), a)
    assert "-> tensor<2x2xi32>" in m.text, m.text
    wide = a.astype(np.int32)
    np.testing.assert_array_equal(np.asarray(m.compile()(a)), wide @ wide.T)


def test_dot_general_precision_attr():
    a = random((2, 2), np.float32)
    m = hf.trace(lambda a: ops.dot_general(a, a, (), (), (1,), (0,), precision="HIGHEST"), a)
    assert "HIGHEST" in m.text
    with pytest.raises(ValueError, match="precision 'BEST' is not one of"):
        hf.trace(lambda a: ops.dot_general(a, a, (), (), (1,), (0,), precision="BEST"), a)


@pytest.mark.parametrize("body,ref,init", [("add", np.sum, 0), ("mul", np.prod, 1), ("max", np.max, -np.inf),
                                           ("min", np.min, np.inf)])
def test_reduce_named_bodies(body, ref, init):
    x = random((3, 4, 5), np.float64, seed=12)
    out = run(lambda x: ops.reduce(x, init, (0, 2), body), x)
    assert_close(out, ref(x, axis=(0, 2)))


def test_reduce_bool_and_callable_body():
    b = random((4, 6), np.bool_, seed=13)
    x = random((4, 6), np.float32, seed=14)

    def f(b, x):
        return (ops.reduce(b, True, (1,), "and"), ops.reduce(b, False, (0,), "or"),
                ops.reduce(x, np.float32(0), (1,), lambda acc, v: ops.add(acc, ops.multiply(v, v))),
                ops.reduce([x, x], [np.float32(-np.inf), np.float32(np.inf)], (0,),
                           lambda a1, a2, v1, v2: (ops.maximum(a1, v1), ops.minimum(a2, v2))))
    all_, any_, sq, (mx, mn) = run(f, b, x)
    assert_close(all_, b.all(1))
    assert_close(any_, b.any(0))
    assert_close(sq, (x * x).sum(1))
    assert_close(mx, x.max(0))
    assert_close(mn, x.min(0))


# ---------------------------------------------------------------- validation messages

@pytest.mark.parametrize("fn,exc,match", [
    (lambda x: ops.dot_general(x, x, (), (), (0,), (1,)), ValueError,
     r"dot_general: contracting dims lhs 0 \(size 2\) and rhs 1 \(size 3\) differ"),
    (lambda x: ops.dot_general(x, ops.convert(x, np.int32), (), (), (1,), (1,)), TypeError, "dot_general: operand dtypes"),
    (lambda x: ops.dot_general(x, x, (), (), (1,), (1,), preferred_element_type=np.int32), TypeError,
     r"dot_general: preferred_element_type int32 does not hold a contraction of float32 operands \(integers into"),
    (lambda x: ops.dot_general(x, x, (), (), (1,), (1,), preferred_element_type="float7"), TypeError,
     "dot_general: preferred_element_type 'float7': unsupported dtype"),
    (lambda x: ops.reduce(x, 0.0, (0,), "sum"), ValueError, "reduce: body 'sum' is not one of add, mul, max, min, and, or"),
    (lambda x: ops.reduce(x, 0.0, (0,), "and"), TypeError, "reduce: body 'and' needs bool or integer operands"),
    (lambda x: ops.reduce(x, 0.0, (3,)), ValueError, r"reduce: dimensions \[3\] out of range"),
])
def test_validation_messages(fn, exc, match):
    with pytest.raises(exc, match=match):
        hf.trace(fn, F32)
