"""Continuous samplers that transform one uniform or normal draw: exponential, cauchy, laplace,
logistic, gumbel, pareto, rayleigh, triangular, lognormal, wald (jax.random's, op for op)."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.numpy._base import broadcast_to, splat
from hloforge.frontend.random._eager import eager
from hloforge.frontend.random._keys import U32, key_operand, raw_bits, shape_tuple, split2
from hloforge.frontend.random._params import converted, float_dtype, key_arg, no_sharding, public, with_params
from hloforge.frontend.random._samplers import F32, finfo, gumbel_impl, normal, normal_real, uniform_impl
from hloforge.frontend.tracing import Tensor, as_tensor


def uniform01(key: Tensor, shape, dtype, minval=0.0, maxval=1.0) -> Tensor:
    """``uniform(key, shape, dtype, minval, maxval)`` for constant bounds."""
    return uniform_impl(key, shape, dtype, as_tensor(np.asarray(minval).astype(dtype)),
                        as_tensor(np.asarray(maxval).astype(dtype)))


def _plain(name: str, dtype, out_sharding, shape, key, allow_complex=False):
    """The checks of a sampler without parameters: (shape, dtype)."""
    name = public(name)
    key_arg(name, key)
    d = float_dtype(name, dtype, allow_complex)
    no_sharding(name, out_sharding)
    return shape_tuple(name, shape), d


# ---------------------------------------------------------------- no parameters

def exponential_impl(key: Tensor, shape, dtype) -> Tensor:
    """jax's ``_exponential``: ``-log1p(-u)``."""
    return ops.neg(ops.log1p(ops.neg(uniform01(key, shape, dtype))))


@eager(static=("shape", "dtype"))
def _exponential(key, shape, dtype):
    return exponential_impl(key_operand(public("exponential"), key), shape, dtype)


def exponential(key, shape=(), dtype=None, *, out_sharding=None):
    """Exponential(1) samples (jax.random.exponential): ``-log1p(-u)`` of a uniform ``u``.

    Args:
      key: uint32[2] key.
      shape: result shape (default ``()``).
      dtype: a float dtype (float32 default).
      out_sharding: None (sharding is hf.jit's).
    Returns:
      An array of ``shape`` and ``dtype``.
    Example:
      >>> e = hf.random.exponential(key, (100,))
    """
    shape, d = _plain("exponential", dtype, out_sharding, shape, key)
    return _exponential(key, shape, d)


@eager(static=("shape", "dtype"))
def _cauchy(key, shape, dtype):
    u = uniform01(key_operand(public("cauchy"), key), shape, dtype, finfo(dtype).eps, 1.0)
    return ops.tan(ops.multiply(splat(np.pi, dtype, shape), ops.subtract(u, splat(0.5, dtype, shape))))


def cauchy(key, shape=(), dtype=None, *, out_sharding=None):
    """Standard Cauchy samples (jax.random.cauchy): ``tan(pi (u - 1/2))`` for ``u`` uniform in
    ``[eps, 1)``; emits stablehlo.tan.

    Args:
      key: uint32[2] key.
      shape: result shape (default ``()``).
      dtype: a float dtype (float32 default).
      out_sharding: None.
    Returns:
      An array of ``shape`` and ``dtype``.
    Example:
      >>> c = hf.random.cauchy(key, (100,))
    """
    shape, d = _plain("cauchy", dtype, out_sharding, shape, key)
    return _cauchy(key, shape, d)


@eager(static=("shape", "dtype"))
def _laplace(key, shape, dtype):
    u = uniform01(key_operand(public("laplace"), key), shape, dtype, -1.0 + finfo(dtype).epsneg, 1.0)
    return ops.multiply(ops.sign(u), ops.log1p(ops.neg(ops.abs(u))))


def laplace(key, shape=(), dtype=None, *, out_sharding=None):
    """Standard Laplace samples (jax.random.laplace): ``sign(u) log1p(-|u|)`` for ``u`` uniform in
    ``(-1, 1)``.

    Args:
      key: uint32[2] key.
      shape: result shape (default ``()``).
      dtype: a float dtype (float32 default).
      out_sharding: None.
    Returns:
      An array of ``shape`` and ``dtype``.
    Example:
      >>> x = hf.random.laplace(key, (100,))
    """
    shape, d = _plain("laplace", dtype, out_sharding, shape, key)
    return _laplace(key, shape, d)


