"""Indexed data movement: stablehlo.gather, stablehlo.scatter, stablehlo.dynamic_update_slice."""
from __future__ import annotations

import builtins

import numpy as np

from hloforge.frontend import attributes as attr
from hloforge.frontend.context import stablehlo
from hloforge.frontend.ops import _evaluate as ev
from hloforge.frontend.ops._common import check_axes, int_tuple, operand
from hloforge.frontend.ops.linalg import REDUCERS, reducer_name
from hloforge.frontend.registry import Region, Spec, bind, body_of, register
from hloforge.frontend.tracing import Tensor

GATHER_DIMS = ("offset_dims", "collapsed_slice_dims", "operand_batching_dims",
               "start_indices_batching_dims", "start_index_map")
SCATTER_DIMS = ("update_window_dims", "inserted_window_dims", "input_batching_dims",
                "scatter_indices_batching_dims", "scatter_dims_to_operand_dims")


def _check_sorted(op, name, dims):
    if list(dims) != sorted(dims):
        raise ValueError(f"{op}: {name} {list(dims)} must be sorted")


def _check_indices(op, indices, index_vector_dim):
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be an integer tensor, got {indices}")
    if not 0 <= index_vector_dim <= indices.ndim:
        raise ValueError(f"{op}: index_vector_dim {index_vector_dim} out of range for indices of rank "
                         f"{indices.ndim}")
    batch = [d for d in range(indices.ndim) if d != index_vector_dim]
    depth = indices.shape[index_vector_dim] if index_vector_dim < indices.ndim else 1
    return batch, depth


def _check_batching(op, names, operand_dims, index_dims, x, indices, batch):
    a, b = names
    if len(operand_dims) != len(index_dims):
        raise ValueError(f"{op}: {a} {list(operand_dims)} and {b} {list(index_dims)} differ in length")
    for o, i in zip(operand_dims, index_dims):
        if i not in batch:
            raise ValueError(f"{op}: {b} {list(index_dims)} may not name index_vector_dim")
        if x.shape[o] != indices.shape[i]:
            raise ValueError(f"{op}: batching dims operand {o} (size {x.shape[o]}) and indices {i} "
                             f"(size {indices.shape[i]}) differ")


# ---------------------------------------------------------------- gather

def _gather_params(offset_dims, collapsed_slice_dims, start_index_map, index_vector_dim, slice_sizes,
                   operand_batching_dims=(), start_indices_batching_dims=(), indices_are_sorted=False):
    out = {n: int_tuple("gather", n, v) for n, v in zip(GATHER_DIMS, (
        offset_dims, collapsed_slice_dims, operand_batching_dims, start_indices_batching_dims,
        start_index_map))}
    out["index_vector_dim"] = int_tuple("gather", "index_vector_dim", (index_vector_dim,))[0]
    out["slice_sizes"] = int_tuple("gather", "slice_sizes", slice_sizes)
    out["indices_are_sorted"] = bool(indices_are_sorted)
    return out


