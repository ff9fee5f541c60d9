"""Batching rules of ``frontend/ops/elementwise.py``: every op of the family is elementwise over
operands of one shape, so the batched op is the same op over operands batched at one dimension
(the operands' own, when they agree: no transpose is emitted)."""
from __future__ import annotations

from hloforge.frontend.batching._util import common_dim
from hloforge.frontend.registry import OPS, def_rule


def _rule_for(name):
    builder = OPS[name].builder

    def rule(size, ins, dims, **params):
        """Pattern: f(x[b], y) -> f(x, broadcast(y))[b], at the batched operands' dimension."""
        ins, d = common_dim(ins, dims, size)
        return [builder(*ins, **params)], [d]
    rule.__name__ = f"{builder.__name__}_batch"
    return rule


FAMILY = sorted(n for n, info in OPS.items() if info.builder.__module__ == "hloforge.frontend.ops.elementwise")
for _name in FAMILY:
    def_rule("batch", _name)(_rule_for(_name))
