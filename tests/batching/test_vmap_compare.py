"""Batching rules of compare, select and clamp (frontend/batching/compare.py) against a loop over
the examples and against jax.vmap: 0-d predicates and bounds, batched or not, beside shaped operands."""
import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hloforge as hf
from hloforge import ops
from batching_helpers import assert_same, check_vmap

B = 4
RNG = np.random.default_rng(2)
X = RNG.standard_normal((B, 2, 3)).astype(np.float32)
Y = RNG.standard_normal((B, 2, 3)).astype(np.float32)
S = RNG.standard_normal(B).astype(np.float32)


def batched(x, axis):
    return x[0] if axis is None else np.moveaxis(x, 0, axis)


def ops_of(x, y, s):
    """x, y: (2, 3); s: 0-d."""
    p = ops.compare(x, y, "LT")
    q = ops.compare(s, ops.constant(np.float32(0)), "GE")
    return (p, ops.compare(x, y, "EQ", "TOTALORDER"), ops.select(p, x, y), ops.select(q, x, y),
            ops.select(q, s, s * 2), ops.clamp(s, x, s + 1), ops.clamp(y, x, y + 1),
            ops.clamp(ops.constant(np.float32(-0.5)), x, s + 1))


@pytest.mark.parametrize("axes", [(0, 0, 0), (1, 2, None), (2, None, 0), (None, None, 0), (None, 1, None)])
def test_compare_select_clamp_mixes(axes):
    check_vmap(ops_of, batched(X, axes[0]), batched(Y, axes[1]), batched(S, axes[2]), in_axes=axes)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8])
def test_integer_operands(dtype):
    x, y = RNG.integers(0, 9, (B, 3)).astype(dtype), RNG.integers(0, 9, (B, 3)).astype(dtype)

    def fn(x, y):
        return ops.compare(x, y, "GT"), ops.clamp(ops.constant(dtype(2)), x, ops.constant(dtype(6))), ops.select(
            ops.compare(x, y, "NE"), x, y)
    check_vmap(fn, x, y[0], in_axes=(0, None))
    check_vmap(fn, x.T, y, in_axes=(1, 0))


def test_against_jax_vmap():
    def hf_fn(x, y, s):
        p = ops.compare(x, y, "LT")
        return p, ops.select(p, x, y), ops.select(ops.compare(s, s * 0, "GT"), x, y), ops.clamp(s, x, s + 1)

    def jax_fn(x, y, s):
        p = jax.lax.lt(x, y)
        return p, jax.lax.select(p, x, y), jax.lax.select(jax.lax.gt(s, s * 0), x, y), jax.lax.clamp(s, x, s + 1)
    args, axes = (batched(X, 1), Y[0], S), (1, None, 0)
    assert_same(hf.vmap(hf_fn, in_axes=axes)(*args), jax.jit(jax.vmap(jax_fn, in_axes=axes))(*args))


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 3), max_size=3), data=st.data())
def test_hypothesis_shapes_and_axes(shape, data):
    rank = len(shape)
    x_axis = data.draw(st.sampled_from([None] + list(range(rank + 1))))
    s_axis = data.draw(st.sampled_from([0] if x_axis is None else [None, 0]))
    x = RNG.standard_normal([3, *shape]).astype(np.float32)
    s = RNG.standard_normal(3).astype(np.float32)

    def fn(x, s):
        return ops.clamp(s, x, s + 0.5), ops.select(ops.compare(s, s * 0, "LT"), x, x * 2)
    check_vmap(fn, batched(x, x_axis), batched(s, s_axis), in_axes=(x_axis, s_axis))
