"""The IR walkers: a tape of ops, the reverse sweep (vjp rules) and the forward sweep (jvp rules).

A tape is the list of ops of one function body in program order, each with Tensors (of the
trace being built) for its operands and results. The tape comes either from ops just traced into
the current block (``tape_of_block``: hf.grad inside a trace) or from re-emitting a module's
function through the registry (``reemit_function``: Module.vjp of a parsed module). Calls to
private functions are inlined; calls that carry an ``hloforge.custom_rule`` attribute are kept
and differentiated with their Python rule (hf.custom_vjp / hf.custom_jvp).
"""
from __future__ import annotations

import itertools
import re
import secrets

from hloforge.frontend.ad._util import add_any, carries_tangent, set_needed
from hloforge.frontend import ops
from hloforge.frontend.context import ir, shape_dtype_of
from hloforge.frontend.registry import OPS, Spec, names, rule_of
from hloforge.frontend.registry import reemit_block as registry_reemit_block
from hloforge.frontend.tracing import Tensor, current_builder

CUSTOM_ATTR = "hloforge.custom_rule"
# key -> a rule with .call(ins) (or .call_op(op, ins, symbols), given the call op and its module's
# functions), .custom_vjp(entry, cts, needed) and .custom_jvp(entry, tangents)
CUSTOM_RULES: dict = {}
PROCESS = secrets.token_hex(4)  # (so a module parsed from another process's output names no key of ours)
_keys = itertools.count()


def custom_key(kind: str, name: str) -> str:
    """A new CUSTOM_RULES key, also the symbol of the called function: ``hloforge_<kind>_<process>_<n>_<name>``."""
    return f"hloforge_{kind}_{PROCESS}_{next(_keys)}_{re.sub(r'[^0-9A-Za-z_]', '_', name)}"


class Entry:
    """One op of a tape: its registry entry (or a custom rule), operand and result Tensors."""
    __slots__ = ("op", "info", "ins", "outs", "_params", "sub", "captured")

    def __init__(self, op, info, ins, outs, sub=None, captured=None):
        self.op, self.info, self.ins, self.outs, self.sub = op, info, list(ins), list(outs), sub
        self.captured = captured  # control flow: the outside ir.Values its regions use (appended to ins)
        self._params = None

    @property
    def name(self) -> str:
        return self.op.name

    @property
    def params(self) -> dict:
        if self._params is None:
            self._params = self.info.decode(self.op) if hasattr(self.info, "decode") else {}
            if self.captured is not None:  # (the rule re-emits the regions of region_op itself)
                self._params = {**self._params, "region_op": self.op, "captured": self.captured}
        return self._params

    def _rule(self, kind):
        return rule_of(self.name, kind, "hloforge AD")

    def vjp(self, cts, needed=None) -> list:
        if hasattr(self.info, "custom_vjp"):
            return self.info.custom_vjp(self, cts, needed)
        rule = self._rule("vjp")
        set_needed(needed)
        try:
            with _located(self.op):
                out = rule(self.ins, self.outs, cts, **self.params)
        finally:
            set_needed(None)
        return _checked(self, "vjp", out, self.ins)

    def jvp(self, tangents) -> list:
        if hasattr(self.info, "custom_jvp"):
            return self.info.custom_jvp(self, tangents)
        with _located(self.op):
            out = self._rule("jvp")(self.ins, self.outs, tangents, **self.params)
        return _checked(self, "jvp", out, self.outs)


def _located(op):
    """A rule's ops take the location of the op they differentiate (when it lives in the context
    being built: a parsed module's ops are re-emitted into a new one and keep the call site)."""
    b = current_builder()
    return b.located(op.location if op.context == b.ctx else None)


def _checked(entry, kind, out, like) -> list:
    out = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(out) != len(like):
        raise RuntimeError(f"hloforge AD: the {kind} rule of {entry.name} returned {len(out)} values for "
                           f"{len(like)}")
    for i, (o, x) in enumerate(zip(out, like)):
        if o is None or (type(o) is Tensor and type(x) is Tensor and o.shape == x.shape and o.dtype == x.dtype):
            continue
        if Spec.of(o) != Spec.of(x):
            raise RuntimeError(f"hloforge AD: the {kind} rule of {entry.name} returned {o} for value {i} "
                               f"of type {x}")
    return out


def _custom_key(op):
    """The rule key of a tagged call, None for others and for keys this process never made (a
    module parsed from another process's output): those calls are differentiated through their ops."""
    if CUSTOM_ATTR in op.attributes:
        key = ir.StringAttr(op.attributes[CUSTOM_ATTR]).value
        return key if key in CUSTOM_RULES else None
    return None


