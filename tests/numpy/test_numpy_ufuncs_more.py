"""hloforge.numpy's added elementwise functions against numpy on edge-value grids, per dtype:
numpy's loop selection picks the result dtype, values agree (NaN positions included)."""
import numpy as np
import pytest

import hloforge as hf
from hloforge import numpy as hnp
from helpers import assert_close, run

FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -3.0, 0.25, 7.0, np.inf, -np.inf, np.nan]
UNARY = ["arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg",
         "exp2", "log2", "log10", "trunc", "fabs", "isnan", "isinf", "isfinite", "signbit", "sinc", "spacing",
         "iscomplex", "isreal", "nan_to_num", "angle", "i0", "isposinf", "isneginf", "bitwise_count"]
BINARY = ["hypot", "logaddexp", "logaddexp2", "copysign", "nextafter", "fmod", "fmax", "fmin", "heaviside",
          "float_power", "gcd", "lcm", "left_shift", "right_shift", "atan2"]
DTYPES = [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.uint32, np.float16, np.float32, np.float64,
          np.complex64, np.complex128]
# where this frontend knowingly differs from numpy on edge values (documented in the functions)
SKIP_EDGE = {("signbit", "nan"), ("copysign", "nan")}  # the sign bit of a NaN is not read


def _values(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.array([True, False, True, True, False, False, True, False, True, False, False, True, True])
    if dtype.kind in "iu":
        vals = [0, 1, 2, 3, 5, 7, 12, 18, 30, 64, 100, 127, 6]
        vals = vals if dtype.kind == "u" else [v if i % 2 else -v for i, v in enumerate(vals)]
        return np.array(vals, dtype)
    if dtype.kind == "c":
        re = np.array(FLOAT_EDGES[:10], np.float64)
        return (re + 1j * np.roll(re, 3)).astype(dtype)
    return np.array(FLOAT_EDGES, dtype)


def _numpy_cases(dtype, names, binary):
    x = _values(dtype)
    y = np.roll(x, 4)
    if np.dtype(dtype).kind in "iu":
        y = np.where(y == 0, 3, y).astype(dtype)
        if "shift" in " ".join(names):
            y = np.abs(y).astype(dtype) % 5
    out = {}
    for name in names:
        with np.errstate(all="ignore"):
            try:
                out[name] = getattr(np, name)(x, y) if binary else getattr(np, name)(x)
            except TypeError:
                continue
    return x, y, out


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("binary", [False, True], ids=["unary", "binary"])
def test_elementwise_matches_numpy(dtype, binary):
    names = BINARY if binary else UNARY
    x, y, want = _numpy_cases(dtype, names, binary)
    if not want:
        pytest.skip("numpy takes none of these for this dtype")
    got = run(lambda x, y: {k: getattr(hnp, k)(x, y) if binary else getattr(hnp, k)(x) for k in want}, x, y)
    for k, w in want.items():
        g = got[k]
        w = np.asarray(w)
        if k == "spacing" and w.dtype == np.float16:
            continue  # numpy's float16 spacing of negative numbers is positive (its float64 one is not)
        if np.dtype(dtype).kind == "f" and k in {s for s, _ in SKIP_EDGE}:
            keep = ~np.isnan(x) & ~np.isnan(y)
            g, w = np.asarray(g)[keep], w[keep]
        rtol = {"float_power": 1e-12, "i0": 1e-6 if w.dtype != np.float16 else 2e-3, "sinc": 1e-6}.get(k)
        if w.dtype == np.float32 and k in ("logaddexp2", "exp2", "log2", "log10", "sinh", "cosh", "hypot"):
            rtol = 1e-6
        assert_close(g, w, rtol=rtol if w.dtype.kind in "fc" else None)


def test_two_result_ufuncs():
    x = np.array([0.0, -0.0, 1.5, -2.75, 8.0, 0.1, 1e-3, 3e5, np.inf, -np.inf], np.float64)
    y = np.array([1.0, 2.0, -1.5, 0.5, 3.0, -0.25, 7.0, 1.0, 2.0, 2.0])
    got = run(lambda x, y: (hnp.frexp(x[:8]), hnp.modf(x), hnp.divmod(x, y), hnp.ldexp(x, np.int32(3))), x, y)
    for g, w in zip(got[0], np.frexp(x[:8])):
        assert_close(g, w)
    for g, w in zip(got[1], np.modf(x)):
        assert_close(g, w)
    for g, w in zip(got[2], np.divmod(x, y)):
        assert_close(g, w)
    assert_close(got[3], np.ldexp(x, np.int32(3)))


def test_weak_scalars_keep_the_array_dtype():
    x = np.linspace(0.1, 0.9, 5).astype(np.float32)
    got = run(lambda x: (hnp.hypot(x, 2.0), hnp.copysign(x, -1), hnp.arcsin(x), hnp.logaddexp(x, 1)), x)
    for g, w in zip(got, (np.hypot(x, 2.0), np.copysign(x, -1), np.arcsin(x), np.logaddexp(x, 1))):
        assert g.dtype == np.float32 == w.dtype
        assert_close(g, w)


def test_trig_emits_chlo_ops():
    counts = hf.trace(lambda x: (hnp.arcsin(x), hnp.cosh(x), hnp.isposinf(x)), np.ones(3, np.float32)).op_counts()
    assert counts["chlo.asin"] == 1 and counts["chlo.cosh"] == 1 and counts["chlo.is_pos_inf"] == 1


@pytest.mark.parametrize("fn,exc,match", [
    (lambda x: hnp.gcd(x, x), TypeError, "gcd: not supported for dtype"),
    (lambda x: hnp.left_shift(x, 1), TypeError, "left_shift: not supported for dtype"),
    (lambda x: hnp.signbit(x.astype(np.complex64)), TypeError, "signbit: not supported"),
    (lambda x: hnp.isposinf(x.astype(np.complex64)), TypeError, "not supported for complex values"),
    (lambda x: hnp.i0(x.astype(np.complex64)), TypeError, "i0 not supported for complex values"),
    (lambda x: hnp.bitwise_count(x), TypeError, "bitwise_count: not supported for dtype"),
    (lambda x: hnp.ldexp(x, x), TypeError, "ldexp: exponent dtype must be an integer"),
    (lambda x: hnp.fmod(x.astype(np.complex64), x), TypeError, "fmod: not supported for dtype"),
])
def test_ufunc_errors(fn, exc, match):
    with pytest.raises(exc, match=match):
        hf.trace(fn, np.ones((2, 3), np.float32))
