"""jax.lax's elementwise functions: arithmetic, comparisons, bitwise ops, shifts, transcendental
functions, complex parts, conversions, clamp and select_n.

jax.lax semantics, not numpy's: operands of binary functions must have one dtype (no promotion;
Python scalars are int32/float32/complex64, as in jax) and, unless they are 0-d, one rank; a 0-d
operand or a size-1 dimension is broadcast (``stablehlo.broadcast_in_dim``), as jax.lax does.
"""
from __future__ import annotations

import builtins
import operator

import jax
import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax._common import lax_operand
from hloforge.frontend.tracing import Tensor

RoundingMethod = jax.lax.RoundingMethod  # (jax's enum, plain Python data)

# jax's dtype classes, by the names its error messages use
_CLASSES = {"integer": dtypes.is_integer, "signedinteger": dtypes.is_signed_int, "floating": dtypes.is_float,
            "complexfloating": dtypes.is_complex, "bool": dtypes.is_bool,
            "float32": lambda d: d == np.float32, "float64": lambda d: d == np.float64}
NUM = ("integer", "floating", "complexfloating")
ANY = NUM + ("bool",)
FLOAT = ("floating",)
INEXACT = ("floating", "complexfloating")
INT = ("integer",)
BOOL_OR_INT = ("integer", "bool")
ORDERED = ("integer", "floating", "bool")


# ---------------------------------------------------------------- operands

def as_operand(name, x, pos=None) -> Tensor:
    """``x`` as a Tensor; lists and tuples are refused, as jax.lax refuses them."""
    if isinstance(x, (list, tuple)):
        where = "" if pos is None else f" at position {pos}"
        raise TypeError(f"hloforge.lax.{name}: got a {type(x).__name__}{where}; jax.lax takes arrays and "
                        "scalars, not sequences (convert it with numpy.asarray first)")
    return lax_operand(x, f"hloforge.lax.{name} operand")


def check_dtype(name, x, accepted, pos=None):
    if not any(_CLASSES[c](x.dtype) for c in accepted):
        at = "" if pos is None else f" at position {pos}"
        raise TypeError(f"hloforge.lax.{name} does not accept dtype {x.dtype.name}{at}. Accepted dtypes{at} are "
                        f"subtypes of {', '.join(accepted)}.")


def check_same_dtypes(name, xs):
    if any(x.dtype != xs[0].dtype for x in xs[1:]):
        raise TypeError(f"hloforge.lax.{name} requires arguments to have the same dtypes, got "
                        f"{', '.join(x.dtype.name for x in xs)}.")


def broadcast_shapes_of(name, shapes):
    """jax.lax's broadcasting: 0-d shapes broadcast to anything; the others need one rank, and
    each dimension one size or 1."""
    shapes = [tuple(s) for s in shapes if len(s)]
    if not shapes:
        return ()
    ranks = {len(s) for s in shapes}
    if len(ranks) != 1:
        raise TypeError(f"hloforge.lax.{name}: arrays must have the same number of dimensions, got {sorted(ranks)}")
    out = []
    for sizes in zip(*shapes):
        big = {n for n in sizes if n != 1}
        if len(big) > 1:
            raise TypeError(f"hloforge.lax.{name} got incompatible shapes for broadcasting: "
                            f"{', '.join(map(str, shapes))}.")
        out.append(big.pop() if big else 1)
    return tuple(out)


def broadcast_to(x: Tensor, shape) -> Tensor:
    return x if x.shape == shape else ops.broadcast_in_dim(x, shape, tuple(range(x.ndim)))


def operands(name, xs, accepted, same_dtype=True):
    """The Tensors of an n-ary function: converted, dtype-checked, broadcast to one shape."""
    ts = [as_operand(name, x, i) for i, x in enumerate(xs)]
    for i, t in enumerate(ts):
        check_dtype(name, t, accepted[i] if isinstance(accepted, list) else accepted, i)
    if same_dtype:
        check_same_dtypes(name, ts)
    shape = broadcast_shapes_of(name, [t.shape for t in ts])
    return [broadcast_to(t, shape) for t in ts]


