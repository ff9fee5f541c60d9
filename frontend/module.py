"""``hloforge.Module``: a StableHLO module you can print, inspect, optimize and compile."""
from __future__ import annotations

import collections
import os
import re

from hloforge.frontend import dtypes, shape_assertions
from hloforge.frontend.calls import (
    MAX_INLINED_CALLS, CallGraph, check_no_recursion, drop_dead_functions, function_name, inline_calls,
    is_public)
from hloforge.frontend.context import (
    clone_module, func, ir, portable_target, refine_polymorphic, refine_shapes, serialize_portable, shape_dtype_of,
    stablehlo, tensor_size_error, tensor_type, write_bytecode)
from hloforge.frontend.inspection import graph, save_graph, summary
from hloforge.frontend.parsing import BYTECODE_MAGIC, diagnostics, nesting_depth, parse_source

__all__ = ["Module", "ShapeDtype", "BYTECODE_MAGIC", "diagnostics"]

# How deep regions and calls may nest in what XLA compiles: its converter recurses once per level
# on a worker thread whose stack overflows near 200 (185 calls, 204 regions on XLA:CPU, jaxlib 0.10.2).
XLA_MAX_DEPTH = 128


class ShapeDtype:
    """The abstract value of an argument or result: a shape and a dtype. A dimension is None
    where a module's type has a dynamic one (``tensor<?x4xf32>``), shown as ``?``.

    >>> ShapeDtype((4, 8), np.float32)
    """
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(None if s is None else int(s) for s in shape)
        if any(s is not None and s < 0 for s in self.shape):
            raise ValueError(f"ShapeDtype: shape {self.shape} has a negative dimension")
        self.dtype = dtypes.canonical(dtype)

    @property
    def is_static(self) -> bool:
        return None not in self.shape

    def dynamic_dims(self) -> list:
        """Indices of the dynamic (``?``) dimensions."""
        return [i for i, s in enumerate(self.shape) if s is None]

    def __str__(self):
        return f"{self.dtype.name}[{', '.join('?' if s is None else str(s) for s in self.shape)}]"

    def __iter__(self):
        return iter((self.shape, self.dtype))

    def __eq__(self, other):
        return isinstance(other, ShapeDtype) and tuple(self) == tuple(other)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def __repr__(self):
        return f"ShapeDtype({self.shape}, {self.dtype.name})"


