"""Rules of the model ops (frontend/ad/: convolution.py, window.py, normalization.py, the CHLO rows
of elementwise.py, bits.py, factorization.py) against jax.vjp/jax.jvp and central differences in
f64: convolution grids, window reductions and pooling, batch norm, CHLO math, bit ops, cholesky
and triangular_solve, and the gradient of a small CNN. Cases are batched into one traced function
per check, and a check against jax and its central differences compile as one hf.jit
(check_against_jax_and_fd); jax's references compile without LLVM's optimizations (compile time
dominates)."""
import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np
import pytest
from jax import lax

import hloforge as hf
from ad_helpers import (check_against_jax_and_fd, check_against_jax_cheap, check_finite_differences_once, close,
                        jax_run)
from hloforge import ops

rng = np.random.default_rng(0)


def _flat(fn, *groups):
    """fn over tuples of arrays as a function of the flat arrays (the checks take array arguments)."""
    sizes = [len(g) if isinstance(g, tuple) else None for g in groups]

    def flat(*args):
        out, i = [], 0
        for n in sizes:
            out.append(args[i] if n is None else tuple(args[i:i + n]))
            i += 1 if n is None else n
        return fn(*out)
    leaves = [a for g in groups for a in (g if isinstance(g, tuple) else (g,))]
    return flat, leaves


def against_jax(h, j, *groups, fd=False, **kw):
    """check_against_jax over groups; ``fd``: also central differences of h (True) or of
    ``(h2, *groups2)``, in the same hf.jit."""
    hf_flat, leaves = _flat(h, *groups)
    jax_flat, _ = _flat(j, *groups)
    if fd and fd is not True:
        fd_flat, fd_leaves = _flat(*fd)
        fd = (fd_flat, tuple(fd_leaves))
    check_against_jax_and_fd(hf_flat, jax_flat, *leaves, fd=fd, **kw)


def finite_differences(h, *groups, **kw):
    flat, leaves = _flat(h, *groups)
    check_finite_differences_once(flat, *leaves, **kw)

# lhs shape, rhs shape, ConvDimensions fields (None: NCHW/OIHW), strides, padding, lhs_dil, rhs_dil, fgc, bgc
NCHW = None
NHWC = ((0, 3, (1, 2)), (2, 3, (0, 1)), (0, 3, (1, 2)))  # (lhs, rhs (in, out, spatial), out) as below
CONVS = [
    ((2, 3, 6, 5), (4, 3, 3, 2), NCHW, (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1), 1, 1),
    ((2, 3, 7, 6), (4, 3, 3, 2), NCHW, (2, 1), ((1, 2), (0, 1)), (1, 2), (2, 1), 1, 1),
    ((2, 6, 5, 5), (6, 2, 2, 2), NCHW, (2, 2), ((1, 1), (1, 0)), (1, 1), (1, 1), 3, 1),
    ((4, 3, 5, 5), (4, 3, 2, 2), NCHW, (1, 2), ((0, 1), (1, 1)), (1, 1), (1, 2), 1, 2),
    ((2, 5, 6, 3), (3, 2, 3, 4), NHWC, (1, 2), ((-1, 1), (2, 0)), (2, 1), (1, 1), 1, 1),
    ((2, 4, 6, 4), (2, 2, 2, 6), NHWC, (1, 1), ((1, 1), (0, 0)), (1, 1), (1, 1), 2, 1),
]


def _dims(spec, ndim):
    if spec is None:
        return ops.ConvDimensions.default(ndim)
    (ib, if_, isp), (ki, ko, ksp), (ob, of, osp) = spec
    return ops.ConvDimensions(ib, if_, isp, ki, ko, ksp, ob, of, osp)


def _jax_dims(d):
    return lax.ConvDimensionNumbers((d[0], d[1], *d[2]), (d[4], d[3], *d[5]), (d[6], d[7], *d[8]))