def full_of(x: Tensor, value, dtype=None) -> Tensor:
    """A constant of ``x``'s shape (and dtype, or ``dtype``): one 0-d constant, broadcast."""
    scalar = ops.constant(np.asarray(value, dtype or x.dtype))
    return scalar if x.ndim == 0 else ops.broadcast_in_dim(scalar, x.shape, ())


def _no_accuracy(name, accuracy):
    if accuracy is not None:
        raise ValueError(f"hloforge.lax.{name}: accuracy={accuracy!r} is not supported (hloforge's ops carry no "
                         "result_accuracy attribute); pass accuracy=None")


def _doc(name, summary, emits, args, example):
    return f"""jax.lax.{name}: {summary}; emits {emits}.

    Args:
      {args}

    Returns:
      An array of the broadcast shape.

    Example:
      >>> y = hf.lax.{example}
    """


# ---------------------------------------------------------------- unary functions

def _unary(name, accepted, build, summary, emits, accuracy=False):
    def check(x):
        x = as_operand(name, x)
        check_dtype(name, x, accepted)
        return x

    if accuracy:
        def fn(x, *, accuracy=None):
            _no_accuracy(name, accuracy)
            return build(check(x))
        extra = "\n      accuracy: None (result_accuracy is not supported)."
    else:
        def fn(x):
            return build(check(x))
        extra = ""
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _doc(name, summary, emits, f"x: an array of {', '.join(accepted)} dtype.{extra}", f"{name}(x)")
    return fn


def _sign(x):
    if dtypes.is_unsigned_int(x.dtype):  # (stablehlo.sign is for signed numbers; jax selects)
        return ops.select(ops.compare(x, full_of(x, 0), "EQ"), full_of(x, 0), full_of(x, 1))
    return ops.sign(x)


def _logistic(x):
    # jax's lowering: 1 / (1 + exp(-x))
    return ops.divide(full_of(x, 1), ops.add(full_of(x, 1), ops.exp(ops.neg(x))))


def _exp2(x):
    return ops.exp(ops.multiply(full_of(x, np.log(2)), x))


def _complex_sin_cos(x, cosine):
    # jax's complex lowering: cosh and sinh of the imaginary part from expm1 (no cancellation near 0)
    a, b = ops.real(x), ops.imag(x)
    two = full_of(a, 2)
    sn, cs = ops.sin(a), ops.cos(a)
    e1m, e2m = ops.expm1(b), ops.expm1(ops.neg(b))
    snh = ops.divide(ops.subtract(e1m, e2m), two)
    csh = ops.divide(ops.add(ops.add(e1m, e2m), two), two)
    zero = ops.compare(a, full_of(a, 0), "EQ")
    if cosine:
        re, im = ops.multiply(cs, csh), ops.multiply(ops.neg(sn), snh)
        return ops.select(zero, ops.complex(re, full_of(a, 0)), ops.complex(re, im))
    re, im = ops.multiply(sn, csh), ops.multiply(cs, snh)
    return ops.select(zero, ops.complex(full_of(a, 0), im), ops.complex(re, im))


def _sin(x):
    return _complex_sin_cos(x, False) if dtypes.is_complex(x.dtype) else ops.sin(x)


def _cos(x):
    return _complex_sin_cos(x, True) if dtypes.is_complex(x.dtype) else ops.cos(x)


def _square(x):
    if dtypes.is_complex(x.dtype):  # (re - im)(re + im) + 2 re im i: no cancellation when |re| = |im|
        re, im = ops.real(x), ops.imag(x)
        return ops.complex(ops.multiply(ops.subtract(re, im), ops.add(re, im)),
                           ops.multiply(full_of(re, 2), ops.multiply(re, im)))
    return ops.multiply(x, x)


def _conj(x):
    if not dtypes.is_complex(x.dtype):  # (jax: the complex number x + 0i)
        return ops.complex(x, full_of(x, 0))
    return ops.complex(ops.real(x), ops.neg(ops.imag(x)))


