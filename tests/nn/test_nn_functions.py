"""hloforge.nn's jax.nn functions against jax.nn on the same inputs: values over a grid with 0,
negatives, large values, infinities and NaN, in float16/bfloat16/float32/float64; keyword
arguments; derivatives where jax has its own rules; errors. Each test compares many functions
in one hf.jit and one jax.jit (compiled without LLVM's optimizations where every comparison has a
tolerance)."""
import contextlib
import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
from hloforge import nn
from hloforge import numpy as hnp
from ad_helpers import jax_run
from helpers import assert_close, run

FLOATS = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16), np.dtype(jnp.bfloat16)]
GRID = np.array([-np.inf, -100, -20, -6, -3.5, -3, -1, -0.5, -0.0, 0.0, 0.25, 0.5, 1, 1.5, 3, 6, 7, 20, 100,
                 np.inf, np.nan])

# the callables of jax.nn that hloforge.nn leaves out, with the reason
LEFT_OUT = {name: "fp8/microscaling matmuls: cuDNN block-scaled kernels (float8_e8m0fnu, float4 scales); jax "
                  "0.10.2 has no CPU lowering of them either ('scaled_matmul' not found for platform cpu)"
            for name in ("get_scaled_dot_general_config", "scaled_dot_general", "scaled_matmul")}


def x64(dtype):
    return jax.enable_x64(True) if np.dtype(dtype) == np.float64 else contextlib.nullcontext()


def compare(got, want):
    for name, g in got.items():
        for a, b in zip(jax.tree_util.tree_leaves(g), jax.tree_util.tree_leaves(want[name])):
            b = np.asarray(b)
            try:
                assert_close(a, b)
            except AssertionError as e:
                raise AssertionError(f"{name}: {e}") from None


def both(fns, *args, dtype=np.float32, exact=False):
    """fns(module, *args) -> dict, run with hloforge.nn under hf.jit and jax.nn under jax.jit, compiled
    with jax_run's CHEAP_COMPILE unless ``exact`` (an output compared bit for bit)."""
    got = run(lambda *a: fns(nn, *a), *args)
    jax_fn = lambda *a: fns(jax.nn, *a)  # noqa: E731
    with x64(dtype):
        want = jax.jit(jax_fn)(*args) if exact else jax_run(jax_fn, *args)
    return got, want


ELEMENTWISE = ["identity", "relu", "relu6", "hard_sigmoid", "hard_silu", "hard_tanh", "leaky_relu", "elu", "celu",
               "selu", "gelu", "sparse_plus", "sparse_sigmoid", "soft_sign", "squareplus", "sigmoid", "silu",
               "softplus", "log_sigmoid", "mish", "tanh", "log1mexp"]


def _elementwise(m, x):
    out = {name: getattr(m, name)(x) for name in ELEMENTWISE}
    if x.dtype.itemsize < 4:
        return out
    out.update(gelu_exact=m.gelu(x, approximate=False), leaky=m.leaky_relu(x, negative_slope=0.2),
               elu_alpha=m.elu(x, alpha=0.5), celu_alpha=m.celu(x, alpha=0.5), squareplus_b=m.squareplus(x, b=1.0),
               glu=m.glu(x[:20].reshape(2, 10), axis=0), glu_last=m.glu(x[:20].reshape(2, 10)))
    return out


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_elementwise_activations_match_jax(dtype):
    got, want = both(_elementwise, GRID.astype(dtype), dtype=dtype)
    compare(got, want)


def test_aliases_are_jax_aliases():
    same = lambda a, b: inspect.unwrap(a) is inspect.unwrap(b)  # noqa: E731  (eager wrappers unwrapped)
    assert same(nn.swish, nn.silu) and same(nn.hard_swish, nn.hard_silu) and same(nn.tanh, hnp.tanh)


def test_parameters_keep_jax_dtypes():
    x = GRID.astype(np.float16)
    alpha = np.array(0.5, np.float32)  # an array parameter promotes (float16 with float32: float32), as in jax
    got, want = both(lambda m, x: {"elu": m.elu(x, alpha), "leaky": m.leaky_relu(x, alpha),
                                   "squareplus": m.squareplus(x, np.float16(2))}, x)
    compare(got, want)
    assert got["elu"].dtype == np.float32 and got["squareplus"].dtype == np.float16


def test_integer_inputs():
    """Integers keep their dtype where jax keeps it (relu, hard_tanh) and otherwise promote as
    hloforge.numpy does (NumPy 2: int8 -> float16, int32 -> float64), with jax's values."""
    i = np.array([-3, -1, 0, 1, 2, 7], np.int32)
    got = run(lambda i: (nn.relu(i), nn.hard_tanh(i), nn.softplus(i), nn.softplus(i.astype(np.int8)),
                         nn.relu6(i), nn.log_softmax(i)), i)
    with jax.enable_x64(True):
        want = jax.jit(lambda i: (jax.nn.relu(i), jax.nn.hard_tanh(i), jax.nn.softplus(i.astype(jnp.float64)),
                                  jax.nn.relu6(i), jax.nn.log_softmax(i.astype(jnp.float64))))(i)
    assert [o.dtype for o in got] == [np.int32, np.int32, np.float64, np.float16, np.float64, np.float64]
    for g, w in zip([got[0], got[1], got[2], got[4], got[5]], want):
        assert_close(g, np.asarray(w))
    assert_close(got[3], np.asarray(want[2]).astype(np.float16))


