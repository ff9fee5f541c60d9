"""Elementwise unary and binary StableHLO ops, table-driven: each row is one registry entry
(builder, rule, evaluate). Operands must already agree in shape and dtype (StableHLO semantics);
:mod:`hloforge.frontend.numpy` adds broadcasting and promotion on top."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import dtypes
from hloforge.frontend.attributes import constant_array
from hloforge.frontend.ops import _evaluate as ev
from hloforge.frontend.ops._common import (
    ALL, BOOL, COMPLEX, FLOAT, INT, NUMERIC, SINT, UINT, category, check_dtype, operand,
    same_shape_and_dtype)
from hloforge.frontend.registry import bind, register
from hloforge.frontend.tracing import Tensor



# the result dtype of an elementwise op from its first operand's dtype
def SAME(dtype):
    return dtype


def REAL(dtype):
    return dtypes.real_dtype(dtype)


def BOOLEAN(dtype):
    return np.dtype(bool)


def COMPLEX_OF(dtype):
    return dtypes.complex_dtype(dtype)


_RESULT_WORDS = {SAME: "tensor of the operand's shape and dtype", REAL: "real tensor of the operand's precision",
                 BOOLEAN: "bool tensor of the operand's shape", COMPLEX_OF: "complex tensor of the operands' precision"}


def _elementwise_evaluate(fn, kinds: str, result, exact_complex: bool):
    """``evaluate`` for an elementwise op computing ``fn`` with numpy (see ``_evaluate``)."""
    def evaluate(*xs):
        if ev.kind(xs[0]) not in kinds or not ev.safe_inputs(xs, exact_complex):
            return None
        with np.errstate(all="ignore"):
            out = fn(*(ev.wide(x) for x in xs))
        return None if out is None else ev.finish(out, result(xs[0].dtype), nan_ok=exact_complex)
    return evaluate


def _docstring(pyname, opname, summary, args, out):
    return f"""{summary} elementwise; emits ``{opname}``.

    Args:
      {args}
      loc: source location (default: the caller's line).

    Returns:
      A {out}.

    Example:
      >>> y = ops.{pyname}({'x' if 'x:' in args else 'x, y'})
    """


def _define(pyname, opname, arity, allowed, summary, fn, kinds, result, exact_complex, check=None):
    def rule(*xs):
        same_shape_and_dtype(pyname, *xs)
        check_dtype(pyname, xs[0], allowed)
        if check is not None:
            check(pyname, *xs)
        return xs[0].shape, result(xs[0].dtype)

    if arity == 1:
        def build(x, *, loc=None):
            return bind(opname, [operand(pyname, x)], loc=loc)
        args = f"x: Tensor of {' or '.join(allowed)} dtype."
    else:
        def build(lhs, rhs, *, loc=None):
            lhs, rhs = binary_operands(pyname, lhs, rhs)
            if opname in _DIVISIONS:
                _no_constant_integer_zero(pyname, rhs)
            return bind(opname, [lhs, rhs], loc=loc)
        args = (f"lhs, rhs: Tensors of one shape and one {' or '.join(allowed)} dtype (a Python\n"
                "        scalar or array is turned into a constant of the other operand's dtype).")
    out = _RESULT_WORDS[result]
    build.__name__ = build.__qualname__ = pyname
    build.__doc__ = _docstring(pyname, opname, summary, args, out)
    build.__module__ = __name__
    traits = {"elementwise", "unary" if arity == 1 else "binary", *_TRAITS.get(opname, ())}
    evaluate = None if fn is None else _elementwise_evaluate(fn, kinds, result, exact_complex)
    return register(opname, rule=rule, evaluate=evaluate, traits=traits)(build)


def binary_operands(op, lhs, rhs):
    """Tensors pass through; a non-Tensor side becomes a constant of the Tensor side's dtype."""
    if not isinstance(lhs, Tensor) and isinstance(rhs, Tensor):
        lhs = operand(op, lhs, "lhs", dtype=rhs.dtype)
    if not isinstance(rhs, Tensor) and isinstance(lhs, Tensor):
        rhs = operand(op, rhs, "rhs", dtype=lhs.dtype)
    return operand(op, lhs, "lhs"), operand(op, rhs, "rhs")


_DIVISIONS = ("stablehlo.divide", "stablehlo.remainder")
# traits beyond elementwise and unary/binary (registry.TRAITS)
_TRAITS = {"stablehlo.add": ("zero_identity", "linear"), "stablehlo.or": ("zero_identity",),
           "stablehlo.xor": ("zero_identity",), "stablehlo.multiply": ("zero_absorbing", "bilinear"),
           "stablehlo.and": ("zero_absorbing",), "stablehlo.subtract": ("linear",), "stablehlo.negate": ("linear",),
           "stablehlo.real": ("linear",), "stablehlo.imag": ("linear",), "stablehlo.complex": ("linear",)}


class IntegerDivisionByZero(ZeroDivisionError, ValueError):
    """An integer divide/remainder whose divisor is a constant holding 0 (a ValueError too)."""


def _no_constant_integer_zero(op, rhs):
    """XLA's constant folder kills the process (SIGFPE) on an integer division by a constant 0."""
    if category(rhs.dtype) not in INT:
        return
    owner = rhs.value.owner
    if getattr(owner, "name", None) != "stablehlo.constant":
        return
    value = constant_array(owner)
    if value is not None and (value[0] == 0).any():
        raise IntegerDivisionByZero(f"{op}: integer division by a constant zero (its result is "
                                    "implementation-defined); divisor values include 0")


# ---------------------------------------------------------------- numpy semantics

def _round_afz(x):
    r = np.trunc(x)
    return np.copysign(r + np.where(np.abs(x - r) >= 0.5, np.sign(x), 0).astype(x.dtype), x)  # (-0.4 -> -0)


def _sign(x):
    if x.dtype.kind != "f":
        return np.sign(x)
    if ((x == 0) & np.signbit(x)).any():
        return None  # sign(-0): -0 in XLA's kernels and evaluator, +0 in the StableHLO folders XLA runs first
    return np.where(x == 0, x, np.sign(x)).astype(x.dtype)


def _not(x):
    return np.logical_not(x) if x.dtype == np.bool_ else np.invert(x)


def _real(x):
    return x.real if x.dtype.kind == "c" else x


def _imag(x):
    return x.imag if x.dtype.kind == "c" else np.zeros_like(x)


def _bool_or_int(bool_fn, int_fn):
    return lambda a, b: bool_fn(a, b) if a.dtype == np.bool_ else int_fn(a, b)


def _int_or_float(int_fn, float_fn):
    return lambda a, b: int_fn(a, b) if a.dtype.kind in "iu" else float_fn(a, b)


def _float_divide(a, b):
    """a / b where b is a power of two with a normal reciprocal, else None: XLA's algebraic
    simplifier computes x / c as x * (1 / c) once c is a constant, which rounds differently (or
    flushes) for any other c."""
    m, _ = np.frexp(np.abs(b))
    if not ((m == 0.5) & (np.abs(b) <= 1 / ev.smallest_normal(b.dtype))).all():
        return None
    return np.divide(a, b)


def _minmax(fn):
    def run(a, b):
        if a.dtype.kind == "f" and ((a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))).any():
            return None  # max(-0, +0) is not pinned down
        return fn(a, b)
    return run


