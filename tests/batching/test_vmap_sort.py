"""Batching rule of sort (frontend/batching/sort.py) against a loop over the examples and against
jax.vmap: one or several operands, batched or not, named and callable comparators."""
import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hloforge as hf
from hloforge import ops
from batching_helpers import assert_same, check_vmap

B = 4
RNG = np.random.default_rng(8)
X = RNG.integers(0, 5, (B, 3, 6)).astype(np.float32)
K = RNG.integers(0, 100, (B, 3, 6)).astype(np.int32)


def batched(x, axis):
    return x[0] if axis is None else np.moveaxis(x, 0, axis)


def sorts(x, k):
    """x: (3, 6) float32, k: (3, 6) int32."""
    return (ops.sort(x, 1), ops.sort(x, 0, "GT"), ops.sort([x, k], 1, is_stable=True),
            ops.sort([k, x], 1, lambda a, b, c, d: ops.compare(a, b, "GT")))


@pytest.mark.parametrize("axes", [(0, 0), (1, 2), (2, None), (None, 0), (0, 1)])
def test_sort_batched_and_unbatched_operands(axes):
    check_vmap(sorts, batched(X, axes[0]), batched(K, axes[1]), in_axes=axes)


def test_against_jax_vmap():
    hf_fn = lambda x, k: ops.sort([x, k], 1, is_stable=True)  # noqa: E731
    jax_fn = lambda x, k: tuple(jax.lax.sort([x, k], dimension=1, is_stable=True, num_keys=1))  # noqa: E731
    for axes in [(2, 0), (None, 1)]:
        args = (batched(X, axes[0]), batched(K, axes[1]))
        assert_same(hf.vmap(hf_fn, in_axes=axes)(*args), jax.jit(jax.vmap(jax_fn, in_axes=axes))(*args))


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_hypothesis_shapes_and_axes(shape, data):
    axis = data.draw(st.integers(0, len(shape)))
    dimension = data.draw(st.integers(0, len(shape) - 1))
    x = RNG.integers(-5, 5, [3, *shape]).astype(np.int32)
    check_vmap(lambda x: ops.sort(x, dimension), batched(x, axis), in_axes=axis)
