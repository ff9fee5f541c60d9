"""Batching rules of ``frontend/ops/slicing.py``: gather, scatter, dynamic_update_slice.

The batch becomes a dimension of the op's own dimension numbers, never a loop: a batched operand
with unbatched indices adds a window (offset) dimension; batched indices add a batching dimension
pair (StableHLO's ``operand_batching_dims``/``start_indices_batching_dims``, which XLA:CPU runs
and jax's own rules emit), the operand broadcast when it is unbatched. Batch dimensions stay where
they are when the dimension numbers can name them there (no transposes), and move only when the
op's layout rules leave no other place (an update's window dims follow the operand's in order).
"""
from __future__ import annotations

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.batching._util import bdim_at, broadcast_batch
from hloforge.frontend.registry import def_rule


def _shift(dims, d) -> tuple:
    """Per-example dimension numbers as dimensions of the value batched at ``d``."""
    return tuple(a + (a >= d) for a in dims)


def _slot(flags, m) -> int:
    """Where to insert a new dimension so that it is the ``m``-th of the flagged dimensions."""
    flagged = [i for i, f in enumerate(flags) if f]
    if m < len(flagged):
        return flagged[m]
    return flagged[-1] + 1 if flagged else 0


def _fits(flags, m, d) -> bool:
    """A batch dimension inserted at ``d`` is the ``m``-th of the flagged dimensions."""
    return sum(flags[:d]) == m


def _place(x, d, size, flags, m):
    """``x`` (batch dimension ``d`` or None) with its batch dimension at a place that makes it the
    ``m``-th flagged dimension: where it is when it fits, else at ``_slot``."""
    if d is not None and _fits(flags, m, d):
        return x, d
    slot = _slot(flags, m)
    return bdim_at(x, d, size, slot), slot


def _paired_insert(lhs, rhs, a, b) -> tuple:
    """Add the pair (a, b) to the paired lists (lhs sorted), keeping lhs sorted."""
    at = sum(1 for v in lhs if v < a)
    return lhs[:at] + (a,) + lhs[at:], rhs[:at] + (b,) + rhs[at:]


# ---------------------------------------------------------------- gather

@def_rule("batch", "stablehlo.gather")
def _gather_batch(size, ins, dims, *, offset_dims, collapsed_slice_dims, operand_batching_dims,
                  start_indices_batching_dims, start_index_map, index_vector_dim, slice_sizes,
                  indices_are_sorted):
    """Pattern: gather(x[b], i) -> gather(x, i) with b one more offset (window) dim;
    gather(x, i[b]) and gather(x[b], i[b]) -> b one more batching dim pair (x broadcast)."""
    (x, indices), (dx, di) = ins, dims
    index_rank = indices.ndim - (di is not None)
    rank = len(offset_dims) + index_rank - (index_vector_dim < index_rank)  # the per-example result's
    if di is None:
        window = [a for a in range(x.ndim - 1) if a not in collapsed_slice_dims and a not in operand_batching_dims]
        k = sum(1 for a in window if a < dx)
        out = _slot([r in offset_dims for r in range(rank)], k)
        sizes = list(slice_sizes)
        sizes.insert(dx, size)
        y = ops.gather(x, indices, tuple(sorted(_shift(offset_dims, out) + (out,))),
                       _shift(collapsed_slice_dims, dx), _shift(start_index_map, dx), index_vector_dim,
                       tuple(sizes), operand_batching_dims=_shift(operand_batching_dims, dx),
                       start_indices_batching_dims=start_indices_batching_dims,
                       indices_are_sorted=indices_are_sorted)
        return [y], [out]
    ivd = index_vector_dim + (index_vector_dim >= di)
    per_example = [a for a in range(indices.ndim - 1) if a != index_vector_dim]
    m = sum(1 for a in per_example if a < di)
    out = _slot([r not in offset_dims for r in range(rank)], m)
    if dx is None:
        x, dx = broadcast_batch(x, size, 0), 0
    obd, ibd = _paired_insert(_shift(operand_batching_dims, dx), _shift(start_indices_batching_dims, di), dx, di)
    sizes = list(slice_sizes)
    sizes.insert(dx, min(size, 1))  # (a batching dimension's slice: 0 when the batch is empty)
    y = ops.gather(x, indices, _shift(offset_dims, out), _shift(collapsed_slice_dims, dx),
                   _shift(start_index_map, dx), ivd, tuple(sizes), operand_batching_dims=obd,
                   start_indices_batching_dims=ibd, indices_are_sorted=indices_are_sorted)
    return [y], [out]


