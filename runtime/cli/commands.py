"""The ``hloforge`` subcommands. Each takes the parsed arguments and returns an exit code;
bad input raises ``UsageError`` (or any other exception): ``main`` prints one line, exit 2."""
from __future__ import annotations

import io
import json
import os
import stat
import tempfile

import numpy as np

from hloforge.frontend.context import ir, shape_dtype_of
from hloforge.frontend.inspection import details
from hloforge.frontend.module import BYTECODE_MAGIC, Module
from hloforge.runtime.cli import demo as demo_module
from hloforge.runtime.cli.check_batch import run_isolated
from hloforge.runtime import files
from hloforge.runtime.unsupported import quantized_use

MAX_INPUT_BYTES = 2 << 30  # a module or --arg file (protobuf and flatbuffer artifacts stop at 2 GiB too)


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def read_input(path, what: str = "module file") -> bytes:
    """The bytes of an input file: a regular file (or a link to one), a pipe or FIFO, or ``-`` (standard
    input), of at most MAX_INPUT_BYTES; a device or a directory is one error line, and so is a FIFO
    nobody writes to (it reads as empty), never a hang or an endless read."""
    if path != files.STDIN:
        if not os.path.exists(path):
            raise UsageError(f"no such file: {path}")
        if os.path.isdir(path):
            raise UsageError(f"{path} is a directory, not a {what}")
    try:
        return files.read_input(path, MAX_INPUT_BYTES)
    except ValueError as e:
        raise UsageError(str(e)) from None  # ("... is not a regular file (a character device)", "... is larger than 2 GiB")
    except OSError as e:
        raise UsageError(f"cannot read {files.input_name(path)}: {e.strerror or e}") from None


def load_module(path) -> Module:
    """The module in the file ``path`` (``-``: standard input); diagnostics and the locations of its ops
    name that file (``<stdin>``)."""
    name = files.input_name(path)
    data = read_input(path)
    if not data:
        raise UsageError(f"{name} is empty")
    text = None
    if not data.startswith(BYTECODE_MAGIC):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"{name} is neither MLIR text nor MLIR bytecode") from None
    try:
        return Module.parse(data, source_name=name)
    except ValueError as e:
        raise UsageError((text is not None and quantized_use(text)) or str(e).splitlines()[0]) from None


def one_stdin(*paths) -> None:
    """UsageError if more than one of ``paths`` is ``-``: standard input is read once."""
    if sum(p == files.STDIN for p in paths if p is not None) > 1:
        raise UsageError("standard input ('-') can be only one of the inputs")


def writable_file(path, what: str = "output") -> str:
    """``path`` if a file can be created there: its directory exists and it is not a directory."""
    path = os.fspath(path)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise UsageError(f"cannot write {what} {path}: directory {parent} does not exist")
    if os.path.isdir(path):
        raise UsageError(f"cannot write {what} {path}: it is a directory")
    return path


def directory(path, what: str) -> str:
    """``path`` if it is a directory or can become one (it is not an existing file)."""
    path = os.fspath(path)
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"{what} {path} exists and is not a directory")
    return path


def demo(args) -> int:
    return demo_module.run(device=args.device, quiet=args.quiet)


def opt(args) -> int:
    if args.output:
        writable_file(args.output)
    if args.dump_dir:
        directory(args.dump_dir, "--dump-dir")
    module = load_module(args.input)
    try:
        report = module.optimize(args.pipeline, dump_dir=args.dump_dir,
                                 print_ir_after_change=args.print_ir_after_change, debug=args.explain)
    except (KeyError, ValueError) as e:
        raise UsageError(str(e).splitlines()[0].strip("'\"")) from None
    text = module.to_text(debug_info=args.debug_info)
    if args.output:
        module.save(args.output)
    else:
        print(text)
    if args.stats:
        print(report)
    if args.explain:
        print(report.explain())
    return 0


def _random(rng, shape, dtype):
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0, 10, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _inputs(args, module, specs):
    if args.arg:
        if len(args.arg) != len(specs):
            raise UsageError(f"@main takes {len(specs)} argument(s), got {len(args.arg)} --arg file(s)")
        return [_load_arg(i, path, spec) for i, (path, spec) in enumerate(zip(args.arg, specs))]
    if specs and not args.random_inputs:
        raise UsageError(f"@main takes {len(specs)} argument(s): pass --arg FILE.npy for each, or --random-inputs")
    dynamic = module.dynamic_dims_message("argument", specs)
    if dynamic:
        raise UsageError(f"{dynamic}: --random-inputs needs static shapes; pass --arg FILE.npy for each argument")
    rng = np.random.default_rng(args.seed)
    return [_random(rng, spec.shape, spec.dtype) for spec in specs]


