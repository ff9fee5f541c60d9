"""hloforge.lax's elementwise functions against jax.lax on the same inputs: every unary and
binary function over every dtype jax accepts it for (edge values included) in one hf.jit and one
jax.jit per dtype; the dtypes jax refuses are refused too; jax.lax's broadcasting and dtype rules."""
from __future__ import annotations

import jax
import numpy as np
import pytest

from hloforge import lax

from lax_helpers import both, jax_accepts, refuses

BF16 = np.dtype(jax.numpy.bfloat16)
DTYPES = [np.dtype(d) for d in (np.float32, np.float16, np.float64, np.complex64, np.complex128, np.int32, np.int8,
                                np.uint8, np.uint32, np.int64, np.bool_)] + [BF16]

UNARY = ["neg", "sign", "floor", "ceil", "is_finite", "exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic",
         "sin", "cos", "tan", "sqrt", "rsqrt", "cbrt", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
         "atanh", "erf", "abs", "bitwise_not", "real", "imag", "conj", "square", "round", "reciprocal"]
BINARY = ["add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "complex", "nextafter", "bitwise_and",
          "bitwise_or", "bitwise_xor", "shift_left", "shift_right_arithmetic", "shift_right_logical", "eq", "ne",
          "lt", "le", "gt", "ge", "mulhi"]
# Each compiled elementwise output costs ~20 ms of XLA compile per side, so the full grid runs on
# float32 only; the other dtypes check the functions hloforge builds from several ops (and a few
# direct ones): the rest map to one StableHLO op, as jax's lowering does.
LIGHT = {"neg", "sign", "floor", "is_finite", "exp", "log", "sqrt", "tanh", "logistic", "abs", "bitwise_not", "real",
         "imag", "conj", "square", "round", "reciprocal", "sin", "cos", "exp2"}
LIGHT_BINARY = {"add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "complex", "nextafter", "eq", "lt",
                "ge", "bitwise_xor", "shift_left", "shift_right_arithmetic", "shift_right_logical", "mulhi"}
FULL = {np.dtype(np.float32), np.dtype(np.int32)}
# (name, function of (L, x)): the unary functions with a static argument
EXTRA = [("integer_pow 3", lambda L, x: L.integer_pow(x, 3)), ("integer_pow 0", lambda L, x: L.integer_pow(x, 0)),
         ("integer_pow -2", lambda L, x: L.integer_pow(x, -2)),
         ("round even", lambda L, x: L.round(x, L.RoundingMethod.TO_NEAREST_EVEN)),
         ("round 1", lambda L, x: L.round(x, 1)),
         ("to int32", lambda L, x: L.convert_element_type(x, np.int32)),
         ("to bool", lambda L, x: L.convert_element_type(x, np.bool_)),
         ("to float32", lambda L, x: L.convert_element_type(x, np.float32))]


def values(dtype, n=16, seed=0):
    """Edge values of ``dtype`` first, then random ones."""
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(n) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        edge = [0, 1, info.max, info.min, 2, 7, info.max - 1] + ([-1, -2, -7] if dtype.kind == "i" else [3, 4, 5])
        wide = rng.integers(info.min, int(info.max) + 1, max(n - len(edge), 0),
                            dtype=np.int64 if dtype.kind == "i" else np.uint64)
        return np.concatenate([np.asarray(edge, dtype), wide.astype(dtype)])[:n]
    real = np.dtype(np.float32) if dtype == BF16 else dtype.type(0).real.dtype
    edge = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.5, 3.7, np.inf, -np.inf, np.nan, 1e-3], real)
    rand = rng.uniform(-4, 4, max(n - len(edge), 0)).astype(real)
    x = np.concatenate([edge, rand])[:n]
    if dtype.kind == "c":
        z = np.empty(x.shape, dtype)
        z.real, z.imag = x, np.roll(x, 3)
        return z
    return x.astype(dtype)


def _accepted(dtype):
    x, y = values(dtype), values(dtype, seed=1)
    unary = [n for n in UNARY if (dtype in FULL or n in LIGHT) and jax_accepts(getattr(jax.lax, n), x)]
    extra = [(n, f) for n, f in EXTRA if jax_accepts(lambda v: f(jax.lax, v), x)]
    binary = [n for n in BINARY if (dtype in FULL or n in LIGHT_BINARY) and jax_accepts(getattr(jax.lax, n), x, y)]
    return x, y, unary, extra, binary