def _shift(direction):
    def run(a, b):
        bits = a.dtype.itemsize * 8
        count = b.astype(np.uint64) if b.dtype.kind == "i" else b
        big = count >= bits
        small = np.where(big, 0, count).astype(a.dtype)
        if direction == "left":
            return np.where(big, 0, np.left_shift(a, small)).astype(a.dtype)
        if direction == "logical":
            u = a.view(np.dtype(f"u{a.dtype.itemsize}"))
            out = np.where(big, 0, np.right_shift(u, small.view(u.dtype))).astype(u.dtype)
            return out.view(a.dtype)
        s = a.view(np.dtype(f"i{a.dtype.itemsize}"))  # (the bits as a signed number)
        fill = np.where(s < 0, -1, 0).astype(s.dtype)
        return np.where(big, fill, np.right_shift(s, small.view(s.dtype))).astype(s.dtype).view(a.dtype)
    return run


def _complex(a, b):
    out = np.empty(a.shape, dtypes.complex_dtype(a.dtype))
    out.real, out.imag = a, b
    return out


def _popcnt(x):
    return np.bitwise_count(x.view(np.dtype(f"u{x.dtype.itemsize}"))).astype(x.dtype)


def _clz(x):
    if x.dtype.kind == "i" and x.dtype.itemsize < 8 and (x < 0).any():
        return None  # XLA's constant folder counts a narrow negative int's zeros in 64 bits (-56 for int8 -1)
    bits = x.dtype.itemsize * 8
    u = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    length = np.zeros(u.shape, np.int64)  # the bit length of each element
    for shift in (32, 16, 8, 4, 2, 1):
        big = u >= (np.uint64(1) << np.uint64(shift))
        length = length + np.where(big, shift, 0)
        u = np.where(big, u >> np.uint64(shift), u)
    length = length + (u > 0)
    return (bits - length).astype(x.dtype)

