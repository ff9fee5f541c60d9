"""Regions hloforge treats as isolated keep their own constants after MLIR's passes.

hloforge traces and re-emits the regions of every op but while/if/case (registry trait ``control_flow``) as
isolated bodies: a sort comparator, a reduce or scatter body sees only its block arguments. StableHLO does not
mark those ops IsolatedFromAbove, so MLIR's canonicalize and cse may hoist a body's constants out of it (one
``0.0`` for the whole function), and the module is still valid. AD and vmap re-emit such a body and would meet
a value from outside it ("a leaked tracer"). ``sink_constants`` copies each such constant back into the
region that uses it; the module computes the same bits.
"""
from __future__ import annotations

from hloforge.frontend.context import ir
from hloforge.frontend.registry import names

_CONSTANT = "stablehlo.constant"


def _isolated(op) -> bool:
    return len(op.regions) > 0 and op.name.startswith("stablehlo.") and op.name not in names("control_flow")


def _nested(region):
    """Every op inside ``region``, nested regions included, outer ops first."""
    stack = [op.operation for block in region.blocks for op in block.operations]
    stack.reverse()
    while stack:
        op = stack.pop()
        yield op
        inner = [o.operation for r in op.regions for b in r.blocks for o in b.operations]
        stack.extend(reversed(inner))


def _sink_into(region) -> int:
    """Copies, at the start of ``region``'s entry block, the constants from outside it that ops inside use."""
    inside = set()
    copies = {}
    block = region.blocks[0]
    for op in _nested(region):
        inside.add(op)
        for i, value in enumerate(op.operands):
            owner = value.owner
            if isinstance(owner, ir.Block):
                continue
            owner = owner.operation
            if owner.name != _CONSTANT or owner in inside:
                continue
            copy = copies.get(owner)
            if copy is None:
                copy = copies[owner] = owner.clone(ip=ir.InsertionPoint.at_block_begin(block))
                inside.add(copy)
            op.operands[i] = copy.result
    for original in copies:
        if not list(original.result.uses):  # (every use was inside: the copy replaces it)
            original.erase()
    return len(copies)


def sink_constants(module) -> int:
    """Copy into every isolated region of ``module`` (an ``hloforge.Module``) the constants it uses from
    outside; returns how many copies were made. Outer regions first, so a constant reaches a nested one."""
    count = 0
    for op in list(module.walk()):
        if _isolated(op):
            for region in op.regions:
                if len(region.blocks):
                    count += _sink_into(region)
    return count
