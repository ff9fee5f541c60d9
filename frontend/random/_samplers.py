"""Samplers built on random bits: uniform, normal, truncated_normal, bernoulli, randint, gumbel.

Each follows jax.random's derivation op for op (jax 0.10.2, jax_threefry_partitionable on), so
the same key gives the same bits and, for floats, the same StableHLO arithmetic.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy._base import astype, broadcast_to, splat
from hloforge.frontend.random._eager import bound_array, eager, float32_array
from hloforge.frontend.random._keys import key_operand, no_sharding, raw_bits, shape_tuple, split2
from hloforge.frontend.tracing import Tensor, as_tensor

F32 = np.dtype(np.float32)
I32 = np.dtype(np.int32)
FLOATS = (np.dtype(np.float16), dtypes.bfloat16, F32, np.dtype(np.float64))


# ---------------------------------------------------------------- argument handling

def float_dtype(name: str, dtype, allow_complex=False) -> np.dtype:
    """The sampler's dtype: float32 by default (jax's with x64 off)."""
    d = F32 if dtype is None else dtypes.canonical(dtype)
    if d in FLOATS or (allow_complex and dtypes.is_complex(d)):
        return d
    kinds = "a float or complex" if allow_complex else "a float"
    raise ValueError(f"{name}: dtype must be {kinds} dtype, got {d}")


def as_dtype(name: str, what: str, x, dtype) -> Tensor:
    """``x`` (Tensor, array or Python scalar) converted to ``dtype``, as jax's convert_element_type."""
    if isinstance(x, Tensor):
        return astype(as_tensor(x, what=f"{name} {what}"), dtype)
    try:
        value = np.asarray(x)
    except (TypeError, ValueError):
        value = np.asarray(None)
    if value.dtype == object or value.dtype.kind not in "biuf":
        raise TypeError(f"{name}: {what} must be a real number or array, got {type(x).__name__} {x!r}")
    return as_tensor(value.astype(dtype), what=f"{name} {what}")


def check_shape(name: str, shape, *param_shapes) -> None:
    """jax's rule: the parameters broadcast to ``shape`` and broadcasting does not grow it."""
    if not param_shapes:
        return
    try:
        combined = tuple(np.broadcast_shapes(shape, *param_shapes))
    except ValueError:
        combined = None
    if combined != tuple(shape):
        raise ValueError(f"{name}: parameter shapes {', '.join(map(str, param_shapes))} must broadcast to the "
                         f"shape argument {tuple(shape)}, got {combined if combined else 'incompatible shapes'}")


def finfo(dtype):
    return ml_dtypes.finfo(dtype)


# ---------------------------------------------------------------- uniform

def uniform_impl(key: Tensor, shape, dtype, minval: Tensor, maxval: Tensor) -> Tensor:
    """jax's ``_uniform``: random mantissa bits with exponent 0, minus 1, scaled and shifted."""
    check_shape("uniform", shape, minval.shape, maxval.shape)
    minval, maxval = broadcast_to(minval, shape), broadcast_to(maxval, shape)
    return uniform_of_bits(raw_bits(key, uniform_bit_width(dtype), shape), dtype, minval, maxval)


def uniform_bit_width(dtype) -> int:
    """How many random bits jax's uniform draws per value: the dtype's width (8 for bfloat16)."""
    info = finfo(dtype)
    return 8 if info.nmant < 8 else info.bits


def uniform_of_bits(random: Tensor, dtype, minval: Tensor, maxval: Tensor) -> Tensor:
    """Uniform floats of ``dtype`` from ``uniform_bit_width(dtype)``-bit random integers, with
    ``minval`` and ``maxval`` of their shape."""
    info = finfo(dtype)
    nbits, nmant, shape = info.bits, info.nmant, random.shape
    rng_bits = uniform_bit_width(dtype)
    udtype = np.dtype(f"uint{nbits}")
    if rng_bits != nbits:
        random = ops.convert(random, udtype)
    mantissa = ops.shift_right_logical(random, splat(rng_bits - nmant, udtype, shape))
    # jax's bitcast(mantissa | bits(1.0)) - 1.0 (mantissa * 2**-nmant exactly; the same ops keep XLA's
    # fusions, and so its excess float16 precision, the same as jax's)
    one_bits = np.array(1.0, dtype).view(udtype)
    floats = ops.subtract(ops.bitcast_convert(ops.or_(mantissa, splat(one_bits, udtype, shape)), dtype),
                          splat(1.0, dtype, shape))
    scaled = ops.add(ops.multiply(floats, ops.subtract(maxval, minval)), minval)
    return ops.maximum(minval, scaled)