def _gather_rule(x, indices, offset_dims, collapsed_slice_dims, operand_batching_dims,
                 start_indices_batching_dims, start_index_map, index_vector_dim, slice_sizes, indices_are_sorted):
    op = "gather"
    batch, depth = _check_indices(op, indices, index_vector_dim)
    if len(slice_sizes) != x.ndim:
        raise ValueError(f"gather: slice_sizes {list(slice_sizes)} must have {x.ndim} entries, one per "
                         "operand dimension")
    for d, (s, n) in enumerate(zip(slice_sizes, x.shape)):
        if not 0 <= s <= n:
            raise ValueError(f"gather: slice_sizes {list(slice_sizes)} out of range for operand shape "
                             f"{x.shape} at dim {d}")
    collapsed = check_axes(op, "collapsed_slice_dims", collapsed_slice_dims, x.ndim)
    obatch = check_axes(op, "operand_batching_dims", operand_batching_dims, x.ndim)
    check_axes(op, "start_indices_batching_dims", start_indices_batching_dims, indices.ndim)
    check_axes(op, "start_index_map", start_index_map, x.ndim)
    for name, dims in (("collapsed_slice_dims", collapsed), ("operand_batching_dims", obatch),
                       ("offset_dims", offset_dims)):
        _check_sorted(op, name, dims)
    if set(collapsed) & set(obatch):
        raise ValueError(f"gather: collapsed_slice_dims {list(collapsed)} and operand_batching_dims "
                         f"{list(obatch)} overlap")
    for d in collapsed + obatch:
        if slice_sizes[d] > 1:
            raise ValueError(f"gather: slice_sizes[{d}] = {slice_sizes[d]} must be <= 1 for a collapsed or "
                             "batching dimension")
    if set(start_index_map) & set(obatch):
        raise ValueError(f"gather: start_index_map {list(start_index_map)} and operand_batching_dims "
                         f"{list(obatch)} overlap")
    if len(start_index_map) != depth:
        raise ValueError(f"gather: start_index_map {list(start_index_map)} must have {depth} entries, the "
                         f"size of the index vector dimension of indices {indices.shape}")
    _check_batching(op, ("operand_batching_dims", "start_indices_batching_dims"), obatch,
                    start_indices_batching_dims, x, indices, batch)
    window = [d for d in range(x.ndim) if d not in collapsed and d not in obatch]
    if len(offset_dims) != len(window):
        raise ValueError(f"gather: offset_dims {list(offset_dims)} must have {len(window)} entries (operand "
                         "rank minus collapsed and batching dims)")
    rank = len(batch) + len(offset_dims)
    check_axes(op, "offset_dims", offset_dims, rank)
    shape, offsets, batches = [], iter(window), iter(batch)
    for d in range(rank):
        shape.append(slice_sizes[next(offsets)] if d in offset_dims else indices.shape[next(batches)])
    return tuple(shape), x.dtype


def _gather_attributes(index_vector_dim, slice_sizes, indices_are_sorted, **dims):
    return {"dimension_numbers": stablehlo.GatherDimensionNumbers.get(
                **{n: list(dims[n]) for n in GATHER_DIMS}, index_vector_dim=index_vector_dim),
            "slice_sizes": attr.i64s(slice_sizes), "indices_are_sorted": attr.boolean(indices_are_sorted)}


def _gather_decode(op):
    d = stablehlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
    return {"offset_dims": tuple(d.offset_dims), "collapsed_slice_dims": tuple(d.collapsed_slice_dims),
            "operand_batching_dims": tuple(d.operand_batching_dims),
            "start_indices_batching_dims": tuple(d.start_indices_batching_dims),
            "start_index_map": tuple(d.start_index_map), "index_vector_dim": d.index_vector_dim,
            "slice_sizes": attr.read_ints(op, "slice_sizes"),
            "indices_are_sorted": attr.read_bool(op, "indices_are_sorted")}


def _index_vector(indices, batch_index, batch, index_vector_dim):
    full = [0] * indices.ndim
    for d, i in zip(batch, batch_index):
        full[d] = i
    if index_vector_dim == indices.ndim:
        return [int(indices[tuple(full)])]
    full[index_vector_dim] = builtins.slice(None)
    return [int(v) for v in indices[tuple(full)]]


def _gather_evaluate(x, indices, offset_dims, collapsed_slice_dims, operand_batching_dims,
                     start_indices_batching_dims, start_index_map, index_vector_dim, slice_sizes,
                     indices_are_sorted=False):
    """The spec's definition, one result element at a time (start indices clamped)."""
    batch = [d for d in range(indices.ndim) if d != index_vector_dim]
    window = [d for d in range(x.ndim) if d not in collapsed_slice_dims and d not in operand_batching_dims]
    shape = _gather_rule(_spec(x), _spec(indices), offset_dims, collapsed_slice_dims, operand_batching_dims,
                         start_indices_batching_dims, start_index_map, index_vector_dim, slice_sizes,
                         indices_are_sorted)[0]
    out = np.empty(shape, x.dtype)
    for r in np.ndindex(*shape):
        batch_index = [r[d] for d in range(len(shape)) if d not in offset_dims]
        start = _index_vector(indices, batch_index, batch, index_vector_dim)
        index = [0] * x.ndim
        for k, o in enumerate(start_index_map):
            index[o] = min(max(start[k], 0), x.shape[o] - slice_sizes[o])
        for o, i in zip(operand_batching_dims, start_indices_batching_dims):
            index[o] = batch_index[batch.index(i)]
        for o, d in zip(window, offset_dims):
            index[o] += r[d]
        out[r] = x[tuple(index)]
    return out


