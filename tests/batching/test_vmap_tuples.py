"""Batching rules of tuple, get_tuple_element and after_all (frontend/batching/tuples.py): a batched
tuple is a tuple of batched elements, its dimension a tuple of theirs."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import hloforge as hf
from hloforge import ops
from hloforge.frontend.batching.tuples import _after_all_batch
from batching_helpers import check_vmap

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
Y = np.arange(6, dtype=np.int32).reshape(2, 3)


def nested(x, y):
    t = ops.tuple(x, ops.tuple(y, ops.after_all()), ops.after_all())
    inner = ops.get_tuple_element(t, 1)
    return ops.get_tuple_element(t, 0), ops.get_tuple_element(inner, 0)


@pytest.mark.parametrize("axes", [(0, 0), (0, None), (None, 1), (2, 1), (1, 0)], ids=str)
def test_tuple_elements_keep_their_dims(axes):
    x = X if axes[0] is not None else X[0]
    y = Y if axes[1] is not None else Y[0]
    x, y = np.moveaxis(x, 0, axes[0]) if axes[0] is not None else x, np.moveaxis(y, 0, axes[1]) if axes[1] is not None else y
    check_vmap(nested, x, y, in_axes=axes)


def test_no_transposes():
    f = hf.vmap(nested, in_axes=(2, 1), out_axes=(2, 1))
    text = hf.trace(f, hf.ShapeDtype((3, 4, 2), np.float32), hf.ShapeDtype((3, 2), np.int32)).text
    assert "stablehlo.transpose" not in text and "stablehlo.tuple" in text, text


def test_after_all_is_never_batched():
    with pytest.raises(RuntimeError, match="after_all got batched tokens"):
        _after_all_batch(2, [None], [0])


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3), axis=st.integers(0, 3), which=st.integers(0, 2))
def test_hypothesis_tuples(shape, axis, which):
    axis = min(axis, len(shape) - 1)
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)

    def fn(x):
        t = ops.tuple(ops.tuple(x), x, ops.after_all())
        return ops.get_tuple_element(ops.get_tuple_element(t, 0), 0) if which == 0 else ops.get_tuple_element(t, 1)
    check_vmap(fn, x, in_axes=axis, out_axes=min(which, len(shape) - 1))