# array kinds no StableHLO tensor holds, in words
_NOT_NUMERIC = {"U": "string", "S": "bytes", "V": "structured (void)", "O": "object", "M": "datetime",
                "m": "timedelta"}


def _load_arg(i, path, spec):
    """The array of ``--arg path`` for @main's argument ``i`` (``spec``): an .npy file, or an .npz
    archive of one array; UsageError naming the file, the argument and the dtype for anything else."""
    data = read_input(path, "--arg file")
    if not data:
        raise UsageError(f"--arg {files.input_name(path)} is empty")
    path = files.input_name(path)
    where = f"--arg {path} (argument {i}, {spec})"
    try:
        loaded = np.load(io.BytesIO(data))
        if isinstance(loaded, np.lib.npyio.NpzFile):
            if len(loaded.files) != 1:
                raise UsageError(f"{where}: an .npz archive of {len(loaded.files)} arrays "
                                 f"({', '.join(loaded.files) or 'none'}); pass one .npy file, or an .npz of one "
                                 f"array, per argument")
            name = loaded.files[0]
            where = f"--arg {path} (array {name!r}, argument {i}, {spec})"
            loaded = loaded[name]
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot load {path}: {e}") from None
    kind = _NOT_NUMERIC.get(loaded.dtype.kind)
    if kind is not None:
        raise UsageError(f"{where}: {kind} arrays are not supported (dtype {loaded.dtype}); arguments are "
                         f"numeric or bool arrays")
    return loaded


def run(args) -> int:
    one_stdin(args.input, *(args.arg or ()))
    if args.save_dir:
        directory(args.save_dir, "--save-dir")
    module = load_module(args.input)
    if args.optimize:
        module.optimize()
    ins, _ = module.signature
    inputs = _inputs(args, module, ins)
    executable = module.compile(args.device)
    outs = executable.call_flat(inputs)
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


def _type_json(t) -> dict:
    """{"shape": [...], "dtype": ...} (null for a dynamic dimension), or {"type": "..."} for a type
    that is not a ranked tensor of a supported dtype (a token, f8E4M3FN, i4, ...)."""
    try:
        shape, dtype = shape_dtype_of(t)
    except TypeError:
        return {"type": str(t)}
    return {"shape": list(shape), "dtype": dtype.name}


def inspect(args) -> int:
    module = load_module(args.input)
    if not args.json:
        print(module.summary())
        return 0
    ftype = ir.FunctionType(ir.TypeAttr(module.entry_function().attributes["function_type"]).value)
    print(json.dumps({
        "entry": module.entry,
        "inputs": [_type_json(t) for t in ftype.inputs],
        "outputs": [_type_json(t) for t in ftype.results],
        "op_counts": module.op_counts(),
        **details(module),
    }, indent=2))
    return 0


def graph(args) -> int:
    writable_file(args.output)
    module = load_module(args.input)
    module.save_graph(args.output)
    return 0


def convert(args) -> int:
    ext = os.path.splitext(args.output)[1]
    if args.portable is None and ext not in (".mlir", ".mlirbc"):
        raise UsageError(f"unknown output extension {ext!r}; use .mlir or .mlirbc")
    writable_file(args.output)
    module = load_module(args.input)
    module.save(args.output, portable=args.portable)
    return 0


def check(args) -> int:
    """One line per test function (``PASS file::function``, ``FAIL file::function: reason``; a file or
    piece that cannot be read is ``FAIL file: reason`` or ``FAIL file:LINE: reason``), then the counts."""
    one_stdin(*args.inputs)
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="hloforge-check-") as scratch:
        paths, shown = _check_inputs(args.inputs, scratch)
        for result in run_isolated(paths, optimize=args.optimize, device=args.device,
                                   finite_math=args.finite_math, timeout=args.timeout):
            result.path = shown.get(result.path, result.path)
            print(result, flush=True)
            passed += result.ok
            failed += not result.ok
    print(f"{passed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


def _check_inputs(inputs, scratch: str):
    """(the paths the workers read, {such a path: the name to print}): standard input and FIFOs are read
    here, into files of ``scratch`` (a worker process cannot read this one's pipes)."""
    paths, shown = [], {}
    for i, path in enumerate(inputs):
        if path == files.STDIN or stat.S_ISFIFO(_mode(path)):
            copy = os.path.join(scratch, f"input_{i}.mlir")
            with open(copy, "wb") as f:
                f.write(read_input(path, "test file"))
            paths.append(copy)
            shown[copy] = files.input_name(path)
        else:
            paths.append(path)
    return paths, shown


def _mode(path) -> int:
    try:
        return os.stat(path).st_mode
    except OSError:  # (the worker reports it)
        return 0