_UNARY = [
    # name, accepted dtypes, builder, summary, emitted ops, accuracy argument
    ("neg", NUM, ops.neg, "-x", "``stablehlo.negate``", False),
    ("sign", NUM, _sign, "the sign (-1, 0, 1; x/|x| for complex)", "``stablehlo.sign`` (a select for unsigned)",
     False),
    ("floor", FLOAT, ops.floor, "round down", "``stablehlo.floor``", False),
    ("ceil", FLOAT, ops.ceil, "round up", "``stablehlo.ceil``", False),
    ("is_finite", FLOAT, ops.is_finite, "True where x is neither infinite nor NaN", "``stablehlo.is_finite``",
     False),
    ("exp", INEXACT, ops.exp, "e**x", "``stablehlo.exponential``", True),
    ("exp2", INEXACT, _exp2, "2**x", "``stablehlo.exponential`` of ``log(2) * x``", True),
    ("log", INEXACT, ops.log, "the natural logarithm", "``stablehlo.log``", True),
    ("log1p", INEXACT, ops.log1p, "log(1 + x)", "``stablehlo.log_plus_one``", True),
    ("expm1", INEXACT, ops.expm1, "e**x - 1", "``stablehlo.exponential_minus_one``", True),
    ("tanh", INEXACT, ops.tanh, "the hyperbolic tangent", "``stablehlo.tanh``", True),
    ("logistic", INEXACT, _logistic, "1 / (1 + e**-x)", "``negate``, ``exponential``, ``add``, ``divide``", True),
    ("sin", INEXACT, _sin, "the sine", "``stablehlo.sine`` (complex: jax's expm1 formula)", True),
    ("cos", INEXACT, _cos, "the cosine", "``stablehlo.cosine`` (complex: jax's expm1 formula)", True),
    ("tan", INEXACT, ops.tan, "the tangent", "``stablehlo.tan``", True),
    ("sqrt", INEXACT, ops.sqrt, "the square root", "``stablehlo.sqrt``", True),
    ("rsqrt", INEXACT, ops.rsqrt, "1 / sqrt(x)", "``stablehlo.rsqrt``", True),
    ("cbrt", FLOAT, ops.cbrt, "the cube root", "``stablehlo.cbrt``", True),
    ("asin", INEXACT, ops.asin, "the inverse sine", "``chlo.asin``", False),
    ("acos", INEXACT, ops.acos, "the inverse cosine", "``chlo.acos``", False),
    ("atan", INEXACT, ops.atan, "the inverse tangent", "``chlo.atan``", False),
    ("sinh", INEXACT, ops.sinh, "the hyperbolic sine", "``chlo.sinh``", False),
    ("cosh", INEXACT, ops.cosh, "the hyperbolic cosine", "``chlo.cosh``", False),
    ("asinh", INEXACT, ops.asinh, "the inverse hyperbolic sine", "``chlo.asinh``", False),
    ("acosh", INEXACT, ops.acosh, "the inverse hyperbolic cosine", "``chlo.acosh``", False),
    ("atanh", INEXACT, ops.atanh, "the inverse hyperbolic tangent", "``chlo.atanh``", False),
    ("erf", FLOAT, ops.erf, "the error function", "``chlo.erf``", False),
    ("abs", ("signedinteger", "floating", "complexfloating"), ops.abs, "|x| (real for complex x)",
     "``stablehlo.abs``", False),
    ("bitwise_not", BOOL_OR_INT, ops.not_, "bitwise (logical for bool) not", "``stablehlo.not``", False),
    ("real", ("complexfloating",), ops.real, "the real part", "``stablehlo.real``", False),
    ("imag", ("complexfloating",), ops.imag, "the imaginary part", "``stablehlo.imag``", False),
    ("conj", ("float32", "float64", "complexfloating"), _conj, "the complex conjugate (complex for real x)",
     "``stablehlo.complex`` of the real part and the negated imaginary part", False),
    ("square", NUM, _square, "x * x", "``stablehlo.multiply`` (complex: the parts' formula)", False),
]

