"""jax.nn's functions over axes: softmax, log_softmax, logsumexp, logmeanexp, standardize, one_hot.

They follow jax's definitions op for op, with jax.numpy's reductions: ``where=`` masks
reductions (masked elements take the reduction's identity), float16 and bfloat16 sums
accumulate in float32, and the max subtracted for stability is held constant under
differentiation (stop_gradient), as in jax.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend import numpy as hnp
from hloforge.frontend.lax.autodiff import stop_gradient
from hloforge.frontend.nn.activations import real
from hloforge.frontend.numpy._base import (
    asarray, astype, broadcast_to, normalize_axes, normalize_axis, splat, ufunc_dtypes)

F32 = np.dtype(np.float32)


# ---------------------------------------------------------------- jax.numpy's masked reductions

def _keep(out, shape, axes, keepdims):
    if not keepdims:
        return out
    return ops.reshape(out, tuple(1 if d in axes else s for d, s in enumerate(shape)))


def _mask(where, shape):
    """``where`` as a bool Tensor of ``shape`` (None stays None)."""
    if where is None:
        return None
    return broadcast_to(astype(asarray(where), np.bool_), shape)


def _reduce(x, axes, body, init):
    return ops.reduce(x, np.array(init, x.dtype), axes, body) if axes else x


def _sum(x, axes, keepdims=False, where=None, dtype=None):
    """jnp.sum(x, axes, dtype, keepdims, where): masked elements are 0; 16-bit floats add in float32."""
    out_dtype = x.dtype if dtype is None else np.dtype(dtype)
    acc = F32 if out_dtype in (np.float16, dtypes.bfloat16) else out_dtype
    x = astype(x, acc)
    if where is not None:
        x = ops.select(where, x, splat(0, acc, x.shape))
    return astype(_keep(_reduce(x, axes, "add", 0), x.shape, axes, keepdims), out_dtype)


def _max(x, axes, keepdims=False, where=None, initial=-np.inf):
    """jnp.max(x, axes, keepdims=keepdims, where=where, initial=initial)."""
    if where is not None:
        x = ops.select(where, x, splat(initial, x.dtype, x.shape))
    out = _keep(_reduce(x, axes, "max", -np.inf), x.shape, axes, keepdims)
    return ops.maximum(splat(initial, x.dtype, out.shape), out)


def _count(shape, axes, keepdims, where, dtype):
    """jax's ``_count``: the number of elements reduced (masked: the sum of the mask)."""
    if where is None:
        return splat(math.prod(shape[a] for a in axes), dtype, ())
    return _sum(where, axes, keepdims, dtype=dtype)


def _mean(x, axes, keepdims=False, where=None):
    """jnp.mean: floats keep their dtype (16-bit floats compute in float32), integers average in
    float64 (hloforge.numpy's mean)."""
    out_dtype = x.dtype if dtypes.is_inexact(x.dtype) else np.dtype(np.float64)
    acc = F32 if out_dtype in (np.float16, dtypes.bfloat16) else out_dtype
    total = _sum(x, axes, keepdims, where, dtype=acc)
    count = _count(x.shape, axes, keepdims, where, acc)
    return astype(ops.divide(total, broadcast_to(count, total.shape)), out_dtype)


def _float_or_int(name, x):
    """Integers convert to the float dtype numpy's exp gives them, so ``x - max`` cannot wrap."""
    x = asarray(x)
    if x.dtype == np.bool_ or dtypes.is_complex(x.dtype):
        raise TypeError(f"hloforge.nn.{name}: needs an integer or float tensor, got {x.dtype}")
    if dtypes.is_integer(x.dtype):
        x = astype(x, ufunc_dtypes(np.exp, x.dtype)[1])
    return x


# ---------------------------------------------------------------- softmax and its relatives

def softmax(x, axis=-1, where=None):
    """exp(x - max) / sum(exp(x - max)) along ``axis`` (jax.nn.softmax).

    Emits stablehlo.reduce (max, then add; float16/bfloat16 add in float32), subtract,
    exponential, divide; the max is held constant under differentiation, as in jax.

    Args:
      x: integer or float input (integers convert to the float dtype numpy's exp gives them).
      axis: int, tuple of ints or None (all axes).
      where: optional bool mask broadcastable to ``x``: only those elements take part; the
        others are 0 in the result.
    Returns:
      An array of ``x``'s shape.
    Example:
      >>> hf.nn.softmax(logits, where=mask)
    """
    x = _float_or_int("softmax", x)
    axes = normalize_axes(axis, x.ndim)
    mask = _mask(where, x.shape)
    x_max = _max(x, axes, True, mask)
    x_safe = x if mask is None else ops.select(mask, x, splat(-np.inf, x.dtype, x.shape))
    unnormalized = hnp.exp(x_safe - stop_gradient(x_max))
    result = unnormalized / _sum(unnormalized, axes, True, mask)
    return result if mask is None else ops.select(mask, result, splat(0, x.dtype, x.shape))


