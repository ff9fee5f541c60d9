"""Inlining of ``func.call``: jax lowers jnp.fft, pads, ... into private functions and calls.

MLIR's own ``inline`` pass leaves these calls alone, so this pass clones the callee's body in
place of each call; ``symbol-dce`` then drops the private functions nobody calls any more.

It inlines top-down, into the functions that stay (the public ones, the module's entry, and the
callees of calls that stay): a callee's copy has its own calls inlined in turn, so the work is the
size of the result, not the square of a call chain's length (``hloforge.frontend.calls``).
"""
from __future__ import annotations

import warnings

from hloforge.frontend.calls import MAX_INLINED_CALLS, inline_calls, is_public
from hloforge.frontend.context import ir

PATTERN = "call_of_function"


def call_of_function(call, callee) -> bool:
    """call @f(args) -> the body of @f with args substituted

    Preconditions: @f is a func.func of the same module with one block (a definition, not a
    declaration), @f is on no call cycle (so inlining ends), the call has no ``no_inline``
    attribute, and @f's result types are the call's.
    """
    if "no_inline" in call.attributes:
        return False
    ftype = ir.FunctionType(ir.TypeAttr(callee.attributes["function_type"]).value)
    return list(ftype.results) == [r.type for r in call.results]


def run(module) -> int:
    """Inline the calls of ``module`` (an hloforge Module) in place; returns how many."""
    roots = [name for name, f in _functions(module.mlir) if is_public(f)] + [module.entry]
    done = inline_calls(module.mlir, roots, call_of_function)
    for name, copies in done.too_large:
        warnings.warn(f"inline: @{name} keeps its calls: inlining them would copy function bodies {copies} "
                      f"times (more than {MAX_INLINED_CALLS})", RuntimeWarning, stacklevel=2)
    return done.count


def _functions(module: ir.Module):
    for op in module.body.operations:
        if op.operation.name == "func.func":
            yield ir.StringAttr(op.attributes["sym_name"]).value, op.operation


# The family's one pattern, run by pipeline.py as a pass over the whole module (not through the
# greedy driver, which would inline into every private function of a chain too).
PATTERNS = {
    PATTERN: (("func.call",), call_of_function),
}
