"""Every elementwise rule over its domain against jax.vjp/jax.jvp, and central differences in f64.
Each dtype's ops are batched into one traced function (one compile per check); jax's references are
compiled with CHEAP_COMPILE (every comparison here has a tolerance)."""
import numpy as np
import pytest
from jax import lax

from ad_helpers import check_against_jax_cheap, check_finite_differences_once
from hloforge import ops

POS, ANY, SMALL, UNIT = (0.5, 2.0), (-2.0, 2.0), (-1.0, 1.0), (-0.8, 0.8)

# name, hloforge op, jax op, domain, dtype kinds ("f" real, "c" complex)
UNARY = [
    ("neg", ops.neg, lax.neg, ANY, "fc"), ("abs", ops.abs, lax.abs, ANY, "fc"),
    ("exp", ops.exp, lax.exp, SMALL, "fc"), ("log", ops.log, lax.log, POS, "fc"),
    ("log1p", ops.log1p, lax.log1p, POS, "fc"), ("expm1", ops.expm1, lax.expm1, SMALL, "fc"),
    ("sin", ops.sin, lax.sin, ANY, "fc"), ("cos", ops.cos, lax.cos, ANY, "fc"),
    ("tan", ops.tan, lax.tan, UNIT, "fc"), ("tanh", ops.tanh, lax.tanh, ANY, "fc"),
    ("sqrt", ops.sqrt, lax.sqrt, POS, "fc"), ("rsqrt", ops.rsqrt, lax.rsqrt, POS, "fc"),
    ("cbrt", ops.cbrt, lax.cbrt, POS, "f"), ("logistic", ops.logistic, lax.logistic, ANY, "fc"),
    ("floor", ops.floor, lax.floor, ANY, "f"), ("ceil", ops.ceil, lax.ceil, ANY, "f"),
    ("round", ops.round, lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), ANY, "f"),
    ("sign", ops.sign, lax.sign, ANY, "f"), ("real", ops.real, lax.real, ANY, "c"),
    ("imag", ops.imag, lax.imag, ANY, "c"), ("erf", ops.erf, lax.erf, ANY, "f"),
]
BINARY = [
    ("add", ops.add, lax.add, ANY, ANY, "fc"), ("subtract", ops.subtract, lax.sub, ANY, ANY, "fc"),
    ("multiply", ops.multiply, lax.mul, ANY, ANY, "fc"), ("divide", ops.divide, lax.div, ANY, POS, "fc"),
    ("remainder", ops.remainder, lax.rem, (2.1, 3.9), (0.7, 0.9), "f"),
    ("power", ops.power, lax.pow, POS, SMALL, "fc"),
    ("maximum", ops.maximum, lax.max, ANY, ANY, "f"), ("minimum", ops.minimum, lax.min, ANY, ANY, "f"),
    ("atan2", ops.atan2, lax.atan2, ANY, POS, "f"), ("complex", ops.complex, lax.complex, ANY, ANY, "r"),
]


def _sample(domain, dtype, shape, rng):
    lo, hi = domain
    x = rng.uniform(lo, hi, shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.uniform(-0.3, 0.3, shape)
    return x.astype(dtype)


def _program(dtype, shape=(5,), seed=0):
    """(hloforge fn, jax fn, inputs) computing every op that takes ``dtype`` on its domain."""
    rng = np.random.default_rng(seed)
    kind = np.dtype(dtype).kind
    real = np.float32 if np.dtype(dtype) in (np.float32, np.complex64) else np.float64
    rows, inputs = [], []
    for name, h, j, dom, kinds in UNARY:
        if kind in kinds:
            rows.append((h, j, 1))
            inputs.append(_sample(dom, dtype, shape, rng))
    for name, h, j, d1, d2, kinds in BINARY:
        if kind in kinds or (kinds == "r" and kind == "f"):
            rows.append((h, j, 2))
            inputs += [_sample(d1, dtype, shape, rng), _sample(d2, dtype, shape, rng)]
    del real

    def make(which):
        def fn(*xs):
            out, k = [], 0
            for row in rows:
                op, n = row[which], row[2]
                out.append(op(*xs[k:k + n]))
                k += n
            return tuple(out)
        return fn
    return make(0), make(1), inputs


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_elementwise_against_jax(dtype):
    h, j, xs = _program(dtype)
    check_against_jax_cheap(h, j, *xs)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_elementwise_finite_differences(dtype):
    h, _, xs = _program(dtype, seed=5)
    check_finite_differences_once(h, *xs)


@pytest.mark.complex128
def test_select_clamp_convert_against_jax():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 6))
    lo, hi = -0.5, 0.4

    def h(x, y):
        return (ops.select(ops.compare(x, y, "GT"), x, y), ops.clamp(lo, x, hi),
                ops.clamp(ops.neg(ops.abs(y)), x, ops.abs(y)), ops.convert(x, np.float32),
                ops.convert(ops.complex(x, y), np.float64), ops.convert(x, np.complex128))

    def j(x, y):
        return (lax.select(x > y, x, y), lax.clamp(lo, x, hi), lax.clamp(-abs(y), x, abs(y)),
                x.astype(np.float32), lax.complex(x, y).real, x.astype(np.complex128))
    check_against_jax_cheap(h, j, x, y, rtol=1e-6)