@eager(static=("shape", "dtype"))
def _logistic(key, shape, dtype):
    x = uniform01(key_operand(public("logistic"), key), shape, dtype, finfo(dtype).tiny, 1.0)
    return ops.subtract(ops.log(x), ops.log1p(ops.neg(x)))


def logistic(key, shape=(), dtype=None, *, out_sharding=None):
    """Standard logistic samples (jax.random.logistic): ``log(u) - log1p(-u)`` for ``u`` uniform in
    ``[tiny, 1)``.

    Args:
      key: uint32[2] key.
      shape: result shape (default ``()``).
      dtype: a float dtype (float32 default).
      out_sharding: None.
    Returns:
      An array of ``shape`` and ``dtype``.
    Example:
      >>> x = hf.random.logistic(key, (100,))
    """
    shape, d = _plain("logistic", dtype, out_sharding, shape, key)
    return _logistic(key, shape, d)


def _safe_int_to_float(bits: Tensor) -> Tensor:
    """jax's ``_safe_int_to_float``: uint32 word pairs ``bits[0], bits[1]`` (a 64-bit fixed-point
    fraction) as float32 in (0, 1), normalized by their leading zeros."""
    info = finfo(F32)
    shape = bits.shape[1:]

    def word(x, i):
        return ops.reshape(ops.slice(x, (i,) + (0,) * len(shape), (i + 1,) + shape), shape)

    def u(v):
        return splat(v, U32, shape)
    clz = ops.count_leading_zeros(bits)
    hiclz, loclz, hi, lo = word(clz, 0), word(clz, 1), word(bits, 0), word(bits, 1)
    all_zero = ops.compare(hiclz, u(32), "EQ")
    mantissa = ops.or_(ops.shift_left(hi, hiclz),
                       ops.select(all_zero, ops.shift_left(lo, loclz),
                                  ops.shift_right_logical(lo, ops.subtract(u(info.bits), hiclz))))
    mantissa = ops.shift_right_logical(mantissa, u(info.bits - info.nmant - 1))
    mantissa = ops.and_(mantissa, u((1 << info.nmant) - 1))
    exp = ops.subtract(u(-info.minexp), ops.select(all_zero, ops.add(u(32), loclz), hiclz))
    exp = ops.shift_left(exp, u(info.nmant))
    exp = ops.and_(exp, u((1 << (info.bits - 2)) - (1 << (info.nmant - 1))))
    return ops.bitcast_convert(ops.or_(exp, mantissa), F32)


def _gumbel_highest(key: Tensor, shape) -> Tensor:
    """jax's float32 "highest" mode: 64 random bits per value, ``1 - bits`` in fixed point where
    the value is in [0.5, 1), converted without losing the small values."""
    full = (2,) + tuple(shape)
    bits = raw_bits(key, 32, full)
    neg = ops.not_(bits)
    lo_bits = ops.reshape(ops.slice(neg, (1,) + (0,) * len(shape), full), (1,) + tuple(shape))
    carry = ops.convert(ops.compare(lo_bits, splat(2 ** 32 - 1, U32, lo_bits.shape), "EQ"), U32)
    neg = ops.add(neg, ops.concatenate([carry, splat(1, U32, lo_bits.shape)], 0))
    first = ops.reshape(ops.slice(bits, (0,) * len(full), (1,) + tuple(shape)), tuple(shape))
    flip_mask = ops.compare(first, splat(2 ** 31, U32, first.shape), "LT")
    x = _safe_int_to_float(ops.select(ops.broadcast_in_dim(flip_mask, full, tuple(range(1, len(full)))), bits, neg))
    low = ops.neg(ops.log(ops.neg(ops.log1p(ops.neg(x)))))
    high = ops.neg(ops.log(ops.neg(ops.log(x))))
    return ops.select(flip_mask, low, high)


