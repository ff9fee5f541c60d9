"""Batching rules of bitcast_convert, reduce_precision and rng_bit_generator
(frontend/batching/bits.py) against a loop over the examples and against jax.vmap."""
import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hloforge as hf
from hloforge import ops
from batching_helpers import assert_same, check_vmap

B = 3
RNG = np.random.default_rng(9)
F = RNG.standard_normal((B, 2, 4)).astype(np.float32)
H = RNG.integers(0, 1 << 16, (B, 2, 2)).astype(np.uint16)


def batched(x, axis):
    return x[0] if axis is None else np.moveaxis(x, 0, axis)


def bit_ops(f, h):
    """f: (2, 4) float32; h: (2, 2) uint16 (pairs that make a uint32)."""
    return (ops.bitcast_convert(f, np.int32), ops.bitcast_convert(f, np.uint8), ops.bitcast_convert(h, np.uint32),
            ops.bitcast_convert(h, np.float16), ops.reduce_precision(f, 5, 10), ops.reduce_precision(f, 8, 3))


@pytest.mark.parametrize("axes", [(0, 0), (1, 2), (2, 1), (None, 2), (2, None)])
def test_bitcast_and_reduce_precision_at_every_axis(axes):
    check_vmap(bit_ops, batched(F, axes[0]), batched(H, axes[1]), in_axes=axes)


STATES = np.arange(B * 2, dtype=np.uint64).reshape(B, 2) * 7919 + 3


@pytest.mark.parametrize("algorithm", ["DEFAULT", "THREE_FRY", "PHILOX"])
def test_rng_bit_generator_batched_state_gives_each_example_its_stream(algorithm):
    def fn(state):
        state, a = ops.rng_bit_generator(state, (2, 3), np.uint32, algorithm)
        state, b = ops.rng_bit_generator(state, (5,), np.uint64, algorithm)
        return state, a, b
    check_vmap(fn, STATES, in_axes=0)
    check_vmap(fn, STATES.T, in_axes=1, out_axes=1)


def test_against_jax_vmap():
    def hf_fn(f, h):
        return ops.bitcast_convert(f, np.int32), ops.bitcast_convert(h, np.uint32), ops.reduce_precision(f, 5, 10)

    def jax_fn(f, h):
        return (jax.lax.bitcast_convert_type(f, np.int32), jax.lax.bitcast_convert_type(h, np.uint32),
                jax.lax.reduce_precision(f, 5, 10))
    # (jax.vmap fails on a narrowing bitcast batched along its last dimension: 2 here is hloforge's alone)
    args, axes = (batched(F, 1), batched(H, 1)), (1, 1)
    assert_same(hf.vmap(hf_fn, in_axes=axes)(*args), jax.jit(jax.vmap(jax_fn, in_axes=axes))(*args))


def test_rng_bit_generator_differs_from_jax_vmap_by_design():
    """jax.vmap draws every example's bits from the first state (and advances only that one);
    hf.vmap gives the loop: example i's bits are rng_bit_generator(state i)."""
    keys = (np.arange(B * 4, dtype=np.uint32).reshape(B, 4) + 7)
    states = keys.view(np.uint64)            # (the same 128 bits as uint64[2])
    _, jax_bits = jax.jit(jax.vmap(lambda k: jax.lax.rng_bit_generator(k, (4,), dtype=np.uint32)))(keys)
    _, hf_bits = hf.vmap(lambda s: ops.rng_bit_generator(s, (4,), np.uint32))(states)
    _, first = jax.lax.rng_bit_generator(keys[1], (4,), dtype=np.uint32)
    np.testing.assert_array_equal(np.asarray(hf_bits)[1], np.asarray(first))
    assert not np.array_equal(np.asarray(jax_bits)[1], np.asarray(first))


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3), data=st.data())
def test_hypothesis_shapes_and_axes(shape, data):
    axis = data.draw(st.integers(0, len(shape)))
    x = RNG.standard_normal([2, *shape]).astype(np.float32)
    check_vmap(lambda x: (ops.bitcast_convert(x, np.uint16), ops.reduce_precision(x, 4, 2)), batched(x, axis),
               in_axes=axis)


@settings(max_examples=8, deadline=None)
@given(shape=st.lists(st.integers(1, 3), max_size=3), dtype=st.sampled_from([np.uint8, np.uint32, np.uint64]),
       algorithm=st.sampled_from(["THREE_FRY", "PHILOX"]), axis=st.integers(0, 1))
def test_hypothesis_rng_bit_generator_shapes_and_state_axes(shape, dtype, algorithm, axis):
    def fn(state):
        return ops.rng_bit_generator(state, shape, dtype, algorithm)
    check_vmap(fn, STATES if axis == 0 else STATES.T.copy(), in_axes=axis)
