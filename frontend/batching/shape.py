"""Batching rules of ``frontend/ops/shape.py`` (data movement). Each rule keeps the batch
dimension where it is when the op allows it (reshape moves it to the front only when it sits
between the operand's dimensions); batched ``dynamic_slice`` starts become one ``gather``."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.batching._util import bdim_at, common_dim, unbatched_axes
from hloforge.frontend.registry import def_rule


@def_rule("batch", "stablehlo.constant", "stablehlo.iota")
def _nullary_batch(size, ins, dims, **params):
    """Never called: an op without operands reads no batched value (the sweep leaves it alone)."""
    raise RuntimeError(f"hloforge.vmap: an op without operands cannot be batched (got {len(ins)} operands "
                       f"with batch dimensions {list(dims)}); the batching sweep leaves such ops unbatched")


@def_rule("batch", "stablehlo.reshape")
def _reshape_batch(size, ins, dims, *, shape):
    """Pattern: reshape(x[b], s) -> reshape(x, (n,) + s)[b at 0] (or s + (n,) with the batch last:
    row-major order keeps a leading or a trailing dimension intact)."""
    (x,), (d,) = ins, dims
    if d == x.ndim - 1 and d > 0:
        return [ops.reshape(x, tuple(shape) + (size,))], [len(shape)]
    return [ops.reshape(bdim_at(x, d, size, 0), (size,) + tuple(shape))], [0]


@def_rule("batch", "stablehlo.transpose")
def _transpose_batch(size, ins, dims, *, permutation):
    """Pattern: transpose(x[b at d], p) -> transpose(x, (d,) + p shifted around d)[b at 0].

    The transpose moves data anyway, so it takes the batch dimension to the front at no cost (as
    jax's rule does), where the batched inputs, reshapes and two-sided dots put it: the ops after it
    then need no transpose of their own."""
    (x,), (d,) = ins, dims
    return [ops.transpose(x, [d] + list(unbatched_axes(permutation, d)))], [0]


@def_rule("batch", "stablehlo.broadcast_in_dim")
def _broadcast_in_dim_batch(size, ins, dims, *, shape, broadcast_dimensions):
    """Pattern: broadcast_in_dim(x[b at d], s, m) -> broadcast_in_dim(x, s', m')[b at o]: the batch
    dimension goes right after the result dimension of operand dimension d - 1, so sorted
    broadcast dimensions stay sorted (no transpose)."""
    (x,), (d,) = ins, dims
    o = broadcast_dimensions[d - 1] + 1 if d > 0 else 0
    mapped = [m + (m >= o) for m in broadcast_dimensions]
    mapped.insert(d, o)
    out_shape = list(shape)
    out_shape.insert(o, size)
    return [ops.broadcast_in_dim(x, tuple(out_shape), mapped)], [o]


@def_rule("batch", "stablehlo.slice")
def _slice_batch(size, ins, dims, *, start_indices, limit_indices, strides):
    """Pattern: slice(x[b at d], s, l, t) -> slice(x, s', l', t')[b at d], all of dimension d kept."""
    (x,), (d,) = ins, dims
    start, limit, step = list(start_indices), list(limit_indices), list(strides)
    start.insert(d, 0)
    limit.insert(d, size)
    step.insert(d, 1)
    return [ops.slice(x, start, limit, step)], [d]


@def_rule("batch", "stablehlo.dynamic_slice")
def _dynamic_slice_batch(size, ins, dims, *, slice_sizes):
    """Patterns: dynamic_slice(x[b at d], i) -> dynamic_slice(x, i with 0 at d)[b at d];
    dynamic_slice(x (batched or not), i[b]) -> gather(x, stack(i)) with the operand's batch
    dimension as a gather batching dimension (gather clamps its starts as dynamic_slice does)."""
    x, starts = ins[0], list(ins[1:])
    xd, start_dims = dims[0], dims[1:]
    if all(sd is None for sd in start_dims):
        starts.insert(xd, ops.constant(np.zeros((), starts[0].dtype if starts else np.int64)))
        sizes = list(slice_sizes)
        sizes.insert(xd, size)
        return [ops.dynamic_slice(x, starts, sizes)], [xd]
    columns = [ops.reshape(bdim_at(s, sd, size, 0), (size, 1)) for s, sd in zip(starts, start_dims)]
    indices = ops.concatenate(columns, 1)
    rank = len(slice_sizes)
    if xd is None:
        out = ops.gather(x, indices, offset_dims=tuple(range(1, rank + 1)), collapsed_slice_dims=(),
                         start_index_map=tuple(range(rank)), index_vector_dim=1, slice_sizes=slice_sizes)
        return [out], [0]
    sizes = list(slice_sizes)
    sizes.insert(xd, min(size, 1))  # (a batching dimension's slice: 0 when the batch is empty)
    out = ops.gather(x, indices, offset_dims=tuple(i for i in range(rank + 1) if i != xd),
                     collapsed_slice_dims=(), start_index_map=unbatched_axes(range(rank), xd),
                     index_vector_dim=1, slice_sizes=sizes, operand_batching_dims=(xd,),
                     start_indices_batching_dims=(0,))
    return [out], [xd]


@def_rule("batch", "stablehlo.concatenate")
def _concatenate_batch(size, ins, dims, *, dimension):
    """Pattern: concatenate(x[b at d], y) -> concatenate(x, broadcast(y) at d)[b at d]."""
    xs, d = common_dim(ins, dims, size)
    return [ops.concatenate(xs, dimension + (dimension >= d))], [d]


@def_rule("batch", "stablehlo.reverse")
def _reverse_batch(size, ins, dims, *, dimensions):
    """Pattern: reverse(x[b at d], a) -> reverse(x, a shifted around d)[b at d]."""
    (x,), (d,) = ins, dims
    return [ops.reverse(x, unbatched_axes(dimensions, d))], [d]
