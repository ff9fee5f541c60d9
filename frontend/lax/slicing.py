"""jax.lax indexing: select, slice and its in-dim forms, dynamic_slice, dynamic_update_slice and
their in-dim forms, gather, index_take and the scatter family, with jax's dimension-number
namedtuples and GatherScatterMode."""
from __future__ import annotations

import builtins
import enum
import operator
from typing import NamedTuple

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax._common import default_fill, lax_operand
from hloforge.frontend.tracing import Tensor, as_tensor

_I32 = np.dtype(np.int32)


class GatherDimensionNumbers(NamedTuple):
    """As jax.lax.GatherDimensionNumbers: the index vectors lie along the last dim of the indices."""
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    """As jax.lax.ScatterDimensionNumbers: the index vectors lie along the last dim of the indices."""
    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


class GatherScatterMode(enum.Enum):
    """What out-of-bounds indices do, as in jax: CLIP clamps them; FILL_OR_DROP fills gathered
    slices with ``fill_value`` and drops scattered updates (the default of the scatters);
    PROMISE_IN_BOUNDS (the default of gather) leaves it to the backend (StableHLO clamps gathers
    and skips scatters)."""
    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3

    @staticmethod
    def from_any(s):
        if isinstance(s, GatherScatterMode):
            return s
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "clip":
            return GatherScatterMode.CLIP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        raise ValueError(f"Unknown gather mode \"{s}\"")


def select(pred, on_true, on_false):
    """jax.lax.select: elementwise ``on_true if pred else on_false`` (same shapes, no broadcasting
    but a 0-d pred); emits ``stablehlo.select``."""
    p, t, f = lax_operand(pred, "select pred"), lax_operand(on_true, "select on_true"), lax_operand(on_false, "select on_false")
    if p.dtype != np.bool_:
        raise TypeError(f"select pred must be boolean type, got {p.dtype}.")
    if t.shape != f.shape or t.dtype != f.dtype:
        raise TypeError(f"select cases must have the same shapes and dtypes, got [{t}, {f}].")
    if p.shape not in ((), t.shape):
        raise TypeError(f"select pred must be scalar or have the same shape as cases, got pred shape "
                        f"{p.shape} for cases of shape {t.shape}.")
    return ops.select(p, t, f)


