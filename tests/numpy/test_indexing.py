"""numpy indexing completed: integer-array and mask indices against numpy, traced indices and
``Tensor.at[]`` against jax, take/take_along_axis/put_along_axis, the ordering functions."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import tree_util

import hloforge as hf
from hloforge import numpy as hnp

from helpers import assert_close

X = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
I = np.array([[0, 2], [1, -1]])
M3 = np.array([True, False, True])

CONSTANT_KEYS = [
    (I,), (slice(None), I), (Ellipsis, [0, -1]), (0, slice(None), [1, 2]), ([0, 1], slice(1, 3), [1, 2]),
    (None, [2, 0], None, slice(None, None, -1)), ([0, 2], [1, 3], [4, 0]), (M3,),
    (slice(None), np.array([True, False, True, False])), ([[0]], slice(None), [[1], [2]]), ([0, 1], None, [1, 2]),
    (slice(0, 3, 2), [3, 0], 2), (np.ones((3, 4), bool),), (Ellipsis, np.array([1, 0, 0, 1, 1], bool)),
    ([],), (1, [2], slice(None, 2)), (slice(None), slice(None), [[4, 0], [3, 3]]), ([2, 1, 0], Ellipsis, None),
]


def test_constant_array_and_mask_indices_match_numpy():
    got = hf.jit(lambda x: [x[k] for k in CONSTANT_KEYS])(X)
    for k, g in zip(CONSTANT_KEYS, got):
        want = X[k]
        assert np.asarray(g).shape == want.shape, (k, np.asarray(g).shape, want.shape)
        np.testing.assert_array_equal(np.asarray(g), want, err_msg=str(k))


def _traced(N, x, i, j):
    return [x[i], x[:, i], x[i[:3], :, j], x[..., j], x[j, None, 1], x[1:, i[:2]], x[i[:, None], j[None, :2]],
            x[0, j, ::-2], x[i[0], j], x[i[0], 1:3, i[1]]]


def _jax_both(fn, *args):
    got = hf.jit(lambda *a: fn(hnp, *a))(*args)
    want = jax.jit(lambda *a: fn(jnp, *a))(*args)
    for g, w in zip(tree_util.tree_leaves(got), tree_util.tree_leaves(want)):
        w = np.asarray(w)
        assert_close(np.asarray(g), w, dtype=w.dtype)


def test_traced_indices_match_jax_out_of_bounds_clamped():
    _jax_both(_traced, X, np.array([0, -1, 7, 2], np.int32), np.array([4, -5, 1], np.int32))


def _updates(N, x, i):
    r = N.arange(6, dtype=np.float32)
    return [x.at[i].set(-1.0), x.at[i, 0].add(100.0), x.at[1:, i].multiply(2.0), x.at[i].get(mode="fill"),
            x.at[i].get(mode="fill", fill_value=-3.0), x.at[i].get(), x.at[i].min(0.0), x.at[:, :, i].max(r),
            x.at[i].add(1.0, mode="clip"), x.at[i].set(7.0, mode="promise_in_bounds"), x.at[..., 2].set(x[..., 0]),
            x.at[0, 1].add(5.0), x.at[7].add(5.0), x.at[-1, -1, -1].mul(0.0), x.at[i, ::2, 1:3].add(1.0)]


def test_at_updates_match_jax_repeated_and_out_of_bounds():
    # repeated indices accumulate (add, mul, min, max); out-of-bound ones are dropped or clipped
    _jax_both(_updates, X, np.array([0, 2, 2, 9, -1, -7], np.int32))


def _take(N, x, i):
    return [N.take(x, i, axis=1), N.take(x, i), N.take(x, i[:2], axis=-1, mode="clip"),
            N.take(x, i, axis=0, mode="wrap"), N.take(x, i, axis=2, mode="fill", fill_value=-1.0),
            N.take_along_axis(x, N.argsort(x, axis=1), axis=1), N.take_along_axis(x, i[:3].reshape(1, 3, 1) % 4, axis=1),
            N.put_along_axis(x, N.argmax(x, axis=2, keepdims=True), -1.0, axis=2, inplace=False),
            N.take_along_axis(x, (i[:2] % 60), axis=None)]


def test_take_family_matches_jax():
    _jax_both(_take, X, np.array([0, 3, 1, 2, 3], np.int32))


def test_take_matches_numpy_raise_mode():
    i = np.array([[0, -1], [2, 1]])
    got = hf.jit(lambda x: (hnp.take(x, i, axis=1), hnp.take(x, 7), hnp.take(x, i, 2, mode="clip")))(X)
    for g, w in zip(got, (np.take(X, i, axis=1), np.take(X, 7), np.take(X, i, 2, mode="clip"))):
        np.testing.assert_array_equal(np.asarray(g), w)


V = np.array([[3.0, np.nan, -1.0, 2.0, -1.0], [0.5, 4.0, 4.0, -2.0, 1.0]], np.float32)
VI = np.array([[3, 1, 3, 0, 1], [7, -2, 5, 5, 0]], np.int16)


def _ordering(x, y):
    return [hnp.sort(x), hnp.sort(x, axis=0), hnp.sort(x, axis=None), hnp.argsort(x), hnp.argsort(y, axis=0),
            hnp.argsort(y, axis=1, stable=True), hnp.argmax(x), hnp.argmax(x, axis=1), hnp.argmin(y, axis=0),
            hnp.argmin(y, axis=1, keepdims=True), hnp.cumsum(y), hnp.cumsum(x, axis=1), hnp.cumprod(y, axis=0),
            hnp.cumsum(y > 0, axis=1), hnp.cumsum(y, axis=1, dtype=np.float32), y.argmax(), x.cumsum(axis=0)]


def _numpy_ordering(x, y):
    return [np.sort(x), np.sort(x, axis=0), np.sort(x, axis=None), np.argsort(x, kind="stable"),
            np.argsort(y, axis=0, kind="stable"), np.argsort(y, axis=1, kind="stable"), np.argmax(x),
            np.argmax(x, axis=1), np.argmin(y, axis=0), np.argmin(y, axis=1, keepdims=True), np.cumsum(y),
            np.cumsum(x, axis=1), np.cumprod(y, axis=0), np.cumsum(y > 0, axis=1), np.cumsum(y, axis=1, dtype=np.float32),
            y.argmax(), x.cumsum(axis=0)]


def test_ordering_matches_numpy():
    got = hf.jit(_ordering)(V, VI)
    for g, w in zip(got, _numpy_ordering(V, VI)):
        assert_close(np.asarray(g), w, dtype=w.dtype)


def test_descending_sort_is_stable_like_jax():
    y = np.array([3, 1, 3, 0, 1], np.int32)
    got = hf.jit(lambda a: (hnp.sort(a, descending=True), hnp.argsort(a, descending=True)))(y)
    np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(jnp.sort(y, descending=True)))
    np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(jnp.argsort(y, descending=True)))


# ---------------------------------------------------------------- errors

S = hf.ShapeDtype((3, 4), np.float32)


@pytest.mark.parametrize("fn,exc,match", [
    (lambda x: x[x > 0], TypeError, r"boolean index of a traced Tensor: the result shape would depend on the mask"),
    (lambda x: x[[0, 3]], IndexError, r"index 3 is out of bounds for axis 0 with size 3"),
    (lambda x: x[:, [-5]], IndexError, r"index -5 is out of bounds for axis 1 with size 4"),
    (lambda x: x[[0, 1], [[0, 1, 2]]], IndexError,
     r"shape mismatch: indexing arrays could not be broadcast together with shapes \(2,\) \(1, 3\)"),
    (lambda x: x[np.array([0.5])], IndexError, r"arrays used as indices must be of integer \(or boolean\) type"),
    (lambda x: x[x.astype(np.int32)[0], [0], 0, 0], IndexError, r"too many indices for array"),
    (lambda x: x[[0], ..., ...], IndexError, r"an index can only have a single ellipsis"),
    (lambda x: x[[x[0, 0].astype(np.int32)]], TypeError, r"a list of traced Tensors is not supported"),
    (lambda x: x.at[[0]].set(1.0, mode="wrap"), ValueError, r"at\[\]: mode 'wrap' is not one of"),
    (lambda x: x.at[[0, 1]].set(hnp.ones(3)), ValueError, r"at\[\].set: values of shape \(3,\) cannot be broadcast"),
    (lambda x: hnp.put_along_axis(x, np.zeros((3, 1), int), 1.0, 1), ValueError,
     r"put_along_axis cannot modify a Tensor in place; pass inplace=False"),
    (lambda x: hnp.take_along_axis(x, np.zeros(3, int), 1), ValueError,
     r"take_along_axis: indices and arr must have the same number of dimensions; got 1 and 2"),
    (lambda x: hnp.take(x, [0], mode="bogus"), ValueError, r"take: mode 'bogus' is not one of"),
    (lambda x: hnp.argmax(x[:, :0], axis=1), ValueError, r"attempt to get argmax of an empty sequence"),
    (lambda x: x[..., np.array([True, False])], IndexError,
     r"boolean index did not match indexed array along axis 1; size of axis is 4 but size of corresponding "
     r"boolean axis is 2"),
])
def test_indexing_errors(fn, exc, match):
    with pytest.raises(exc, match=match):
        hf.trace(fn, S)


def _random_keys(shape, count, seed=0):
    """Random numpy keys mixing ints, slices (any step), integer arrays, constant masks, None and ...;
    only those numpy itself accepts."""
    rng = np.random.default_rng(seed)
    keys = []
    while len(keys) < count:
        key, dims = [], list(shape)
        for _ in range(rng.integers(1, 5)):
            kind = rng.integers(0, 6)
            n = dims.pop(0) if dims and kind not in (4, 5) else None
            if kind == 4:
                key.append(None)
            elif kind == 5 and not any(k is Ellipsis for k in key):
                key.append(Ellipsis)
            elif n is None:
                continue
            elif kind == 0:
                key.append(int(rng.integers(-n, n)))
            elif kind == 1:
                lo, hi = sorted(rng.integers(-n - 1, n + 1, 2))
                key.append(slice(int(lo), int(hi), int(rng.choice([-2, -1, 1, 2, 3]))))
            elif kind == 2:
                key.append(rng.integers(-n, n, rng.integers(1, 3, rng.integers(1, 3))).tolist())
            else:
                key.append(rng.random(n) < 0.5)
        try:
            X[tuple(key)]
        except IndexError:
            continue
        keys.append(tuple(key))
    return keys


def test_random_keys_match_numpy():
    keys = _random_keys(X.shape, 40)
    got = hf.jit(lambda x: [x[k] for k in keys])(X)
    for k, g in zip(keys, got):
        want = X[k]
        assert np.asarray(g).shape == want.shape, (k, np.asarray(g).shape, want.shape)
        np.testing.assert_array_equal(np.asarray(g), want, err_msg=str(k))
