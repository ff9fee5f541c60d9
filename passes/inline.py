"""Inlining of ``func.call``: jax lowers jnp.fft, pads, ... into private functions and calls.

MLIR's own ``inline`` pass leaves these calls alone, so this pass clones the callee's body in
place of each call; ``symbol-dce`` then drops the private functions nobody calls any more.

It inlines top-down, into the functions that stay (the public ones, the module's entry, and the
callees of calls that stay): a callee's copy has its own calls inlined in turn, so the work is the
size of the result, not the square of a call chain's length (``hloforge.frontend.calls``).

XLA computes an op whose operand is a constant that reaches it through a call differently from
the same op of a literal constant: it folds the literal with the StableHLO folders it runs on import,
and the constant behind a call only once it has inlined the call, with its HLO evaluator; their
library functions (tanh, sin, erf, ...) round differently. So every value that crosses an inlined
call and that XLA could see as a constant (it is computed from constants alone) goes through a call
of its own, to a private identity function (``func.call`` marked ``hloforge.call_boundary``, which
this pass leaves alone): XLA sees that constant as it saw it before. Constant folding drops such a
call where XLA computes the same bits either way (``fold.call_boundary_of_constant``).
"""
from __future__ import annotations

import warnings

from hloforge.frontend.calls import MAX_INLINED_CALLS, inline_calls, is_public
from hloforge.frontend.context import func, ir
from hloforge.passes.fold import BOUNDARY, BOUNDARY_FUNCTION, OPAQUE, drop_boundaries

PATTERN = "call_of_function"


def call_of_function(call, callee) -> bool:
    """call @f(args) -> the body of @f with args substituted

    Preconditions: @f is a func.func of the same module with one block (a definition, not a
    declaration), @f is on no call cycle (so inlining ends), the call has no ``no_inline`` or
    ``hloforge.call_boundary`` attribute, and @f's result types are the call's. A value that
    crosses the call and is computed from constants alone goes through a call boundary.
    """
    if "no_inline" in call.attributes or BOUNDARY in call.attributes:
        return False
    ftype = ir.FunctionType(ir.TypeAttr(callee.attributes["function_type"]).value)
    return list(ftype.results) == [r.type for r in call.results]


class CallBoundaries:
    """``guard`` for inline_calls: each value that XLA could see as a constant goes through a call
    of a new private identity function of ``module`` (an ir.Module) instead; ``calls``: those
    calls, with their callees' names."""

    def __init__(self, module: ir.Module):
        self.module, self.symbols = module, ir.SymbolTable(module.operation)
        self.calls: list = []
        # op -> whether its results are computed from constants alone. (Inlining changes no op's
        # answer: a call's results stay opaque, as a call boundary or a computed value; and it
        # erases only calls, which are never keys, so no key's address is reused.)
        self.known: dict = {}

    def __call__(self, call, values) -> list:
        return [self.wrap(v) if self.computed_from_constants(v) else v for v in values]

    def computed_from_constants(self, value) -> bool:
        """Whether XLA could see ``value`` as a constant: no block argument and no op it runs
        rather than folds lies below it (ops with regions count by their operands)."""
        root = _defining_op(value)
        if root is None or root.name in OPAQUE:
            return False
        known, stack = self.known, [root]
        while stack:
            op = stack[-1]
            if op in known:
                stack.pop()
                continue
            answer, below = True, []
            for v in op.operands:
                inner = _defining_op(v)
                if inner is None or inner.name in OPAQUE or known.get(inner) is False:
                    answer = False
                    break
                if inner not in known:
                    below.append(inner)
            if answer and below:
                stack.extend(below)  # (decided once they are)
                continue
            known[op] = answer
            stack.pop()
        return known[root]

    def wrap(self, value) -> ir.Value:
        """``func.call @identity(value)`` at the current insertion point."""
        t = value.type
        with ir.InsertionPoint(self.module.body):
            f = func.FuncOp(BOUNDARY_FUNCTION, ([t], [t]), visibility="private")
            with ir.InsertionPoint(f.add_entry_block()):
                func.ReturnOp([f.arguments[0]])
        name = ir.StringAttr(self.symbols.insert(f)).value
        call = ir.Operation.create("func.call", results=[t], operands=[value],
                                   attributes={"callee": ir.FlatSymbolRefAttr.get(name), BOUNDARY: ir.UnitAttr.get()})
        self.calls.append((call, name))
        return call.result


def _defining_op(value):
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def run(module) -> int:
    """Inline the calls of ``module`` (an hloforge Module) in place; returns how many."""
    roots = [name for name, f in _functions(module.mlir) if is_public(f)] + [module.entry]
    boundaries = CallBoundaries(module.mlir)
    done = inline_calls(module.mlir, roots, call_of_function, boundaries)
    drop_boundaries(boundaries.calls)
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
