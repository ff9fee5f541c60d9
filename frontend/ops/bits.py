"""Bit-level ops: bitcast_convert, reduce_precision, rng_bit_generator (popcnt and
count_leading_zeros are elementwise rows in ops/elementwise.py)."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import attributes as attr
from hloforge.frontend import dtypes
from hloforge.frontend.context import ir, shape_dtype_of, stablehlo
from hloforge.frontend.ops import _evaluate as ev
from hloforge.frontend.ops._common import FLOAT, check_dtype, int_tuple, operand
from hloforge.frontend.registry import bind, register
from hloforge.frontend.tracing import Tensor


def _bits(dtype) -> int:
    return 1 if dtype == np.bool_ else np.dtype(dtype).itemsize * 8


def _bitcast_rule(x, dtype):
    a, b = _bits(x.dtype), _bits(dtype)
    if x.dtype == np.bool_ or dtype == np.bool_:
        if x.dtype != dtype:
            raise TypeError(f"bitcast_convert: cannot bitcast between bool and {dtype if x.dtype == np.bool_ else x.dtype}")
        return x.shape, dtype
    if a == b:
        return x.shape, dtype
    if a > b:
        if a % b:
            raise TypeError(f"bitcast_convert: {x.dtype} ({a} bits) is not a multiple of {dtype} ({b} bits)")
        return x.shape + (a // b,), dtype
    if b % a:
        raise TypeError(f"bitcast_convert: {dtype} ({b} bits) is not a multiple of {x.dtype} ({a} bits)")
    if not x.shape or x.shape[-1] != b // a:
        raise ValueError(f"bitcast_convert: {x.dtype} -> {dtype} needs a last dimension of {b // a}, got shape {x.shape}")
    return x.shape[:-1], dtype


def _bitcast_evaluate(x, dtype):
    a, b = _bits(x.dtype), _bits(dtype)
    x = np.asarray(x, order="C")  # (np.ascontiguousarray makes a 0-d array 1-d)
    if a == b:
        out = x.view(dtype)
    elif a > b:
        out = x.reshape(x.shape + (1,)).view(dtype)
    else:
        out = x.view(dtype).reshape(x.shape[:-1])
    return None if ev.has_subnormal(out) or ev.has_subnormal(x) else out


@register("stablehlo.bitcast_convert", rule=_bitcast_rule, params=lambda dtype: {"dtype": dtypes.canonical(dtype)},
          decode=lambda op: {"dtype": shape_dtype_of(op.results[0].type)[1]}, evaluate=_bitcast_evaluate)
def bitcast_convert(x, dtype, *, loc=None) -> Tensor:
    """Reinterpret the bits of ``x`` as ``dtype``; emits ``stablehlo.bitcast_convert``.

    A wider source gains a last dimension of ``source bits / target bits`` elements (little-endian
    order, as XLA); a narrower source loses its last dimension, which must have that size.

    Args:
      x: Tensor.
      dtype: the new element type.
    Returns:
      A Tensor of ``dtype``.
    Example:
      >>> bits = ops.bitcast_convert(x_f32, np.uint32)
    """
    return bind("stablehlo.bitcast_convert", [operand("bitcast_convert", x)], dtype=dtype, loc=loc)


# ---------------------------------------------------------------- reduce_precision

def _reduce_precision_params(exponent_bits, mantissa_bits):
    e, m = int_tuple("reduce_precision", "(exponent_bits, mantissa_bits)", (exponent_bits, mantissa_bits))
    if e < 1 or m < 0:
        raise ValueError(f"reduce_precision: exponent_bits {e} must be >= 1 and mantissa_bits {m} >= 0")
    return {"exponent_bits": e, "mantissa_bits": m}


def _reduce_precision_rule(x, exponent_bits, mantissa_bits):
    check_dtype("reduce_precision", x, (FLOAT,))
    return x.shape, x.dtype


def reduce_precision_numpy(x, exponent_bits, mantissa_bits):
    """Round ``x`` to a float with the given exponent and mantissa bits (round to nearest even,
    overflow to infinity, underflow to zero), computed on the float64 bits. A NaN stays that NaN,
    or becomes +inf without mantissa bits (the spec's interpreter and XLA's constant folder)."""
    wide = np.asarray(x, np.float64)
    bits = wide.view(np.uint64).copy()
    if mantissa_bits < 52:
        shift = np.uint64(52 - mantissa_bits)
        last = (bits >> shift) & np.uint64(1)
        bias = (np.uint64(1) << (shift - np.uint64(1))) - np.uint64(1) + last
        bits = (bits + bias) & ~((np.uint64(1) << shift) - np.uint64(1))
    if exponent_bits < 11:
        exp_bias = (1 << (exponent_bits - 1)) - 1
        max_exp, min_exp = 1023 + exp_bias, 1023 - exp_bias
        exponent = (bits >> np.uint64(52)) & np.uint64(0x7FF)
        sign = bits & np.uint64(1 << 63)
        over = exponent > np.uint64(max_exp)
        under = exponent <= np.uint64(min_exp)
        bits = np.where(over, sign | np.uint64(0x7FF << 52), np.where(under, sign, bits))
    out = bits.view(np.float64)
    return np.where(np.isnan(wide), wide if mantissa_bits > 0 else np.inf, out)


# (exponent bits, mantissa bits) of each float dtype reduce_precision evaluates
_FORMATS = {"float16": (5, 10), "bfloat16": (8, 7), "float32": (8, 23), "float64": (11, 52)}


def _reduce_precision_evaluate(x, exponent_bits, mantissa_bits):
    """Rounded on the float64 bits (every source value is exact there, so there is one rounding),
    a NaN kept bit for bit; None for subnormal inputs (flushed at run time) and for NaN without
    mantissa bits (XLA:CPU's kernel keeps the NaN, its constant folder makes it +inf)."""
    if x.dtype.name not in _FORMATS or not ev.safe_inputs([x]):
        return None
    nan = np.isnan(ev.wide(x))
    if mantissa_bits == 0 and nan.any():
        return None
    e_limit, m_limit = _FORMATS[x.dtype.name]
    out = ev.finish(reduce_precision_numpy(np.where(nan, 0, ev.wide(x)), min(exponent_bits, e_limit),
                                           min(mantissa_bits, m_limit)), x.dtype)
    return None if out is None else np.where(nan, x, out)


def _format(exponent_bits, mantissa_bits):
    i32 = ir.IntegerType.get_signless(32)
    return {"exponent_bits": ir.IntegerAttr.get(i32, exponent_bits), "mantissa_bits": ir.IntegerAttr.get(i32, mantissa_bits)}


@register("stablehlo.reduce_precision", rule=_reduce_precision_rule, params=_reduce_precision_params,
          attributes=_format, decode=lambda op: {"exponent_bits": attr.read_int(op, "exponent_bits"),
                                                 "mantissa_bits": attr.read_int(op, "mantissa_bits")},
          evaluate=_reduce_precision_evaluate, traits={"elementwise", "unary", "linear"})
def reduce_precision(x, exponent_bits: int, mantissa_bits: int, *, loc=None) -> Tensor:
    """Round ``x`` to a narrower float format and back (e.g. 5, 10 for float16, 8, 7 for
    bfloat16); emits ``stablehlo.reduce_precision``.

    Args:
      x: float Tensor.
      exponent_bits: >= 1. mantissa_bits: >= 0.
    Returns:
      A Tensor of x's shape and dtype.
    Example:
      >>> y = ops.reduce_precision(x, 8, 7)   # round to bfloat16 in place
    """
    return bind("stablehlo.reduce_precision", [operand("reduce_precision", x)], exponent_bits=exponent_bits,
                mantissa_bits=mantissa_bits, loc=loc)


# ---------------------------------------------------------------- rng_bit_generator

ALGORITHMS = ("DEFAULT", "THREE_FRY", "PHILOX")


def _rng_params(shape, dtype, algorithm="DEFAULT"):
    shape = int_tuple("rng_bit_generator", "shape", shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"rng_bit_generator: shape {shape} has a negative dimension")
    dtype = dtypes.canonical(dtype)
    if algorithm not in ALGORITHMS:
        raise ValueError(f"rng_bit_generator: algorithm {algorithm!r} is not one of {', '.join(ALGORITHMS)}")
    return {"shape": shape, "dtype": dtype, "algorithm": algorithm}


def _rng_rule(state, shape, dtype, algorithm):
    if dtype.kind not in "iu":
        raise TypeError(f"rng_bit_generator: dtype must be an integer type, got {dtype}")
    if state.ndim != 1 or state.dtype != np.uint64:  # (the spec allows any integer; XLA compiles uint64 only)
        raise TypeError(f"rng_bit_generator: state must be a 1-d uint64 tensor, got {state}; bitcast a uint32[4] "
                        "key with ops.bitcast_convert")
    bits = _bits(state.dtype) * state.shape[0]
    need = {"THREE_FRY": (128,), "PHILOX": (128, 192)}.get(algorithm)
    if need and bits not in need:
        raise ValueError(f"rng_bit_generator: {algorithm} needs a {' or '.join(map(str, need))}-bit state, got "
                         f"{state} ({bits} bits)")
    return [(state.shape, state.dtype), (shape, dtype)]


@register("stablehlo.rng_bit_generator", rule=_rng_rule, params=_rng_params,
          attributes=lambda shape, dtype, algorithm: {"rng_algorithm": stablehlo.RngAlgorithmAttr.get(algorithm)},
          decode=lambda op: dict(zip(("shape", "dtype"), shape_dtype_of(op.results[1].type)),
                                 algorithm=stablehlo.RngAlgorithmAttr(op.attributes["rng_algorithm"]).value),
          traits={"variadic"})
def rng_bit_generator(state, shape, dtype=np.uint32, algorithm="DEFAULT", *, loc=None):
    """Random bits and the next generator state; emits ``stablehlo.rng_bit_generator``.

    The bits are the backend's (XLA:CPU's DEFAULT is Philox); they match jax.lax.rng_bit_generator
    for the same state and algorithm.

    Args:
      state: 1-d uint64 Tensor, e.g. uint64[2] (THREE_FRY: 128 bits, PHILOX: 128 or 192 bits).
      shape: the shape of the bits.
      dtype: an integer dtype (default uint32).
      algorithm: "DEFAULT", "THREE_FRY" or "PHILOX".
    Returns:
      (new_state, bits).
    Example:
      >>> state, bits = ops.rng_bit_generator(state, (4, 4), np.uint32)
    """
    out = bind("stablehlo.rng_bit_generator", [operand("rng_bit_generator", state, "state")], shape=shape,
               dtype=dtype, algorithm=algorithm, loc=loc)
    return tuple(out)


__all__ = ["bitcast_convert", "reduce_precision", "rng_bit_generator"]
