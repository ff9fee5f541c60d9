"""Batching rules of ``frontend/ops/compare.py``: compare, select and clamp are elementwise, except
that select's predicate and clamp's bounds may be 0-d beside a shaped operand. Such a scalar stays
0-d while it is unbatched; batched, it holds one value per example and is broadcast over the
example's shape."""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.batching._util import bdim_at, common_dim
from hloforge.frontend.registry import def_rule


@def_rule("batch", "stablehlo.compare")
def _compare_batch(size, ins, dims, *, direction, compare_type):
    """Pattern: compare(x[b], y) -> compare(x, broadcast(y))[b], at the batched operands' dimension."""
    ins, d = common_dim(ins, dims, size)
    return [ops.compare(*ins, direction, compare_type)], [d]


def _with_scalars(size, ins, dims, shape_of):
    """(operands, d): the operands of per-example shape ``shape_of`` batched at one dimension d; the
    0-d ones beside them left 0-d when unbatched, broadcast over the batched shape when batched."""
    full = [len(shape_of) == 0 or (x.ndim - (d is not None)) > 0 for x, d in zip(ins, dims)]
    batched = {d for d, f in zip(dims, full) if f and d is not None}
    d = batched.pop() if len(batched) == 1 else 0
    out_shape = list(shape_of)
    out_shape.insert(d, size)
    outs = []
    for x, e, f in zip(ins, dims, full):
        if f:
            outs.append(bdim_at(x, e, size, d))
        elif e is None:
            outs.append(x)
        else:
            outs.append(ops.broadcast_in_dim(x, tuple(out_shape), (d,)))
    return outs, d


def _example_shape(x, d) -> tuple:
    return x.shape if d is None else x.shape[:d] + x.shape[d + 1:]


@def_rule("batch", "stablehlo.select")
def _select_batch(size, ins, dims):
    """Patterns: select(p[b], x, y) -> select(p, x, y)[b] (a 0-d p[b] broadcast over the branches);
    select(p, x[b], y) -> select(p, x, broadcast(y))[b] (an unbatched 0-d p stays 0-d)."""
    ins, d = _with_scalars(size, ins, dims, _example_shape(ins[1], dims[1]))
    return [ops.select(*ins)], [d]


@def_rule("batch", "stablehlo.clamp")
def _clamp_batch(size, ins, dims):
    """Pattern: clamp(lo, x[b], hi) -> clamp(lo, x, hi)[b] (0-d bounds stay 0-d unless batched: then
    broadcast over x), and likewise for batched bounds."""
    ins, d = _with_scalars(size, ins, dims, _example_shape(ins[1], dims[1]))
    return [ops.clamp(*ins)], [d]
