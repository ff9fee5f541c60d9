"""Batching rules of reduce_window and select_and_scatter (frontend/batching/window.py) against a
loop over the examples and against jax.vmap."""
import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hloforge as hf
from hloforge import ops
from batching_helpers import assert_same, check_vmap

B = 3
RNG = np.random.default_rng(7)
X = RNG.integers(-9, 10, (B, 2, 5, 6)).astype(np.int32)
F = RNG.standard_normal((B, 2, 5, 6)).astype(np.float32)


def batched(x, axis):
    return x[0] if axis is None else np.moveaxis(x, 0, axis)


def windowed(x):
    """x: (2, 5, 6) int32."""
    lo = np.iinfo(np.int32).min
    return (ops.reduce_window(x, 0, (1, 2, 2), window_strides=(1, 2, 2)),
            ops.reduce_window(x, lo, (2, 3, 2), padding=((0, 0), (1, 1), (0, 1)), body="max"),
            ops.reduce_window(x, 0, (1, 2, 2), base_dilations=(1, 2, 1), window_dilations=(1, 1, 2)),
            ops.reduce_window([x, x], [0, 1], (1, 3, 1),
                              body=lambda a, m, u, v: (ops.add(a, u), ops.maximum(m, v))))


@pytest.mark.parametrize("axis", [0, 1, 3])
def test_reduce_window_at_every_batch_axis(axis):
    check_vmap(windowed, batched(X, axis), in_axes=axis)


def pool_grad(x, dy):
    """x: (2, 5, 6), dy: (2, 2, 3): max pooling's gradient."""
    return (ops.select_and_scatter(x, dy, 0, (1, 2, 2), window_strides=(1, 2, 2)),
            ops.select_and_scatter(x, dy, 0, (1, 3, 3), window_strides=(1, 2, 2), padding=((0, 0), (0, 0), (1, 0)),
                                   select="LT"))


@pytest.mark.parametrize("axes", [(0, 0), (2, None), (None, 1), (3, 3)])
def test_select_and_scatter_batched_operand_and_or_source(axes):
    dy = RNG.integers(-3, 4, (B, 2, 2, 3)).astype(np.int32)
    check_vmap(pool_grad, batched(X, axes[0]), batched(dy, axes[1]), in_axes=axes)


def test_batched_init_values_run_per_example():
    v = np.array([1, -2, 3], np.int32)
    dy = RNG.integers(-3, 4, (B, 2, 2, 3)).astype(np.int32)

    def fn(x, v, dy):
        return (ops.reduce_window(x, v, (1, 2, 2), padding=((0, 0), (1, 0), (0, 0)), body="max"),
                ops.select_and_scatter(x, dy, v, (1, 2, 2), window_strides=(1, 2, 2)))
    check_vmap(fn, X, v, dy, in_axes=(0, 0, 0))
    check_vmap(fn, X[0], v, dy[0], in_axes=(None, 0, None))


def test_batched_init_values_of_an_empty_batch():
    """The per-example fallback (one op per example) of a batch of 0: empty results of the shapes and
    dtypes of a nonempty batch's (there is no example to emit the op over)."""
    def fn(x, v, dy):
        return (ops.reduce_window(x, v, (1, 2, 2), body="max"),
                ops.select_and_scatter(x, dy, v, (1, 2, 2), window_strides=(1, 2, 2)),
                ops.reduce(x, v, (1,), lambda a, b: ops.maximum(a, b)))
    v = np.array([1, -2, 3], np.int32)
    dy = RNG.integers(-3, 4, (B, 2, 2, 3)).astype(np.int32)
    full = hf.vmap(fn)(X, v, dy)
    for axes, args in (((0, 0, 0), (X[:0], v[:0], dy[:0])), ((None, 0, None), (X[0], v[:0], dy[0]))):
        got = hf.vmap(fn, in_axes=axes)(*args)
        assert [(g.shape, g.dtype) for g in got] == [((0, *f.shape[1:]), f.dtype) for f in full]


def test_against_jax_vmap():
    def hf_fn(x):
        return ops.reduce_window(x, -np.inf, (1, 2, 2), window_strides=(1, 2, 2), body="max")

    def jax_fn(x):
        return jax.lax.reduce_window(x, -np.inf, jax.lax.max, (1, 2, 2), (1, 2, 2), "VALID")
    assert_same(hf.vmap(hf_fn, in_axes=2)(batched(F, 2)), jax.jit(jax.vmap(jax_fn, in_axes=2))(batched(F, 2)))


@settings(max_examples=10, deadline=None)
@given(width=st.integers(2, 6), window=st.integers(1, 2), stride=st.integers(1, 2), data=st.data())
def test_hypothesis_windows_and_axes(width, window, stride, data):
    axis = data.draw(st.integers(0, 2))
    x = RNG.integers(-9, 10, (2, 3, width)).astype(np.int32)
    fn = lambda x: ops.reduce_window(x, 0, (1, window), window_strides=(1, stride), padding=((0, 0), (1, 0)))  # noqa
    check_vmap(fn, batched(x, axis), in_axes=axis)


@settings(max_examples=10, deadline=None)
@given(width=st.integers(2, 6), window=st.integers(1, 3), stride=st.integers(1, 2),
       select=st.sampled_from(["GE", "LT"]), data=st.data())
def test_hypothesis_select_and_scatter_windows_and_axes(width, window, stride, select, data):
    window = min(window, width)
    x_axis = data.draw(st.sampled_from([None, 0, 1, 2]))
    dy_axis = data.draw(st.sampled_from([0, 1, 2] if x_axis is None else [None, 0, 1, 2]))
    x = RNG.integers(-9, 10, (B, 2, width)).astype(np.int32)
    dy = RNG.integers(-3, 4, (B, 2, (width - window) // stride + 1)).astype(np.int32)
    fn = lambda x, dy: ops.select_and_scatter(x, dy, 0, (1, window), window_strides=(1, stride), select=select)  # noqa
    check_vmap(fn, batched(x, x_axis), batched(dy, dy_axis), in_axes=(x_axis, dy_axis))
