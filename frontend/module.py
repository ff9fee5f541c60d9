"""``hloforge.Module``: a StableHLO module you can print, inspect, optimize and compile."""
from __future__ import annotations

import collections
import contextlib
import faulthandler
import os
import signal
import tempfile
import time
import warnings

from hloforge.frontend.context import (
    deserialize_portable, func, ir, make_context, portable_target, serialize_portable, shape_dtype_of,
    stablehlo, write_bytecode)

BYTECODE_MAGIC = b"ML\xefR"


class ShapeDtype:
    """The abstract value of an argument or result: a shape and a dtype.

    >>> ShapeDtype((4, 8), np.float32)
    """
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        from hloforge.frontend import dtypes
        self.shape = tuple(int(s) for s in shape)
        if any(s < 0 for s in self.shape):
            raise ValueError(f"ShapeDtype: shape {self.shape} has a negative dimension")
        self.dtype = dtypes.canonical(dtype)

    def __iter__(self):
        return iter((self.shape, self.dtype))

    def __eq__(self, other):
        return isinstance(other, ShapeDtype) and tuple(self) == tuple(other)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def __repr__(self):
        return f"ShapeDtype({self.shape}, {self.dtype.name})"


class Module:
    """A StableHLO module in its own MLIR context, with an entry function (``main`` by default)."""

    def __init__(self, module: ir.Module, entry: str = "main", out_tree=None):
        self.mlir = module
        self.context = module.context
        self.entry = entry
        self.out_tree = out_tree  # the pytree structure of the traced outputs, if known

    # ---------------------------------------------------------------- construction

    @classmethod
    def parse(cls, source, entry: str | None = None, allow_unregistered: bool = False) -> "Module":
        """Parse MLIR text, MLIR bytecode or a portable artifact into a Module.

        Accepts ``jax.jit(f).lower(x).as_text()``, ``Module.to_bytecode()``,
        ``Module.to_portable()`` and ``jax.export``'s ``Exported.mlir_module_serialized``.
        """
        if not isinstance(source, (str, bytes, bytearray)):
            raise TypeError(f"Module.parse: expected str or bytes, got {type(source).__name__}")
        if isinstance(source, str):
            try:
                source = source.encode("utf-8")
            except UnicodeEncodeError as e:
                raise ValueError(f"Module.parse: the text is not valid Unicode: {e}") from None
        source = bytes(source)
        if source.startswith(BYTECODE_MAGIC):
            source = _bytecode_as_text(source, allow_unregistered)
        module = _parse_mlir(source, allow_unregistered)
        return cls(module, entry or _default_entry(module))

    @classmethod
    def load(cls, path) -> "Module":
        """Read a module from ``.mlir`` (text), ``.mlirbc`` (bytecode or portable artifact) or any file
        whose content is one of those."""
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise FileNotFoundError(f"Module.load: cannot read {path}: {e.strerror}") from None
        if not data.startswith(BYTECODE_MAGIC):
            try:
                data = data.decode("utf-8")
            except UnicodeDecodeError:
                raise ValueError(f"Module.load: {path} is neither MLIR text nor MLIR bytecode") from None
        return cls.parse(data)

    def save(self, path, portable: str | None = None) -> None:
        """Write text for ``.mlir``, bytecode for ``.mlirbc`` (a portable artifact when ``portable``
        names a target)."""
        ext = os.path.splitext(str(path))[1]
        if portable is not None:
            data = self.to_portable(portable)
        elif ext == ".mlir":
            data = self.to_text(debug_info=True).encode()
        elif ext == ".mlirbc":
            data = self.to_bytecode()
        else:
            raise ValueError(f"Module.save: unknown extension {ext!r} of {path}; use .mlir or .mlirbc")
        with open(path, "wb") as f:
            f.write(data)

    def to_bytecode(self) -> bytes:
        """MLIR bytecode of this module (same context version only; see to_portable)."""
        return write_bytecode(self.mlir)

    def to_portable(self, target: str = "current") -> bytes:
        """A versioned StableHLO portable artifact for ``target``: "current", "week4", "week12"
        (the version 4 or 12 weeks old consumers accept) or a version "1.x.y"."""
        if not isinstance(target, str):
            raise TypeError(f"to_portable: target must be a string such as 'current' or '1.0.0', got {target!r}")
        version = portable_target(target)
        low, high = stablehlo.get_minimum_version(), stablehlo.get_current_version()
        if not _version(low) <= _version(version) <= _version(high):
            raise ValueError(f"to_portable: StableHLO version {version} (target {target!r}) is "
                             f"{'below the minimum' if _version(version) < _version(low) else 'above the current'}"
                             f" version; supported: {low} to {high}")
        try:
            return serialize_portable(self.mlir, target)
        except (ir.MLIRError, ValueError) as e:
            raise ValueError(f"to_portable: cannot serialize for {target!r} (StableHLO {version}): "
                             f"{diagnostics(e)}") from None

    def clone(self) -> "Module":
        with self.context:
            copy = ir.Module.parse(self.to_text(debug_info=True), context=self.context)
        return Module(copy, self.entry, self.out_tree)

    # ---------------------------------------------------------------- printing

    @property
    def text(self) -> str:
        """Pretty MLIR without source locations."""
        return self.to_text()

    def to_text(self, debug_info: bool = False, generic: bool = False) -> str:
        """MLIR text; ``debug_info`` shows the ops' source locations, ``generic`` the generic form."""
        return self.mlir.operation.get_asm(enable_debug_info=debug_info, print_generic_op_form=generic)

    def __str__(self):
        return self.text

    def __repr__(self):
        counts = self.op_counts()
        return f"<hloforge.Module @{self.entry}: {sum(counts.values())} ops>"

    # ---------------------------------------------------------------- inspection

    def functions(self) -> list:
        return [op for op in self.mlir.body.operations if op.operation.name == "func.func"]

    def entry_function(self) -> func.FuncOp:
        for f in self.functions():
            if ir.StringAttr(f.attributes["sym_name"]).value == self.entry:
                return f
        raise ValueError(f"module has no function @{self.entry}")

    def walk(self):
        """Every op of the module body, nested regions included, in program order."""
        def visit(op):
            yield op
            for region in op.regions:
                for block in region.blocks:
                    for inner in block.operations:
                        yield from visit(inner.operation)

        for op in self.mlir.body.operations:
            yield from visit(op.operation)

    def op_counts(self) -> dict:
        """Op name -> number of occurrences in all functions (func.func and func.return included)."""
        return dict(sorted(collections.Counter(op.name for op in self.walk()).items()))

    @property
    def signature(self):
        """(argument ShapeDtypes, result ShapeDtypes) of the entry function."""
        ftype = ir.FunctionType(ir.TypeAttr(self.entry_function().attributes["function_type"]).value)
        return ([ShapeDtype(*shape_dtype_of(t)) for t in ftype.inputs],
                [ShapeDtype(*shape_dtype_of(t)) for t in ftype.results])

    def summary(self) -> str:
        """A short table: functions and signatures, op counts, each fft and pad with its parameters."""
        from hloforge.frontend.inspection import summary
        return summary(self)

    def graph(self) -> str:
        """Graphviz DOT of the entry function (ops as nodes labelled with their result shapes)."""
        from hloforge.frontend.inspection import graph
        return graph(self)

    def save_graph(self, path) -> None:
        """Write the graph as ``.dot``, or ``.svg``/``.png`` through Graphviz's ``dot`` program."""
        from hloforge.frontend.inspection import save_graph
        save_graph(self, path)

    def verify(self) -> None:
        """Raise ValueError with MLIR's diagnostics if the module is invalid."""
        try:
            self.mlir.operation.verify()
        except ir.MLIRError as e:
            raise ValueError(f"invalid module: {diagnostics(e)}") from None

    # ---------------------------------------------------------------- optimization

    def optimize(self, pipeline: str = "default", finite_math: bool = True, dump_dir=None,
                 print_ir_after_change: bool = False):
        """Rewrite this module in place with a pass pipeline; returns a ``PassReport``.

        Args:
          pipeline: comma-separated pass names (``hloforge.passes.pass_names()``), e.g.
            ``"default"``, ``"inline,symbol-dce"`` or ``"pattern:pad_of_pad"``.
          finite_math: assume no Inf/NaN, which allows removing FFT round trips (an Inf
            in x becomes NaN everywhere through ``irfft(rfft(x))``) and reassociating
            float scales; False keeps FFT pairs.
          dump_dir: write ``NN_<pass>.mlir`` there after each pass that changed the module
            (NN: the pass's position in the run).
          print_ir_after_change: print the module after each pass that changed it.
        Raises:
          ValueError: an unknown pass name, or a pass left an invalid module (the
            message names the pass and carries MLIR's diagnostic).
        Example:
          >>> report = m.optimize(); print(report)
        """
        from hloforge.passes import run
        return run(self, pipeline, finite_math=finite_math, dump_dir=dump_dir,
                   print_ir_after_change=print_ir_after_change)

    # ---------------------------------------------------------------- compilation

    def compile(self, device=None, *, in_shardings=None, out_shardings=None, mesh=None):
        """Compile with XLA through hloforge's executable caches; returns an Executable.

        Args:
          device: None (``hf.config.device``, "cpu" unless HLOFORGE_DEVICE says otherwise),
            "cpu", "gpu" or a jax Device.
          in_shardings, out_shardings: for SPMD over a jax Mesh: a NamedSharding, PartitionSpec
            or None (replicated) per argument/result (a single one applies to all);
            ``out_shardings=None`` lets XLA choose. This module is left unchanged.
          mesh: the Mesh for PartitionSpecs (default: a NamedSharding's mesh or ``jax.set_mesh``).
        Example:
          >>> exe = m.compile(in_shardings=hf.NamedSharding(mesh, hf.P("batch")))
        """
        from hloforge.runtime.compiler import compile_module
        return compile_module(self, device, in_shardings, out_shardings, mesh)

    def _code_for_compile(self) -> str:
        if self.entry == "main":
            return self.to_text(debug_info=True)
        # XLA compiles @main: rename a different entry on a copy.
        copy = self.clone()
        f = copy.entry_function()
        with copy.context:
            f.attributes["sym_name"] = ir.StringAttr.get("main")
        return copy.to_text(debug_info=True)