def slice(operand, start_indices, limit_indices, strides=None):
    """jax.lax.slice: the static slice ``[start:limit:stride]`` per dimension; emits
    ``stablehlo.slice``.

    Args:
      operand: an array.
      start_indices, limit_indices: per dimension, ``0 <= start <= limit <= size``.
      strides: per dimension (None: 1).
    Returns:
      The slice.
    Example:
      >>> y = hf.lax.slice(x, (0, 1), (2, 4), (1, 2))
    """
    x = lax_operand(operand, "hloforge.lax.slice operand")
    start = tuple(operator.index(v) for v in start_indices)
    limit = tuple(operator.index(v) for v in limit_indices)
    strides = (1,) * x.ndim if strides is None else tuple(operator.index(v) for v in strides)
    if not len(start) == len(limit) == len(strides) == x.ndim:
        raise TypeError(f"hloforge.lax.slice: start_indices {start}, limit_indices {limit} and strides {strides} "
                        f"need one entry per dimension of an operand of shape {x.shape}")
    if any(not 0 <= a <= b <= n for a, b, n in zip(start, limit, x.shape)):
        raise TypeError(f"hloforge.lax.slice: need 0 <= start_indices <= limit_indices <= operand shape, got "
                        f"start_indices {start} and limit_indices {limit} for operand shape {x.shape}.")
    if any(v < 1 for v in strides):
        raise TypeError(f"hloforge.lax.slice: strides must be positive, got {strides}")
    return ops.slice(x, start, limit, strides)


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """jax.lax.slice_in_dim: ``slice`` along one ``axis`` (None and negative indices as in jax:
    negative ones count from the end, once); emits ``stablehlo.slice``.

    Args:
      operand: an array.
      start_index, limit_index: ints or None (0, the size).
      stride: the step.
      axis: the dimension.
    Returns:
      The slice.
    Example:
      >>> y = hf.lax.slice_in_dim(x, 1, None, axis=1)
    """
    x = lax_operand(operand, "hloforge.lax.slice_in_dim operand")
    axis = operator.index(axis)
    n = x.shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = n if limit_index is None else operator.index(limit_index)
    start, limit = start + n if start < 0 else start, limit + n if limit < 0 else limit
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return slice(x, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """jax.lax.index_in_dim: ``operand[..., index, ...]`` for a static ``index`` (negative: from
    the end); emits ``stablehlo.slice`` (and a ``reshape`` without ``keepdims``).

    Args:
      operand: an array.
      index: an int in ``[-size, size)``.
      axis: the dimension.
      keepdims: keep the indexed dimension (size 1).
    Returns:
      The slice.
    Example:
      >>> row = hf.lax.index_in_dim(x, -1, 0, keepdims=False)
    """
    x = lax_operand(operand, "hloforge.lax.index_in_dim operand")
    index, axis = operator.index(index), operator.index(axis)
    n = x.shape[axis]
    wrapped = index + n if index < 0 else index
    if not 0 <= wrapped < n:
        raise IndexError(f"hloforge.lax.index_in_dim: index {index} is out of bounds for axis {axis} with size {n}")
    out = slice_in_dim(x, wrapped, wrapped + 1, 1, axis)
    return out if keepdims else ops.reshape(out, x.shape[:axis] + x.shape[axis + 1:])


def _starts(x, start_indices, allow_negative_indices, what):
    if isinstance(start_indices, Tensor):
        if start_indices.ndim != 1:
            raise TypeError(f"{what}: start_indices must be a 1-d Tensor or a sequence, got {start_indices}")
        start_indices = [start_indices[i] for i in range(start_indices.shape[0])]
    start_indices = list(start_indices)
    if len(start_indices) != x.ndim:
        raise ValueError(f"Length of start indices must match number of dimensions of operand; got "
                         f"{len(start_indices)} start indices for an operand of rank {x.ndim}")
    ts = [lax_operand(s, f"{what} start index") for s in start_indices]
    for t in ts:
        if t.shape != () or not dtypes.is_integer(t.dtype):
            raise TypeError(f"{what}: start indices must be 0-d integers, got {t}")
    common = dtypes.result_type(*ts) if len({t.dtype for t in ts}) > 1 else (ts[0].dtype if ts else _I32)
    ts = [ops.convert(t, common) if t.dtype != common else t for t in ts]
    allow = (allow_negative_indices,) * x.ndim if isinstance(allow_negative_indices, bool) else tuple(allow_negative_indices)
    out = []
    for t, n, neg in zip(ts, x.shape, allow):
        if neg and dtypes.is_signed_int(t.dtype):
            t = ops.select(ops.compare(t, as_tensor(0, t.dtype), "LT"), ops.add(t, as_tensor(n, t.dtype)), t)
        out.append(t)
    return out


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """jax.lax.dynamic_slice: negative starts count from the end, then starts are clamped so that
    the slice fits; emits ``stablehlo.dynamic_slice``."""
    x = lax_operand(operand, "dynamic_slice operand")
    sizes = tuple(operator.index(s) for s in slice_sizes)
    return ops.dynamic_slice(x, _starts(x, start_indices, allow_negative_indices, "dynamic_slice"), sizes)


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """jax.lax.dynamic_update_slice: ``update`` written at ``start_indices`` (negative starts count
    from the end, then clamped so that it fits); emits ``stablehlo.dynamic_update_slice``."""
    x = lax_operand(operand, "dynamic_update_slice operand")
    u = lax_operand(update, "dynamic_update_slice update")
    if u.dtype != x.dtype:
        raise TypeError(f"dynamic_update_slice update and operand must have the same dtype, got {u.dtype} "
                        f"and {x.dtype}")
    return ops.dynamic_update_slice(x, u, _starts(x, start_indices, allow_negative_indices, "dynamic_update_slice"))


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *, allow_negative_indices=True):
    """jax.lax.dynamic_index_in_dim: ``operand[..., index, ...]`` along ``axis``."""
    x = lax_operand(operand, "dynamic_index_in_dim operand")
    axis = operator.index(axis)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    axis %= x.ndim
    i = lax_operand(index, "dynamic_index_in_dim index")
    starts = [as_tensor(0, i.dtype) if d != axis else i for d in range(x.ndim)]
    sizes = tuple(1 if d == axis else n for d, n in enumerate(x.shape))
    out = dynamic_slice(x, starts, sizes, allow_negative_indices=allow_negative_indices)
    return out if keepdims else ops.reshape(out, x.shape[:axis] + x.shape[axis + 1:])


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *, allow_negative_indices=True):
    """jax.lax.dynamic_slice_in_dim."""
    x = lax_operand(operand, "dynamic_slice_in_dim operand")
    axis %= x.ndim
    i = lax_operand(start_index, "dynamic_slice_in_dim start_index")
    starts = [as_tensor(0, i.dtype) if d != axis else i for d in range(x.ndim)]
    sizes = tuple(slice_size if d == axis else n for d, n in enumerate(x.shape))
    return dynamic_slice(x, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *, allow_negative_indices=True):
    """jax.lax.dynamic_update_slice_in_dim: ``update`` written at ``start_index`` along ``axis``
    (0 elsewhere); emits ``stablehlo.dynamic_update_slice``.

    Args:
      operand: an array.
      update: an array of the operand's rank and dtype.
      start_index: an int or 0-d integer array (negative: from the end, unless
        ``allow_negative_indices=False``), clamped so the update fits.
      axis: the dimension.
    Returns:
      The updated array.
    Example:
      >>> y = hf.lax.dynamic_update_slice_in_dim(x, rows, i, 0)
    """
    x = lax_operand(operand, "hloforge.lax.dynamic_update_slice_in_dim operand")
    axis = operator.index(axis)
    i = lax_operand(start_index, "hloforge.lax.dynamic_update_slice_in_dim start_index")
    starts = [as_tensor(0, i.dtype) if d != axis else i for d in range(x.ndim)]
    allow = [d == axis and allow_negative_indices for d in range(x.ndim)]
    return dynamic_update_slice(x, update, starts, allow_negative_indices=allow)


