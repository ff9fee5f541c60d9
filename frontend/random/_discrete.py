"""Counting samplers: geometric, categorical, poisson (jax.random's, op for op).

Poisson is jax's two loops, Knuth's and Hormann's rejection: one ``stablehlo.while`` per method over
the whole sample, drawing fresh uniforms from ``split(key)`` each round until every element is done,
and a select between the methods (both always run, as in jax).
"""
from __future__ import annotations

import operator

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax.control_flow import while_loop
from hloforge.frontend.lax.ordering import argmax, top_k
from hloforge.frontend.numpy._base import broadcast_to, splat
from hloforge.frontend.random._continuous import uniform01
from hloforge.frontend.random._eager import eager
from hloforge.frontend.random._lanes import loop_split, loop_uniform
from hloforge.frontend.random._keys import key_operand, shape_tuple
from hloforge.frontend.random._params import (
    any_true, as_dtype, converted, dtype_of, inexact_dtype, int_dtype, key_arg, no_sharding, param, public,
    result_shape, shape_of, tensor)
from hloforge.frontend.random._samplers import F32, I32, check_shape, finfo, gumbel_impl
from hloforge.frontend.tracing import Tensor

_BOOL = np.dtype(np.bool_)


def _c(value, like: Tensor) -> Tensor:
    return splat(value, like.dtype, like.shape)


def loop_bound(dtype) -> tuple:
    """A rejection loop's counter dtype and jax's bound on it, ``i < max(dtype)`` (``max_iters``),
    capped at the counter's range."""
    counter = np.dtype(np.int64) if np.dtype(dtype).itemsize == 8 else I32
    top = float(finfo(dtype).max) if dtypes.is_float(dtype) else np.iinfo(dtype).max
    return counter, int(min(top, np.iinfo(counter).max))


# ---------------------------------------------------------------- geometric

@eager(static=("shape", "dtype"))
def _geometric(key, p, shape, dtype):
    key = key_operand(public("geometric"), key)
    p = tensor(p)
    u = uniform01(key, shape, p.dtype)
    u = ops.select(ops.compare(u, _c(0, u), "EQ"), _c(1, u), u)
    log_one_minus_p = broadcast_to(ops.log1p(ops.neg(p)), shape)
    g = ops.add(ops.floor(ops.divide(ops.log(u), log_one_minus_p)), _c(1, u))
    return ops.convert(g, dtype)


def geometric(key, p, shape=None, dtype=None, *, out_sharding=None):
    """Geometric samples, the number of trials to the first success (jax.random.geometric):
    ``floor(log(u) / log1p(-p)) + 1``.

    Args:
      key: uint32[2] key.
      p: success probabilities (scalar, array or Tensor); the uniforms have p's float dtype
        (float32 for Python scalars and integers).
      shape: result shape; None (default) is p's shape.
      dtype: an integer dtype (int32 default).
      out_sharding: None.
    Returns:
      An integer array of ``shape``.
    Example:
      >>> n = hf.random.geometric(key, 0.3, (100,))
    """
    name = public("geometric")
    key_arg(name, key)
    d = int_dtype(name, dtype)
    p, weak = param(name, "p", p, d)
    shape = result_shape(name, shape, p)
    no_sharding(name, out_sharding)
    p = as_dtype(p, inexact_dtype(p, weak, d))
    return _geometric(key, p, shape, d)


# ---------------------------------------------------------------- categorical