def _conv_pair(cases):
    def h(lhss, rhss):
        return tuple(ops.convolution(l, r, _dims(c[2], len(c[0])), window_strides=c[3], padding=c[4],
                                     lhs_dilation=c[5], rhs_dilation=c[6], feature_group_count=c[7],
                                     batch_group_count=c[8]) for l, r, c in zip(lhss, rhss, cases))

    def j(lhss, rhss):
        return tuple(lax.conv_general_dilated(l, r, c[3], c[4], c[5], c[6], _jax_dims(_dims(c[2], len(c[0]))),
                                              feature_group_count=c[7], batch_group_count=c[8])
                     for l, r, c in zip(lhss, rhss, cases))
    lhss = tuple(rng.standard_normal(c[0]) for c in cases)
    rhss = tuple(rng.standard_normal(c[1]) for c in cases)
    return h, j, lhss, rhss


def test_convolution_grid_against_jax():
    h, j, lhss, rhss = _conv_pair(CONVS)
    against_jax(h, j, lhss, rhss)


def test_convolution_finite_differences_and_window_reversal():
    h, _, lhss, rhss = _conv_pair(CONVS[1:4])
    finite_differences(h, lhss, rhss)
    x, w = rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((4, 3, 3, 2))
    check_against_jax_cheap(lambda x, w: ops.convolution(x, w, window_strides=(2, 1), padding=((1, 0), (0, 1)),
                                                         window_reversal=(True, False)),
                            lambda x, w: lax.conv_general_dilated(x, w[:, :, ::-1, :], (2, 1), ((1, 0), (0, 1))), x, w)


def test_convolution_complex():
    h, j, lhss, rhss = _conv_pair(CONVS[2:4])
    lhss = tuple(l + 0.5j * np.roll(l, 1) for l in lhss)
    rhss = tuple(r - 0.3j * r[::-1] for r in rhss)
    against_jax(h, j, lhss, rhss)


def test_convolution_with_a_preferred_element_type():
    """f32 operands accumulated into f64, grouped and batch-grouped: the transposes contract in
    f64 and give f32 cotangents, as jax's do."""
    cases = CONVS[1:4]
    lhss = tuple(rng.standard_normal(c[0]).astype(np.float32) for c in cases)
    rhss = tuple(rng.standard_normal(c[1]).astype(np.float32) for c in cases)

    def h(lhss, rhss):
        return tuple(ops.convolution(l, r, window_strides=c[3], padding=c[4], lhs_dilation=c[5], rhs_dilation=c[6],
                                     feature_group_count=c[7], batch_group_count=c[8],
                                     preferred_element_type=np.float64) for l, r, c in zip(lhss, rhss, cases))

    def j(lhss, rhss):
        return tuple(lax.conv_general_dilated(l, r, c[3], c[4], c[5], c[6], feature_group_count=c[7],
                                              batch_group_count=c[8], preferred_element_type=jnp.float64)
                     for l, r, c in zip(lhss, rhss, cases))
    hf_flat, leaves = _flat(h, lhss, rhss)
    check_against_jax_cheap(hf_flat, _flat(j, lhss, rhss)[0], *leaves)


def test_module_vjp_and_jvp_of_a_jax_mixed_precision_convolution():
    """A parsed bf16 x bf16 -> f32 convolution keeps its f32 result through Module.vjp/jvp; the
    cotangents are bf16 and bit for bit jax.vjp's."""
    def f(x, k):
        return lax.conv_general_dilated(x, k, (1, 1), "SAME", preferred_element_type=jnp.float32)
    x, k = (rng.standard_normal(s).astype(jnp.bfloat16) for s in ((1, 2, 5, 5), (3, 2, 3, 3)))
    ct = rng.standard_normal((1, 3, 5, 5)).astype(np.float32)
    m = hf.Module.parse(jax.jit(f).lower(x, k).as_text())
    want_out, pullback = jax.vjp(f, x, k)
    got = m.vjp().compile()(x, k, ct)
    got_t = m.jvp().compile()(x, k, x[..., ::-1], k[..., ::-1])[1]
    want_t = jax.jvp(f, (x, k), (x[..., ::-1], k[..., ::-1]))[1]
    for g, w in zip([got[0], *got[1:], got_t], [want_out, *pullback(ct), want_t]):
        assert np.asarray(g).dtype == np.asarray(w).dtype, (np.asarray(g).dtype, np.asarray(w).dtype)
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_convolution_1d_f32():
    x, w = rng.standard_normal((2, 3, 7)).astype(np.float32), rng.standard_normal((2, 3, 3)).astype(np.float32)
    check_against_jax_cheap(lambda x, w: ops.convolution(x, w, window_strides=(3,), padding=((2, 2),)),
                            lambda x, w: lax.conv_general_dilated(x, w, (3,), ((2, 2),)), x, w)