def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    """jax.lax.dynamic_update_index_in_dim: ``update`` (with or without the indexed dimension)
    written at ``index`` along ``axis``; emits ``stablehlo.dynamic_update_slice``.

    Args:
      operand: an array.
      update: an array of rank ``operand.ndim`` or ``operand.ndim - 1``.
      index: an int or 0-d integer array.
      axis: the dimension.
    Returns:
      The updated array.
    Example:
      >>> y = hf.lax.dynamic_update_index_in_dim(x, row, i, 0)
    """
    x = lax_operand(operand, "hloforge.lax.dynamic_update_index_in_dim operand")
    u = lax_operand(update, "hloforge.lax.dynamic_update_index_in_dim update")
    axis = operator.index(axis) % builtins.max(x.ndim, 1)
    if u.ndim + 1 == x.ndim:
        u = ops.reshape(u, u.shape[:axis] + (1,) + u.shape[axis:])
    elif u.ndim != x.ndim:
        raise TypeError(f"hloforge.lax.dynamic_update_index_in_dim: update of rank {u.ndim} for an operand of rank "
                        f"{x.ndim}; it needs rank {x.ndim} or {x.ndim - 1}")
    return dynamic_update_slice_in_dim(x, u, index, axis, allow_negative_indices=allow_negative_indices)


# ---------------------------------------------------------------- gather

