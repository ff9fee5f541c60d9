"""More of numpy's elementwise functions: inverse trigonometric and hyperbolic functions (CHLO
ops), angle conversion, exp2/log2/log10/logaddexp, copysign/nextafter/fmod/hypot, gcd/lcm,
fmax/fmin, bit shifts and counts, and the NaN/infinity tests. NumPy 2 dtype rules: numpy's loop
(``_base.ufunc_dtypes``) picks the compute and result dtypes, Python scalars are weak."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy._base import asarray, astype, operands, splat, ufunc_dtypes
from hloforge.frontend.ops import chlo_math
from hloforge.frontend.numpy._math import (
    _binary, _unary, floor_divide, greater_equal, invert, less_equal, remainder)


def _c(x, value):
    return splat(value, x.dtype, x.shape)


# ---------------------------------------------------------------- trigonometric and hyperbolic

arcsin = _unary("arcsin", np.arcsin, chlo_math.asin, "inverse sine")
arccos = _unary("arccos", np.arccos, chlo_math.acos, "inverse cosine")
arctan = _unary("arctan", np.arctan, chlo_math.atan, "inverse tangent")
sinh = _unary("sinh", np.sinh, chlo_math.sinh, "hyperbolic sine")
cosh = _unary("cosh", np.cosh, chlo_math.cosh, "hyperbolic cosine")
arcsinh = _unary("arcsinh", np.arcsinh, chlo_math.asinh, "inverse hyperbolic sine")
arccosh = _unary("arccosh", np.arccosh, chlo_math.acosh, "inverse hyperbolic cosine")
arctanh = _unary("arctanh", np.arctanh, chlo_math.atanh, "inverse hyperbolic tangent")
asin, acos, atan, asinh, acosh, atanh = arcsin, arccos, arctan, arcsinh, arccosh, arctanh
atan2 = _binary("atan2", np.arctan2, ops.atan2, "atan2(x1, x2)")


def _scale(factor):
    return lambda x: ops.multiply(x, _c(x, factor))


deg2rad = _unary("deg2rad", np.deg2rad, _scale(np.pi / 180), "degrees to radians")
rad2deg = _unary("rad2deg", np.rad2deg, _scale(180 / np.pi), "radians to degrees")
radians, degrees = deg2rad, rad2deg


def _hypot(a, b):
    # scaled so that squares of large values do not overflow: m * sqrt(1 + (s/m)**2)
    a, b = ops.abs(a), ops.abs(b)
    big, small = ops.maximum(a, b), ops.minimum(a, b)
    zero = ops.compare(big, _c(big, 0), "EQ")
    safe = ops.select(zero, _c(big, 1), big)
    r = ops.divide(small, safe)
    out = ops.multiply(big, ops.sqrt(ops.add(_c(r, 1), ops.multiply(r, r))))
    out = ops.select(zero, _c(big, 0), out)
    inf = ops.or_(chlo_math.is_inf(a), chlo_math.is_inf(b))
    return ops.select(inf, _c(big, np.inf), out)


hypot = _binary("hypot", np.hypot, _hypot, "sqrt(x1**2 + x2**2) without overflow")


def _sinc(x):
    zero = ops.compare(x, _c(x, 0), "EQ")
    px = ops.multiply(x, _c(x, np.pi))
    safe = ops.select(zero, _c(x, 1), px)
    return ops.select(zero, _c(x, 1), ops.divide(ops.sin(safe), safe))


def sinc(x):
    """numpy.sinc: sin(pi x) / (pi x), 1 at 0 (integers compute in float64)."""
    x = asarray(x)
    if not dtypes.is_inexact(x.dtype):
        x = astype(x, np.float64)
    return _sinc(x)


# ---------------------------------------------------------------- exponentials and logarithms

def _log_base(base):
    return lambda x: ops.divide(ops.log(x), _c(x, np.log(base)))


exp2 = _unary("exp2", np.exp2, lambda x: ops.power(_c(x, 2), x), "2**x")
log2 = _unary("log2", np.log2, _log_base(2), "base-2 logarithm")
log10 = _unary("log10", np.log10, _log_base(10), "base-10 logarithm")


def _logaddexp(a, b, base_e=True):
    big, small = ops.maximum(a, b), ops.minimum(a, b)
    same = ops.compare(a, b, "EQ")  # (equal infinities: big - small would be NaN)
    diff = ops.subtract(small, big)
    if base_e:
        out = ops.add(big, ops.log1p(ops.exp(diff)))
        tie = ops.add(a, _c(a, np.log(2)))
    else:
        ln2 = _c(a, np.log(2))
        out = ops.add(big, ops.divide(ops.log1p(ops.power(_c(a, 2), diff)), ln2))
        tie = ops.add(a, _c(a, 1))
    return ops.select(same, tie, out)


logaddexp = _binary("logaddexp", np.logaddexp, _logaddexp, "log(exp(x1) + exp(x2))")
logaddexp2 = _binary("logaddexp2", np.logaddexp2, lambda a, b: _logaddexp(a, b, False),
                     "log2(2**x1 + 2**x2)")


# ---------------------------------------------------------------- sign bits, rounding, remainders

def _signbit(x):
    if not dtypes.is_float(x.dtype):
        if dtypes.is_unsigned_int(x.dtype) or x.dtype == np.bool_:
            return ops.compare(x, x, "NE")
        return ops.compare(x, _c(x, 0), "LT")
    # the top bit, read as a signed integer of the same width (-0.0 and -NaN included)
    bits = ops.bitcast_convert(x, np.dtype(f"int{x.dtype.itemsize * 8}"))
    return ops.compare(bits, splat(0, bits.dtype, bits.shape), "LT")


def signbit(x):
    """numpy.signbit: True where the sign bit is set (-0.0 included)."""
    x = asarray(x)
    if dtypes.is_complex(x.dtype):
        raise TypeError(f"signbit: not supported for dtype(s) {x.dtype}")
    return _signbit(x)


def _copysign(a, b):
    mag = ops.abs(a)
    return ops.select(_signbit(b), ops.neg(mag), mag)


copysign = _binary("copysign", np.copysign, _copysign, "|x1| with the sign of x2")
nextafter = _binary("nextafter", np.nextafter, chlo_math.next_after, "the next float after x1 toward x2")


def _trunc(x):
    if not dtypes.is_inexact(x.dtype):
        return x
    return ops.select(ops.compare(x, _c(x, 0), "LT"), ops.ceil(x), ops.floor(x))


trunc = _unary("trunc", np.trunc, _trunc, "round toward zero")
fix = trunc


def _fmod(a, b):
    if dtypes.is_integer(a.dtype):
        zero = ops.compare(b, _c(b, 0), "EQ")
        safe = ops.select(zero, _c(b, 1), b)
        return ops.select(zero, _c(a, 0), ops.remainder(a, safe))  # numpy: 0 (with a warning)
    return ops.remainder(a, b)


def _no_bool(name, op):
    def emit(a, b):
        if a.dtype == np.bool_:
            raise TypeError(f"{name}: not supported for bool operands")
        return op(a, b)
    return emit


fmod = _binary("fmod", np.fmod, _no_bool("fmod", _fmod), "C fmod: remainder with the dividend's sign")


def _fabs(x):
    return ops.abs(x)


fabs = _unary("fabs", np.fabs, _fabs, "absolute value of a real number")


def _fminmax(op, name):
    def emit(a, b):
        if dtypes.is_complex(a.dtype):
            # numpy orders complex numbers lexicographically
            pick_a = (greater_equal if name == "fmax" else less_equal)(a, b)
            out = ops.select(pick_a, a, b)
            out = ops.select(isnan(a), b, out)
            return ops.select(isnan(b), a, out)
        out = op(a, b)
        if dtypes.is_float(a.dtype):
            out = ops.select(ops.compare(a, a, "NE"), b, out)
            out = ops.select(ops.compare(b, b, "NE"), a, out)
        return out
    return emit


fmax = _binary("fmax", np.fmax, _fminmax(ops.maximum, "fmax"), "maximum ignoring NaNs")
fmin = _binary("fmin", np.fmin, _fminmax(ops.minimum, "fmin"), "minimum ignoring NaNs")


def _heaviside(a, b):
    zero = _c(a, 0)
    out = ops.select(ops.compare(a, zero, "LT"), zero, _c(a, 1))
    out = ops.select(ops.compare(a, zero, "EQ"), b, out)
    return ops.select(ops.compare(a, a, "NE"), a, out)


heaviside = _binary("heaviside", np.heaviside, _heaviside, "0 below 0, x2 at 0, 1 above")


def float_power(x1, x2):
    """numpy.float_power: x1 ** x2 in float64 (complex128 for complex operands)."""
    a, b = operands("float_power", x1, x2)
    target = np.complex128 if dtypes.is_complex(a.dtype) else np.float64
    return ops.power(astype(a, target), astype(b, target))


def ldexp(x1, x2):
    """numpy.ldexp: x1 * 2**x2 (x2 integer)."""
    b = asarray(x2) if not isinstance(x2, (int, np.integer)) else x2
    if not isinstance(b, int) and not dtypes.is_integer(getattr(b, "dtype", np.dtype(int))):
        raise TypeError(f"ldexp: exponent dtype must be an integer, got {b.dtype}")
    a = asarray(x1)
    if not dtypes.is_inexact(a.dtype):
        a = astype(a, np.float64 if a.dtype.itemsize > 2 or a.dtype == np.uint16 or a.dtype == np.int16
                   else np.float16)
    a, e = operands("ldexp", a, astype(asarray(b), a.dtype))
    return ops.multiply(a, ops.power(_c(a, 2), e))


def frexp(x):
    """numpy.frexp: (mantissa in [0.5, 1), integer exponent) with x = m * 2**e."""
    x = asarray(x)
    if not dtypes.is_float(x.dtype):
        x = astype(x, ufunc_dtypes(np.frexp, x.dtype)[0])
    a = ops.abs(x)
    zero = ops.compare(a, _c(a, 0), "EQ")
    finite = ops.is_finite(x)
    safe = ops.select(ops.and_(finite, ops.not_(zero)), a, _c(a, 1))
    e = ops.add(ops.floor(ops.divide(ops.log(safe), _c(a, np.log(2)))), _c(a, 1))
    m = ops.divide(x, ops.power(_c(a, 2), e))
    # the log may be off by one near powers of two: renormalize into [0.5, 1)
    am = ops.abs(m)
    hi = ops.compare(am, _c(a, 1), "GE")
    lo = ops.compare(am, _c(a, 0.5), "LT")
    m = ops.select(hi, ops.divide(m, _c(a, 2)), ops.select(lo, ops.multiply(m, _c(a, 2)), m))
    e = ops.select(hi, ops.add(e, _c(a, 1)), ops.select(lo, ops.subtract(e, _c(a, 1)), e))
    m = ops.select(finite, ops.select(zero, x, m), x)
    e = ops.select(ops.and_(finite, ops.not_(zero)), e, _c(a, 0))
    return m, ops.convert(e, np.int32)


def modf(x):
    """numpy.modf: (fractional part, integral part), both with x's sign."""
    x = asarray(x)
    if not dtypes.is_float(x.dtype):
        x = astype(x, ufunc_dtypes(np.modf, x.dtype)[0])
    i = _trunc(x)
    frac = ops.select(chlo_math.is_inf(x), _c(x, 0), ops.subtract(x, i))
    return _copysign(frac, x), i