# body, window, strides, padding, base dilation, window dilation
WINDOWS = [
    ("add", (1, 2, 3), (1, 2, 1), ((0, 0), (1, 0), (1, 2)), (1, 1, 1), (1, 1, 1)),
    ("add", (2, 2, 2), (1, 1, 2), ((0, 1), (0, 0), (2, 1)), (1, 2, 1), (1, 1, 2)),
    ("max", (1, 3, 3), (1, 2, 2), ((0, 0), (1, 1), (0, 1)), (1, 1, 1), (1, 1, 1)),
    ("max", (2, 2, 1), (1, 1, 1), ((0, 0), (0, 0), (0, 0)), (1, 1, 1), (1, 1, 1)),
    ("min", (1, 2, 2), (1, 2, 2), ((0, 0), (0, 0), (1, 1)), (1, 1, 1), (1, 1, 1)),
]
_JAX_BODY = {"add": (lax.add, 0.0), "max": (lax.max, -np.inf), "min": (lax.min, np.inf), "mul": (lax.mul, 1.0)}


def _window_pair(cases):
    def h(x):
        return tuple(ops.reduce_window(x, _JAX_BODY[c[0]][1], c[1], window_strides=c[2], padding=c[3],
                                       base_dilations=c[4], window_dilations=c[5], body=c[0]) for c in cases)

    def j(x):
        return tuple(lax.reduce_window(x, _JAX_BODY[c[0]][1], _JAX_BODY[c[0]][0], c[1], c[2], c[3], c[4], c[5])
                     for c in cases)
    return h, j


X3 = rng.standard_normal((3, 6, 7))  # distinct values: no ties in max/min windows


def test_reduce_window_against_jax():
    h, j = _window_pair(WINDOWS)
    check_against_jax_and_fd(h, j, X3)


def test_the_transpose_of_a_running_sum_is_the_running_sum_from_the_other_end():
    """Pattern: vjp of reduce_window add (window n over an axis of n, padding (n - 1, 0)) ->
    reduce_window add of the cotangent padded (0, n - 1) (jax's cumsum transpose); any other
    window keeps the pad + reduce_window transpose."""
    def running(x):
        return ops.reduce_window(x, 0.0, (1, 6, 1), window_strides=(1, 1, 1), padding=((0, 0), (5, 0), (0, 0)))

    def shorter(x):  # (window 5 of 6: not a running sum)
        return ops.reduce_window(x, 0.0, (1, 5, 1), window_strides=(1, 1, 1), padding=((0, 0), (4, 0), (0, 0)))
    for fn, pads in ((running, 0), (shorter, 1)):
        m = hf.trace(hf.grad(lambda x: ops.reduce(fn(x), 0.0, (0, 1, 2), "add")), X3)
        assert m.op_counts().get("stablehlo.pad", 0) == pads, fn.__name__
    check_against_jax_and_fd(running, lambda x: lax.cumsum(x, 1), X3)


def test_reduce_window_max_min_with_dilations():
    cases = [("max", (1, 2, 2), (1, 1, 2), ((0, 0), (1, 0), (0, 1)), (1, 2, 1), (1, 1, 2)),
             ("min", (2, 1, 3), (1, 2, 1), ((1, 0), (0, 0), (1, 1)), (2, 1, 1), (1, 1, 2))]
    h, j = _window_pair(cases)
    t = rng.standard_normal(X3.shape)
    with jax.enable_x64(True):
        _, want = jax_run(lambda x, t: jax.jvp(j, (x,), (t,)), X3, t)
    close(hf.jvp(h, (X3,), (t,))[1], want)
    check_finite_differences_once(h, X3)  # (jax has no vjp here; hloforge scatters per window tap)


