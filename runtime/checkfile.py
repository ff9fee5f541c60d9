"""Run StableHLO's test files: the interpreter's tests (``stablehlo/tests/interpret``) and ``testdata``.

A file is split at its ``// -----`` lines (as ``mlir-opt --split-input-file``); each piece is a module
whose test functions are ``@main`` if it has one, else every public function without arguments. Each
test function runs on its own: its assertions become extra results, XLA compiles it through PJRT and
the values are compared on the host (``check_values``). The assertions are the ``check`` dialect's
ops (``check.expect_eq``, ``expect_eq_const``, ``expect_almost_eq[_const]`` with ``tolerance``,
``expect_close`` with ``max_ulp_difference``/``min_ulp_difference``, ``expect_serialized_eq`` against
an ``interpreter.probe``) and testdata's custom calls (``@check.expect_eq``, ``@check.expect_almost_eq``
with tolerance 1e-3, ``@check.expect_close`` within 0..3 ULP, the older ``@check.eq`` returning
``tensor<i1>``), with the defaults of StableHLO's interpreter. ``interpreter.print`` and ``probe`` are
identities; ``interpreter.run_parallel`` runs on several devices (``check_parallel``). Values of
element types numpy lacks (i2, i4, ui2, ui4, the f8 family, f4E2M1FN, f6E2M3FN, f6E3M2FN) leave XLA
widened or bitcast and are compared as ml_dtypes values.

With ``optimize``, the function also runs after hloforge's default pipeline and must give the same
bits in every result and assertion value (with ``finite_math``, the pipeline's finite-math rewrites
run too, and the optimized values need only pass the assertions). A test function whose ``@main``
takes arguments (StableHLO's round-trip testdata, jax.export's modules) runs on seeded inputs instead
and passes when it runs (and, with ``optimize``, keeps its bits).
"""
from __future__ import annotations

import dataclasses
import re

import ml_dtypes
import numpy as np

from hloforge.frontend.context import ir, shape_dtype_of
from hloforge.frontend.module import Module
from hloforge.passes import spec_semantics
from hloforge.runtime.check_parallel import OP as RUN_PARALLEL, expand_run_parallel
from hloforge.runtime.check_quant import QuantizedUnsupported, lower_quantized
from hloforge.runtime.check_syntax import generic_check_ops, split_pieces
from hloforge.runtime.check_values import Check, compare, first_bit_difference, hex_bits
from hloforge.runtime.check_values import _ulp_distance  # noqa: F401  (importable from here, as before)
from hloforge.runtime.files import read_regular_file
from hloforge.runtime.unsupported import quantized_use

__all__ = ["Check", "CheckResult", "check_file", "run_check_file", "instrument", "compare",
           "generic_check_ops", "DYNAMIC_SIZE"]

MAX_CHECK_FILE_BYTES = 2 << 30  # as the other CLI inputs

# op name (the check dialect's) or custom-call target -> (kind, defaults)
_DIALECT = {
    "check.expect_eq": ("eq", {}), "check.expect_eq_const": ("eq", {}),
    "check.expect_almost_eq": ("almost_eq", {"tolerance": 1e-4}),
    "check.expect_almost_eq_const": ("almost_eq", {"tolerance": 1e-4}),
    "check.expect_close": ("close", {"max_ulp": 1, "min_ulp": 0}),
    "check.expect_serialized_eq": ("eq", {}),
}
_CUSTOM_CALL = {  # (StableHLO's stablehlo-translate --interpret)
    "check.eq": ("almost_eq", {"tolerance": 1e-4}),  # (integers compare exactly)
    "check.expect_eq": ("eq", {}), "check.expect_almost_eq": ("almost_eq", {"tolerance": 1e-3}),
    "check.expect_close": ("close", {"max_ulp": 3, "min_ulp": 0}),
}
_ATTRIBUTES = {"tolerance": "tolerance", "max_ulp_difference": "max_ulp", "min_ulp_difference": "min_ulp"}

