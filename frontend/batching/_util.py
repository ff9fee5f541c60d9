"""Small emitters the batching rules share (all build StableHLO through hloforge.ops).

A batched value is a Tensor plus its batch dimension ``d`` (an int), or an unbatched Tensor with
``d = None``. Rules receive ``(size, ins, dims, **params)`` and return ``(outs, out_dims)``.
"""
from __future__ import annotations

import numpy as np

from hloforge.frontend import ops


def batch_size(ins, dims) -> int:
    """The batch size read off the first batched operand."""
    for x, d in zip(ins, dims):
        if d is not None:
            return x.shape[d]
    raise ValueError("hloforge.vmap: a batching rule was called with no batched operand")


def zero_example(x, d: int):
    """Zeros of one example's shape and dtype (``x`` without its batch dimension ``d``): the
    stand-in of a per-example value that must exist for a batch of any size, 0 included (slicing
    example 0 of an empty batch is out of bounds)."""
    shape = x.shape[:d] + x.shape[d + 1:]
    return ops.broadcast_in_dim(ops.constant(np.zeros((), x.dtype)), shape, [])


def moveaxis(x, src: int, dst: int):
    """``x`` with dimension ``src`` moved to position ``dst`` (no op when they are equal)."""
    if src == dst:
        return x
    perm = [i for i in range(x.ndim) if i != src]
    perm.insert(dst, src)
    return ops.transpose(x, perm)


def broadcast_batch(x, size: int, dst: int = 0):
    """An unbatched ``x`` repeated ``size`` times along a new dimension at ``dst``."""
    shape = list(x.shape)
    shape.insert(dst, size)
    keep = [i for i in range(len(shape)) if i != dst]
    return ops.broadcast_in_dim(x, tuple(shape), keep)


def bdim_at(x, d, size: int, dst: int = 0):
    """``x`` (batch dimension ``d``, None for unbatched) with its batch dimension at ``dst``."""
    return broadcast_batch(x, size, dst) if d is None else moveaxis(x, d, dst)


def to_front(ins, dims, size: int) -> list:
    """Every operand with its batch dimension first (unbatched ones broadcast)."""
    return [bdim_at(x, d, size, 0) for x, d in zip(ins, dims)]


def common_dim(ins, dims, size: int):
    """(operands, d): all operands batched at one dimension ``d``, the batched operands' own
    dimension when they agree (no transposes), else 0. For elementwise ops (equal shapes)."""
    batched = {d for d in dims if d is not None}
    d = batched.pop() if len(batched) == 1 else 0
    return [bdim_at(x, e, size, d) for x, e in zip(ins, dims)], d


def unbatched_axes(axes, d) -> tuple:
    """The per-example ``axes`` as axes of the batched value (batch dimension at ``d``)."""
    return tuple(a + (a >= d) for a in axes)