def _in_bounds(indices, index_map, limits):
    """bool per index vector: every entry i of it is in [0, limit] for its operand dim."""
    ok = None
    for k, o in enumerate(index_map):
        entry = ops.slice(indices, (0,) * (indices.ndim - 1) + (k,), indices.shape[:-1] + (k + 1,))
        entry = ops.reshape(entry, indices.shape[:-1])
        shape = indices.shape[:-1]
        lo = ops.compare(entry, ops.broadcast_in_dim(as_tensor(np.zeros((), indices.dtype)), shape, ()), "GE")
        hi = ops.compare(entry, ops.broadcast_in_dim(as_tensor(np.asarray(limits[o], indices.dtype)), shape, ()), "LE")
        both = ops.and_(lo, hi)
        ok = both if ok is None else ops.and_(ok, both)
    return ok


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """jax.lax.gather; emits ``stablehlo.gather`` (plus a select for ``mode="fill"``)."""
    x = lax_operand(operand, "gather operand")
    idx = lax_operand(start_indices, "gather start_indices")
    if not isinstance(dimension_numbers, GatherDimensionNumbers):
        raise TypeError(f"gather: dimension_numbers must be a GatherDimensionNumbers, got "
                        f"{type(dimension_numbers).__name__}")
    if not dtypes.is_integer(idx.dtype):
        raise TypeError(f"gather: start_indices must have an integer type, got {idx.dtype}")
    if idx.ndim == 0:
        raise TypeError("gather: start_indices must have rank >= 1 (the last dim holds the index vectors)")
    mode = GatherScatterMode.from_any(GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else mode)
    dn = dimension_numbers
    sizes = tuple(operator.index(s) for s in slice_sizes)
    out = ops.gather(x, idx, tuple(dn.offset_dims), tuple(dn.collapsed_slice_dims), tuple(dn.start_index_map),
                     idx.ndim - 1, sizes, operand_batching_dims=tuple(dn.operand_batching_dims),
                     start_indices_batching_dims=tuple(dn.start_indices_batching_dims),
                     indices_are_sorted=indices_are_sorted)
    if mode != GatherScatterMode.FILL_OR_DROP:
        return out
    limits = [n - s for n, s in zip(x.shape, sizes)]
    ok = _in_bounds(idx, dn.start_index_map, limits)
    if ok is None:
        return out
    batch_dims = [d for d in range(out.ndim) if d not in dn.offset_dims]
    mask = ops.broadcast_in_dim(ok, out.shape, tuple(batch_dims))
    fill = default_fill(x.dtype) if fill_value is None else fill_value
    fill = ops.broadcast_in_dim(as_tensor(np.asarray(fill).astype(x.dtype)), out.shape, ())
    return ops.select(mask, out, fill)


def index_take(src, idxs, axes):
    """jax.lax.index_take: ``src[idxs[0], idxs[1], ...]`` along ``axes`` (indices wrap modulo the
    size, Python's modulo as in jax); emits ``stablehlo.remainder``, a ``select`` and ``stablehlo.gather``.

    Args:
      src: an array.
      idxs: one 1-d integer index array per axis, all of one length n.
      axes: the indexed dimensions.
    Returns:
      An array of shape ``(n,) + the other dimensions``.
    Example:
      >>> y = hf.lax.index_take(x, (rows, cols), (0, 1))
    """
    x = lax_operand(src, "hloforge.lax.index_take src")
    axes = tuple(operator.index(a) for a in axes)
    columns = [lax_operand(i, "hloforge.lax.index_take index") for i in idxs]
    if len(columns) != len(axes) or not columns:
        raise ValueError(f"hloforge.lax.index_take: needs one index array per axis, got {len(columns)} for axes "
                         f"{axes}")
    if any(c.ndim != 1 or c.shape != columns[0].shape or c.dtype != columns[0].dtype
           or not dtypes.is_integer(c.dtype) for c in columns):
        raise TypeError(f"hloforge.lax.index_take: the indices must be 1-d integer arrays of one shape and dtype, "
                        f"got {columns}")
    indices = ops.concatenate([ops.reshape(c, c.shape + (1,)) for c in columns], 1)
    sizes = ops.broadcast_in_dim(as_tensor(np.array([x.shape[a] for a in axes], indices.dtype)), indices.shape, (1,))
    indices = ops.remainder(indices, sizes)  # (then Python's modulo: -1 wraps to size - 1, as jax's % does)
    negative = ops.compare(indices, ops.broadcast_in_dim(as_tensor(np.zeros((), indices.dtype)), indices.shape, ()), "LT")
    indices = ops.select(negative, ops.add(indices, sizes), indices)
    slice_sizes = tuple(1 if d in axes else n for d, n in enumerate(x.shape))
    dn = GatherDimensionNumbers(offset_dims=tuple(range(1, x.ndim - len(axes) + 1)), collapsed_slice_dims=axes,
                                start_index_map=axes)
    return gather(x, indices, dn, slice_sizes)


# ---------------------------------------------------------------- scatter