_unary_defined = {row[0]: _unary(*row) for row in _UNARY}
(neg, sign, floor, ceil, is_finite, exp, exp2, log, log1p, expm1, tanh, logistic, sin, cos, tan, sqrt, rsqrt, cbrt,
 asin, acos, atan, sinh, cosh, asinh, acosh, atanh, erf, abs, bitwise_not, real, imag, conj, square) = (
    _unary_defined[row[0]] for row in _UNARY)


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    """jax.lax.round: round to the nearest integer; emits ``stablehlo.round_nearest_afz``
    (``RoundingMethod.AWAY_FROM_ZERO``, 0) or ``stablehlo.round_nearest_even`` (``TO_NEAREST_EVEN``, 1).

    Args:
      x: a floating array.
      rounding_method: a RoundingMethod or its int value.
    Returns:
      The rounded array.
    Example:
      >>> y = hf.lax.round(x, hf.lax.RoundingMethod.TO_NEAREST_EVEN)
    """
    method = RoundingMethod(rounding_method)
    x = as_operand("round", x)
    check_dtype("round", x, FLOAT)
    return ops.round_nearest_afz(x) if method == RoundingMethod.AWAY_FROM_ZERO else ops.round(x)


def integer_pow(x, y):
    """jax.lax.integer_pow: x ** y for a static int y, by jax's square-and-multiply chain of
    ``stablehlo.multiply`` (and one ``divide`` for y < 0).

    Args:
      x: an integer, floating or complex array.
      y: a Python int (negative only for inexact x).
    Returns:
      An array of x's shape and dtype.
    Example:
      >>> y = hf.lax.integer_pow(x, 3)
    """
    x = as_operand("integer_pow", x)
    check_dtype("integer_pow", x, NUM)
    y = operator.index(y)
    if y < 0 and dtypes.is_integer(x.dtype):
        raise TypeError(f"hloforge.lax.integer_pow: integers cannot be raised to negative powers, got "
                        f"integer_pow({x.dtype.name}{list(x.shape)}, {y})")
    if y == 0:
        return full_of(x, 1)
    n, acc = builtins.abs(y), None
    while n > 0:
        if n & 1:
            acc = x if acc is None else ops.multiply(acc, x)
        n >>= 1
        if n > 0:
            x = ops.multiply(x, x)
    return ops.divide(full_of(acc, 1), acc) if y < 0 else acc


def reciprocal(x):
    """jax.lax.reciprocal: 1 / x (``integer_pow(x, -1)``); emits ``stablehlo.divide``.

    Args:
      x: a floating or complex array.
    Returns:
      An array of x's shape and dtype.
    Example:
      >>> y = hf.lax.reciprocal(x)
    """
    x = as_operand("reciprocal", x)
    if dtypes.is_integer(x.dtype):
        raise TypeError(f"hloforge.lax.reciprocal: integers cannot be raised to negative powers, got "
                        f"integer_pow({x.dtype.name}{list(x.shape)}, -1)")
    return integer_pow(x, -1)


def convert_element_type(operand, new_dtype):
    """jax.lax.convert_element_type: an elementwise cast; emits ``stablehlo.convert`` (complex to
    real keeps the real part; to bool is ``x != 0``, a ``compare``).

    Args:
      operand: an array or scalar.
      new_dtype: the target dtype.
    Returns:
      An array of the operand's shape and ``new_dtype``.
    Example:
      >>> y = hf.lax.convert_element_type(x, np.int32)
    """
    x = as_operand("convert_element_type", operand)
    new_dtype = dtypes.canonical(new_dtype)
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(new_dtype):
        x = ops.real(x)
    if x.dtype == new_dtype:
        return x
    if dtypes.is_bool(new_dtype):
        return ops.compare(x, full_of(x, 0), "NE")
    return ops.convert(x, new_dtype)



# ---------------------------------------------------------------- binary functions

def _binary(name, accepted, build, summary, emits):
    def fn(x, y):
        return build(*operands(name, (x, y), accepted))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _doc(name, summary, emits, f"x, y: arrays of one {', '.join(accepted)} dtype (0-d or of one "
                      "rank; size-1 dims broadcast).", f"{name}(x, y)")
    return fn


def _complex_order(x, y, direction):
    # jax orders complex numbers lexicographically (real part, then imaginary part)
    xr, yr = ops.real(x), ops.real(y)
    pick = ops.select(ops.compare(xr, yr, "EQ"), ops.compare(ops.imag(x), ops.imag(y), direction),
                      ops.compare(xr, yr, direction))
    return ops.select(pick, x, y)