# one program per dtype (XLA's compile time grows faster than the program)
GROUPS = {d.name: [d] for d in [np.dtype(np.float32), np.dtype(np.complex64), np.dtype(np.float64),
                                np.dtype(np.float16), BF16, np.dtype(np.complex128), np.dtype(np.int32),
                                np.dtype(np.uint8), np.dtype(np.int64), np.dtype(np.bool_)]}


@pytest.mark.parametrize("group", GROUPS)
def test_elementwise_functions_match_jax(group):
    cases, labels = [], []
    for dtype in GROUPS[group]:
        x, y, unary, extra, binary = _accepted(dtype)
        if dtype.kind in "iu":  # (a division by 0: both backends agree, but keep it tame)
            y = np.where(y == 0, 3, y).astype(dtype)
        if dtype.kind == "c":  # (complex square: chlo.square and the parts formula differ at inf/NaN)
            x = np.where(np.isfinite(x), x, 0).astype(dtype)
        cases.append((x, y, unary, extra, binary))
        labels += [f"{dtype.name} {n}" for n in unary + [n for n, _ in extra] + binary]

    def fn(L, *xys):
        out = []
        for (x, y), (_, _, unary, extra, binary) in zip(zip(xys[::2], xys[1::2]), cases):
            out += ([getattr(L, n)(x) for n in unary] + [f(L, x) for _, f in extra]
                    + [getattr(L, n)(x, y) for n in binary])
        return out
    both(fn, *(v for x, y, *_ in cases for v in (x, y)), labels=labels)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_refused_dtypes_are_refused(dtype):
    x, y = values(dtype), values(dtype, seed=1)
    refused = [(n, (lambda v, n=n: getattr(lax, n)(v)), (x,)) for n in UNARY if not jax_accepts(getattr(jax.lax, n), x)]
    refused += [(n, (lambda a, b, n=n: getattr(lax, n)(a, b)), (x, y)) for n in BINARY
                if not jax_accepts(getattr(jax.lax, n), x, y)]
    for name, fn, args in refused:
        refuses(fn, *args, match=rf"hloforge\.lax\.\w+ does not accept dtype {dtype.name}|integers cannot be raised "
                                 rf"to negative powers|requires arguments to have the same dtypes")


def _broadcasts(L, m, row, col, s, i):
    one = np.float32(1.5)
    return [L.add(m, row), L.mul(col, row), L.max(m, s), L.sub(s, m), L.add(m, 2.0), L.add(2.0, 3.0), L.add(2, i),
            L.select_n(L.gt(m, s), m, m * 0), L.select_n(i, m, m * 2, m * 3), L.select_n(True, m, L.neg(m)),
            L.clamp(np.float32(-0.5), m, one), L.clamp(row * 0, row, row), L.atan2(m, col),
            L.mul(L.convert_element_type(i, np.int8), np.int8(3), out_dtype=np.int32),
            L.mul(m, L.convert_element_type(i, np.int32), out_dtype=np.float32), L.pow(m, i), L.pow(m, 2)]


def test_broadcasting_and_python_scalars_match_jax():
    m = values(np.dtype(np.float32), 12).reshape(3, 4)
    m = np.where(np.isfinite(m), m, 1).astype(np.float32)
    both(_broadcasts, m, m[:1], m[:, :1] + 7, np.float32(0.25), np.int32(1))


def test_select_n_clamp_and_mulhi_edges_match_jax():
    w = np.array([[0, 1, 2, 3], [-1, 5, 1, 0]], np.int32)
    a = values(np.dtype(np.float32), 8).reshape(2, 4)
    c = values(np.dtype(np.complex64), 8).reshape(2, 4)
    ints = {d: values(np.dtype(d), 8) for d in (np.int8, np.uint16, np.int32, np.uint32)}

    def fn(L, w, a, c, b, *ints):
        out = [L.select_n(w, a, a * 2, a * 3), L.select_n(L.convert_element_type(w, np.uint8), a, -a, a * 0, a + 1),
               L.select_n(w[0, 0], a), L.clamp(False, b, True), L.clamp(b[0, 0], b, b[1, 1]), L.max(c, c[::-1]),
               L.min(c, c[::-1])]
        return out + [L.mulhi(v, v[::-1]) for v in ints]
    both(fn, w, a, c, a > 0, *ints.values())
    wide = [values(np.dtype(d), 16) for d in (np.int64, np.uint64)]
    both(lambda L, *vs: [L.mulhi(v, v[::-1]) for v in vs], *wide)


