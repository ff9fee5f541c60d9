"""Rules of the data-movement, pad, dot_general, reduce, sort and dynamic_slice ops against jax (jax's
references compiled with CHEAP_COMPILE where the comparison has a tolerance)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from ad_helpers import check_against_jax_cheap, check_finite_differences
import hloforge as hf
import hloforge.numpy as hnp
from hloforge import ops

rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4, 5))


PAD_CONFIGS = [((1, 0, 0), (2, 1, 0), (0, 0, 0)), ((-1, 0, 2), (1, -2, 0), (1, 0, 2)),
               ((0, -2, 1), (-1, 3, -2), (2, 1, 0)), ((-2, 1, -1), (0, 0, 0), (0, 2, 1))]


@pytest.mark.parametrize("low,high,interior", PAD_CONFIGS)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_pad(low, high, interior, dtype):
    x = X.astype(dtype) + (0.5j * X[::-1] if np.dtype(dtype).kind == "c" else 0)
    v = np.asarray(0.7, dtype)
    cfg = list(zip(low, high, interior))
    check_against_jax_cheap(lambda x, v: ops.pad(x, v, low, high, interior), lambda x, v: lax.pad(x, v, cfg), x, v)
    if dtype == np.float64:
        check_finite_differences(lambda x, v: ops.pad(x, v, low, high, interior), x, v)


def test_movement_ops():
    a, b = X, rng.standard_normal((3, 2, 5))

    def h(a, b):
        return (ops.reshape(a, (12, 5)), ops.transpose(a, (2, 0, 1)), ops.reverse(a, (0, 2)),
                ops.broadcast_in_dim(b[:, 0, :], (2, 3, 4, 5), (1, 3)),
                ops.broadcast_in_dim(ops.reshape(b[0, 0, :], (5, 1)), (5, 3, 4), (0, 2)),
                ops.slice(a, (0, 1, 0), (3, 4, 5), (2, 2, 3)), ops.concatenate([a, b, a], 1))

    def j(a, b):
        return (a.reshape(12, 5), a.transpose(2, 0, 1), a[::-1, :, ::-1],
                lax.broadcast_in_dim(b[:, 0, :], (2, 3, 4, 5), (1, 3)),
                lax.broadcast_in_dim(b[0, 0, :].reshape(5, 1), (5, 3, 4), (0, 2)),
                a[0:3:2, 1:4:2, 0:5:3], jnp.concatenate([a, b, a], 1))
    check_against_jax_cheap(h, j, a, b)


def test_broadcast_with_permuted_dims_finite_differences():
    # (jax's own transpose rule rejects non-increasing broadcast_dimensions)
    b = rng.standard_normal((2, 3))
    check_finite_differences(lambda b: ops.broadcast_in_dim(b, (3, 4, 2), (2, 0)), b)
    check_finite_differences(lambda b: ops.broadcast_in_dim(ops.reshape(b, (2, 1, 3)), (3, 5, 2), (2, 1, 0)), b)


def test_dynamic_slice():
    def h(x, i, j):
        return (ops.dynamic_slice(x, (i, j, ops.constant(np.int32(1))), (2, 3, 3)),
                ops.dynamic_slice(x, (ops.constant(np.int32(5)), j, i), (2, 2, 5)))

    def j_(x, i, j):
        return (lax.dynamic_slice(x, (i, j, np.int32(1)), (2, 3, 3)),
                lax.dynamic_slice(x, (np.int32(5), j, i), (2, 2, 5)))
    for i, j in ((0, 1), (2, 0), (1, 9)):  # (jax wraps negative starts; StableHLO clamps them)
        check_against_jax_cheap(h, j_, X, np.int32(i), np.int32(j))


DOTS = [((4, 3), (3, 5), (), (), (1,), (0,)), ((2, 4, 3), (2, 3, 5), (0,), (0,), (2,), (1,)),
        ((3, 2, 4, 6), (6, 2, 3, 5), (1, 0), (1, 2), (3,), (0,)),
        ((5, 2, 3), (3, 4, 2, 5), (0,), (3,), (2, 1), (0, 2)), ((3,), (4,), (), (), (), ())]


@pytest.mark.parametrize("ls,rs,lb,rb,lc,rc", DOTS)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_dot_general(ls, rs, lb, rb, lc, rc, dtype):
    lhs = rng.standard_normal(ls).astype(dtype)
    rhs = rng.standard_normal(rs).astype(dtype)
    if np.dtype(dtype).kind == "c":
        lhs = lhs + 1j * rng.standard_normal(ls)
        rhs = rhs - 1j * rng.standard_normal(rs)
    check_against_jax_cheap(lambda a, b: ops.dot_general(a, b, lb, rb, lc, rc),
                            lambda a, b: lax.dot_general(a, b, ((lc, rc), (lb, rb))), lhs, rhs)


@pytest.mark.parametrize("dtype,into", [(np.float32, np.float64), (np.complex64, np.complex128)])
def test_dot_general_with_a_preferred_element_type(dtype, into):
    """The jvp accumulates into ``into`` like the op; the transposes contract in it and give
    cotangents of the operands' dtype, as jax's do."""
    for ls, rs, lb, rb, lc, rc in DOTS[1:4]:
        lhs, rhs = rng.standard_normal(ls).astype(dtype), rng.standard_normal(rs).astype(dtype)
        check_against_jax_cheap(lambda a, b: ops.dot_general(a, b, lb, rb, lc, rc, preferred_element_type=into),
                                lambda a, b: lax.dot_general(a, b, ((lc, rc), (lb, rb)), preferred_element_type=into),
                                lhs, rhs)


def test_module_vjp_and_jvp_of_a_jax_mixed_precision_dot():
    """A parsed bf16 x bf16 -> f32 dot_general keeps its f32 result through Module.vjp/jvp; the
    cotangents are bf16 and bit for bit jax.vjp's."""
    def f(a, b):
        return lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=jnp.float32)
    a, b = (rng.standard_normal(s).astype(jnp.bfloat16) for s in ((4, 5), (5, 3)))
    ct, ta, tb = rng.standard_normal((4, 3)).astype(np.float32), a[::-1], b[:, ::-1]
    m = hf.Module.parse(jax.jit(f).lower(a, b).as_text())
    want_out, pullback = jax.vjp(f, a, b)
    got = m.vjp().compile()(a, b, ct)
    want_t = jax.jvp(f, (a, b), (ta, tb))[1]
    got_t = m.jvp().compile()(a, b, ta, tb)[1]
    for g, w in zip([got[0], *got[1:], got_t], [want_out, *pullback(ct), want_t]):
        assert np.asarray(g).dtype == np.asarray(w).dtype, (np.asarray(g).dtype, np.asarray(w).dtype)
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_a_dense_layers_weight_gradient_takes_jaxs_operand_order():
    """An outer product's rhs cotangent is dot(cotangent, lhs) transposed, as jax emits it: per-example
    weight gradients (vmap of grad) then have jax's layout, which XLA:CPU reduces 1.4x faster in
    DP-SGD's clipping (benchmarks/vmap.py). Other contractions keep the form that needs no transpose."""
    text = hf.trace(hf.grad(lambda w, x: hnp.tanh(x @ w).sum()), hf.ShapeDtype((4, 3), np.float32),
                    hf.ShapeDtype((4,), np.float32)).text
    assert "(tensor<1x3xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>" in text, text
    assert "stablehlo.transpose" in text and text.count("stablehlo.dot_general") == 2, text
    text = hf.trace(hf.grad(lambda w, x: hnp.tanh(x @ w).sum()), hf.ShapeDtype((4, 3), np.float32),
                    hf.ShapeDtype((2, 4), np.float32)).text
    assert "(tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>" in text and "transpose" not in text, text


