"""Run StableHLO test files in the convention of the StableHLO repository's ``testdata/``.

A test file has a public ``@main`` without arguments that computes values from constants and asserts
them with ``stablehlo.custom_call @check.expect_eq / expect_close / expect_almost_eq (actual, expected)``
(or the older ``@check.eq`` returning ``tensor<i1>``, or ``check.*`` dialect ops). hloforge rewrites every
assertion into extra outputs of ``@main``, compiles with XLA through PJRT and compares on the host:

- ``eq``: exact (NaN equals NaN; for floats the bits of ±0 may differ);
- ``almost_eq``: ``|actual - expected| <= 1e-4 * max(1, |expected|)`` per real and imaginary part;
- ``close``: at most ``max_ulp_difference`` (attribute, default 3) units in the last place apart.
"""
from __future__ import annotations

import dataclasses
import re

import numpy as np

from hloforge.frontend.context import func, ir
from hloforge.frontend.module import Module
from hloforge.runtime.unsupported import quantized_use

_KINDS = {"eq": "eq", "expect_eq": "eq", "expect_eq_const": "eq", "almost_eq": "almost_eq",
          "expect_almost_eq": "almost_eq", "expect_almost_eq_const": "almost_eq", "expect_close": "close"}


@dataclasses.dataclass
class Check:
    kind: str              # "eq", "almost_eq" or "close"
    max_ulp: int = 3


@dataclasses.dataclass
class CheckResult:
    path: str
    ok: bool
    reason: str = ""

    def __str__(self):
        return f"PASS {self.path}" if self.ok else f"FAIL {self.path}: {self.reason}"


def _check_kind(op) -> str | None:
    if op.name == "stablehlo.custom_call":
        target = ir.StringAttr(op.attributes["call_target_name"]).value
        if target.startswith("check."):
            return target[len("check."):]
    elif op.name.startswith("check."):
        return op.name[len("check."):]
    return None


def instrument(module: Module) -> list:
    """Turn the assertions in ``@main`` into extra (actual, expected) results; returns the checks."""
    f = module.entry_function()
    block = f.regions[0].blocks[0]
    checks, extras = [], []
    with module.context, ir.Location.unknown():
        for op in list(block.operations):
            op = op.operation
            kind = _check_kind(op)
            if kind is None:
                continue
            if kind not in _KINDS:
                raise ValueError(f"unsupported assertion check.{kind}")
            values = list(op.operands)
            if len(values) == 1 and "value" in op.attributes:  # check.*_const forms carry an attribute
                const = ir.Operation.create("stablehlo.constant", results=[values[0].type],
                                            attributes={"value": op.attributes["value"]},
                                            ip=ir.InsertionPoint(op))
                values.append(const.result)
            if len(values) != 2:
                raise ValueError(f"check.{kind} needs an actual and an expected value, got {len(values)} operands")
            ulp = op.attributes["max_ulp_difference"] if "max_ulp_difference" in op.attributes else None
            checks.append(Check(_KINDS[kind], int(ir.IntegerAttr(ulp).value) if ulp is not None else 3))
            extras += values
            for r in op.results:  # old style returns tensor<i1>: it is "true" now
                true = ir.Operation.create("stablehlo.constant", results=[r.type],
                                           attributes={"value": ir.DenseElementsAttr.get_splat(
                                               r.type, ir.BoolAttr.get(True))}, ip=ir.InsertionPoint(op))
                r.replace_all_uses_with(true.result)
            op.erase()
        ret = block.operations[len(block.operations) - 1]
        outs = list(ret.operands) + extras
        func.ReturnOp(outs, ip=ir.InsertionPoint(ret))
        ret.erase()
        ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
        f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(ftype.inputs, [v.type for v in outs]))
        if "res_attrs" in f.attributes:
            del f.attributes["res_attrs"]
    module.verify()
    return checks