class Module:
    """A StableHLO module in its own MLIR context, with an entry function (``main`` by default).

    The layers above this one add ``optimize`` (``hloforge.passes``) and ``compile``
    (``hloforge.runtime``) as methods, so that this core class imports neither.
    """

    def __init__(self, module: ir.Module, entry: str = "main", out_tree=None):
        self.mlir = module
        self.context = module.context
        self.entry = entry
        self.out_tree = out_tree  # the pytree structure of the traced outputs, if known
        # Module.optimize's keyword arguments that ``compile()`` applies first (to a copy): set by
        # ``hf.jit(f).lower(...)`` so that lower().compile() runs f(x)'s pipeline; optimize() clears it
        self.pending_optimize: dict | None = None
        # the XLA options ``hf.jit(f, compiler_options=...).lower(...)`` left for ``compile()``
        self.compiler_options: dict | None = None

    # ---------------------------------------------------------------- construction

    @classmethod
    def parse(cls, source, entry: str | None = None, allow_unregistered: bool = False,
              source_name: str | None = None) -> "Module":
        """Parse MLIR text, MLIR bytecode or a portable artifact into a Module.

        Accepts ``jax.jit(f).lower(x).as_text()``, ``Module.to_bytecode()``,
        ``Module.to_portable()`` and ``jax.export``'s ``Exported.mlir_module_serialized``.
        ``source_name``: the file (a path, ``<stdin>``) that the diagnostics of invalid text and the
        locations of its ops without one of their own name; MLIR's ``"-"`` if None.
        """
        if not isinstance(source, (str, bytes, bytearray)):
            raise TypeError(f"Module.parse: expected str or bytes, got {type(source).__name__}")
        if isinstance(source, str):
            try:
                source = source.encode("utf-8")
            except UnicodeEncodeError as e:
                raise ValueError(f"Module.parse: the text is not valid Unicode: {e}") from None
        if source_name is not None and not isinstance(source_name, str):
            raise TypeError(f"Module.parse: source_name must be a str or None, got {type(source_name).__name__}")
        module = parse_source(bytes(source), allow_unregistered, source_name)
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
        return cls.parse(data, source_name=os.fsdecode(path))

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
        copy = Module(clone_module(self.mlir), self.entry, self.out_tree)
        copy.compiler_options = self.compiler_options
        return copy

    # ---------------------------------------------------------------- printing

    @property
    def text(self) -> str:
        """Pretty MLIR without source locations."""
        return self.to_text()

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The module's text, as jax's ``Lowered.as_text()`` answers (``dialect``: None or
        "stablehlo"; hloforge modules are StableHLO)."""
        if dialect not in (None, "stablehlo"):
            raise ValueError(f"Module.as_text: dialect must be None or 'stablehlo', got {dialect!r} (the compiled "
                             "HLO is Executable.hlo_text)")
        return self.to_text(debug_info=debug_info)

    def compiler_ir(self, dialect: str | None = None) -> ir.Module:
        """The MLIR module itself, as jax's ``Lowered.compiler_ir()`` (``dialect``: None or "stablehlo")."""
        if dialect not in (None, "stablehlo"):
            raise ValueError(f"Module.compiler_ir: dialect must be None or 'stablehlo', got {dialect!r}")
        return self.mlir

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
        """Every op of the module body, nested regions included, in program order (iteratively:
        any nesting depth)."""
        stack = [iter(self.mlir.body.operations)]
        while stack:
            op = next(stack[-1], None)
            if op is None:
                stack.pop()
                continue
            op = op.operation
            yield op
            if len(op.regions):
                stack.append(inner for region in op.regions for block in region.blocks
                             for inner in block.operations)

    def op_counts(self) -> dict:
        """Op name -> number of occurrences in all functions (func.func and func.return included)."""
        counts = collections.Counter()

        def count(op):  # (MLIR's own walk: a third faster than iterating regions in Python)
            counts[op.name] += 1
            return ir.WalkResult.ADVANCE

        for op in self.mlir.body.operations:
            op.operation.walk(count, ir.WalkOrder.PRE_ORDER)
        return dict(sorted(counts.items()))

    @property
    def signature(self):
        """(argument ShapeDtypes, result ShapeDtypes) of the entry function (None for a dynamic
        dimension); TypeError naming the argument or result whose type is not a ranked tensor of
        a supported dtype (tokens, f8E4M3FN, i4, ...)."""
        ftype = ir.FunctionType(ir.TypeAttr(self.entry_function().attributes["function_type"]).value)
        return _specs(self.entry, "argument", ftype.inputs), _specs(self.entry, "result", ftype.results)

    def summary(self) -> str:
        """A short table: functions and signatures, op counts, each fft and pad with its parameters."""
        return summary(self)

    def graph(self) -> str:
        """Graphviz DOT of the entry function (ops as nodes labelled with their result shapes)."""
        return graph(self)

    def save_graph(self, path) -> None:
        """Write the graph as ``.dot``, or ``.svg``/``.png`` through Graphviz's ``dot`` program."""
        save_graph(self, path)

    def without_shardings(self) -> "Module":
        """This module as one device's program: a copy without its sharding annotations (Shardy's
        ``sdy.mesh``, ``sdy.sharding`` and ``sdy.sharding_rule`` attributes and
        ``sdy.sharding_constraint`` ops; GSPMD's ``mhlo.sharding``), or the module itself when it has
        none. Other sdy ops (manual computations) are a ValueError.

        Returns:
          A Module.
        Example:
          >>> single = hf.Module.parse(jax.jit(f, in_shardings=s).lower(x).as_text()).without_shardings()
        """
        text = self.text
        if "sdy." not in text and "mhlo.sharding" not in text:
            return self
        copy = self.clone()
        with copy.context:
            for op in list(copy.walk()):
                name = op.name
                if name in ("sdy.mesh", "sdy.sharding_constraint"):
                    if op.results:
                        op.results[0].replace_all_uses_with(op.operands[0])
                    op.erase()
                    continue
                if name.startswith("sdy."):
                    raise ValueError(f"Module.without_shardings: the module holds {name}, a sharded computation "
                                     "with no one-device form")
                for key in _SHARDING_ATTRIBUTES:
                    if key in op.attributes:
                        del op.attributes[key]
                for key in ("arg_attrs", "res_attrs"):
                    if key in op.attributes:
                        op.attributes[key] = ir.ArrayAttr.get([_without_shardings(d) for d in op.attributes[key]])
        return copy

    def verify(self) -> None:
        """Raise ValueError with MLIR's diagnostics if the module is invalid."""
        try:
            self.mlir.operation.verify()
        except ir.MLIRError as e:
            raise ValueError(f"invalid module: {diagnostics(e)}") from None

    # ---------------------------------------------------------------- compilation

    def refine(self, arg_specs=None) -> "Module":
        """A copy whose dynamic dimensions (``tensor<?x4xf32>``) are resolved by StableHLO's shape
        refinement, from static argument shapes ``arg_specs`` (one ShapeDtype or (shape, dtype) per
        argument; None: the module's own, which must then be static).

        Raises ValueError when the shapes do not fit the module or a dimension stays dynamic,
        naming it: "main: result 0, dimension 1 is dynamic (?) after shape refinement".
        """
        ins, _ = self.signature
        check_no_recursion(CallGraph(self.mlir), [self.entry], "refine")
        if arg_specs is not None:
            arg_specs = [ShapeDtype(*s) for s in arg_specs]
            if len(arg_specs) != len(ins):
                raise ValueError(f"{self.entry}: refine: expected {len(ins)} argument shapes, got {len(arg_specs)}")
            _check_static(self.entry, "argument", arg_specs, "")
        else:
            _check_static(self.entry, "argument", ins, ": give refine() static argument shapes")
        try:
            copy = self._refined(arg_specs, inline=False)
        except ValueError as e:
            if "incompatible refinement keys" not in str(e):
                raise
            copy = self._refined(arg_specs, inline=True)
        ins, outs = copy.signature
        _check_static(self.entry, "argument", ins, " after shape refinement")
        _check_static(self.entry, "result", outs, " after shape refinement")
        return copy

    def _refined(self, arg_specs, inline: bool) -> "Module":
        """The refined copy: by StableHLO's refinement passes, or with ``inline`` by jaxlib's (which
        inlines first: jax.export calls one function with different dimension arguments)."""
        copy = self.clone()
        entry = copy.entry_function()
        with copy.context, ir.Location.unknown():
            if self.entry != "main":  # (the StableHLO passes refine @main)
                entry.attributes["sym_name"] = ir.StringAttr.get("main")
            types = None if arg_specs is None else [tensor_type(s.shape, s.dtype) for s in arg_specs]
            if inline:
                copy = Module(refine_polymorphic(copy.mlir, types), self.entry, self.out_tree)
            else:
                refine_shapes(copy.mlir, types)
            shape_assertions.check_and_remove(copy.mlir, self.entry)
            if self.entry != "main":
                copy.entry_function_named("main").attributes["sym_name"] = ir.StringAttr.get(self.entry)
        return copy

    def dynamic_dims_message(self, what: str, specs) -> str | None:
        """"main: argument 1, dimension 0 is dynamic (?)" for the first dynamic dimension of
        ``specs`` (this module's arguments or results: ``what``), or None if all are static."""
        return dynamic_dims_message(self.entry, what, specs)

    def entry_function_named(self, name: str):
        for f in self.functions():
            if ir.StringAttr(f.attributes["sym_name"]).value == name:
                return f
        raise ValueError(f"module has no function @{name}")

    def _code_for_compile(self) -> str:
        code = self.to_text(debug_info=True)
        module = self._for_xla(code)
        if module.entry == "main":
            return code if module is self else module.to_text(debug_info=True)
        # XLA compiles @main: rename a different entry on a copy.
        copy = self.clone() if module is self else module
        f = copy.entry_function()
        with copy.context:
            f.attributes["sym_name"] = ir.StringAttr.get("main")
        return copy.to_text(debug_info=True)

    def _for_xla(self, code: str) -> "Module":
        """This module (printed: ``code``), or a copy whose calls are inlined where calls and regions
        nest deeper than XLA takes (``XLA_MAX_DEPTH``); ValueError for a private entry function,
        recursion, regions nested too deep even without calls, or a tensor type too large for XLA."""
        _check_public_entry(self)
        _check_tensor_sizes(code)
        if not any(reference in code for reference in _REFERENCES):
            # no function refers to another: the braces bound the nesting (module, function, a
            # brace or more per region), at a fraction of a walk's cost
            if nesting_depth(code.encode())[0] - 2 <= XLA_MAX_DEPTH:
                return self
        graph = CallGraph(self.mlir)
        roots = [self.entry] + [name for name in graph.public() if name != self.entry]  # (XLA converts them all)
        check_no_recursion(graph, roots, "compile")
        if graph.deepest(roots)[0] <= XLA_MAX_DEPTH:
            return self
        copy = self.clone()
        with copy.context:
            done = inline_calls(copy.mlir, roots)
        drop_dead_functions(copy.mlir)  # (the chain's functions: XLA would still read them)
        if done.too_large:
            name, copies = done.too_large[0]
            raise ValueError(f"compile: calls nest deeper than XLA takes ({XLA_MAX_DEPTH} levels) in @{name}, and "
                             f"inlining them would copy function bodies {copies} times (more than {MAX_INLINED_CALLS})")
        depth, name = CallGraph(copy.mlir).deepest(roots)
        if depth > XLA_MAX_DEPTH:
            inlined = " once its calls are inlined" if done.count else ""
            raise ValueError(f"compile: regions nest {depth} deep in @{name}{inlined}; XLA takes at most "
                             f"{XLA_MAX_DEPTH} (its converter recurses once per region and overflows its stack "
                             f"near 200)")
        return copy