# ---------------------------------------------------------------- the tables

# pyname, StableHLO op, operand dtypes, summary, numpy function (None: not evaluated),
# operand kinds it evaluates, result dtype, exact (bits only move: complex special values and NaNs
# pass). Library functions (exp, log, trigonometric, pow, erf, ...) are not evaluated: XLA's kernels
# and XLA's constant folder round them differently from numpy and from each other (_evaluate.py).
UNARY = [
    ("neg", "stablehlo.negate", (SINT, UINT, FLOAT, COMPLEX), "Negation", np.negative, "iufc", SAME, True),
    # (complex abs is a hypot, which XLA's folder rounds differently)
    ("abs", "stablehlo.abs", (SINT, FLOAT, COMPLEX), "Absolute value", np.abs, "if", REAL, False),
    ("exp", "stablehlo.exponential", (FLOAT, COMPLEX), "e**x", None, "fc", SAME, False),
    ("log", "stablehlo.log", (FLOAT, COMPLEX), "Natural logarithm", None, "fc", SAME, False),
    ("log1p", "stablehlo.log_plus_one", (FLOAT, COMPLEX), "log(1 + x)", None, "fc", SAME, False),
    ("expm1", "stablehlo.exponential_minus_one", (FLOAT, COMPLEX), "e**x - 1", None, "fc", SAME, False),
    ("sin", "stablehlo.sine", (FLOAT, COMPLEX), "Sine", None, "fc", SAME, False),
    ("cos", "stablehlo.cosine", (FLOAT, COMPLEX), "Cosine", None, "fc", SAME, False),
    ("tan", "stablehlo.tan", (FLOAT, COMPLEX), "Tangent", None, "fc", SAME, False),
    ("tanh", "stablehlo.tanh", (FLOAT, COMPLEX), "Hyperbolic tangent", None, "fc", SAME, False),
    # real sqrt is correctly rounded everywhere; complex sqrt is a library function
    ("sqrt", "stablehlo.sqrt", (FLOAT, COMPLEX), "Square root", np.sqrt, "f", SAME, False),
    ("rsqrt", "stablehlo.rsqrt", (FLOAT, COMPLEX), "1 / sqrt(x)", None, "f", SAME, False),
    # The spec also allows complex cbrt, which XLA does not compile.
    ("cbrt", "stablehlo.cbrt", (FLOAT,), "Cube root", None, "f", SAME, False),
    ("logistic", "stablehlo.logistic", (FLOAT, COMPLEX), "1 / (1 + e**-x)", None, "f", SAME, False),
    ("floor", "stablehlo.floor", (FLOAT,), "Floor", np.floor, "f", SAME, False),
    ("ceil", "stablehlo.ceil", (FLOAT,), "Ceiling", np.ceil, "f", SAME, False),
    ("round", "stablehlo.round_nearest_even", (FLOAT,), "Round half to even (numpy's rounding)", np.rint,
     "f", SAME, False),
    ("round_nearest_afz", "stablehlo.round_nearest_afz", (FLOAT,), "Round half away from zero", _round_afz,
     "f", SAME, False),
    ("sign", "stablehlo.sign", (SINT, FLOAT, COMPLEX), "Sign (-1, 0, 1; x/|x| for complex)", _sign, "if",
     SAME, False),
    ("not_", "stablehlo.not", (BOOL, SINT, UINT), "Logical (bool) or bitwise (integer) not", _not, "biu",
     SAME, True),
    ("is_finite", "stablehlo.is_finite", (FLOAT,), "True where x is neither infinite nor NaN", np.isfinite,
     "f", BOOLEAN, False),
    ("real", "stablehlo.real", (FLOAT, COMPLEX), "The real part", _real, "fc", REAL, True),
    ("imag", "stablehlo.imag", (FLOAT, COMPLEX), "The imaginary part", _imag, "fc", REAL, True),
    # StableHLO has no erf op; XLA expands CHLO.
    ("erf", "chlo.erf", (FLOAT,), "The error function", None, "f", SAME, False),
    # CHLO's special functions (XLA expands them; their approximations are the backend's: not evaluated)
    ("erf_inv", "chlo.erf_inv", (FLOAT,), "The inverse error function", None, "f", SAME, False),
    ("lgamma", "chlo.lgamma", (FLOAT,), "log|Gamma(x)|", None, "f", SAME, False),
    ("digamma", "chlo.digamma", (FLOAT,), "The digamma function (Gamma'/Gamma)", None, "f", SAME, False),
    ("popcnt", "stablehlo.popcnt", INT, "The number of set bits", _popcnt, "iu", SAME, True),
    ("count_leading_zeros", "stablehlo.count_leading_zeros", INT, "The number of leading zero bits", _clz,
     "iu", SAME, True),
]