def _max(x, y):
    return _complex_order(x, y, "GT") if dtypes.is_complex(x.dtype) else ops.maximum(x, y)


def _min(x, y):
    return _complex_order(x, y, "LT") if dtypes.is_complex(x.dtype) else ops.minimum(x, y)


def _compare(direction):
    return lambda x, y: ops.compare(x, y, direction)


_BINARY = [
    ("add", NUM, ops.add, "x + y", "``stablehlo.add``"),
    ("sub", NUM, ops.subtract, "x - y", "``stablehlo.subtract``"),
    ("div", NUM, ops.divide, "x / y (rounding toward zero for integers)", "``stablehlo.divide``"),
    ("rem", ("integer", "floating"), ops.remainder, "the remainder with x's sign (C fmod)", "``stablehlo.remainder``"),
    ("max", ANY, _max, "the larger (NaN-propagating; complex: lexicographic)",
     "``stablehlo.maximum`` (complex: compares and a select)"),
    ("min", ANY, _min, "the smaller (NaN-propagating; complex: lexicographic)",
     "``stablehlo.minimum`` (complex: compares and a select)"),
    ("atan2", INEXACT, ops.atan2, "atan(x / y) in the right quadrant", "``stablehlo.atan2``"),
    ("complex", ("float32", "float64"), ops.complex, "x + y i", "``stablehlo.complex``"),
    ("bitwise_and", BOOL_OR_INT, ops.and_, "bitwise (logical for bool) and", "``stablehlo.and``"),
    ("bitwise_or", BOOL_OR_INT, ops.or_, "bitwise (logical for bool) or", "``stablehlo.or``"),
    ("bitwise_xor", BOOL_OR_INT, ops.xor, "bitwise (logical for bool) xor", "``stablehlo.xor``"),
    ("shift_left", INT, ops.shift_left, "x << y (0 once y >= the bit width)", "``stablehlo.shift_left``"),
    ("shift_right_arithmetic", INT, ops.shift_right_arithmetic, "x >> y, sign-filling",
     "``stablehlo.shift_right_arithmetic``"),
    ("shift_right_logical", INT, ops.shift_right_logical, "x >> y, zero-filling", "``stablehlo.shift_right_logical``"),
    ("eq", ANY, _compare("EQ"), "x == y", "``stablehlo.compare EQ``"),
    ("ne", ANY, _compare("NE"), "x != y", "``stablehlo.compare NE``"),
    ("lt", ORDERED, _compare("LT"), "x < y", "``stablehlo.compare LT``"),
    ("le", ORDERED, _compare("LE"), "x <= y", "``stablehlo.compare LE``"),
    ("gt", ORDERED, _compare("GT"), "x > y", "``stablehlo.compare GT``"),
    ("ge", ORDERED, _compare("GE"), "x >= y", "``stablehlo.compare GE``"),
]

_binary_defined = {row[0]: _binary(*row) for row in _BINARY}
(add, sub, div, rem, max, min, atan2, complex, bitwise_and, bitwise_or, bitwise_xor, shift_left,
 shift_right_arithmetic, shift_right_logical, eq, ne, lt, le, gt, ge) = (_binary_defined[row[0]] for row in _BINARY)



def nextafter(x1, x2):
    """jax.lax.nextafter: the next representable number after x1 in the direction of x2; emits
    ``chlo.next_after``.

    Args:
      x1, x2: arrays of one floating dtype (0-d or of one rank; size-1 dims broadcast).
    Returns:
      An array of the broadcast shape.
    Example:
      >>> y = hf.lax.nextafter(x, np.float32(np.inf))
    """
    return ops.next_after(*operands("nextafter", (x1, x2), FLOAT))


def mul(x, y, *, out_dtype=None):
    """jax.lax.mul: x * y; emits ``stablehlo.multiply`` (after a ``convert`` of both operands
    with ``out_dtype``).

    Args:
      x, y: arrays of one numeric dtype (any numeric dtypes with ``out_dtype``), 0-d or of one rank.
      out_dtype: None or the dtype to multiply in and return.
    Returns:
      The product, of the broadcast shape.
    Example:
      >>> y = hf.lax.mul(a, b)
    """
    xs = operands("mul", (x, y), NUM, same_dtype=out_dtype is None)
    if out_dtype is not None:
        out_dtype = dtypes.canonical(out_dtype)
        xs = [t if t.dtype == out_dtype else ops.convert(t, out_dtype) for t in xs]
    return ops.multiply(*xs)


