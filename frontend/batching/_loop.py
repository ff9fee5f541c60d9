"""The fallback of rules that have no batched form for some operand (a batched init value of a
reduction whose body has no known identity, a batched rng state): the op emitted once per example
over that example's slices and the results stacked along a new leading dimension, which is
exactly the loop vmap stands for, at ``size`` ops instead of one."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.batching._util import moveaxis, zero_example


def example(x, d, i: int):
    """Example ``i`` of ``x`` (batch dimension ``d``; None: ``x`` itself)."""
    if d is None:
        return x
    x = moveaxis(x, d, 0)
    row = ops.slice(x, (i,) + (0,) * (x.ndim - 1), (i + 1,) + x.shape[1:])
    return ops.reshape(row, x.shape[1:])


def per_example(size: int, ins, dims, emit) -> tuple:
    """(outs, out_dims): ``emit(*example_operands)`` (a list of results) per example, stacked at 0.
    An empty batch gives empty results, their shapes and dtypes learnt from one emission over
    zero stand-ins (dead code the per-example copy's erase removes)."""
    if size == 0:
        shapes = [(r.shape, r.dtype) for r in emit(*[x if d is None else zero_example(x, d)
                                                     for x, d in zip(ins, dims)])]
        outs = [ops.broadcast_in_dim(ops.constant(np.zeros((), t)), (0, *s), ()) for s, t in shapes]
        return outs, [0] * len(outs)
    results = [emit(*[example(x, d, i) for x, d in zip(ins, dims)]) for i in range(size)]
    outs = [ops.concatenate([_leading(r[k]) for r in results], 0) for k in range(len(results[0]))]
    return outs, [0] * len(outs)


def _leading(x):
    return ops.reshape(x, (1,) + tuple(x.shape))