def log_softmax(x, axis=-1, where=None):
    """x - max - log(sum(exp(x - max))) along ``axis`` (jax.nn.log_softmax).

    Emits stablehlo.reduce (max, add), subtract, exponential, log; the max is held constant
    under differentiation, as in jax.

    Args:
      x: integer or float input.
      axis: int, tuple of ints or None (all axes).
      where: optional bool mask broadcastable to ``x``; masked-out elements are -inf.
    Returns:
      An array of ``x``'s shape.
    Example:
      >>> hf.nn.log_softmax(logits, axis=-1)
    """
    x = _float_or_int("log_softmax", x)
    axes = normalize_axes(axis, x.ndim)
    mask = _mask(where, x.shape)
    x_max = _max(x, axes, True, mask)
    x_safe = x if mask is None else ops.select(mask, x, splat(-np.inf, x.dtype, x.shape))
    shifted = x_safe - stop_gradient(x_max)
    result = shifted - hnp.log(_sum(hnp.exp(shifted), axes, True, mask))
    return result if mask is None else ops.select(mask, result, splat(-np.inf, x.dtype, x.shape))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over ``axis``, without overflow (jax.nn.logsumexp).

    The largest finite real part (0 if none) is subtracted before exp and added back after log
    (held constant under differentiation, as in jax), so infinities and NaN come out as in jax.

    Args:
      a: input (integers and bools convert to float; complex is supported).
      axis: int, tuple of ints or None (default: all axes).
      b: optional scale factors broadcastable with ``a``; where b == 0 the term is left out.
      keepdims: keep the reduced axes with size 1.
      return_sign: also return the sign of the sum (then the result is log |sum|).
      where: optional bool mask broadcastable to ``a``: the elements to include.
    Returns:
      The reduction, or ``(result, sign)`` when ``return_sign``. With ``b`` and a negative sum
      the result is NaN (unless ``return_sign``).
    Example:
      >>> hf.nn.logsumexp(x, axis=-1, keepdims=True)
    """
    a = asarray(a)
    if where is not None:
        a = hnp.where(where, a, 0)
    if b is not None:
        a, b = _inexact_pair(a, b)
        a = hnp.where(b != 0, a, -np.inf)
        b = broadcast_to(b, a.shape)
    else:
        a = _inexact_one(a)
    axes = normalize_axes(axis, a.ndim)
    mask = _mask(where, a.shape)
    real = ops.real(a) if dtypes.is_complex(a.dtype) else a
    amax = _max(real, axes, keepdims, mask)
    amax = stop_gradient(ops.select(ops.is_finite(amax), amax, splat(0, amax.dtype, amax.shape)))
    kept = amax if keepdims else ops.reshape(amax, tuple(1 if d in axes else s for d, s in enumerate(a.shape)))
    exp_a = ops.exp(ops.subtract(a, broadcast_to(astype(kept, a.dtype), a.shape)))
    if b is not None:
        exp_a = ops.multiply(exp_a, b)
    sumexp = _sum(exp_a, axes, keepdims, mask)
    sign = ops.sign(sumexp)
    if return_sign or not dtypes.is_complex(a.dtype):
        sumexp = ops.abs(sumexp)
    out = ops.add(ops.log(sumexp), astype(amax, sumexp.dtype))
    if return_sign:
        return out, sign
    if b is not None and not dtypes.is_complex(out.dtype):
        out = ops.select(ops.compare(sign, splat(0, sign.dtype, sign.shape), "LT"),
                         splat(np.nan, out.dtype, out.shape), out)
    return out


def _inexact_one(a):
    if dtypes.is_inexact(a.dtype):
        return a
    return astype(a, ufunc_dtypes(np.exp, a.dtype)[1])


def _inexact_pair(a, b):
    """jax's promote_args_inexact(a, b): a common dtype, made inexact."""
    a, b = asarray(a), asarray(b)
    common = dtypes.result_type(a, b)
    if not dtypes.is_inexact(common):
        common = ufunc_dtypes(np.exp, common)[1]
    return astype(a, common), astype(b, common)


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """log(mean(exp(x))) over ``axis`` = logsumexp(x) - log(n) (jax.nn.logmeanexp).

    Args:
      x: input.
      axis: int, tuple of ints or None (all axes).
      where: optional bool mask: the elements to include (n counts them).
      keepdims: keep the reduced axes with size 1.
    Returns:
      The reduction.
    Example:
      >>> hf.nn.logmeanexp(log_weights, axis=0)
    """
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    shape = asarray(x).shape
    axes = normalize_axes(axis, len(shape))
    count = _count(shape, axes, keepdims, _mask(where, shape), lse.dtype)
    return lse - hnp.log(broadcast_to(count, lse.shape))


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *, algorithm="fast"):
    """(x - mean) / sqrt(variance + epsilon) over ``axis`` (jax.nn.standardize).

    Emits stablehlo.reduce (add), divide, multiply, subtract, maximum, rsqrt.

    Args:
      x: input.
      axis: int, tuple of ints or None (all axes); default the last.
      mean: optional mean to use (default: x's mean over ``axis``, kept dims).
      variance: optional variance to use (default: x's variance over ``axis``).
      epsilon: added to the variance (default 1e-5).
      where: optional bool mask: the elements the mean and variance are computed from.
      algorithm: "fast" (mean(x**2) - mean(x)**2, clipped at 0; jax's default) or "stable"
        (mean((x - mean)**2)).
    Returns:
      An array of ``x``'s shape.
    Example:
      >>> hf.nn.standardize(x, axis=(1, 2))
    """
    x = real("standardize", x)
    axes = normalize_axes(axis, x.ndim)
    mask = _mask(where, x.shape)
    if mean is None:
        mean = _mean(x, axes, True, mask)
    if variance is None:
        if algorithm == "stable":
            variance = _mean(hnp.square(hnp.subtract(x, mean)), axes, True, mask)
        elif algorithm == "fast":
            variance = _mean(hnp.square(x), axes, True, mask) - hnp.square(mean)
            variance = hnp.maximum(0, variance)  # (jnp.clip(variance, 0): the fast form can go negative)
        else:
            raise ValueError(f"hloforge.nn.standardize: unknown algorithm {algorithm!r}; expected 'fast' or "
                             "'stable'")
    centered = hnp.subtract(x, mean)
    if dtypes.weak_type(variance) is not None and dtypes.weak_type(epsilon) is not None:
        # (Python scalars stay weakly typed, as in jax: the rsqrt is taken in the result's dtype)
        dtype = centered.dtype if dtypes.is_inexact(centered.dtype) else np.dtype(np.float64)
        shifted = splat(variance + epsilon, dtype, ())
    else:
        shifted = asarray(hnp.add(variance, epsilon))
    return centered * ops.rsqrt(shifted)


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """One-hot encoding of integer indices (jax.nn.one_hot): ``x[..., None] == arange(num_classes)``
    along a new axis ``axis`` (stablehlo.iota, compare, convert). Indices outside
    [0, num_classes) give all zeros.

    Args:
      x: integer indices (float indices are compared as they are, as jax does).
      num_classes: a non-negative int.
      dtype: the result dtype (default float32, jax's).
      axis: where the new axis goes (default -1, last); an int.
    Returns:
      An array of shape ``x.shape`` with ``num_classes`` inserted at ``axis``.
    Example:
      >>> hf.nn.one_hot(labels, 10)
    """
    try:
        num_classes = operator.index(num_classes)
    except TypeError:
        raise TypeError(f"hloforge.nn.one_hot: num_classes must be an int, got {num_classes!r}") from None
    if num_classes < 0:
        raise ValueError(f"hloforge.nn.one_hot: num_classes must be non-negative, got {num_classes}")
    if isinstance(axis, str) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"hloforge.nn.one_hot: axis must be an int (named axes are not supported), got {axis!r}")
    x = asarray(x)
    if x.dtype == np.bool_ or dtypes.is_complex(x.dtype):
        raise TypeError(f"hloforge.nn.one_hot: needs integer indices, got {x.dtype}")
    dtype = F32 if dtype is None else dtypes.canonical(dtype)
    pos = normalize_axis(axis, x.ndim + 1)
    shape = x.shape[:pos] + (num_classes,) + x.shape[pos:]
    index = ops.iota(shape, x.dtype, pos)
    wide = ops.broadcast_in_dim(x, shape, tuple(d for d in range(len(shape)) if d != pos))
    return astype(ops.compare(wide, index, "EQ"), dtype)


__all__ = ["softmax", "log_softmax", "logsumexp", "logmeanexp", "standardize", "one_hot"]