def _scatter(name, computation, operand, scatter_indices, updates, dimension_numbers, indices_are_sorted,
             unique_indices, mode):
    x = lax_operand(operand, f"{name} operand")
    idx = lax_operand(scatter_indices, f"{name} scatter_indices")
    u = lax_operand(updates, f"{name} updates")
    if not isinstance(dimension_numbers, ScatterDimensionNumbers):
        raise TypeError(f"{name}: dimension_numbers must be a ScatterDimensionNumbers, got "
                        f"{type(dimension_numbers).__name__}")
    if u.dtype != x.dtype:
        raise TypeError(f"{name}: operand and updates must have the same dtype, got {x.dtype} and {u.dtype}")
    if not dtypes.is_integer(idx.dtype):
        raise TypeError(f"{name}: scatter_indices must have an integer type, got {idx.dtype}")
    if idx.ndim == 0:
        raise TypeError(f"{name}: scatter_indices must have rank >= 1 (the last dim holds the index vectors)")
    dn = dimension_numbers
    mode = GatherScatterMode.from_any(mode)
    if mode == GatherScatterMode.CLIP:
        idx = _clip_scatter_indices(x, idx, u, dn)
    return ops.scatter(x, idx, u, tuple(dn.update_window_dims), tuple(dn.inserted_window_dims),
                       tuple(dn.scatter_dims_to_operand_dims), idx.ndim - 1, computation,
                       input_batching_dims=tuple(dn.operand_batching_dims),
                       scatter_indices_batching_dims=tuple(dn.scatter_indices_batching_dims),
                       indices_are_sorted=indices_are_sorted, unique_indices=unique_indices)


def _clip_scatter_indices(x, idx, u, dn):
    window = [d for d in range(x.ndim) if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    sizes = [1] * x.ndim
    for o, w in zip(window, dn.update_window_dims):
        sizes[o] = u.shape[w]
    upper = np.array([x.shape[o] - sizes[o] for o in dn.scatter_dims_to_operand_dims], idx.dtype)
    hi = ops.broadcast_in_dim(as_tensor(upper), idx.shape, (idx.ndim - 1,))
    lo = ops.broadcast_in_dim(as_tensor(np.zeros((), idx.dtype)), idx.shape, ())
    return ops.clamp(lo, idx, hi)


def _scatter_fn(name, computation):
    def fn(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
           unique_indices=False, mode=None):
        return _scatter(name, computation, operand, scatter_indices, updates, dimension_numbers,
                        indices_are_sorted, unique_indices, mode)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"jax.lax.{name}: emits ``stablehlo.scatter`` with a {computation!r} update computation "
                  "(out-of-bounds updates are dropped, or their indices clamped with ``mode='clip'``).")
    return fn


scatter = _scatter_fn("scatter", "set")
scatter_add = _scatter_fn("scatter_add", "add")
scatter_mul = _scatter_fn("scatter_mul", "mul")
scatter_min = _scatter_fn("scatter_min", "min")
scatter_max = _scatter_fn("scatter_max", "max")
scatter_sub = _scatter_fn("scatter_sub", lambda current, update: ops.subtract(current, update))
scatter_sub.__doc__ = ("jax.lax.scatter_sub: emits ``stablehlo.scatter`` with a ``subtract`` update computation "
                       "(out-of-bounds updates are dropped, or their indices clamped with ``mode='clip'``).")


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(), indices_are_sorted=False,
                  unique_indices=False, mode=None):
    """jax.lax.scatter_apply: ``func`` applied to each element the scatter windows reach (once per
    index); emits ``stablehlo.scatter`` with ``func`` traced as the update computation.

    Args:
      operand: an array.
      scatter_indices: integer indices (the last dimension holds the index vectors).
      func: a function of one 0-d array, built with hloforge.lax / hloforge.ops.
      dimension_numbers: a ScatterDimensionNumbers.
      update_shape: the shape of the (unused) updates, as in jax.
      indices_are_sorted, unique_indices, mode: as in ``scatter``.
    Returns:
      The updated array.
    Example:
      >>> y = hf.lax.scatter_apply(x, idx, hf.lax.neg, dn)
    """
    x = lax_operand(operand, "hloforge.lax.scatter_apply operand")
    if not callable(func):
        raise TypeError(f"hloforge.lax.scatter_apply: func must be callable, got {type(func).__name__}")
    unused = ops.broadcast_in_dim(as_tensor(np.zeros((), x.dtype)), tuple(update_shape), ())
    return _scatter("scatter_apply", lambda current, _: func(current), x, scatter_indices, unused,
                    dimension_numbers, indices_are_sorted, unique_indices, mode)

__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode", "select", "slice",
           "slice_in_dim", "index_in_dim", "dynamic_slice", "dynamic_update_slice", "dynamic_index_in_dim",
           "dynamic_slice_in_dim", "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "gather",
           "index_take", "scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max", "scatter_sub",
           "scatter_apply"]
