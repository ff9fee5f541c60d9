"""Structural ops: custom_call, optimization_barrier, sharding_constraint (Shardy's), map, composite."""
from __future__ import annotations

import itertools

from hloforge.frontend import attributes as attr
from hloforge.frontend import dtypes
from hloforge.frontend.context import func, ir, shape_dtype_of
from hloforge.frontend.ops._common import check_axes, int_tuple, operand
from hloforge.frontend.registry import Region, Spec, bind, body_of, register
from hloforge.frontend.tracing import Tensor, _Scope, as_tensor, current_builder

# ---------------------------------------------------------------- custom_call

API_VERSIONS = {1: "API_VERSION_ORIGINAL", 2: "API_VERSION_STATUS_RETURNING",
                3: "API_VERSION_STATUS_RETURNING_UNIFIED", 4: "API_VERSION_TYPED_FFI"}


def _result_specs(op, specs):
    try:
        out = tuple(Spec.of(s) for s in specs)
    except (TypeError, ValueError):
        raise TypeError(f"{op}: result_specs must be a sequence of (shape, dtype) pairs, got {specs!r}") from None
    for s in out:
        if any(d < 0 for d in s.shape):
            raise ValueError(f"{op}: result shape {s.shape} has a negative dimension")
    return out


_CUSTOM_CALL_DECODED = ("call_target_name", "has_side_effect", "backend_config", "api_version", "called_computations")


def _extra_attributes(extra):
    """The other attributes of a custom call as sorted (name, MLIR text) pairs."""
    items = dict(extra or {})
    for k, v in items.items():
        if not isinstance(k, str) or k in _CUSTOM_CALL_DECODED or not isinstance(v, (str, ir.Attribute)):
            raise TypeError(f"custom_call: extra_attributes must map names other than "
                            f"{', '.join(_CUSTOM_CALL_DECODED)} to MLIR attribute text, got {k!r}: {v!r}")
    return tuple(sorted((k, str(v)) for k, v in items.items()))


def _custom_call_params(call_target_name, result_specs, has_side_effect=False, backend_config="", api_version=1,
                        extra_attributes=None):
    if not isinstance(call_target_name, str) or not call_target_name:
        raise TypeError(f"custom_call: call_target_name must be a non-empty str, got {call_target_name!r}")
    if not isinstance(backend_config, str):
        raise TypeError(f"custom_call: backend_config must be a str, got {type(backend_config).__name__}")
    if api_version not in API_VERSIONS:
        raise ValueError(f"custom_call: api_version {api_version!r} is not one of {sorted(API_VERSIONS)}")
    return {"call_target_name": call_target_name, "result_specs": _result_specs("custom_call", result_specs),
            "has_side_effect": bool(has_side_effect), "backend_config": backend_config, "api_version": int(api_version),
            "extra_attributes": _extra_attributes(extra_attributes)}