def divmod(x1, x2):
    """numpy.divmod: (x1 // x2, x1 % x2)."""
    return floor_divide(x1, x2), remainder(x1, x2)


def spacing(x):
    """numpy.spacing: the distance from x to the next float away from zero."""
    x = asarray(x)
    if not dtypes.is_float(x.dtype):
        x = astype(x, ufunc_dtypes(np.spacing, x.dtype)[0])
    toward = ops.select(_signbit(x), _c(x, -np.inf), _c(x, np.inf))
    return ops.subtract(chlo_math.next_after(x, toward), x)


# ---------------------------------------------------------------- integers

def _gcd(a, b):
    if not dtypes.is_integer(a.dtype):
        raise TypeError(f"gcd: not supported for dtype(s) {a.dtype}")
    a, b = ops.abs(a) if dtypes.is_signed_int(a.dtype) else a, ops.abs(b) if dtypes.is_signed_int(b.dtype) else b
    # Euclid's algorithm unrolled: enough steps for the widest integer (Fibonacci bound)
    steps = {1: 12, 2: 25, 4: 47, 8: 93}[a.dtype.itemsize]
    zero, one = _c(a, 0), _c(a, 1)
    for _ in range(steps):
        bz = ops.compare(b, zero, "EQ")
        r = ops.remainder(a, ops.select(bz, one, b))
        a, b = ops.select(bz, a, b), ops.select(bz, zero, r)
    return a