@eager(static=("shape", "dtype"), dynamic={"minval": bound_array, "maxval": bound_array})
def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0, *, out_sharding=None):
    """Uniform floats in ``[minval, maxval)`` (jax.random.uniform, bit-for-bit).

    ``random bits >> (bits - mantissa bits)``, as a float in [0, 1) (stablehlo.convert and
    stablehlo.multiply by 2**-mantissa bits, the value of jax's bitcast trick), then
    ``max(minval, u * (maxval - minval) + minval)``.

    Args:
      key: uint32[2] key.
      shape: result shape (default ``()``); minval and maxval broadcast to it.
      dtype: float16, bfloat16, float32 (default, jax's with x64 off) or float64.
      minval, maxval: bounds (Python scalars, arrays or Tensors), converted to ``dtype``.
      out_sharding: None (sharding is hf.jit's).
    Returns:
      An array of ``shape`` and ``dtype``.
    Example:
      >>> u = hf.random.uniform(key, (3,), minval=-1.0, maxval=1.0)
    """
    key = key_operand("uniform", key)
    no_sharding("hloforge.random.uniform", out_sharding)
    dtype = float_dtype("uniform", dtype)
    shape = shape_tuple("uniform", shape)
    return uniform_impl(key, shape, dtype, as_dtype("uniform", "minval", minval, dtype),
                        as_dtype("uniform", "maxval", maxval, dtype))


# ---------------------------------------------------------------- normal

def normal_real(key: Tensor, shape, dtype) -> Tensor:
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = uniform_impl(key, shape, dtype, as_tensor(np.asarray(lo, dtype)), as_tensor(np.array(1.0, dtype)))
    return ops.multiply(splat(np.sqrt(2), dtype, shape), ops.erf_inv(u))


@eager(static=("shape", "dtype"))
def normal(key, shape=(), dtype=None, *, out_sharding=None):
    """Standard normal samples (jax.random.normal, within one ulp: the same ops).

    ``sqrt(2) * erf_inv(u)`` for ``u`` uniform in ``(-1, 1)``; emits the uniform sampler's ops
    and ``chlo.erf_inv``. Complex dtypes draw real and imaginary parts from ``split(key)``
    and divide by sqrt(2).

    Args:
      key: uint32[2] key.
      shape: result shape (default ``()``).
      dtype: a float dtype (float32 default) or complex64/complex128.
      out_sharding: None.
    Returns:
      An array of ``shape`` and ``dtype``.
    Example:
      >>> z = hf.random.normal(key, (2, 3))
    """
    key = key_operand("normal", key)
    no_sharding("hloforge.random.normal", out_sharding)
    dtype = float_dtype("normal", dtype, allow_complex=True)
    shape = shape_tuple("normal", shape)
    if not dtypes.is_complex(dtype):
        return normal_real(key, shape, dtype)
    real = dtypes.real_dtype(dtype)
    key_re, key_im = split2(key)
    re = ops.convert(normal_real(key_re, shape, real), dtype)
    im = ops.convert(normal_real(key_im, shape, real), dtype)
    z = ops.add(re, ops.multiply(splat(1j, dtype, shape), im))
    return ops.divide(z, splat(np.sqrt(2), dtype, shape))


