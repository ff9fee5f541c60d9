"""``hloforge.Module``: a StableHLO module you can print, inspect, optimize and compile."""
from __future__ import annotations

import collections

from hloforge.frontend.context import func, ir, make_context, shape_dtype_of


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
    def parse(cls, source, entry: str | None = None) -> "Module":
        """Parse MLIR text or bytecode (e.g. ``jax.jit(f).lower(x).as_text()``) into a Module."""
        ctx = make_context()
        try:
            module = ir.Module.parse(source, context=ctx)
        except ir.MLIRError as e:
            raise ValueError(f"Module.parse: invalid MLIR: {_diagnostics(e)}") from None
        return cls(module, entry or _default_entry(module))

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

    def op_counts(self) -> dict:
        """Op name -> number of occurrences in all functions (func.func and func.return included)."""
        counts = collections.Counter()

        def visit(op):
            counts[op.name] += 1
            for region in op.regions:
                for block in region.blocks:
                    for inner in block.operations:
                        visit(inner.operation)

        for op in self.mlir.body.operations:
            visit(op.operation)
        return dict(sorted(counts.items()))

    @property
    def signature(self):
        """(argument ShapeDtypes, result ShapeDtypes) of the entry function."""
        ftype = ir.FunctionType(ir.TypeAttr(self.entry_function().attributes["function_type"]).value)
        return ([ShapeDtype(*shape_dtype_of(t)) for t in ftype.inputs],
                [ShapeDtype(*shape_dtype_of(t)) for t in ftype.results])

    def verify(self) -> None:
        """Raise ValueError with MLIR's diagnostics if the module is invalid."""
        try:
            self.mlir.operation.verify()
        except ir.MLIRError as e:
            raise ValueError(f"invalid module: {_diagnostics(e)}") from None

    # ---------------------------------------------------------------- compilation

    def compile(self, device=None):
        """Compile with XLA for one device (default: the first CPU); returns an Executable."""
        from hloforge.runtime.executable import Executable
        ins, outs = self.signature
        code = self._code_for_compile()
        return Executable.compile(code, [tuple(s) for s in ins], [tuple(s) for s in outs],
                                  device=device, name=self.entry)

    def _code_for_compile(self) -> str:
        if self.entry == "main":
            return self.to_text(debug_info=True)
        # XLA compiles @main: rename a different entry on a copy.
        copy = self.clone()
        f = copy.entry_function()
        with copy.context:
            f.attributes["sym_name"] = ir.StringAttr.get("main")
        return copy.to_text(debug_info=True)


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


def _diagnostics(error) -> str:
    diags = getattr(error, "error_diagnostics", None)
    if diags:
        return "; ".join(f"{d.location}: {d.message}" for d in diags)
    return str(error)
