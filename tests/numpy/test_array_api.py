"""The array API standard's pieces of hloforge.numpy that data-apis/array-api-tests found missing or
wrong (docs/array_api.md): the inspection namespace, finfo/iinfo, cumulative_sum/prod, the
``device``/``copy`` keywords. Checked against jax.numpy (and numpy where jax's x64-off defaults differ)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from hloforge import numpy as hnp


def test_namespace_info():
    info = hnp.__array_namespace_info__()
    assert hnp.__array_api_version__ == jnp.__array_api_version__
    assert info.default_dtypes() == {"real floating": np.dtype(np.float64), "complex floating": np.dtype(np.complex128),
                                     "integral": np.dtype(np.int64), "indexing": np.dtype(np.int64)}
    # the defaults are what creation functions give
    assert hnp.asarray(1.0).dtype == info.default_dtypes()["real floating"]
    assert hnp.asarray(1).dtype == info.default_dtypes()["integral"]
    assert info.devices() == [info.default_device()] == [jax.devices()[0]]
    assert hnp.ones(2).device == info.default_device()
    assert set(info.capabilities()) == set(jnp.__array_namespace_info__().capabilities())
    with jax.enable_x64(True):  # (jax lists its 64-bit dtypes only with x64)
        want = jnp.__array_namespace_info__()
        for kind in (None, "bool", "signed integer", "unsigned integer", "integral", "real floating",
                     "complex floating", "numeric", ("bool", "integral")):
            got = info.dtypes(kind=kind)
            assert got == {k: np.dtype(v) for k, v in want.dtypes(kind=kind).items()}, kind
    assert hnp.bool is np.bool_
    with pytest.raises(ValueError, match="unknown kind 'float'"):
        info.dtypes(kind="float")


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64, np.complex128])
def test_finfo(dtype):
    for arg in (dtype, np.dtype(dtype), hnp.asarray(1, dtype=dtype)):
        got = hnp.finfo(arg)
        want = np.finfo(dtype)
        assert got.dtype == want.dtype and got.bits == want.bits
        for name in ("eps", "max", "min", "smallest_normal"):
            assert type(getattr(got, name)) is float and getattr(got, name) == float(getattr(want, name)), name


def test_iinfo():
    for dtype in (np.int8, np.int64, np.uint8, np.uint64):
        for arg in (dtype, hnp.asarray(1, dtype=dtype)):
            got, want = hnp.iinfo(arg), np.iinfo(dtype)
            assert (got.bits, got.min, got.max, got.dtype) == (want.bits, want.min, want.max, np.dtype(dtype))
            assert type(got.max) is int and type(got.min) is int
    assert hnp.finfo(hnp.bfloat16).eps == float(jnp.finfo(jnp.bfloat16).eps)
    with pytest.raises(ValueError, match="int32 is not a floating"):
        hnp.finfo(np.int32)
    with pytest.raises(ValueError, match="float32 is not an integer"):
        hnp.iinfo(np.float32)
    with pytest.raises(TypeError, match="expected a dtype or an array, got 'nope'"):
        hnp.iinfo("nope")


X = np.array([[1, 2, 3], [4, 5, 6]], np.int32)


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("axis, include_initial", [(0, False), (1, True), (-1, False), (0, True)])
def test_cumulative(name, axis, include_initial):
    got = getattr(hnp, name)(X, axis=axis, include_initial=include_initial)
    want = getattr(np, name)(X, axis=axis, include_initial=include_initial)  # (numpy's dtype: int64)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, getattr(jnp, name)(X, axis=axis, include_initial=include_initial))


def test_cumulative_1d_dtype_and_errors():
    got = hnp.cumulative_sum(X[0].astype(np.float32), dtype=np.float64, include_initial=True)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, [0, 1, 3, 6])
    with pytest.raises(ValueError, match=r"axis is required for a 2-d array \(shape \(2, 3\)\)"):
        hnp.cumulative_sum(X)
    with pytest.raises(ValueError, match="at least one dimension"):
        hnp.cumulative_prod(np.float32(2))


def test_device_and_copy_keywords():
    dev = jax.devices()[0]
    x = hnp.asarray([1, 2], dtype=np.int16, device=dev, copy=True)
    assert x.dtype == np.int16 and x.device == dev
    y = hnp.astype(x, np.float32, copy=False, device=None)
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, jnp.astype(jnp.asarray([1, 2], jnp.int16), jnp.float32, copy=False))
    with pytest.raises(ValueError, match=r"hloforge.numpy.astype: device='tpu' is not supported"):
        hnp.astype(x, np.float32, device="tpu")


def test_asarray_of_sequences_holding_arrays():
    a, b = jnp.asarray([1, 2], jnp.uint8), jnp.asarray([3, 4, 5], jnp.uint8)
    got = hnp.asarray([[a[i] * b[j] for j in range(3)] for i in range(2)], dtype=np.uint8)  # (the suite's outer check)
    np.testing.assert_array_equal(got, np.outer([1, 2], [3, 4, 5]).astype(np.uint8))
    assert got.dtype == np.uint8
    assert hnp.asarray([a[0], 7]).dtype == jnp.asarray([a[0], 7]).dtype == np.uint8  # (7 is weak)
    np.testing.assert_array_equal(hnp.asarray((a, a)), jnp.asarray((a, a)))
    with pytest.raises(ValueError, match=r"different shapes \[\(2,\), \(3,\)\]"):
        hnp.asarray([a, b])


F = np.array([-np.nan, np.nan, -0.0, 0.0, -2.5, 3.0, -np.inf], np.float32)


def test_signbit_and_sign_of_zeros_and_nans():
    for dtype in (np.float16, np.float32, np.float64):
        np.testing.assert_array_equal(hnp.signbit(F.astype(dtype)), np.signbit(F.astype(dtype)))
    np.testing.assert_array_equal(hnp.signbit(np.array([-3, 0, 2], np.int8)), [True, False, False])
    got = hnp.sign(F)
    np.testing.assert_array_equal(got, np.sign(F))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.sign(F)))  # (sign(-0.0) is +0.0)


def test_small_signature_fixes():
    x = np.arange(5.0)
    np.testing.assert_array_equal(hnp.clip(x, max=2.0), jnp.clip(x, max=2.0))
    np.testing.assert_array_equal(hnp.clip(x, 1.0, max=3.0), np.clip(x, 1.0, 3.0))
    with pytest.raises(ValueError, match="pass a_min or min, not both"):
        hnp.clip(x, 1.0, min=2.0)
    u = np.array([200, 100], np.uint8)
    got = hnp.vecdot(u, u)
    assert got.dtype == np.vecdot(u, u).dtype == np.uint8
    assert int(got) == int(np.vecdot(u, u))  # (wraps, as numpy's)
    a, i = np.array([[3, 1], [2, 4]]), np.array([[1, 0], [0, 1]])
    np.testing.assert_array_equal(hnp.take_along_axis(a, i), np.take_along_axis(a, i))
    assert hnp.unstack(np.zeros((0, 2)), axis=0) == np.unstack(np.zeros((0, 2)), axis=0) == ()
    assert hnp.reshape(x[:4], (2, 2), copy=False).shape == (2, 2)
    got = hnp.fft.fftfreq(4, 0.5, dtype=np.float32)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.fft.fftfreq(4, 0.5).astype(np.float32))
    assert hnp.fft.rfftfreq(5, dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="fftfreq: dtype must be a real floating dtype, got int32"):
        hnp.fft.fftfreq(4, dtype=np.int32)


def test_eager_keys_keep_the_sign_of_zeros_and_nans():
    # a Python scalar is baked into the compiled call: -nan after nan (and 0-0j after 0j) is a program of its own
    for first, second in ((float("nan"), float("-nan")), (0.0, -0.0)):
        hnp.asarray(first, dtype=np.float64)
        assert np.signbit(hnp.asarray(second, dtype=np.float64)) == np.signbit(second)
    assert not np.signbit(np.asarray(hnp.asarray(complex(0.0, 0.0))).imag)
    assert np.signbit(np.asarray(hnp.asarray(complex(0.0, -0.0))).imag)
    assert bool(hnp.signbit(hnp.asarray(float("-nan"), dtype=np.float64)))  # (the suite's signbit(-NaN) case)


def test_creation_functions_take_the_array_api_device_keyword():
    device = hnp.zeros(2).device if hasattr(hnp.zeros(2), "device") else None
    calls = {"zeros": lambda d: hnp.zeros(2, device=d), "ones": lambda d: hnp.ones(2, device=d),
             "full": lambda d: hnp.full(2, 1.0, device=d), "arange": lambda d: hnp.arange(3, device=d),
             "empty": lambda d: hnp.empty(2, device=d), "eye": lambda d: hnp.eye(2, device=d),
             "linspace": lambda d: hnp.linspace(0, 1, 3, device=d),
             "zeros_like": lambda d: hnp.zeros_like(np.ones(2), device=d),
             "ones_like": lambda d: hnp.ones_like(np.ones(2), device=d),
             "full_like": lambda d: hnp.full_like(np.ones(2), 3, device=d),
             "empty_like": lambda d: hnp.empty_like(np.ones(2), device=d)}
    for name, call in calls.items():
        assert call(None).shape == call(device).shape
        with pytest.raises(ValueError, match=rf"hloforge.numpy.{name}: device='tpu:7' is not supported"):
            call("tpu:7")
