"""``interpreter.run_parallel`` of StableHLO's interpreter tests, on several devices through XLA.

``"interpreter.run_parallel"(inputs...) {programs = [[@f, @f], [@f, @f]]}`` runs a grid of processes
(replicas by partitions), each the function it names, on its own slice of the flat inputs, and gives
back the processes' results one after another. When every process runs the same function, that is one
XLA program compiled for ``replicas x partitions`` devices without the SPMD partitioner (each device
runs it whole; ``replica_id``, ``partition_id`` and the collectives tell them apart). The inputs are
computed first (the entry function up to the op, on one device); the results then replace the op as
constants, and the entry function goes on from there.
"""
from __future__ import annotations

import numpy as np

from hloforge.frontend.context import dense_elements, ir, is_token_type, passmanager
from hloforge.frontend.module import Module
from hloforge.runtime import pjrt
from hloforge.runtime.compiler import default_device

OP = "interpreter.run_parallel"
DEVICE_FLAG = "--xla_force_host_platform_device_count"


def expand_run_parallel(module: Module, device=None, erase_checks=None, prepare=None) -> None:
    """Replace every ``interpreter.run_parallel`` of the entry function by constants of its results.
    ``erase_checks(module)`` removes the assertions from the copies that compute the inputs;
    ``prepare(module)`` rewrites each process program in place once its grid attributes are set."""
    while _first(module) is not None:
        _expand(module, device, erase_checks, prepare)


def _first(module: Module):
    """The entry function's first run_parallel op (in its body), or None."""
    block = module.entry_function().regions[0].blocks[0]
    return next((op.operation for op in block.operations if op.operation.name == OP), None)


def _grid(op) -> list:
    """The programs attribute as [replica][partition] function names."""
    rows = [[ir.FlatSymbolRefAttr(f).value for f in ir.ArrayAttr(row)]
            for row in ir.ArrayAttr(op.attributes["programs"])]
    if not rows or not rows[0] or any(len(r) != len(rows[0]) for r in rows):
        raise ValueError(f"{OP}: programs must be a non-empty grid of equal rows, got {rows}")
    return rows


def _program(module: Module, op):
    """(the function every process runs, replicas, partitions); ValueError for what cannot run."""
    if "infeed" in op.attributes:
        raise ValueError(f"{OP} with infeed queues: hloforge cannot fill XLA's infeed queue from a test file")
    grid = _grid(op)
    names = sorted({n for row in grid for n in row})
    if len(names) > 1:
        raise ValueError(f"{OP} runs different programs ({', '.join('@' + n for n in names)}) on different "
                         f"processes: hloforge runs one program on every process (SPMD)")
    f = module.entry_function_named(names[0])
    ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
    count = len(grid) * len(grid[0])
    if len(ftype.inputs) * count != len(op.operands) or len(ftype.results) * count != len(op.results):
        raise ValueError(f"{OP}: {count} processes of @{names[0]} take {len(ftype.inputs) * count} inputs and give "
                         f"{len(ftype.results) * count} results, the op has {len(op.operands)} and {len(op.results)}")
    return names[0], len(grid), len(grid[0])


def _devices(device, count: int) -> list:
    first = default_device(device)
    devs = [d for d in pjrt.devices(first.platform) if pjrt.addressable(d)]
    if len(devs) < count:
        hint = (f": run with XLA_FLAGS={DEVICE_FLAG}={count} (hloforge check sets it)" if first.platform == "cpu"
                else "")
        raise ValueError(f"{OP} needs {count} {first.platform} devices, {len(devs)} here{hint}")
    return devs[:count]


def _expand(module: Module, device, erase_checks, prepare=None) -> None:
    op = _first(module)
    name, replicas, partitions = _program(module, op)
    count = replicas * partitions
    devs = _devices(device, count)
    inputs = _inputs_of(module, device, erase_checks)
    per_process = len(inputs) // count
    code, tokens_out = _process_program(module, name, replicas, partitions, prepare)
    grid = [devs[r * partitions:(r + 1) * partitions] for r in range(replicas)]
    pjrt.prepare_custom_calls(code)  # (LAPACK calls in a parsed module: runtime/compiler.py does the same)
    loaded = pjrt.compile(code, devs, pjrt.process_grid_options(grid))
    args = [[a for a in inputs[k * per_process:(k + 1) * per_process] if a is not None] for k in range(count)]
    outputs = pjrt.execute_per_device(loaded, devs, args)
    _replace_results(module, op, [_with_tokens(outs, tokens_out) for outs in outputs])


def _with_tokens(values: list, tokens: list) -> list:
    """The process's results with None where the program returned a token (it returns none to XLA)."""
    values = iter(values)
    return [None if is_token else next(values) for is_token in tokens]


