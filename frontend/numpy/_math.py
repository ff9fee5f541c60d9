"""numpy's elementwise functions (ufuncs) with broadcasting and numpy-2 promotion."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy._base import (
    asarray, astype, broadcast_shapes, broadcast_to, operands, splat, ufunc_dtypes)


def _unary(name, ufunc, emit, doc):
    def fn(x):
        x = asarray(x)
        compute, out = ufunc_dtypes(ufunc, x.dtype)
        y = astype(emit(astype(x, compute)), out)
        if x.weak and y.dtype == x.dtype:
            y.weak = True  # (a weak value's sin is weak, as in jax)
        return y
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"numpy.{ufunc.__name__}: {doc}. Emits {getattr(emit, 'stablehlo_op', 'StableHLO ops')}."
    return fn


def _identity(x):
    return x


def _int_passthrough(op):
    """floor/ceil/round of integers and bools are the values themselves (numpy >= 2.1)."""
    def emit(x):
        return x if not dtypes.is_inexact(x.dtype) else op(x)
    emit.stablehlo_op = op.stablehlo_op
    return emit


def _sign(x):
    if x.dtype == np.bool_:
        raise TypeError("sign: not supported for bool")
    if dtypes.is_unsigned_int(x.dtype):
        return astype(ops.compare(x, splat(0, x.dtype, x.shape), "NE"), x.dtype)
    if dtypes.is_complex(x.dtype):
        # numpy 2: x / |x|, and 0 at 0
        mag = ops.abs(x)
        zero = ops.compare(mag, splat(0, mag.dtype, mag.shape), "EQ")
        safe = ops.select(zero, splat(1, mag.dtype, mag.shape), mag)
        q = ops.divide(x, ops.complex(safe, splat(0, mag.dtype, mag.shape)))
        return ops.select(zero, splat(0, x.dtype, x.shape), q)
    if dtypes.is_float(x.dtype):  # (numpy: sign(-0.0) is +0.0; stablehlo.sign keeps the zero's sign)
        return ops.select(ops.compare(x, splat(0, x.dtype, x.shape), "EQ"), splat(0, x.dtype, x.shape), ops.sign(x))
    return ops.sign(x)


def _abs(x):
    if dtypes.is_unsigned_int(x.dtype) or x.dtype == np.bool_:
        return x
    return ops.abs(x)


def _invert(x):
    if not (dtypes.is_integer(x.dtype) or x.dtype == np.bool_):
        raise TypeError(f"invert: not supported for {x.dtype}")
    return ops.not_(x)


def _square(x):
    return ops.multiply(x, x)


def _reciprocal(x):
    one = splat(1, x.dtype, x.shape)
    if not dtypes.is_integer(x.dtype):
        return ops.divide(one, x)
    safe, is_zero = _guarded_divisor(x)
    with np.errstate(all="ignore"):
        at_zero = np.reciprocal(np.zeros((), x.dtype))  # numpy's 1/0 for this type (cast from inf)
    return ops.select(is_zero, splat(at_zero, x.dtype, x.shape), ops.divide(one, safe))


negative = _unary("negative", np.negative, ops.neg, "-x")
positive = _unary("positive", np.positive, _identity, "+x")
absolute = _unary("absolute", np.absolute, _abs, "|x| (real for complex input)")
abs = absolute
exp = _unary("exp", np.exp, ops.exp, "e**x")
log = _unary("log", np.log, ops.log, "natural logarithm")
log1p = _unary("log1p", np.log1p, ops.log1p, "log(1 + x)")
expm1 = _unary("expm1", np.expm1, ops.expm1, "e**x - 1")
sin = _unary("sin", np.sin, ops.sin, "sine")
cos = _unary("cos", np.cos, ops.cos, "cosine")
tan = _unary("tan", np.tan, ops.tan, "tangent")
tanh = _unary("tanh", np.tanh, ops.tanh, "hyperbolic tangent")
sqrt = _unary("sqrt", np.sqrt, ops.sqrt, "square root")
cbrt = _unary("cbrt", np.cbrt, ops.cbrt, "cube root")
floor = _unary("floor", np.floor, _int_passthrough(ops.floor), "floor")
ceil = _unary("ceil", np.ceil, _int_passthrough(ops.ceil), "ceiling")
rint = _unary("rint", np.rint, _int_passthrough(ops.round), "round half to even")
sign = _unary("sign", np.sign, _sign, "sign")
logical_not = _unary("logical_not", np.logical_not, lambda x: ops.not_(astype(x, bool)), "not x")
invert = _unary("invert", np.invert, _invert, "bitwise/logical not")
bitwise_not = invert
square = _unary("square", np.square, _square, "x * x")
reciprocal = _unary("reciprocal", np.reciprocal, _reciprocal, "1 / x")


def round(x, decimals: int = 0):
    """numpy.round: round half to even, to ``decimals`` places (negative: tens, hundreds, ...).

    Integers keep their dtype (``decimals < 0`` rounds through float64, as numpy does; results
    out of the dtype's range wrap, or become the minimum for 32/64-bit types, as numpy on x86-64);
    bool is rounded only with ``decimals=0`` (to float16). Emits stablehlo.round_nearest_even.
    """
    import operator
    x = asarray(x)
    try:
        decimals = operator.index(decimals)
    except TypeError:
        raise TypeError(f"round: decimals must be an integer, got {decimals!r}") from None
    if x.dtype == np.bool_:
        if decimals != 0:
            raise TypeError(f"round: cannot round a bool array to {decimals} decimals (numpy cannot cast "
                            "the float64 result back to bool)")
        return rint(x)
    if dtypes.is_integer(x.dtype):
        return x if decimals >= 0 else _round_integer(x, 10.0 ** -decimals)
    if dtypes.is_complex(x.dtype):
        return ops.complex(round(ops.real(x), decimals), round(ops.imag(x), decimals))
    if decimals == 0:
        return rint(x)
    if decimals > 0:
        scale = splat(10.0 ** decimals, x.dtype, x.shape)
        return ops.divide(ops.round(ops.multiply(x, scale)), scale)
    scale = splat(10.0 ** -decimals, x.dtype, x.shape)
    return ops.multiply(ops.round(ops.divide(x, scale)), scale)


def _round_integer(x, scale: float):
    """numpy's integer round to a negative number of decimals: rint(x / scale) * scale in float64,
    cast back (out-of-range values as numpy's cast on x86-64: wrapped through a 64-bit integer
    for 8/16-bit types and uint32, the minimum for int32/int64, 0 for uint64 >= 2**64)."""
    f64 = np.dtype(np.float64)
    s = splat(scale, f64, x.shape)
    y = ops.multiply(ops.round(ops.divide(astype(x, f64), s)), s)
    if x.dtype == np.uint64:
        wide = astype(y, np.uint64)
        return ops.select(ops.compare(y, splat(2.0 ** 64, f64, x.shape), "GE"), splat(0, x.dtype, x.shape), wide)
    wide = astype(y, np.int64)
    out = astype(wide, x.dtype)
    if x.dtype.itemsize >= 4 and x.dtype.kind == "i":
        bits = 8 * x.dtype.itemsize - 1
        outside = ops.or_(ops.compare(y, splat(2.0 ** bits, f64, x.shape), "GE"),
                          ops.compare(y, splat(-(2.0 ** bits), f64, x.shape), "LT"))
        out = ops.select(outside, splat(np.iinfo(x.dtype).min, x.dtype, x.shape), out)
    return out


around = round


# ---------------------------------------------------------------- binary

def _binary(name, ufunc, emit, doc):
    def fn(x1, x2):
        a, b = operands(name, x1, x2)
        compute, out = ufunc_dtypes(ufunc, a.dtype, b.dtype)
        y = astype(emit(astype(a, compute), astype(b, compute)), out)
        if y.dtype == a.dtype and not dtypes.is_bool(y.dtype) and dtypes.weak_result(x1, x2):
            y.weak = True  # (int32_array * lr is weak, so `x_f32 + i * lr` stays float32, as in jax)
        return y
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"numpy.{ufunc.__name__}: {doc}, with broadcasting. Emits {getattr(emit, 'stablehlo_op', 'StableHLO ops')}."
    return fn


def _check_not_bool(name, op):
    def emit(a, b):
        if a.dtype == np.bool_:
            raise TypeError(f"{name}: not supported for bool operands")
        return op(a, b)
    return emit


def _guarded_divisor(b):
    """(b with its zeros replaced by 1, b == 0): no integer divide ever sees a 0, not even one
    constant folding produces (XLA's folder kills the process on it)."""
    is_zero = ops.compare(b, splat(0, b.dtype, b.shape), "EQ")
    return ops.select(is_zero, splat(1, b.dtype, b.shape), b), is_zero


def _zero_where(is_zero, x):
    """numpy's integer x // 0 and x % 0: 0."""
    return ops.select(is_zero, splat(0, x.dtype, x.shape), x)


def _floor_divide(a, b):
    if dtypes.is_integer(a.dtype):
        b, is_zero = _guarded_divisor(b)
        q = ops.divide(a, b)
        if dtypes.is_unsigned_int(a.dtype):
            return _zero_where(is_zero, q)
        r = ops.remainder(a, b)
        zero = splat(0, a.dtype, a.shape)
        adjust = ops.and_(ops.compare(r, zero, "NE"),
                          ops.compare(ops.compare(r, zero, "LT"), ops.compare(b, zero, "LT"), "NE"))
        return _zero_where(is_zero, ops.select(adjust, ops.subtract(q, splat(1, a.dtype, a.shape)), q))
    return _float_divmod(a, b)[0]


def _float_divmod(a, b):
    """numpy's npy_divmod: floor division and modulo that agree with Python's semantics."""
    zero, one = splat(0, a.dtype, a.shape), splat(1, a.dtype, a.shape)
    mod = ops.remainder(a, b)
    div = ops.divide(ops.subtract(a, mod), b)
    fix = ops.and_(ops.compare(mod, zero, "NE"),
                   ops.compare(ops.compare(b, zero, "LT"), ops.compare(mod, zero, "LT"), "NE"))
    mod = ops.select(fix, ops.add(mod, b), mod)
    div = ops.select(fix, ops.subtract(div, one), div)
    # a zero remainder takes the divisor's sign
    mod = ops.select(ops.compare(mod, zero, "EQ"), ops.multiply(zero, b), mod)
    floordiv = ops.floor(div)
    half = splat(0.5, a.dtype, a.shape)
    floordiv = ops.select(ops.compare(ops.subtract(div, floordiv), half, "GT"), ops.add(floordiv, one),
                          floordiv)
    plain = ops.divide(a, b)
    floordiv = ops.select(ops.compare(div, zero, "EQ"), ops.multiply(zero, plain), floordiv)
    # division by zero: numpy gives a / b (inf or nan) for the quotient and nan for the modulo
    bzero = ops.compare(b, zero, "EQ")
    floordiv = ops.select(bzero, plain, floordiv)
    return floordiv, mod


def _remainder(a, b):
    if dtypes.is_integer(a.dtype):
        b, is_zero = _guarded_divisor(b)
        r = ops.remainder(a, b)
        if dtypes.is_unsigned_int(a.dtype):
            return _zero_where(is_zero, r)
        zero = splat(0, a.dtype, a.shape)
        fix = ops.and_(ops.compare(r, zero, "NE"),
                       ops.compare(ops.compare(r, zero, "LT"), ops.compare(b, zero, "LT"), "NE"))
        return _zero_where(is_zero, ops.select(fix, ops.add(r, b), r))
    return _float_divmod(a, b)[1]


def _power(a, b):
    return ops.power(a, b)


def _logical(op):
    return lambda a, b: op(astype(a, bool), astype(b, bool))


def _bool_aware(op, bool_op):
    """numpy's bool add/multiply are logical or/and: emit those (XLA's constant folder computes
    a bool stablehlo.add as xor, its compiled code as or)."""
    return lambda a, b: bool_op(a, b) if a.dtype == np.bool_ else op(a, b)


add = _binary("add", np.add, _bool_aware(ops.add, ops.or_), "x1 + x2")
subtract = _binary("subtract", np.subtract, _check_not_bool("subtract", ops.subtract), "x1 - x2")
multiply = _binary("multiply", np.multiply, _bool_aware(ops.multiply, ops.and_), "x1 * x2")
divide = _binary("divide", np.divide, ops.divide, "true division x1 / x2")
true_divide = divide
floor_divide = _binary("floor_divide", np.floor_divide, _floor_divide, "x1 // x2 (floor semantics)")
remainder = _binary("remainder", np.remainder, _remainder, "x1 % x2 (sign of the divisor)")
mod = remainder
power = _binary("power", np.power, _check_not_bool("power", _power), "x1 ** x2")
def _complex_aware(op, direction):
    """maximum/minimum; complex in numpy's lexicographic order, a NaN part propagating (the first
    operand's when both have one)."""
    def emit(a, b):
        if not dtypes.is_complex(a.dtype):
            return op(a, b)
        a_nan, b_nan = _complex_isnan(a), _complex_isnan(b)
        wins = (greater_equal if direction == "GE" else less_equal)(a, b)
        return ops.select(ops.or_(a_nan, ops.and_(ops.not_(b_nan), wins)), a, b)
    return emit


def _complex_isnan(x):
    re, im = ops.real(x), ops.imag(x)
    return ops.or_(ops.compare(re, re, "NE"), ops.compare(im, im, "NE"))


maximum = _binary("maximum", np.maximum, _complex_aware(ops.maximum, "GE"),
                  "elementwise maximum, NaN-propagating (complex: lexicographic)")
minimum = _binary("minimum", np.minimum, _complex_aware(ops.minimum, "LE"),
                  "elementwise minimum, NaN-propagating (complex: lexicographic)")
arctan2 = _binary("arctan2", np.arctan2, ops.atan2, "atan2(x1, x2)")
logical_and = _binary("logical_and", np.logical_and, _logical(ops.and_), "x1 and x2")
logical_or = _binary("logical_or", np.logical_or, _logical(ops.or_), "x1 or x2")
logical_xor = _binary("logical_xor", np.logical_xor, _logical(ops.xor), "x1 xor x2")
bitwise_and = _binary("bitwise_and", np.bitwise_and, ops.and_, "x1 & x2")
bitwise_or = _binary("bitwise_or", np.bitwise_or, ops.or_, "x1 | x2")
bitwise_xor = _binary("bitwise_xor", np.bitwise_xor, ops.xor, "x1 ^ x2")


def _comparison(name, ufunc, direction):
    def fn(x1, x2):
        a, b = operands(name, x1, x2)
        if dtypes.is_complex(a.dtype) and direction not in ("EQ", "NE"):
            # numpy orders complex numbers lexicographically
            ar, ai, br, bi = ops.real(a), ops.imag(a), ops.real(b), ops.imag(b)
            strict = direction[:2] if direction in ("LT", "GT") else direction[0] + "T"
            first = ops.compare(ar, br, strict)
            tie = ops.and_(ops.compare(ar, br, "EQ"), ops.compare(ai, bi, direction))
            return ops.or_(first, tie)
        return ops.compare(a, b, direction)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"numpy.{ufunc.__name__}: elementwise comparison ({direction}), bool result."
    return fn


equal = _comparison("equal", np.equal, "EQ")
not_equal = _comparison("not_equal", np.not_equal, "NE")
less = _comparison("less", np.less, "LT")
less_equal = _comparison("less_equal", np.less_equal, "LE")
greater = _comparison("greater", np.greater, "GT")
greater_equal = _comparison("greater_equal", np.greater_equal, "GE")


def where(condition, x, y):
    """numpy.where(condition, x, y): broadcast all three, promote x and y. Emits stablehlo.select."""
    cond = astype(asarray(condition), bool)
    a, b = operands("where", x, y)
    shape = broadcast_shapes(cond.shape, a.shape, what="where")
    return ops.select(broadcast_to(cond, shape), broadcast_to(a, shape), broadcast_to(b, shape))


def clip(x, a_min=None, a_max=None, *, min=None, max=None):  # noqa: A002 (numpy 2.1's and the array API's names)
    """numpy.clip: minimum(maximum(x, a_min), a_max) with broadcasting (complex: lexicographic,
    as numpy); ``min``/``max`` are numpy 2.1's (and the array API's) names of the bounds."""
    for old, new, name in ((a_min, min, "min"), (a_max, max, "max")):
        if old is not None and new is not None:
            raise ValueError(f"hloforge.numpy.clip: pass a_{name} or {name}, not both")
    a_min = a_min if min is None else min
    a_max = a_max if max is None else max
    out = asarray(x)
    if a_min is not None:
        out = maximum(out, a_min)
    if a_max is not None:
        out = minimum(out, a_max)
    return out


def real(x):
    """numpy.real: the real part (the array itself for real input)."""
    x = asarray(x)
    return ops.real(x) if dtypes.is_complex(x.dtype) else x


def imag(x):
    """numpy.imag: the imaginary part (zeros for real input)."""
    x = asarray(x)
    return ops.imag(x) if dtypes.is_complex(x.dtype) else splat(0, x.dtype, x.shape)


def conj(x):
    """numpy.conj: complex conjugate (the array itself for real input)."""
    x = asarray(x)
    if not dtypes.is_complex(x.dtype):
        return x
    return ops.complex(ops.real(x), ops.neg(ops.imag(x)))


conjugate = conj