@eager(static=("axis", "shape", "replace", "mode"))
def _categorical(key, logits, axis, shape, replace, mode):
    key = key_operand(public("categorical"), key)
    logits = tensor(logits)
    ndim = logits.ndim
    batch_shape = tuple(np.delete(logits.shape, axis))
    prefix = tuple(shape[:len(shape) - len(batch_shape)])
    if replace:
        ax = axis - ndim if axis >= 0 else axis
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(ax % ndim, logits.shape[ax])
        g = gumbel_impl(key, prefix + tuple(logits_shape), logits.dtype, mode)
        expanded = ops.reshape(logits, (1,) * len(prefix) + logits.shape)
        return argmax(ops.add(g, broadcast_to(expanded, g.shape)), ax % g.ndim, I32)
    noisy = ops.add(logits, gumbel_impl(key, logits.shape, logits.dtype, mode))
    k = int(np.prod(prefix, dtype=np.int64))
    if k > logits.shape[axis]:
        raise ValueError(f"hloforge.random.categorical: the number of samples without replacement ({k}) cannot "
                         f"exceed the number of categories ({logits.shape[axis]})")
    moved = ops.transpose(noisy, tuple(d for d in range(ndim) if d != axis) + (axis,))
    _, indices = top_k(moved, k)
    perm = (indices.ndim - 1,) + tuple(range(indices.ndim - 1))
    return ops.reshape(ops.transpose(indices, perm), shape)


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None, *, out_sharding=None):
    """Samples of categorical distributions given by unnormalized log-probabilities (jax.random.categorical).

    With replacement: the Gumbel max trick, ``argmax(gumbel + logits)`` along ``axis`` (one
    variadic stablehlo.reduce); without: the Gumbel top-k trick (a stable stablehlo.sort).

    Args:
      key: uint32[2] key.
      logits: log-probabilities (array or Tensor; Python lists are float32).
      axis: the axis of the categories (default -1).
      shape: result shape, broadcast-compatible with the batch shape ``np.delete(logits.shape, axis)``
        (extra leading dims draw more samples); None (default) is the batch shape.
      replace: sample with replacement (default True).
      mode: the Gumbel sampler's "low" (None, default) or "high".
      out_sharding: None.
    Returns:
      An int32 array of ``shape`` (category indices).
    Example:
      >>> i = hf.random.categorical(key, hf.numpy.log(probs), shape=(10,))
    """
    name = public("categorical")
    key_arg(name, key)
    no_sharding(name, out_sharding)
    if mode not in (None, "low", "high"):
        raise ValueError(f"{name}: mode must be None, 'low' or 'high', got {mode!r}")
    if isinstance(logits, (list, tuple)) or dtypes.weak_type(logits) is not None:
        logits = np.asarray(logits)
        logits = logits.astype(F32) if logits.dtype.kind in "biuf" else logits
    value, _ = param(name, "logits", logits, F32)
    if not dtypes.is_float(dtype_of(value)):
        raise TypeError(f"{name}: logits must be floating point, got dtype {dtype_of(value)}")
    logits_shape = shape_of(value)
    ndim = len(logits_shape)
    try:
        index = operator.index(axis)
    except TypeError:
        raise TypeError(f"{name}: axis must be an int, got {axis!r}") from None
    if not -ndim <= index < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for logits of shape {logits_shape}")
    axis = index % ndim
    batch_shape = tuple(np.delete(logits_shape, axis))
    if shape is None:
        shape = batch_shape
    else:
        shape = shape_tuple(name, shape)
        check_shape(name, shape, batch_shape)
    return _categorical(key, value, axis, shape, bool(replace), mode or "low")


# ---------------------------------------------------------------- poisson

def _poisson_knuth(key: Tensor, lam: Tensor, shape, dtype, bound) -> Tensor:
    counter, top = bound

    def cond(carry):
        i, _, _, log_prod = carry
        return ops.and_(any_true(ops.compare(log_prod, ops.neg(lam), "GT")),
                        ops.compare(i, splat(top, counter, ()), "LT"))

    def body(carry):
        i, k, rng, log_prod = carry
        rng, subkey = loop_split(rng, 2)
        k = ops.select(ops.compare(log_prod, ops.neg(lam), "GT"), ops.add(k, _c(1, k)), k)
        u = loop_uniform(subkey, shape, F32)
        return ops.add(i, splat(1, counter, ())), k, rng, ops.add(log_prod, ops.log(u))
    init = (splat(0, counter, ()), splat(0, dtype, shape), key, splat(0, F32, shape))
    k = while_loop(cond, body, init)[1]
    return ops.subtract(k, _c(1, k))


