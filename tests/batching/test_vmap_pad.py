"""Batching rule of pad (frontend/batching/pad.py) against a loop over the examples and against
jax.vmap: batched operand and/or batched padding value, negative (cropping) and interior padding."""
import jax
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import hloforge as hf
from hloforge import ops
from batching_helpers import assert_same, check_vmap

B = 4
RNG = np.random.default_rng(4)
X = RNG.standard_normal((B, 3, 4)).astype(np.float32)
V = RNG.standard_normal(B).astype(np.float32)
CONFIGS = [((1, 0), (2, 1), (0, 0)), ((-1, 2), (0, -2), (1, 2)), ((0, 0), (0, 0), (0, 0))]


def batched(x, axis):
    return x[0] if axis is None else np.moveaxis(x, 0, axis)


def pads(x, v):
    return tuple(ops.pad(x, v, lo, hi, it) for lo, hi, it in CONFIGS) + (ops.pad(x, 1.5, (1, 1), (1, 1), (1, 0)),)


@pytest.mark.parametrize("axes", [(0, None), (1, None), (2, 0), (None, 0), (0, 0)])
def test_pad_batched_operand_and_or_value(axes):
    check_vmap(pads, batched(X, axes[0]), batched(V, axes[1]), in_axes=axes)


def test_pad_integer_and_bool():
    x = RNG.integers(0, 9, (B, 2, 3)).astype(np.int32)
    v = np.arange(B, dtype=np.int32)
    b = x > 4

    def fn(x, v, b, c):
        return ops.pad(x, v, (1, 0), (0, 1), (1, 1)), ops.pad(b, c, (1, 1), (1, 1), (0, 1))
    check_vmap(fn, np.moveaxis(x, 0, 2), v, b[0], np.array([True, False, True, False]), in_axes=(2, 0, None, 0))


def test_against_jax_vmap():
    config = [(1, 2, 1), (-1, 0, 2)]
    hf_fn = lambda x, v: ops.pad(x, v, [c[0] for c in config], [c[1] for c in config], [c[2] for c in config])  # noqa
    jax_fn = lambda x, v: jax.lax.pad(x, v, config)  # noqa: E731
    for axes in [(1, 0), (None, 0), (2, None)]:
        args = (batched(X, axes[0]), batched(V, axes[1]))
        assert_same(hf.vmap(hf_fn, in_axes=axes)(*args), jax.jit(jax.vmap(jax_fn, in_axes=axes))(*args))


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3), data=st.data())
def test_hypothesis_shapes_axes_and_padding(shape, data):
    rank = len(shape)
    axis = data.draw(st.integers(0, rank))
    value_batched = data.draw(st.booleans())
    edges = st.lists(st.integers(-1, 2), min_size=rank, max_size=rank)
    low, high = data.draw(edges), data.draw(edges)
    interior = data.draw(st.lists(st.integers(0, 2), min_size=rank, max_size=rank))
    assume(all(lo + hi + n + (n - 1) * i >= 0 for n, lo, hi, i in zip(shape, low, high, interior)))
    x = RNG.standard_normal([3, *shape]).astype(np.float32)
    v = RNG.standard_normal(3).astype(np.float32)
    check_vmap(lambda x, v: ops.pad(x, v, low, high, interior), np.moveaxis(x, 0, axis),
               v if value_batched else v[0], in_axes=(axis, 0 if value_batched else None))
