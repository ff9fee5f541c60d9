"""The rules of ``hloforge.lax.stop_gradient``'s composite: zero (co)tangents in both modes.

They sit in the composite-name table the composite rule consults (rules_linalg.RULES, which also
holds the linear-algebra composites' rules).
"""
from __future__ import annotations

from hloforge.frontend.ad import rules_linalg
from hloforge.frontend.lax.autodiff import STOP_GRADIENT


def _zero_jvp(ins, outs, tangents, **attributes):
    return [None] * len(outs)


def _zero_vjp(ins, outs, cotangents, **attributes):
    return [None] * len(ins)


rules_linalg.RULES[STOP_GRADIENT] = (_zero_jvp, _zero_vjp)