# ---------------------------------------------------------------- softmax, logsumexp and the others

def _over_axes(m, x, where, b):
    return {
        "softmax": m.softmax(x), "softmax_axis0": m.softmax(x, axis=0), "softmax_all": m.softmax(x, axis=None),
        "softmax_where": m.softmax(x, where=where),
        "log_softmax": m.log_softmax(x), "log_softmax_axes": m.log_softmax(x, axis=(0, 1)),
        "log_softmax_where": m.log_softmax(x, axis=-1, where=where),
        "logsumexp": m.logsumexp(x), "logsumexp_keep": m.logsumexp(x, axis=1, keepdims=True),
        "logsumexp_b": m.logsumexp(x, axis=1, b=b), "logsumexp_where": m.logsumexp(x, axis=1, where=where),
        "logsumexp_sign": m.logsumexp(x, axis=0, b=b, return_sign=True),
        "logsumexp_finite_b": m.logsumexp(b, axis=-1, b=b - 0.5, keepdims=True, return_sign=True),
        "logmeanexp": m.logmeanexp(x, axis=1),
        "logmeanexp_where": m.logmeanexp(x, axis=-1, where=where, keepdims=True),
        "standardize": m.standardize(b), "standardize_stable": m.standardize(b, axis=0, algorithm="stable"),
        "standardize_where": m.standardize(b, axis=(0, 1), where=where, epsilon=1e-3),
        "standardize_given": m.standardize(b, mean=b[:1], variance=np.full((1, 5), 2.0, b.dtype)),
    }


def _axis_inputs(dtype):
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, (4, 5))
    x[0, 1], x[1, 2], x[2] = np.inf, -np.inf, -np.inf  # +inf (all NaN), one -inf, a row of -inf
    x[3, 0] = np.nan
    where = rng.random((4, 5)) < 0.7
    where[1] = False  # a fully masked row
    b = rng.uniform(-1, 2, (4, 5))
    b[0, 3] = 0
    return x.astype(dtype), where, b.astype(dtype)


# float64, float16, bfloat16: the cases with masks, weights and several axes (float16/bfloat16 sums
# accumulate in float32); the rest is float32's code in other dtypes, which the elementwise test covers
SIXTEEN_BIT = ("softmax_where", "log_softmax_axes", "logsumexp_b", "logsumexp_sign", "logmeanexp_where",
               "standardize_where", "standardize_stable")


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_functions_over_axes_match_jax(dtype):
    def cases(m, *args):
        out = _over_axes(m, *args)
        return out if dtype == np.float32 else {k: out[k] for k in SIXTEEN_BIT}
    got, want = both(cases, *_axis_inputs(dtype), dtype=dtype)
    compare(got, want)


def test_scalar_mean_and_variance_stay_weakly_typed():
    b = np.linspace(-2, 2, 10, dtype=np.float16)
    got, want = both(lambda m, b: {"given": m.standardize(b, mean=0.5, variance=2.0)}, b)
    compare(got, want)


def test_logsumexp_of_complex_inputs():
    z = (np.array([[1 + 2j, -1 - 1j, 3 + 0.5j], [0.5 - 3j, -np.inf + 0j, 2j]])).astype(np.complex64)
    got, want = both(lambda m, z: {"lse": m.logsumexp(z, axis=1), "sign": m.logsumexp(z, return_sign=True),
                                   "mean": m.logmeanexp(z, axis=0)}, z)
    compare(got, want)


def test_one_hot():
    ids = np.array([[0, 2, -1], [3, 1, 5]], np.int32)
    got, want = both(lambda m, i: {"default": m.one_hot(i, 4), "axis0": m.one_hot(i, 4, axis=0),
                                   "int8": m.one_hot(i, 3, dtype=np.int8, axis=1),
                                   "bf16": m.one_hot(i.astype(np.uint8), 4, dtype=jnp.bfloat16, axis=-2)},
                     ids, exact=True)
    compare(got, want)
    assert got["default"].dtype == np.float32 and got["axis0"].shape == (4, 2, 3)


# ---------------------------------------------------------------- derivatives

# relu/relu6 (0 at the kinks), sigmoid (y (1 - y), finite where exp(-x) overflows), softplus and
# the functions built on it (logaddexp's rule), log1mexp (1 / expm1): jax's own rules
# (celu and sparse_sigmoid: maximum/minimum ties, whose derivative jax splits in halves)
CUSTOM = ["relu", "relu6", "hard_sigmoid", "hard_silu", "sigmoid", "silu", "softplus", "log_sigmoid", "mish",
          "log1mexp", "sparse_sigmoid", "celu"]
