"""numpy's reductions: sum, prod, mean, max, min, any, all (``axis``, ``keepdims``, ``dtype``, ``where``,
``initial``)."""
from __future__ import annotations

import builtins
import functools
import math

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy._base import asarray, astype, broadcast_shapes, broadcast_to, normalize_axes, splat
from hloforge.frontend.numpy._shape import reshape


def _keep(x, out, axes, keepdims):
    if not keepdims:
        return out
    return reshape(out, tuple(1 if d in axes else s for d, s in enumerate(x.shape)))


@functools.lru_cache(maxsize=None)
def _accumulator_dtype(np_reduction, d):
    if d == dtypes.bfloat16:
        return d
    return np_reduction(np.zeros(1, d)).dtype


def _reduce(x, axes, body, init):
    if not axes:
        return x
    return ops.reduce(x, init, axes, body)


def _no_out(name, out):
    if out is not None:
        raise NotImplementedError(f"hloforge.numpy.{name}: out= is not supported (arrays are immutable)")


def _masked(x, where, fill):
    """numpy's ``where=``: ``x`` with the entries the mask (broadcast to x's shape) leaves out
    replaced by ``fill``, the reduction's identity."""
    if where is None:
        return x
    mask = astype(asarray(where), bool)
    if mask.shape != x.shape:
        try:
            fits = broadcast_shapes(mask.shape, x.shape) == x.shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"hloforge.numpy: where mask of shape {mask.shape} does not broadcast to the operand's "
                             f"shape {x.shape}")
        mask = broadcast_to(mask, x.shape)
    return ops.select(mask, x, splat(fill, x.dtype, x.shape))


def _accumulate(name, x, axis, dtype, out, keepdims, initial, where, promote, np_reduction, body, identity):
    _no_out(name, out)
    x = asarray(x)
    axes = normalize_axes(axis, x.ndim)
    if dtype is not None:
        acc = dtypes.canonical(dtype)
    elif not promote and not dtypes.is_bool(x.dtype):
        acc = x.dtype
    else:
        acc = dtypes.narrow(_accumulator_dtype(np_reduction, x.dtype), x.dtype)
    x = _masked(astype(x, acc), where, identity)
    result = _reduce(x, axes, body, np.array(identity, acc))
    if initial is not None:  # (as jax: op(initial, reduction))
        combine = ops.add if body == "add" else ops.multiply
        result = combine(splat(initial, acc, result.shape), result)
    return _keep(x, result, axes, keepdims)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, promote_integers=True):
    """numpy.sum: bool and small integers accumulate in the default int (as numpy; jax's
    ``promote_integers=False`` keeps their dtype); ``where`` masks entries out, ``initial`` is added.
    Emits stablehlo.reduce."""
    return _accumulate("sum", a, axis, dtype, out, keepdims, initial, where, promote_integers, np.sum, "add", 0)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, promote_integers=True):
    """numpy.prod (``where``, ``initial`` as in :func:`sum`). Emits stablehlo.reduce with multiply."""
    return _accumulate("prod", a, axis, dtype, out, keepdims, initial, where, promote_integers, np.prod, "mul", 1)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """numpy.mean: integers average in float64 (jax mode: float32); float16/bfloat16 accumulate in
    float32; ``where`` averages the entries it keeps (their count as the divisor, as jax)."""
    _no_out("mean", out)
    x = asarray(a)
    axes = normalize_axes(axis, x.ndim)
    if dtype is not None:
        out_dtype = dtypes.canonical(dtype)
    elif dtypes.is_inexact(x.dtype):
        out_dtype = x.dtype
    else:
        out_dtype = dtypes.default_float()
    acc = np.dtype(np.float32) if out_dtype in (np.float16, dtypes.bfloat16) else out_dtype
    total = sum(x, axis=axes, dtype=acc, where=where)
    if where is None:
        count = splat(math.prod(x.shape[a] for a in axes), acc, total.shape)
    else:
        count = sum(broadcast_to(astype(asarray(where), bool), x.shape), axis=axes, dtype=acc)
    return _keep(x, astype(ops.divide(total, count), out_dtype), axes, keepdims)


def _extremum(name, body, pick):
    def fn(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        _no_out(name, out)
        x = asarray(a)
        axes = normalize_axes(axis, x.ndim)
        if where is not None and initial is None:
            raise ValueError(f"hloforge.numpy.{name}: reduction operation {pick.__name__} does not have an identity, "
                             "so to use a where mask one has to specify 'initial'")
        if initial is None and builtins.any(x.shape[a] == 0 for a in axes):
            raise ValueError(f"zero-size array to reduction operation {pick.__name__} which has no identity")
        if dtypes.is_complex(x.dtype):
            raise TypeError(f"{name}: complex inputs are not supported")
        if dtypes.is_float(x.dtype):
            init = np.array(-np.inf if body == "max" else np.inf, x.dtype)
        elif x.dtype == np.bool_:
            init = np.array(body == "min")
        else:
            info = np.iinfo(x.dtype)
            init = np.array(info.min if body == "max" else info.max, x.dtype)
        result = _reduce(_masked(x, where, init), axes, body, init)
        if initial is not None:
            combine = ops.maximum if body == "max" else ops.minimum
            result = combine(splat(initial, x.dtype, result.shape), result)
        return _keep(x, result, axes, keepdims)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"numpy.{name}: {body}imum over ``axis`` (NaN-propagating; ``where`` with ``initial``). "
                  "Emits stablehlo.reduce.")
    return fn


max = _extremum("max", "max", np.maximum)
min = _extremum("min", "min", np.minimum)
amax, amin = max, min


def any(a, axis=None, out=None, keepdims=False, *, where=None):
    """numpy.any (``where`` leaves entries out)."""
    _no_out("any", out)
    x = _masked(astype(asarray(a), bool), where, False)
    axes = normalize_axes(axis, x.ndim)
    return _keep(x, _reduce(x, axes, "or", np.array(False)), axes, keepdims)


def all(a, axis=None, out=None, keepdims=False, *, where=None):
    """numpy.all (``where`` leaves entries out)."""
    _no_out("all", out)
    x = _masked(astype(asarray(a), bool), where, True)
    axes = normalize_axes(axis, x.ndim)
    return _keep(x, _reduce(x, axes, "and", np.array(True)), axes, keepdims)