def _lcm(a, b):
    if not dtypes.is_integer(a.dtype):
        raise TypeError(f"lcm: not supported for dtype(s) {a.dtype}")
    g = _gcd(a, b)
    zero = ops.compare(g, _c(g, 0), "EQ")
    out = ops.multiply(ops.divide(a, ops.select(zero, _c(g, 1), g)), b)
    out = ops.abs(out) if dtypes.is_signed_int(out.dtype) else out
    return ops.select(zero, _c(g, 0), out)


gcd = _binary("gcd", np.gcd, _gcd, "greatest common divisor")
lcm = _binary("lcm", np.lcm, _lcm, "least common multiple")


def _shift(name, ufunc, direction):
    def emit(a, b):
        if not dtypes.is_integer(a.dtype):
            raise TypeError(f"{name}: not supported for dtype(s) {a.dtype}")
        if direction == "left":
            return ops.shift_left(a, b)
        return (ops.shift_right_arithmetic if dtypes.is_signed_int(a.dtype) else ops.shift_right_logical)(a, b)
    return _binary(name, ufunc, emit, f"bit shift {direction}")


left_shift = bitwise_left_shift = _shift("left_shift", np.left_shift, "left")
right_shift = bitwise_right_shift = _shift("right_shift", np.right_shift, "right")


