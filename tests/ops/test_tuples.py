"""Tokens and tuples: ops.after_all, ops.tuple, ops.get_tuple_element (builders, errors, PJRT runs, AD)."""
from __future__ import annotations

import numpy as np
import pytest

import hloforge as hf
from hloforge import ops
from hloforge.frontend.tracing import TOKEN, TupleSpec, Value

F32 = hf.ShapeDtype((3,), np.float32)
X = np.array([1.0, -2.0, 0.5], np.float32)
Y = np.array([3.0, 4.0, -1.0], np.float32)


def _nested(x, y):
    """x, (y, int32(x), token), token -> picks the float elements back out."""
    t = ops.tuple(x, ops.tuple(y, ops.convert(x, np.int32), ops.after_all()), ops.after_all(ops.after_all()))
    inner = ops.get_tuple_element(t, 1)
    return ops.get_tuple_element(t, 0), ops.get_tuple_element(inner, 0), ops.get_tuple_element(inner, 1)


def test_builders_give_token_and_tuple_values():
    seen = {}

    def fn(x, y):
        t = ops.tuple(x, ops.tuple(y, ops.after_all()))
        seen["t"], seen["token"], seen["empty"] = t, ops.after_all(), ops.tuple()
        return ops.get_tuple_element(t, 0)

    m = hf.trace(fn, F32, F32)
    t, token, empty = seen["t"], seen["token"], seen["empty"]
    assert isinstance(t, Value) and len(t) == 2 and not t.is_token and token.is_token and len(empty) == 0
    assert token.spec is TOKEN and t.spec == TupleSpec((((3,), np.dtype(np.float32)),
                                                       TupleSpec((((3,), np.dtype(np.float32)), TOKEN))))
    assert repr(t) == ("Tuple(Tensor(shape=(3,), dtype=float32), Tuple(Tensor(shape=(3,), dtype=float32), "
                       "Token))")
    text = m.text
    assert "tuple<tensor<3xf32>, tuple<tensor<3xf32>, !stablehlo.token>>" in text
    assert "stablehlo.get_tuple_element %" in text and "[0]" in text
    assert m.op_counts()["stablehlo.after_all"] == 2 and m.op_counts()["stablehlo.tuple"] == 3
    m.verify()


@pytest.mark.parametrize("optimize", [False, True])
def test_get_tuple_element_runs_on_pjrt(optimize):
    a, b, i = hf.jit(_nested, optimize=optimize)(X, Y)
    np.testing.assert_array_equal(np.asarray(a), X)
    np.testing.assert_array_equal(np.asarray(b), Y)
    np.testing.assert_array_equal(np.asarray(i), X.astype(np.int32))


def test_a_dropped_token_verifies_and_compiles():
    def fn(x):
        ops.after_all(ops.after_all(), ops.after_all())
        return ops.neg(x)

    m = hf.trace(fn, F32)
    m.verify()
    assert m.op_counts()["stablehlo.after_all"] == 3
    np.testing.assert_array_equal(np.asarray(m.compile()(X)), -X)


def test_constants_become_tuple_elements():
    out = hf.jit(lambda x: ops.get_tuple_element(ops.tuple(x, np.int32(7)), 1))(X)
    assert np.asarray(out) == 7 and np.asarray(out).dtype == np.int32


def _token(x):
    return ops.after_all()


@pytest.mark.parametrize("fn,error,match", [
    (lambda x: ops.get_tuple_element(x, 0), TypeError,
     r"get_tuple_element: operand must be a tuple, got Tensor\(shape=\(3,\), dtype=float32\)"),
    (lambda x: ops.get_tuple_element(ops.after_all(), 0), TypeError,
     r"get_tuple_element: operand must be a tuple, got Token"),
    (lambda x: ops.get_tuple_element(ops.tuple(x, x), 2), ValueError,
     r"get_tuple_element: index 2 out of range for Tuple\(Tensor\(shape=\(3,\), dtype=float32\), "
     r"Tensor\(shape=\(3,\), dtype=float32\)\) of 2 element\(s\)"),
    (lambda x: ops.get_tuple_element(ops.tuple(x), -1), ValueError, r"index -1 out of range"),
    (lambda x: ops.get_tuple_element(ops.tuple(x), 0.5), TypeError,
     r"get_tuple_element: index must be an int, got 0.5"),
    (lambda x: ops.after_all(x), TypeError,
     r"after_all: operand 0 must be a Token, got Tensor\(shape=\(3,\), dtype=float32\)"),
    (lambda x: ops.after_all(ops.after_all(), ops.tuple()), TypeError,
     r"after_all: operand 1 must be a Token, got Tuple\(\)"),
    (lambda x: ops.add(x, ops.tuple(x)), TypeError,
     r"add rhs: expected a tensor, got a Tuple\(Tensor\(shape=\(3,\), dtype=float32\)\)"),
    (lambda x: ops.tuple(x, object()), TypeError, r"tuple operand 1: cannot convert object to a tensor"),
    (_token, TypeError, r"trace: output 0: expected a tensor, got a Token"),
    (lambda x: ops.tuple(x), TypeError, r"trace: output 0: expected a tensor, got a Tuple"),
])
def test_errors(fn, error, match):
    with pytest.raises(error, match=match):
        hf.trace(fn, F32)


