"""jax.export's shape assertions, checked on the host once shape refinement has made them constant.

A module exported with symbolic dimensions (``jax.export.symbolic_shape``) guards its inputs with
``stablehlo.custom_call @shape_assertion(%ok, %dim0, ...) {error_message = "... {0} ..."}``. No XLA
backend implements that target: jax checks them while refining the module against concrete shapes.
hloforge does the same after StableHLO's shape refinement, where ``%ok`` and the dimension values
have folded to constants, and then removes the calls.
"""
from __future__ import annotations

import numpy as np

from hloforge.frontend.attributes import constant_array
from hloforge.frontend.context import ir

TARGET = "shape_assertion"


def _constant(value):
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "stablehlo.constant":
        return None
    found = constant_array(owner, limit=1)
    return None if found is None else np.asarray(found[0])


def _assertions(module: ir.Module):
    found = []

    def visit(op):
        if op.name == "stablehlo.custom_call" and "call_target_name" in op.attributes \
                and ir.StringAttr(op.attributes["call_target_name"]).value == TARGET:
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def _message(op) -> str:
    text = ir.StringAttr(op.attributes["error_message"]).value if "error_message" in op.attributes \
        else "shape assertion failed"
    values = [_constant(v) for v in list(op.operands)[1:]]
    if all(v is not None for v in values):
        try:
            return text.format(*(int(v) for v in values))
        except (IndexError, KeyError, ValueError):
            pass
    return text


def has_shape_assertions(text: str) -> bool:
    """Whether module text may hold jax.export shape assertions (a cheap test before parsing)."""
    return f"@{TARGET}" in text


def check_and_remove(module: ir.Module, entry: str) -> None:
    """Check every ``shape_assertion`` of a refined module and erase it.

    Raises ValueError with jax's message (its ``{0}``-style placeholders filled with the dimension
    values) for a false assertion, and for one whose condition did not fold to a constant.
    """
    ops = _assertions(module)
    for op in ops:
        ok = _constant(op.operands[0]) if len(op.operands) else None
        if ok is None:
            raise ValueError(f"{entry}: a jax.export shape assertion does not depend on the argument shapes "
                             f"alone (its condition is not constant after shape refinement): "
                             f"{_message(op)}")
        if not bool(np.all(ok)):
            raise ValueError(f"{entry}: the argument shapes fail a jax.export shape assertion: {_message(op)}")
    for op in ops:
        op.erase()
