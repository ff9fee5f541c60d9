"""The CHLO ops jax's lowerings emit for jnp.square/var/hypot, jax.scipy.special.erfc/polygamma/zeta
and jax.lax.top_k: Module.vmap, Module.vjp and Module.jvp of jax's modules against jax.vmap,
jax.vjp and jax.jvp, per dtype; the builders' errors; top_k's evaluate."""
import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np
import pytest

import hloforge as hf
from hloforge import ops
from hloforge.frontend.registry import OPS
from ad_helpers import jax_run
from batching_helpers import assert_same

rng = np.random.default_rng(5)
N = 3


def _data(dtype, *shape, low=-2.0, high=2.0):
    if np.dtype(dtype).kind in "iu":
        return rng.permutation(np.arange(-40, 40))[:int(np.prod(shape))].reshape(shape).astype(dtype)
    x = rng.uniform(low, high, shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.uniform(low, high, shape)
    return x.astype(dtype)


def _leaves(r):
    return [np.asarray(o) for o in jax.tree_util.tree_leaves(r)]


def _module(f, *examples):
    return hf.Module.parse(jax.jit(f).lower(*examples).as_text())


BF16 = jnp.bfloat16
# name, function, example builder per dtype, dtypes, the chlo op its lowering must contain
CASES = [
    ("square", jnp.square, lambda d: _data(d, 4, 5), (np.float32, BF16, np.complex64), "chlo.square"),
    ("var", lambda x: jnp.var(x, axis=-1), lambda d: _data(d, 4, 5), (np.float32,), "chlo.square"),
    ("hypot", lambda x: jnp.hypot(x, 2 * x + 1), lambda d: _data(d, 4, 5), (np.float32,), "chlo.square"),
    ("erfc", jss.erfc, lambda d: _data(d, 4, 5), (np.float32, BF16), "chlo.erfc"),
    ("polygamma", lambda x: jss.polygamma(1, x), lambda d: _data(d, 4, 5, low=0.5, high=4.0), (np.float32,),
     "chlo.polygamma"),
    ("zeta", lambda q: jss.zeta(3.0, q), lambda d: _data(d, 4, 5, low=0.5, high=4.0), (np.float32,),
     "chlo.zeta"),
    ("i1e", jss.i1e, lambda d: _data(d, 4, 5, low=-20.0, high=20.0), (np.float32, BF16), "chlo.bessel_i1e"),
    ("i1e_small", jss.i1e, lambda d: _data(d, 4, 5, low=-1.0, high=1.0), (np.float32,), "chlo.bessel_i1e"),
    ("top_k", lambda x: jax.lax.top_k(x, 3), lambda d: _data(d, 4, 6), (np.float32, BF16, np.int32),
     "chlo.top_k"),
]
PARAMS = [pytest.param(f, make, d, op, id=f"{name}-{np.dtype(d).name}")
          for name, f, make, dtypes, op in CASES for d in dtypes]
TOL = {np.dtype(np.float32): 2e-5, np.dtype(np.complex64): 2e-5, np.dtype(BF16): 2e-2}


def _close(got, want):
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        if w.dtype.kind in "iub":
            np.testing.assert_array_equal(g, w)
        else:
            tol = TOL[w.dtype]
            np.testing.assert_allclose(g.astype(np.complex128 if w.dtype.kind == "c" else np.float64),
                                       w.astype(np.complex128 if w.dtype.kind == "c" else np.float64),
                                       rtol=tol, atol=tol)


@pytest.mark.parametrize("f, make, dtype, op", PARAMS)
@pytest.mark.parametrize("axis", [0, -1])
def test_module_vmap_matches_jax_vmap(f, make, dtype, op, axis):
    x = make(dtype)
    m = _module(f, x)
    assert op in m.text
    xs = np.stack([make(dtype) for _ in range(N)], axis=axis % (x.ndim + 1))
    got = _leaves(m.vmap(N, in_axes=axis).compile()(xs))
    ref = jax.vmap(f, in_axes=axis)  # (jax_run where every output has a tolerance; top_k's indices are bit for bit)
    _close(got, _leaves(jax.jit(ref)(xs) if op == "chlo.top_k" else jax_run(ref, xs)))


def _float_outputs(f):
    """f restricted to its float outputs (top_k's indices have no cotangent)."""
    return lambda x: [o for o in jax.tree_util.tree_leaves(f(x)) if jnp.issubdtype(o.dtype, jnp.inexact)]


@pytest.mark.parametrize("f, make, dtype, op", [p for p in PARAMS if "int32" not in p.id])
def test_module_vjp_and_jvp_match_jax(f, make, dtype, op):
    x = make(dtype)
    g = _float_outputs(f)
    m = _module(g, x)
    ys, pull = jax.vjp(g, x)
    cts = [_data(y.dtype, *y.shape) for y in ys]
    got = _leaves(m.vjp().compile()(x, *cts))
    _close(got, _leaves(ys) + _leaves(pull(cts)))
    t = _data(dtype, *x.shape)
    got = _leaves(m.jvp().compile()(x, t))
    ys, ts = jax.jvp(g, (x,), (t,))
    _close(got, _leaves(ys) + _leaves(ts))


def test_top_k_evaluate_is_the_compiled_result():
    for dtype in (np.float32, np.int32, np.int8):
        x = _data(dtype, 3, 7)
        want = _leaves(jax.jit(lambda a: jax.lax.top_k(a, 4))(x))
        got = OPS["chlo.top_k"].evaluate(x, k=4)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
            assert g.dtype == w.dtype


def test_evaluate_declines_where_the_backend_chooses():
    ties = np.array([[1.0, 2.0, 2.0]], np.float32)
    assert OPS["chlo.top_k"].evaluate(ties, k=2) is None
    assert OPS["chlo.top_k"].evaluate(np.array([[0.0, -0.0, 1.0]], np.float32), k=1) is None
    assert OPS["chlo.top_k"].evaluate(np.array([[np.nan, 1.0]], np.float32), k=1) is None
    assert OPS["chlo.erfc"].evaluate is None and OPS["chlo.zeta"].evaluate is None
    x = _data(np.float32, 5)
    np.testing.assert_array_equal(OPS["chlo.square"].evaluate(x), np.asarray(jax.jit(jnp.square)(x)))


def test_top_k_batches_over_its_last_dimension():
    x = _data(np.float32, 2, 5)
    m = hf.trace(lambda a: ops.top_k(a, 2), jax.ShapeDtypeStruct(x.shape, x.dtype))
    xs = np.stack([_data(np.float32, 2, 5) for _ in range(N)], -1)
    got = _leaves(m.vmap(N, in_axes=-1, out_axes=0).compile()(xs))
    _close(got, _leaves(jax.vmap(lambda a: jax.lax.top_k(a, 2), in_axes=-1)(xs)))


def _trace(fn, *specs):
    return hf.trace(fn, *[jax.ShapeDtypeStruct(s, d) for s, d in specs])


@pytest.mark.parametrize("fn, specs, error, message", [
    (lambda a: ops.top_k(a, 5), [((2, 4), np.float32)], ValueError,
     r"top_k: k=5 exceeds the last dimension of operand shape \(2, 4\)"),
    (lambda a: ops.top_k(a, -1), [((4,), np.float32)], ValueError, r"top_k: k must be >= 0, got -1"),
    (lambda a: ops.top_k(a, 1.5), [((4,), np.float32)], TypeError, r"top_k: k must be an int, got 1.5 of type float"),
    (lambda a: ops.top_k(a, 1), [((), np.float32)], ValueError, r"top_k: operand must have rank >= 1, got a 0-d"),
    (lambda a: ops.top_k(a, 1), [((3,), np.complex64)], TypeError, r"top_k: .*complex64"),
    (lambda a: ops.square(a), [((3,), np.int32)], TypeError, r"square: .*int32"),
    (lambda a: ops.erfc(a), [((3,), np.complex64)], TypeError, r"erfc: .*complex64"),
    (lambda a, b: ops.zeta(a, b), [((3,), np.float32), ((2,), np.float32)], ValueError, r"zeta: .*\(3,\).*\(2,\)"),
])
def test_builder_errors(fn, specs, error, message):
    with pytest.raises(error, match=message):
        _trace(fn, *specs)


def test_derivatives_jax_does_not_define_raise():
    m = _module(lambda n, x: jax.lax.polygamma(n, x), np.float32(1.0), np.float32(2.0))
    with pytest.raises(ValueError, match=r"polygamma: no derivative with respect to the order n"):
        m.vjp()
    m = _module(jss.zeta, np.float32(3.0), np.float32(2.0))
    with pytest.raises(NotImplementedError, match=r"zeta: no derivative with respect to x \(the exponent\)"):
        m.jvp()


def test_bessel_i1e_derivative_at_zero_tiny_and_large_values():
    x = np.array([0.0, 1e-9, -1e-3, 0.5, 14.9, 15.1, -30.0, 200.0], np.float32)
    m = _module(jss.i1e, x)
    got = _leaves(m.jvp().compile()(x, np.ones_like(x)))
    _close(got, _leaves(jax.jvp(jss.i1e, (x,), (np.ones_like(x),))))