def _spec(a):
    return Spec(a.shape, np.dtype(a.dtype))


@register("stablehlo.gather", rule=_gather_rule, params=_gather_params, attributes=_gather_attributes,
          decode=_gather_decode, evaluate=_gather_evaluate)
def gather(x, indices, offset_dims, collapsed_slice_dims, start_index_map, index_vector_dim, slice_sizes, *,
           operand_batching_dims=(), start_indices_batching_dims=(), indices_are_sorted=False,
           loc=None) -> Tensor:
    """Slices of ``x`` at the start positions in ``indices``; emits ``stablehlo.gather``.

    Start indices are clamped so that each slice lies in ``x`` (the StableHLO semantics).

    Args:
      x: Tensor.
      indices: integer Tensor; dimension ``index_vector_dim`` holds the index vectors
        (``index_vector_dim == indices.ndim``: scalar indices).
      offset_dims: result dims that hold the slice dims (sorted).
      collapsed_slice_dims: operand dims of slice size 1 left out of the result (sorted).
      start_index_map: operand dim that each index vector entry starts.
      index_vector_dim: see ``indices``.
      slice_sizes: one per operand dimension.
      operand_batching_dims, start_indices_batching_dims: paired batch dims.
      indices_are_sorted: a promise that lets the backend go faster.
    Returns:
      The gathered Tensor.
    Example:
      >>> rows = ops.gather(x, i[:, None], (1,), (0,), (0,), 1, (1, x.shape[1]))   # x[i]
    """
    x, indices = operand("gather", x), operand("gather", indices, "indices")
    return bind("stablehlo.gather", [x, indices], offset_dims=offset_dims,
                collapsed_slice_dims=collapsed_slice_dims, start_index_map=start_index_map,
                index_vector_dim=index_vector_dim, slice_sizes=slice_sizes,
                operand_batching_dims=operand_batching_dims,
                start_indices_batching_dims=start_indices_batching_dims,
                indices_are_sorted=indices_are_sorted, loc=loc)


# ---------------------------------------------------------------- scatter

SCATTER_BODIES = ("set", *REDUCERS)


def _scatter_params(update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims, index_vector_dim,
                    computation="set", input_batching_dims=(), scatter_indices_batching_dims=(),
                    indices_are_sorted=False, unique_indices=False):
    if isinstance(computation, str):
        if computation not in SCATTER_BODIES:
            raise ValueError(f"scatter: computation {computation!r} is not one of {', '.join(SCATTER_BODIES)} "
                             "or a callable")
    elif not callable(computation):
        raise TypeError(f"scatter: computation must be a name or a callable, got {type(computation).__name__}")
    out = {n: int_tuple("scatter", n, v) for n, v in zip(SCATTER_DIMS, (
        update_window_dims, inserted_window_dims, input_batching_dims, scatter_indices_batching_dims,
        scatter_dims_to_operand_dims))}
    out["index_vector_dim"] = int_tuple("scatter", "index_vector_dim", (index_vector_dim,))[0]
    out.update(computation=computation, indices_are_sorted=bool(indices_are_sorted),
               unique_indices=bool(unique_indices))
    return out