def _callee(op) -> str:
    return ir.FlatSymbolRefAttr(op.attributes["callee"]).value


def symbols_of(module: ir.Module) -> dict:
    return {ir.StringAttr(f.attributes["sym_name"]).value: f for f in module.body.operations
            if f.operation.name == "func.func"}


def _info(op):
    info = OPS.get(op.name)
    if info is None:
        raise NotImplementedError(f"hloforge AD: cannot differentiate {op.name}: it has no registry entry "
                                  f"(known ops: {len(OPS)}; see hloforge.frontend.registry.OPS)")
    return info


CONTROL_FLOW = names("control_flow")  # case, if, while


def _nested(op):
    """The ops nested in ``op``, in program order (iteratively: a recursive generator costs a
    frame per level for every op it yields, and Python's recursion limit bounds the nesting)."""
    stack = [_children(op)]
    while stack:
        inner = next(stack[-1], None)
        if inner is None:
            stack.pop()
            continue
        yield inner
        if len(inner.regions):
            stack.append(_children(inner))


def _children(op):
    return (inner.operation for region in op.regions for block in region.blocks for inner in block.operations)


def captured_values(op) -> list:
    """The values defined outside ``op`` that ops in its regions use (control flow regions are
    not isolated), in first-use order."""
    defined, used = set(), {}
    for inner in [op, *_nested(op)]:
        for region in inner.regions:
            for block in region.blocks:
                defined.update(block.arguments)
        if inner is not op:
            defined.update(inner.results)
    for inner in _nested(op):
        for v in inner.operands:
            if v not in defined:
                used.setdefault(v, None)
    return list(used)


def tape_of_block(operations) -> list:
    """A tape of ops already emitted into the current block (their Tensors wrap the op results)."""
    b = current_builder("hloforge AD")
    tape = []
    known: dict = {}

    def tensor(v):
        t = known.get(v)
        if t is None:
            t = known[v] = b.tensor(v)
        return t

    for op in operations:
        op = op.operation
        if op.name == "func.return":
            continue
        ins = [tensor(v) for v in op.operands]
        outs = [tensor(r) for r in op.results]
        if op.name == "func.call" and _custom_key(op) is None:
            symbols = symbols_of(b.module)
            sub_outs, sub_tape = reemit_function(symbols[_callee(op)], ins, symbols)
            tape.append(Entry(op, None, ins, outs, sub=(sub_outs, sub_tape)))
            continue
        tape.append(entry_of(op, ins, outs, tensor))
    return tape


def entry_of(op, ins, outs, value_of) -> Entry:
    """The tape entry of ``op`` over ``ins`` with results ``outs``: a custom call's rule, control
    flow with the Tensors of its captures (``value_of`` of each old value) appended, else the
    op's registry entry."""
    key = _custom_key(op) if op.name == "func.call" else None
    if key is not None:
        return Entry(op, CUSTOM_RULES[key], ins, outs)
    if op.name in CONTROL_FLOW:
        captured = captured_values(op)
        return Entry(op, _info(op), ins + [value_of(v) for v in captured], outs, captured=captured)
    return Entry(op, _info(op), ins, outs)


def reemit_function(func_op, args, symbols) -> tuple:
    """Re-emit ``func_op``'s body over ``args`` in the current trace: (output Tensors, tape)."""
    return reemit_block(func_op.regions[0].blocks[0], args, symbols)


def reemit_block(block, args, symbols=None, outer=None) -> tuple:
    """Re-emit the ops of ``block`` over ``args`` (Tensors for its arguments) in the current trace
    (``registry.reemit_block``, ``outer`` its captures): (the terminator's operands as Tensors,
    tape). Each op goes through ``reemit_op``."""
    tape = []

    def take(op, ins, value_of):
        nonlocal symbols
        if symbols is None and op.name == "func.call":
            symbols = _symbols_around(block)
        return reemit_op(op, ins, value_of, symbols, tape)

    return registry_reemit_block(block, args, outer=outer, take=take), tape


def reemit_op(op, ins, value_of, symbols, tape) -> list:
    """Re-emit one op over ``ins`` and append its tape entries to ``tape``: a call is inlined with
    its callee's entries, or replayed by its custom rule; control flow is rebuilt with its regions
    re-emitted the same way (``reemit_control``), so nested regions see the new values; other ops
    go through their registry entry. Returns the result Tensors."""
    if op.name == "func.call" and _custom_key(op) is None:
        outs, sub = reemit_function(symbols[_callee(op)], ins, symbols)
        tape.extend(sub)
        return outs
    if op.name == "func.call":
        rule = CUSTOM_RULES[_custom_key(op)]
        call_op = getattr(rule, "call_op", None)  # (a rule that copies the callee: hf.checkpoint)
        outs = call_op(op, ins, symbols) if call_op is not None else rule.call(ins)
    elif op.name in CONTROL_FLOW:
        outs = reemit_control(op, ins, None, symbols)
    else:
        out = _info(op).reemit(ins, op)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
    tape.append(entry_of(op, ins, outs, value_of))
    return outs