def _custom_call_attributes(call_target_name, result_specs, has_side_effect, backend_config, api_version,
                            extra_attributes):
    out = {k: ir.Attribute.parse(v) for k, v in extra_attributes}
    out.update({"call_target_name": ir.StringAttr.get(call_target_name),
                "has_side_effect": attr.boolean(has_side_effect), "backend_config": ir.StringAttr.get(backend_config),
                "api_version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), api_version)})
    return out


def _custom_call_decode(op):
    config = op.attributes["backend_config"] if "backend_config" in op.attributes else None
    return {"call_target_name": ir.StringAttr(op.attributes["call_target_name"]).value,
            "result_specs": [shape_dtype_of(r.type) for r in op.results],
            "has_side_effect": attr.read_bool(op, "has_side_effect"),
            "backend_config": ir.StringAttr(config).value if isinstance(config, ir.StringAttr) else "",
            "api_version": attr.read_int(op, "api_version") if "api_version" in op.attributes else 1,
            "extra_attributes": {a.name: str(a.attr) for a in (op.attributes[i] for i in range(len(op.attributes)))
                                 if a.name not in _CUSTOM_CALL_DECODED}}


@register("stablehlo.custom_call", rule=lambda *xs, result_specs, **p: list(result_specs),
          params=_custom_call_params, attributes=_custom_call_attributes, decode=_custom_call_decode,
          arrange=lambda operands: (list(operands),), traits={"variadic"})
def custom_call(operands, call_target_name: str, result_specs, *, has_side_effect=False, backend_config="",
                api_version=1, extra_attributes=None, loc=None):
    """A call into a backend-registered target; emits ``stablehlo.custom_call``.

    Args:
      operands: a sequence of Tensors.
      call_target_name: the registered target, e.g. a LAPACK kernel.
      result_specs: the (shape, dtype) of each result.
      has_side_effect: keep the call even when its results are unused.
      backend_config: the opaque string the target reads.
      api_version: 1 (original), 2, 3 (status returning) or 4 (typed FFI).
      extra_attributes: other attributes, name -> MLIR attribute text (e.g. ``operand_layouts``,
        ``output_operand_aliases``, ``mhlo.backend_config``: what jaxlib's LAPACK calls carry); a
        re-emitted custom call keeps all of them (``called_computations`` is not carried).
    Returns:
      A list of Tensors, one per result spec.
    Example:
      >>> (y,) = ops.custom_call([x], "my_target", [((4,), np.float32)])
    """
    xs = [operand("custom_call", x) for x in operands]
    return bind("stablehlo.custom_call", xs, call_target_name=call_target_name, result_specs=result_specs,
                has_side_effect=has_side_effect, backend_config=backend_config, api_version=api_version,
                extra_attributes=extra_attributes, loc=loc)


# ---------------------------------------------------------------- optimization_barrier

# (no evaluate: constant folding must not see through a barrier)
@register("stablehlo.optimization_barrier", rule=lambda *xs: [(x.shape, x.dtype) for x in xs], arrange=lambda operands: (list(operands),), traits={"variadic"})
def optimization_barrier(operands, *, loc=None):
    """The operands unchanged, with no computation moved across; emits
    ``stablehlo.optimization_barrier``.

    Args:
      operands: a Tensor or a sequence of Tensors.
    Returns:
      The same structure of Tensors.
    Example:
      >>> a, b = ops.optimization_barrier([a, b])
    """
    single = isinstance(operands, Tensor) or not isinstance(operands, (list, tuple))
    xs = [operand("optimization_barrier", x) for x in ([operands] if single else operands)]
    out = bind("stablehlo.optimization_barrier", xs, loc=loc)
    return out[0] if single else tuple(out)


# ---------------------------------------------------------------- sharding_constraint (Shardy)

_SHARDING = "#sdy.sharding<"


def _top_level(text: str) -> list:
    """``text`` split at its top-level commas (outside <>, [] and {} and quotes), each part stripped."""
    parts, depth, start, quoted = [], 0, 0, False
    for i, c in enumerate(text):
        if c == '"':
            quoted = not quoted
        elif not quoted and c in "<[{":
            depth += 1
        elif not quoted and c in ">]}":
            depth -= 1
        elif not quoted and c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def sharding_parts(sharding: str) -> tuple:
    """(mesh, [dimension shardings], [the rest: replicated=..., ...]) of an ``#sdy.sharding<...>`` text."""
    if not (isinstance(sharding, str) and sharding.startswith(_SHARDING) and sharding.endswith(">")):
        raise ValueError(f"hloforge.ops.sharding_constraint: sharding must be the text of an "
                         f"#sdy.sharding<@mesh, [...]> attribute, got {sharding!r}")
    parts = _top_level(sharding[len(_SHARDING):-1])
    if len(parts) < 2 or not (parts[1].startswith("[") and parts[1].endswith("]")):
        raise ValueError(f"hloforge.ops.sharding_constraint: no list of dimension shardings in {sharding!r}")
    dims = [d for d in _top_level(parts[1][1:-1]) if d]
    return parts[0], dims, parts[2:]


def sharding_text(mesh: str, dims: list, rest: list) -> str:
    return f"{_SHARDING}{', '.join([mesh, '[' + ', '.join(dims) + ']', *rest])}>"


def _sharding_rule(x, sharding):
    dims = sharding_parts(sharding)[1]
    if len(dims) != x.ndim:
        raise ValueError(f"hloforge.ops.sharding_constraint: {sharding} shards {len(dims)} dimensions, the operand "
                         f"{x} has {x.ndim}")
    return x.shape, x.dtype


def _sharding_params(sharding, mesh=None):
    if mesh is not None and not (isinstance(mesh, str) and mesh.lstrip().startswith("sdy.mesh @")):
        raise ValueError(f"hloforge.ops.sharding_constraint: mesh must be the text of an sdy.mesh op, got {mesh!r}")
    return {"sharding": sharding_text(*sharding_parts(sharding)), "mesh": mesh}


def _mesh_named(block, name: str):
    """The ``sdy.mesh`` op called ``name`` among ``block``'s ops (a module's body), or None."""
    for candidate in block.operations:
        if candidate.operation.name == "sdy.mesh" and str(candidate.attributes["sym_name"]) == f'"{name}"':
            return candidate
    return None


def _mesh_of(op):
    """The text of the ``sdy.mesh`` op that ``op``'s sharding names (None for an inline mesh)."""
    name = sharding_parts(str(op.attributes["sharding"]))[0]
    if not name.startswith("@"):
        return None
    top = op.operation
    while top.parent is not None:
        top = top.parent
    mesh = _mesh_named(top.regions[0].blocks[0], name[1:])
    return None if mesh is None else str(mesh)


def _ensure_mesh(mesh: str) -> None:
    """Put the ``sdy.mesh`` op ``mesh`` (its text) into the module being traced, unless it has it."""
    b = current_builder("hloforge.ops.sharding_constraint")
    if _mesh_named(b.module.body, mesh.split("@", 1)[1].split()[0]) is not None:
        return
    with b.ctx, ir.Location.unknown():
        parsed = ir.Module.parse(mesh)
        parsed.body.operations[0].operation.clone(ip=ir.InsertionPoint.at_block_begin(b.module.body))


# (no evaluate, as optimization_barrier: folding a constant through the constraint would drop its layout)
@register("sdy.sharding_constraint", rule=lambda x, sharding, mesh: _sharding_rule(x, sharding),
          params=_sharding_params, attributes=lambda sharding, mesh: {"sharding": ir.Attribute.parse(sharding)},
          decode=lambda op: {"sharding": str(op.attributes["sharding"]), "mesh": _mesh_of(op)}, traits={"linear"})
def sharding_constraint(x, sharding, mesh=None, *, loc=None):
    """``x`` itself, with the layout the SPMD partitioner must give it (what jax.lax.with_sharding_constraint
    lowers to); emits ``sdy.sharding_constraint``.

    Args:
      x: a Tensor.
      sharding: the attribute's text, ``#sdy.sharding<@mesh, [{"x"}, {}]>`` (one entry per dimension).
      mesh: the text of the ``sdy.mesh`` op it names (``sdy.mesh @mesh = <["x"=2]>``), added to the module
        when it lacks one of that name; None when the module has it or the mesh is inline.
    Returns:
      A Tensor of ``x``'s shape and dtype.
    Example:
      >>> y = ops.sharding_constraint(x, '#sdy.sharding<@mesh, [{"x"}, {}]>', 'sdy.mesh @mesh = <["x"=2]>')
    """
    x = operand("sharding_constraint", x)
    if mesh is not None:
        _ensure_mesh(_sharding_params(sharding, mesh)["mesh"])
    return bind("sdy.sharding_constraint", [x], sharding=sharding, mesh=mesh, loc=loc)


# ---------------------------------------------------------------- map

def _map_params(body, dimensions=None, dtype=None):
    if not callable(body):
        raise TypeError(f"map: body must be a callable, got {type(body).__name__}")
    return {"body": body, "dimensions": None if dimensions is None else int_tuple("map", "dimensions", dimensions),
            "dtype": None if dtype is None else dtypes.canonical(dtype)}


def _map_rule(*xs, body, dimensions, dtype):
    if not xs:
        raise ValueError("map: needs at least one operand")
    for i, x in enumerate(xs):
        if x.shape != xs[0].shape:
            raise ValueError(f"map: operand {i} shape {x.shape} differs from operand 0 shape {xs[0].shape}")
    dims = tuple(range(xs[0].ndim)) if dimensions is None else dimensions
    check_axes("map", "dimensions", dims, xs[0].ndim)
    if dims != tuple(range(xs[0].ndim)):
        raise ValueError(f"map: dimensions {list(dims)} must be all of range({xs[0].ndim}) in order")
    return xs[0].shape, dtype or xs[0].dtype


def _map_regions(xs, body, dimensions, dtype):
    return [Region([((), x.dtype) for x in xs], body, [((), dtype or xs[0].dtype)], "map: body")]


@register("stablehlo.map", rule=_map_rule, params=_map_params,
          attributes=lambda body, dimensions, dtype: {"dimensions": attr.i64s(
              dimensions if dimensions is not None else ())},
          regions=_map_regions, arrange=lambda operands: (list(operands),),
          decode=lambda op: {"body": body_of(op.regions[0]), "dimensions": attr.read_ints(op, "dimensions"),
                             "dtype": shape_dtype_of(op.results[0].type)[1]})
def map(operands, body, dimensions=None, *, dtype=None, loc=None) -> Tensor:
    """Apply the scalar function ``body`` elementwise over operands of one shape; emits
    ``stablehlo.map``.

    Args:
      operands: a Tensor or a sequence of Tensors of one shape.
      body: takes one 0-d Tensor per operand, returns a 0-d Tensor of ``dtype`` (built with
        hloforge.ops; it may not use Tensors from outside).
      dimensions: all dimensions in order (None: that).
      dtype: the result dtype (default: operand 0's).
    Returns:
      A Tensor of the operands' shape.
    Example:
      >>> y = ops.map([a, b], lambda x, y: ops.add(ops.multiply(x, x), y))
    """
    xs = [operand("map", x) for x in ([operands] if isinstance(operands, Tensor) or not isinstance(
        operands, (list, tuple)) else operands)]
    if dimensions is None and xs:
        dimensions = tuple(range(xs[0].ndim))
    return bind("stablehlo.map", xs, body=body, dimensions=dimensions, dtype=dtype, loc=loc)


# ---------------------------------------------------------------- composite

def _free_symbol(module, base: str) -> str:
    """``base``, or ``base_1``, ``base_2``, ... : the first name no function of ``module`` has."""
    taken = {ir.StringAttr(op.attributes["sym_name"]).value for op in module.body.operations
             if "sym_name" in op.attributes}
    for i in itertools.count():
        name = base if i == 0 else f"{base}_{i}"
        if name not in taken:
            return name


def _composite_params(composite_name, decomposition, result_specs, attributes=None, version=0):
    name = composite_name  # (bind's first argument is the op's name)
    if not isinstance(name, str) or not name:
        raise TypeError(f"composite: name must be a non-empty str, got {name!r}")
    if not isinstance(decomposition, str):
        raise TypeError(f"composite: decomposition must be a function symbol name, got {decomposition!r}")
    attributes = dict(attributes or {})
    for k, v in attributes.items():
        if not isinstance(k, str) or not isinstance(v, (bool, int, float, str)):
            raise TypeError(f"composite: attributes must map str to bool, int, float or str, got {k!r}: {v!r}")
    return {"composite_name": name, "decomposition": decomposition,
            "result_specs": _result_specs("composite", result_specs),
            "attributes": attributes, "version": int(version)}


def _attribute(v):
    if isinstance(v, bool):
        return ir.BoolAttr.get(v)
    if isinstance(v, int):
        return attr.i64(v)
    if isinstance(v, float):
        return ir.FloatAttr.get(ir.F32Type.get(), v)
    return ir.StringAttr.get(v)


def _python(a):
    for kind in (ir.BoolAttr, ir.IntegerAttr, ir.FloatAttr, ir.StringAttr):
        if isinstance(a, kind):
            return a.value
    raise TypeError(f"composite: cannot decode attribute {a}")


def _composite_attributes(composite_name, decomposition, result_specs, attributes, version):
    return {"name": ir.StringAttr.get(composite_name), "decomposition": ir.FlatSymbolRefAttr.get(decomposition),
            "composite_attributes": ir.DictAttr.get({k: _attribute(v) for k, v in attributes.items()}),
            "version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), version)}


def _composite_decode(op):
    symbol = ir.FlatSymbolRefAttr(op.attributes["decomposition"]).value
    module = op.parent
    while module is not None and module.name != "builtin.module":
        module = module.parent
    target = next(f for f in module.regions[0].blocks[0].operations
                  if "sym_name" in f.attributes and ir.StringAttr(f.attributes["sym_name"]).value == symbol)
    attrs = ir.DictAttr(op.attributes["composite_attributes"]) if "composite_attributes" in op.attributes else None
    return {"name": ir.StringAttr(op.attributes["name"]).value, "decomposition": body_of(target.regions[0]),
            "attributes": {} if attrs is None else {attrs[i].name: _python(attrs[i].attr) for i in range(len(attrs))},
            "version": attr.read_int(op, "version") if "version" in op.attributes else 0}


@register("stablehlo.composite", rule=lambda *xs, result_specs, **p: list(result_specs),
          params=_composite_params, attributes=_composite_attributes, decode=_composite_decode,
          arrange=lambda operands: (list(operands),), traits={"variadic"})
def composite(operands, name: str, decomposition, *, attributes=None, version: int = 0, loc=None):
    """A named group of ops with its meaning given by ``decomposition``; emits
    ``stablehlo.composite`` and a private ``func.func`` holding the decomposition.

    Args:
      operands: a sequence of Tensors.
      name: the composite's name, e.g. "my.gelu".
      decomposition: a callable that takes one Tensor per operand and returns a Tensor or a
        sequence of Tensors (built with hloforge ops; it may not use Tensors from outside).
      attributes: a dict of str -> bool/int/float/str (the composite_attributes).
      version: the composite's version.
    Returns:
      A list of Tensors, one per decomposition result.
    Example:
      >>> (y,) = ops.composite([x], "my.double", lambda x: ops.add(x, x))
    """
    xs = [operand("composite", x) for x in operands]
    if not callable(decomposition):
        raise TypeError(f"composite: decomposition must be a callable, got {type(decomposition).__name__}")
    if not isinstance(name, str) or not name:
        raise TypeError(f"composite: name must be a non-empty str, got {name!r}")
    b = current_builder("composite")
    with b.ctx, ir.Location.unknown():
        symbol = _free_symbol(b.module, f"{name.replace('.', '_')}_impl")
        in_types = [b.type(x.shape, x.dtype) for x in xs]
        with ir.InsertionPoint(b.module.body):
            f = func.FuncOp(symbol, ir.FunctionType.get(in_types, []))
        f.attributes["sym_visibility"] = ir.StringAttr.get("private")
        block = f.add_entry_block()
        try:
            with b.at(block, _Scope("composite: decomposition"), isolated=True):
                args = [Tensor(v, x.shape, x.dtype, b) for v, x in zip(block.arguments, xs)]
                out = decomposition(*args)
                outs = [as_tensor(o, what="composite: decomposition output") for o in
                        (out if isinstance(out, (list, tuple)) else [out])]
                b.emit("func.return", outs, [])
        except BaseException:
            f.operation.erase()
            raise
        f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(in_types, [o.value.type for o in outs]))
    return bind("stablehlo.composite", xs, composite_name=name, decomposition=symbol,
                result_specs=[(o.shape, o.dtype) for o in outs], attributes=attributes, version=version, loc=loc)


__all__ = ["custom_call", "optimization_barrier", "map", "composite"]
