"""hloforge.numpy's ordering functions (frontend/numpy/_ordering.py) that jax.numpy defines where
numpy leaves the result open: nancumsum/nancumprod, nanargmax/nanargmin (-1 for an all-NaN slice),
lexsort, sort_complex, partition/argpartition (jax's top_k algorithm): against jax.numpy bit for bit
(x64 on: numpy's 64-bit dtypes) in one program per side, and the partition property against numpy."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
import hloforge.numpy as hnp

RNG = np.random.default_rng(3)
X = RNG.standard_normal((4, 7)).astype(np.float32)
X[1, 2], X[3] = np.nan, np.nan  # (one NaN; an all-NaN row)
U = RNG.integers(0, 4, (3, 6)).astype(np.uint8)  # (zeros and repeats)
I = RNG.integers(-3, 3, (5, 6)).astype(np.int32)


def _calls(m, x, u, i):
    return [m.nancumsum(x), m.nancumsum(x, axis=1), m.nancumprod(x, 0), m.nanargmax(x[:3], 1),
            m.nanargmin(x, 1, keepdims=True), m.nanargmax(x), m.nanargmin(i, 0),
            m.lexsort((i[0], i[1], i[2])), m.lexsort(i, axis=0),
            m.partition(x[:3], 3), m.partition(u, 0), m.partition(i, 2, axis=0), m.partition(x[:3], -1),
            m.argpartition(x[:3], 3), m.argpartition(u, 4), m.argpartition(i, 1, axis=0)]


def test_ordering_functions_equal_jax_numpy_bit_for_bit():
    got = hf.jit(lambda x, u, i: _calls(hnp, x, u, i))(X, U, I)
    with jax.enable_x64(True):
        want = jax.jit(lambda x, u, i: _calls(jnp, x, u, i))(X, U, I)
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.shape, g.dtype) == (w.shape, w.dtype), k
        np.testing.assert_array_equal(g, w, err_msg=f"call {k}")
    assert np.asarray(got[5]) == np.nanargmax(X) and list(np.asarray(got[3])) == list(np.nanargmax(X[:3], 1))
    assert np.asarray(got[4])[3, 0] == -1  # (numpy raises for the all-NaN row; jax gives -1)


@pytest.mark.parametrize("kth", [0, 2, 6])
def test_partition_puts_the_kth_value_where_a_sort_does(kth):
    x = RNG.standard_normal((3, 7))
    i = np.asarray(hnp.argpartition(x, kth))
    assert [sorted(r) for r in i.tolist()] == [list(range(7))] * 3
    for p in (np.asarray(hnp.partition(x, kth)), np.take_along_axis(x, i, 1)):
        np.testing.assert_array_equal(p[:, kth], np.sort(x)[:, kth])
        assert (p[:, :kth] <= p[:, kth:kth + 1]).all() and (p[:, kth + 1:] >= p[:, kth:kth + 1]).all()


def test_sort_complex_dtypes_follow_numpy():  # (jax: complex64 from float32)
    for dtype in (np.int8, np.uint16, np.int32, np.float32, np.float64, np.complex64):
        a = np.array([3, 1, 2], dtype)
        got = hnp.sort_complex(a)
        assert got.dtype == np.sort_complex(a).dtype, dtype
        np.testing.assert_array_equal(np.asarray(got), np.sort_complex(a))


@pytest.mark.parametrize("call, error, match", [
    (lambda: hnp.partition(X, 7), ValueError, r"hloforge.numpy.partition: kth 7 out of bounds for axis of size 7"),
    (lambda: hnp.argpartition(X.astype(np.complex64), 1), NotImplementedError,
     r"hloforge.numpy.argpartition for complex dtype is not implemented"),
    (lambda: hnp.lexsort(()), TypeError, r"need sequence of keys with len > 0"),
    (lambda: hnp.lexsort((I[0], I[:2])), ValueError, r"all keys need to be the same shape, got \[\(6,\), \(2, 6\)\]"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