def _specs(entry: str, what: str, types) -> list:
    out = []
    for i, t in enumerate(types):
        try:
            out.append(ShapeDtype(*shape_dtype_of(t)))
        except TypeError as e:
            raise TypeError(f"@{entry} {what} {i}: {e}") from None
    return out


def dynamic_dims_message(entry: str, what: str, specs) -> str | None:
    """"main: argument 1, dimension 0 is dynamic (?)" for the first dynamic dimension, or None."""
    for i, spec in enumerate(specs):
        dims = spec.dynamic_dims()
        if dims:
            return f"{entry}: {what} {i}, dimension {dims[0]} is dynamic (?)"
    return None


def _check_static(entry, what, specs, hint) -> None:
    message = dynamic_dims_message(entry, what, specs)
    if message:
        raise ValueError(message + hint)


def _version(text: str) -> tuple:
    return tuple(int(part) for part in text.split("."))


def _default_entry(module: ir.Module) -> str:
    """@main (public or not: optimize() keeps it and compile() says why a private one cannot
    compile), else the first public function."""
    names, private = [], []
    for op in module.body.operations:
        if op.operation.name != "func.func":
            continue
        name = function_name(op)
        if name == "main":
            return name
        (names if is_public(op) else private).append(name)
    if not names:
        raise ValueError("module has no public function to use as the entry point"
                         + (f" (private: {_names(private)})" if private else ""))
    return names[0]


