"""The IR walkers: a tape of ops, the reverse sweep (vjp rules) and the forward sweep (jvp rules).

A tape is the list of ops of one function body in program order, each with Tensors (of the
trace being built) for its operands and results. The tape comes either from ops just traced into
the current block (``tape_of_block``: hf.grad inside a trace) or from re-emitting a module's
function through the registry (``reemit_function``: Module.vjp of a parsed module). Calls to
private functions are inlined; calls that carry an ``hloforge.custom_rule`` attribute are kept
and differentiated with their Python rule (hf.custom_vjp / hf.custom_jvp).
"""
from __future__ import annotations

from hloforge.frontend.ad._util import add_any, differentiable, set_needed
from hloforge.frontend.context import ir
from hloforge.frontend.registry import OPS
from hloforge.frontend.tracing import current_builder

CUSTOM_ATTR = "hloforge.custom_rule"
CUSTOM_RULES: dict = {}   # key -> a custom rule object with .vjp(entry, cts) and .jvp(entry, tangents)


class Entry:
    """One op of a tape: its registry entry (or a custom rule), operand and result Tensors."""
    __slots__ = ("op", "info", "ins", "outs", "_params", "sub")

    def __init__(self, op, info, ins, outs, sub=None):
        self.op, self.info, self.ins, self.outs, self.sub = op, info, list(ins), list(outs), sub
        self._params = None

    @property
    def name(self) -> str:
        return self.op.name

    @property
    def params(self) -> dict:
        if self._params is None:
            self._params = self.info.decode(self.op) if hasattr(self.info, "decode") else {}
        return self._params

    def _rule(self, kind):
        rule = getattr(self.info, kind, None)
        if rule is None:
            raise NotImplementedError(f"hloforge AD: no {kind} rule for {self.name}; add OPS[{self.name!r}].{kind}")
        return rule

    def vjp(self, cts, needed=None) -> list:
        if hasattr(self.info, "custom_vjp"):
            return self.info.custom_vjp(self, cts)
        rule = self._rule("vjp")
        set_needed(needed)
        try:
            out = rule(self.ins, self.outs, cts, **self.params)
        finally:
            set_needed(None)
        return _checked(self, "vjp", out, self.ins)

    def jvp(self, tangents) -> list:
        if hasattr(self.info, "custom_jvp"):
            return self.info.custom_jvp(self, tangents)
        out = self._rule("jvp")(self.ins, self.outs, tangents, **self.params)
        return _checked(self, "jvp", out, self.outs)


def _checked(entry, kind, out, like) -> list:
    out = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(out) != len(like):
        raise RuntimeError(f"hloforge AD: the {kind} rule of {entry.name} returned {len(out)} values for "
                           f"{len(like)}")
    for i, (o, x) in enumerate(zip(out, like)):
        if o is not None and (o.shape != x.shape or o.dtype != x.dtype):
            raise RuntimeError(f"hloforge AD: the {kind} rule of {entry.name} returned {o} for value {i} "
                               f"of type {x}")
    return out


def _custom_key(op):
    if CUSTOM_ATTR in op.attributes:
        return ir.StringAttr(op.attributes[CUSTOM_ATTR]).value
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
        if op.name == "func.call":
            key = _custom_key(op)
            if key is not None:
                tape.append(Entry(op, CUSTOM_RULES[key], ins, outs))
                continue
            symbols = symbols_of(b.module)
            sub_outs, sub_tape = reemit_function(symbols[_callee(op)], ins, symbols)
            tape.append(Entry(op, None, ins, outs, sub=(sub_outs, sub_tape)))
            continue
        tape.append(Entry(op, _info(op), ins, outs))
    return tape


def reemit_function(func_op, args, symbols) -> tuple:
    """Re-emit ``func_op``'s body over ``args`` in the current trace: (output Tensors, tape)."""
    block = func_op.regions[0].blocks[0]
    values = dict(zip(block.arguments, args))
    tape = []
    for op in block.operations:
        op = op.operation
        ins = [values[v] for v in op.operands]
        if op.name in ("func.return", "stablehlo.return"):
            return ins, tape
        if op.name == "func.call":
            key = _custom_key(op)
            if key is not None:
                rule = CUSTOM_RULES[key]
                outs = rule.call(ins)
                tape.append(Entry(op, rule, ins, outs))
            else:
                outs, sub = reemit_function(symbols[_callee(op)], ins, symbols)
                tape.extend(sub)
        else:
            info = _info(op)
            out = info.reemit(ins, op)
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            tape.append(Entry(op, info, ins, outs))
        for r, t in zip(op.results, outs):
            values[r] = t
    raise ValueError("hloforge AD: function body has no return")


def active_values(tape, inputs) -> set:
    """The values that depend on ``inputs`` (Tensors): only their cotangents are needed."""
    active = {x.value for x in inputs if differentiable(x.dtype)}
    for e in tape:
        if any(x.value in active for x in e.ins):
            active.update(o.value for o in e.outs if differentiable(o.dtype))
            if e.sub is not None:
                active.update(active_values(e.sub[1], e.ins))
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
        needed = [differentiable(x.dtype) and (active is None or x.value in active) for x in e.ins]
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
        ts = [tan.get(x.value) if differentiable(x.dtype) else None for x in e.ins]
        if all(t is None for t in ts):
            continue
        for o, t in zip(e.outs, e.jvp(ts)):
            if t is not None and differentiable(o.dtype):
                tan[o.value] = t
    return tan


__all__ = ["add_any", "Entry", "tape_of_block", "reemit_function", "backward", "forward", "CUSTOM_RULES", "CUSTOM_ATTR",
           "symbols_of"]
