"""Samplers whose parameters meet the samples with jax's promotion rather than a conversion:
rademacher, maxwell, double_sided_maxwell, weibull_min, generalized_normal, ball.

jax computes ``pow(-log1p(-u), 1 / concentration) * scale`` and the like on its jit arguments,
so a Python scalar parameter is a weak float32 (float64 with x64) that takes the samples' dtype,
while an array parameter promotes with them (a float32 ``scale`` makes float16 samples float32).
``_params.jax_binary`` applies that rule to each operation.
"""
from __future__ import annotations

import operator

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy._base import splat
from hloforge.frontend.random._continuous import exponential_impl, uniform01
from hloforge.frontend.random._eager import eager
from hloforge.frontend.random._gamma import gamma_impl
from hloforge.frontend.random._keys import key_operand, shape_tuple, split2
from hloforge.frontend.random._params import (
    float_dtype, jax_binary, key_arg, no_sharding, param, public, shape_of, tensor, weak_dtype)
from hloforge.frontend.random._samplers import F32, I32, normal_real
from hloforge.frontend.tracing import Tensor, as_tensor

def _sum_last(x: Tensor) -> Tensor:
    """jnp.sum(x, -1): float16/bfloat16 summed in float32, as jax."""
    wide = x if x.dtype.itemsize >= 4 else ops.convert(x, F32)
    out = ops.reduce(wide, 0, (x.ndim - 1,), "add")
    return out if out.dtype == x.dtype else ops.convert(out, x.dtype)


# ---------------------------------------------------------------- rademacher

def rademacher_impl(key: Tensor, shape, dtype) -> Tensor:
    """jax's ``_rademacher``: ``2 * bernoulli(key, 0.5, shape) - 1`` in ``dtype`` (the Python 0.5 is
    float32, float64 for a 64-bit dtype: jax with x64, as for every weak scalar here)."""
    p_dtype = weak_dtype(dtype)
    u = uniform01(key, shape, p_dtype)
    b = ops.convert(ops.compare(u, splat(0.5, p_dtype, shape), "LT"), dtype)
    return ops.subtract(ops.multiply(splat(2, dtype, shape), b), splat(1, dtype, shape))


@eager(static=("shape", "dtype"))
def _rademacher(key, shape, dtype):
    return rademacher_impl(key_operand(public("rademacher"), key), shape, dtype)


def rademacher(key, shape=(), dtype=None, *, out_sharding=None):
    """Random signs, -1 or 1 with probability 1/2 each (jax.random.rademacher): ``2 b - 1`` of a
    ``bernoulli(key, 0.5, shape)`` ``b``.

    Args:
      key: uint32[2] key.
      shape: result shape (default ``()``).
      dtype: an integer or float dtype (int32 default, jax's with x64 off).
      out_sharding: None (sharding is hf.jit's).
    Returns:
      An array of ``shape`` and ``dtype``.
    Example:
      >>> s = hf.random.rademacher(key, (8,))
    """
    name = public("rademacher")
    key_arg(name, key)
    d = I32 if dtype is None else dtypes.canonical(dtype)
    if not (dtypes.is_integer(d) or dtypes.is_float(d)):
        raise ValueError(f"{name}: dtype must be an integer or float dtype, got {d}")
    no_sharding(name, out_sharding)
    return _rademacher(key, shape_tuple(name, shape), d)


# ---------------------------------------------------------------- maxwell

def maxwell_impl(key: Tensor, shape, dtype) -> Tensor:
    """jax's ``_maxwell``: the norm of 3 normals, ``sqrt(sum(x * x, -1))``."""
    x = normal_real(key, tuple(shape) + (3,), dtype)
    return ops.sqrt(_sum_last(ops.multiply(x, x)))


@eager(static=("shape", "dtype"))
def _maxwell(key, shape, dtype):
    return maxwell_impl(key_operand(public("maxwell"), key), shape, dtype)


def maxwell(key, shape=(), dtype=None, *, out_sharding=None):
    """One-sided Maxwell samples (jax.random.maxwell): the Euclidean norm of three standard normals
    (``normal(key, shape + (3,))``).

    Args:
      key: uint32[2] key.
      shape: result shape (default ``()``).
      dtype: a float dtype (float32 default).
      out_sharding: None.
    Returns:
      An array of ``shape`` and ``dtype``.
    Example:
      >>> m = hf.random.maxwell(key, (100,))
    """
    name = public("maxwell")
    key_arg(name, key)
    d = float_dtype(name, dtype)
    no_sharding(name, out_sharding)
    return _maxwell(key, shape_tuple(name, shape), d)