def _symbols_around(block) -> dict:
    """The functions of the module holding ``block`` (callees of calls inside regions)."""
    op = block.owner.operation
    while op.name != "builtin.module":
        op = op.parent.operation
    return {ir.StringAttr(f.attributes["sym_name"]).value: f for f in op.regions[0].blocks[0].operations
            if f.operation.name == "func.func"}


def region_body(region, values, symbols=None):
    """A Python body re-emitting ``region`` (values: the mapping of outside values)."""
    def body(*args):
        return tuple(reemit_block(region.blocks[0], args, symbols, values)[0])
    return body


def reemit_control(op, ins, values, symbols=None) -> list:
    """A copy of the while/if/case ``op`` over ``ins``, its regions re-emitted with ``values``."""
    bodies = [region_body(r, values, symbols) for r in op.regions]
    types = [shape_dtype_of(r.type) for r in op.results]
    if op.name == "stablehlo.while":
        return list(ops.while_(ins, bodies[0], bodies[1]))
    if op.name == "stablehlo.if":
        return list(ops.if_(ins[0], bodies[0], bodies[1], types))
    return list(ops.case(ins[0], bodies, types))


def active_values(tape, inputs) -> set:
    """The values that depend on ``inputs`` (Tensors): only their cotangents are needed."""
    active = {x.value for x in inputs if carries_tangent(x)}
    for e in tape:
        if any(x.value in active for x in e.ins):
            active.update(o.value for o in e.outs if carries_tangent(o))
            if e.sub is not None:  # (only the call's active operands: its others are constants inside)
                active.update(active_values(e.sub[1], [x for x in e.ins if x.value in active]))
    return active


def backward(tape, seeds: dict, active=None) -> dict:
    """Cotangents (ir.Value -> Tensor) of every value the tape reads, from output ``seeds``.

    ``active``: the values that depend on the differentiated inputs (``active_values``); ops that
    read none of them are skipped, and only active operands receive cotangents.
    """
    ct = dict(seeds)
    for e in reversed(tape):
        if active is not None and not any(x.value in active for x in e.ins):
            continue
        if e.sub is not None:  # an inlined call: its results' cotangents go to the copy's outputs
            sub_outs, sub_tape = e.sub
            inner = {}
            for o, s in zip(e.outs, sub_outs):
                c = ct.pop(o.value, None)
                if c is not None:
                    inner[s.value] = add_any(inner.get(s.value), c)
            inner_ct = backward(sub_tape, inner, active) if inner else {}
            for x in e.ins:  # (the copy reads the call's operand Tensors themselves)
                c = inner_ct.pop(x.value, None)
                if c is not None:
                    ct[x.value] = add_any(ct.get(x.value), c)
            continue
        cts = [ct.pop(o.value, None) for o in e.outs]
        if all(c is None for c in cts):
            continue
        needed = [carries_tangent(x) and (active is None or x.value in active) for x in e.ins]
        for x, c, n in zip(e.ins, e.vjp(cts, needed), needed):
            if c is not None and n:
                ct[x.value] = add_any(ct.get(x.value), c)
    return ct


def forward(tape, tangents: dict) -> dict:
    """Tangents (ir.Value -> Tensor) of every value the tape computes, from input ``tangents``."""
    tan = dict(tangents)
    for e in tape:
        if e.sub is not None:
            sub_outs, sub_tape = e.sub
            inner = forward(sub_tape, tan)
            for o, s in zip(e.outs, sub_outs):
                if s.value in inner:
                    tan[o.value] = inner[s.value]
            continue
        ts = [tan.get(x.value) if carries_tangent(x) else None for x in e.ins]
        if all(t is None for t in ts):
            continue
        for o, t in zip(e.outs, e.jvp(ts)):
            if t is not None and carries_tangent(o):
                tan[o.value] = t
    return tan


__all__ = ["add_any", "Entry", "custom_key", "tape_of_block", "reemit_function", "backward", "forward", "CUSTOM_RULES", "CUSTOM_ATTR",
           "symbols_of", "reemit_block", "reemit_op", "entry_of", "reemit_control", "region_body", "captured_values", "CONTROL_FLOW"]