@eager(static=("shape", "dtype", "mode"))
def _gumbel(key, shape, dtype, mode):
    key = key_operand(public("gumbel"), key)
    if mode == "highest" and dtype == F32:
        return _gumbel_highest(key, shape)
    return gumbel_impl(key, shape, dtype, "low" if mode == "low" else "high")


def gumbel(key, shape=(), dtype=None, mode=None, *, out_sharding=None):
    """Standard Gumbel samples (jax.random.gumbel): ``-log(-log(u))``.

    mode "low" (default): ``u`` uniform in ``[tiny, 1)``; "high": two uniforms combined into one
    of twice the precision, ``-log(-log1p(-x))``; "highest" (float32): 64 random bits converted
    without rounding away small values (other dtypes: "high"), as jax.

    Args:
      key: uint32[2] key.
      shape: result shape (default ``()``).
      dtype: a float dtype (float32 default).
      mode: None (jax's default, "low"), "low", "high" or "highest".
      out_sharding: None.
    Returns:
      An array of ``shape`` and ``dtype``.
    Example:
      >>> g = hf.random.gumbel(key, (100,), mode="high")
    """
    shape, d = _plain("gumbel", dtype, out_sharding, shape, key)
    mode = "low" if mode is None else mode
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"hloforge.random.gumbel: mode must be None, 'low', 'high' or 'highest', got {mode!r}")
    return _gumbel(key, shape, d, mode)


# ---------------------------------------------------------------- one parameter, converted to the dtype

@eager(static=("shape", "dtype"))
def _pareto(key, b, shape, dtype):
    e = exponential_impl(key_operand(public("pareto"), key), shape, dtype)
    return ops.exp(ops.divide(e, converted(b, dtype, shape)))


def pareto(key, b, shape=None, dtype=None, *, out_sharding=None):
    """Pareto samples of shape ``b`` (jax.random.pareto): ``exp(e / b)`` of an exponential ``e``.

    Args:
      key: uint32[2] key.
      b: shape parameter(s) > 0 (scalar, array or Tensor), broadcast to ``shape``.
      shape: result shape; None (default) is b's shape.
      dtype: a float dtype (float32 default); b must cast to it safely.
      out_sharding: None.
    Returns:
      An array of ``shape`` and ``dtype``, values >= 1.
    Example:
      >>> x = hf.random.pareto(key, 3.0, (100,))
    """
    shape, d, (b,) = with_params("pareto", key, dtype, out_sharding, shape, b=b)
    return _pareto(key, b, shape, d)


@eager(static=("shape", "dtype"))
def _rayleigh(key, scale, shape, dtype):
    u = uniform01(key_operand(public("rayleigh"), key), shape, dtype)
    scale = converted(scale, dtype, shape)
    root = ops.sqrt(ops.multiply(ops.log(u), splat(-2, dtype, shape)))
    return ops.multiply(scale, root)


def rayleigh(key, scale, shape=None, dtype=None, *, out_sharding=None):
    """Rayleigh samples (jax.random.rayleigh): ``scale * sqrt(-2 log(u))``.

    Args:
      key: uint32[2] key.
      scale: scale parameter(s) > 0, broadcast to ``shape``.
      shape: result shape; None (default) is scale's shape.
      dtype: a float dtype (float32 default); scale must cast to it safely.
      out_sharding: None.
    Returns:
      An array of ``shape`` and ``dtype``.
    Example:
      >>> r = hf.random.rayleigh(key, 2.0, (100,))
    """
    shape, d, (scale,) = with_params("rayleigh", key, dtype, out_sharding, shape, scale=scale)
    return _rayleigh(key, scale, shape, d)


@eager(static=("shape", "dtype"))
def _triangular(key, left, mode, right, shape, dtype):
    key = key_operand(public("triangular"), key)
    left, right, mode = (converted(x, dtype, shape) for x in (left, right, mode))
    fc = ops.divide(ops.subtract(mode, left), ops.subtract(right, left))
    u = uniform01(key, shape, dtype)
    width = ops.subtract(right, left)
    out1 = ops.add(left, ops.sqrt(ops.multiply(ops.multiply(u, width), ops.subtract(mode, left))))
    one_minus = ops.subtract(splat(1, dtype, shape), u)
    out2 = ops.subtract(right, ops.sqrt(ops.multiply(ops.multiply(one_minus, width), ops.subtract(right, mode))))
    return ops.select(ops.compare(u, fc, "LT"), out1, out2)


