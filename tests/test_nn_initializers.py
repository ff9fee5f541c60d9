"""hloforge.nn.initializers against jax.nn.initializers: for the same uint32[2] key, bit-equal
values (the samplers are hloforge.random's, scaled with jax's ops), for dense and conv kernel
shapes, real and complex dtypes, variance_scaling's axes and modes; eager calls return arrays,
calls inside hf.jit emit IR; errors name the bad values."""
import contextlib
import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
import hloforge.nn.initializers as init
from hloforge import nn

J = jax.nn.initializers
KEYS = [np.asarray(jax.random.PRNGKey(s)) for s in (0, 42)] + [np.asarray(jax.random.split(jax.random.PRNGKey(3))[1])]


def x64(dtype):
    d = np.dtype(dtype)
    return jax.enable_x64(True) if d in (np.float64, np.complex128) else contextlib.nullcontext()


def assert_bit_equal(mine, theirs, shape, dtype=None, keys=KEYS, x64_dtype=None):
    """``mine`` and ``theirs`` (initializers) give the same bits for every key."""
    for key in keys:
        got = mine(key, shape) if dtype is None else mine(key, shape, dtype)
        assert isinstance(got, jax.Array)
        with x64(x64_dtype or dtype or np.float32):
            want = np.asarray(theirs(key, shape) if dtype is None else theirs(key, shape, dtype))
        got = np.asarray(got)
        assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
        np.testing.assert_array_equal(got, want)


def test_namespace():
    assert nn.initializers is init and hf.nn.initializers.glorot_uniform is init.glorot_uniform
    assert init.xavier_uniform is init.glorot_uniform and init.kaiming_normal is init.he_normal
    names = {n for n in dir(J) if not n.startswith("_")}
    assert names <= set(dir(init)), names - set(dir(init))
    assert isinstance(init.glorot_uniform(), init.Initializer)
    for name in names - {"Initializer"}:  # jax's parameter names, and those of the init functions
        assert list(inspect.signature(getattr(init, name)).parameters) == list(
            inspect.signature(getattr(J, name)).parameters), name
    assert list(inspect.signature(init.normal()).parameters) == list(inspect.signature(J.normal()).parameters)


@pytest.mark.parametrize("name", ["glorot_uniform", "glorot_normal", "lecun_uniform", "lecun_normal", "he_uniform",
                                  "he_normal"])
def test_variance_scaling_family(name):
    assert_bit_equal(getattr(init, name)(), getattr(J, name)(), (3, 3, 4, 8))  # a conv kernel (HWIO)


@pytest.mark.parametrize("distribution, dtype", [
    ("truncated_normal", jnp.bfloat16), ("uniform", np.complex64), ("truncated_normal", np.complex64)], ids=str)
def test_variance_scaling_dtypes(distribution, dtype):
    assert_bit_equal(init.variance_scaling(0.5, "fan_avg", distribution),
                     J.variance_scaling(0.5, "fan_avg", distribution), (5, 7), np.dtype(dtype), keys=KEYS[:2])


@pytest.mark.parametrize("mode, axes", [
    ("fan_in", dict(in_axis=(0, 1), out_axis=-1, batch_axis=2)),
    ("fan_out", dict(in_axis=1, out_axis=(2, 3))),
    ("fan_geo_avg", dict(in_axis=0, out_axis=3, batch_axis=(1,))),
])
def test_variance_scaling_axes_and_modes(mode, axes):
    assert_bit_equal(init.variance_scaling(2.0, mode, "normal", **axes),
                     J.variance_scaling(2.0, mode, "normal", **axes), (3, 3, 4, 8), keys=KEYS[:2])


@pytest.mark.parametrize("name, args", [("uniform", (10.0,)), ("normal", (0.5,)),
                                        ("truncated_normal", (3.0, None, -1.0, 0.5))], ids=str)
def test_plain_distributions(name, args):
    assert_bit_equal(getattr(init, name)(*args), getattr(J, name)(*args), (3, 3, 4, 8))


def test_builder_dtype_is_the_default():
    assert_bit_equal(init.he_uniform(dtype=np.float64), J.he_uniform(dtype=np.float64), (4, 6), keys=KEYS[:1],
                     x64_dtype=np.float64)


