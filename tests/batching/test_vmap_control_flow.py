"""Batching rules of while, if and case (frontend/batching/control_flow.py) against a loop over the
examples and against jax.vmap of the same jax.lax programs: batched and unbatched predicates, carries
the body batches, captures, nested regions."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import hloforge as hf
from hloforge import lax, ops
from batching_helpers import assert_same, check_vmap

X = np.arange(12, dtype=np.float32).reshape(4, 3) / 4
N = np.array([1, 4, 0, 2], np.int32)


def doubling(lax_, x, n):
    """Doubles x, adding its first value, n times: a counted loop whose bound may be batched."""
    return lax_.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2.0 + x), (np.int32(0), x))


def mixing(lax_, x, y):
    """A loop whose unbatched carry becomes batched through the body (jax's fixpoint)."""
    def body(c):
        i, a, b = c
        return i + 1, a + b, b * 0.5 + x
    return lax_.while_loop(lambda c: c[0] < 3, body, (np.int32(0), y, y))


def converging(lax_, x):
    """A data-dependent trip count: halves until below 1 (the predicate batched with x)."""
    return lax_.while_loop(lambda v: v.max() >= 1.0, lambda v: v * 0.5, x)


@pytest.mark.parametrize("axes", [(0, None), (0, 0), (None, 0), (1, None), (1, 0)], ids=str)
def test_while_counted(axes):
    x = X if axes[0] != 1 else X.T
    n = N if axes[1] == 0 else np.int32(3)
    if axes[0] is None:
        x = X[0]
    got = check_vmap(lambda x, n: doubling(lax, x, n), x, n, in_axes=axes)
    assert_same(got, jax.jit(jax.vmap(lambda x, n: doubling(jax.lax, x, n), in_axes=axes))(x, n))


@pytest.mark.parametrize("axes", [(0, None), (None, 0), (0, 0)], ids=str)
def test_while_fixpoint(axes):
    x, y = (X if axes[0] == 0 else X[0]), (X + 1 if axes[1] == 0 else X[1])
    got = check_vmap(lambda x, y: mixing(lax, x, y), x, y, in_axes=axes)
    assert_same(got, jax.jit(jax.vmap(lambda x, y: mixing(jax.lax, x, y), in_axes=axes))(x, y))


def test_while_data_dependent():
    x = np.array([[0.5, 0.2], [7.0, 1.0], [3.0, 40.0]], np.float32)
    got = check_vmap(lambda x: converging(lax, x), x)
    assert_same(got, jax.jit(jax.vmap(lambda x: converging(jax.lax, x)))(x))
    check_vmap(lambda x: converging(lax, x), x.T, in_axes=1, out_axes=1)


def test_while_captures_and_fori():
    """ops.while_ bodies may use outside values directly (captures); fori_loop with batched bounds."""
    def fn(x, k, hi):
        scale = ops.multiply(x, x)
        loop = ops.while_([ops.constant(np.int32(0)), x], lambda i, v: ops.compare(i, k, "LT"),
                          lambda i, v: [ops.add(i, ops.constant(np.int32(1))), ops.add(v, scale)])
        total = lax.fori_loop(0, hi, lambda i, acc: acc + i.astype(np.float32) * x, x)
        return loop[1], total
    check_vmap(fn, X, np.int32(2), N, in_axes=(0, None, 0))
    check_vmap(fn, X[0], N, np.int32(3), in_axes=(None, 0, None))


def test_scan():
    def fn(w, xs):
        return lax.scan(lambda c, x: (c * w + x, c + x), w, xs)
    xs = np.arange(15, dtype=np.float32).reshape(5, 3)
    check_vmap(fn, X[:2, :3], xs, in_axes=(0, None))
    check_vmap(fn, X[0], np.stack([xs, xs * 2]), in_axes=(None, 0))


def branches(lax_, p, x, y):
    return lax_.cond(p, lambda a, b: (a * b, a), lambda a, b: (a - b, b + 1.0), x, y)


@pytest.mark.parametrize("axes", [(0, 0, None), (0, None, None), (0, None, 0), (None, 0, None), (None, None, 1),
                                  (0, 1, 0)], ids=str)
def test_cond(axes):
    p = np.array([True, False, True, False]) if axes[0] == 0 else np.bool_(False)
    x = X if axes[1] == 0 else (X.T if axes[1] == 1 else X[0])
    y = X + 1 if axes[2] == 0 else (X.T + 1 if axes[2] == 1 else X[1])
    got = check_vmap(lambda p, x, y: branches(lax, p, x, y), p, x, y, in_axes=axes)
    assert_same(got, jax.jit(jax.vmap(lambda p, x, y: branches(jax.lax, p, x, y), in_axes=axes))(p, x, y))


def switching(lax_, i, x):
    return lax_.switch(i, [lambda a: a * 2.0, lambda a: a + 1.0, lambda a: a * 0.0 + 7.0], x)


@pytest.mark.parametrize("axes", [(0, 0), (0, None), (None, 0), (0, 1)], ids=str)
def test_switch(axes):
    i = np.array([0, 2, 5, -1], np.int32) if axes[0] == 0 else np.int32(1)
    x = X if axes[1] == 0 else (X.T if axes[1] == 1 else X[0])
    got = check_vmap(lambda i, x: switching(lax, i, x), i, x, in_axes=axes)
    assert_same(got, jax.jit(jax.vmap(lambda i, x: switching(jax.lax, i, x), in_axes=axes))(i, x))


def test_ops_case_and_if_out_of_range():
    """stablehlo.case sends out-of-range indices to the last branch, under vmap too; an if whose
    branches return a constant in one and a batched value in the other."""
    def fn(i, x):
        c, = ops.case(i, [lambda: ops.add(x, x), lambda: ops.neg(x),
                          lambda: ops.constant(np.full(x.shape, 5.0, np.float32))], [(x.shape, x.dtype)])
        t, = ops.if_(ops.compare(i, ops.constant(np.int32(1)), "EQ"), lambda: ops.constant(np.zeros(x.shape, x.dtype)),
                     lambda: x, [(x.shape, x.dtype)])
        return c, t
    check_vmap(fn, np.array([0, 1, 2, 3, -4], np.int32), np.ones((5, 2), np.float32))
    check_vmap(fn, np.int32(7), np.ones((5, 2), np.float32), in_axes=(None, 0))


def test_nested():
    """A cond with a batched predicate inside a while with a batched predicate, inside a cond."""
    def fn(x, n):
        def body(c):
            i, v = c
            return i + 1, lax.cond(v.sum() > 3.0, lambda u: u - 1.0, lambda u: u * 2.0 + 0.5, v)
        inner = lambda v: lax.while_loop(lambda c: c[0] < n, body, (np.int32(0), v))[1]
        return lax.cond(n > 1, inner, lambda v: -v, x)
    got = check_vmap(fn, X, N)
    def jfn(x, n):
        def body(c):
            i, v = c
            return i + 1, jax.lax.cond(v.sum() > 3.0, lambda u: u - 1.0, lambda u: u * 2.0 + 0.5, v)
        inner = lambda v: jax.lax.while_loop(lambda c: c[0] < n, body, (np.int32(0), v))[1]
        return jax.lax.cond(n > 1, inner, lambda v: -v, x)
    assert_same(got, jax.jit(jax.vmap(jfn))(X, N))


def test_unbatched_predicate_keeps_one_loop_and_one_if():
    """An unbatched predicate batches the regions only: one while, one if, no select."""
    f = hf.vmap(lambda x, n: (doubling(lax, x, n)[1], branches(lax, n > 1, x, x)[0]), in_axes=(0, None))
    text = hf.trace(f, hf.ShapeDtype((4, 3), np.float32), hf.ShapeDtype((), np.int32)).text
    assert text.count("stablehlo.while") == 1 and "stablehlo.if" in text and "stablehlo.select" not in text, text


@settings(max_examples=10, deadline=None)
@given(b=st.integers(1, 4), n=st.integers(1, 3), axis=st.integers(0, 1), seed=st.integers(0, 2 ** 16))
def test_hypothesis_while_and_cond(b, n, axis, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((b, n)) * 4).astype(np.float32)
    x = x if axis == 0 else x.T
    bounds = rng.integers(0, 4, b).astype(np.int32)

    def fn(x, k):
        v = doubling(lax, x, k)[1]
        return lax.cond(x.sum() > 0, lambda u: u * 0.5, lambda u: u - 1.0, v), converging(lax, abs(x))
    check_vmap(fn, x, bounds, in_axes=(axis, 0))


def test_while_with_dot_and_reduction():
    """A normalized power iteration that stops per example at its own tolerance: dot_general, a
    reduction and a batched, data-dependent predicate inside the loop."""
    w = np.random.default_rng(1).standard_normal((3, 3)).astype(np.float32) * 0.5

    def power(lax_, np_, w, x, tol):
        def body(c):
            i, v = c
            v = np_.tanh(w @ v)
            return i + 1, v / np_.sqrt((v * v).sum())
        return lax_.while_loop(lambda c: (c[0] < 20) & (abs(c[1]).max() > tol), body, (np.int32(0), x))
    tol = np.array([0.1, 0.5, 0.7, 2.0], np.float32)
    got = check_vmap(lambda w, x, t: power(lax, hf.numpy, w, x, t), w, X, tol, in_axes=(None, 0, 0), exact=False)
    assert_same(got, jax.jit(jax.vmap(lambda w, x, t: power(jax.lax, jnp, w, x, t), in_axes=(None, 0, 0)))(w, X, tol),
                exact=False)


@settings(max_examples=8, deadline=None)
@given(b=st.integers(1, 4), n=st.integers(1, 3), i_batched=st.booleans(), x_axis=st.sampled_from([None, 0, 1]),
       seed=st.integers(0, 2 ** 16))
def test_hypothesis_switch_indices_and_axes(b, n, i_batched, x_axis, seed):
    if not i_batched and x_axis is None:
        x_axis = 0
    rng = np.random.default_rng(seed)
    i = rng.integers(-2, 5, b).astype(np.int32)  # (out of range: clamped to the first or last branch)
    x = rng.standard_normal((b, n)).astype(np.float32)
    args = (i if i_batched else i[0], x[0] if x_axis is None else (x if x_axis == 0 else x.T.copy()))
    axes = (0 if i_batched else None, x_axis)
    got = check_vmap(lambda i, x: switching(lax, i, x), *args, in_axes=axes)
    assert_same(got, jax.jit(jax.vmap(lambda i, x: switching(jax.lax, i, x), in_axes=axes))(*args))