# element types numpy has no dtype for -> (ml_dtypes dtype, the element type they leave XLA as, how)
_NARROW = {
    "i2": (ml_dtypes.int2, "i8", "convert"), "i4": (ml_dtypes.int4, "i8", "convert"),
    "ui2": (ml_dtypes.uint2, "ui8", "convert"), "ui4": (ml_dtypes.uint4, "ui8", "convert"),
    "f8E4M3FN": (ml_dtypes.float8_e4m3fn, "ui8", "bitcast"), "f8E5M2": (ml_dtypes.float8_e5m2, "ui8", "bitcast"),
    "f8E4M3FNUZ": (ml_dtypes.float8_e4m3fnuz, "ui8", "bitcast"),
    "f8E5M2FNUZ": (ml_dtypes.float8_e5m2fnuz, "ui8", "bitcast"),
    "f8E4M3B11FNUZ": (ml_dtypes.float8_e4m3b11fnuz, "ui8", "bitcast"),
    "f8E4M3": (ml_dtypes.float8_e4m3, "ui8", "bitcast"), "f8E3M4": (ml_dtypes.float8_e3m4, "ui8", "bitcast"),
    "f8E8M0FNU": (ml_dtypes.float8_e8m0fnu, "ui8", "bitcast"),
    # (finite-only formats: converting to f32 and back keeps every bit)
    "f4E2M1FN": (ml_dtypes.float4_e2m1fn, "f32", "convert"),
    "f6E2M3FN": (ml_dtypes.float6_e2m3fn, "f32", "convert"), "f6E3M2FN": (ml_dtypes.float6_e3m2fn, "f32", "convert"),
}
_LINE = re.compile(r":(\d+):\d+")
_TEST_FUNCTION = re.compile(r"func\.func\s+(?:public\s+)?@([\w$.\-]+)\s*\(\s*\)")  # (for pieces that do not parse)
DYNAMIC_SIZE = 3  # what a dynamic dimension (and a leading 0-d integer argument, jax's dimension variable) is set to


@dataclasses.dataclass
class CheckResult:
    """The outcome of one test function (``function``), or of a file or piece that did not get that far."""
    path: str
    ok: bool
    reason: str = ""
    function: str | None = None
    line: int | None = None  # (a piece that did not parse: its first line)
    piece: int | None = None  # (the first line of its ``// -----`` piece, in a file of several)

    @property
    def name(self) -> str:
        """``file::function``; ``file:LINE::function`` in a file of several pieces (LINE: the piece's first
        line, so two pieces' ``@main`` differ); ``file:LINE`` for a piece that did not parse."""
        if self.function:
            return f"{self.path}:{self.piece}::{self.function}" if self.piece else f"{self.path}::{self.function}"
        return f"{self.path}:{self.line}" if self.line else self.path

    def __str__(self):
        return f"PASS {self.name}" if self.ok else f"FAIL {self.name}: {self.reason}"


@dataclasses.dataclass
class Output:
    """One result of an instrumented function: what it is, and how its value leaves XLA."""
    label: str
    decode: object  # wire numpy array -> the value (ml_dtypes for narrow types)


@dataclasses.dataclass
class Program:
    """An instrumented function: its outputs, and per check the indices of (actual, expected)."""
    outputs: list
    checks: list  # [(Check, actual index, expected index)]

    def __len__(self):  # (instrument used to return the list of checks)
        return len(self.checks)


@dataclasses.dataclass
class Options:
    optimize: bool = False
    device: object = None
    finite_math: bool = False


def _first_line(e: BaseException) -> str:
    lines = [line for line in str(e).splitlines() if line.strip()]
    return lines[0] if lines else type(e).__name__


def _line_of(op) -> int | None:
    m = _LINE.search(str(op.location))
    return int(m.group(1)) if m else None

# ---------------------------------------------------------------- files and pieces


def check_file(path, optimize: bool = False, device=None, finite_math: bool = False) -> list:
    """One CheckResult per test function of the file at ``path`` (or one for a file that cannot be read)."""
    path = str(path)
    try:
        data = read_regular_file(path, MAX_CHECK_FILE_BYTES)
    except ValueError as e:  # (a FIFO, a device, a directory, too large: one line, never a hang)
        return [CheckResult(path, False, str(e))]
    except OSError as e:
        return [CheckResult(path, False, f"cannot read: {e.strerror or e}")]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return [CheckResult(path, False, f"not a UTF-8 MLIR text file (byte {e.start} is {data[e.start]:#04x})")]
    options = Options(optimize, device, finite_math)
    results = []
    pieces = [piece for piece in split_pieces(text) if not piece.is_empty]
    for piece in pieces:
        found = _check_piece(path, piece, options)
        if len(pieces) > 1:
            for result in found:
                result.piece = piece.line
        results += found
    return results or [CheckResult(path, False, "no test functions found")]


