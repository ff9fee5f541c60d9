"""Findings of a hostile-input sweep: wrong results that now follow numpy/jax, and refusals that
are TypeError/ValueError naming the values involved."""
import warnings

import numpy as np
import pytest

import hloforge as hf
from hloforge import nn
from hloforge import numpy as hnp

# ---------------------------------------------------------------- round


@pytest.mark.parametrize("values", [
    np.int32([1234, -2551, 15, 50, 150, 250, -250, 2147483647, -2147483648]),
    np.int8([-128, 127, -125, 125, 115, -115, 105]),
    np.int16([32767, -32768, 15, -15]),
    np.uint8([250, 249, 15, 255]),
    np.uint32([4294967295, 5, 15]),
    np.int64([2 ** 62 + 1, -2 ** 63, 2 ** 63 - 1, 25]),
    np.uint64([2 ** 64 - 1, 15, 25]),
], ids=lambda v: v.dtype.name)
@pytest.mark.parametrize("decimals", [-20, -2, -1, 0, 3])
def test_round_of_integers_keeps_dtype_and_matches_numpy(values, decimals):
    got = np.asarray(hf.jit(lambda x: hnp.round(x, decimals))(values))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.round(values, decimals)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_round_of_the_finding_and_its_aliases():
    x = np.int32([1234, -2551, 15])
    for fn in (hnp.round, hnp.around, lambda t, d: t.round(d), np.round):
        got = np.asarray(hf.jit(lambda t: fn(t, -2))(x))
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, [1200, -2600, 0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("decimals", [-2, -1, 0, 1])
def test_round_of_floats_matches_numpy(dtype, decimals):
    x = np.array([1250, 1350, -1250, 125.5, 1.5, 2.5, -0.5, 0.125], dtype)
    np.testing.assert_array_equal(np.asarray(hf.jit(lambda t: hnp.round(t, decimals))(x)), np.round(x, decimals))


def test_round_errors():
    x = np.array([True, False])
    assert np.asarray(hf.jit(hnp.round)(x)).dtype == np.float16  # as numpy
    with pytest.raises(TypeError, match="round: cannot round a bool array to -1 decimals"):
        hf.jit(lambda t: hnp.round(t, -1))(x)
    with pytest.raises(TypeError, match=r"round: decimals must be an integer, got 1.5"):
        hf.jit(lambda t: hnp.round(t, 1.5))(np.float32([1]))


# ---------------------------------------------------------------- indexing

X = np.arange(24, dtype=np.int32).reshape(2, 3, 4)


@pytest.mark.parametrize("key", [
    True, False, np.True_, np.False_, (True, 0), (0, True), (0, True, 1), (True, slice(None), 0),
    (slice(None), 0, True), (1, slice(None), True), (Ellipsis, False), (True, Ellipsis, True), (None, True),
    (True, True), (True, False), (slice(None), True, slice(None), True), (True, slice(1, None, 2)),
], ids=repr)
def test_bool_scalar_index_matches_numpy(key):
    got = np.asarray(hf.jit(lambda t: t[key])(X))
    want = X[key]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("i", [0, 1, -1, -2])
@pytest.mark.parametrize("key", [
    lambda i: (i, slice(None, None, 2)), lambda i: (i, slice(3, 0, -2)), lambda i: (slice(None, None, 2), i),
    lambda i: (slice(1, None, 2), i, slice(None, None, 3)),
], ids=["i,::2", "i,3:0:-2", "::2,i", "1::2,i,::3"])
def test_traced_index_keeps_the_strides_of_the_other_axes(i, key):
    x = np.arange(2 * 5 * 6, dtype=np.float32).reshape(2, 5, 6)
    got = np.asarray(hf.jit(lambda t, j: t[key(j)])(x, np.int32(i)))
    np.testing.assert_array_equal(got, x[key(i)])


def test_traced_slice_bounds_point_at_dynamic_slice():
    with pytest.raises(TypeError, match=r"traced bound .*hloforge\.ops\.dynamic_slice"):
        hf.jit(lambda t, i: t[i:i + 2])(np.arange(5.0), np.int32(1))


# ---------------------------------------------------------------- nn


@pytest.mark.parametrize("values, dtype", [([0, 5, 255], np.uint8), ([-128, 0, 127], np.int8),
                                           ([0, 300, -300], np.int16), ([1, 2, 2 ** 31 - 1], np.int32)])
def test_softmax_of_integers_does_not_wrap(values, dtype):
    x = np.array(values, dtype)
    got = np.asarray(hf.jit(nn.softmax)(x))
    want_dtype = np.exp(x[:0]).dtype  # numpy's float for this integer type (the dtype softmax had before)
    z = x.astype(np.float64)
    want = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    assert got.dtype == want_dtype
    np.testing.assert_allclose(got.astype(np.float64), want, atol=1e-3)


def test_softmax_and_relu_refuse_what_they_cannot_order():
    c = np.array([1 + 1j], np.complex64)
    with pytest.raises(TypeError, match="relu: needs a real .* got complex64"):
        hf.jit(nn.relu)(c)
    with pytest.raises(TypeError, match="softmax: needs an integer or float tensor, got complex64"):
        hf.jit(nn.softmax)(c)
    with pytest.raises(TypeError, match="softmax: needs an integer or float tensor, got bool"):
        hf.jit(nn.softmax)(np.array([True]))


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(padding=-3), ValueError, "FNO: padding must be >= 0, got -3"),
    (dict(padding=2.0), TypeError, r"FNO: padding must be an int, got 2.0 \(float\)"),
    (dict(width=0), ValueError, "FNO: width must be >= 1, got 0"),
    (dict(n_layers=-1), ValueError, "FNO: n_layers must be >= 0, got -1"),
    (dict(hidden="8"), TypeError, "FNO: hidden must be an int, got '8'"),
    (dict(modes=2.5), TypeError, "SpectralConv: modes must be an int or a sequence of 1 int"),
])
def test_fno_validates_its_arguments(kwargs, error, message):
    args = dict(n_dims=1, modes=4, width=8)
    args.update(kwargs)
    with pytest.raises(error, match=message):
        nn.FNO(**args)


