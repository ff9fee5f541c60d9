"""Inlining of ``func.call``: jax lowers jnp.fft, pads, ... into private functions and calls.

MLIR's own ``inline`` pass leaves these calls alone, so this pattern clones the callee's
body in place of each call (``context.inline_call``); ``symbol-dce`` then drops the
private functions nobody calls any more.
"""
from __future__ import annotations

from hloforge.frontend.context import func, inline_call, ir
from hloforge.passes._ir import NO_MATCH


def _enclosing_function(op):
    parent = op.operation.parent
    while parent is not None and parent.name != "func.func":
        parent = parent.parent
    return parent


def _name(function) -> str:
    return ir.StringAttr(function.attributes["sym_name"]).value


def _called_names(function) -> set:
    """The callees of every func.call in ``function``, nested regions included."""
    names, stack = set(), [function.operation]
    while stack:
        for region in stack.pop().regions:
            for block in region.blocks:
                for inner in block.operations:
                    if inner.operation.name == "func.call":
                        names.add(ir.FlatSymbolRefAttr(inner.attributes["callee"]).value)
                    stack.append(inner.operation)
    return names


def _recursive(symbols, callee, caller_name: str) -> bool:
    """Whether ``callee`` can reach the caller or itself through calls (inlining would not end)."""
    start = _name(callee)
    seen, frontier = set(), [callee]
    while frontier:
        for name in _called_names(frontier.pop()):
            if name in (caller_name, start):
                return True
            if name in seen:
                continue
            seen.add(name)
            try:
                frontier.append(symbols[name].operation)
            except KeyError:
                continue
    return False


def call_of_function(op, rewriter):
    """call @f(args) -> the body of @f with args substituted

    Preconditions: @f is a func.func of the same module with one block (a definition, not
    a declaration), @f is not recursive and cannot reach the function containing the call
    through calls (so inlining ends), the call has no ``no_inline`` attribute, and @f's
    result types are the call's.
    """
    if "no_inline" in op.attributes:
        return NO_MATCH
    name = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
    caller = _enclosing_function(op)
    if caller is None or _name(caller) == name:
        return NO_MATCH
    module = caller.parent
    symbols = ir.SymbolTable(module.operation)
    try:
        callee = symbols[name].operation
    except KeyError:
        return NO_MATCH
    if callee.name != "func.func" or len(callee.regions[0].blocks) != 1:
        return NO_MATCH
    ftype = ir.FunctionType(ir.TypeAttr(callee.attributes["function_type"]).value)
    if list(ftype.results) != [r.type for r in op.results]:
        return NO_MATCH
    if _recursive(symbols, callee, _name(caller)):
        return NO_MATCH
    with rewriter.ip, op.location:
        results = inline_call(callee, list(op.operands))
    rewriter.replace_op(op, results)


PATTERNS = {
    "call_of_function": (("func.call",), call_of_function),
}
