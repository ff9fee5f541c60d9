"""Batching rules of ``frontend/ops/collective.py``: the collectives over a batch dimension that is
not theirs (vmap's axis is not a device axis: each example's collective is the same collective,
so the batched one works on every example at once).

all_reduce, collective_permute and collective_broadcast treat every element alike: the batch
dimension stays where it is. all_gather, reduce_scatter and all_to_all name dimensions, which
shift past the batch dimension. Variadic ones name one dimension for every operand: the batched
operands keep a batch dimension they share; when unbatched operands are there too and that
dimension comes before a named one, the batched operands move right after the named dimensions
(unbatched operands are never broadcast: that would send ``size`` copies between devices).

partition_id and replica_id have no operands, so they are never batched; their rules raise.
"""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.batching._util import moveaxis
from hloforge.frontend.batching.core import WHAT
from hloforge.frontend.registry import def_rule


@def_rule("batch", "stablehlo.all_reduce")
def _all_reduce_batch(size, ins, dims, *, replica_groups, computation, channel_handle, use_global_device_ids):
    """Pattern: all_reduce(x[b]) -> all_reduce(x)[b], the same reduction body."""
    outs = ops.all_reduce(list(ins), replica_groups, computation=computation, channel_handle=channel_handle,
                          use_global_device_ids=use_global_device_ids)
    return list(outs), list(dims)


def _shared(ins, dims, named) -> tuple:
    """(operands, their batch dimensions, the batched operands' one dimension d): the batched
    operands at one dimension such that the per-example dimensions ``named`` become
    ``a + (a >= d)`` for batched operands and stay ``a`` for unbatched ones."""
    batched = [d for d in dims if d is not None]
    d = batched[0] if len(set(batched)) == 1 else 0
    if any(e is None for e in dims) and any(a >= d for a in named):
        d = max(named) + 1
    return [x if e is None else moveaxis(x, e, d) for x, e in zip(ins, dims)], [None if e is None else d
                                                                                 for e in dims], d


def _shifted(a, d):
    return a + (a >= d)


@def_rule("batch", "stablehlo.all_gather")
def _all_gather_batch(size, ins, dims, *, all_gather_dim, replica_groups, channel_handle, use_global_device_ids):
    """Pattern: all_gather(x[b], g) -> all_gather(x, g shifted past b)[b]."""
    ins, dims, d = _shared(ins, dims, [all_gather_dim])
    outs = ops.all_gather(list(ins), _shifted(all_gather_dim, d), replica_groups, channel_handle=channel_handle,
                          use_global_device_ids=use_global_device_ids)
    return list(outs), dims


@def_rule("batch", "stablehlo.reduce_scatter")
def _reduce_scatter_batch(size, ins, dims, *, scatter_dimension, replica_groups, computation, channel_handle,
                          use_global_device_ids):
    """Pattern: reduce_scatter(x[b], s) -> reduce_scatter(x, s shifted past b)[b]."""
    (x,), (d,) = ins, dims
    y = ops.reduce_scatter(x, _shifted(scatter_dimension, d), replica_groups, computation=computation,
                           channel_handle=channel_handle, use_global_device_ids=use_global_device_ids)
    return [y], [d]


@def_rule("batch", "stablehlo.all_to_all")
def _all_to_all_batch(size, ins, dims, *, split_dimension, concat_dimension, split_count, replica_groups,
                      channel_handle):
    """Pattern: all_to_all(x[b], s, c) -> all_to_all(x, s and c shifted past b)[b]."""
    ins, dims, d = _shared(ins, dims, [split_dimension, concat_dimension])
    outs = ops.all_to_all(list(ins), _shifted(split_dimension, d), _shifted(concat_dimension, d), split_count,
                          replica_groups, channel_handle=channel_handle)
    return list(outs), dims


@def_rule("batch", "stablehlo.collective_permute")
def _collective_permute_batch(size, ins, dims, *, source_target_pairs, channel_handle):
    """Pattern: collective_permute(x[b]) -> collective_permute(x)[b]."""
    return [ops.collective_permute(ins[0], source_target_pairs, channel_handle=channel_handle)], list(dims)


@def_rule("batch", "stablehlo.collective_broadcast")
def _collective_broadcast_batch(size, ins, dims, *, replica_groups, channel_handle):
    """Pattern: collective_broadcast(x[b]) -> collective_broadcast(x)[b]."""
    return [ops.collective_broadcast(ins[0], replica_groups, channel_handle=channel_handle)], list(dims)


@def_rule("batch", "stablehlo.partition_id", "stablehlo.replica_id")
def _ids_batch(size, ins, dims, **params):
    """Never called: partition_id and replica_id have no operands, so no batched input reaches them."""
    raise RuntimeError(f"{WHAT}: partition_id and replica_id take no operands and are never batched; their "
                       f"batch rule was called with dimensions {dims}")