def bitwise_invert(x):
    """numpy.bitwise_invert (~x)."""
    return invert(x)


def bitwise_count(x):
    """numpy.bitwise_count: set bits of |x| (uint8 result)."""
    x = asarray(x)
    if not (dtypes.is_integer(x.dtype) or x.dtype == np.bool_):
        raise TypeError(f"bitwise_count: not supported for dtype(s) {x.dtype}")
    if x.dtype == np.bool_:
        return astype(x, np.uint8)
    if dtypes.is_signed_int(x.dtype):
        x = ops.abs(x)
    u = ops.convert(x, np.dtype(f"u{x.dtype.itemsize}")) if dtypes.is_signed_int(x.dtype) else x
    count = _c(u, 0)
    one = _c(u, 1)
    for i in range(u.dtype.itemsize * 8):
        count = ops.add(count, ops.and_(ops.shift_right_logical(u, _c(u, i)), one))
    return ops.convert(count, np.uint8)


# ---------------------------------------------------------------- NaN and infinity tests

def isnan(x):
    """numpy.isnan (a complex value is NaN where either part is)."""
    x = asarray(x)
    if dtypes.is_complex(x.dtype):
        return ops.or_(isnan(ops.real(x)), isnan(ops.imag(x)))
    if not dtypes.is_float(x.dtype):
        return splat(False, bool, x.shape)
    return ops.compare(x, x, "NE")


def isinf(x):
    """numpy.isinf (a complex value is infinite where either part is)."""
    x = asarray(x)
    if dtypes.is_complex(x.dtype):
        return ops.or_(isinf(ops.real(x)), isinf(ops.imag(x)))
    if not dtypes.is_float(x.dtype):
        return splat(False, bool, x.shape)
    return chlo_math.is_inf(x)


def isfinite(x):
    """numpy.isfinite (a complex value is finite where both parts are)."""
    x = asarray(x)
    if dtypes.is_complex(x.dtype):
        return ops.and_(isfinite(ops.real(x)), isfinite(ops.imag(x)))
    if not dtypes.is_float(x.dtype):
        return splat(True, bool, x.shape)
    return ops.is_finite(x)


def _real_only(name, op):
    def fn(x):
        x = asarray(x)
        if dtypes.is_complex(x.dtype):
            raise TypeError("This operation is not supported for complex values because it would be ambiguous.")
        if not dtypes.is_float(x.dtype):
            return splat(False, bool, x.shape)
        return op(x)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"numpy.{name}."
    return fn


isposinf = _real_only("isposinf", chlo_math.is_pos_inf)
isneginf = _real_only("isneginf", chlo_math.is_neg_inf)


def iscomplex(x):
    """numpy.iscomplex: True where the imaginary part is nonzero."""
    x = asarray(x)
    if not dtypes.is_complex(x.dtype):
        return splat(False, bool, x.shape)
    im = ops.imag(x)
    return ops.compare(im, _c(im, 0), "NE")


def isreal(x):
    """numpy.isreal: True where the imaginary part is zero."""
    return ops.not_(iscomplex(x))


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """numpy.nan_to_num: NaN -> nan, +inf -> posinf (default: the largest float), -inf -> neginf."""
    x = asarray(x)
    if dtypes.is_complex(x.dtype):
        kw = dict(nan=nan, posinf=posinf, neginf=neginf)
        return ops.complex(nan_to_num(ops.real(x), **kw), nan_to_num(ops.imag(x), **kw))
    if not dtypes.is_float(x.dtype):
        return x
    finfo = np.finfo(np.float32 if x.dtype == dtypes.bfloat16 else x.dtype)
    big = float(finfo.max) if x.dtype != dtypes.bfloat16 else float(dtypes.bfloat16.type(3.3895314e38))
    out = ops.select(ops.compare(x, x, "NE"), _c(x, nan), x)
    out = ops.select(chlo_math.is_pos_inf(x), _c(x, big if posinf is None else posinf), out)
    return ops.select(chlo_math.is_neg_inf(x), _c(x, -big if neginf is None else neginf), out)


def angle(z, deg=False):
    """numpy.angle: the argument of z (radians, or degrees with ``deg=True``)."""
    z = asarray(z)
    if dtypes.is_complex(z.dtype):
        out = ops.atan2(ops.imag(z), ops.real(z))
    else:
        common = dtypes.result_type(z, 0)  # numpy computes arctan2(0, z)
        z = astype(z, ufunc_dtypes(np.arctan2, common, common)[0])
        out = ops.atan2(_c(z, 0), z)
    return ops.multiply(out, _c(out, 180 / np.pi)) if deg else out
