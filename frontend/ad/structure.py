"""Derivative rules of the structural ops (frontend/ops/structure.py): optimization_barrier,
sharding_constraint (linear: the cotangent gets the same constraint, as jax's transpose gives it),
map, composite, custom_call.

A composite whose name is in ``COMPOSITE_RULES`` uses those rules: ``hloforge.stop_gradient``'s
(here: zero (co)tangents in both modes) and hloforge.lax.linalg's factorizations (lax_linalg.py);
other composites differentiate their decomposition. A custom call is opaque: its rules raise.
"""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.ad import core
from hloforge.frontend.ad._util import add_any, deflinear, differentiable, instantiate, needs
from hloforge.frontend.lax.autodiff import STOP_GRADIENT
from hloforge.frontend.registry import def_rule
from hloforge.frontend.tracing import current_builder


def _zero_jvp(ins, outs, tangents, **attributes):
    return [None] * len(outs)


def _zero_vjp(ins, outs, cotangents, **attributes):
    return [None] * len(ins)


# composite name -> (jvp, vjp), each taking (ins, outs, (co)tangents) and the composite's attributes
# as keywords
COMPOSITE_RULES: dict = {STOP_GRADIENT: (_zero_jvp, _zero_vjp)}


def _through_barrier(values, like):
    """A barrier of their own over the non-zero (co)tangents; zeros stay symbolic."""
    present = [i for i, v in enumerate(values) if v is not None]
    out = [None] * len(like)
    if present:
        got = ops.optimization_barrier([values[i] for i in present])
        for i, v in zip(present, got):
            out[i] = v
    return out


def_rule("jvp", "stablehlo.optimization_barrier")(lambda ins, outs, ts: _through_barrier(ts, outs))
def_rule("vjp", "stablehlo.optimization_barrier")(lambda ins, outs, cts: _through_barrier(cts, ins))
deflinear("sdy.sharding_constraint", lambda ct, x, sharding, mesh: [ops.sharding_constraint(ct, sharding, mesh)])


def _inline(fn, args):
    """Call a body (a re-emitting Python callable) here: (its outputs, tape)."""
    b = current_builder("hloforge AD")
    block = b.ip.block
    before = len(list(block.operations))
    out = fn(*args)
    out = list(out) if isinstance(out, (list, tuple)) else [out]
    tape = core.tape_of_block(list(block.operations)[before:])
    return out, tape


@def_rule("jvp", "stablehlo.map")
def _map_jvp(ins, outs, ts, body, dimensions, dtype):
    """One map over (operands, tangents): the body's forward sweep on scalars."""
    if not differentiable(outs[0].dtype):
        return [None]
    n = len(ins)
    carried = [i for i in range(n) if ts[i] is not None and differentiable(ins[i].dtype)]

    def scalar(*args):
        xs, txs = args[:n], args[n:]
        res, tape = _inline(body, xs)
        tan = core.forward(tape, {xs[i].value: t for i, t in zip(carried, txs)})
        return instantiate(tan.get(res[0].value), res[0])

    return [ops.map(list(ins) + [ts[i] for i in carried], scalar, dimensions, dtype=outs[0].dtype)]


@def_rule("vjp", "stablehlo.map")
def _map_vjp(ins, outs, cts, body, dimensions, dtype):
    """One map per operand cotangent: the body's reverse sweep on scalars."""
    n = len(ins)
    result = [None] * n
    for i in range(n):
        if not (differentiable(ins[i].dtype) and needs(i)):
            continue

        def scalar(*args, i=i):
            xs, c = args[:n], args[n]
            res, tape = _inline(body, xs)
            got = core.backward(tape, {res[0].value: c}, core.active_values(tape, [xs[i]]))
            return instantiate(got.get(xs[i].value), xs[i])

        result[i] = ops.map(list(ins) + [cts[0]], scalar, dimensions, dtype=ins[i].dtype)
    return result


@def_rule("jvp", "stablehlo.composite")
def _composite_jvp(ins, outs, ts, decomposition, name=None, attributes=None, **params):
    """The rule registered for the composite's name (COMPOSITE_RULES), else differentiate the
    decomposition, inlined here."""
    known = COMPOSITE_RULES.get(name)
    if known is not None:
        return known[0](ins, outs, ts, **(attributes or {}))
    res, tape = _inline(decomposition, ins)
    tan = core.forward(tape, {x.value: t for x, t in zip(ins, ts) if t is not None})
    return [tan.get(r.value) if differentiable(o.dtype) else None for r, o in zip(res, outs)]


@def_rule("vjp", "stablehlo.composite")
def _composite_vjp(ins, outs, cts, decomposition, name=None, attributes=None, **params):
    known = COMPOSITE_RULES.get(name)
    if known is not None:
        return known[1](ins, outs, cts, **(attributes or {}))
    res, tape = _inline(decomposition, ins)
    seeds = {}
    for r, c in zip(res, cts):
        if c is not None and differentiable(r.dtype):
            seeds[r.value] = add_any(seeds.get(r.value), c)
    wanted = [x for i, x in enumerate(ins) if differentiable(x.dtype) and needs(i)]
    got = core.backward(tape, seeds, core.active_values(tape, wanted))
    return [got.get(x.value) if differentiable(x.dtype) else None for x in ins]


def _custom_call_error(kind):
    def rule(ins, outs, values, call_target_name, **params):
        raise NotImplementedError(
            f"hloforge AD: cannot differentiate stablehlo.custom_call @{call_target_name}: a custom call is "
            f"opaque, so it has no {kind} rule; wrap the function that emits it in hf.custom_vjp or hf.custom_jvp")
    return rule


def_rule("jvp", "stablehlo.custom_call")(_custom_call_error("jvp"))
def_rule("vjp", "stablehlo.custom_call")(_custom_call_error("vjp"))