def _parse_mlir(source: bytes, allow_unregistered: bool, threads: bool = True) -> ir.Module:
    """MLIR text, bytecode or a portable artifact -> a verified ir.Module in a new context whose
    names and strings are valid UTF-8; ValueError with MLIR's diagnostics otherwise."""
    ctx = make_context()
    ctx.allow_unregistered_dialects = allow_unregistered
    if not threads:
        ctx.enable_multithreading(False)
    with _errors_of(ctx) as errors:
        try:
            module = ir.Module.parse(source, context=ctx)
            _check_strings(module)
            if _is_portable(module):
                module = deserialize_portable(ctx, source)
                _check_strings(module)
        except (ir.MLIRError, ValueError) as e:
            raise ValueError(f"Module.parse: invalid MLIR: {'; '.join(errors) or diagnostics(e)}") from None
    return module


def _bytecode_as_text(data: bytes, allow_unregistered: bool) -> bytes:
    """The module in bytecode (or a portable artifact) ``data`` as MLIR text, read in a child process.

    MLIR's bytecode reader trusts its input: a few flipped bytes can make it corrupt memory or
    abort, so it never reads bytecode in this process. A forked child (fast) prints the module as
    text with its locations, which round-trips exactly; if that child hangs (fork copies locks
    other threads may hold), a fresh interpreter does it. ValueError if the child fails, crashes
    or hangs.
    """
    size = len(data) / 1e6
    outcome = _in_forked_child(data, allow_unregistered, 10 + 10 * size) if hasattr(os, "fork") else None
    if outcome is None:
        timeout = 60 + 10 * size
        outcome = _in_fresh_interpreter(data, allow_unregistered, timeout)
        if outcome is None:
            raise ValueError(f"Module.parse: reading the {len(data)}-byte bytecode did not finish in "
                             f"{timeout:.0f} s (corrupted input?)")
    status, output = outcome
    if status < 0:
        raise ValueError(f"Module.parse: invalid MLIR bytecode ({len(data)} bytes): MLIR's bytecode reader "
                         f"crashed on it with signal {-status} (corrupted input?)")
    if status != 0:
        raise ValueError(output.decode("utf-8", "backslashreplace") or
                         f"Module.parse: reading the bytecode failed (exit status {status})")
    return output