def test_a_token_leaked_from_another_trace_is_refused():
    leaked = []
    hf.trace(lambda x: leaked.append(ops.after_all()) or x, F32)
    with pytest.raises(ValueError, match=r"after_all operand 0: Value Token belongs to another trace"):
        hf.trace(lambda x: ops.after_all(leaked[0]) and x, F32)


def test_a_tuple_leaked_out_of_a_body_is_refused():
    leaked = []

    def body(a, b):
        leaked.append(ops.tuple(a))
        return ops.add(a, b)

    def fn(x):
        ops.reduce(x, 0.0, (0,), body)
        return ops.get_tuple_element(leaked[0], 0)

    with pytest.raises(ValueError, match=r"Value Tuple\(.*\) was made in reduce: body, which has ended"):
        hf.trace(fn, F32)


def test_rules_take_token_and_tuple_specs():
    from hloforge.frontend.registry import OPS
    assert OPS["stablehlo.after_all"].rule(TOKEN, TOKEN) == [TOKEN]
    assert OPS["stablehlo.tuple"].rule(((2,), np.float32), TOKEN) == [TupleSpec((((2,), np.dtype(np.float32)), TOKEN))]
    assert OPS["stablehlo.get_tuple_element"].rule(TupleSpec((TOKEN, ((), np.int8))), index=1) == [((), np.int8)]


# ---------------------------------------------------------------- AD


def _loss(x, y):
    """sum(x * y + x * x), with x read from one tuple twice (two cotangent tuples to add)."""
    a, b, _ = _nested(x, y)
    t = ops.tuple(a, b)
    xy = ops.multiply(ops.get_tuple_element(t, 0), ops.get_tuple_element(t, 1))
    xx = ops.multiply(a, ops.get_tuple_element(t, 0))
    return ops.reduce(ops.add(xy, xx), 0.0, (0,), "add")


def test_grad_through_tuples():
    gx, gy = hf.grad(_loss, argnums=(0, 1))(X, Y)
    np.testing.assert_allclose(np.asarray(gx), Y + 2 * X, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gy), X, rtol=1e-6)


def test_jvp_through_tuples():
    tx, ty = np.array([1.0, 0.0, 2.0], np.float32), np.array([0.5, 1.0, 0.0], np.float32)
    value, tangent = hf.jvp(_loss, (X, Y), (tx, ty))
    np.testing.assert_allclose(np.asarray(value), np.sum(X * Y + X * X), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tangent), np.sum(tx * Y + X * ty + 2 * X * tx), rtol=1e-6)


def test_module_vjp_reemits_tuples_and_tokens():
    m = hf.trace(_loss, F32, F32)
    value, gx, gy = m.vjp().compile()(X, Y, np.float32(1.0))
    np.testing.assert_allclose(np.asarray(value), np.sum(X * Y + X * X), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gx), Y + 2 * X, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gy), X, rtol=1e-6)


def test_module_jvp_reemits_tuples_and_tokens():
    tx, ty = np.array([1.0, 0.0, 2.0], np.float32), np.array([0.5, 1.0, 0.0], np.float32)
    value, tangent = hf.trace(_loss, F32, F32).jvp().compile()(X, Y, tx, ty)
    np.testing.assert_allclose(np.asarray(value), np.sum(X * Y + X * X), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tangent), np.sum(tx * Y + X * ty + 2 * X * tx), rtol=1e-6)


def test_vjp_of_a_tuple_element_that_is_a_tuple():
    """The cotangent of a nested tuple element is itself packed; a complex element too."""
    def fn(x):
        c = ops.convert(x, np.complex64)
        t = ops.tuple(ops.tuple(x, c), ops.after_all())
        inner = ops.get_tuple_element(t, 0)
        r = ops.real(ops.multiply(ops.get_tuple_element(inner, 1), ops.get_tuple_element(inner, 1)))
        return ops.reduce(ops.add(r, ops.get_tuple_element(inner, 0)), 0.0, (0,), "add")

    np.testing.assert_allclose(np.asarray(hf.grad(fn)(X)), 2 * X + 1, rtol=1e-6)
