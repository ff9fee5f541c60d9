"""Derivative rules of the collectives (frontend/ops/collective.py): linear in their operands
(all_reduce with a sum is its own transpose, all_gather's is a reduce_scatter, ...) or without
tangents."""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.ad._util import full, zeros_like
from hloforge.frontend.registry import def_rule


# ---------------------------------------------------------------- collectives (linear, or no tangents)

def _per_operand(make):
    """A rule applying ``make(value, **params)`` to each non-zero (co)tangent of a variadic collective."""
    def rule(ins, outs, values, **params):
        present = [i for i, v in enumerate(values) if v is not None]
        out = [None] * len(values)
        if present:
            got = make([values[i] for i in present], **params)
            for i, g in zip(present, got):
                out[i] = g
        return out
    return rule


def _sum_only(name, computation):
    if computation != "add":
        raise NotImplementedError(f"hloforge AD: {name} is differentiable with the add computation only, "
                                  f"got {computation!r}")


def _all_reduce(values, computation, **p):
    _sum_only("stablehlo.all_reduce", computation)
    return list(ops.all_reduce(list(values), computation="add", **p))


def_rule("jvp", "stablehlo.all_reduce")(_per_operand(_all_reduce))
def_rule("vjp", "stablehlo.all_reduce")(_per_operand(_all_reduce))  # the sum is its own transpose

def_rule("jvp", "stablehlo.all_gather")(_per_operand(lambda vs, **p: list(ops.all_gather(list(vs), **p))))
def_rule("vjp", "stablehlo.all_gather")(
    _per_operand(lambda vs, all_gather_dim, **p: [ops.reduce_scatter(v, all_gather_dim, **p) for v in vs]))


@def_rule("jvp", "stablehlo.reduce_scatter")
def _reduce_scatter_jvp(ins, outs, ts, computation, **p):
    _sum_only("stablehlo.reduce_scatter", computation)
    return [ops.reduce_scatter(ts[0], computation="add", **p)]


@def_rule("vjp", "stablehlo.reduce_scatter")
def _reduce_scatter_vjp(ins, outs, cts, scatter_dimension, computation, replica_groups, channel_handle,
                        use_global_device_ids):
    _sum_only("stablehlo.reduce_scatter", computation)
    return [ops.all_gather(cts[0], scatter_dimension, replica_groups, channel_handle=channel_handle,
                           use_global_device_ids=use_global_device_ids)]


def _all_to_all_t(vs, split_dimension, concat_dimension, **p):
    """The inverse all_to_all: split where the forward one concatenated and vice versa."""
    return list(ops.all_to_all(list(vs), concat_dimension, split_dimension, **p))


def_rule("jvp", "stablehlo.all_to_all")(_per_operand(lambda vs, **p: list(ops.all_to_all(list(vs), **p))))
def_rule("vjp", "stablehlo.all_to_all")(_per_operand(_all_to_all_t))

def_rule("jvp", "stablehlo.collective_permute")(lambda ins, outs, ts, **p: [ops.collective_permute(ts[0], **p)])
def_rule("vjp", "stablehlo.collective_permute")(
    lambda ins, outs, cts, source_target_pairs, channel_handle: [ops.collective_permute(
        cts[0], [(t, s) for s, t in source_target_pairs], channel_handle=channel_handle)])


@def_rule("vjp", "stablehlo.collective_broadcast")
def _broadcast_vjp(ins, outs, cts, replica_groups, channel_handle):
    """Each group's source gets the sum of the group's cotangents, the other members zero."""
    total = ops.all_reduce(cts[0], replica_groups, channel_handle=channel_handle)
    me = ops.partition_id() if channel_handle is not None else ops.replica_id()
    is_source = None
    for group in replica_groups:
        hit = ops.compare(me, full(group[0], (), me.dtype), "EQ")
        is_source = hit if is_source is None else ops.or_(is_source, hit)
    return [ops.select(ops.broadcast_in_dim(is_source, total.shape, ()), total, zeros_like(total))]


def_rule("jvp", "stablehlo.collective_broadcast")(lambda ins, outs, ts, **p: [ops.collective_broadcast(ts[0], **p)])

# integer results: no tangents
def_rule("jvp", "stablehlo.partition_id", "stablehlo.replica_id")(lambda ins, outs, ts: [None])
def_rule("vjp", "stablehlo.partition_id", "stablehlo.replica_id")(lambda ins, outs, cts: [])