def _scatter_rule(x, indices, updates, update_window_dims, inserted_window_dims, input_batching_dims,
                  scatter_indices_batching_dims, scatter_dims_to_operand_dims, index_vector_dim,
                  computation, indices_are_sorted, unique_indices):
    op = "scatter"
    if updates.dtype != x.dtype:
        raise TypeError(f"scatter: updates dtype {updates.dtype} differs from operand dtype {x.dtype}")
    batch, depth = _check_indices(op, indices, index_vector_dim)
    inserted = check_axes(op, "inserted_window_dims", inserted_window_dims, x.ndim)
    ibatch = check_axes(op, "input_batching_dims", input_batching_dims, x.ndim)
    check_axes(op, "scatter_indices_batching_dims", scatter_indices_batching_dims, indices.ndim)
    check_axes(op, "scatter_dims_to_operand_dims", scatter_dims_to_operand_dims, x.ndim)
    check_axes(op, "update_window_dims", update_window_dims, updates.ndim)
    for name, dims in (("update_window_dims", update_window_dims), ("inserted_window_dims", inserted),
                       ("input_batching_dims", ibatch)):
        _check_sorted(op, name, dims)
    if set(inserted) & set(ibatch):
        raise ValueError(f"scatter: inserted_window_dims {list(inserted)} and input_batching_dims "
                         f"{list(ibatch)} overlap")
    if set(scatter_dims_to_operand_dims) & set(ibatch):
        raise ValueError(f"scatter: scatter_dims_to_operand_dims {list(scatter_dims_to_operand_dims)} and "
                         f"input_batching_dims {list(ibatch)} overlap")
    if len(scatter_dims_to_operand_dims) != depth:
        raise ValueError(f"scatter: scatter_dims_to_operand_dims {list(scatter_dims_to_operand_dims)} must "
                         f"have {depth} entries, the size of the index vector dimension of indices "
                         f"{indices.shape}")
    _check_batching(op, ("input_batching_dims", "scatter_indices_batching_dims"), ibatch,
                    scatter_indices_batching_dims, x, indices, batch)
    window = [d for d in range(x.ndim) if d not in inserted and d not in ibatch]
    if len(update_window_dims) != len(window):
        raise ValueError(f"scatter: update_window_dims {list(update_window_dims)} must have {len(window)} "
                         "entries (operand rank minus inserted and batching dims)")
    if updates.ndim != len(update_window_dims) + len(batch):
        raise ValueError(f"scatter: updates of shape {updates.shape} must have rank "
                         f"{len(update_window_dims) + len(batch)} (window dims plus indices batch dims)")
    scatter_dims = [d for d in range(updates.ndim) if d not in update_window_dims]
    for u, i in zip(scatter_dims, batch):
        if updates.shape[u] != indices.shape[i]:
            raise ValueError(f"scatter: updates dim {u} (size {updates.shape[u]}) must match indices dim {i} "
                             f"(size {indices.shape[i]}); shapes {updates.shape} and {indices.shape}")
    for u, o in zip(update_window_dims, window):
        if updates.shape[u] > x.shape[o]:
            raise ValueError(f"scatter: updates window dim {u} (size {updates.shape[u]}) exceeds operand dim "
                             f"{o} (size {x.shape[o]})")
    return x.shape, x.dtype


def _set_body(old, new):
    return new


def _named_scatter_body(name):
    if name == "set":
        return _set_body

    def body(old, new):
        return bind(REDUCERS[name], [old, new])
    return body


def _scatter_regions(operands, computation, **params):
    scalar = ((), operands[0].dtype)
    fn = _named_scatter_body(computation) if isinstance(computation, str) else computation
    return [Region([scalar, scalar], fn, [scalar], "scatter: update computation",
                   describe=f"one 0-d {operands[0].dtype} Tensor")]


def _scatter_attributes(index_vector_dim, computation, indices_are_sorted, unique_indices, **dims):
    return {"scatter_dimension_numbers": stablehlo.ScatterDimensionNumbers.get(
                *(list(dims[n]) for n in SCATTER_DIMS), index_vector_dim=index_vector_dim),
            "indices_are_sorted": attr.boolean(indices_are_sorted),
            "unique_indices": attr.boolean(unique_indices)}


def scatter_body_name(op):
    """"set", "add", ... when the update computation is a named one, else None."""
    block = op.regions[0].blocks[0]
    ops = list(block.operations)
    if len(ops) == 1 and ops[0].name == "stablehlo.return" and ops[0].operands[0] == block.arguments[1]:
        return "set"
    return reducer_name(op)


def _scatter_decode(op):
    d = stablehlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
    return {"update_window_dims": tuple(d.update_window_dims),
            "inserted_window_dims": tuple(d.inserted_window_dims),
            "input_batching_dims": tuple(d.input_batching_dims),
            "scatter_indices_batching_dims": tuple(d.scatter_indices_batching_dims),
            "scatter_dims_to_operand_dims": tuple(d.scattered_dims_to_operand_dims),
            "index_vector_dim": d.index_vector_dim,
            "computation": scatter_body_name(op) or body_of(op.regions[0]),
            "indices_are_sorted": attr.read_bool(op, "indices_are_sorted"),
            "unique_indices": attr.read_bool(op, "unique_indices")}


