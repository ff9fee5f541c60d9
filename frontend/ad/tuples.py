"""Derivative rules of tokens and tuples (frontend/ops/tuples.py). tuple and get_tuple_element are
structural: the (co)tangent of a tuple is a tuple of its elements' (co)tangents, packed and
unpacked by the same ops (zeros, or a fresh token, where an element has none). Tokens have no
tangents: after_all's rules return symbolic zeros."""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.ad._util import carries_tangent, needs, zeros_of
from hloforge.frontend.registry import Spec, def_rule


def _pack(values, like):
    """A tuple of ``values``, zeros of ``like``'s specs where a value is a symbolic zero (None)."""
    return ops.tuple(*[zeros_of(Spec.of(x)) if v is None else v for v, x in zip(values, like)])


@def_rule("vjp", "stablehlo.tuple")
def _tuple_vjp(ins, outs, cts):
    ct = cts[0]
    return [ops.get_tuple_element(ct, i) if carries_tangent(x) and needs(i) else None for i, x in enumerate(ins)]


@def_rule("vjp", "stablehlo.get_tuple_element")
def _gte_vjp(ins, outs, cts, index):
    elements = Spec.of(ins[0]).elements
    return [ops.tuple(*[cts[0] if i == index else zeros_of(e) for i, e in enumerate(elements)])]


def_rule("jvp", "stablehlo.tuple")(lambda ins, outs, ts: [_pack(ts, ins)])
def_rule("jvp", "stablehlo.get_tuple_element")(lambda ins, outs, ts, index: [ops.get_tuple_element(ts[0], index)])
def_rule("jvp", "stablehlo.after_all")(lambda ins, outs, ts: [None])
def_rule("vjp", "stablehlo.after_all")(lambda ins, outs, cts: [None] * len(ins))
