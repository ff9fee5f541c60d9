"""The ``hloforge`` subcommands. Each takes the parsed arguments and returns an exit code;
bad input raises ``UsageError`` (exit 2, one line)."""
from __future__ import annotations

import json
import os

import numpy as np


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def load_module(path):
    from hloforge.frontend.module import Module
    if not os.path.exists(path):
        raise UsageError(f"no such file: {path}")
    try:
        return Module.load(path)
    except (ValueError, OSError) as e:
        raise UsageError(str(e).splitlines()[0]) from None


def demo(args) -> int:
    from hloforge.runtime.cli import demo as demo_module
    return demo_module.run(device=args.device, quiet=args.quiet)


def opt(args) -> int:
    module = load_module(args.input)
    try:
        report = module.optimize(args.pipeline, dump_dir=args.dump_dir,
                                 print_ir_after_change=args.print_ir_after_change)
    except (KeyError, ValueError) as e:
        raise UsageError(str(e).splitlines()[0].strip("'\"")) from None
    text = module.to_text(debug_info=args.debug_info)
    if args.output:
        module.save(args.output)
    else:
        print(text)
    if args.stats:
        print(report)
    return 0


def _inputs(args, specs):
    if args.arg:
        if len(args.arg) != len(specs):
            raise UsageError(f"@main takes {len(specs)} argument(s), got {len(args.arg)} --arg file(s)")
        arrays = []
        for path in args.arg:
            try:
                arrays.append(np.load(path))
            except (OSError, ValueError) as e:
                raise UsageError(f"cannot load {path}: {e}") from None
        return arrays
    if specs and not args.random_inputs:
        raise UsageError(f"@main takes {len(specs)} argument(s): pass --arg FILE.npy for each, or --random-inputs")
    rng = np.random.default_rng(args.seed)
    out = []
    for shape, dtype in specs:
        if dtype.kind == "c":
            out.append((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype))
        elif dtype.kind == "b":
            out.append(rng.random(shape) < 0.5)
        elif dtype.kind in "iu":
            out.append(rng.integers(0, 10, shape).astype(dtype))
        else:
            out.append(rng.standard_normal(shape).astype(dtype))
    return out


def run(args) -> int:
    module = load_module(args.input)
    if args.optimize:
        module.optimize()
    ins, _ = module.signature
    inputs = _inputs(args, [tuple(s) for s in ins])
    from hloforge.runtime.pjrt import CompileError, DeviceNotFoundError
    try:
        executable = module.compile(args.device)
        outs = executable.call_flat(inputs)
    except (TypeError, ValueError, DeviceNotFoundError, CompileError) as e:
        raise UsageError(str(e).splitlines()[0]) from None
    if args.save_dir:
        os.makedirs(args.save_dir, exist_ok=True)
    for i, out in enumerate(outs):
        value = np.asarray(out)
        flat = value.reshape(-1)
        shown = np.array2string(flat[:6], precision=6, separator=", ")
        more = " ..." if flat.size > 6 else ""
        print(f"output {i}: {value.dtype}{list(value.shape)} {shown}{more}")
        if args.save_dir:
            np.save(os.path.join(args.save_dir, f"output_{i}.npy"), value)
    return 0


def inspect(args) -> int:
    module = load_module(args.input)
    if not args.json:
        print(module.summary())
        return 0
    from hloforge.frontend.inspection import details
    ins, outs = module.signature
    print(json.dumps({
        "entry": module.entry,
        "inputs": [{"shape": list(s.shape), "dtype": s.dtype.name} for s in ins],
        "outputs": [{"shape": list(s.shape), "dtype": s.dtype.name} for s in outs],
        "op_counts": module.op_counts(),
        **details(module),
    }, indent=2))
    return 0


def graph(args) -> int:
    module = load_module(args.input)
    try:
        module.save_graph(args.output)
    except ValueError as e:
        raise UsageError(str(e)) from None
    except RuntimeError as e:
        raise UsageError(str(e)) from None
    return 0


def convert(args) -> int:
    module = load_module(args.input)
    ext = os.path.splitext(args.output)[1]
    if args.portable is None and ext not in (".mlir", ".mlirbc"):
        raise UsageError(f"unknown output extension {ext!r}; use .mlir or .mlirbc")
    try:
        module.save(args.output, portable=args.portable)
    except ValueError as e:
        raise UsageError(str(e).splitlines()[0]) from None
    return 0


def check(args) -> int:
    from hloforge.runtime.checkfile import run_check_file
    failed = 0
    for path in args.inputs:
        result = run_check_file(path, optimize=args.optimize, device=args.device)
        print(result, flush=True)
        failed += not result.ok
    return 1 if failed else 0