BINARY = [
    # bool add is logical or in the spec (and XLA's folder) but xor in XLA's CPU kernels: not evaluated
    # for bool; complex add and subtract are two IEEE sums, complex multiply and divide are the backend's
    ("add", "stablehlo.add", ALL, "Addition (logical or for bool)", np.add, "iufc", SAME, False),
    ("subtract", "stablehlo.subtract", NUMERIC, "Subtraction", np.subtract, "iufc", SAME, False),
    ("multiply", "stablehlo.multiply", ALL, "Multiplication (logical and for bool)",
     _bool_or_int(np.logical_and, np.multiply), "biuf", SAME, False),
    ("divide", "stablehlo.divide", NUMERIC, "Division (truncating for integers)",
     _int_or_float(ev.trunc_div, _float_divide), "iuf", SAME, False),
    ("remainder", "stablehlo.remainder", (SINT, UINT, FLOAT), "Remainder with the dividend's sign (C fmod)",
     _int_or_float(ev.trunc_rem, np.fmod), "iuf", SAME, False),
    ("power", "stablehlo.power", NUMERIC, "lhs ** rhs", None, "f", SAME, False),
    ("maximum", "stablehlo.maximum", (BOOL, SINT, UINT, FLOAT), "Maximum (NaN-propagating)",
     _minmax(np.maximum), "biuf", SAME, False),
    ("minimum", "stablehlo.minimum", (BOOL, SINT, UINT, FLOAT), "Minimum (NaN-propagating)",
     _minmax(np.minimum), "biuf", SAME, False),
    ("atan2", "stablehlo.atan2", (FLOAT, COMPLEX), "atan2(lhs, rhs)", None, "f", SAME, False),
    ("and_", "stablehlo.and", (BOOL, SINT, UINT), "Logical/bitwise and", np.bitwise_and, "biu", SAME, True),
    ("or_", "stablehlo.or", (BOOL, SINT, UINT), "Logical/bitwise or", np.bitwise_or, "biu", SAME, True),
    ("xor", "stablehlo.xor", (BOOL, SINT, UINT), "Logical/bitwise xor", np.bitwise_xor, "biu", SAME, True),
    ("shift_left", "stablehlo.shift_left", INT, "Bit shift left", _shift("left"), "iu", SAME, True),
    ("shift_right_arithmetic", "stablehlo.shift_right_arithmetic", INT, "Arithmetic bit shift right",
     _shift("arithmetic"), "iu", SAME, True),
    ("shift_right_logical", "stablehlo.shift_right_logical", INT, "Logical bit shift right",
     _shift("logical"), "iu", SAME, True),
    ("complex", "stablehlo.complex", ALL, "real + 1j * imag", _complex, "f", COMPLEX_OF, True),
]


def _complex_check(op, re, im):
    if re.dtype not in (np.float32, np.float64):
        raise TypeError(f"complex: operand dtype must be float32 or float64, got {re.dtype}")


_CHECKS = {"complex": _complex_check}

def define_rows(unary, binary, checks=None) -> dict:
    """Register every row of a unary and a binary table; pyname -> builder."""
    out = {row[0]: _define(row[0], row[1], 1, *row[2:]) for row in unary}
    out.update({row[0]: _define(row[0], row[1], 2, *row[2:], check=(checks or {}).get(row[0])) for row in binary})
    return out


_defined = define_rows(UNARY, BINARY, _CHECKS)

(neg, abs, exp, log, log1p, expm1, sin, cos, tan, tanh, sqrt, rsqrt, cbrt, logistic, floor, ceil, round,
 round_nearest_afz, sign, not_, is_finite, real, imag, erf, erf_inv, lgamma, digamma, popcnt,
 count_leading_zeros) = (
    _defined[r[0]] for r in UNARY)
(add, subtract, multiply, divide, remainder, power, maximum, minimum, atan2, and_, or_, xor, shift_left,
 shift_right_arithmetic, shift_right_logical, complex) = (_defined[r[0]] for r in BINARY)