def test_reduce_window_mul_zero_safe():
    cases = [("mul", (1, 2, 3), (1, 1, 2), ((0, 0), (1, 0), (0, 1)), (1, 1, 1), (1, 1, 1)),
             ("mul", (2, 2, 1), (1, 2, 1), ((0, 0), (0, 0), (0, 0)), (1, 2, 1), (1, 1, 1))]
    h, j = _window_pair(cases)
    x = X3.copy()
    x[0, 2, 3] = 0.0
    x[1, 1, 1] = x[1, 1, 2] = 0.0
    check_finite_differences_once(h, x)
    t = rng.standard_normal(x.shape)
    with jax.enable_x64(True):
        _, want = jax_run(lambda x, t: jax.jvp(j, (x,), (t,)), x, t)
    close(hf.jvp(h, (x,), (t,))[1], want)


def test_select_and_scatter_against_jax():
    from jax._src.lax.windowed_reductions import _select_and_scatter_add
    x = rng.standard_normal((2, 6, 7))
    pads = ((0, 0), (1, 1), (0, 1))
    src = rng.standard_normal((2, 3, 4))

    def h(s, x):
        return ops.select_and_scatter(x, s, 0.0, (1, 3, 2), window_strides=(1, 2, 2), padding=pads)

    def j(s, x):
        return _select_and_scatter_add(s, x, lax.ge_p, (1, 3, 2), (1, 2, 2), pads)
    check_against_jax_and_fd(h, j, src, x)


def test_conv_and_max_pool_gradient_of_a_jax_module():
    def f(x, w):
        y = lax.conv_general_dilated(x, w, (2, 1), "SAME", rhs_dilation=(1, 2), feature_group_count=3)
        return jnp.sum(lax.reduce_window(y, -jnp.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2), "SAME") ** 2)
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    w = rng.standard_normal((6, 1, 3, 2)).astype(np.float32)
    m = hf.Module.parse(jax.jit(f).lower(x, w).as_text())
    close(m.vjp().compile()(x, w, np.float32(1.0))[1:], jax_run(jax.grad(f, argnums=(0, 1)), x, w), rtol=1e-4)


# ---------------------------------------------------------------- batch norm

EPS = float(np.float32(1e-3))


def _jax_bn(x, scale, offset, fi):
    axes = tuple(d for d in range(x.ndim) if d != fi)
    shape = [1] * x.ndim
    shape[fi] = -1
    mean, var = jnp.mean(x, axes), jnp.var(x, axes)
    y = (x - mean.reshape(shape)) * lax.rsqrt(var.reshape(shape) + EPS) * scale.reshape(shape) + offset.reshape(shape)
    return y, mean, var


def _jax_bn_inference(x, scale, offset, mean, var, fi):
    shape = [1] * x.ndim
    shape[fi] = -1
    r = [v.reshape(shape) for v in (scale, offset, mean, var)]
    return (x - r[2]) * lax.rsqrt(r[3] + EPS) * r[0] + r[1]


def test_batch_norm_training_and_inference_against_jax():
    x = rng.standard_normal((4, 3, 5))
    scale, offset = rng.standard_normal(5), rng.standard_normal(5)
    scale3, offset3, mean, var = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(3), \
        rng.uniform(0.5, 2.0, 3)

    def h(x, scale, offset, scale3, offset3, mean, var):
        return (ops.batch_norm_training(x, scale, offset, EPS, 2),
                ops.batch_norm_inference(ops.transpose(x, (0, 2, 1)), scale3, offset3, mean, var, EPS, 2))

    def j(x, scale, offset, scale3, offset3, mean, var):
        return (_jax_bn(x, scale, offset, 2),
                _jax_bn_inference(jnp.transpose(x, (0, 2, 1)), scale3, offset3, mean, var, 2))
    check_against_jax_and_fd(h, j, x, scale, offset, scale3, offset3, mean, var, rtol=1e-8, fd_rtol=1e-5)


def test_batch_norm_grad_second_order():
    x = rng.standard_normal((4, 3, 2))
    scale, dy = rng.standard_normal(3), rng.standard_normal((4, 3, 2))

    def h(x, scale, dy):
        _, mean, var = ops.batch_norm_training(x, scale, scale, EPS, 1)
        return ops.batch_norm_grad(x, scale, mean, var, dy, EPS, 1)

    def j(x, scale, dy):
        _, f_vjp = jax.vjp(lambda x, s, o: _jax_bn(x, s, o, 1)[0], x, scale, scale)
        gx, gs, go = f_vjp(dy)
        return gx, gs, go
    check_against_jax_and_fd(h, j, x, scale, dy, rtol=1e-8, fd_rtol=1e-5)