@eager(static=("shape", "dtype", "weak"))
def _double_sided_maxwell(key, loc, scale, shape, dtype, weak):
    maxwell_key, sign_key = split2(key_operand(public("double_sided_maxwell"), key))
    rvs = maxwell_impl(maxwell_key, shape, dtype)
    sign = rademacher_impl(sign_key, shape, dtype)
    out, out_weak = ops.multiply(sign, rvs), False
    out, out_weak = jax_binary(ops.multiply, out, out_weak, tensor(scale), weak[1])
    return jax_binary(ops.add, out, out_weak, tensor(loc), weak[0])[0]


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell samples (jax.random.double_sided_maxwell): ``sign * maxwell * scale + loc``
    (a maxwell and a rademacher sample from ``split(key)``).

    As in jax, the samples have shape ``shape + broadcast(loc, scale).shape`` (``shape=()`` means
    the parameters' shape, twice), and array parameters promote with the samples' dtype.

    Args:
      key: uint32[2] key.
      loc, scale: location and scale (scalars, arrays or Tensors).
      shape: the leading shape (default ``()``).
      dtype: a float dtype (float32 default).
    Returns:
      An array of shape ``shape + params_shape``.
    Example:
      >>> x = hf.random.double_sided_maxwell(key, 0.0, 1.0, (100,))
    """
    name = public("double_sided_maxwell")
    key_arg(name, key)
    d = float_dtype(name, dtype)
    shape = shape_tuple(name, shape)
    (loc, loc_weak), (scale, scale_weak) = param(name, "loc", loc, d), param(name, "scale", scale, d)
    try:
        params_shape = tuple(np.broadcast_shapes(shape_of(loc), shape_of(scale)))
    except ValueError:
        raise ValueError(f"{name}: loc shape {shape_of(loc)} and scale shape {shape_of(scale)} cannot be broadcast "
                         "together") from None
    shape = (shape or params_shape) + params_shape
    return _double_sided_maxwell(key, loc, scale, shape, d, (loc_weak, scale_weak))


# ---------------------------------------------------------------- weibull_min

@eager(static=("shape", "dtype", "weak"))
def _weibull_min(key, scale, concentration, shape, dtype, weak):
    u = uniform01(key_operand(public("weibull_min"), key), shape, dtype)
    x = ops.neg(ops.log1p(ops.neg(u)))
    inv, inv_weak = _inverse(tensor(concentration), weak[1])
    out, out_weak = jax_binary(ops.power, x, False, inv, inv_weak)
    return jax_binary(ops.multiply, out, out_weak, tensor(scale), weak[0])[0]


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull samples (jax.random.weibull_min): the inverse CDF ``(-log1p(-u))**(1/concentration) * scale``.

    The samples have ``shape`` broadcast with the parameters'; array parameters promote with the
    samples' dtype, as in jax.

    Args:
      key: uint32[2] key.
      scale, concentration: parameters > 0 (scalars, arrays or Tensors).
      shape: the uniforms' shape (default ``()``).
      dtype: a float dtype (float32 default).
    Returns:
      An array of the broadcast shape.
    Example:
      >>> w = hf.random.weibull_min(key, 1.0, 1.5, (100,))
    """
    name = public("weibull_min")
    key_arg(name, key)
    d = float_dtype(name, dtype)
    (scale, scale_weak), (conc, conc_weak) = param(name, "scale", scale, d), param(name, "concentration",
                                                                                  concentration, d)
    shape = shape_tuple(name, shape)
    try:
        np.broadcast_shapes(shape, shape_of(scale), shape_of(conc))
    except ValueError:
        raise ValueError(f"{name}: shape {shape}, scale shape {shape_of(scale)} and concentration shape "
                         f"{shape_of(conc)} cannot be broadcast together") from None
    return _weibull_min(key, scale, conc, shape, d, (scale_weak, conc_weak))


# ---------------------------------------------------------------- generalized normal, ball

def _inverse(p: Tensor, weak: bool):
    """jax's ``1 / p`` (true division: integers promote to the default float)."""
    if not dtypes.is_inexact(p.dtype):
        p = ops.convert(p, F32)
    return jax_binary(ops.divide, as_tensor(np.ones((), p.dtype)), True, p, weak)


def generalized_normal_impl(key: Tensor, p: Tensor, p_weak: bool, shape, dtype) -> Tensor:
    """jax's ``_generalized_normal``: ``r * g**(1/p)`` for ``g ~ Gamma(1/p)`` and a random sign ``r``."""
    k0, k1 = split2(key)
    inv, inv_weak = _inverse(p, p_weak)
    g = gamma_impl(k0, inv, shape, dtype)
    r = rademacher_impl(k1, shape, dtype)
    scaled, scaled_weak = jax_binary(ops.power, g, False, inv, inv_weak)
    return jax_binary(ops.multiply, r, False, scaled, scaled_weak)[0]


@eager(static=("shape", "dtype", "weak"))
def _generalized_normal(key, p, shape, dtype, weak):
    key = key_operand(public("generalized_normal"), key)
    return generalized_normal_impl(key, tensor(p), weak, shape, dtype)


def generalized_normal(key, p, shape=(), dtype=None, *, out_sharding=None):
    """Generalized normal samples, density proportional to ``exp(-|x|**p)`` (jax.random.generalized_normal):
    ``r * g**(1/p)`` for ``g ~ Gamma(1/p)`` and a rademacher sign ``r`` (keys from ``split(key)``).

    Args:
      key: uint32[2] key.
      p: the shape parameter > 0 (a Python scalar, or an array/Tensor that broadcasts to ``shape``).
      shape: result shape (default ``()``).
      dtype: a float dtype (float32 default).
      out_sharding: None.
    Returns:
      An array of ``shape`` and ``dtype``.
    Example:
      >>> x = hf.random.generalized_normal(key, 1.5, (100,))
    """
    name = public("generalized_normal")
    key_arg(name, key)
    shape = shape_tuple(name, shape)
    d = float_dtype(name, dtype)
    no_sharding(name, out_sharding)
    p, weak = param(name, "p", p, d)
    return _generalized_normal(key, p, shape, d, weak)


@eager(static=("d", "shape", "dtype", "weak"))
def _ball(key, p, d, shape, dtype, weak):
    k1, k2 = split2(key_operand(public("ball"), key))
    p = tensor(p)
    g = generalized_normal_impl(k1, p, weak, tuple(shape) + (d,), dtype)
    e = exponential_impl(k2, shape, dtype)
    powered, powered_weak = jax_binary(ops.power, ops.abs(g), False, p, weak)
    total, total_weak = jax_binary(ops.add, _sum_last(powered), powered_weak, e, False)
    inv, inv_weak = _inverse(p, weak)
    radius, radius_weak = jax_binary(ops.power, total, total_weak, inv, inv_weak)
    radius = ops.reshape(radius, radius.shape + (1,))
    return jax_binary(ops.divide, g, False, radius, radius_weak)[0]


def ball(key, d, p=2, shape=(), dtype=None, *, out_sharding=None):
    """Uniform samples from the unit Lp ball in ``d`` dimensions (jax.random.ball): generalized
    normals ``g`` (``d`` per sample) and an exponential ``e``, ``g / (sum(|g|**p) + e)**(1/p)``.

    Args:
      key: uint32[2] key.
      d: the dimension, a non-negative int.
      p: the norm's p > 0 (default 2).
      shape: the batch shape (default ``()``).
      dtype: a float dtype (float32 default).
      out_sharding: None.
    Returns:
      An array of shape ``shape + (d,)``.
    Example:
      >>> x = hf.random.ball(key, 3, 2, (100,))
    """
    name = public("ball")
    key_arg(name, key)
    shape = shape_tuple(name, shape)
    dt = float_dtype(name, dtype)
    try:
        d = operator.index(d)
    except TypeError:
        raise TypeError(f"{name}: d must be a concrete int (the dimension), got {d!r}") from None
    if d < 0:
        raise ValueError(f"{name}: d must be non-negative, got {d}")
    no_sharding(name, out_sharding)
    p, weak = param(name, "p", p, dt)
    return _ball(key, p, d, shape, dt, weak)


__all__ = ["rademacher", "maxwell", "double_sided_maxwell", "weibull_min", "generalized_normal", "ball"]