GRAD_GRID = np.array([-np.inf, -100, -20, -6, -3, -1, -0.5, 0.0, 0.5, 1, 3, 6, 20, 100, np.inf], np.float32)


def test_derivatives_match_jax():
    def grads(m, g, np_):
        def loss(f):  # a weighted sum of the finite outputs
            def fn(v):
                y = f(v)
                return np_.sum(np_.where(np_.isfinite(y), y, 0) * np_.arange(1.0, y.size + 1).reshape(y.shape))
            return fn
        out = {name: g(loss(getattr(m, name)))(GRAD_GRID) for name in CUSTOM}
        out["gelu_exact"] = g(loss(lambda v: m.gelu(v, approximate=False)))(GRAD_GRID)  # (jax's erfc rule)
        x = np.array([[1.0, 1.0, -2.0, 0.5], [3.0, -np.inf, 0.0, 0.0]], np.float32)  # ties, an -inf
        mask = np.array([[True, True, False, True], [True, False, True, True]])
        for name, f in {"softmax": lambda v: m.softmax(v, where=mask), "log_softmax": m.log_softmax,
                        "logsumexp": lambda v: m.logsumexp(v, axis=1),
                        "logsumexp_b": lambda v: m.logsumexp(v, axis=0, b=x + 3.0, where=mask)}.items():
            out[name] = g(loss(f))(x)
        return out

    got = run(lambda: grads(nn, hf.grad, hnp))
    want = jax_run(lambda: grads(jax.nn, jax.grad, jnp))
    compare(got, want)


def test_second_derivatives_and_forward_mode_at_kinks():
    x = np.array([-1.0, 0.0, 3.0, 6.0, 7.0, 50.0], np.float32)

    def second(m, g, np_):  # elementwise functions: the derivative of the sum of first derivatives
        out = {}
        for name in ("relu6", "sigmoid", "softplus", "log1mexp", "mish"):
            f = getattr(m, name)
            out[name] = g(lambda v: np_.sum(g(lambda u: np_.sum(f(u)))(v)))(x)
        return out

    compare(run(lambda: second(nn, hf.grad, hnp)), jax_run(lambda: second(jax.nn, jax.grad, jnp)))
    tangent = hf.jvp(nn.relu6, (x,), (np.ones_like(x),))[1]
    np.testing.assert_array_equal(tangent, [0, 0, 1, 0, 0, 0])


# ---------------------------------------------------------------- errors and the namespace

@pytest.mark.parametrize("fn, arg, error, match", [
    (nn.sigmoid, np.ones(3, np.int32), TypeError, "hloforge.nn.sigmoid: needs a float or complex tensor, got int32"),
    (nn.silu, np.ones(3, np.int8), TypeError, "hloforge.nn.silu: needs a float or complex tensor, got int8"),
    (nn.glu, np.ones((2, 3), np.float32), ValueError, r"glu: axis -1 of shape \(2, 3\) has odd size 3"),
    (nn.glu, np.ones(4, np.int32), TypeError, "glu: needs a float or complex tensor, got int32"),
    (nn.relu6, np.ones(2, np.complex64), TypeError, r"relu6: needs a real \(integer or float\) tensor, got complex64"),
    (nn.softplus, np.ones(2, np.complex64), TypeError, "softplus: needs a real .* got complex64"),
    (nn.log_softmax, np.array([True]), TypeError, "log_softmax: needs an integer or float tensor, got bool"),
    (lambda x: nn.standardize(x, algorithm="exact"), np.ones(3), ValueError,
     "standardize: unknown algorithm 'exact'; expected 'fast' or 'stable'"),
    (lambda x: nn.one_hot(x, 2.5), np.ones(3, np.int32), TypeError, "one_hot: num_classes must be an int, got 2.5"),
    (lambda x: nn.one_hot(x, -1), np.ones(3, np.int32), ValueError, "one_hot: num_classes must be non-negative"),
    (lambda x: nn.one_hot(x, 3, axis="batch"), np.ones(3, np.int32), TypeError, "named axes are not supported"),
    (lambda x: nn.one_hot(x, 3), np.ones(3, np.bool_), TypeError, "one_hot: needs integer indices, got bool"),
])
def test_errors(fn, arg, error, match):
    with pytest.raises(error, match=match):
        hf.trace(fn, arg)


def test_covers_at_least_90_percent_of_jax_nn():
    names = sorted(n for n in dir(jax.nn) if not n.startswith("_") and callable(getattr(jax.nn, n))
                   and not inspect.ismodule(getattr(jax.nn, n)))
    missing = [n for n in names if not callable(getattr(nn, n, None))]
    assert len(names) - len(missing) >= 0.9 * len(names), missing
    assert set(missing) == set(LEFT_OUT), missing
    for name in names:
        if name not in missing and name not in ("tanh", "dot_product_attention"):
            want = list(inspect.signature(getattr(jax.nn, name)).parameters)
            assert list(inspect.signature(getattr(nn, name)).parameters) == want, name