# ---------------------------------------------------------------- CHLO math and bit ops

CHLO = [(ops.asin, jnp.arcsin, (-0.9, 0.9)), (ops.acos, jnp.arccos, (-0.9, 0.9)), (ops.atan, jnp.arctan, (-3, 3)),
        (ops.sinh, jnp.sinh, (-2, 2)), (ops.cosh, jnp.cosh, (-2, 2)), (ops.asinh, jnp.arcsinh, (-3, 3)),
        (ops.acosh, jnp.arccosh, (1.2, 4)), (ops.atanh, jnp.arctanh, (-0.9, 0.9)),
        (ops.erf_inv, jss.erfinv, (-0.9, 0.9)), (ops.lgamma, jss.gammaln, (0.2, 6)),
        (ops.lgamma, jss.gammaln, (-2.8, -2.2)), (ops.digamma, jss.digamma, (0.1, 9)),
        (ops.digamma, jss.digamma, (30, 200))]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_chlo_math_against_jax(dtype):
    xs = tuple(rng.uniform(lo, hi, 7).astype(dtype) for _, _, (lo, hi) in CHLO)
    against_jax(lambda xs: tuple(f(x) for (f, _, _), x in zip(CHLO, xs)),
                lambda xs: tuple(f(x) for (_, f, _), x in zip(CHLO, xs)), xs,
                rtol=1e-8 if dtype == np.float64 else 1e-4, fd=dtype == np.float64, fd_rtol=1e-6)


CHLO_COMPLEX = [(ops.asin, jnp.arcsin), (ops.acos, jnp.arccos), (ops.atan, jnp.arctan), (ops.sinh, jnp.sinh),
                (ops.cosh, jnp.cosh), (ops.asinh, jnp.arcsinh), (ops.acosh, jnp.arccosh), (ops.atanh, jnp.arctanh)]


def test_chlo_math_complex_against_jax():
    z = rng.uniform(-0.8, 0.8, 6) + 1j * rng.uniform(0.2, 0.8, 6)
    against_jax(lambda z: tuple(f(z) for f, _ in CHLO_COMPLEX), lambda z: tuple(f(z) for _, f in CHLO_COMPLEX), z)


def test_trigamma_series_for_negative_arguments():
    x = np.array([-3.7, -2.5, -1.2, -0.3, 0.25, 0.5, 1.0, 3.3, 12.0])
    check_finite_differences_once(ops.digamma, x, eps=1e-5, rtol=1e-6)


def test_piecewise_constant_and_bit_ops_have_zero_tangents():
    x = np.array([0.5, -np.inf, np.inf, 2.0, -1.5])
    y = np.array([0.5, -3.0, 1.25, 2.0, -1.5])

    def h(x, y):
        flags = ops.add(ops.convert(ops.is_inf(x), np.float64),
                        ops.add(ops.convert(ops.is_pos_inf(x), np.float64), ops.convert(ops.is_neg_inf(x), np.float64)))
        bits = ops.bitcast_convert(x, np.int64)
        counts = ops.convert(ops.add(ops.popcnt(bits), ops.count_leading_zeros(bits)), np.float64)
        back = ops.bitcast_convert(bits, np.float64)
        _, rand = ops.rng_bit_generator(ops.constant(np.array([1, 2], np.uint64)), (5,), np.uint32)
        return (ops.add(flags, counts), ops.next_after(x, ops.constant(np.zeros(5))), back,
                ops.convert(rand, np.float64), ops.reduce_precision(ops.multiply(y, y), 5, 10))
    t = np.ones(5)
    out, tan = hf.jvp(h, (x, y), (t, t))
    for z in tan[:4]:
        assert not np.any(np.asarray(z))
    with jax.enable_x64(True):
        _, want = jax_run(lambda y, t: jax.jvp(lambda y: lax.reduce_precision(y * y, 5, 10), (y,), (t,)), y, t)
    close(tan[4], want)
    _, f_vjp = hf.vjp(lambda y: ops.reduce_precision(ops.multiply(y, ops.constant(np.full(5, 3.0))), 5, 10), y)
    close(f_vjp(np.full(5, 1 + 2 ** -12)), (np.full(5, 3.0),))