def run_check_file(path, optimize: bool = False, device=None) -> CheckResult:
    """The whole file as one CheckResult: it passes when every test function passes."""
    results = check_file(path, optimize, device)
    failed = [r for r in results if not r.ok]
    if not failed:
        return CheckResult(str(path), True)
    if len(results) == 1:
        return CheckResult(str(path), False, failed[0].reason)
    first = failed[0]
    return CheckResult(str(path), False, f"{len(failed)} of {len(results)} test functions failed; "
                                         f"{first.function or first.line}: {first.reason}")


def test_functions(module: Module) -> list:
    """``main`` if the module has one (the interpreter's entry), else every public function without
    arguments."""
    names = []
    for f in module.functions():
        name = ir.StringAttr(f.attributes["sym_name"]).value
        if name == "main":
            return [name]
        private = "sym_visibility" in f.attributes and ir.StringAttr(f.attributes["sym_visibility"]).value != "public"
        if not private and not len(f.regions[0].blocks[0].arguments):
            names.append(name)
    return names


def _check_piece(path: str, piece, options: Options) -> list:
    try:
        # (entry: test_functions chooses; a piece of private functions only is still a module)
        module = Module.parse(generic_check_ops(lower_quantized(piece.text)), entry="main", allow_unregistered=True)
    except QuantizedUnsupported as e:
        reason = f"quantized program not lowered: {e}"
        names = ["main"] if re.search(r"func\.func\s+(?:public\s+)?@main\b", piece.text) else \
            _TEST_FUNCTION.findall(piece.text)
        return [CheckResult(path, False, reason, name) for name in names] or \
            [CheckResult(path, False, reason, line=piece.line)]
    except ValueError as e:
        reason = quantized_use(piece.text) or _first_line(e)
        names = ["main"] if re.search(r"func\.func\s+(?:public\s+)?@main\b", piece.text) else \
            _TEST_FUNCTION.findall(piece.text)
        return [CheckResult(path, False, reason, name) for name in names] or \
            [CheckResult(path, False, reason, line=piece.line)]
    names = test_functions(module)
    if not names:
        return [CheckResult(path, False, "no test function (@main, or a public function without arguments)",
                            line=piece.line)]
    return [_check_function(path, module, name, options) for name in names]


def _check_function(path: str, piece: Module, name: str, options: Options) -> CheckResult:
    module = piece.clone()
    module.entry = name
    try:
        reason = _run_function(module, options)
    except (ValueError, TypeError, RuntimeError, MemoryError) as e:  # (one function's failure: report it, go on)
        reason = _first_line(e)
    return CheckResult(path, reason is None, reason or "", name)

# ---------------------------------------------------------------- one test function


def _run_function(module: Module, options: Options) -> str | None:
    """None when the entry function passes, else why not."""
    spec_semantics.apply(module)  # (the reference values are the spec's: passes/spec_semantics.py)
    probes = _interpreter_identities(module)
    erase_assertions(module, keep=module.entry)
    has_assertions = bool(_assertions(module.entry_function()))
    if len(module.entry_function().regions[0].blocks[0].arguments):
        if has_assertions:
            return f"@{module.entry} takes arguments; check files build their inputs from constants"
        _refuse_host_transfers(module)
        return _run_with_inputs(module, options)
    if not has_assertions:
        return "no check.* assertions found"
    _refuse_host_transfers(module)
    expand_run_parallel(module, options.device, erase_checks=erase_assertions, prepare=spec_semantics.apply)
    program = instrument(module, probes)
    raw = _execute(module, program, options.device)
    failure = _failed_check(program, raw)
    if failure or not options.optimize:
        return failure
    return _optimized_failure(module, program, raw, options)


def _optimized_failure(module: Module, program: Program, raw: list, options: Options) -> str | None:
    """None when the optimized function gives the same bits as ``raw`` (with ``finite_math``: passes
    its assertions), else why not."""
    optimized = module.clone()
    try:
        report = optimized.optimize(finite_math=options.finite_math)
        values = _execute(optimized, program, options.device)
    except (ValueError, TypeError, RuntimeError, MemoryError) as e:
        return f"--optimize: {_first_line(e)}"
    if options.finite_math:
        failure = _failed_check(program, values)
        return f"--optimize: {failure}; {_fired(report)}" if failure else None
    return _bits_changed(program.outputs, raw, values, report)


def _refuse_host_transfers(module: Module) -> None:
    """XLA:CPU waits for the host to fill its infeed and read its outfeed (and host sends and
    receives), which nothing does here: such a program would hang."""
    for op in module.walk():
        host = op.name in ("stablehlo.send", "stablehlo.recv") and "is_host_transfer" in op.attributes and \
            ir.BoolAttr(op.attributes["is_host_transfer"]).value
        if op.name in ("stablehlo.infeed", "stablehlo.outfeed") or host:
            raise ValueError(f"{op.name} (line {_line_of(op)}) talks to the host, which XLA:CPU would wait for "
                             f"forever here: hloforge check does not run host transfers")