def _ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Units in the last place between same-dtype floats (saturating at int64's maximum)."""
    bits = 8 * a.dtype.itemsize
    sign = np.uint64(1) << np.uint64(bits - 1)
    ua = a.view(f"u{a.dtype.itemsize}").astype(np.uint64)
    ub = b.view(f"u{b.dtype.itemsize}").astype(np.uint64)
    ma, mb = (ua & ~sign).astype(np.int64), (ub & ~sign).astype(np.int64)
    same_sign = (ua & sign) == (ub & sign)
    limit = np.iinfo(np.int64).max
    apart = np.where(ma > limit - mb, limit, ma + mb)
    return np.where(same_sign, np.abs(ma - mb), apart)


def compare(check: Check, actual: np.ndarray, expected: np.ndarray) -> str | None:
    """None if the check passes, else the reason."""
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return f"type mismatch: {actual.dtype}{list(actual.shape)} vs {expected.dtype}{list(expected.shape)}"
    parts = [actual.real, actual.imag] if actual.dtype.kind == "c" else [actual]
    wants = [expected.real, expected.imag] if expected.dtype.kind == "c" else [expected]
    for a, e in zip(parts, wants):
        both_nan = np.isnan(a) & np.isnan(e) if a.dtype.kind == "f" or a.dtype.name == "bfloat16" else False
        if check.kind == "eq" or a.dtype.kind in "biu":
            bad = ~((a == e) | both_nan)
        elif check.kind == "almost_eq":
            af, ef = a.astype(np.float64), e.astype(np.float64)
            bad = ~((np.abs(af - ef) <= 1e-4 * np.maximum(1.0, np.abs(ef))) | (af == ef) | both_nan)
        else:
            bad = ~((_ulp_distance(a, e) <= check.max_ulp) | both_nan)
        if np.any(bad):
            i = tuple(int(v) for v in np.argwhere(bad)[0])
            return (f"{check.kind}: {int(np.sum(bad))} of {a.size} elements differ; at index {list(i)}: "
                    f"actual {actual[i]!r}, expected {expected[i]!r}")
    return None


_CONST_FORM = re.compile(r"^(\s*)check\.(\w+_const)\s+(%[\w#]+)\s*,\s*(dense<.*>)\s*:\s*(tensor<[^>]*>)\s*$")
_PAIR_FORM = re.compile(r"^(\s*)check\.(\w+)\s+(%[\w#]+)\s*,\s*(%[\w#]+)\s*"
                        r"(?:,\s*max_ulp_difference\s*=\s*(\d+)\s*)?:\s*(tensor<[^>]*>)(?:\s*,\s*tensor<[^>]*>)?\s*$")


def generic_check_ops(text: str) -> str:
    """Rewrite the ``check`` dialect's custom syntax into the generic form, which MLIR can parse
    without the dialect being registered."""
    out = []
    for line in text.splitlines():
        m = _CONST_FORM.match(line)
        if m:
            indent, name, value, attr, t = m.groups()
            line = f'{indent}"check.{name}"({value}) {{value = {attr} : {t}}} : ({t}) -> ()'
        else:
            m = _PAIR_FORM.match(line)
            if m:
                indent, name, a, b, ulp, t = m.groups()
                attrs = f" {{max_ulp_difference = {ulp} : i64}}" if ulp else ""
                line = f'{indent}"check.{name}"({a}, {b}){attrs} : ({t}, {t}) -> ()'
        out.append(line)
    return "\n".join(out)


def run_check_file(path, optimize: bool = False, device=None) -> CheckResult:
    """Run one test file; ``optimize`` runs hloforge's default pipeline before compiling."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return CheckResult(str(path), False, f"cannot read: {e.strerror}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return CheckResult(str(path), False, f"not a UTF-8 MLIR text file (byte {e.start} is {data[e.start]:#04x})")
    try:
        module = Module.parse(generic_check_ops(text), allow_unregistered=True)
    except ValueError as e:
        return CheckResult(str(path), False, quantized_use(text) or str(e).splitlines()[0])
    try:
        if module.signature[0]:
            if "check." in text:
                return CheckResult(str(path), False, "@main takes arguments; check files build their inputs "
                                                     "from constants")
            return _run_with_inputs(str(path), module, optimize, device)
        checks = instrument(module)
        if not checks:
            return CheckResult(str(path), False, "no check.* assertions found")
        if optimize:
            module.optimize()
        outs = module.compile(device).call_flat([])
    except (ValueError, TypeError, RuntimeError, MemoryError) as e:  # (one file's failure: report it, go on)
        lines = [line for line in str(e).splitlines() if line.strip()]
        return CheckResult(str(path), False, lines[0] if lines else type(e).__name__)
    values = [np.asarray(o) for o in outs[len(outs) - 2 * len(checks):]]
    for n, check in enumerate(checks):
        reason = compare(check, values[2 * n], values[2 * n + 1])
        if reason:
            return CheckResult(str(path), False, f"check {n}: {reason}")
    return CheckResult(str(path), True)


DYNAMIC_SIZE = 3  # what a dynamic dimension (and a 0-d integer argument, jax's dimension variable) is set to


def _bind_dimension_variables(module):
    """A copy of ``module`` whose 0-d integer arguments of @main (jax's dimension variables, which
    the dynamic shapes depend on) are constants DYNAMIC_SIZE, so that shape refinement resolves them."""
    ins = module.signature[0]
    dims = [i for i, s in enumerate(ins) if not s.shape and s.dtype.kind in "iu"]
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


def _run_with_inputs(path, module, optimize, device) -> CheckResult:
    """A module with arguments (StableHLO's round-trip testdata, jax.export's shape-polymorphic
    modules): run it on seeded random inputs, every dynamic dimension and every 0-d integer argument
    (jax's dimension variables) set to DYNAMIC_SIZE; with ``optimize``, the optimized module must
    give the same results. It passes when it runs."""
    rng = np.random.default_rng(0)
    module = _bind_dimension_variables(module)
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
    try:
        want = [np.asarray(o) for o in module.compile(device).call_flat(args)]
        if optimize:
            optimized = module.clone()
            optimized.optimize()
            got = [np.asarray(o) for o in optimized.compile(device).call_flat(args)]
            for n, (g, w) in enumerate(zip(got, want)):
                if g.shape != w.shape or not np.allclose(g, w, rtol=1e-5, atol=1e-6, equal_nan=True):
                    return CheckResult(path, False, f"result {n} changed under --optimize")
    except (ValueError, TypeError, RuntimeError, MemoryError) as e:
        lines = [line for line in str(e).splitlines() if line.strip()]
        return CheckResult(path, False, lines[0] if lines else type(e).__name__)
    return CheckResult(path, True)