# ---------------------------------------------------------------- scatter

@def_rule("batch", "stablehlo.scatter")
def _scatter_batch(size, ins, dims, *, update_window_dims, inserted_window_dims, input_batching_dims,
                   scatter_indices_batching_dims, scatter_dims_to_operand_dims, index_vector_dim, computation,
                   indices_are_sorted, unique_indices):
    """Pattern: scatter(x[b], i, u[b]) -> b one more window dim of x and u (either broadcast);
    scatter(x, i[b], u) -> b a batching dim pair of x and i, and a scatter dim of u (x, u broadcast).
    The update computation is the same scalar region."""
    (x, indices, updates), (dx, di, du) = ins, dims
    urank = updates.ndim - (du is not None)
    if dx is None:
        x, dx = broadcast_batch(x, size, 0), 0
    if di is None:
        window = [a for a in range(x.ndim - 1) if a not in inserted_window_dims and a not in input_batching_dims]
        k = sum(1 for a in window if a < dx)
        updates, du = _place(updates, du, size, [r in update_window_dims for r in range(urank)], k)
        uwd = tuple(sorted(_shift(update_window_dims, du) + (du,)))
        ibd, sbd = _shift(input_batching_dims, dx), scatter_indices_batching_dims
        ivd = index_vector_dim
    else:
        per_example = [a for a in range(indices.ndim - 1) if a != index_vector_dim]
        m = sum(1 for a in per_example if a < di)
        updates, du = _place(updates, du, size, [r not in update_window_dims for r in range(urank)], m)
        uwd = _shift(update_window_dims, du)
        ibd, sbd = _paired_insert(_shift(input_batching_dims, dx), _shift(scatter_indices_batching_dims, di),
                                  dx, di)
        ivd = index_vector_dim + (index_vector_dim >= di)
    y = ops.scatter(x, indices, updates, uwd, _shift(inserted_window_dims, dx),
                    _shift(scatter_dims_to_operand_dims, dx), ivd, computation, input_batching_dims=ibd,
                    scatter_indices_batching_dims=sbd, indices_are_sorted=indices_are_sorted,
                    unique_indices=unique_indices)
    return [y], [dx]


# ---------------------------------------------------------------- dynamic_update_slice

@def_rule("batch", "stablehlo.dynamic_update_slice")
def _dynamic_update_slice_batch(size, ins, dims):
    """Pattern: dynamic_update_slice(x[b], u[b], s) -> dynamic_update_slice(x, u, s with 0 at b);
    with batched starts s[b] (as jax): a scatter of u's whole window at each example's clamped
    start (dynamic_update_slice clamps, scatter would skip), b a batching dim pair of x and the
    (b, rank) indices, and u's only scatter dim (it stays where it is)."""
    (x, update, *starts), (dx, du, *ds) = ins, dims
    if all(d is None for d in ds):
        if dx is None:
            dx = du
            x = broadcast_batch(x, size, dx)
        update = bdim_at(update, du, size, dx)
        starts = list(starts)
        starts.insert(dx, ops.constant(np.zeros((), starts[0].dtype if starts else np.int32)))
        return [ops.dynamic_update_slice(x, update, starts)], [dx]
    if dx is None:
        x, dx = broadcast_batch(x, size, 0), 0
    shape = x.shape[:dx] + x.shape[dx + 1:]
    ushape = update.shape if du is None else update.shape[:du] + update.shape[du + 1:]
    indices = ops.concatenate([_clamped_start(s, d, size, n - u) for s, d, n, u in zip(starts, ds, shape, ushape)], 1)
    if du is None:
        update, du = broadcast_batch(update, size, 0), 0
    window = tuple(a for a in range(update.ndim) if a != du)
    y = ops.scatter(x, indices, update, window, (), _shift(tuple(range(len(shape))), dx), 1, "set",
                    input_batching_dims=(dx,), scatter_indices_batching_dims=(0,), indices_are_sorted=True,
                    unique_indices=True)
    return [y], [dx]


def _clamped_start(s, d, size, high):
    """A start index as a (size, 1) column, clamped into [0, high] as dynamic_update_slice does."""
    s = ops.clamp(ops.constant(np.zeros((), s.dtype)), s, ops.constant(np.asarray(high, s.dtype)))
    return ops.reshape(bdim_at(s, d, size, 0), (size, 1))