def _poisson_rejection(key: Tensor, lam: Tensor, shape, dtype, bound) -> Tensor:
    counter, top = bound
    log_lam = ops.log(lam)
    b = ops.add(_c(0.931, lam), ops.multiply(_c(2.53, lam), ops.sqrt(lam)))
    a = ops.add(_c(-0.059, lam), ops.multiply(_c(0.02483, lam), b))
    inv_alpha = ops.add(_c(1.1239, lam), ops.divide(_c(1.1328, lam), ops.subtract(b, _c(3.4, lam))))
    v_r = ops.subtract(_c(0.9277, lam), ops.divide(_c(3.6224, lam), ops.subtract(b, _c(2, lam))))

    def cond(carry):
        i, _, accepted, _ = carry
        return ops.and_(any_true(ops.not_(accepted)), ops.compare(i, splat(top, counter, ()), "LT"))

    def body(carry):
        i, k_out, accepted, key = carry
        key, sub0, sub1 = loop_split(key, 3)
        u = ops.subtract(loop_uniform(sub0, shape, lam.dtype), _c(0.5, lam))
        v = loop_uniform(sub1, shape, lam.dtype)
        us = ops.subtract(_c(0.5, u), ops.abs(u))
        k = ops.floor(ops.add(ops.add(ops.multiply(ops.add(ops.divide(ops.multiply(_c(2, a), a), us), b), u), lam),
                              _c(0.43, u)))
        s = ops.log(ops.divide(ops.multiply(v, inv_alpha), ops.add(ops.divide(a, ops.multiply(us, us)), b)))
        t = ops.subtract(ops.add(ops.neg(lam), ops.multiply(k, log_lam)), ops.lgamma(ops.add(k, _c(1, k))))
        accept1 = ops.and_(ops.compare(us, _c(0.07, us), "GE"), ops.compare(v, v_r, "LE"))
        reject = ops.or_(ops.compare(k, _c(0, k), "LT"),
                         ops.and_(ops.compare(us, _c(0.013, us), "LT"), ops.compare(v, us, "GT")))
        accept = ops.or_(accept1, ops.and_(ops.not_(reject), ops.compare(s, t, "LE")))
        return (ops.add(i, splat(1, counter, ())), ops.select(accept, k, k_out), ops.or_(accepted, accept), key)
    init = (splat(0, counter, ()), splat(-1, lam.dtype, shape), splat(False, _BOOL, shape), key)
    return ops.convert(while_loop(cond, body, init)[1], dtype)


@eager(static=("shape", "dtype"))
def _poisson(key, lam, shape, dtype):
    key = key_operand(public("poisson"), key)
    lam = converted(lam, F32, shape)
    use_knuth = ops.or_(ops.compare(lam, lam, "NE"), ops.compare(lam, _c(10, lam), "LT"))
    lam_knuth = ops.select(use_knuth, lam, _c(0.0, lam))
    lam_rejection = ops.select(use_knuth, _c(1e5, lam), lam)
    bound = loop_bound(dtype)
    result = ops.select(use_knuth, _poisson_knuth(key, lam_knuth, shape, dtype, bound),
                        _poisson_rejection(key, lam_rejection, shape, dtype, bound))
    return ops.select(ops.compare(lam, _c(0, lam), "EQ"), splat(0, dtype, shape), result)


def poisson(key, lam, shape=None, dtype=None, *, out_sharding=None):
    """Poisson samples of rate ``lam`` (jax.random.poisson): Knuth's product of uniforms for
    ``lam < 10``, Hormann's transformed rejection above (both loops run; a select picks).

    Args:
      key: uint32[2] key.
      lam: rates >= 0 (scalar, array or Tensor), sampled in float32 as jax does.
      shape: result shape; None (default) is lam's shape.
      dtype: an integer dtype (int32 default).
      out_sharding: None.
    Returns:
      An integer array of ``shape``.
    Example:
      >>> n = hf.random.poisson(key, 4.0, (100,))
    """
    name = public("poisson")
    key_arg(name, key)
    d = int_dtype(name, dtype)
    lam, _ = param(name, "lam", lam, F32)
    shape = shape_of(lam) if shape is None else shape_tuple(name, shape)
    check_shape(name, shape, shape_of(lam))
    no_sharding(name, out_sharding)
    return _poisson(key, lam, shape, d)


__all__ = ["geometric", "categorical", "poisson"]