def pow(x, y):
    """jax.lax.pow: x ** y; emits ``stablehlo.power`` (an integer y is converted to x's dtype first).

    Args:
      x: a floating or complex array.
      y: an integer array, or one of x's dtype.
    Returns:
      An array of x's dtype and the broadcast shape.
    Example:
      >>> y = hf.lax.pow(x, 2.5)
    """
    a, b = operands("pow", (x, y), [INEXACT, NUM], same_dtype=False)
    if a.dtype != b.dtype:
        if not dtypes.is_integer(b.dtype):
            raise TypeError("hloforge.lax.pow: the first argument to pow must have an inexact dtype (float or "
                            "complex), and the second argument must have an inexact or integer dtype, and two "
                            f"inexact dtypes must match, but got {a.dtype.name} and {b.dtype.name} respectively.")
        b = ops.convert(b, a.dtype)
    return ops.power(a, b)


def mulhi(x, y, /):
    """jax.lax.mulhi: the high half of the double-width product of two integers, as jax computes
    it: a widened ``multiply`` and a shift for up to 32 bits, four 32-bit partial products for 64.

    Args:
      x, y: arrays of one integer dtype.
    Returns:
      An array of that dtype.
    Example:
      >>> hi = hf.lax.mulhi(a, b)
    """
    x, y = operands("mulhi", (x, y), INT)
    dtype = x.dtype
    bits = dtype.itemsize * 8
    signed = dtypes.is_signed_int(dtype)
    if bits < 64:
        wide = np.dtype(f"{'i' if signed else 'u'}{2 * dtype.itemsize}")
        prod = ops.multiply(ops.convert(x, wide), ops.convert(y, wide))
        shift = ops.shift_right_arithmetic if signed else ops.shift_right_logical
        return ops.convert(shift(prod, full_of(prod, bits)), dtype)
    u64 = np.dtype(np.uint64)
    xu, yu = ops.convert(x, u64), ops.convert(y, u64)
    mask, s32 = full_of(xu, 0xFFFFFFFF), full_of(xu, 32)
    x_lo, x_hi = ops.and_(xu, mask), ops.shift_right_logical(xu, s32)
    y_lo, y_hi = ops.and_(yu, mask), ops.shift_right_logical(yu, s32)
    lo_lo, lo_hi = ops.multiply(x_lo, y_lo), ops.multiply(x_lo, y_hi)
    hi_lo, hi_hi = ops.multiply(x_hi, y_lo), ops.multiply(x_hi, y_hi)
    cross = ops.add(ops.add(ops.and_(lo_hi, mask), ops.and_(hi_lo, mask)), ops.shift_right_logical(lo_lo, s32))
    high = ops.add(hi_hi, ops.add(ops.shift_right_logical(lo_hi, s32),
                                  ops.add(ops.shift_right_logical(hi_lo, s32), ops.shift_right_logical(cross, s32))))
    high = ops.convert(high, dtype)
    if signed:  # signed high half = unsigned one - (x < 0 ? y : 0) - (y < 0 ? x : 0)
        x_sign = ops.shift_right_arithmetic(x, full_of(x, 63))
        y_sign = ops.shift_right_arithmetic(y, full_of(y, 63))
        high = ops.add(high, ops.add(ops.multiply(x_sign, y), ops.multiply(y_sign, x)))
    return high


# ---------------------------------------------------------------- clamp, select_n