def _execute(module: Module, program: Program, device) -> list:
    outs = module.compile(device).call_flat([])
    return [out.decode(np.asarray(value)) for out, value in zip(program.outputs, outs)]


def _failed_check(program: Program, values: list) -> str | None:
    for n, (check, actual, expected) in enumerate(program.checks):
        reason = compare(check, values[actual], values[expected])
        if reason:
            return f"check {n} ({check.describe()}): {reason}"
    return None


def _fired(report) -> str:
    fired = sorted(report.fired.items())
    if not fired:
        return "no pattern fired (MLIR's canonicalize/cse changed the program)"
    return "patterns fired: " + ", ".join(f"{name} x{count}" for name, count in fired)


def _bits_changed(outputs: list, raw: list, optimized: list, report) -> str | None:
    """None when every output keeps its bits under --optimize, else the first element that changed."""
    for out, r, o in zip(outputs, raw, optimized):
        found = first_bit_difference(r, o)
        if found is None:
            continue
        index, count = found
        if count < 0:
            return f"--optimize changed {out.label}: {r.dtype}{list(r.shape)} became {o.dtype}{list(o.shape)}"
        return (f"--optimize changed the bits of {out.label}: {count} of {r.size} elements; at index {list(index)}: "
                f"raw {r[index]!s} ({hex_bits(r, index)}), optimized {o[index]!s} ({hex_bits(o, index)}); "
                f"{_fired(report)}")
    return None

# ---------------------------------------------------------------- preparing a function


def _is_assertion(op) -> bool:
    if op.name == "stablehlo.custom_call":
        return ir.StringAttr(op.attributes["call_target_name"]).value.startswith("check.")
    return op.name.startswith("check.")


def _assertions(f) -> list:
    found = []

    def visit(op):
        if _is_assertion(op):
            found.append(op)
        return ir.WalkResult.ADVANCE

    f.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _replace_with_true(op) -> None:
    """The older ``@check.eq`` returns ``tensor<i1>``: its uses read "true" now."""
    for r in op.results:
        true = ir.Operation.create("stablehlo.constant", results=[r.type], attributes={
            "value": ir.DenseElementsAttr.get_splat(r.type, ir.BoolAttr.get(True))}, ip=ir.InsertionPoint(op))
        r.replace_all_uses_with(true.result)


def erase_assertions(module: Module, keep: str | None = None) -> None:
    """Remove the assertions of every function but ``keep`` (they are other tests of the piece)."""
    with module.context, ir.Location.unknown():
        for f in module.functions():
            if ir.StringAttr(f.attributes["sym_name"]).value == keep:
                continue
            for op in _assertions(f):
                _replace_with_true(op)
                op.erase()


def _interpreter_identities(module: Module) -> dict:
    """``interpreter.print`` and ``interpreter.probe`` become identities. Returns the entry's probes:
    probe_id -> (operand, None, or the op whose region holds the probe)."""
    probes, found = {}, []
    entry = module.entry_function()

    def visit(op):
        if op.name in ("interpreter.print", "interpreter.probe"):
            found.append(op)
        return ir.WalkResult.ADVANCE

    for f in module.functions():
        f.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    for op in found:
        if op.name == "interpreter.probe":
            parent = op.parent.operation
            if _function_of(op) == entry.operation:
                probe_id = ir.StringAttr(op.attributes["probe_id"]).value
                probes[probe_id] = (op.operands[0], None if parent.name == "func.func" else parent.name)
            op.results[0].replace_all_uses_with(op.operands[0])
        op.erase()
    return probes


def _function_of(op):
    while op.name != "func.func":
        op = op.parent.operation
    return op

# ---------------------------------------------------------------- assertions into results


def _check_of(op) -> Check:
    if op.name == "stablehlo.custom_call":
        target = ir.StringAttr(op.attributes["call_target_name"]).value
        table, name = _CUSTOM_CALL, f"stablehlo.custom_call @{target}"
    else:
        target = op.name
        table, name = _DIALECT, op.name
    if target not in table:
        raise ValueError(f"unsupported assertion {name} (supported: {', '.join(sorted(table))})")
    kind, defaults = table[target]
    check = Check(kind, name=name, line=_line_of(op), **defaults)
    for attr, field in _ATTRIBUTES.items():
        if attr in op.attributes:
            value = op.attributes[attr]
            setattr(check, field, ir.FloatAttr(value).value if field == "tolerance" else ir.IntegerAttr(value).value)
    return check


