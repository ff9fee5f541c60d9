"""numpy's shape functions and indexing, lowered to reshape/transpose/slice/reverse/concatenate."""
from __future__ import annotations

import math
import operator

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy._base import (
    asarray, astype, broadcast_to, normalize_axes, normalize_axis, splat)
from hloforge.frontend.numpy._math import add, less, where
from hloforge.frontend.tracing import Tensor


def reshape(x, shape, order="C", *, copy=None):
    """numpy.reshape (C order; one -1 is inferred). Emits stablehlo.reshape. ``copy`` (numpy 2.1's):
    accepted, without effect (arrays are immutable)."""
    if order != "C":
        raise ValueError(f"reshape: only order='C' is supported, got {order!r}")
    x = asarray(x)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    shape = tuple(operator.index(s) for s in shape)
    if shape.count(-1) > 1:
        raise ValueError(f"reshape: can only specify one unknown dimension, got {shape}")
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or x.size % known:
            raise ValueError(f"reshape: cannot reshape array of size {x.size} into shape {shape}")
        shape = tuple(x.size // known if s == -1 else s for s in shape)
    if x.shape == shape:
        return x
    if any(s < 0 for s in shape) or math.prod(shape) != x.size:
        raise ValueError(f"reshape: cannot reshape array of size {x.size} into shape {shape}")
    return ops.reshape(x, shape)


def ravel(x):
    """numpy.ravel: flatten in C order."""
    return reshape(x, (-1,))


def transpose(x, axes=None):
    """numpy.transpose: reverse the axes, or permute them by ``axes``. Emits stablehlo.transpose."""
    x = asarray(x)
    if axes is None:
        axes = tuple(reversed(range(x.ndim)))
    else:
        axes = tuple(normalize_axis(a, x.ndim) for a in axes)
        if sorted(axes) != list(range(x.ndim)):
            raise ValueError(f"transpose: axes {tuple(axes)} don't match array of rank {x.ndim}")
    if axes == tuple(range(x.ndim)):
        return x
    return ops.transpose(x, axes)


def swapaxes(x, axis1, axis2):
    """numpy.swapaxes."""
    x = asarray(x)
    a, b = normalize_axis(axis1, x.ndim), normalize_axis(axis2, x.ndim)
    perm = list(range(x.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


def moveaxis(x, source, destination):
    """numpy.moveaxis."""
    x = asarray(x)
    src = normalize_axes(source if isinstance(source, (tuple, list)) else [source], x.ndim, "source")
    dst = normalize_axes(destination if isinstance(destination, (tuple, list)) else [destination],
                         x.ndim, "destination")
    if len(src) != len(dst):
        raise ValueError("moveaxis: `source` and `destination` arguments must have the same number of elements")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(x, order)


def expand_dims(x, axis):
    """numpy.expand_dims (int or tuple of axes)."""
    x = asarray(x)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out_ndim = x.ndim + len(axes)
    axes = normalize_axes(tuple(axes), out_ndim)
    it = iter(x.shape)
    shape = tuple(1 if d in axes else next(it) for d in range(out_ndim))
    return reshape(x, shape)


def squeeze(x, axis=None):
    """numpy.squeeze: drop size-1 axes (all, or the given ones, which must have size 1)."""
    x = asarray(x)
    if axis is None:
        axes = tuple(d for d, s in enumerate(x.shape) if s == 1)
    else:
        axes = normalize_axes(axis, x.ndim)
        for a in axes:
            if x.shape[a] != 1:
                raise ValueError(f"squeeze: cannot select an axis to squeeze out which has size not equal "
                                 f"to one (axis {a} of shape {x.shape})")
    return reshape(x, tuple(s for d, s in enumerate(x.shape) if d not in axes))


def concatenate(arrays, axis=0, dtype=None):
    """numpy.concatenate (promoting to a common dtype; ``axis=None`` flattens first)."""
    if not arrays:
        raise ValueError("concatenate: need at least one array to concatenate")
    xs = [asarray(a) for a in arrays]
    common = dtypes.canonical(dtype) if dtype is not None else dtypes.result_type(*xs)
    if axis is None:
        xs, axis = [ravel(x) for x in xs], 0
    if any(x.ndim == 0 for x in xs):
        raise ValueError("concatenate: zero-dimensional arrays cannot be concatenated")
    axis = normalize_axis(axis, xs[0].ndim)
    xs = [astype(x, common) for x in xs]
    _check_concatenable(xs, axis)
    kept = [x for x in xs if x.size]  # (XLA:CPU aborts on a slice reaching into an empty operand)
    if not kept:  # (no elements at all: one of the right shape)
        shape = xs[0].shape[:axis] + (sum(x.shape[axis] for x in xs),) + xs[0].shape[axis + 1:]
        return xs[0] if shape == xs[0].shape else splat(0, common, shape)
    return kept[0] if len(kept) == 1 else ops.concatenate(kept, axis)


def _check_concatenable(xs, axis):
    """numpy's checks: one rank, and equal sizes outside ``axis`` (empty arrays included)."""
    first = xs[0]
    for i, x in enumerate(xs[1:], 1):
        if x.ndim != first.ndim:
            raise ValueError(f"concatenate: all the input arrays must have the same number of dimensions; "
                             f"array 0 has {first.ndim} and array {i} has {x.ndim}")
        for d, (a, b) in enumerate(zip(first.shape, x.shape)):
            if d != axis and a != b:
                raise ValueError(f"concatenate: all the input array dimensions except for the concatenation "
                                 f"axis must match exactly, but along dimension {d}, the array at index 0 has "
                                 f"size {a} and the array at index {i} has size {b}")


def stack(arrays, axis=0):
    """numpy.stack: join along a new axis."""
    xs = [asarray(a) for a in arrays]
    if not xs:
        raise ValueError("stack: need at least one array to stack")
    if any(x.shape != xs[0].shape for x in xs):
        raise ValueError(f"stack: all input arrays must have the same shape, got {[x.shape for x in xs]}")
    axis = normalize_axis(axis, xs[0].ndim + 1)
    return concatenate([expand_dims(x, axis) for x in xs], axis)


def flip(x, axis=None):
    """numpy.flip. Emits stablehlo.reverse."""
    x = asarray(x)
    axes = normalize_axes(axis, x.ndim)
    return ops.reverse(x, axes) if axes else x


# ---------------------------------------------------------------- indexing

def _is_dynamic_index(k) -> bool:
    return isinstance(k, Tensor) and k.shape == () and dtypes.is_integer(k.dtype)


def getitem(x: Tensor, key):
    """``x[key]`` for ints, slices with any step, ``...``, ``None`` and 0-d integer Tensors.

    Static indices become slice/reverse/reshape; a 0-d integer Tensor index becomes a
    ``dynamic_slice`` (negative values wrap once, then the start is clamped as StableHLO does).
    """
    key = key if isinstance(key, tuple) else (key,)
    bools = [i for i, k in enumerate(key) if isinstance(k, (bool, np.bool_))]
    if bools:
        return _bool_scalar_index(x, key, bools)
    for k in key:
        if isinstance(k, (list, np.ndarray)) or (isinstance(k, Tensor) and not _is_dynamic_index(k)):
            raise TypeError(f"index: only integers, slices, ..., None and 0-d integer tensors are "
                            f"supported, got {type(k).__name__}")
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    if consumed > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but {consumed} "
                         "were indexed")
    if any(k is Ellipsis for k in key):
        i = next(i for i, k in enumerate(key) if k is Ellipsis)
        key = key[:i] + (slice(None),) * (x.ndim - consumed) + key[i + 1:]
    else:
        key = key + (slice(None),) * (x.ndim - consumed)

    starts, limits, strides, flips, out_shape, dyn = [], [], [], [], [], []
    dim = 0
    for k in key:
        if k is None:
            out_shape.append(1)
            continue
        n = x.shape[dim]
        if isinstance(k, slice):
            for bound in (k.start, k.stop, k.step):
                if isinstance(bound, Tensor):
                    raise TypeError(f"index: slice {k} has a traced bound {bound}; slices need static "
                                    "Python ints (a result's shape must be known when tracing): for a "
                                    "fixed-size window at a traced start use "
                                    "hloforge.ops.dynamic_slice(x, start_indices, slice_sizes)")
            try:
                start, stop, step = k.indices(n)
            except (TypeError, ValueError) as e:
                raise type(e)(f"index: invalid slice {k} for axis {dim} of size {n}: {e}") from None
            if step > 0:
                count = max(0, -(-(stop - start) // step))
                lo = start
            else:
                count = max(0, -(-(start - stop) // -step))
                flips.append(dim)
                lo = n - 1 - start  # position in the reversed axis
            starts.append(lo)
            limits.append(lo + (count - 1) * abs(step) + 1 if count else lo)
            strides.append(abs(step))
            out_shape.append(count)
        elif isinstance(k, Tensor):
            dyn.append((dim, k))
            starts.append(0)
            limits.append(1)
            strides.append(1)
        else:
            try:
                i = operator.index(k)
            except TypeError:
                raise TypeError(f"index: unsupported index {k!r}") from None
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {dim} with size {n}")
            i %= n
            starts.append(i)
            limits.append(i + 1)
            strides.append(1)
        dim += 1

    out = ops.reverse(x, flips) if flips else x
    if dyn:
        out = _dynamic_index(out, dyn, starts, limits, strides)
    elif (tuple(starts), tuple(limits), tuple(strides)) != ((0,) * x.ndim, x.shape, (1,) * x.ndim):
        out = ops.slice(out, starts, limits, strides)
    return reshape(out, tuple(out_shape))


def _dynamic_index(x, dyn, starts, limits, strides):
    # static parts first (with their strides), then one dynamic_slice over the dynamic dims
    dynamic = {d for d, _ in dyn}
    static_limits = [x.shape[d] if d in dynamic else limits[d] for d in range(x.ndim)]
    static_starts = [0 if d in dynamic else starts[d] for d in range(x.ndim)]
    static_strides = [1 if d in dynamic else strides[d] for d in range(x.ndim)]
    if (tuple(static_starts), tuple(static_limits), tuple(static_strides)) != (
            (0,) * x.ndim, x.shape, (1,) * x.ndim):
        x = ops.slice(x, static_starts, static_limits, static_strides)
    index_dtype = np.dtype(np.int64)
    start_values = [asarray(0, index_dtype)] * x.ndim
    for d, k in dyn:
        k = astype(k, index_dtype)
        start_values[d] = where(less(k, 0), add(k, x.shape[d]), k)
    sizes = [1 if any(d == dd for dd, _ in dyn) else x.shape[d] for d in range(x.ndim)]
    return ops.dynamic_slice(x, start_values, sizes)


def _is_integer_index(k) -> bool:
    return _is_dynamic_index(k) or (isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)))


def _bool_scalar_index(x, key, bools):
    """numpy's ``x[True]`` / ``x[False]``: a bool scalar adds an axis of length 1 or 0. Bools and
    integers then index as one advanced group: its one axis sits where the group is when the group
    is contiguous in the key, else first."""
    keep = all(bool(key[i]) for i in bools)
    group = [i for i, k in enumerate(key) if i in bools or _is_integer_index(k)]
    rest = tuple(k for i, k in enumerate(key) if i not in bools)
    if group == list(range(group[0], group[-1] + 1)):
        at = group[0]  # (no bool comes before it, so it is also its position in ``rest``)
        out = getitem(x, rest[:at] + (None,) + rest[at:])
        consumed = sum(1 for k in rest if k is not None and k is not Ellipsis)
        axis = sum(x.ndim - consumed if k is Ellipsis else 0 if _is_integer_index(k) else 1 for k in rest[:at])
    else:
        out, axis = getitem(x, (None,) + rest), 0
    return out if keep else getitem(out, (slice(None),) * axis + (slice(0, 0),))


__all__ = ["reshape", "ravel", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze",
           "broadcast_to", "concatenate", "stack", "flip", "getitem"]