@pytest.mark.parametrize("shape, column_axis, dtype", [
    ((4, 6), -1, np.float32), ((2, 3, 4), 0, np.float64), ((3, 3), -1, np.complex64),
], ids=str)
def test_orthogonal(shape, column_axis, dtype):
    """jax.random.orthogonal's QR: hloforge emits the same LAPACK custom calls, so the bits agree."""
    assert_bit_equal(init.orthogonal(2.0, column_axis), J.orthogonal(2.0, column_axis), shape, np.dtype(dtype),
                     keys=KEYS[:2])


def test_delta_orthogonal():
    assert_bit_equal(init.delta_orthogonal(0.5), J.delta_orthogonal(0.5), (3, 3, 4, 8), keys=KEYS[:2])


def test_constants():
    key = KEYS[0]
    for got, want in [(init.zeros(key, (2, 3)), J.zeros(key, (2, 3))),
                      (init.ones(key, (3,), np.int32), J.ones(key, (3,), jnp.int32)),
                      (init.constant(-7)(key, (2, 2)), J.constant(-7)(key, (2, 2))),
                      (init.constant(np.array([1.0, 2.0]), jnp.bfloat16)(key, (3, 2)),
                       J.constant(np.array([1.0, 2.0]), jnp.bfloat16)(key, (3, 2))),
                      (init.orthogonal()(key, (0, 3)), J.orthogonal()(key, (0, 3)))]:
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_inside_a_trace_and_with_typed_keys():
    key = KEYS[1]
    fn = hf.jit(lambda k: (init.glorot_normal()(k, (4, 6)), init.orthogonal()(k, (4, 6)), init.zeros(k, (2,))))
    traced = fn(key)
    np.testing.assert_array_equal(np.asarray(traced[0]), np.asarray(init.glorot_normal()(key, (4, 6))))
    np.testing.assert_allclose(np.asarray(traced[1]), np.asarray(J.orthogonal()(key, (4, 6))), rtol=1e-6, atol=1e-6)
    typed = jax.random.key(42)
    np.testing.assert_array_equal(np.asarray(init.he_normal()(typed, (3, 3, 4, 8))),
                                  np.asarray(J.he_normal()(typed, (3, 3, 4, 8))))


@pytest.mark.parametrize("call, error, match", [
    (lambda k: init.glorot_uniform()(k, (5,)), ValueError, "1-dimensional weights tensor with the default in_axis"),
    (lambda k: init.variance_scaling(1.0, "fan_max", "normal")(k, (2, 3)), ValueError, "invalid mode 'fan_max'"),
    (lambda k: init.variance_scaling(1.0, "fan_in", "cauchy")(k, (2, 3)), ValueError,
     "invalid distribution 'cauchy'"),
    (lambda k: init.lecun_normal(in_axis=4)(k, (2, 3)), ValueError, r"in_axis 4, out_axis -1 .* shape \(2, 3\)"),
    (lambda k: init.he_normal()(k, (2, 3), np.int32), ValueError, "dtype must be a float or complex dtype, got int32"),
    (lambda k: init.uniform()(k, (2, 3), np.complex64), ValueError, "uniform: dtype must be a float dtype"),
    (lambda k: init.normal()(k, (2, 3), out_sharding="x"), ValueError, "out_sharding is not supported"),
    (lambda k: init.normal()(k, (2, -3)), ValueError, r"shape \(2, -3\) has a negative dimension"),
    (lambda k: init.orthogonal()(k, (4,)), ValueError, r"orthogonal: needs at least a 2D shape, got \(4,\)"),
    (lambda k: init.orthogonal()(k, (4, 4), np.float16), TypeError, "dtype float16 is not supported"),
    (lambda k: init.orthogonal(column_axis=2)(k, (4, 4)), ValueError, "column_axis 2 is not an axis"),
    (lambda k: init.delta_orthogonal()(k, (4, 4)), ValueError, "needs a 3D, 4D or 5D shape"),
    (lambda k: init.delta_orthogonal()(k, (3, 8, 4)), ValueError, "fan_in 8 must be less than or equal to fan_out 4"),
    (lambda k: init.normal()(np.zeros(3, np.uint32), (2,)), ValueError, r"key must have shape \(2,\)"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call(KEYS[0])
