"""Batching rules of ``frontend/ops/tuples.py``: tuple, get_tuple_element, after_all.

A batched tuple is a tuple of batched elements; its batch dimension is a tuple of its elements'
dimensions (each an int, None, or again a tuple for a nested tuple), and None when no element
is batched (``core._fits`` checks them that way). A token carries no data, so it is never
batched: one token orders the effects of every example.
"""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.registry import def_rule


@def_rule("batch", "stablehlo.tuple")
def _tuple_batch(size, ins, dims):
    """Pattern: tuple(x[b], y) -> tuple(x, y) with dimension (b, None): elements stay as they are."""
    return [ops.tuple(*ins)], [tuple(dims)]


@def_rule("batch", "stablehlo.get_tuple_element")
def _get_tuple_element_batch(size, ins, dims, *, index):
    """Pattern: get_tuple_element(t[(d0, d1, ...)], k) -> get_tuple_element(t, k)[dk]."""
    return [ops.get_tuple_element(ins[0], index)], [dims[0][index]]


@def_rule("batch", "stablehlo.after_all")
def _after_all_batch(size, ins, dims):
    """Pattern: after_all(t...) -> after_all(t...): tokens are the same for every example."""
    if any(d is not None for d in dims):
        raise RuntimeError(f"hloforge.vmap: after_all got batched tokens (dimensions {dims}); a token is "
                           "never batched")
    return [ops.after_all(*ins)], [None]