def clamp(min, x, max):
    """jax.lax.clamp: ``min(max(x, min), max)``; emits ``stablehlo.clamp`` (bool: ``maximum`` and
    ``minimum``). Complex operands are refused: XLA orders them by their real parts alone there,
    which neither the StableHLO spec nor jax.lax.max's lexicographic order says.

    Args:
      min, max: bounds of x's dtype, 0-d or of x's shape.
      x: an integer, floating or bool array.
    Returns:
      An array of x's shape and dtype.
    Example:
      >>> y = hf.lax.clamp(np.float32(0), x, np.float32(1))
    """
    lo, t, hi = (as_operand("clamp", v, i) for i, v in enumerate((min, x, max)))
    if not (lo.dtype == t.dtype == hi.dtype):
        raise TypeError(f"hloforge.lax.clamp requires arguments to have the same dtypes, got {lo.dtype.name}, "
                        f"{t.dtype.name}, {hi.dtype.name}.")
    if dtypes.is_complex(t.dtype):
        raise TypeError(f"hloforge.lax.clamp does not accept dtype {t.dtype.name} (XLA clamps complex numbers by "
                        "their real parts alone); clamp the real and imaginary parts instead")
    for what, bound in (("min", lo), ("max", hi)):
        if bound.shape not in ((), t.shape):
            raise TypeError(f"hloforge.lax.clamp requires {what}.shape == operand.shape or {what}.shape == (), "
                            f"got {what}.shape={bound.shape}, operand.shape={t.shape}.")
    if dtypes.is_bool(t.dtype):
        return ops.minimum(ops.maximum(t, broadcast_to(lo, t.shape)), broadcast_to(hi, t.shape))
    return ops.clamp(lo, t, hi)


def select_n(which, *cases):
    """jax.lax.select_n: ``cases[which]`` elementwise; emits a balanced tree of ``stablehlo.select``
    over ``compare LT`` of ``which`` (a bool ``which`` picks ``cases[1]`` where True). Out-of-range
    indices pick the first or last case, as jax's lowering does.

    Args:
      which: a bool (at most two cases) or integer array, 0-d or of the cases' shape.
      *cases: arrays of one shape and dtype.
    Returns:
      An array of the cases' shape and dtype.
    Example:
      >>> y = hf.lax.select_n(i, a, b, c)
    """
    if not cases:
        raise ValueError("hloforge.lax.select_n() must have at least one case")
    w = as_operand("select_n", which)
    cs = [as_operand("select_n", c, i + 1) for i, c in enumerate(cases)]
    if any(c.shape != cs[0].shape for c in cs[1:]):
        raise TypeError(f"hloforge.lax.select_n cases must have the same shapes, got "
                        f"[{', '.join(str(c.shape) for c in cs)}].")
    check_same_dtypes("select_n", cs)
    if not (dtypes.is_bool(w.dtype) or dtypes.is_integer(w.dtype)):
        raise TypeError(f"hloforge.lax.select_n `which` must be boolean or integer type, got {w.dtype.name}.")
    if dtypes.is_bool(w.dtype) and len(cs) > 2:
        raise TypeError("hloforge.lax.select_n with boolean `which` cannot have > 2 cases.")
    if w.shape not in ((), cs[0].shape):
        raise TypeError(f"hloforge.lax.select_n `which` must be scalar or have the same shape as cases, got "
                        f"`which` shape {w.shape} but case shape {cs[0].shape}.")
    if len(cs) == 1:
        return cs[0]
    if dtypes.is_bool(w.dtype):
        return ops.select(w, cs[1], cs[0])

    def tree(offset, part):
        if len(part) == 1:
            return part[0]
        mid = len(part) // 2
        pred = ops.compare(w, full_of(w, offset + mid), "LT")
        return ops.select(pred, tree(offset, part[:mid]), tree(offset + mid, part[mid:]))
    return tree(0, cs)


__all__ = [
    "RoundingMethod", "neg", "sign", "floor", "ceil", "is_finite", "exp", "exp2", "log", "log1p", "expm1", "tanh",
    "logistic", "sin", "cos", "tan", "sqrt", "rsqrt", "cbrt", "asin", "acos", "atan", "sinh", "cosh", "asinh",
    "acosh", "atanh", "erf", "abs", "bitwise_not", "real", "imag", "conj", "square", "round", "integer_pow",
    "reciprocal", "convert_element_type", "add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2",
    "complex", "nextafter", "bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right_arithmetic",
    "shift_right_logical", "eq", "ne", "lt", "le", "gt", "ge", "mulhi", "clamp", "select_n",
]