ERRORS = [
    (lambda x: lax.add(x, np.ones(3, np.float16)), TypeError,
     r"hloforge\.lax\.add requires arguments to have the same dtypes, got float32, float16\."),
    (lambda x: lax.add(x, np.ones(4, np.float32)), TypeError,
     r"hloforge\.lax\.add got incompatible shapes for broadcasting: \(3,\), \(4,\)\."),
    (lambda x: lax.add(x, np.ones((2, 3), np.float32)), TypeError,
     r"hloforge\.lax\.add: arrays must have the same number of dimensions, got \[1, 2\]"),
    (lambda x: lax.add(x, [1.0, 2.0, 3.0]), TypeError, r"hloforge\.lax\.add: got a list at position 1"),
    (lambda x: lax.sub(lax.gt(x, x), lax.gt(x, x)), TypeError,
     r"hloforge\.lax\.sub does not accept dtype bool at position 0\. Accepted dtypes at position 0 are subtypes of "
     r"integer, floating, complexfloating\."),
    (lambda x: lax.exp(lax.convert_element_type(x, np.int32)), TypeError,
     r"hloforge\.lax\.exp does not accept dtype int32\. Accepted dtypes are subtypes of floating, complexfloating\."),
    (lambda x: lax.exp(x, accuracy=jax.lax.AccuracyMode.HIGHEST), ValueError,
     r"hloforge\.lax\.exp: accuracy=.*HIGHEST.* is not supported"),
    (lambda x: lax.integer_pow(lax.convert_element_type(x, np.int32), -1), TypeError,
     r"integers cannot be raised to negative powers, got integer_pow\(int32\[3\], -1\)"),
    (lambda x: lax.reciprocal(lax.convert_element_type(x, np.int8)), TypeError, r"integers cannot be raised"),
    (lambda x: lax.pow(x, lax.convert_element_type(x, np.float16)), TypeError,
     r"the first argument to pow must have an inexact dtype .* but got float32 and float16 respectively"),
    (lambda x: lax.round(x, 3), ValueError, r"3 is not a valid RoundingMethod"),
    (lambda x: lax.clamp(0.0, x, np.float16(1)), TypeError,
     r"hloforge\.lax\.clamp requires arguments to have the same dtypes, got float32, float32, float16\."),
    (lambda x: lax.clamp(np.zeros(2, np.float32), x, 1.0), TypeError,
     r"clamp requires min\.shape == operand\.shape or min\.shape == \(\), got min\.shape=\(2,\)"),
    (lambda x: lax.clamp(np.complex64(0), lax.complex(x, x), np.complex64(1)), TypeError,
     r"hloforge\.lax\.clamp does not accept dtype complex64 \(XLA clamps complex numbers by their real parts"),
    (lambda x: lax.select_n(np.int32(0)), ValueError, r"hloforge\.lax\.select_n\(\) must have at least one case"),
    (lambda x: lax.select_n(x, x, x), TypeError, r"`which` must be boolean or integer type, got float32"),
    (lambda x: lax.select_n(True, x, x, x), TypeError, r"with boolean `which` cannot have > 2 cases"),
    (lambda x: lax.select_n(np.zeros(2, np.int32), x, x), TypeError,
     r"`which` must be scalar or have the same shape as cases, got `which` shape \(2,\) but case shape \(3,\)"),
    (lambda x: lax.select_n(np.int32(0), x, x[:2]), TypeError, r"cases must have the same shapes, got \[\(3,\), \(2,\)\]"),
    (lambda x: lax.select_n(np.int32(0), x, lax.convert_element_type(x, np.float16)), TypeError,
     r"select_n requires arguments to have the same dtypes, got float32, float16"),
    (lambda x: lax.complex(lax.convert_element_type(x, np.float16), lax.convert_element_type(x, np.float16)),
     TypeError, r"complex does not accept dtype float16 at position 0"),
    (lambda x: lax.mul(x, lax.convert_element_type(x, np.int32)), TypeError,
     r"lax\.mul requires arguments to have the same dtypes, got float32, int32"),
]


@pytest.mark.parametrize("fn,exc,match", ERRORS)
def test_errors(fn, exc, match):
    refuses(fn, np.ones(3, np.float32), exc=exc, match=match)