# how the printed text refers to functions: calls, composites' decompositions, custom calls' computations
# A ranked tensor type's dimensions ("4x?x" of ``tensor<4x?xcomplex<f32>>``), then its element type.
_TENSOR_DIMS = re.compile(r"tensor<([0-9?x]+x)")


def _check_tensor_sizes(code: str) -> None:
    """ValueError for a tensor type in ``code`` (a module's text) beyond XLA's int64 element or byte
    counts (``context.tensor_size_error``): XLA aborts the process on one, so parsed modules are read
    here (traced ones are refused as they are built). About 3 ms per MB of text."""
    for dims in set(_TENSOR_DIMS.findall(code)):
        shape = [int(d) if d.isdigit() else None for d in dims[:-1].split("x")]
        if tensor_size_error(shape, 1) is None and tensor_size_error(shape, 16) is None:
            continue  # (the common case: fits whatever the element type)
        for element in set(re.findall(re.escape(f"tensor<{dims}") + r"(complex<\w+>|\w+)", code)):
            bits = re.search(r"[0-9]+", element)  # (f32, ui8, bf16, f8E4M3FN; index has none: 64 bits)
            itemsize = max(1, (int(bits.group()) if bits else 64) // 8) * (2 if element.startswith("complex") else 1)
            error = tensor_size_error(shape, itemsize)
            if error:
                raise ValueError(f"compile: the type tensor<{dims}{element}> {error}")


_REFERENCES = ("call @", "decomposition = @", "called_computations = [")


def _names(names, limit: int = 8) -> str:
    shown = ", ".join(f"@{n}" for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _check_public_entry(module: Module) -> None:
    """ValueError if the entry function is private: XLA compiles only a public @main."""
    if is_public(module.entry_function()):
        return
    public, private = [], []
    for f in module.functions():
        (public if is_public(f) else private).append(function_name(f))
    others = f"public: {_names(public)}" if public else "the module has no public function"
    raise ValueError(f"compile: the entry function @{module.entry} is private, and XLA compiles only a public "
                     f"@main ({others}; private: {_names(private)}): make @{module.entry} public (drop `private`)")


_SHARDING_ATTRIBUTES = ("sdy.sharding", "sdy.sharding_rule", "mhlo.sharding")


def _without_shardings(attrs):
    """A DictAttr of argument or result attributes without the sharding ones."""
    kept = {}
    for i in range(len(attrs)):
        named = attrs[i]
        if named.name not in _SHARDING_ATTRIBUTES:
            kept[named.name] = named.attr
    return ir.DictAttr.get(kept)