def _in_forked_child(data: bytes, allow_unregistered: bool, timeout: float):
    """(exit status, or -signal; output) of reading ``data`` in a forked child; None if it hung."""
    with tempfile.TemporaryFile() as out:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # (Python >= 3.12: fork with threads)
            warnings.filterwarnings("ignore", r"os\.fork\(\) was called", RuntimeWarning)  # (jax's)
            pid = os.fork()
        if pid == 0:
            code = 2
            try:
                faulthandler.disable()
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
                os.dup2(devnull, 2)
                code = _read_bytecode(data, allow_unregistered, out)
            finally:
                os._exit(code)
        status = _wait(pid, timeout)
        out.seek(0)
        output = out.read()
    if status is None:
        return None
    return (-os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)), output


def _in_fresh_interpreter(data: bytes, allow_unregistered: bool, timeout: float):
    import subprocess
    import sys
    script = ("import sys; from hloforge.frontend.module import _read_bytecode; "
              "sys.exit(_read_bytecode(sys.stdin.buffer.read(), sys.argv[1] == '1', sys.stdout.buffer))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    try:
        done = subprocess.run([sys.executable, "-c", script, "1" if allow_unregistered else "0"], input=data,
                              capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None
    return done.returncode, done.stdout


def _read_bytecode(data: bytes, allow_unregistered: bool, out) -> int:
    """Parse ``data``, write the module's text (exit status 0) or the error (1) to ``out``."""
    try:
        module = _parse_mlir(data, allow_unregistered, threads=False)
        out.write(module.operation.get_asm(binary=True, enable_debug_info=True))
        code = 0
    except Exception as e:  # (reported by the parent)
        message = str(e) if isinstance(e, ValueError) else f"Module.parse: {type(e).__name__}: {e}"
        out.write(message.encode("utf-8", "backslashreplace"))
        code = 1
    out.flush()
    return code


def _wait(pid: int, timeout: float):
    """The child's wait status, or None after killing it at ``timeout`` seconds."""
    deadline, delay = time.monotonic() + timeout, 0.0002
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # (reaped elsewhere, e.g. SIGCHLD ignored): its outcome is unknown
            return None
        if done:
            return status
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(delay)
        delay = min(2 * delay, 0.02)


@contextlib.contextmanager
def _errors_of(ctx: ir.Context):
    """Collect the error diagnostics emitted in ``ctx`` as text. (MLIR's own capture turns them
    into Python strings inside C++, which aborts the process on a message that is not UTF-8,
    e.g. one quoting a corrupted op name.)"""
    errors = []

    def handler(d):
        if d.severity == ir.DiagnosticSeverity.ERROR:
            errors.append(f"{_readable(lambda: str(d.location))}: {_readable(lambda: d.message)}")
        return True

    ctx.emit_error_diagnostics = True
    handle = ctx.attach_diagnostic_handler(handler)
    try:
        yield errors
    finally:
        handle.detach()
        ctx.emit_error_diagnostics = False


def _readable(get) -> str:
    try:
        return get()
    except (RuntimeError, UnicodeDecodeError):
        return "<text that is not valid UTF-8>"


def _check_strings(module: ir.Module) -> None:
    """ValueError if an op name, attribute name or string/symbol attribute is not valid UTF-8
    (reading one later would raise nanobind's RuntimeError, or abort inside C++)."""
    stack = [module.operation]
    while stack:
        op = stack.pop()
        try:
            op.name
            attributes = op.attributes
            for name in list(attributes):  # (NamedAttribute.name aborts on a bad name; this raises)
                try:
                    attr = attributes[name]
                except TypeError:  # (no Python class for it, e.g. complex dense elements: no strings)
                    continue
                _check_attribute(attr)
            for region in op.regions:
                for block in region.blocks:
                    stack.extend(inner.operation for inner in block.operations)
        except (RuntimeError, UnicodeDecodeError):
            text = op.get_asm(binary=True, print_generic_op_form=True)
            text = text.decode("utf-8", "backslashreplace").splitlines()[0][:200]
            raise ValueError("a name or string in this op (or one nested in it) is not valid UTF-8 "
                             f"(input corrupted?): {text}") from None


def _check_attribute(attr) -> None:
    if isinstance(attr, (ir.StringAttr, ir.FlatSymbolRefAttr, ir.SymbolRefAttr)):
        attr.value
    elif isinstance(attr, ir.ArrayAttr):
        for a in attr:
            _check_attribute(a)
    elif isinstance(attr, ir.DictAttr):
        for i in range(len(attr)):
            _check_attribute(attr[i].attr)


def _version(text: str) -> tuple:
    return tuple(int(part) for part in text.split("."))


def _is_portable(module: ir.Module) -> bool:
    return any(op.operation.name.startswith("vhlo.") for op in module.body.operations)


def _default_entry(module: ir.Module) -> str:
    names = []
    for op in module.body.operations:
        if op.operation.name != "func.func":
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        vis = op.attributes["sym_visibility"] if "sym_visibility" in op.attributes else None
        if name == "main":
            return name
        if vis is None or ir.StringAttr(vis).value == "public":
            names.append(name)
    if not names:
        raise ValueError("module has no public function to use as the entry point")
    return names[0]


def diagnostics(error) -> str:
    diags = getattr(error, "error_diagnostics", None)
    if diags:
        return "; ".join(f"{d.location}: {d.message}" for d in diags)
    return str(error)
