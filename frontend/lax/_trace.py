"""Tracing a body once, before the op that holds it exists.

A lax function needs to know a body's result types and the outside values it uses (its
captures) before it can emit the op: ``trace_body`` traces the Python function once into a
scratch block, then ``splice`` moves those ops into the real region (or any insertion point)
while ``bind`` traces it, mapping the scratch block's arguments and the captures to the real
block's arguments. See docs/lax.md.
"""
from __future__ import annotations

import dataclasses

from jax import tree_util

from hloforge.frontend.registry import Spec
from hloforge.frontend.tracing import Tensor, _Scope, as_tensor, current_builder


@dataclasses.dataclass(eq=False)
class Traced:
    """A body traced into ``block`` of the scratch op ``holder``."""
    holder: object
    block: object
    out_tree: object
    out_leaves: list          # the returned pytree's leaves (Tensors; kept for messages)
    outputs: list             # ir.Values the body returned
    out_specs: list           # Spec per output
    captures: list            # ir.Values from outside the body it uses, in first-use order

    def discard(self):
        if self.holder is not None:
            self.holder.erase()
            self.holder = None


def nested_ops(op):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = inner.operation
                yield inner
                yield from nested_ops(inner)


def _captures(holder) -> list:
    defined, used = set(), []
    for region in holder.regions:
        for block in region.blocks:
            defined.update(block.arguments)
    for op in nested_ops(holder):
        defined.update(op.results)
        for region in op.regions:
            for block in region.blocks:
                defined.update(block.arguments)
    seen = set()
    for op in nested_ops(holder):
        for v in op.operands:
            if v not in defined and v not in seen:
                seen.add(v)
                used.append(v)
    return used


def trace_body(fn, arg_specs, in_tree, what: str, *, hints=None, args=None) -> Traced:
    """Call ``fn`` once on the pytree of Tensors for ``arg_specs`` (unflattened with ``in_tree``) in a scratch
    block; or, with ``args`` (a tuple of outside values), call ``fn(*args)`` with no block arguments.

    ``hints``: the dtype a non-Tensor output leaf becomes, per leaf (else numpy's default).
    Raises what ``fn`` raises; nothing is left in the IR then.
    """
    b = current_builder(what)
    holder = b.emit("stablehlo.case", [], [], regions=1)  # (a holder only: never verified, always erased)
    try:
        block = holder.regions[0].blocks.append(*[b.type(s, d) for s, d in arg_specs])
        with b.at(block, _Scope(what)):
            if args is None:
                leaves = [Tensor(v, s, d, b) for v, (s, d) in zip(block.arguments, arg_specs)]
                out = fn(tree_util.tree_unflatten(in_tree, leaves))
            else:
                out = fn(*args)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            tensors = []
            for i, leaf in enumerate(out_leaves):
                hint = hints[i] if hints is not None and i < len(hints) and not isinstance(leaf, Tensor) else None
                tensors.append(as_tensor(leaf, hint, what=f"{what} output {i}"))
    except BaseException:
        holder.erase()
        raise
    return Traced(holder, block, out_tree, out_leaves, [t.value for t in tensors],
                  [Spec(t.shape, t.dtype) for t in tensors], _captures(holder))


def splice(traced: Traced, args, captures=(), capture_args=()) -> list:
    """Move ``traced``'s ops to the current insertion point, its block arguments replaced by
    ``args`` (Tensors) and the values ``captures`` by ``capture_args``; its outputs as Tensors."""
    b = current_builder("splice")
    mapping = {}
    for old, new in zip(traced.block.arguments, args):
        old.replace_all_uses_with(new.value)
        mapping[old] = new.value
    moved = list(traced.block.operations)
    for op in moved:
        op = op.operation
        op.detach_from_parent()
        b.ip.insert(op)
    if captures:
        mapping.update({c: a.value for c, a in zip(captures, capture_args)})
        for op in moved:
            op = op.operation
            for inner in [op, *nested_ops(op)]:
                for c, a in zip(captures, capture_args):
                    inner.replace_uses_of_with(c, a.value)
    return [b.tensor(mapping.get(v, v)) for v in traced.outputs]
