"""Batching rules of the data-movement ops (frontend/batching/shape.py) against a loop over the
examples and against jax.vmap."""
import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hloforge as hf
from hloforge import ops
from hloforge.frontend.registry import OPS
from batching_helpers import assert_same, check_vmap

B = 5
RNG = np.random.default_rng(0)
X = RNG.standard_normal((B, 2, 3, 4)).astype(np.float32)
I = np.array([0, 1, 2, -1, 5], np.int32)   # (clamped: -1 and 5 are out of range)
J = np.array([3, 2, 1, 0, 1], np.int32)


def batched(x, axis):
    """The batch of examples ``x`` (examples along 0) with the examples along ``axis`` (None: one example)."""
    return x[0] if axis is None else np.moveaxis(x, 0, axis)


def movement(x):
    return (ops.reshape(x, (12, 2)), ops.reshape(x, (24,)), ops.transpose(x, (2, 0, 1)),
            ops.broadcast_in_dim(x, (5, 2, 3, 4, 2), (1, 2, 3)), ops.broadcast_in_dim(x, (4, 3, 2), (2, 1, 0)),
            ops.slice(x, (0, 0, 1), (2, 3, 4), (1, 2, 2)), ops.reverse(x, (0, 2)))


@pytest.mark.parametrize("axis", [0, 2, 3])
def test_movement_ops_at_every_batch_axis(axis):
    check_vmap(movement, batched(X, axis), in_axes=axis)


@pytest.mark.parametrize("axes", [(0, 0, 0), (1, None, None), (None, 0, 0), (None, 0, None), (3, None, 0)])
def test_dynamic_slice_batched_operand_and_or_starts(axes):
    def fn(x, i, j):
        return ops.dynamic_slice(x, (i, j, i), (1, 2, 2)), ops.dynamic_slice(x, (j, i, j), (2, 3, 4))
    check_vmap(fn, batched(X, axes[0]), batched(I, axes[1]), batched(J, axes[2]), in_axes=axes)


def test_concatenate_batched_and_unbatched_operands():
    y = RNG.standard_normal((B, 2, 1, 4)).astype(np.float32)

    def fn(x, y):
        return ops.concatenate([x, y, x], 1), ops.concatenate([y], 2)
    for axes in [(0, 0), (1, 3), (None, 2), (3, None)]:
        check_vmap(fn, batched(X, axes[0]), batched(y, axes[1]), in_axes=axes)


def test_constants_and_iota_stay_unbatched():
    def fn(x):
        return x + ops.constant(np.ones((2, 3, 4), np.float32)), ops.iota((2, 3, 4), np.float32, 1) * x
    check_vmap(fn, X, in_axes=0)


@pytest.mark.parametrize("name", ["stablehlo.constant", "stablehlo.iota"])
def test_nullary_rules_refuse_to_be_called(name):
    with pytest.raises(RuntimeError, match="an op without operands cannot be batched"):
        OPS[name].batch(B, [], [])


def test_against_jax_vmap():
    def hf_fn(x, i, j):
        return (ops.reshape(x, (12, 2)), ops.transpose(x, (2, 0, 1)), ops.broadcast_in_dim(x, (5, 2, 3, 4), (1, 2, 3)),
                ops.slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 2)), ops.dynamic_slice(x, (i, j, i), (1, 2, 2)),
                ops.concatenate([x, x], 2), ops.reverse(x, (1,)))

    def jax_fn(x, i, j):
        lax = jax.lax
        return (lax.reshape(x, (12, 2)), lax.transpose(x, (2, 0, 1)), lax.broadcast_in_dim(x, (5, 2, 3, 4), (1, 2, 3)),
                lax.slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 2)), lax.dynamic_slice(x, (i, j, i), (1, 2, 2)),
                lax.concatenate([x, x], 2), lax.rev(x, (1,)))
    # (jax.lax.dynamic_slice wraps negative starts as numpy does; stablehlo's clamps them: 5 is clamped by both)
    args, axes = (batched(X, 2), np.abs(I), J[0]), (2, 0, None)
    assert_same(hf.vmap(hf_fn, in_axes=axes)(*args), jax.jit(jax.vmap(jax_fn, in_axes=axes))(*args))


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3), data=st.data())
def test_hypothesis_shapes_and_axes(shape, data):
    rank = len(shape)
    axis = data.draw(st.integers(0, rank))
    perm = data.draw(st.permutations(range(rank)))
    flip = data.draw(st.lists(st.integers(0, rank - 1), unique=True))
    x = np.arange(3 * np.prod(shape), dtype=np.int32).reshape([3, *shape])

    def fn(x):
        return (ops.transpose(x, perm), ops.reverse(x, flip), ops.reshape(x, (int(np.prod(shape)),)),
                ops.slice(x, [0] * rank, shape, [2] * rank), ops.dynamic_slice(x, [1] * rank, [1] * rank))
    check_vmap(fn, np.moveaxis(x, 0, axis), in_axes=axis)


def test_scalar_examples():
    def fn(s):  # (no dynamic_slice of a 0-d tensor: XLA refuses its empty slice_sizes even unbatched)
        return (ops.reshape(s, (1, 1)), ops.broadcast_in_dim(s, (2, 3), ()), ops.transpose(s, ()),
                ops.reverse(s, ()), ops.slice(s, (), ()))
    check_vmap(fn, np.arange(B, dtype=np.float32), in_axes=0)



@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3), data=st.data())
def test_hypothesis_broadcast_and_concatenate(shape, data):
    rank = len(shape)
    axes = [data.draw(st.sampled_from([None] + list(range(rank + 1)))) for _ in range(3)]
    if all(a is None for a in axes):
        axes[0] = 0
    dims = sorted(data.draw(st.permutations(range(rank + 1)))[:rank])  # (x's dims among rank + 1 dims)
    out = [data.draw(st.integers(1, 3))] * (rank + 1)
    for k, d in enumerate(dims):
        out[d] = shape[k]
    x_shape = [n if data.draw(st.booleans()) else 1 for n in shape]  # (1: broadcast along that dim)
    dim, k = data.draw(st.integers(0, rank - 1)), data.draw(st.integers(1, 2))
    z_shape = [n if i != dim else k for i, n in enumerate(shape)]
    x = np.arange(3 * np.prod(x_shape), dtype=np.int32).reshape([3, *x_shape])
    y = -np.arange(3 * np.prod(shape), dtype=np.int32).reshape([3, *shape])
    z = 100 + np.arange(3 * np.prod(z_shape), dtype=np.int32).reshape([3, *z_shape])

    def fn(x, y, z):
        return ops.broadcast_in_dim(x, out, dims), ops.concatenate([y, z, y], dim)
    check_vmap(fn, *(batched(v, a) for v, a in zip((x, y, z), axes)), in_axes=tuple(axes))