def _compared_values(op, check: Check, probes: dict) -> list:
    """The (actual, expected) values of an assertion op."""
    values = list(op.operands)
    if op.name == "check.expect_serialized_eq":
        values.insert(0, _probed(op, check, probes))
    if len(values) != 2:
        raise ValueError(f"{check.describe()} needs an actual and an expected value, got {len(values)} operands")
    if not _compatible(values[0].type, values[1].type):
        raise ValueError(f"{check.describe()}: the compared types differ: {values[0].type} vs {values[1].type}")
    return values


def _ranked(t: ir.Type):
    try:
        return ir.RankedTensorType(t)
    except ValueError:
        return None


def _compatible(a: ir.Type, b: ir.Type) -> bool:
    """Equal, or ranked tensors of one element type whose dimensions agree where both are static."""
    if a == b:
        return True
    ra, rb = _ranked(a), _ranked(b)
    if ra is None or rb is None or ra.element_type != rb.element_type or ra.rank != rb.rank:
        return False
    dynamic = ir.ShapedType.get_dynamic_size()
    return all(x == y or dynamic in (x, y) for x, y in zip(ra.shape, rb.shape))


def _probed(op, check: Check, probes: dict):
    """What the interpreter.probe named by a check.expect_serialized_eq saw (in the function's body)."""
    probe_id = ir.StringAttr(op.attributes["probe_id"]).value
    iteration = ir.IntegerAttr(op.attributes["iteration"]).value if "iteration" in op.attributes else 0
    if probe_id not in probes:
        raise ValueError(f"{check.describe()}: no interpreter.probe with probe_id {probe_id!r} in this function")
    value, region = probes[probe_id]
    if region is not None:
        raise ValueError(f"{check.describe()}: the probe {probe_id!r} is inside {region}: hloforge compares only "
                         f"probes of the function's body (each run once), not values of loop iterations")
    if iteration:
        raise ValueError(f"{check.describe()}: iteration {iteration} of the probe {probe_id!r}, which runs once")
    return value


def _to_wire(value, label: str, ip):
    """(the value as it leaves XLA, its Output): narrow element types widened or bitcast."""
    t = _ranked(value.type)
    if t is None:
        raise ValueError(f"{label}: unsupported type {value.type}")
    element = str(t.element_type)
    if element not in _NARROW:
        try:
            shape_dtype_of(t)
        except TypeError as e:
            raise ValueError(f"{label}: {e}") from None
        return value, Output(label, lambda x: x)
    dtype, wire, how = _NARROW[element]
    wire_type = ir.RankedTensorType.get(list(t.shape), ir.Type.parse(wire))
    name = "stablehlo.convert" if how == "convert" else "stablehlo.bitcast_convert"
    op = ir.Operation.create(name, results=[wire_type], operands=[value], ip=ip)
    decode = (lambda x: x.view(dtype)) if how == "bitcast" else (lambda x: x.astype(dtype))
    return op.result, Output(label, decode)


def instrument(module: Module, probes: dict | None = None) -> Program:
    """Turn the assertions of the entry function into its results (followed by its own tensor results);
    returns what each result is and which ones each check compares."""
    f = module.entry_function()
    block = f.regions[0].blocks[0]
    outputs, values, checks = [], [], []
    with module.context, ir.Location.unknown():
        ret = block.operations[len(block.operations) - 1]
        ip = ir.InsertionPoint(ret)
        for op in list(block.operations):
            op = op.operation
            if not _is_assertion(op):
                continue
            check = _check_of(op)
            pair = _compared_values(op, check, probes or {})
            indices = []
            for which, v in zip(("actual", "expected"), pair):
                wire, out = _to_wire(v, f"the {which} value of check {len(checks)} ({check.describe()})", ip)
                indices.append(len(values))
                values.append(wire)
                outputs.append(out)
            checks.append((check, *indices))
            _replace_with_true(op)
            op.erase()
        for n, v in enumerate(ret.operands):  # (read after the old-style checks' results became "true")
            if _ranked(v.type):
                wire, out = _to_wire(v, f"result {n}", ip)
                values.append(wire)
                outputs.append(out)
        _refuse_leftovers(f)
        ir.Operation.create("func.return", operands=values, ip=ip)
        ret.erase()
        ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
        f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(ftype.inputs, [v.type for v in values]))
        if "res_attrs" in f.attributes:
            del f.attributes["res_attrs"]
    module.verify()
    return Program(outputs, checks)