@eager(static=("shape", "dtype"), dynamic={"lower": bound_array, "upper": bound_array})
def truncated_normal(key, lower, upper, shape=None, dtype=None, *, out_sharding=None):
    """Standard normal samples truncated to ``(lower, upper)`` (jax.random.truncated_normal).

    Inverse-CDF sampling: ``u`` uniform in ``[erf(lower/sqrt2), erf(upper/sqrt2))``, then
    ``sqrt2 * erf_inv(u)`` clipped into the open interval. Emits chlo.erf, the uniform
    sampler's ops, chlo.erf_inv, chlo.next_after, stablehlo.maximum/minimum.

    Args:
      key: uint32[2] key.
      lower, upper: bounds (scalars, arrays or Tensors), broadcast together.
      shape: result shape; None (default) is the broadcast shape of the bounds.
      dtype: a float dtype (float32 default).
      out_sharding: None.
    Returns:
      An array of ``shape`` and ``dtype`` with values in ``(lower, upper)``.
    Example:
      >>> w = hf.random.truncated_normal(key, -2.0, 2.0, (256, 256))
    """
    key = key_operand("truncated_normal", key)
    no_sharding("hloforge.random.truncated_normal", out_sharding)
    dtype = float_dtype("truncated_normal", dtype)
    lower = as_dtype("truncated_normal", "lower", lower, dtype)
    upper = as_dtype("truncated_normal", "upper", upper, dtype)
    if shape is None:
        try:
            shape = tuple(np.broadcast_shapes(lower.shape, upper.shape))
        except ValueError:
            raise ValueError(f"truncated_normal: lower shape {lower.shape} and upper shape {upper.shape} "
                             "cannot be broadcast together") from None
    else:
        shape = shape_tuple("truncated_normal", shape)
        check_shape("truncated_normal", shape, lower.shape, upper.shape)
    sqrt2 = np.sqrt(2)
    a = ops.erf(ops.divide(lower, splat(sqrt2, dtype, lower.shape)))
    b = ops.erf(ops.divide(upper, splat(sqrt2, dtype, upper.shape)))
    u = uniform_impl(key, shape, dtype, a, b)
    out = ops.multiply(splat(sqrt2, dtype, shape), ops.erf_inv(u))
    lo = ops.next_after(lower, splat(np.inf, dtype, lower.shape))
    hi = ops.next_after(upper, splat(-np.inf, dtype, upper.shape))
    return ops.minimum(broadcast_to(hi, shape), ops.maximum(broadcast_to(lo, shape), out))


# ---------------------------------------------------------------- bernoulli

@eager(static=("shape", "mode"), dynamic={"p": float32_array})
def bernoulli(key, p=0.5, shape=None, mode="low", *, out_sharding=None):
    """Booleans that are True with probability ``p`` (jax.random.bernoulli, bit-for-bit).

    ``uniform(key, shape, p.dtype) < p`` (stablehlo.compare LT); ``mode="high"`` draws two
    uniforms and compares ``u2 * 2**-mantissa < p - u1`` for small ``p``.

    Args:
      key: uint32[2] key.
      p: probability: a Python float (sampled in float32, as jax does with x64 off), or a
        float array or Tensor (sampled in its own dtype).
      shape: result shape; None (default) is p's shape.
      mode: "low" (default) or "high".
      out_sharding: None.
    Returns:
      A bool array of ``shape``.
    Example:
      >>> mask = hf.random.bernoulli(key, 0.9, (128,))
    """
    if mode not in ("high", "low"):
        raise ValueError(f"bernoulli: mode must be 'high' or 'low', got {mode!r}")
    key = key_operand("bernoulli", key)
    no_sharding("hloforge.random.bernoulli", out_sharding)
    if isinstance(p, float) or (isinstance(p, Tensor) and p.weak and dtypes.is_float(p.dtype)):
        dtype = F32  # (a Python float, or hf.jit's weak Tensor of one)
    else:
        dtype = p.dtype if isinstance(p, Tensor) else np.asarray(p).dtype
    if np.dtype(dtype) not in FLOATS:
        raise TypeError(f"bernoulli: probability p must have a floating dtype, got {dtype} ({p!r})")
    p = as_dtype("bernoulli", "p", p, dtype)
    if shape is None:
        shape = p.shape
    else:
        shape = shape_tuple("bernoulli", shape)
        check_shape("bernoulli", shape, p.shape)
    p = broadcast_to(p, shape)
    zero, one = as_tensor(np.array(0.0, dtype)), as_tensor(np.array(1.0, dtype))
    if mode == "low":
        return ops.compare(uniform_impl(key, shape, dtype, zero, one), p, "LT")
    u = uniform_impl(key, (2,) + tuple(shape), dtype, zero, one)
    u1, u2 = (ops.reshape(ops.slice(u, (i,) + (0,) * len(shape), (i + 1,) + tuple(shape)), shape)
              for i in (0, 1))
    u2 = ops.multiply(u2, splat(2.0 ** -finfo(dtype).nmant, dtype, shape))
    return ops.compare(u2, ops.subtract(p, u1), "LT")


# ---------------------------------------------------------------- randint

