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


# ---------------------------------------------------------------- the compared cases

CONV = (3, 3, 4, 8)  # a conv kernel (HWIO)
FAMILY = ["glorot_uniform", "glorot_normal", "lecun_uniform", "lecun_normal", "he_uniform", "he_normal"]
DTYPES = [("truncated_normal", jnp.bfloat16), ("uniform", np.complex64), ("truncated_normal", np.complex64)]
AXES = [("fan_in", dict(in_axis=(0, 1), out_axis=-1, batch_axis=2)), ("fan_out", dict(in_axis=1, out_axis=(2, 3))),
        ("fan_geo_avg", dict(in_axis=0, out_axis=3, batch_axis=(1,)))]
PLAIN = [("uniform", (10.0,)), ("normal", (0.5,)), ("truncated_normal", (3.0, None, -1.0, 0.5))]
ORTHOGONAL = [((4, 6), -1, np.float32), ((2, 3, 4), 0, np.float64), ((3, 3), -1, np.complex64)]

# {case: (hloforge's initializer, jax's, shape, dtype passed to both or None, jax's x64 dtype or None)}
CASES = {("family", n): (getattr(init, n)(), getattr(J, n)(), CONV, None, None) for n in FAMILY}
CASES.update({("dtypes", dist, np.dtype(d)): (init.variance_scaling(0.5, "fan_avg", dist),
                                              J.variance_scaling(0.5, "fan_avg", dist), (5, 7), np.dtype(d), None)
              for dist, d in DTYPES})
CASES.update({("axes", mode): (init.variance_scaling(2.0, mode, "normal", **axes),
                               J.variance_scaling(2.0, mode, "normal", **axes), CONV, None, None)
              for mode, axes in AXES})
CASES.update({("plain", n): (getattr(init, n)(*args), getattr(J, n)(*args), CONV, None, None) for n, args in PLAIN})
CASES["builder"] = (init.he_uniform(dtype=np.float64), J.he_uniform(dtype=np.float64), (4, 6), None, np.float64)
CASES.update({("orthogonal", shape): (init.orthogonal(2.0, axis), J.orthogonal(2.0, axis), shape, np.dtype(d), None)
              for shape, axis, d in ORTHOGONAL})
CASES["delta_orthogonal"] = (init.delta_orthogonal(0.5), J.delta_orthogonal(0.5), CONV, None, None)

# ---------------------------------------------------------------- jax's side, one compile per x64 setting
# An eager jax.nn.initializers call compiles its sampler on its own (jax.random's jit, ~2 s on
# XLA:CPU, per shape, dtype and bounds) and each scaling op; the references are computed instead by
# one jax.jit of every case per x64 setting, run once per key, in a module-scoped fixture.
# hloforge's side stays eager (the calls under test; one hf.jit of every case compiles hardly
# faster than one program per case). In one program XLA reassociates jax's scaling of normal
# samples and of complex truncated normals with the sampler's last multiply (jax's eager ops keep
# them apart) and rounds them otherwise, so those cases keep eager references.
# test_batched_references_equal_jax_eager_calls checks that an eager jax call gives the same bits.
JAX_EAGER = {("axes", mode) for mode, _ in AXES} | {("dtypes", "truncated_normal", np.dtype(np.complex64))}


def _call(initializer, key, case):
    _, _, shape, dtype, _ = CASES[case]
    return initializer(key, shape) if dtype is None else initializer(key, shape, dtype)


def _x64(wide):
    return jax.enable_x64(True) if wide else contextlib.nullcontext()


def _wide(case) -> bool:
    """Whether jax's side of ``case`` runs with x64 (scoped: the global flag is never flipped)."""
    _, _, _, dtype, x64_dtype = CASES[case]
    return np.dtype(x64_dtype or dtype or np.float32) in (np.float64, np.complex128)


@pytest.fixture(scope="module")
def references():
    """{(key index, case): jax's values}: one jax.jit per x64 setting (eager calls for JAX_EAGER)."""
    out = {}
    for wide in (False, True):
        picked = [c for c in CASES if c not in JAX_EAGER and _wide(c) == wide]
        with _x64(wide):
            f = jax.jit(lambda key: [_call(CASES[c][1], key, c) for c in picked])
            for k, key in enumerate(KEYS):
                out.update({(k, c): np.asarray(r) for c, r in zip(picked, f(key))})
    for c in JAX_EAGER:
        with _x64(_wide(c)):
            out.update({(k, c): np.asarray(_call(CASES[c][1], key, c)) for k, key in enumerate(KEYS)})
    return out


def assert_bit_equal(references, case, keys=range(len(KEYS))):
    """hloforge's initializer of ``case``, called eagerly, gives jax's bits for every key."""
    for k in keys:
        got = _call(CASES[case][0], KEYS[k], case)
        assert isinstance(got, jax.Array)
        got, want = np.asarray(got), references[k, case]
        assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
        np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- tests

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


@pytest.mark.parametrize("name", FAMILY)
def test_variance_scaling_family(references, name):
    assert_bit_equal(references, ("family", name))


@pytest.mark.parametrize("distribution, dtype", DTYPES, ids=str)
def test_variance_scaling_dtypes(references, distribution, dtype):
    assert_bit_equal(references, ("dtypes", distribution, np.dtype(dtype)), keys=range(2))


@pytest.mark.parametrize("mode, axes", AXES)
def test_variance_scaling_axes_and_modes(references, mode, axes):
    assert_bit_equal(references, ("axes", mode), keys=range(2))


@pytest.mark.parametrize("name, args", PLAIN, ids=str)
def test_plain_distributions(references, name, args):
    assert_bit_equal(references, ("plain", name))


def test_builder_dtype_is_the_default(references):
    assert_bit_equal(references, "builder", keys=range(1))


@pytest.mark.parametrize("shape, column_axis, dtype", ORTHOGONAL, ids=str)
def test_orthogonal(references, shape, column_axis, dtype):
    """jax.random.orthogonal's QR: hloforge emits the same LAPACK custom calls, so the bits agree."""
    assert_bit_equal(references, ("orthogonal", shape), keys=range(2))


def test_delta_orthogonal(references):
    assert_bit_equal(references, "delta_orthogonal", keys=range(2))


def test_batched_references_equal_jax_eager_calls(references):
    """The fixture's jax.jit gives the bits of jax's eager calls, the references' meaning (these two
    share their samplers' compiles with test_inside_a_trace_and_with_typed_keys's eager calls)."""
    for k, case in [(1, ("family", "glorot_normal")), (0, ("orthogonal", (4, 6)))]:
        assert case not in JAX_EAGER
        with _x64(_wide(case)):
            eager = np.asarray(_call(CASES[case][1], KEYS[k], case))
        assert eager.dtype == references[k, case].dtype
        np.testing.assert_array_equal(eager, references[k, case])


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
