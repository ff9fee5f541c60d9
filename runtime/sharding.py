"""Sharding plans: jax ``Mesh``/``NamedSharding``/``PartitionSpec`` per argument and result, turned
into module annotations XLA's SPMD partitioner reads (Shardy ``sdy.*`` or GSPMD ``mhlo.sharding``).
"""
from __future__ import annotations

from jax import tree_util

from hloforge.frontend.context import ir
from hloforge.runtime import pjrt


def _is_leaf(x) -> bool:
    return x is None or isinstance(x, (pjrt.NamedSharding, pjrt.PartitionSpec))


class _Group(tuple):
    """One prefix leaf repeated over the leaves of its subtree."""


def find_mesh(mesh, *prefixes):
    """``mesh`` if given, else the mesh of the first NamedSharding in ``prefixes``, else the mesh
    set with ``jax.set_mesh``; ValueError when there is none."""
    if mesh is not None:
        if not isinstance(mesh, pjrt.Mesh):
            raise TypeError(f"mesh must be a jax.sharding.Mesh, got {type(mesh).__name__} {mesh!r}")
        return mesh
    for prefix in prefixes:
        for s in tree_util.tree_leaves(prefix, is_leaf=_is_leaf):
            if isinstance(s, pjrt.NamedSharding):
                return s.mesh
    mesh = pjrt.context_mesh()
    if mesh is None:
        raise ValueError("shardings given as PartitionSpecs need a mesh: pass mesh=..., use "
                         "NamedSharding(mesh, spec), or set one with jax.set_mesh(mesh)")
    return mesh


def flat(prefix, full, what: str) -> list:
    """One entry of the pytree prefix ``prefix`` per leaf of ``full`` (like jax's in_shardings)."""
    if isinstance(prefix, list):
        prefix = tuple(prefix)
    try:
        groups = tree_util.tree_map(
            lambda s, sub: _Group([s] * len(tree_util.tree_leaves(sub))), prefix, full, is_leaf=_is_leaf)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{what} {prefix!r} is not a pytree prefix of the {len(tree_util.tree_leaves(full))} "
                         f"value(s) it applies to: {e}") from None
    return [s for g in tree_util.tree_leaves(groups, is_leaf=lambda x: isinstance(x, _Group)) for s in g]


def _named(s, mesh, shape, what: str):
    if s is None:
        s = pjrt.NamedSharding(mesh, pjrt.PartitionSpec())
    elif isinstance(s, pjrt.PartitionSpec):
        s = pjrt.NamedSharding(mesh, s)
    elif not isinstance(s, pjrt.NamedSharding):
        raise TypeError(f"{what}: expected a NamedSharding, PartitionSpec or None, got {type(s).__name__} {s!r}")
    if s.mesh != mesh:
        raise ValueError(f"{what}: all shardings must use one mesh; got {s.mesh} and {mesh}")
    if len(s.spec) > len(shape):
        raise ValueError(f"{what}: {s.spec} has {len(s.spec)} entries for a value of shape {list(shape)}")
    try:
        s.shard_shape(tuple(shape))
    except ValueError as e:
        raise ValueError(f"{what}: {s.spec} does not divide shape {list(shape)} over mesh "
                         f"{dict(mesh.shape)}: {e}") from None
    return s


class Plan:
    """Where every argument and result lives on ``mesh``; out_shardings None = XLA chooses."""

    def __init__(self, mesh, in_flat, out_flat, in_specs, out_specs):
        self.mesh = mesh
        self.devices = pjrt.mesh_devices(mesh)
        self.in_shardings = tuple(_named(s, mesh, shape, f"in_shardings[{i}]")
                                  for i, (s, (shape, _)) in enumerate(zip(in_flat, in_specs)))
        self.out_shardings = None if out_flat is None else tuple(
            _named(s, mesh, shape, f"out_shardings[{i}]") for i, (s, (shape, _)) in enumerate(zip(out_flat, out_specs)))


def _with_entries(old, entries) -> ir.ArrayAttr:
    """arg_attrs/res_attrs: the old dictionaries (if any) plus ``entries[i]`` (name, attr) or None."""
    dicts = []
    for i, entry in enumerate(entries):
        items = {} if old is None else {n.name: n.attr for n in ir.DictAttr(old[i])}
        if entry is not None:
            items[entry[0]] = entry[1]
        dicts.append(ir.DictAttr.get(items))
    return ir.ArrayAttr.get(dicts)


def annotate(module, plan: Plan, shardy: bool) -> None:
    """Write the plan into ``module`` (in place) for Shardy or GSPMD."""
    ins, outs = module.signature
    f = module.entry_function()
    with module.context, ir.Location.unknown():
        if shardy:
            if any(op.operation.name == "sdy.mesh" for op in module.mlir.body.operations):
                raise ValueError("module already has an sdy.mesh; compile it without shardings")
            mesh_op = ir.Operation.parse(pjrt.sdy_mesh_text(plan.mesh))
            ir.InsertionPoint.at_block_begin(module.mlir.body).insert(mesh_op)
            name, attr = "sdy.sharding", lambda s, n: ir.Attribute.parse(pjrt.sdy_sharding_text(s, n))
        else:
            name, attr = "mhlo.sharding", lambda s, n: ir.StringAttr.get(pjrt.hlo_sharding_text(s, n))
        attrs = f.attributes
        old = ir.ArrayAttr(attrs["arg_attrs"]) if "arg_attrs" in attrs else None
        attrs["arg_attrs"] = _with_entries(old, [(name, attr(s, len(spec.shape)))
                                                 for s, spec in zip(plan.in_shardings, ins)])
        outs_s = plan.out_shardings or (None,) * len(outs)
        old = ir.ArrayAttr(attrs["res_attrs"]) if "res_attrs" in attrs else None
        attrs["res_attrs"] = _with_entries(old, [None if s is None else (name, attr(s, len(spec.shape)))
                                                 for s, spec in zip(outs_s, outs)])
        i32 = ir.IntegerType.get_signless(32)
        module.mlir.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, len(plan.devices))
        module.mlir.operation.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, 1)
