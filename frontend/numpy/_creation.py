"""numpy's array creation: zeros, ones, full (and _like), arange."""
from __future__ import annotations

import math
import operator

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy._base import asarray, astype, broadcast_to, check_device, splat
from hloforge.frontend.tracing import Tensor


_STATIC_HINT = ("the result's shape cannot depend on a run-time value; pass a Python int, or mark the argument "
                "static: hf.jit(f, static_argnums=...)")


def _concrete(what: str, name: str, value):
    """``value`` itself, refused (TypeError) when it is a traced Tensor: a shape-deciding argument."""
    if isinstance(value, Tensor):
        raise TypeError(f"hloforge.numpy.{what}: {name} is a traced {value!r}; {_STATIC_HINT}")
    return value


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    if isinstance(shape, Tensor) or any(isinstance(s, Tensor) for s in shape):
        raise TypeError(f"hloforge.numpy: the shape {shape!r} holds a traced Tensor; {_STATIC_HINT}")
    shape = tuple(operator.index(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    return shape


def full(shape, fill_value, dtype=None, *, device=None):
    """numpy.full: one splat ``stablehlo.constant`` (or a broadcast of a Tensor fill value)."""
    check_device(device, "full")
    shape = _shape(shape)
    if isinstance(fill_value, Tensor):
        v = fill_value if dtype is None else astype(fill_value, dtype)
        return broadcast_to(v, shape)
    python_int = type(fill_value) is int
    if dtype is None:
        # (Python scalars: the default dtype of their kind; 2**63 is uint64, as numpy makes it)
        dtype = dtypes.python_int_dtype(fill_value, "hloforge.numpy.full") if python_int else \
            dtypes.result_type(fill_value)
    dtype = dtypes.canonical(dtype)
    if python_int:
        dtypes.check_scalar_fits(fill_value, dtype, "hloforge.numpy.full")
    if np.ndim(fill_value) != 0:
        return asarray(np.broadcast_to(np.asarray(fill_value, dtype), shape).copy())
    return splat(fill_value, dtype, shape)


def zeros(shape, dtype=float, *, device=None):
    """numpy.zeros (float64 by default; float32 with hf.config.dtypes = "jax")."""
    check_device(device, "zeros")
    return full(shape, 0, dtypes.canonicalize(dtype))


def ones(shape, dtype=float, *, device=None):
    """numpy.ones (float64 by default; float32 with hf.config.dtypes = "jax")."""
    check_device(device, "ones")
    return full(shape, 1, dtypes.canonicalize(dtype))


def full_like(x, fill_value, dtype=None, *, device=None):
    """numpy.full_like."""
    check_device(device, "full_like")
    x = asarray(x)
    return full(x.shape, fill_value, x.dtype if dtype is None else dtype)


def zeros_like(x, dtype=None, *, device=None):
    """numpy.zeros_like."""
    check_device(device, "zeros_like")
    return full_like(x, 0, dtype)


def ones_like(x, dtype=None, *, device=None):
    """numpy.ones_like."""
    check_device(device, "ones_like")
    return full_like(x, 1, dtype)


def arange(start, stop=None, step=1, dtype=None, *, device=None):
    """numpy.arange: ``start + i * step``. Emits stablehlo.iota (plus multiply/add when needed)."""
    check_device(device, "arange")
    if stop is None:
        start, stop = 0, start
    for name, value in (("start", start), ("stop", stop), ("step", step)):
        _concrete("arange", name, value)
    if step == 0:
        raise ValueError("arange: step must not be zero (Maximum allowed size exceeded)")
    out_dtype = dtypes.canonical(dtype) if dtype is not None else dtypes.canonicalize(np.result_type(start, stop, step))
    length = max(0, math.ceil((stop - start) / step))
    if length == 0:
        return splat(0, out_dtype, (0,))
    if dtypes.is_integer(out_dtype) or out_dtype == np.bool_:
        i = ops.iota((length,), out_dtype if out_dtype != np.bool_ else np.int64)
    else:
        i = ops.iota((length,), out_dtype)
    if step != 1:
        i = ops.multiply(i, splat(step, i.dtype, i.shape))
    if start != 0:
        i = ops.add(i, splat(start, i.dtype, i.shape))
    if i.dtype != out_dtype:
        i = ops.convert(i, out_dtype)
    return i
