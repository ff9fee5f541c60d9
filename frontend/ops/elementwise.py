"""Elementwise StableHLO ops: unary math, binary arithmetic, compare, select, clamp, convert,
complex/real/imag. Operands must already agree in shape and dtype (StableHLO semantics);
:mod:`hloforge.numpy` adds broadcasting and promotion on top."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import dtypes
from hloforge.frontend.context import ir, parse_attr
from hloforge.frontend.ops._common import (
    ALL, BOOL, COMPLEX, FLOAT, INT, NUMERIC, SINT, UINT, builder, category, check_dtype, operand,
    same_shape_and_dtype)
from hloforge.frontend.registry import register
from hloforge.frontend.tracing import Tensor


def _emit_same(name, operands, shape, dtype, loc, attributes=None) -> Tensor:
    b = builder()
    op = b.emit(name, operands, [(shape, dtype)], attributes, loc=loc)
    return Tensor(op.result, shape, dtype, b)


# ---------------------------------------------------------------- unary

def _unary(pyname, opname, allowed, summary, real_result=False, example="ops.{py}(x)"):
    def rule(x):
        check_dtype(pyname, x, allowed)
        return x.shape, (dtypes.real_dtype(x.dtype) if real_result else x.dtype)

    def build(x, *, loc=None):
        x = operand(pyname, x)
        shape, dtype = rule(x)
        return _emit_same(opname, [x], shape, dtype, loc)

    build.__name__ = build.__qualname__ = pyname
    kinds = " or ".join(allowed)
    out = "real tensor of the operand's precision" if real_result else "tensor of the operand's shape and dtype"
    build.__doc__ = f"""{summary} elementwise; emits ``{opname}``.

    Args:
      x: Tensor of {kinds} dtype.
      loc: source location (default: the caller's line).

    Returns:
      A {out}.

    Example:
      >>> y = {example.format(py=pyname)}
    """
    build.__module__ = __name__
    return register(opname, rule)(build)


neg = _unary("neg", "stablehlo.negate", (SINT, UINT, FLOAT, COMPLEX), "Negation")
abs = _unary("abs", "stablehlo.abs", (SINT, FLOAT, COMPLEX), "Absolute value", real_result=True)
exp = _unary("exp", "stablehlo.exponential", (FLOAT, COMPLEX), "e**x")
log = _unary("log", "stablehlo.log", (FLOAT, COMPLEX), "Natural logarithm")
log1p = _unary("log1p", "stablehlo.log_plus_one", (FLOAT, COMPLEX), "log(1 + x)")
expm1 = _unary("expm1", "stablehlo.exponential_minus_one", (FLOAT, COMPLEX), "e**x - 1")
sin = _unary("sin", "stablehlo.sine", (FLOAT, COMPLEX), "Sine")
cos = _unary("cos", "stablehlo.cosine", (FLOAT, COMPLEX), "Cosine")
tan = _unary("tan", "stablehlo.tan", (FLOAT, COMPLEX), "Tangent")
tanh = _unary("tanh", "stablehlo.tanh", (FLOAT, COMPLEX), "Hyperbolic tangent")
sqrt = _unary("sqrt", "stablehlo.sqrt", (FLOAT, COMPLEX), "Square root")
rsqrt = _unary("rsqrt", "stablehlo.rsqrt", (FLOAT, COMPLEX), "1 / sqrt(x)")
# The spec also allows complex cbrt, which XLA does not compile.
cbrt = _unary("cbrt", "stablehlo.cbrt", (FLOAT,), "Cube root")
logistic = _unary("logistic", "stablehlo.logistic", (FLOAT, COMPLEX), "1 / (1 + e**-x)")
floor = _unary("floor", "stablehlo.floor", (FLOAT,), "Floor")
ceil = _unary("ceil", "stablehlo.ceil", (FLOAT,), "Ceiling")
round = _unary("round", "stablehlo.round_nearest_even", (FLOAT,),
               "Round half to even (numpy's rounding)")
round_nearest_afz = _unary("round_nearest_afz", "stablehlo.round_nearest_afz", (FLOAT,),
                           "Round half away from zero")
sign = _unary("sign", "stablehlo.sign", (SINT, FLOAT, COMPLEX), "Sign (-1, 0, 1; x/|x| for complex)")
not_ = _unary("not_", "stablehlo.not", (BOOL, SINT, UINT), "Logical (bool) or bitwise (integer) not")


def _is_finite_rule(x):
    check_dtype("is_finite", x, (FLOAT,))
    return x.shape, np.dtype(bool)


@register("stablehlo.is_finite", _is_finite_rule)
def is_finite(x, *, loc=None) -> Tensor:
    """True where ``x`` is neither infinite nor NaN; emits ``stablehlo.is_finite``.

    Args:
      x: float Tensor.
    Returns:
      bool Tensor of x's shape.
    Example:
      >>> ok = ops.is_finite(x)
    """
    x = operand("is_finite", x)
    shape, dtype = _is_finite_rule(x)
    return _emit_same("stablehlo.is_finite", [x], shape, dtype, loc)


# ---------------------------------------------------------------- binary

def _binary(pyname, opname, allowed, summary, check=None):
    def rule(lhs, rhs):
        same_shape_and_dtype(pyname, lhs, rhs)
        check_dtype(pyname, lhs, allowed)
        if check is not None:
            check(pyname, lhs, rhs)
        return lhs.shape, lhs.dtype

    def build(lhs, rhs, *, loc=None):
        lhs, rhs = _binary_operands(pyname, lhs, rhs)
        shape, dtype = rule(lhs, rhs)
        return _emit_same(opname, [lhs, rhs], shape, dtype, loc)

    build.__name__ = build.__qualname__ = pyname
    build.__doc__ = f"""{summary} elementwise; emits ``{opname}``.

    Args:
      lhs, rhs: Tensors of one shape and one {' or '.join(allowed)} dtype (a Python
        scalar or array is turned into a constant of the other operand's dtype).
      loc: source location (default: the caller's line).

    Returns:
      A tensor of the operands' shape and dtype.

    Example:
      >>> z = ops.{pyname}(x, y)
    """
    build.__module__ = __name__
    return register(opname, rule)(build)


def _binary_operands(op, lhs, rhs):
    """Tensors pass through; a non-Tensor side becomes a constant of the Tensor side's dtype."""
    if not isinstance(lhs, Tensor) and isinstance(rhs, Tensor):
        lhs = operand(op, lhs, "lhs", dtype=rhs.dtype)
    if not isinstance(rhs, Tensor) and isinstance(lhs, Tensor):
        rhs = operand(op, rhs, "rhs", dtype=lhs.dtype)
    return operand(op, lhs, "lhs"), operand(op, rhs, "rhs")


def _no_constant_integer_zero(op, lhs, rhs):
    """XLA's constant folder kills the process (SIGFPE) on an integer division by a constant 0."""
    if category(rhs.dtype) not in INT:
        return
    owner = rhs.value.owner
    if getattr(owner, "name", None) != "stablehlo.constant":
        return
    attr = ir.DenseIntElementsAttr(owner.attributes["value"])
    values = [attr.get_splat_value().value] if attr.is_splat else list(attr)
    if 0 in values:
        raise ZeroDivisionError(f"{op}: integer division by a constant zero (XLA aborts on it); "
                                "divisor values include 0")


add = _binary("add", "stablehlo.add", ALL, "Addition (logical or for bool)")
subtract = _binary("subtract", "stablehlo.subtract", NUMERIC, "Subtraction")
multiply = _binary("multiply", "stablehlo.multiply", ALL, "Multiplication (logical and for bool)")
divide = _binary("divide", "stablehlo.divide", NUMERIC, "Division (truncating for integers)",
                 _no_constant_integer_zero)
remainder = _binary("remainder", "stablehlo.remainder", (SINT, UINT, FLOAT),
                    "Remainder with the dividend's sign (C fmod)", _no_constant_integer_zero)
power = _binary("power", "stablehlo.power", NUMERIC, "lhs ** rhs")
maximum = _binary("maximum", "stablehlo.maximum", (BOOL, SINT, UINT, FLOAT), "Maximum (NaN-propagating)")
minimum = _binary("minimum", "stablehlo.minimum", (BOOL, SINT, UINT, FLOAT), "Minimum (NaN-propagating)")
atan2 = _binary("atan2", "stablehlo.atan2", (FLOAT, COMPLEX), "atan2(lhs, rhs)")
and_ = _binary("and_", "stablehlo.and", (BOOL, SINT, UINT), "Logical/bitwise and")
or_ = _binary("or_", "stablehlo.or", (BOOL, SINT, UINT), "Logical/bitwise or")
xor = _binary("xor", "stablehlo.xor", (BOOL, SINT, UINT), "Logical/bitwise xor")
shift_left = _binary("shift_left", "stablehlo.shift_left", INT, "Bit shift left")
shift_right_arithmetic = _binary("shift_right_arithmetic", "stablehlo.shift_right_arithmetic", INT,
                                 "Arithmetic bit shift right")
shift_right_logical = _binary("shift_right_logical", "stablehlo.shift_right_logical", INT,
                              "Logical bit shift right")

# ---------------------------------------------------------------- compare

DIRECTIONS = ("EQ", "NE", "GE", "GT", "LE", "LT")
_COMPARE_TYPE = {BOOL: "UNSIGNED", SINT: "SIGNED", UINT: "UNSIGNED", FLOAT: "FLOAT", COMPLEX: "FLOAT"}


def _compare_rule(lhs, rhs, direction):
    same_shape_and_dtype("compare", lhs, rhs)
    if direction not in DIRECTIONS:
        raise ValueError(f"compare: direction {direction!r} is not one of {', '.join(DIRECTIONS)}")
    if category(lhs.dtype) == COMPLEX and direction not in ("EQ", "NE"):
        raise TypeError(f"compare: complex operands support only EQ and NE, got {direction}")
    return lhs.shape, np.dtype(bool)


@register("stablehlo.compare", _compare_rule)
def compare(lhs, rhs, direction: str, *, loc=None) -> Tensor:
    """Elementwise comparison; emits ``stablehlo.compare``.

    Args:
      lhs, rhs: Tensors of one shape and dtype.
      direction: one of "EQ", "NE", "GE", "GT", "LE", "LT". The comparison type
        (FLOAT, SIGNED, UNSIGNED) follows the dtype.
    Returns:
      A bool Tensor of the operands' shape.
    Example:
      >>> mask = ops.compare(x, y, "LT")
    """
    lhs, rhs = _binary_operands("compare", lhs, rhs)
    if isinstance(direction, str):
        direction = direction.upper()
    shape, dtype = _compare_rule(lhs, rhs, direction)
    attrs = {
        "comparison_direction": parse_attr(f"#stablehlo<comparison_direction {direction}>"),
        "compare_type": parse_attr(f"#stablehlo<comparison_type {_COMPARE_TYPE[category(lhs.dtype)]}>"),
    }
    return _emit_same("stablehlo.compare", [lhs, rhs], shape, dtype, loc, attrs)


# ---------------------------------------------------------------- select, clamp

def _select_rule(pred, on_true, on_false):
    same_shape_and_dtype("select", on_true, on_false)
    if pred.dtype != np.bool_:
        raise TypeError(f"select: pred dtype must be bool, got {pred.dtype}")
    if pred.shape not in ((), on_true.shape):
        raise ValueError(f"select: pred shape {pred.shape} must be () or {on_true.shape}")
    return on_true.shape, on_true.dtype


@register("stablehlo.select", _select_rule)
def select(pred, on_true, on_false, *, loc=None) -> Tensor:
    """``on_true`` where ``pred`` else ``on_false``; emits ``stablehlo.select``.

    Args:
      pred: bool Tensor of the branches' shape, or a 0-d bool Tensor.
      on_true, on_false: Tensors of one shape and dtype.
    Returns:
      A Tensor of the branches' shape and dtype.
    Example:
      >>> y = ops.select(ops.compare(x, 0.0, "GT"), x, 0.0 * x)
    """
    pred = operand("select", pred, "pred")
    on_true, on_false = _binary_operands("select", on_true, on_false)
    shape, dtype = _select_rule(pred, on_true, on_false)
    return _emit_same("stablehlo.select", [pred, on_true, on_false], shape, dtype, loc)


def _clamp_rule(lo, x, hi):
    for name, bound in (("min", lo), ("max", hi)):
        if bound.dtype != x.dtype:
            raise TypeError(f"clamp: {name} dtype {bound.dtype} differs from operand dtype {x.dtype}")
        if bound.shape not in ((), x.shape):
            raise ValueError(f"clamp: {name} shape {bound.shape} must be () or {x.shape}")
    check_dtype("clamp", x, (SINT, UINT, FLOAT))
    return x.shape, x.dtype


@register("stablehlo.clamp", _clamp_rule)
def clamp(min, x, max, *, loc=None) -> Tensor:
    """``minimum(maximum(x, min), max)``; emits ``stablehlo.clamp``.

    Args:
      min, max: bounds of x's dtype, 0-d or of x's shape (Python scalars become constants).
      x: Tensor.
    Returns:
      A Tensor of x's shape and dtype.
    Example:
      >>> y = ops.clamp(0.0, x, 1.0)
    """
    x = operand("clamp", x)
    lo = operand("clamp", min, "min", dtype=x.dtype)
    hi = operand("clamp", max, "max", dtype=x.dtype)
    shape, dtype = _clamp_rule(lo, x, hi)
    return _emit_same("stablehlo.clamp", [lo, x, hi], shape, dtype, loc)


# ---------------------------------------------------------------- convert, complex

@register("stablehlo.convert")
def convert(x, dtype, *, loc=None) -> Tensor:
    """Cast elementwise to ``dtype``; emits ``stablehlo.convert``.

    Float to integer truncates toward zero; complex to real keeps the real part.

    Args:
      x: Tensor.
      dtype: any supported dtype.
    Returns:
      A Tensor of x's shape and the new dtype.
    Example:
      >>> y = ops.convert(x, np.float64)
    """
    x = operand("convert", x)
    dtype = dtypes.canonical(dtype)
    return _emit_same("stablehlo.convert", [x], x.shape, dtype, loc)


def _complex_rule(re, im):
    same_shape_and_dtype("complex", re, im)
    if re.dtype not in (np.float32, np.float64):
        raise TypeError(f"complex: operand dtype must be float32 or float64, got {re.dtype}")
    return re.shape, dtypes.complex_dtype(re.dtype)


@register("stablehlo.complex", _complex_rule)
def complex(real, imag, *, loc=None) -> Tensor:
    """``real + 1j * imag``; emits ``stablehlo.complex``.

    Args:
      real, imag: float32 or float64 Tensors of one shape and dtype.
    Returns:
      complex64 or complex128 Tensor.
    Example:
      >>> z = ops.complex(x, y)
    """
    real, imag = _binary_operands("complex", real, imag)
    shape, dtype = _complex_rule(real, imag)
    return _emit_same("stablehlo.complex", [real, imag], shape, dtype, loc)


def _part(pyname, opname):
    def rule(x):
        check_dtype(pyname, x, (FLOAT, COMPLEX))
        return x.shape, dtypes.real_dtype(x.dtype)

    def build(x, *, loc=None):
        x = operand(pyname, x)
        shape, dtype = rule(x)
        return _emit_same(opname, [x], shape, dtype, loc)

    build.__name__ = build.__qualname__ = pyname
    build.__doc__ = f"""The {pyname} part of a complex tensor; emits ``{opname}``.

    Args:
      x: complex (or float) Tensor.
    Returns:
      A float Tensor of x's shape and precision.
    Example:
      >>> r = ops.{pyname}(z)
    """
    build.__module__ = __name__
    return register(opname, rule)(build)


real = _part("real", "stablehlo.real")
imag = _part("imag", "stablehlo.imag")


def _erf_rule(x):
    check_dtype("erf", x, (FLOAT,))
    return x.shape, x.dtype


@register("chlo.erf", _erf_rule)
def erf(x, *, loc=None) -> Tensor:
    """The error function; emits ``chlo.erf`` (StableHLO has no erf op; XLA expands CHLO).

    Args:
      x: float Tensor.
    Returns:
      A Tensor of x's shape and dtype.
    Example:
      >>> y = ops.erf(x)
    """
    x = operand("erf", x)
    shape, dtype = _erf_rule(x)
    return _emit_same("chlo.erf", [x], shape, dtype, loc)