@pytest.mark.parametrize("args, error, message", [
    ((1, 2.5, 4, 4), TypeError, r"SpectralConv: modes must be an int or a sequence of 1 int\(s\).*got 2.5"),
    ((1, 4, 4.0, 4), TypeError, r"SpectralConv: in_channels must be an int, got 4.0 \(float\)"),
    ((1, 4, 4, -2), ValueError, "SpectralConv: out_channels must be >= 1, got -2"),
    ((0, 4, 4, 4), ValueError, "SpectralConv: n_dims must be >= 1, got 0"),
    ((2, (4,), 4, 4), TypeError, r"sequence of 2 int\(s\).*got \(4,\)"),
    ((1, True, 4, 4), TypeError, "got True"),
])
def test_spectral_conv_validates_its_arguments(args, error, message):
    with pytest.raises(error, match=message):
        nn.SpectralConv(*args)


def test_fno_with_zero_padding_and_integer_numpy_arguments_still_builds():
    model = nn.FNO(np.int64(1), 4, np.int32(8), n_layers=1, hidden=8, padding=0)
    x = np.ones((1, 1, 16), np.float32)
    assert np.asarray(hf.jit(model)(x, model.init())).shape == (1, 1, 16)


# ---------------------------------------------------------------- complex order (numpy 2)


def test_complex_maximum_minimum_and_clip_follow_numpy():
    nan = np.nan
    a = np.array([1 + 2j, -1 - 1j, 1 + 0j, complex(nan, 0), 2 + 1j, complex(1, nan), 0.5 + 3j], np.complex64)
    b = np.array([1 + 1j, 0, 1 + 3j, 1 + 1j, complex(0, nan), 0, 0.5 + 3j], np.complex64)
    for ours, theirs in ((hnp.maximum, np.maximum), (hnp.minimum, np.minimum)):
        np.testing.assert_array_equal(np.asarray(hf.jit(ours)(a, b)), theirs(a, b))
    np.testing.assert_array_equal(np.asarray(hf.jit(lambda x: hnp.clip(x, 0, 1))(a)), np.clip(a, 0, 1))


# ---------------------------------------------------------------- clear errors


def test_einsum_errors():
    x = np.ones((2, 2), np.float32)
    with pytest.raises(TypeError, match=r"einsum: subscripts must be a string .* got 5 \(int\)"):
        hf.jit(lambda t: hnp.einsum(5, t))(x)
    with pytest.raises(ValueError, match="einsum: output subscript 'i' appears more than once in 'ij->ii'"):
        hf.jit(lambda t: hnp.einsum("ij->ii", t))(x)


def test_numpy_asarray_of_a_traced_tensor():
    with pytest.raises(TypeError, match=r"cannot convert a traced Tensor\(shape=\(3,\), dtype=float32\) to a "
                                        r"numpy array.*hloforge\.numpy"):
        hf.jit(lambda t: np.asarray(t) + 1)(np.ones(3, np.float32))


@pytest.mark.parametrize("fn", [np.sum, np.mean, np.max, np.min, np.prod, np.any, np.all, np.round, np.transpose,
                                lambda t: np.sum(t, axis=0), lambda t: np.mean(t, axis=1, keepdims=True),
                                lambda t: np.clip(t, 1, 3), lambda t: np.reshape(t, (3, 2)),
                                lambda t: np.max(t, axis=(0, 1))],
                         ids=lambda f: getattr(f, "__name__", "lambda"))
def test_numpy_functions_on_tensors(fn):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    got, want = np.asarray(hf.jit(fn)(x)), fn(x)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want)


def test_numpy_reductions_refuse_out_and_unknown_arguments():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(TypeError, match=r"sum: out=array\(0.\) is not supported"):
        hf.jit(lambda t: np.sum(t, out=np.zeros(())))(x)
    with pytest.raises(TypeError, match="max: unsupported argument.*initial=3"):
        hf.jit(lambda t: np.max(t, initial=3))(x)
    with pytest.raises(TypeError, match="mean: unsupported argument.*where=True"):
        hf.jit(lambda t: np.mean(t, where=True))(x)


def test_portable_versions_out_of_range():
    m = hf.trace(lambda x: x + 1, hf.ShapeDtype((2,), np.float32))
    with pytest.raises(ValueError, match=r"StableHLO version 0\.0\.1 \(target '0\.0\.1'\) is below the minimum "
                                         r"version; supported: \d+\.\d+\.\d+ to \d+\.\d+\.\d+"):
        m.to_portable("0.0.1")
    with pytest.raises(ValueError, match=r"99\.0\.0.* is above the current version; supported"):
        m.to_portable("99.0.0")
    with pytest.raises(TypeError, match="to_portable: target must be a string .* got 3"):
        m.to_portable(3)
    assert hf.Module.parse(m.to_portable("1.0.0")).text == m.text