def test_a_batched_contractions_cotangents_keep_the_operands_dim_order():
    """Where neither operand order gives a cotangent in its operand's layout, the one whose transpose moves
    the fewest pairs of dims is built: the FNO mode mixing's weight gradient comes out [x, y, i, o] (a
    rotation back to [i, o, x, y]), not [x, y, o, i], so a TPU that stores the weights with o minor needs no
    transposing copy of it (docs/benchmarks.md, eleventh session). Values as jax's."""
    def mix(w, s):  # w [i, o, x, y], s [b, i, x, y] -> [x, y, o, b], as jax lowers einsum("ioxy,bixy->boxy")
        return ops.dot_general(w, s, (2, 3), (2, 3), (0,), (1,))
    w, s = rng.standard_normal((3, 4, 5, 2)), rng.standard_normal((6, 3, 5, 2))
    text = hf.trace(lambda w, s, ct: hf.vjp(mix, w, s)[1](ct), hf.ShapeDtype(w.shape, np.float64),
                    hf.ShapeDtype(s.shape, np.float64), hf.ShapeDtype((5, 2, 4, 6), np.float64)).text
    assert "-> tensor<5x2x3x4xf64>" in text and "dims = [2, 3, 0, 1] : (tensor<5x2x3x4xf64>)" in text, text
    assert "-> tensor<5x2x6x3xf64>" in text and "-> tensor<5x2x3x6xf64>" not in text, text
    check_against_jax_cheap(mix, lambda w, s: lax.dot_general(w, s, (((0,), (1,)), ((2, 3), (2, 3)))), w, s)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_reduce(dtype):
    x = (X + 2.0).astype(dtype)
    if np.dtype(dtype).kind == "c":
        x = x + 0.3j * X
    zeroed = x.copy()
    zeroed[0, 0, :2] = 0  # two zeros in one product, one zero in another
    zeroed[1, 2, 3] = 0
    real = np.dtype(dtype).kind != "c"

    def h(x, z):
        out = [ops.reduce(x, 0.5, (1,), "add"), ops.reduce(x, 1.5, (0, 2), "mul"), ops.reduce(z, 1, (2,), "mul")]
        if real:
            out += [ops.reduce(x, -np.inf, (2,), "max"), ops.reduce(x, np.inf, (0, 1), "min")]
        return tuple(out)

    def j(x, z):
        out = [jnp.sum(x, 1) + 0.5, 1.5 * jnp.prod(x, (0, 2)), jnp.prod(z, 2)]
        if real:
            out += [jnp.max(x, 2), jnp.min(x, (0, 1))]
        return tuple(out)
    check_against_jax_cheap(h, j, x, zeroed)


def test_reduce_max_ties_split_like_jax():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    check_against_jax_cheap(lambda x: ops.reduce(x, -np.inf, (1,), "max"), lambda x: jnp.max(x, 1), x)
    check_against_jax_cheap(lambda x: ops.maximum(x, x[::-1]), lambda x: lax.max(x, x[::-1]), x)


def test_sort_and_argsort():
    x = rng.standard_normal((3, 7))
    y = rng.standard_normal((3, 7))

    def h(x, y):
        s = ops.sort(x, 1)
        k, v = ops.sort([x, y], 0, "GT")
        idx = ops.sort([x, ops.iota(x.shape, np.int32, 1)], 1)[1]
        return s, k, v, ops.convert(idx, np.float64) * 1.0

    def j(x, y):
        s = jnp.sort(x, 1)
        order = jnp.argsort(-x, 0)
        return (s, jnp.take_along_axis(x, order, 0), jnp.take_along_axis(y, order, 0),
                jnp.argsort(x, 1).astype(np.float64))
    check_against_jax_cheap(h, j, x, y)
    check_finite_differences(h, x, y)