# ---------------------------------------------------------------- cholesky, triangular_solve

def _spd(a):
    return a @ np.swapaxes(a, -1, -2).conj() + a.shape[-1] * np.eye(a.shape[-1])


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_cholesky_against_jax(dtype):
    a = rng.standard_normal((2, 4, 4)).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal((2, 4, 4))
    a = _spd(a)

    def sym(a):
        return (a + jnp.conj(jnp.swapaxes(a, -1, -2))) / 2

    def hsym(a):
        return ops.multiply(ops.add(a, ops.transpose(ops.complex(ops.real(a), ops.neg(ops.imag(a)))
                                                     if np.dtype(dtype).kind == "c" else a, (0, 2, 1))),
                            ops.constant(np.full(a.shape, 0.5, dtype)))

    def h(a):
        return ops.cholesky(hsym(a)), ops.cholesky(hsym(a), lower=False)

    def j(a):
        low = lax.linalg.cholesky(sym(a), symmetrize_input=False)
        return jnp.tril(low), jnp.conj(jnp.swapaxes(jnp.tril(low), -1, -2))
    # (f64: central differences of the raw op, which reads one triangle)
    raw = (lambda a: (ops.cholesky(a), ops.cholesky(a, lower=False)), (a,))
    check_against_jax_and_fd(h, j, a, fd=raw if dtype == np.float64 else False)


TS = [(left, lower, unit, tr) for left in (True, False) for lower in (True, False)
      for unit, tr in ((False, "NO_TRANSPOSE"), (True, "TRANSPOSE"), (False, "ADJOINT"))]


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_triangular_solve_against_jax(dtype):
    def sample(shape):
        x = rng.standard_normal(shape)
        return (x + 1j * rng.standard_normal(shape) if np.dtype(dtype).kind == "c" else x).astype(dtype)
    a = sample((2, 4, 4)) + 4 * np.eye(4)
    bs = tuple(sample((2, 4, 3) if left else (2, 3, 4)) for left, *_ in TS)

    def h(a, bs):
        return tuple(ops.triangular_solve(a, b, left_side=l, lower=lo, unit_diagonal=u, transpose_a=tr)
                     for b, (l, lo, u, tr) in zip(bs, TS))

    def j(a, bs):
        return tuple(lax.linalg.triangular_solve(a, b, left_side=l, lower=lo, unit_diagonal=u,
                                                 transpose_a=tr != "NO_TRANSPOSE", conjugate_a=tr == "ADJOINT")
                     for b, (l, lo, u, tr) in zip(bs, TS))
    some = TS[::3]  # (central differences of a subset: compile time)
    subset = (lambda a, bs: tuple(ops.triangular_solve(a, b, left_side=l, lower=lo, unit_diagonal=u, transpose_a=tr)
                                  for b, (l, lo, u, tr) in zip(bs, some)), a, bs[::3])
    against_jax(h, j, a, bs, fd=subset if dtype == np.float64 else False)


# ---------------------------------------------------------------- a small CNN

