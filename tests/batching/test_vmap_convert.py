"""Batching rule of convert (frontend/batching/convert.py) against a loop over the examples and
against jax.vmap."""
import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hloforge as hf
from hloforge import ops
from batching_helpers import assert_same, check_vmap

RNG = np.random.default_rng(3)
X = (RNG.standard_normal((4, 2, 3)) * 10).astype(np.float32)


def conversions(x):
    return (ops.convert(x, np.int32), ops.convert(x, np.float16), ops.convert(x, np.bool_),
            ops.convert(x, np.complex64), ops.convert(ops.convert(x, np.int8), np.float32))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_convert_at_every_batch_axis(axis):
    check_vmap(conversions, np.moveaxis(X, 0, axis), in_axes=axis)


def test_convert_with_an_unbatched_operand_beside():
    check_vmap(lambda x, y: ops.add(ops.convert(x, np.float32), y), X.astype(np.int32)[0], X, in_axes=(None, 0))


def test_against_jax_vmap():
    fn = lambda x: ops.convert(x, np.int32)  # noqa: E731
    jfn = lambda x: jax.lax.convert_element_type(x, np.int32)  # noqa: E731
    assert_same(hf.vmap(fn, in_axes=2)(np.moveaxis(X, 0, 2)), jax.jit(jax.vmap(jfn, in_axes=2))(np.moveaxis(X, 0, 2)))


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 3), max_size=3), data=st.data())
def test_hypothesis_shapes_and_axes(shape, data):
    axis = data.draw(st.integers(0, len(shape)))
    x = RNG.integers(-100, 100, [3, *shape]).astype(np.int16)
    check_vmap(lambda x: (ops.convert(x, np.uint8), ops.convert(x, np.float32)), np.moveaxis(x, 0, axis),
               in_axes=axis)
