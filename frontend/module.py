"""``hloforge.Module``: a StableHLO module you can print, inspect, optimize and compile."""
from __future__ import annotations

import collections

import os

from hloforge.frontend.context import (
    deserialize_portable, func, ir, make_context, serialize_portable, shape_dtype_of, write_bytecode)

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
        ctx = make_context()
        ctx.allow_unregistered_dialects = allow_unregistered
        try:
            module = ir.Module.parse(bytes(source) if isinstance(source, bytearray) else source, context=ctx)
            if _is_portable(module):
                module = deserialize_portable(ctx, source if isinstance(source, str) else bytes(source))
        except ir.MLIRError as e:
            raise ValueError(f"Module.parse: invalid MLIR: {diagnostics(e)}") from None
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
        try:
            return serialize_portable(self.mlir, target)
        except ir.MLIRError as e:
            raise ValueError(f"to_portable: cannot serialize for {target!r}: {diagnostics(e)}") from None

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
                 print_ir_after_change: bool = False, cost_model=None):
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
          cost_model: what ``fft-truncate`` assumes about the target: "cpu", "gpu" or a
            ``hloforge.passes.spectral.CostModel``; None uses ``hf.config.cost_model``, and
            when that is None too the model of ``hf.config.device``.
        Raises:
          ValueError: an unknown pass name, or a pass left an invalid module (the
            message names the pass and carries MLIR's diagnostic).
        Example:
          >>> report = m.optimize(); print(report)
        """
        from hloforge.passes import run
        from hloforge.passes._ir import using_cost_model
        from hloforge.passes.spectral import resolve
        from hloforge.runtime.settings import config
        if cost_model is None:
            cost_model = config.cost_model if config.cost_model is not None else config.device
        with using_cost_model(resolve(cost_model)):
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
