"""The pattern runner: a family's table as one MLIR pattern set (one Python callback per root op), and
MLIR's greedy driver over it. The pipeline (``pipeline.py``) and the compile path's guards
(``guards.py``) both run patterns through it."""
from __future__ import annotations

import collections

from hloforge.frontend.context import ir, rewrite
from hloforge.passes._ir import Unsupported, begin_visit


def apply(mlir_module, frozen, max_iterations: int | None = None) -> None:
    """MLIR's greedy driver with ``frozen`` (a ``pattern_set``) over ``mlir_module``, regions not simplified."""
    config = rewrite.GreedyRewriteConfig()
    if max_iterations is not None:
        config.max_iterations = max_iterations
    config.region_simplification_level = rewrite.GreedySimplifyRegionLevel.DISABLED
    rewrite.apply_patterns_and_fold_greedily(mlir_module, frozen, config)


def pattern_set(entries: dict, fired: collections.Counter, declines=None):
    """One MLIR pattern per root op name, trying that root's patterns in table order (as MLIR
    would try patterns of equal benefit) in one Python callback; ``fired`` counts rewrites per
    pattern, and ``declines`` (an ``explain.Declines``, debug runs only) notes why each declined."""
    by_root: dict = {}
    for name, (roots, fn) in entries.items():
        for root in roots if isinstance(roots, tuple) else (roots,):
            # (an op class and its name are one root: the driver would call each separately)
            key = getattr(root, "OPERATION_NAME", root)
            by_root.setdefault(key, []).append((name, fn))
    patterns = rewrite.RewritePatternSet()
    for root, named in by_root.items():
        patterns.add(root, _dispatch(tuple(named), fired, declines))
    return patterns.freeze()


def _dispatch(named: tuple, fired: collections.Counter, declines=None):
    # (name, callback, the producers it needs or None), read once: this runs per op visit
    entries = tuple((name, fn, getattr(fn, "operand_producers", None)) for name, fn in named)
    guarded = any(needs is not None for _, _, needs in entries)

    def pattern(op, rewriter):
        begin_visit()
        producers = _producers(op) if guarded else None
        for name, fn, needs in entries:
            if needs is not None and needs.isdisjoint(producers):
                if declines is not None:
                    declines.skip(name, needs)
                continue
            try:
                declined = fn(op, rewriter) if declines is None else declines.call(name, fn, op, rewriter)
            except Unsupported as e:
                if declines is not None:
                    declines.unsupported(name, e)
                continue
            if declined:
                continue
            fired[name] += 1
            if declines is not None:  # (the op is gone: the patterns after this one were not tried on it)
                for later, _, _ in entries[entries.index((name, fn, needs)) + 1:]:
                    declines.preempt(later, name)
            return False
        return True
    pattern.__name__ = pattern.__qualname__ = "+".join(name for name, _ in named)
    return pattern


def _producers(op) -> set:
    """The names of the ops defining ``op``'s operands (block arguments have none)."""
    out = set()
    for v in op.operands:
        owner = v.owner
        if not isinstance(owner, ir.Block):
            out.add(owner.name)
    return out
