"""Collectives for manual-SPMD programs (every partition runs the same program on its own
shard): partition_id, replica_id, all_reduce, all_gather, reduce_scatter, all_to_all,
collective_permute, collective_broadcast.

Groups are lists of partition (or replica) ids; ``channel_handle`` is a (handle, type) pair, type
1 (device to device) being what cross-partition collectives use; ``use_global_device_ids``
makes the groups flattened device ids (with a channel handle, what jax.shard_map emits)."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import attributes as attr
from hloforge.frontend.context import ir, stablehlo
from hloforge.frontend.ops._common import COMPLEX, category, check_axes, int_tuple, operand
from hloforge.frontend.ops.linalg import REDUCERS, _named_body, reducer_name
from hloforge.frontend.registry import Region, bind, body_of, register
from hloforge.frontend.tracing import Tensor

_U32 = np.dtype(np.uint32)


def _ids_op(name, pyname):
    def build(*, loc=None) -> Tensor:
        return bind(name, [], loc=loc)
    build.__name__ = build.__qualname__ = pyname
    build.__doc__ = f"""This partition's (``partition_id``) or replica's (``replica_id``) index as a 0-d
    uint32; emits ``{name}``.

    Returns:
      A uint32[] Tensor.
    Example:
      >>> i = ops.{pyname}()
    """
    return register(name, rule=lambda: ((), _U32))(build)


partition_id = _ids_op("stablehlo.partition_id", "partition_id")
replica_id = _ids_op("stablehlo.replica_id", "replica_id")


def _groups(op, groups):
    try:
        rows = tuple(tuple(int_tuple(op, "replica_groups", g)) for g in groups)
    except TypeError:
        raise TypeError(f"{op}: replica_groups must be a sequence of sequences of ints, got {groups!r}") from None
    if not rows or len({len(r) for r in rows}) != 1 or not rows[0]:
        raise ValueError(f"{op}: replica_groups {[list(r) for r in rows]} must be non-empty groups of one size")
    flat = [i for r in rows for i in r]
    if any(i < 0 for i in flat) or len(set(flat)) != len(flat):
        raise ValueError(f"{op}: replica_groups {[list(r) for r in rows]} must hold distinct ids >= 0")
    return rows


def _channel(op, channel_handle):
    if channel_handle is None:
        return None
    try:
        handle, kind = (int(v) for v in channel_handle)
    except (TypeError, ValueError):
        raise TypeError(f"{op}: channel_handle must be a (handle, type) pair of ints or None, "
                        f"got {channel_handle!r}") from None
    return handle, kind


def _common_attributes(replica_groups=None, channel_handle=None, use_global_device_ids=False):
    out = {}
    if replica_groups is not None:
        out["replica_groups"] = attr.i64_matrix(replica_groups, len(replica_groups[0]))
    if channel_handle is not None:
        out["channel_handle"] = stablehlo.ChannelHandle.get(*channel_handle)
    if use_global_device_ids:
        out["use_global_device_ids"] = ir.UnitAttr.get()
    return out


def _common_decode(op, groups=True, global_ids=True):
    out = {}
    if groups:
        out["replica_groups"] = attr.read_i64_matrix(op, "replica_groups")
    if "channel_handle" in op.attributes:
        c = stablehlo.ChannelHandle(op.attributes["channel_handle"])
        out["channel_handle"] = (c.handle, c.channel_type)
    else:
        out["channel_handle"] = None
    if global_ids:
        out["use_global_device_ids"] = "use_global_device_ids" in op.attributes
    return out


def _check_body(op, computation):
    if isinstance(computation, str):
        if computation not in REDUCERS:
            raise ValueError(f"{op}: computation {computation!r} is not one of {', '.join(REDUCERS)} or a callable")
    elif not callable(computation):
        raise TypeError(f"{op}: computation must be a name or a callable, got {type(computation).__name__}")


def _check_named(op, computation, xs):
    if not isinstance(computation, str):
        return
    for x in xs:
        cat = category(x.dtype)
        if computation in ("and", "or") and cat in ("float", COMPLEX):
            raise TypeError(f"{op}: computation {computation!r} needs bool or integer operands, got {x.dtype}")
        if computation in ("max", "min") and cat == COMPLEX:
            raise TypeError(f"{op}: computation {computation!r} does not order complex operands")


def _reducer_regions(op):
    def regions(xs, computation, **params):
        scalar = [((), xs[0].dtype)]  # (one body for every operand: they share a dtype)
        fn = _named_body(computation) if isinstance(computation, str) else computation
        return [Region(scalar * 2, fn, scalar, f"{op}: computation")]
    return regions


def _reducer_decode(op):
    return reducer_name(op) or body_of(op.regions[0])


def _as_list(op, operands):
    single = isinstance(operands, Tensor) or not isinstance(operands, (list, tuple))
    return single, [operand(op, x) for x in ([operands] if single else operands)]


# ---------------------------------------------------------------- all_reduce

def _all_reduce_params(replica_groups, computation="add", channel_handle=None, use_global_device_ids=False):
    _check_body("all_reduce", computation)
    return {"replica_groups": _groups("all_reduce", replica_groups), "computation": computation,
            "channel_handle": _channel("all_reduce", channel_handle), "use_global_device_ids": bool(use_global_device_ids)}


def _all_reduce_rule(*xs, replica_groups, computation, channel_handle, use_global_device_ids):
    if not xs:
        raise ValueError("all_reduce: needs at least one operand")
    if len({x.dtype for x in xs}) > 1:
        raise TypeError(f"all_reduce: operands {list(xs)} must share a dtype (one computation reduces them all)")
    _check_named("all_reduce", computation, xs)
    return [(x.shape, x.dtype) for x in xs]


@register("stablehlo.all_reduce", rule=_all_reduce_rule, params=_all_reduce_params,
          attributes=lambda computation, **p: _common_attributes(**p), regions=_reducer_regions("all_reduce"),
          decode=lambda op: {**_common_decode(op), "computation": _reducer_decode(op)},
          arrange=lambda operands: (list(operands),), traits={"variadic"})
def all_reduce(operands, replica_groups, *, computation="add", channel_handle=None, use_global_device_ids=False,
               loc=None):
    """Reduce each operand over the partitions of every group; emits ``stablehlo.all_reduce``.

    Args:
      operands: a Tensor or a sequence of Tensors of one dtype.
      replica_groups: e.g. ``[[0, 1, 2, 3], [4, 5, 6, 7]]``.
      computation: "add", "mul", "max", "min", "and", "or" or a callable (a, b) -> 0-d Tensor.
      channel_handle: (handle, type) or None. use_global_device_ids: see the module docstring.
    Returns:
      A Tensor (one operand) or a tuple.
    Example:
      >>> total = ops.all_reduce(x, [list(range(8))], channel_handle=(1, 1), use_global_device_ids=True)
    """
    single, xs = _as_list("all_reduce", operands)
    out = bind("stablehlo.all_reduce", xs, replica_groups=replica_groups, computation=computation,
               channel_handle=channel_handle, use_global_device_ids=use_global_device_ids, loc=loc)
    return out[0] if single else tuple(out)


# ---------------------------------------------------------------- all_gather

def _all_gather_params(all_gather_dim, replica_groups, channel_handle=None, use_global_device_ids=False):
    return {"all_gather_dim": int_tuple("all_gather", "all_gather_dim", (all_gather_dim,))[0],
            "replica_groups": _groups("all_gather", replica_groups), "channel_handle": _channel("all_gather", channel_handle),
            "use_global_device_ids": bool(use_global_device_ids)}


def _all_gather_rule(*xs, all_gather_dim, replica_groups, channel_handle, use_global_device_ids):
    if not xs:
        raise ValueError("all_gather: needs at least one operand")
    out = []
    for x in xs:
        check_axes("all_gather", "all_gather_dim", (all_gather_dim,), x.ndim)
        shape = list(x.shape)
        shape[all_gather_dim] *= len(replica_groups[0])
        out.append((tuple(shape), x.dtype))
    return out


@register("stablehlo.all_gather", rule=_all_gather_rule, params=_all_gather_params,
          attributes=lambda all_gather_dim, **p: {"all_gather_dim": attr.i64(all_gather_dim), **_common_attributes(**p)},
          decode=lambda op: {"all_gather_dim": attr.read_int(op, "all_gather_dim"), **_common_decode(op)},
          arrange=lambda operands: (list(operands),), traits={"variadic"})
def all_gather(operands, all_gather_dim: int, replica_groups, *, channel_handle=None, use_global_device_ids=False,
               loc=None):
    """Concatenate the group's shards along ``all_gather_dim`` (in group order); emits
    ``stablehlo.all_gather``.

    Args:
      operands: a Tensor or a sequence of Tensors.
      all_gather_dim: the dimension that grows by the group size.
      replica_groups, channel_handle, use_global_device_ids: as for all_reduce.
    Returns:
      A Tensor (one operand) or a tuple.
    Example:
      >>> full = ops.all_gather(shard, 0, [list(range(8))], channel_handle=(1, 1), use_global_device_ids=True)
    """
    single, xs = _as_list("all_gather", operands)
    out = bind("stablehlo.all_gather", xs, all_gather_dim=all_gather_dim, replica_groups=replica_groups,
               channel_handle=channel_handle, use_global_device_ids=use_global_device_ids, loc=loc)
    return out[0] if single else tuple(out)


# ---------------------------------------------------------------- reduce_scatter

def _reduce_scatter_params(scatter_dimension, replica_groups, computation="add", channel_handle=None,
                           use_global_device_ids=False):
    _check_body("reduce_scatter", computation)
    return {"scatter_dimension": int_tuple("reduce_scatter", "scatter_dimension", (scatter_dimension,))[0],
            "replica_groups": _groups("reduce_scatter", replica_groups), "computation": computation,
            "channel_handle": _channel("reduce_scatter", channel_handle),
            "use_global_device_ids": bool(use_global_device_ids)}


def _reduce_scatter_rule(x, scatter_dimension, replica_groups, computation, channel_handle, use_global_device_ids):
    check_axes("reduce_scatter", "scatter_dimension", (scatter_dimension,), x.ndim)
    n = len(replica_groups[0])
    if x.shape[scatter_dimension] % n:
        raise ValueError(f"reduce_scatter: dimension {scatter_dimension} of {x} is not divisible by the group size {n}")
    _check_named("reduce_scatter", computation, [x])
    shape = list(x.shape)
    shape[scatter_dimension] //= n
    return tuple(shape), x.dtype


@register("stablehlo.reduce_scatter", rule=_reduce_scatter_rule, params=_reduce_scatter_params,
          attributes=lambda scatter_dimension, computation, **p: {"scatter_dimension": attr.i64(scatter_dimension),
                                                                  **_common_attributes(**p)},
          regions=_reducer_regions("reduce_scatter"),
          decode=lambda op: {"scatter_dimension": attr.read_int(op, "scatter_dimension"), **_common_decode(op),
                             "computation": _reducer_decode(op)})
def reduce_scatter(x, scatter_dimension: int, replica_groups, *, computation="add", channel_handle=None,
                   use_global_device_ids=False, loc=None) -> Tensor:
    """Reduce over the group, then keep this partition's slice of ``scatter_dimension``; emits
    ``stablehlo.reduce_scatter``.

    Args:
      x: Tensor whose ``scatter_dimension`` the group size divides.
      scatter_dimension, replica_groups, computation, channel_handle, use_global_device_ids: see
        all_reduce.
    Returns:
      A Tensor with ``scatter_dimension`` divided by the group size.
    Example:
      >>> part = ops.reduce_scatter(x, 0, [list(range(8))], channel_handle=(1, 1), use_global_device_ids=True)
    """
    return bind("stablehlo.reduce_scatter", [operand("reduce_scatter", x)], scatter_dimension=scatter_dimension,
                replica_groups=replica_groups, computation=computation, channel_handle=channel_handle,
                use_global_device_ids=use_global_device_ids, loc=loc)


# ---------------------------------------------------------------- all_to_all

def _all_to_all_params(split_dimension, concat_dimension, split_count, replica_groups, channel_handle=None):
    s, c, n = int_tuple("all_to_all", "(split_dimension, concat_dimension, split_count)",
                        (split_dimension, concat_dimension, split_count))
    groups = _groups("all_to_all", replica_groups)
    if n < 1 or n != len(groups[0]):
        raise ValueError(f"all_to_all: split_count {n} must equal the group size {len(groups[0])}")
    return {"split_dimension": s, "concat_dimension": c, "split_count": n, "replica_groups": groups,
            "channel_handle": _channel("all_to_all", channel_handle)}


def _all_to_all_rule(*xs, split_dimension, concat_dimension, split_count, replica_groups, channel_handle):
    if not xs:
        raise ValueError("all_to_all: needs at least one operand")
    out = []
    for x in xs:
        check_axes("all_to_all", "split_dimension", (split_dimension,), x.ndim)
        check_axes("all_to_all", "concat_dimension", (concat_dimension,), x.ndim)
        if x.shape[split_dimension] % split_count:
            raise ValueError(f"all_to_all: dimension {split_dimension} of {x} is not divisible by split_count {split_count}")
        shape = list(x.shape)
        shape[split_dimension] //= split_count
        shape[concat_dimension] *= split_count
        out.append((tuple(shape), x.dtype))
    return out


@register("stablehlo.all_to_all", rule=_all_to_all_rule, params=_all_to_all_params,
          attributes=lambda split_dimension, concat_dimension, split_count, **p: {
              "split_dimension": attr.i64(split_dimension), "concat_dimension": attr.i64(concat_dimension),
              "split_count": attr.i64(split_count), **_common_attributes(**p)},
          decode=lambda op: {k: attr.read_int(op, k) for k in ("split_dimension", "concat_dimension", "split_count")}
          | _common_decode(op, global_ids=False),
          arrange=lambda operands: (list(operands),), traits={"variadic"})
def all_to_all(operands, split_dimension: int, concat_dimension: int, split_count: int, replica_groups, *,
               channel_handle=None, loc=None):
    """Split ``split_dimension`` into ``split_count`` blocks, send block i to the group's i-th
    member, concatenate what arrives along ``concat_dimension``; emits ``stablehlo.all_to_all``.

    Args:
      operands: a Tensor or a sequence of Tensors.
      split_dimension, concat_dimension: dimensions of the operand.
      split_count: the group size.
      replica_groups, channel_handle: as for all_reduce.
    Returns:
      A Tensor (one operand) or a tuple.
    Example:
      >>> y = ops.all_to_all(x, 0, 1, 8, [list(range(8))], channel_handle=(1, 1))
    """
    single, xs = _as_list("all_to_all", operands)
    out = bind("stablehlo.all_to_all", xs, split_dimension=split_dimension, concat_dimension=concat_dimension,
               split_count=split_count, replica_groups=replica_groups, channel_handle=channel_handle, loc=loc)
    return out[0] if single else tuple(out)


# ---------------------------------------------------------------- collective_permute, collective_broadcast

def _permute_params(source_target_pairs, channel_handle=None):
    try:
        pairs = tuple(int_tuple("collective_permute", "source_target_pairs", p, 2) for p in source_target_pairs)
    except (TypeError, ValueError):
        raise ValueError("collective_permute: source_target_pairs must be (source, target) int pairs, "
                         f"got {source_target_pairs!r}") from None
    sources, targets = [p[0] for p in pairs], [p[1] for p in pairs]
    if len(set(sources)) != len(sources) or len(set(targets)) != len(targets) or any(i < 0 for p in pairs for i in p):
        raise ValueError(f"collective_permute: source_target_pairs {[list(p) for p in pairs]} must have distinct "
                         "sources, distinct targets, ids >= 0")
    return {"source_target_pairs": pairs, "channel_handle": _channel("collective_permute", channel_handle)}


@register("stablehlo.collective_permute", rule=lambda x, **p: (x.shape, x.dtype), params=_permute_params,
          attributes=lambda source_target_pairs, channel_handle: {
              "source_target_pairs": attr.i64_matrix(source_target_pairs), **_common_attributes(channel_handle=channel_handle)},
          decode=lambda op: {"source_target_pairs": attr.read_i64_matrix(op, "source_target_pairs"),
                             **_common_decode(op, groups=False, global_ids=False)})
def collective_permute(x, source_target_pairs, *, channel_handle=None, loc=None) -> Tensor:
    """Send ``x`` from each source partition to its target (targets no pair names get zeros);
    emits ``stablehlo.collective_permute``.

    Args:
      x: Tensor.
      source_target_pairs: (source, target) partition id pairs.
      channel_handle: (handle, type) or None.
    Returns:
      A Tensor of x's shape and dtype.
    Example:
      >>> y = ops.collective_permute(x, [(i, (i + 1) % 8) for i in range(8)], channel_handle=(1, 1))
    """
    return bind("stablehlo.collective_permute", [operand("collective_permute", x)],
                source_target_pairs=source_target_pairs, channel_handle=channel_handle, loc=loc)


@register("stablehlo.collective_broadcast", rule=lambda x, **p: (x.shape, x.dtype),
          params=lambda replica_groups, channel_handle=None: {
              "replica_groups": _groups("collective_broadcast", replica_groups),
              "channel_handle": _channel("collective_broadcast", channel_handle)},
          attributes=lambda **p: _common_attributes(**p),
          decode=lambda op: _common_decode(op, global_ids=False))
def collective_broadcast(x, replica_groups, *, channel_handle=None, loc=None) -> Tensor:
    """Every member of a group gets the group's first member's ``x``; emits
    ``stablehlo.collective_broadcast``.

    Args:
      x: Tensor.
      replica_groups: groups of ids; the first id of each group is its source.
      channel_handle: (handle, type) or None.
    Returns:
      A Tensor of x's shape and dtype.
    Example:
      >>> y = ops.collective_broadcast(x, [[0, 1, 2, 3], [4, 5, 6, 7]], channel_handle=(1, 1))
    """
    return bind("stablehlo.collective_broadcast", [operand("collective_broadcast", x)],
                replica_groups=replica_groups, channel_handle=channel_handle, loc=loc)


__all__ = ["partition_id", "replica_id", "all_reduce", "all_gather", "reduce_scatter", "all_to_all",
           "collective_permute", "collective_broadcast"]