def _int_operand(name, what, x) -> Tensor:
    """minval/maxval as an integer Tensor: integer dtypes kept, Python ints int64, floats truncated."""
    if isinstance(x, Tensor):
        t = as_tensor(x, what=f"{name} {what}")
    else:
        if isinstance(x, int) and not isinstance(x, bool):
            if not -2 ** 63 <= x < 2 ** 63:
                raise ValueError(f"{name}: {what} {x} does not fit in int64")
            return as_tensor(np.asarray(x, np.int64))
        try:
            value = np.asarray(x)
        except (TypeError, ValueError):
            value = np.asarray(None)
        if value.dtype == object or value.dtype.kind not in "biuf":
            raise TypeError(f"{name}: {what} must be an integer or integer array, got {type(x).__name__} {x!r}")
        t = as_tensor(value)
    if dtypes.is_integer(t.dtype):
        return t
    if dtypes.is_float(t.dtype) or t.dtype == np.bool_:
        return astype(t, np.int64)
    raise TypeError(f"{name}: {what} must be an integer or integer array, got dtype {t.dtype}")


def _clip_convert(x: Tensor, dtype) -> Tensor:
    """jax's ``_convert_and_clip_integer``: clamp into dtype's range, then convert."""
    a, b = np.iinfo(x.dtype), np.iinfo(dtype)
    lo, hi = max(a.min, b.min), min(a.max, b.max)
    clipped = ops.clamp(splat(lo, x.dtype, ()), x, splat(hi, x.dtype, ()))
    return clipped if x.dtype == dtype else ops.convert(clipped, dtype)