def _refuse_leftovers(f) -> None:
    """ValueError for an assertion or interpreter op left where the rewrite does not reach."""
    left = []

    def visit(op):
        if _is_assertion(op) or op.name.startswith("interpreter."):
            left.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    f.operation.walk(visit, ir.WalkOrder.PRE_ORDER)  # (MLIR's walk cannot pass an exception through)
    if left:
        op, parent = left[0], left[0].parent.operation.name
        where = f"inside {parent}" if parent != "func.func" else "here"
        raise ValueError(f"{op.name} (line {_line_of(op)}) {where} is not supported: hloforge turns the "
                         f"assertions of the function's body into results, and runs {RUN_PARALLEL} there")

# ---------------------------------------------------------------- functions with arguments


def _bind_dimension_variables(module):
    """A copy of ``module`` whose leading 0-d integer arguments of the entry (jax's dimension variables,
    which the dynamic shapes depend on) are constants DYNAMIC_SIZE, so that shape refinement resolves
    them. jax puts them before the array arguments; a 0-d integer after an array is data (the start
    of ``dynamlic_slice_t2``'s slice (sic), which as DYNAMIC_SIZE would have sliced past the end)."""
    ins = module.signature[0]
    dims = []
    while len(dims) < len(ins) and not ins[len(dims)].shape and ins[len(dims)].dtype.kind in "iu":
        dims.append(len(dims))
    if not dims or len(dims) == len(ins):
        return module
    copy = module.clone()
    main = copy.entry_function()
    block = main.regions[0].blocks[0]
    with copy.context, ir.Location.unknown():
        first = list(block.operations)[0]
        for i in reversed(dims):
            arg = block.arguments[i]
            value = ir.DenseElementsAttr.get(np.asarray(DYNAMIC_SIZE, ins[i].dtype), type=arg.type)
            c = ir.Operation.create("stablehlo.constant", results=[arg.type], attributes={"value": value},
                                    ip=ir.InsertionPoint(first))
            arg.replace_all_uses_with(c.result)
            block.erase_argument(i)
            first = c
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        inputs = [t for i, t in enumerate(ftype.inputs) if i not in dims]
        main.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, list(ftype.results)))
        if "arg_attrs" in main.attributes:
            attrs = list(ir.ArrayAttr(main.attributes["arg_attrs"]))
            main.attributes["arg_attrs"] = ir.ArrayAttr.get([a for i, a in enumerate(attrs) if i not in dims])
    return copy


def _random_inputs(module) -> list:
    rng = np.random.default_rng(0)
    args = []
    for spec in module.signature[0]:
        shape = tuple(DYNAMIC_SIZE if d is None else d for d in spec.shape)
        if spec.dtype == np.bool_:
            args.append(rng.random(shape) < 0.5)
        elif spec.dtype.kind in "iu":
            args.append(rng.integers(0, 4, shape).astype(spec.dtype))
        elif spec.dtype.kind == "c":
            args.append((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(spec.dtype))
        else:
            args.append(rng.standard_normal(shape).astype(spec.dtype))
    return args


def _run_with_inputs(module, options: Options) -> str | None:
    """A function with arguments (StableHLO's round-trip testdata, jax.export's shape-polymorphic
    modules): it runs on seeded random inputs, every dynamic dimension and every leading 0-d integer
    argument (jax's dimension variables) set to DYNAMIC_SIZE, and passes when it runs; with ``optimize``, the
    optimized function must give the same bits."""
    module = _bind_dimension_variables(module)
    args = _random_inputs(module)
    if any(not s.is_static for s in module.signature[0]) or "dynamic" in module.text:
        # (refined once, so that the raw and the optimized runs start from the same static program)
        module = module.refine([(a.shape, a.dtype) for a in args])
    want = [np.asarray(o) for o in module.compile(options.device).call_flat(args)]
    if not options.optimize:
        return None
    optimized = module.clone()
    try:
        report = optimized.optimize(finite_math=options.finite_math)
        got = [np.asarray(o) for o in optimized.compile(options.device).call_flat(args)]
    except (ValueError, TypeError, RuntimeError, MemoryError) as e:
        return f"--optimize: {_first_line(e)}"
    outputs = [Output(f"result {n}", None) for n in range(len(want))]
    return _bits_changed(outputs, want, got, report)