def test_small_cnn_gradient_against_jax():
    x = rng.standard_normal((4, 3, 8, 8)).astype(np.float32)
    params = (rng.standard_normal((6, 3, 3, 3)).astype(np.float32) * 0.3, np.ones(6, np.float32),
              np.zeros(6, np.float32), rng.standard_normal((4, 6, 2, 2)).astype(np.float32) * 0.3)

    def h(params, x):
        w1, gamma, beta, w2 = params
        y = ops.convolution(x, w1, padding=((1, 1), (1, 1)))
        y, _, _ = ops.batch_norm_training(y, gamma, beta, EPS, 1)
        y = ops.maximum(y, ops.constant(np.zeros(y.shape, np.float32)))
        y = ops.reduce_window(y, -np.inf, (1, 1, 2, 2), window_strides=(1, 1, 2, 2), body="max")
        y = ops.convolution(y, w2, window_strides=(2, 2))
        y = ops.reduce_window(y, 0.0, (1, 1, 2, 2), body="add")
        return ops.reduce(ops.multiply(y, y), 0, (0, 1, 2, 3), "add")

    def j(params, x):
        w1, gamma, beta, w2 = params
        y = lax.conv_general_dilated(x, w1, (1, 1), ((1, 1), (1, 1)))
        y = _jax_bn(y, gamma, beta, 1)[0]
        y = jnp.maximum(y, 0)
        y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
        y = lax.conv_general_dilated(y, w2, (2, 2), "VALID")
        y = lax.reduce_window(y, 0.0, lax.add, (1, 1, 2, 2), (1, 1, 1, 1), "VALID")
        return jnp.sum(y * y)
    close(hf.grad(h)(params, x), jax_run(jax.grad(j), params, x), rtol=2e-4)


def test_cnn_second_order_against_jax():
    """grad of a function of the gradient: the rules' own derivative code is differentiated
    (conv transposes, select_and_scatter, batch_norm_grad)."""
    x = rng.standard_normal((2, 2, 6, 6))
    w = rng.standard_normal((3, 2, 3, 3)) * 0.5
    gamma, beta = rng.standard_normal(3), rng.standard_normal(3)

    def h_loss(w, gamma, x):
        y = ops.convolution(x, w, padding=((1, 1), (1, 1)))
        y, _, _ = ops.batch_norm_training(y, gamma, ops.constant(beta), EPS, 1)
        y = ops.reduce_window(y, -np.inf, (1, 1, 2, 2), window_strides=(1, 1, 2, 2), body="max")
        return ops.reduce(ops.multiply(y, ops.sin(y)), 0, (0, 1, 2, 3), "add")

    def j_loss(w, gamma, x):
        y = lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)))
        y = _jax_bn(y, gamma, beta, 1)[0]
        y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
        return jnp.sum(y * jnp.sin(y))

    def h(w, gamma, x):
        gw, gg = hf.grad(h_loss, argnums=(0, 1))(w, gamma, x)
        return ops.add(ops.reduce(ops.multiply(gw, gw), 0, (0, 1, 2, 3), "add"),
                       ops.reduce(ops.multiply(gg, gg), 0, (0,), "add"))

    def j(w, gamma, x):
        gw, gg = jax.jit(jax.grad(j_loss, argnums=(0, 1)))(w, gamma, x)
        return jnp.sum(gw * gw) + jnp.sum(gg * gg)
    with jax.enable_x64(True):
        want = jax_run(jax.grad(j, argnums=(0, 1, 2)), w, gamma, x)
    close(hf.grad(h, argnums=(0, 1, 2))(w, gamma, x), want, rtol=1e-7)


def test_nn_pooling_and_lax_conv_nhwc_gradient():
    x = rng.standard_normal((2, 7, 6, 3)).astype(np.float32)
    w = (rng.standard_normal((3, 3, 3, 4)) * 0.3).astype(np.float32)
    dn = ("NHWC", "HWIO", "NHWC")

    def h(w, x):
        y = hf.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn)
        a = hf.nn.max_pool(y, (3, 3), (2, 2), padding="SAME")
        b = hf.nn.avg_pool(y, (2, 2), (1, 1), padding="SAME", count_include_pad=False)
        return hf.numpy.sum(a * a) + hf.numpy.sum(b * hf.numpy.sin(b))

    def j(w, x):
        y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn)
        a = lax.reduce_window(y, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
        pads = lax.padtype_to_pads(y.shape, (1, 2, 2, 1), (1, 1, 1, 1), "SAME")
        total = lax.reduce_window(y, 0.0, lax.add, (1, 2, 2, 1), (1, 1, 1, 1), pads)
        count = lax.reduce_window(jnp.ones_like(y), 0.0, lax.add, (1, 2, 2, 1), (1, 1, 1, 1), pads)
        b = total / count
        return jnp.sum(a * a) + jnp.sum(b * jnp.sin(b))
    close(hf.grad(h, argnums=(0, 1))(w, x), jax_run(jax.grad(j, argnums=(0, 1)), w, x), rtol=2e-4)