def _randint_impl(key, shape, minval, maxval, dtype) -> Tensor:
    nbits = np.iinfo(dtype).bits
    c = lambda v, t: splat(v, t.dtype, t.shape)  # noqa: E731
    maxval_out_of_range = ops.compare(
        maxval, c(min(np.iinfo(dtype).max, np.iinfo(maxval.dtype).max), maxval), "GT")
    minval = broadcast_to(_clip_convert(minval, dtype), shape)
    maxval = broadcast_to(_clip_convert(maxval, dtype), shape)
    maxval_out_of_range = broadcast_to(maxval_out_of_range, shape)
    k1, k2 = split2(key)
    higher, lower = raw_bits(k1, nbits, shape), raw_bits(k2, nbits, shape)
    udtype = np.dtype(f"uint{nbits}")
    span = ops.convert(ops.subtract(maxval, minval), udtype)
    one = splat(1, udtype, shape)
    span = ops.select(ops.compare(maxval, minval, "LE"), one, span)
    grow = ops.and_(maxval_out_of_range, ops.compare(maxval, minval, "GT"))
    span = ops.select(grow, ops.add(span, one), span)
    # span wraps to 0 for a full-range [minval, maxval); XLA defines x % 0 == x, which jax relies
    # on, but XLA's constant folder dies (SIGFPE) on a constant zero divisor: select it instead
    wrapped = ops.compare(span, splat(0, udtype, shape), "EQ")
    divisor = ops.select(wrapped, one, span)

    def rem(x):
        return ops.select(wrapped, x, ops.remainder(x, divisor))

    multiplier = rem(splat(2 ** (nbits // 2), udtype, shape))
    multiplier = rem(ops.multiply(multiplier, multiplier))
    offset = rem(ops.add(ops.multiply(rem(higher), multiplier), rem(lower)))
    return ops.add(minval, ops.convert(offset, dtype))


_I32_INFO = np.iinfo(np.int32)


def _check_static_bound(what, value, dtype) -> None:
    """A bound known at trace time (not a Tensor) must be sampled as given: inside
    ``[dtype.min, dtype.max + 1]``, or in int32's range, where jax (x64 off) clips it into the
    dtype (``maxval=256`` for uint8). Anything else would be clipped to a range the caller did not
    ask for (``choice(key, 2**40)`` drew only below 2**31), so it is refused as jax refuses it."""
    if isinstance(value, Tensor) or value is None:
        return
    if isinstance(value, int) and not -2 ** 63 <= value < 2 ** 63:
        return  # (_int_operand names it: it does not fit in int64)
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        return
    if array.dtype.kind not in "biuf" or array.size == 0:
        return
    info = np.iinfo(dtype)
    lowest, highest = min(_I32_INFO.min, info.min), max(_I32_INFO.max, info.max + 1)  # (the ranges overlap)
    if array.dtype.kind == "f":
        values = np.trunc(array.astype(np.float64))
        extremes = [float(np.min(values)), float(np.max(values))]
    else:
        extremes = [int(np.min(array)), int(np.max(array))]
    for v in extremes:
        if not lowest <= v <= highest:  # (NaN fails too)
            shown = int(v) if np.isfinite(v) else v
            raise OverflowError(
                f"randint: {what} {shown} cannot be sampled exactly as {np.dtype(dtype).name}: bounds must lie in "
                f"[{lowest}, {highest}] (the dtype's range, maxval one past its largest value, or int32's, where "
                "bounds are clipped into the dtype as jax does); pass a wider dtype (e.g. dtype=np.int64)")


def _randint(key, shape, minval, maxval, dtype=None):
    """randint's sampler (the bounds checked already)."""
    key = key_operand("randint", key)
    dtype = I32 if dtype is None else dtypes.canonical(dtype)
    if not dtypes.is_integer(dtype):
        raise TypeError(f"randint: dtype must be an integer dtype, got {dtype}")
    shape = shape_tuple("randint", shape)
    minval = _int_operand("randint", "minval", minval)
    maxval = _int_operand("randint", "maxval", maxval)
    check_shape("randint", shape, minval.shape, maxval.shape)
    info = np.iinfo(dtype)
    if info.bits >= 32:
        return _randint_impl(key, shape, minval, maxval, dtype)
    # sample in 32 bits to avoid a biased result (jax's astype + clip first)
    lo = lambda v, t: splat(v, I32, t.shape)  # noqa: E731
    minval, maxval = (astype(v, I32) for v in (minval, maxval))
    minval = ops.clamp(lo(info.min, minval), minval, lo(info.max, minval))
    maxval = ops.clamp(lo(info.min, maxval), maxval, lo(info.max + 1, maxval))
    return ops.convert(_randint_impl(key, shape, minval, maxval, I32), dtype)


_randint.__name__ = _randint.__qualname__ = "randint"  # (eager's messages and the compiled function's name)
_randint = eager(static=("shape", "dtype"), dynamic={"minval": bound_array, "maxval": bound_array})(_randint)


def randint(key, shape, minval, maxval, dtype=None, *, out_sharding=None):
    """Uniform integers in ``[minval, maxval)`` (jax.random.randint, bit-for-bit).

    Two words of random bits per value (from ``split(key)``) reduced modulo the span with
    stablehlo.remainder/multiply/add; ``maxval <= minval`` gives ``minval``; bounds outside the
    dtype's range are clipped to it (``maxval = 256`` works for uint8). 8- and 16-bit dtypes
    sample in int32 and convert, as jax does. Bounds given as Python values or arrays that lie
    outside both ``[dtype.min, dtype.max + 1]`` and int32 raise OverflowError (jax without x64
    raises it for Python ints beyond int32): clipped, they would give another range.

    Args:
      key: uint32[2] key.
      shape: result shape; minval and maxval broadcast to it.
      minval, maxval: integer bounds (Python ints, arrays or Tensors; floats are truncated).
      dtype: an integer dtype (int32 default, jax's with x64 off).
      out_sharding: None.
    Returns:
      An integer array of ``shape`` and ``dtype``.
    Example:
      >>> i = hf.random.randint(key, (8,), 0, 10)
    """
    no_sharding("hloforge.random.randint", out_sharding)
    checked = I32 if dtype is None else dtypes.canonical(dtype)
    if dtypes.is_integer(checked):
        _check_static_bound("minval", minval, checked)
        _check_static_bound("maxval", maxval, checked)
    return _randint(key, shape, minval, maxval, dtype)


# ---------------------------------------------------------------- gumbel (for choice)

def gumbel_impl(key: Tensor, shape, dtype, mode: str) -> Tensor:
    """jax's ``_gumbel`` in modes "low" and "high": ``-log(-log(u))``."""
    info = finfo(dtype)
    if mode == "low":
        u = uniform_impl(key, shape, dtype, as_tensor(np.asarray(info.tiny, dtype)),
                         as_tensor(np.array(1.0, dtype)))
        return ops.neg(ops.log(ops.neg(ops.log(u))))
    both = uniform_impl(key, (2,) + tuple(shape), dtype, as_tensor(np.array(0.0, dtype)),
                        as_tensor(np.array(1.0, dtype)))
    high, low = (ops.reshape(ops.slice(both, (i,) + (0,) * len(shape), (i + 1,) + tuple(shape)), shape)
                 for i in (0, 1))
    small = ops.add(ops.add(high, ops.multiply(splat(2.0 ** -info.nmant, dtype, shape), low)),
                    splat(info.tiny, dtype, shape))
    x = ops.select(ops.compare(high, splat(0.5, dtype, shape), "GE"), high, small)
    return ops.neg(ops.log(ops.neg(ops.log1p(ops.neg(x)))))


__all__ = ["uniform", "normal", "truncated_normal", "bernoulli", "randint"]
