"""numpy's reductions: sum, prod, mean, max, min (``axis``, ``keepdims``, ``dtype``)."""
from __future__ import annotations

import builtins
import functools
import math

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy._base import asarray, astype, normalize_axes, splat
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


def _accumulate(x, axis, dtype, keepdims, np_reduction, body, identity):
    x = asarray(x)
    axes = normalize_axes(axis, x.ndim)
    acc = dtypes.canonical(dtype) if dtype is not None else dtypes.narrow(_accumulator_dtype(np_reduction, x.dtype), x.dtype)
    x = astype(x, acc)
    return _keep(x, _reduce(x, axes, body, np.array(identity, acc)), axes, keepdims)


def sum(x, axis=None, dtype=None, keepdims=False):
    """numpy.sum: bool and small integers accumulate in the default int (as numpy). Emits stablehlo.reduce."""
    return _accumulate(x, axis, dtype, keepdims, np.sum, "add", 0)


def prod(x, axis=None, dtype=None, keepdims=False):
    """numpy.prod. Emits stablehlo.reduce with multiply."""
    return _accumulate(x, axis, dtype, keepdims, np.prod, "mul", 1)


def mean(x, axis=None, dtype=None, keepdims=False):
    """numpy.mean: integers average in float64 (jax mode: float32); float16/bfloat16 accumulate in float32."""
    x = asarray(x)
    axes = normalize_axes(axis, x.ndim)
    if dtype is not None:
        out_dtype = dtypes.canonical(dtype)
    elif dtypes.is_inexact(x.dtype):
        out_dtype = x.dtype
    else:
        out_dtype = dtypes.default_float()
    acc = np.dtype(np.float32) if out_dtype in (np.float16, dtypes.bfloat16) else out_dtype
    count = math.prod(x.shape[a] for a in axes)
    total = sum(x, axis=axes, dtype=acc)
    out = ops.divide(total, splat(count, acc, total.shape))
    return _keep(x, astype(out, out_dtype), axes, keepdims)


def _extremum(name, body, pick):
    def fn(x, axis=None, keepdims=False):
        x = asarray(x)
        axes = normalize_axes(axis, x.ndim)
        if builtins.any(x.shape[a] == 0 for a in axes):
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
        return _keep(x, _reduce(x, axes, body, init), axes, keepdims)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"numpy.{name}: {body}imum over ``axis`` (NaN-propagating). Emits stablehlo.reduce."
    return fn


max = _extremum("max", "max", np.maximum)
min = _extremum("min", "min", np.minimum)
amax, amin = max, min


def any(x, axis=None, keepdims=False):
    """numpy.any."""
    x = astype(asarray(x), bool)
    axes = normalize_axes(axis, x.ndim)
    return _keep(x, _reduce(x, axes, "or", np.array(False)), axes, keepdims)


def all(x, axis=None, keepdims=False):
    """numpy.all."""
    x = astype(asarray(x), bool)
    axes = normalize_axes(axis, x.ndim)
    return _keep(x, _reduce(x, axes, "and", np.array(True)), axes, keepdims)
