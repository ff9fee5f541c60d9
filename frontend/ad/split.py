"""Split a module in two at its inputs: the ops that need only its first inputs, and the others.

``split_module(m, n_known, n_first)`` of ``@main(known..., unknown...) -> (first..., rest...)``, whose
``first`` results need only the known inputs, makes

- ``forward``: ``(known...) -> (first..., residuals...)``, every op that needs no unknown input;
- ``backward``: ``(known..., residuals..., unknown...) -> (rest...)``, the other ops,

where the residuals are the values the forward computes and the backward reads (in its ops, their
regions, or its results); the backward reads the known inputs themselves. This is partial evaluation,
as jax's linearize splits a jvp: applied to Module.vjp's ``(primals..., cotangents...) -> (outputs...,
input cotangents...)``, the forward computes the outputs and saves what the cotangents need, and the
backward no longer recomputes the forward (issue 51). Constants (ops that read nothing) are copied
into both.
"""
from __future__ import annotations

from hloforge.frontend.ad.core import captured_values
from hloforge.frontend.context import func, has_uses, ir
from hloforge.frontend.module import Module

CONSTANT, KNOWN, UNKNOWN = 0, 1, 2


def split_module(module: Module, n_known: int, n_first: int) -> tuple:
    """(forward Module, backward Module, number of residuals); see the module docstring. ValueError
    when one of the first ``n_first`` results needs an unknown input."""
    forward, n_residuals = _forward_part(module, n_known, n_first)
    backward = _backward_part(module, n_known, n_first)
    return forward, backward, n_residuals


class _Parts:
    """The entry block's ops classified: each value's and op's status, the return, the residuals."""

    def __init__(self, block, n_known: int, n_first: int):
        self.status = {a: KNOWN if i < n_known else UNKNOWN for i, a in enumerate(block.arguments)}
        self.ops = []
        for op in block.operations:
            op = op.operation
            if op.name == "func.return":
                self.ret = op
                continue
            status = max((self.status[v] for v in _reads(op)), default=_no_inputs_status(op))
            self.ops.append((op, status))
            self.status.update((r, status) for r in op.results)
        results = list(self.ret.operands)
        if any(self.status[v] == UNKNOWN for v in results[:n_first]):
            raise ValueError("split_module: a forward result needs an input of the backward part")
        residuals = {}
        for op, status in self.ops:
            if status == UNKNOWN:
                residuals.update((v, None) for v in _reads(op) if self._computed(v))
        residuals.update((v, None) for v in results[n_first:] if self._computed(v))
        self.residuals = list(residuals)

    def _computed(self, value) -> bool:
        return self.status[value] == KNOWN and not isinstance(value, ir.BlockArgument)

    def erase(self, status) -> None:
        for op, s in reversed(self.ops):
            if s == status:
                op.erase()

    def erase_unused_constants(self) -> None:
        for op, s in reversed(self.ops):
            if s == CONSTANT and not any(has_uses(r) for r in op.results):
                op.erase()


def _reads(op) -> list:
    """The values ``op`` reads: its operands and what its regions capture."""
    return list(op.operands) + (captured_values(op) if len(op.regions) else [])


def _no_inputs_status(op) -> int:
    """Constants go to both parts; other ops that read nothing (a region op, a call, a custom call:
    maybe costly or effectful) run once, in the forward."""
    if len(op.regions) or op.name in ("func.call", "stablehlo.custom_call"):
        return KNOWN
    return CONSTANT


def _entry_block(module: Module):
    f = module.entry_function()
    return f, f.regions[0].blocks[0]


def _replace_return(parts, results) -> None:
    with ir.InsertionPoint(parts.ret), parts.ret.location:
        func.ReturnOp(results)
    parts.ret.erase()


def _set_signature(f, block, results) -> None:
    for attribute in ("arg_attrs", "res_attrs"):
        if attribute in f.attributes:
            del f.attributes[attribute]
    types = ir.FunctionType.get([a.type for a in block.arguments], [v.type for v in results])
    f.attributes["function_type"] = ir.TypeAttr.get(types)


def _forward_part(module: Module, n_known: int, n_first: int) -> tuple:
    copy = module.clone()
    with copy.context:
        f, block = _entry_block(copy)
        parts = _Parts(block, n_known, n_first)
        results = list(parts.ret.operands)[:n_first] + parts.residuals
        _replace_return(parts, results)
        parts.erase(UNKNOWN)
        parts.erase_unused_constants()
        for i in reversed(range(n_known, len(block.arguments))):
            block.erase_argument(i)
        _set_signature(f, block, results)
    copy.out_tree = None
    return copy, len(parts.residuals)


def _backward_part(module: Module, n_known: int, n_first: int) -> Module:
    copy = module.clone()
    with copy.context:
        f, block = _entry_block(copy)
        parts = _Parts(block, n_known, n_first)
        location = parts.ret.location
        for value in parts.residuals:
            value.replace_all_uses_with(block.add_argument(value.type, location))
        results = list(parts.ret.operands)[n_first:]
        _replace_return(parts, results)
        parts.erase(KNOWN)
        parts.erase_unused_constants()
        n_unknown = len(block.arguments) - n_known - len(parts.residuals)
        for _ in range(n_unknown):  # (the unknown inputs after the residuals)
            old = block.arguments[n_known]
            old.replace_all_uses_with(block.add_argument(old.type, location))
            block.erase_argument(n_known)
        _set_signature(f, block, results)
    copy.out_tree = None
    return copy