def _inputs_of(module: Module, device, erase_checks) -> list:
    """The values of the first run_parallel's operands (None for tokens), by running the entry
    function up to it."""
    copy = module.clone()
    if erase_checks is not None:
        erase_checks(copy)
    f = copy.entry_function()
    op = _first(copy)
    ops = [o.operation for o in f.regions[0].blocks[0].operations]
    index = ops.index(op)
    operands = list(op.operands)
    wanted = [v for v in operands if not is_token_type(v.type)]
    with copy.context, ir.Location.unknown():
        ir.Operation.create("func.return", operands=wanted, ip=ir.InsertionPoint(op))
        for later in reversed(ops[index:]):
            later.erase()
        ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
        f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(ftype.inputs, [v.type for v in wanted]))
        if "res_attrs" in f.attributes:
            del f.attributes["res_attrs"]
    values = iter([np.asarray(v) for v in copy.compile(device).call_flat([])] if wanted else [])
    return [None if is_token_type(v.type) else next(values) for v in operands]


def _process_program(module: Module, name: str, replicas: int, partitions: int, prepare=None):
    """(MLIR text of the module with @name as @main for the process grid, which of its results are
    tokens). Token arguments become ``stablehlo.after_all`` inside, token results are dropped."""
    copy = module.clone()
    with copy.context, ir.Location.unknown():
        for f in copy.functions():  # (only @name and what it calls stay)
            public = ir.StringAttr(f.attributes["sym_name"]).value == name
            f.attributes["sym_visibility"] = ir.StringAttr.get("public" if public else "private")
        passmanager.PassManager.parse("builtin.module(symbol-dce)").run(copy.mlir.operation)
        f = copy.entry_function_named(name)
        tokens_out = _drop_tokens(f)
        f.attributes["sym_name"] = ir.StringAttr.get("main")
        if partitions > 1:
            _all_manual(f)
        attrs = copy.mlir.operation.attributes
        attrs["mhlo.num_replicas"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), replicas)
        attrs["mhlo.num_partitions"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), partitions)
    if prepare is not None:
        prepare(copy)
    return copy.to_text(debug_info=True), tokens_out


def _drop_tokens(f) -> list:
    """Take token arguments and results out of ``f``'s signature; returns which results were tokens."""
    block = f.regions[0].blocks[0]
    first = list(block.operations)[0]
    for i in reversed(range(len(block.arguments))):
        arg = block.arguments[i]
        if is_token_type(arg.type):
            token = ir.Operation.create("stablehlo.after_all", results=[arg.type], operands=[],
                                        ip=ir.InsertionPoint(first))
            arg.replace_all_uses_with(token.result)
            block.erase_argument(i)
    ret = list(block.operations)[-1].operation
    tokens = [is_token_type(v.type) for v in ret.operands]
    kept = [v for v in ret.operands if not is_token_type(v.type)]
    ir.Operation.create("func.return", operands=kept, ip=ir.InsertionPoint(ret))
    ret.erase()
    ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
    inputs = [t for t in ftype.inputs if not is_token_type(t)]
    f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, [v.type for v in kept]))
    for attr in ("arg_attrs", "res_attrs"):
        if attr in f.attributes:
            del f.attributes[attr]
    return tokens


def _all_manual(f) -> None:
    """Every argument and result ``{manual}``: XLA's partitioner keeps each partition's program whole."""
    manual = ir.DictAttr.get({"mhlo.sharding": ir.StringAttr.get("{manual}")})
    ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
    f.attributes["arg_attrs"] = ir.ArrayAttr.get([manual] * len(ftype.inputs))
    f.attributes["res_attrs"] = ir.ArrayAttr.get([manual] * len(ftype.results))


def _replace_results(module: Module, op, outputs: list) -> None:
    """The op's results (process after process) become constants, its tokens ``after_all``s."""
    values = [v for per_process in outputs for v in per_process]
    with module.context, ir.Location.unknown():
        ip = ir.InsertionPoint(op)
        for result, value in zip(op.results, values):
            if value is None:
                new = ir.Operation.create("stablehlo.after_all", results=[result.type], operands=[], ip=ip)
            else:
                new = ir.Operation.create("stablehlo.constant", results=[result.type],
                                          attributes={"value": _constant(value, result.type)}, ip=ip)
            result.replace_all_uses_with(new.result)
        op.erase()


def _constant(value: np.ndarray, want: ir.Type) -> ir.Attribute:
    try:
        attr = dense_elements(value)
    except KeyError:  # (no MLIR element type for this numpy dtype here)
        attr = None
    if attr is None or attr.type != want:
        raise ValueError(f"{OP}: cannot hold a result of type {want} (got {value.dtype}{list(value.shape)})")
    return attr
