"""Window ops, bit ops, batch norm, structural ops, hloforge.lax's windows/special/products and
hloforge.nn's model layers against jax.lax / jax.nn / numpy (cases batched per traced module; each
test's jax references under one jax.jit, eager jax compiles every primitive on its own; jax_run's
compile without LLVM's optimizations where the comparison has a tolerance)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import hloforge as hf
from hloforge import nn, ops

from ad_helpers import jax_run
from helpers import assert_close, random

F32 = np.float32


# ---------------------------------------------------------------- reduce_window, pools

WINDOW_CASES = [  # shape, init, computation, window, strides, padding, base dilation, window dilation
    ((2, 3, 8, 7), -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID", None, None),
    ((2, 3, 8, 7), -np.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2), "SAME", None, None),
    ((2, 8, 7, 3), 0.0, lax.add, (1, 3, 3, 1), (1, 1, 2, 1), ((0, 0), (1, 2), (0, 1), (0, 0)), None, None),
    ((5, 6), 1.0, lax.mul, (2, 3), (1, 2), ((1, 0), (0, 1)), (2, 1), (1, 2)),
    ((9,), np.inf, lax.min, (3,), (2,), "SAME_LOWER", None, (2,)),
    ((0, 4), 0.0, lax.add, (1, 2), (1, 1), "VALID", None, None),
    ((), 0.0, lax.add, (), (), (), None, None),
    ((2, 2), 0.0, lax.add, (3, 3), (1, 1), "VALID", None, None),
]


def test_lax_reduce_window_matches_jax():
    xs = [random(c[0], F32, seed=i) for i, c in enumerate(WINDOW_CASES)]

    def fn(*xs):
        return [hf.lax.reduce_window(x, init, comp, w, s, p, b, d)
                for x, (_, init, comp, w, s, p, b, d) in zip(xs, WINDOW_CASES)]

    got = hf.jit(fn)(*xs)
    wants = jax_run(lambda *xs: [lax.reduce_window(x, np.float32(init), comp, w, s, p, b, d)
                                 for x, (_, init, comp, w, s, p, b, d) in zip(xs, WINDOW_CASES)], *xs)
    for g, want, (shape, *_) in zip(got, wants, WINDOW_CASES):
        np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-6, err_msg=str(shape))


def test_reduce_window_dtypes_variadic_and_callable_bodies():
    xi = random((4, 6), np.int32, 1, -50, 50)
    xb = random((4, 6), np.bool_, 2)
    xh = random((4, 6), np.float16, 3)

    def fn(xi, xb, xh):
        arg = ops.reduce_window([xi, ops.iota(xi.shape, np.int32, 1)], [np.iinfo(np.int32).min, 0], (1, 3),
                                window_strides=(1, 3),
                                body=lambda a, i, b, j: (ops.select(ops.compare(a, b, "GE"), a, b),
                                                         ops.select(ops.compare(a, b, "GE"), i, j)))
        return (ops.reduce_window(xi, 0, (2, 2), body="add"), ops.reduce_window(xb, False, (2, 3), body="or"),
                ops.reduce_window(xh, -np.inf, (2, 2), window_strides=(2, 2), body="max"), *arg,
                ops.reduce_window(xi, 0, (2, 2), body=lambda a, b: ops.add(ops.add(a, b), ops.constant(np.int32(0)))))

    s, o, m, vmax, imax, sq = hf.jit(fn)(xi, xb, xh)
    want_s, want_o, want_m = jax.jit(lambda xi, xb, xh: (
        lax.reduce_window(xi, 0, lax.add, (2, 2), (1, 1), "VALID"),
        lax.reduce_window(xb, False, lax.bitwise_or, (2, 3), (1, 1), "VALID"),
        lax.reduce_window(xh, -np.inf, lax.max, (2, 2), (2, 2), "VALID")))(xi, xb, xh)
    np.testing.assert_array_equal(s, want_s)
    np.testing.assert_array_equal(o, want_o)
    np.testing.assert_array_equal(m, want_m)
    blocks = xi.reshape(4, 2, 3)
    np.testing.assert_array_equal(vmax, blocks.max(-1))
    np.testing.assert_array_equal(imax, blocks.argmax(-1) + np.arange(2) * 3)
    np.testing.assert_array_equal(sq, s)  # (a callable body: its order of application is the backend's)


def test_select_and_scatter_is_max_pool_gradient():
    x = random((2, 6, 8, 3), F32, 4)
    dy = random((2, 3, 4, 3), F32, 5)
    dy_same = random((2, 3, 4, 3), F32, 6)
    window = (1, 3, 3, 1)
    pad = ((0, 0), (0, 1), (0, 1), (0, 0))
    got = hf.jit(lambda x, a, b: (
        ops.select_and_scatter(x, a, 0.0, (1, 2, 2, 1), window_strides=(1, 2, 2, 1)),
        ops.select_and_scatter(x, b, 0.0, window, window_strides=(1, 2, 2, 1), padding=pad),
        ops.select_and_scatter(x, a, 0.0, (1, 2, 2, 1), window_strides=(1, 2, 2, 1), select="LE")))(x, dy, dy_same)
    cases = [((1, 2, 2, 1), "VALID", 1), (window, pad, 1), ((1, 2, 2, 1), "VALID", -1)]

    def pool_vjps(x, dys):
        return [jax.vjp(lambda v: sign * lax.reduce_window(sign * v, -jnp.inf, lax.max, w, (1, 2, 2, 1), p), x)[1](d)[0]
                for (w, p, sign), d in zip(cases, dys)]
    for g, want in zip(got, jax_run(pool_vjps, x, (dy, dy_same, dy))):
        assert_close(g, np.asarray(want))


def test_pools_match_jax():
    x = random((2, 9, 8, 3), F32, 7)
    xc = np.moveaxis(x, -1, 1).copy()
    got = hf.jit(lambda x, xc: (
        nn.max_pool(x, (2, 2)), nn.max_pool(x, 3, strides=2, padding="SAME"),
        nn.avg_pool(x, (3, 3), strides=(2, 2), padding="SAME"),
        nn.avg_pool(x, (3, 3), strides=(2, 2), padding="SAME", count_include_pad=False),
        nn.avg_pool(x, (2, 2), padding=((1, 0), (0, 1))), nn.max_pool(xc, (2, 2), layout="NCHW"),
        nn.max_pool(ops.convert(x, np.int8), (2, 2))))(x, xc)

    def window(v, init, comp, w, s, p):
        return lax.reduce_window(v, init, comp, (1, *w, 1), (1, *s, 1), p if isinstance(p, str) else
                                 ((0, 0), *p, (0, 0)))

    def windows(x, ones, x8):
        return (window(x, -np.inf, lax.max, (2, 2), (2, 2), "VALID"), window(x, -np.inf, lax.max, (3, 3), (2, 2), "SAME"),
                window(x, 0.0, lax.add, (3, 3), (2, 2), "SAME"), window(ones, 0.0, lax.add, (3, 3), (2, 2), "SAME"),
                window(x, 0.0, lax.add, (2, 2), (2, 2), ((1, 0), (0, 1))),
                window(x8, np.int8(-128), lax.max, (2, 2), (2, 2), "VALID"))
    max2, max3, sum3, counts, sum2, max8 = (np.asarray(w) for w in
                                            jax.jit(windows)(x, np.ones_like(x), x.astype(np.int8)))
    assert_close(got[0], max2)
    assert_close(got[1], max3)
    assert_close(got[2], sum3 / 9)
    assert_close(got[3], sum3 / counts)
    assert_close(got[4], sum2 / 4)
    assert_close(got[5], np.moveaxis(np.asarray(got[0]), -1, 1))
    np.testing.assert_array_equal(got[6], max8)


# ---------------------------------------------------------------- bits

def test_bit_ops_match_jax():
    ints = {np.dtype(d): random((16,), d, 1, -1000, 1000) for d in (np.int8, np.int32, np.uint16, np.uint32)}
    for d, v in ints.items():
        v[:3] = [0, np.iinfo(d).max, np.iinfo(d).min]
    f = random((6, 4), F32, 2, -1e5, 1e5)
    f[0] = [1e-30, 7e4, np.inf, np.nan]
    formats = [(5, 10), (8, 7), (4, 3), (8, 23), (2, 1)]

    def fn(f, *xs):
        out = [o for x in xs for o in (hf.lax.population_count(x), hf.lax.clz(x))]
        out += [hf.lax.reduce_precision(f, e, m) for e, m in formats]
        out += [hf.lax.bitcast_convert_type(f, np.int32), hf.lax.bitcast_convert_type(f, np.uint8),
                hf.lax.bitcast_convert_type(hf.lax.bitcast_convert_type(f, np.uint16), np.float32),
                hf.lax.bitcast_convert_type(f, np.float32)]
        return out

    got = iter(hf.jit(fn)(f, *ints.values()))
    want = iter(jax.jit(lambda f, *xs: ([o for x in xs for o in (lax.population_count(x), lax.clz(x))]
                                        + [lax.reduce_precision(f, e, m) for e, m in formats]
                                        + [lax.bitcast_convert_type(f, np.uint8)]))(f, *ints.values()))
    for x in ints.values():
        np.testing.assert_array_equal(next(got), next(want))  # population_count
        np.testing.assert_array_equal(next(got), next(want))  # clz
    for e, m in formats:
        np.testing.assert_array_equal(next(got), next(want))  # reduce_precision
    np.testing.assert_array_equal(next(got), f.view(np.int32))
    np.testing.assert_array_equal(next(got), next(want))  # bitcast_convert_type to uint8
    np.testing.assert_array_equal(next(got), f)
    np.testing.assert_array_equal(next(got), f)


def test_rng_bit_generator_matches_jax():
    key = np.array([1, 2, 3, 4], np.uint32)
    algorithms = [("DEFAULT", lax.RandomAlgorithm.RNG_DEFAULT), ("THREE_FRY", lax.RandomAlgorithm.RNG_THREE_FRY),
                  ("PHILOX", lax.RandomAlgorithm.RNG_PHILOX)]

    def fn(k):
        state = ops.bitcast_convert(ops.reshape(k, (2, 2)), np.uint64)
        return [ops.rng_bit_generator(state, (3, 5), d, a) for a, _ in algorithms for d in (np.uint32, np.uint8)]

    got = hf.jit(fn)(key)
    wants = jax.jit(lambda key: [lax.rng_bit_generator(key, (3, 5), dtype=d, algorithm=ja)
                                 for _, ja in algorithms for d in (np.uint32, np.uint8)])(key)
    for (a, _), (state, bits), (want_state, want_bits) in zip([x for x in algorithms for _ in (0, 1)], got, wants):
        np.testing.assert_array_equal(bits, want_bits, err_msg=a)
        np.testing.assert_array_equal(np.asarray(state).view(np.uint32), want_state, err_msg=a)


# ---------------------------------------------------------------- batch norm

def test_batch_norm_ops_and_layer():
    x = random((4, 3, 5, 2), np.float64, 8)
    s, o = random((3,), np.float64, 9), random((3,), np.float64, 10)
    m, v = x.mean((0, 2, 3)), x.var((0, 2, 3))
    dy = random(x.shape, np.float64, 11)
    eps = 1e-3
    axes = (0, 2, 3)

    def fn(x, s, o, m, v, dy):
        y, bm, bv = ops.batch_norm_training(x, s, o, eps, 1)
        return (ops.batch_norm_inference(x, s, o, m, v, eps, 1), y, bm, bv, *ops.batch_norm_grad(x, s, bm, bv, dy, eps, 1),
                nn.batch_norm(x, s, o, m, v, axis=1, eps=eps), nn.batch_norm(x, s, o, axis=1, eps=eps, return_stats=True),
                nn.batch_norm(ops.convert(x, np.float32), s, o, axis=1, eps=eps))

    got = hf.jit(fn)(x, s, o, m, v, dy)
    eps32 = float(np.float32(eps))  # (the attribute is float32)
    b = lambda a: a.reshape(1, -1, 1, 1)  # noqa: E731
    ref = (x - b(m)) / np.sqrt(b(v) + eps32) * b(s) + b(o)
    for g in (got[0], got[1], got[7]):
        assert_close(g, ref)
    assert_close(got[2], m)
    assert_close(got[3], v)

    def fwd(x, s, o):
        mm, vv = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
        return (x - mm) / jnp.sqrt(vv + eps32) * s.reshape(1, -1, 1, 1) + o.reshape(1, -1, 1, 1)
    with jax.enable_x64(True):
        for g, w in zip(got[4:7], jax_run(lambda x, s, o, dy: jax.vjp(fwd, x, s, o)[1](dy), x, s, o, dy)):
            assert_close(g, np.asarray(w))
    y, bm, bv = got[8]
    assert_close(y, ref)
    assert_close(bv, v)
    assert_close(got[9], ref.astype(F32), rtol=1e-5)


# ---------------------------------------------------------------- structural ops

def test_structural_ops_run():
    x = random((2, 3), F32, 12)

    def fn(x):
        a, b = ops.optimization_barrier([x, ops.neg(x)])
        m = ops.map([a, b], lambda p, q: ops.add(ops.multiply(p, p), q))
        i = ops.map(x, lambda p: ops.convert(p, np.int32), dtype=np.int32)
        (c,) = ops.composite([m], "my.double", lambda t: ops.add(t, t), attributes={"k": 2, "s": "x"}, version=1)
        (d,) = ops.composite([m, x], "my.double", lambda t, u: ops.subtract(t, u))
        return a, b, m, i, c, d

    module = hf.trace(fn, x)
    text = module.text
    assert "func.func private @my_double_impl(" in text and "func.func private @my_double_impl_1(" in text
    assert 'stablehlo.composite "my.double" %2 {composite_attributes = {k = 2 : i64, s = "x"}' in text
    a, b, m, i, c, d = hf.jit(fn)(x)
    np.testing.assert_array_equal(a, x)
    np.testing.assert_array_equal(b, -x)
    assert_close(m, x * x - x)
    np.testing.assert_array_equal(i, x.astype(np.int32))
    assert_close(c, 2 * (x * x - x))
    assert_close(d, x * x - 2 * x)
    call = hf.trace(lambda x: ops.custom_call([x], "my_target", [((3,), F32), ((), np.int32)], has_side_effect=True,
                                              backend_config="cfg", api_version=2), x).text
    assert 'stablehlo.custom_call @my_target(%arg0) {api_version = 2 : i32, backend_config = "cfg", ' \
           'has_side_effect = true} : (tensor<2x3xf32>) -> (tensor<3xf32>, tensor<i32>)' in call


# ---------------------------------------------------------------- lax special functions and products

def test_special_functions_match_jax():
    a = np.array([0.5, 1, 2, 3, 5, 10, 20, 0.1, 7.5, 2, 1e-3, 30], F32)
    x = np.array([0.3, 1, 3, 2, 8, 9, 25, 0.05, 7, 0, 2, 29], F32)
    e = np.linspace(-0.99, 0.99, 12).astype(F32)
    got = hf.jit(lambda a, x, e: (hf.lax.igamma(a, x), hf.lax.igammac(a, x), hf.lax.lgamma(a), hf.lax.digamma(a),
                                  hf.lax.erf_inv(e), hf.lax.igamma(a, 0.0), hf.lax.igamma(-a, x)))(a, x, e)
    want = jax_run(lambda a, x, e: (lax.igamma(a, x), lax.igammac(a, x), lax.lgamma(a), lax.digamma(a),
                                    lax.erf_inv(e)), a, x, e)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=1e-6)
    np.testing.assert_array_equal(got[5], np.zeros_like(a))
    assert np.isnan(np.asarray(got[6])).all()
    with jax.enable_x64(True):
        a64, x64 = a.astype(np.float64), x.astype(np.float64)
        g = hf.jit(lambda a, x: (hf.lax.lgamma(a), hf.lax.igamma(a, x)))(a64, x64)
        # (jax.jit's own options: without LLVM's optimizations lgamma(1) and lgamma(2) are 8.9e-16, not 0)
        w = jax.jit(lambda a, x: (lax.lgamma(a), lax.igamma(a, x)))(a64, x64)
        np.testing.assert_allclose(np.asarray(g[0]), np.asarray(w[0]), rtol=1e-13)
        np.testing.assert_allclose(np.asarray(g[1]), np.asarray(w[1]), rtol=1e-9)


@pytest.mark.parametrize("name, args", [("igamma", (2.0, 1.0)), ("igammac", (2.0, 1.0)), ("lgamma", (0.5,)),
                                        ("digamma", (0.5,)), ("erf_inv", (0.5,))])
def test_special_functions_of_python_scalars_take_jax_lax_dtypes(name, args):
    got = hf.jit(lambda: getattr(hf.lax, name)(*args))()  # (constants in the program, as jax.jit's)
    want = jax.jit(lambda: getattr(lax, name)(*args))()
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-6)
    a = hf.jit(lambda x: hf.lax.igamma(x, 1.5))(np.ones((2, 1), np.float64))  # (a scalar takes the array's dtype)
    assert a.dtype == np.float64 and a.shape == (2, 1)


def test_dot_general_and_batch_matmul_match_jax():
    a, b = random((2, 3, 4), F32, 13), random((2, 4, 5), F32, 14)
    c = random((3, 2, 4), F32, 15)
    i8 = random((3, 4), np.int8, 16, -100, 100)
    got = hf.jit(lambda a, b, c, i8: (
        hf.lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))), precision="highest"),
        hf.lax.dot_general(c, a, (((2,), (2,)), ((1,), (0,))), precision=(lax.Precision.HIGHEST, lax.Precision.HIGHEST)),
        hf.lax.batch_matmul(a, b, precision="highest"),
        hf.lax.dot_general(i8, i8, (((1,), (1,)), ((), ())), preferred_element_type=np.int32)))(a, b, c, i8)
    assert_close(got[0], np.einsum("bij,bjk->bik", a, b), rtol=1e-5)
    assert_close(got[1], np.asarray(lax.dot_general(c, a, (((2,), (2,)), ((1,), (0,))), precision="highest")))
    assert_close(got[2], np.matmul(a, b), rtol=1e-5)
    np.testing.assert_array_equal(got[3], i8.astype(np.int32) @ i8.astype(np.int32).T)


# ---------------------------------------------------------------- nn

def test_nn_conv_matches_jax():
    x = random((2, 9, 8, 4), F32, 17)
    w, b = random((3, 3, 4, 6), F32, 18), random((6,), F32, 19)
    wg = random((3, 3, 2, 6), F32, 20)
    xc, wc = np.moveaxis(x, -1, 1).copy(), np.transpose(w, (3, 2, 0, 1)).copy()
    got = hf.jit(lambda x, w, b, wg, xc, wc: (
        nn.conv(x, w, b, strides=2), nn.conv(x, w, padding="VALID", dilation=(2, 1)),
        nn.conv(x, wg, groups=2, padding=((1, 1), (0, 2))), nn.conv(xc, wc, b, layout="NCHW")))(x, w, b, wg, xc, wc)
    dn = ("NHWC", "HWIO", "NHWC")
    hi = lax.Precision.HIGHEST
    want = jax_run(lambda x, w, b, wg, xc, wc: (
        lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=dn, precision=hi) + b,
        lax.conv_general_dilated(x, w, (1, 1), "VALID", rhs_dilation=(2, 1), dimension_numbers=dn, precision=hi),
        lax.conv_general_dilated(x, wg, (1, 1), ((1, 1), (0, 2)), dimension_numbers=dn, feature_group_count=2,
                                 precision=hi),
        lax.conv_general_dilated(xc, wc, (1, 1), "SAME", precision=hi) + b.reshape(1, -1, 1, 1)), x, w, b, wg, xc, wc)
    for g, want_i in zip(got, want):
        assert_close(g, np.asarray(want_i))


def test_attention_matches_jax():
    q = random((2, 5, 4, 8), F32, 21)
    k, v = random((2, 7, 2, 8), F32, 22), random((2, 7, 2, 8), F32, 23)
    k4, v4 = random((2, 5, 4, 8), F32, 24), random((2, 5, 4, 8), F32, 25)
    bias = random((1, 4, 5, 7), F32, 26)
    mask = random((2, 1, 5, 7), np.bool_, 27)
    mask[..., 0] = True
    got = hf.jit(lambda q, k, v, k4, v4, bias, mask: (
        nn.dot_product_attention(q, k, v), nn.dot_product_attention(q, k, v, bias=bias, mask=mask, scale=0.3),
        nn.dot_product_attention(q, k4, v4, is_causal=True)))(q, k, v, k4, v4, bias, mask)
    with jax.default_matmul_precision("highest"):
        want = jax_run(lambda q, k, v, k4, v4, bias, mask: (
            jax.nn.dot_product_attention(q, k, v), jax.nn.dot_product_attention(q, k, v, bias, mask, scale=0.3),
            jax.nn.dot_product_attention(q, k4, v4, is_causal=True)), q, k, v, k4, v4, bias, mask)
    for g, w in zip(got, want):
        assert_close(g, np.asarray(w), rtol=1e-5)


def test_embedding_and_dropout():
    table = random((10, 3), F32, 28)
    ids = np.array([[0, 9, 3], [3, 3, 1]], np.int32)
    x = random((64, 64), F32, 29)
    key = np.array([0, 42], np.uint32)
    mask = random((64, 64), np.bool_, 30)
    e, d, d_same, d_other, d_det, d_mask = hf.jit(lambda ids, table, x, key, k2, mask: (
        nn.embedding(ids, table), nn.dropout(key, x, 0.25), nn.dropout(key, x, 0.25), nn.dropout(k2, x, 0.25),
        nn.dropout(key, x, 0.5, deterministic=True), nn.dropout(key, x, 0.5, mask=mask)))(
        ids, table, x, key, np.array([0, 43], np.uint32), mask)
    np.testing.assert_array_equal(e, table[ids])
    d = np.asarray(d)
    kept = d != 0
    assert 0.70 < kept.mean() < 0.80
    assert_close(d[kept], x[kept] / 0.75)
    np.testing.assert_array_equal(d, d_same)
    assert (np.asarray(d_other) != d).any()
    np.testing.assert_array_equal(d_det, x)
    assert_close(d_mask, np.where(mask, x * 2, 0))


# ---------------------------------------------------------------- errors

S = hf.ShapeDtype((2, 4, 6, 6), F32)


@pytest.mark.parametrize("fn,error,match", [
    (lambda x: ops.reduce_window(x, 0.0, (2, 2)), ValueError,
     r"reduce_window: window_dimensions \[2, 2\] must have 4 entries, one per operand dimension"),
    (lambda x: ops.reduce_window(x, 0.0, (1, 1, 0, 2)), ValueError, r"window_dimensions \[1, 1, 0, 2\] must be >= 1"),
    (lambda x: ops.reduce_window(x, 0.0, (1, 1, 2, 2), body="sum"), ValueError,
     r"reduce_window: body 'sum' is not one of add, mul, max, min, and, or or a callable"),
    (lambda x: ops.reduce_window(x, 0.0, (1, 1, 2, 2), body="and"), TypeError,
     r"reduce_window: body 'and' needs bool or integer operands, got float32"),
    (lambda x: ops.reduce_window(x, 0.0, (1, 1, 2, 2), padding=((0, 0),) * 3 + ((-9, 0),)), ValueError,
     r"reduce_window: dimension 3 is negative \(-3\) after padding \[-9, 0\]"),
    (lambda x: ops.reduce_window([x, x], [0.0], (1, 1, 2, 2)), ValueError,
     r"reduce_window: needs as many init values as operands, got 2 and 1"),
    (lambda x: ops.reduce_window([x, x], [0.0, 0.0], (1, 1, 2, 2), body="add"), ValueError,
     r"a named body reduces one operand"),
    (lambda x: ops.select_and_scatter(x, x, 0.0, (1, 1, 2, 2), window_strides=(1, 1, 2, 2)), ValueError,
     r"select_and_scatter: source shape \(2, 4, 6, 6\) must be the window result shape \(2, 4, 3, 3\)"),
    (lambda x: ops.select_and_scatter(x, x, 0.0, (1, 1, 1, 1), select="EQ"), ValueError,
     r"select_and_scatter: select 'EQ' is not one of GE, GT, LE, LT or a callable"),
    (lambda x: ops.popcnt(x), TypeError, r"popcnt: operand dtype float32 is not supported; expected signed integer"),
    (lambda x: ops.bitcast_convert(x, np.float64), ValueError,
     r"bitcast_convert: float32 -> float64 needs a last dimension of 2, got shape \(2, 4, 6, 6\)"),
    (lambda x: ops.bitcast_convert(x, np.bool_), TypeError, r"cannot bitcast between bool and float32"),
    (lambda x: ops.reduce_precision(x, 0, 3), ValueError, r"exponent_bits 0 must be >= 1 and mantissa_bits 3 >= 0"),
    (lambda x: ops.reduce_precision(ops.convert(x, np.int32), 5, 3), TypeError,
     r"reduce_precision: operand dtype int32 is not supported; expected float"),
    (lambda x: ops.rng_bit_generator(ops.convert(x[0, 0, 0], np.uint32), (2,)), TypeError,
     r"rng_bit_generator: state must be a 1-d uint64 tensor, got Tensor\(shape=\(6,\), dtype=uint32\)"),
    (lambda x: ops.rng_bit_generator(ops.convert(x[0, 0, 0, :3], np.uint64), (2,), algorithm="THREE_FRY"), ValueError,
     r"THREE_FRY needs a 128-bit state, got .* \(192 bits\)"),
    (lambda x: ops.rng_bit_generator(ops.convert(x[0, 0, 0, :2], np.uint64), (2,), np.float32), TypeError,
     r"rng_bit_generator: dtype must be an integer type, got float32"),
    (lambda x: ops.rng_bit_generator(ops.convert(x[0, 0, 0, :2], np.uint64), (2,), algorithm="MT"), ValueError,
     r"algorithm 'MT' is not one of DEFAULT, THREE_FRY, PHILOX"),
    (lambda x: ops.batch_norm_inference(x, x[0, 0, 0, :4], x[0, 0, 0, :4], x[0, 0, 0, :4], x[0, 0, 0, :3], 1e-5, 1),
     TypeError, r"batch_norm_inference: variance must be a float32\[4\] tensor \(one per feature\)"),
    (lambda x: ops.batch_norm_training(x, x[0, 0, 0, :4], x[0, 0, 0, :4], 1e-5, 4), ValueError,
     r"batch_norm_training: feature_index 4 out of range"),
    (lambda x: ops.batch_norm_training(x, x[0, 0, 0, :4], x[0, 0, 0, :4], -1.0, 1), ValueError,
     r"batch_norm: epsilon -1.0 must be >= 0"),
    (lambda x: ops.map([x, x[0]], lambda a, b: a), ValueError, r"map: operand 1 shape \(4, 6, 6\) differs"),
    (lambda x: ops.map(x, lambda a: ops.convert(a, np.int32)), TypeError,
     r"map: body must return 1 value\(s\) of types \(float32\[\]\)"),
    (lambda x: ops.custom_call([x], "", [((1,), F32)]), TypeError, r"call_target_name must be a non-empty str"),
    (lambda x: ops.custom_call([x], "t", [((-1,), F32)]), ValueError, r"custom_call: result shape \(-1,\) has a negative"),
    (lambda x: ops.custom_call([x], "t", [((1,), "float7")]), TypeError, r"custom_call: result_specs must be a sequence"),
    (lambda x: ops.custom_call([x], "t", [((1,), F32)], api_version=7), ValueError,
     r"custom_call: api_version 7 is not one of \[1, 2, 3, 4\]"),
    (lambda x: ops.composite([x], "c", lambda t: ops.add(t, x)), ValueError,
     r"was made in the trace, which is not visible here"),
    (lambda x: ops.composite([x], "c", lambda t: t, attributes={"a": [1]}), TypeError,
     r"composite: attributes must map str to bool, int, float or str, got 'a': \[1\]"),
    (lambda x: hf.lax.reduce_window(x, 0.0, lax.add, (1, 2), (1, 1), "VALID"), ValueError,
     r"reduce_window: window_dimensions \[1, 2\] must have 4 entries"),
    (lambda x: hf.lax.batch_matmul(x, x[0]), ValueError,
     r"Arguments to batch_matmul must be at least 2D and have the same ndim, got 4 and 3"),
    (lambda x: hf.lax.dot_general(x, x, ((0,), (0,))), TypeError, r"dot_general: dimension_numbers must be"),
    (lambda x: hf.lax.lgamma(ops.convert(x, np.int32)), TypeError, r"lgamma does not accept dtype int32"),
    (lambda x: nn.max_pool(x, (2, 2, 2)), ValueError, r"max_pool: window_shape \[2, 2, 2\] must have 2 entries"),
    (lambda x: nn.avg_pool(ops.convert(x, np.int32), 2), TypeError, r"avg_pool: needs a float input, got int32"),
    (lambda x: nn.conv(x, x, layout="CHWN"), ValueError, r"conv: layout 'CHWN' is not one of NHWC, NCHW"),
    (lambda x: nn.batch_norm(x, x[0, :, 0, 0], x[0, :, 0, 0], x[0, :, 0, 0]), ValueError,
     r"batch_norm: pass both mean and var \(inference\) or neither"),
    (lambda x: nn.dropout(np.zeros(2, np.int32), x, 0.5), TypeError, r"dropout: key must be a uint32\[2\] array"),
    (lambda x: nn.dropout(np.zeros(2, np.uint32), x, 1.0), ValueError, r"dropout: rate 1.0 must be in \[0, 1\)"),
    (lambda x: nn.dot_product_attention(x, x[..., :3], x[..., :3]), ValueError,
     r"dot_product_attention: key \(2, 4, 6, 3\) does not fit query"),
    (lambda x: nn.embedding(x[0, 0], x[0, 0]), TypeError, r"embedding: ids must be integers, got float32"),
])
def test_errors(fn, error, match):
    with pytest.raises(error, match=match):
        hf.trace(fn, S)


def test_constant_folding_uses_the_new_evaluates_but_not_through_barriers():
    w = np.arange(8, dtype=np.int32).reshape(2, 1, 2, 2)

    def fn(x):
        c = ops.convolution(ops.constant(np.ones((1, 1, 3, 3), np.int32)), ops.constant(w[:1]))
        (b,) = ops.optimization_barrier([ops.constant(np.int32(3))])
        return ops.add(x, ops.reshape(c, (4,))), b

    m = hf.trace(fn, np.zeros(4, np.int32))
    m.optimize()
    counts = m.op_counts()
    assert "stablehlo.convolution" not in counts and counts["stablehlo.optimization_barrier"] == 1
    y, b = m.compile()(np.zeros(4, np.int32))
    np.testing.assert_array_equal(y, np.full(4, w[0].sum()))
    assert int(np.asarray(b)) == 3