_COMBINE = {"set": lambda a, b: b, "add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum,
            "and": np.bitwise_and, "or": np.bitwise_or}


def _scatter_evaluate(x, indices, updates, update_window_dims, inserted_window_dims, input_batching_dims,
                      scatter_indices_batching_dims, scatter_dims_to_operand_dims, index_vector_dim,
                      computation="set", indices_are_sorted=False, unique_indices=False):
    """Named computations on integers, or on any dtype when no two updates meet. A window that
    leaves the operand is skipped whole (XLA's rule; the spec skips element by element), so
    partly-outside windows decline."""
    if not isinstance(computation, str) or ev.kind(x) not in "biuf" or not ev.safe_inputs([x, updates]):
        return None
    if computation in ("and", "or") and ev.kind(x) == "f":
        return None
    if computation in ("add", "mul") and ev.kind(x) == "b":
        return None  # (bool add: logical or in the spec, xor on XLA:CPU)
    if computation in ("max", "min") and ev.kind(x) == "f" and any(
            ((a == 0) | np.isnan(ev.wide(a))).any() for a in (x, updates)):
        return None  # which zero max(-0, +0) keeps, and NaN propagation, are the backend's
    batch = [d for d in range(indices.ndim) if d != index_vector_dim]
    window = [d for d in range(x.ndim) if d not in inserted_window_dims and d not in input_batching_dims]
    scatter_dims = [d for d in range(updates.ndim) if d not in update_window_dims]
    window_sizes = [updates.shape[u] for u in update_window_dims]
    out = x.copy()
    written = np.zeros(x.shape, bool)
    combine = _COMBINE[computation]
    for u in np.ndindex(*[updates.shape[d] for d in scatter_dims]):
        start = _index_vector(indices, list(u), batch, index_vector_dim)
        base = [0] * x.ndim
        for k, o in enumerate(scatter_dims_to_operand_dims):
            base[o] = start[k]
        for o, i in zip(input_batching_dims, scatter_indices_batching_dims):
            base[o] = u[batch.index(i)]
        inside = [0 <= base[o] and base[o] + (window_sizes[window.index(o)] if o in window else 1) <= x.shape[o]
                  for o in range(x.ndim)]
        if not all(inside):
            if any(w > 1 for w in window_sizes):
                return None
            continue
        for w in np.ndindex(*window_sizes):
            index = list(base)
            for o, k in zip(window, w):
                index[o] += k
            full = [0] * updates.ndim
            for d, k in zip(scatter_dims, u):
                full[d] = k
            for d, k in zip(update_window_dims, w):
                full[d] = k
            index = tuple(index)
            if written[index] and (computation == "set" or ev.kind(x) == "f"):
                return None  # the order in which updates meet is the backend's
            written[index] = True
            with np.errstate(all="ignore"):
                out[index] = combine(out[index], updates[tuple(full)])
    if computation != "set" and ev.kind(x) == "f":
        return ev.finish(out, x.dtype)  # (a combined float that is NaN or subnormal: the backend's)
    return out


@register("stablehlo.scatter", rule=_scatter_rule, params=_scatter_params, attributes=_scatter_attributes,
          regions=_scatter_regions, decode=_scatter_decode, evaluate=_scatter_evaluate)
