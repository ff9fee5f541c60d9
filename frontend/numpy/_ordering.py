"""numpy's sort, argsort, lexsort, sort_complex, partition, argpartition, argmax, argmin, nanargmax,
nanargmin, cumsum, cumprod, nancumsum and nancumprod (over hloforge.lax), with jax.numpy's algorithms
where numpy leaves the result open (partition's order, all-NaN slices)."""
from __future__ import annotations

import operator

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax import ordering as lax_ordering
from hloforge.frontend.numpy import _shape
from hloforge.frontend.numpy._base import asarray, astype, normalize_axis, splat
from hloforge.frontend.numpy._indexing import put_along_axis
from hloforge.frontend.numpy._reductions import all as _all


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


def _isnan(x):
    return ops.compare(x, x, "NE")


def _nan_cumulative(name, base, fill):
    def fn(a, axis=None, dtype=None, out=None):
        x = asarray(a)
        if dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype):
            x = ops.select(_isnan(x), splat(fill, x.dtype, x.shape), x)
        return base(x, axis, dtype, out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"numpy.{name}: {base.__name__} with NaNs counted as {fill}."
    return fn


nancumsum = _nan_cumulative("nancumsum", cumsum, 0)
nancumprod = _nan_cumulative("nancumprod", cumprod, 1)


def _nan_arg(name, base, worst):
    def fn(a, axis=None, out=None, keepdims=None):
        x = asarray(a)
        if not dtypes.is_float(x.dtype):
            return base(x, axis, out, keepdims=bool(keepdims))
        nan = _isnan(x)
        index = base(ops.select(nan, splat(worst, x.dtype, x.shape), x), axis, out, keepdims=bool(keepdims))
        every = _all(nan, axis=axis, keepdims=bool(keepdims))
        return ops.select(every, splat(-1, index.dtype, index.shape), index)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"numpy.{name}: {base.__name__} ignoring NaNs; -1 where a slice is all NaN (as jax.numpy; "
                  "numpy raises).")
    return fn


nanargmax = _nan_arg("nanargmax", argmax, -np.inf)
nanargmin = _nan_arg("nanargmin", argmin, np.inf)


def sort_complex(a):
    """numpy.sort_complex: sorted along the last axis, as a complex array. Emits stablehlo.sort."""
    x = sort(a)
    if dtypes.is_complex(x.dtype):
        return x
    if dtypes.MODE[0] == "numpy":  # (numpy: complex64 from 8- and 16-bit integers, else complex128)
        return astype(x, np.complex64 if x.dtype.kind in "iu" and x.dtype.itemsize <= 2 else np.complex128)
    return astype(x, np.complex128 if x.dtype.itemsize > 4 else np.complex64)


def lexsort(keys, axis=-1):
    """numpy.lexsort: int64 (jax mode: int32) indices sorting by the last key, then the one before,
    ...; one stable stablehlo.sort over every key."""
    if isinstance(keys, (tuple, list)):
        arrays = [asarray(k) for k in keys]
    else:  # (an array: its rows are the keys, a 1-d one is the key)
        stacked = asarray(keys)
        arrays = [stacked[i] for i in range(stacked.shape[0])] if stacked.ndim > 1 else [stacked]
    if not arrays:
        raise TypeError("hloforge.numpy.lexsort: need sequence of keys with len > 0 in lexsort")
    if len({k.shape for k in arrays}) > 1:
        raise ValueError(f"hloforge.numpy.lexsort: all keys need to be the same shape, got {[k.shape for k in arrays]}")
    if arrays[0].ndim == 0:
        return splat(0, _intp(), ())
    ax = normalize_axis(axis, arrays[0].ndim)
    idx = ops.iota(arrays[0].shape, _intp(), ax)
    return lax_ordering.sort((*arrays[::-1], idx), ax, is_stable=True, num_keys=len(arrays))[-1]


def _partition_operand(name, a, kth, axis):
    x = asarray(a)
    if dtypes.is_complex(x.dtype):
        raise NotImplementedError(f"hloforge.numpy.{name} for complex dtype is not implemented (as in jax.numpy)")
    if x.ndim == 0:
        raise np.exceptions.AxisError(axis, 0)
    ax = normalize_axis(axis, x.ndim)
    n = x.shape[ax]
    k = operator.index(kth)
    if not -n <= k < n:
        raise ValueError(f"hloforge.numpy.{name}: kth {k} out of bounds for axis of size {n}")
    return ops.transpose(x, _swap(x.ndim, ax)), ax, k % n


def _swap(ndim, axis):
    perm = list(range(ndim))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return tuple(perm)


def _negated_for_bottom(x):
    """-x, where top_k of it finds x's smallest (unsigned: -(x + 1), jax's trick for 0)."""
    if dtypes.is_unsigned_int(x.dtype):
        x = ops.add(x, splat(1, x.dtype, x.shape))
    return ops.neg(x)


def partition(a, kth, axis=-1):
    """numpy.partition by jax.numpy's algorithm: the kth + 1 smallest (top_k of the negation,
    ascending) then the rest (top_k, descending) along ``axis``; the kth entry is where a sort puts it."""
    x, ax, k = _partition_operand("partition", a, kth, axis)
    bottom = ops.neg(lax_ordering.top_k(_negated_for_bottom(x), k + 1)[0])
    if dtypes.is_unsigned_int(x.dtype):
        bottom = ops.subtract(bottom, splat(1, x.dtype, bottom.shape))
    top = lax_ordering.top_k(x, x.shape[-1] - k - 1)[0]
    out = ops.concatenate([bottom, top], x.ndim - 1)
    return ops.transpose(out, _swap(x.ndim, ax))


def argpartition(a, kth, axis=-1):
    """numpy.argpartition by jax.numpy's algorithm: int32 indices of partition's entries (the
    rest found by top_k of a 0/1 proxy, so repeated values are each taken once)."""
    x, ax, k = _partition_operand("argpartition", a, kth, axis)
    bottom = lax_ordering.top_k(_negated_for_bottom(x), k + 1)[1]
    proxy = put_along_axis(splat(1.0, np.float32, x.shape), bottom, 0.0, -1, inplace=False)
    top = lax_ordering.top_k(proxy, x.shape[-1] - k - 1)[1]
    out = ops.concatenate([bottom, top], x.ndim - 1)
    return ops.transpose(out, _swap(x.ndim, ax))


__all__ = ["sort", "argsort", "lexsort", "sort_complex", "partition", "argpartition", "argmax", "argmin",
           "nanargmax", "nanargmin", "cumsum", "cumprod", "nancumsum", "nancumprod"]