def triangular(key, left, mode, right, shape=None, dtype=None, *, out_sharding=None):
    """Triangular samples on ``[left, right]`` peaking at ``mode`` (jax.random.triangular): the
    inverse CDF of a uniform ``u``, one square root on each side of ``(mode - left) / (right - left)``.

    Args:
      key: uint32[2] key.
      left, mode, right: bounds and peak, ``left <= mode <= right``, broadcast to ``shape``.
      shape: result shape; None (default) broadcasts the three.
      dtype: a float dtype (float32 default); the parameters must cast to it safely.
      out_sharding: None.
    Returns:
      An array of ``shape`` and ``dtype``.
    Example:
      >>> x = hf.random.triangular(key, 0.0, 0.3, 1.0, (100,))
    """
    shape, d, (left, mode, right) = with_params("triangular", key, dtype, out_sharding, shape,
                                                 left=left, mode=mode, right=right)
    return _triangular(key, left, mode, right, shape, d)


@eager(static=("shape", "dtype"))
def _lognormal(key, sigma, shape, dtype):
    key = key_operand(public("lognormal"), key)
    sigma = converted(sigma, dtype)
    scaled = ops.multiply(normal(key, shape, dtype), broadcast_to(sigma, shape))
    return ops.exp(scaled)


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None, *, out_sharding=None):
    """Log-normal samples (jax.random.lognormal): ``exp(sigma * normal)``.

    Args:
      key: uint32[2] key.
      sigma: the normal's standard deviation (default float32 1, as jax: a float32 array, so
        float16/bfloat16 samples need a Python scalar or an array of their dtype).
      shape: result shape; None (default) is sigma's shape.
      dtype: a float or complex dtype (float32 default); sigma must cast to it safely.
      out_sharding: None.
    Returns:
      An array of ``shape`` and ``dtype``.
    Example:
      >>> x = hf.random.lognormal(key, 0.5, (100,))
    """
    shape, d, (sigma,) = with_params("lognormal", key, dtype, out_sharding, shape, allow_complex=True, sigma=sigma)
    return _lognormal(key, sigma, shape, d)


@eager(static=("shape", "dtype"))
def _wald(key, mean, shape, dtype):
    k1, k2 = split2(key_operand(public("wald"), key))
    mean = converted(mean, dtype, shape)
    v = normal_real(k1, shape, dtype)
    z = uniform01(k2, shape, dtype)

    def c(x):
        return splat(x, dtype, shape)
    y = ops.multiply(v, v)
    y_sq = ops.multiply(y, y)
    mean_sq = ops.multiply(mean, mean)
    sqrt_term = ops.sqrt(ops.add(ops.multiply(ops.multiply(c(4), mean), y), ops.multiply(mean_sq, y_sq)))
    x = ops.subtract(ops.add(mean, ops.divide(ops.multiply(mean_sq, y), c(2))),
                     ops.multiply(ops.divide(mean, c(2)), sqrt_term))
    return ops.select(ops.compare(z, ops.divide(mean, ops.add(mean, x)), "LE"), x, ops.divide(mean_sq, x))


def wald(key, mean, shape=None, dtype=None, *, out_sharding=None):
    """Wald (inverse Gaussian) samples of mean ``mean`` (jax.random.wald): Michael, Schucany and
    Haas's transformation of a normal and a uniform (keys from ``split(key)``).

    Args:
      key: uint32[2] key.
      mean: mean(s) > 0, broadcast to ``shape``.
      shape: result shape; None (default) is mean's shape.
      dtype: a float dtype (float32 default); mean must cast to it safely.
      out_sharding: None.
    Returns:
      An array of ``shape`` and ``dtype``.
    Example:
      >>> x = hf.random.wald(key, 1.5, (100,))
    """
    shape, d, (mean,) = with_params("wald", key, dtype, out_sharding, shape, mean=mean)
    return _wald(key, mean, shape, d)


__all__ = ["exponential", "cauchy", "laplace", "logistic", "gumbel", "pareto", "rayleigh", "triangular",
           "lognormal", "wald"]