def scatter(x, indices, updates, update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
            index_vector_dim, computation="set", *, input_batching_dims=(), scatter_indices_batching_dims=(),
            indices_are_sorted=False, unique_indices=False, loc=None) -> Tensor:
    """Combine ``updates`` into ``x`` at the positions in ``indices``; emits ``stablehlo.scatter``.

    One operand (the spec allows several). Update windows that do not fit in ``x`` are skipped.

    Args:
      x: Tensor.
      indices: integer Tensor of index vectors along ``index_vector_dim``.
      updates: Tensor of x's dtype: scatter dims (indices' batch dims) and window dims.
      update_window_dims: dims of ``updates`` that are window dims (sorted).
      inserted_window_dims: operand dims of window size 1 that ``updates`` leaves out (sorted).
      scatter_dims_to_operand_dims: operand dim each index vector entry starts.
      index_vector_dim: the dim of ``indices`` holding index vectors.
      computation: "set" (the update replaces), "add", "mul", "max", "min", "and", "or", or a
        callable ``(current, update) -> new`` over 0-d Tensors (no outside Tensors).
      input_batching_dims, scatter_indices_batching_dims: paired batch dims.
      indices_are_sorted, unique_indices: promises that let the backend go faster.
    Returns:
      A Tensor of x's shape and dtype.
    Example:
      >>> y = ops.scatter(x, i[:, None], u, (), (0,), (0,), 1, "add")   # x.at[i].add(u), x 1-d
    """
    x = operand("scatter", x)
    indices = operand("scatter", indices, "indices")
    updates = operand("scatter", updates, "updates", dtype=x.dtype if not isinstance(updates, Tensor) else None)
    return bind("stablehlo.scatter", [x, indices, updates], update_window_dims=update_window_dims,
                inserted_window_dims=inserted_window_dims, scatter_dims_to_operand_dims=scatter_dims_to_operand_dims,
                index_vector_dim=index_vector_dim, computation=computation, input_batching_dims=input_batching_dims,
                scatter_indices_batching_dims=scatter_indices_batching_dims, indices_are_sorted=indices_are_sorted,
                unique_indices=unique_indices, loc=loc)


# ---------------------------------------------------------------- dynamic_update_slice

def _dus_rule(x, update, *starts):
    if update.dtype != x.dtype:
        raise TypeError(f"dynamic_update_slice: update dtype {update.dtype} differs from operand dtype {x.dtype}")
    if update.ndim != x.ndim or any(u > n for u, n in zip(update.shape, x.shape)):
        raise ValueError(f"dynamic_update_slice: update shape {update.shape} does not fit in operand shape "
                         f"{x.shape}")
    if len(starts) != x.ndim:
        raise ValueError(f"dynamic_update_slice: got {len(starts)} start indices for rank {x.ndim}")
    for i, s in enumerate(starts):
        if s.shape != () or s.dtype.kind not in "iu":
            raise TypeError(f"dynamic_update_slice: start index {i} must be a 0-d integer tensor, got {s}")
        if s.dtype != starts[0].dtype:
            raise TypeError(f"dynamic_update_slice: start indices mix dtypes {starts[0].dtype} and {s.dtype}")
    return x.shape, x.dtype


def _dus_evaluate(x, update, *starts):
    """Start indices clamped into [0, size - update size], as the spec says."""
    out = x.copy()
    index = []
    for s, u, n in zip(starts, update.shape, x.shape):
        begin = int(np.clip(int(s), 0, n - u))
        index.append(builtins.slice(begin, begin + u))
    out[tuple(index)] = update
    return out


@register("stablehlo.dynamic_update_slice", rule=_dus_rule, evaluate=_dus_evaluate,
          arrange=lambda operands: (operands[0], operands[1], operands[2:]))
def dynamic_update_slice(x, update, start_indices, *, loc=None) -> Tensor:
    """``x`` with ``update`` written at run-time ``start_indices`` (clamped so that it fits);
    emits ``stablehlo.dynamic_update_slice``.

    Args:
      x: Tensor.
      update: Tensor of x's dtype and rank, no larger than x in any dim.
      start_indices: one 0-d integer Tensor (or Python int) per dimension.
    Returns:
      A Tensor of x's shape.
    Example:
      >>> y = ops.dynamic_update_slice(x, row, (i, 0))
    """
    x = operand("dynamic_update_slice", x)
    update = operand("dynamic_update_slice", update, "update",
                     dtype=x.dtype if not isinstance(update, Tensor) else None)
    index_dtype = next((s.dtype for s in start_indices if isinstance(s, Tensor)), np.dtype(np.int64))
    starts = [operand("dynamic_update_slice", s, "start index",
                      dtype=index_dtype if not hasattr(s, "dtype") else None) for s in start_indices]
    return bind("stablehlo.dynamic_update_slice", [x, update, *starts], loc=loc)


__all__ = ["gather", "scatter", "dynamic_update_slice"]
