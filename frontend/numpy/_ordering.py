"""numpy's sort, argsort, argmax, argmin, cumsum and cumprod (over hloforge.lax)."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax import ordering as lax_ordering
from hloforge.frontend.numpy import _shape
from hloforge.frontend.numpy._base import asarray, astype, normalize_axis


def _intp():
    """The index dtype: numpy's int64 (int32 with hf.config.dtypes = "jax")."""
    return dtypes.default_int()


def _flat_or_axis(a, axis):
    a = asarray(a)
    if axis is None:
        return _shape.ravel(a), 0
    if a.ndim == 0:
        raise np.exceptions.AxisError(axis, 0)
    return a, normalize_axis(axis, a.ndim)


def sort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """numpy.sort (NaN last; ``descending`` as in jax.numpy). Emits stablehlo.sort."""
    if order is not None:
        raise NotImplementedError("sort: order= (structured arrays) is not supported")
    a, axis = _flat_or_axis(a, axis)
    if a.ndim == 0:
        return a
    if descending:
        return ops.reverse(lax_ordering.sort(ops.reverse(a, (axis,)), axis, is_stable=True), (axis,))
    return lax_ordering.sort(a, axis, is_stable=True)


def argsort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """numpy.argsort: int64 (jax mode: int32) indices that sort ``a`` along ``axis`` (stable; NaN last)."""
    if order is not None:
        raise NotImplementedError("argsort: order= (structured arrays) is not supported")
    a, axis = _flat_or_axis(a, axis)
    n = a.shape[axis]
    intp = _intp()
    idx = ops.iota(a.shape, intp, axis)
    if descending:  # stable descending: sort the reversed operand ascending, map indices back, reverse
        _, i = ops.sort([ops.reverse(a, (axis,)), idx], axis, "LT", is_stable=True)
        return ops.reverse(ops.subtract(asarray(np.full(a.shape, n - 1, intp)), i), (axis,))
    _, i = ops.sort([a, idx], axis, "LT", is_stable=True)
    return i


def _arg(name, lax_fn):
    def fn(a, axis=None, out=None, *, keepdims=False):
        if out is not None:
            raise NotImplementedError(f"{name}: out= is not supported (arrays are immutable)")
        x = asarray(a)
        flat, ax = _flat_or_axis(x, axis)
        if flat.shape[ax] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        if dtypes.is_complex(flat.dtype):
            raise TypeError(f"{name}: complex operands are not supported")
        if dtypes.is_bool(flat.dtype):
            flat = astype(flat, np.int8)
        r = lax_fn(flat, ax, _intp())
        if keepdims:
            shape = (1,) * x.ndim if axis is None else tuple(1 if d == ax else n for d, n in enumerate(x.shape))
            r = _shape.reshape(r, shape)
        return r
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"numpy.{name}: int64 (jax mode: int32) index of the first {'largest' if name == 'argmax' else 'smallest'} element (NaN wins)."
    return fn


argmax = _arg("argmax", lax_ordering.argmax)
argmin = _arg("argmin", lax_ordering.argmin)


def _cumulative(name, np_fn, lax_fn):
    def fn(a, axis=None, dtype=None, out=None):
        if out is not None:
            raise NotImplementedError(f"{name}: out= is not supported (arrays are immutable)")
        a, ax = _flat_or_axis(a, axis)
        if dtype is not None:
            acc = dtypes.canonical(dtype)
        elif dtypes.MODE[0] == "jax":  # (jax.numpy keeps the operand's dtype; bools count in int32)
            acc = dtypes.default_int() if dtypes.is_bool(a.dtype) else a.dtype
        else:
            acc = np_fn(np.zeros(1, a.dtype)).dtype
        return lax_fn(astype(a, acc), ax)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"numpy.{name}: running {name[3:]} along ``axis`` (flattened when None), numpy's dtypes."
    return fn


cumsum = _cumulative("cumsum", np.cumsum, lax_ordering.cumsum)
cumprod = _cumulative("cumprod", np.cumprod, lax_ordering.cumprod)

__all__ = ["sort", "argsort", "argmax", "argmin", "cumsum", "cumprod"]
