"""Keep batch-sharded FFTs local.

XLA's SPMD partitioner has no rule that splits ``fft`` along its batch dimensions: with only the
batch sharded it all-gathers the operand, runs the whole FFT on every device and slices the
result again (jax.jit does the same). Each FFT is independent per batch element, so when the
entry arguments shard dimension 0 over some mesh axes, each ``stablehlo.fft`` whose dimension 0
divides evenly is wrapped in a region that is *manual* over those axes (what ``jax.shard_map``
emits): Shardy's ``sdy.manual_computation``, or GSPMD's ``@Sharding`` +
``@SPMDFullToShardShape`` / ``@SPMDShardToFullShape`` custom calls. Inside, the FFT sees only the
local batch; the other mesh axes stay free.
"""
from __future__ import annotations

import math

from hloforge.frontend.context import ir
from hloforge.runtime import pjrt


def data_spec(plan) -> list:
    """``[axes]``: the mesh axes the first argument with a sharded dimension 0 splits it over.

    Only dimension 0 (the batch): splitting further leading dimensions (channels) made FFTs local
    too, but an FNO's channel mixing all-gathers them anyway, and XLA:CPU then failed at run time
    (fft_thunk RET_CHECK on a non-monotonic layout) with GSPMD.
    """
    for s in plan.in_shardings:
        first = s.spec[0] if len(s.spec) else None
        if first is not None:
            return [tuple(first) if isinstance(first, tuple) else (first,)]
    return []


def _local(t, counts) -> ir.RankedTensorType:
    rt = ir.RankedTensorType(t)
    shape = [n // counts[i] if i < len(counts) else n for i, n in enumerate(rt.shape)]
    return ir.RankedTensorType.get(shape, rt.element_type)


def _dims(rank: int, dims, closed: bool) -> str:
    out = []
    for i in range(rank):
        axes = [f'"{a}"' for a in (dims[i] if i < len(dims) else ())]
        out.append("{" + ", ".join(axes + ([] if closed else ["?"])) + "}")
    return "[" + ", ".join(out) + "]"


def _shardy_wrap(op, dims, mesh, counts):
    x, out_t = op.operands[0], op.results[0].type
    rank = ir.RankedTensorType(x.type).rank
    axes = [a for a in mesh.axis_names if any(a in d for d in dims)]
    closed = set(axes) == set(mesh.axis_names)
    shard = lambda: f"#sdy.sharding_per_value<[<@mesh, {_dims(rank, dims, closed)}>]>"
    manual = "#sdy<manual_axes{" + ", ".join(f'"{a}"' for a in axes) + "}>"
    wrapper = ir.Operation.create(
        "sdy.manual_computation", results=[out_t], operands=[x], regions=1,
        attributes={"in_shardings": ir.Attribute.parse(shard()), "out_shardings": ir.Attribute.parse(shard()),
                    "manual_axes": ir.Attribute.parse(manual)})
    block = wrapper.regions[0].blocks.append(_local(x.type, counts))
    with ir.InsertionPoint(block):
        inner = _clone_fft(op, block.arguments[0], _local(out_t, counts))
        ir.Operation.create("sdy.return", operands=[inner.results[0]])
    return wrapper.results[0]


def _custom_call(target, value, result_type, sharding):
    return ir.Operation.create(
        "stablehlo.custom_call", results=[result_type], operands=[value],
        attributes={"call_target_name": ir.StringAttr.get(target), "backend_config": ir.StringAttr.get(""),
                    "mhlo.sharding": ir.StringAttr.get(sharding)}).results[0]


def _gspmd_wrap(op, dims, mesh, counts):
    x, out_t = op.operands[0], op.results[0].type
    rank = ir.RankedTensorType(x.type).rank
    axes = [a for a in mesh.axis_names if any(a in d for d in dims)]
    spec = pjrt.PartitionSpec(*[d if len(d) > 1 else d[0] if d else None for d in dims])
    full = pjrt.hlo_sharding_text(pjrt.NamedSharding(mesh, spec), rank)
    manual = pjrt.manual_sharding_text(mesh, axes, rank)
    v = _custom_call("Sharding", x, x.type, full)
    v = _custom_call("SPMDFullToShardShape", v, _local(x.type, counts), manual)
    v = _clone_fft(op, v, _local(out_t, counts)).results[0]
    v = _custom_call("Sharding", v, v.type, manual)
    return _custom_call("SPMDShardToFullShape", v, out_t, full)


def _clone_fft(op, operand, result_type):
    return ir.Operation.create("stablehlo.fft", results=[result_type], operands=[operand],
                               attributes={name: op.attributes[name] for name in op.attributes})


def keep_ffts_local(module, plan, shardy: bool) -> int:
    """Wrap the entry function's batch-sharded ``stablehlo.fft`` ops; returns how many.

    Dimension 0 of each FFT operand (when it is not transformed) is split like dimension 0 of
    the first batch-sharded entry argument.
    """
    spec = data_spec(plan)
    if not spec:
        return 0
    body = module.entry_function().regions[0].blocks[0]
    ffts = [op.operation for op in body.operations if op.operation.name == "stablehlo.fft"]
    wrapped = 0
    with module.context:
        for op in ffts:
            shape = ir.RankedTensorType(op.operands[0].type).shape
            leading = len(shape) - len(ir.DenseI64ArrayAttr(op.attributes["fft_length"]))
            dims = spec[:leading]
            counts = [math.prod(plan.mesh.shape[a] for a in d) for d in dims]
            if not any(dims) or any(shape[i] % c for i, c in enumerate(counts)):
                continue  # nothing to split, or a dimension does not split evenly
            with ir.InsertionPoint(op), op.location:
                wrap = _shardy_wrap if shardy else _gspmd_wrap
                result = wrap(op, dims, plan.mesh, counts)
            op.results[0].replace_all_uses_with(result)
            op.erase()
            wrapped += 1
    return wrapped
