"""jax.lax indexing: select, dynamic_slice, dynamic_update_slice, dynamic_index_in_dim, gather and
the scatter family, with jax's dimension-number namedtuples and GatherScatterMode."""
from __future__ import annotations

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

__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode", "select",
           "dynamic_slice", "dynamic_update_slice", "dynamic_index_in_dim", "dynamic_slice_in_dim", "gather",
           "scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"]
