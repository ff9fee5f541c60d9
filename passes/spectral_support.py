"""Where a value is zero, for ``fft-truncate``: the positions of the transformed axes outside which a
value is zero (through zero pads, concatenates with zero blocks, windows set into a zero tensor by
scatters and dynamic_update_slices, and transposes), and the ops that build its compact nonzero part."""
from __future__ import annotations

import numpy as np

from hloforge.frontend.context import stablehlo
from hloforge.frontend.ops.slicing import scatter_body_name
from hloforge.passes._ir import (
    build, constant, constant_value, dtype_of, element_type, ints, is_zero, params_of, producer, shape_of, tensor,
    update_at)
from hloforge.passes.pad import paddings, scalar_constant
from hloforge.passes.spectral_positions import Positions


class Support:
    """A value that is zero outside ``positions[axis]`` (a ``Positions``) on the transformed axes, and the op
    tree building its nonzero part (``build(loc)``: the compact value, len(positions[axis]) long)."""

    def __init__(self, positions, builder):
        self.positions, self.build = positions, builder


ZERO = Support(None, None)


def find_support(value, axes):
    """The nonzero part of ``value`` (through zero pads and concatenates with zero blocks)."""
    s = _support_of(value, axes)
    return ZERO if s is not ZERO and any(not s.positions[a] for a in axes) else s


def _support_of(value, axes):
    if is_zero(value):
        return ZERO
    shape = shape_of(value)
    leaf = Support({a: Positions.full(shape[a]) for a in axes}, lambda loc: value)
    owner = producer(value)
    if owner is None:
        return leaf
    if owner.name == "stablehlo.pad":
        return _pad_support(owner, axes) or leaf
    if owner.name == "stablehlo.concatenate":
        return _concat_support(owner, axes) or leaf
    if owner.name in ("stablehlo.scatter", "stablehlo.dynamic_update_slice"):
        return _scatter_support(owner, axes) or leaf
    if owner.name == "stablehlo.transpose":
        return _transpose_support(owner, axes) or leaf
    return leaf


def _transpose_support(op, axes):
    """transpose(v, p): zero where v is, the axes moved by p (jax transposes a channels-last spectrum
    to put the transformed axes last); the compact value is the transpose of v's."""
    perm = ints(op, "permutation")
    inner = find_support(op.operands[0], [perm[a] for a in axes])
    if inner is ZERO:
        return ZERO
    if all(len(inner.positions[perm[a]]) == shape_of(op.result)[a] for a in axes):
        return None  # (nothing known to be zero: the leaf, without a copy of the transpose)

    def transposed(loc, inner=inner):
        return build("stablehlo.transpose", [inner.build(loc)], permutation=perm, loc=loc)
    return Support({a: inner.positions[perm[a]] for a in axes}, transposed)


def _pad_support(pad, axes):
    v = scalar_constant(pad.operands[1])
    if v is None or v != 0:
        return None
    low, high, interior = paddings(pad)
    for d, (lo, hi, it) in enumerate(zip(low, high, interior)):
        if d not in axes and (lo or hi or it):
            return None
        if lo < 0 or hi < 0:
            return None
    inner = find_support(pad.operands[0], axes)
    if inner is ZERO:
        return ZERO
    positions = {a: inner.positions[a].spread(low[a], interior[a] + 1) for a in axes}
    return None if None in positions.values() else Support(positions, inner.build)


def _concat_support(cat, axes):
    d = params_of(cat)["dimension"]
    if d not in axes:
        return None
    parts, offset, positions = [], 0, []  # (positions: the ranges along d)
    others = None
    for operand in cat.operands:
        s = find_support(operand, axes)
        if s is not ZERO:
            rest = {a: s.positions[a] for a in axes if a != d}
            if others is not None and rest != others:
                return None
            others = rest
            positions += [range(a + offset, b + offset) for a, b in s.positions[d].spans]
            parts.append(s)
        offset += shape_of(operand)[d]
    if not parts:
        return ZERO
    if len(parts) == 1:
        join = parts[0].build
    else:
        def join(loc, parts=parts):
            return build("stablehlo.concatenate", [p.build(loc) for p in parts], dimension=d, loc=loc)
    along = Positions.of(positions)
    return None if along is None else Support({**others, d: along}, join)


def _set_window(op):
    """(base, start) when scatter ``op`` sets one whole update window (updates of the operand's rank)
    at constant indices, inside the operand: jax's ``x.at[a:b, c:d].set(u)``. Else None."""
    if len(op.operands) != 3 or scatter_body_name(op) != "set":
        return None
    dims = stablehlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
    base, indices, update = op.operands
    rank = len(shape_of(base))
    if (list(dims.update_window_dims) != list(range(rank)) or list(dims.inserted_window_dims)
            or list(dims.input_batching_dims) or dims.index_vector_dim != 0 or len(shape_of(update)) != rank):
        return None
    index = constant_value(indices)
    to_operand = list(dims.scattered_dims_to_operand_dims)
    if index is None or index.ndim != 1 or len(index) != len(to_operand):
        return None
    start = [0] * rank
    for k, o in enumerate(to_operand):
        start[o] = int(index[k])
    if any(b < 0 or b + u > n for b, u, n in zip(start, shape_of(update), shape_of(base))):
        return None
    return base, start


def _set_dus(op):
    """(base, start) when ``op`` is a dynamic_update_slice at constant offsets (clamped, as the op clamps
    them, so that the update fits): jax's ``lax.dynamic_update_slice(x, u, (a, b))``. Else None."""
    base, update, *offsets = op.operands
    start = []
    for v, n, u in zip(offsets, shape_of(base), shape_of(update)):
        c = constant_value(v)
        if c is None or np.ndim(c) != 0:
            return None
        start.append(min(max(int(c), 0), n - u))
    return base, start


def window_set(value):
    """(op, base, start, update) when ``value`` is set one whole window at constant offsets by a scatter
    (_set_window) or a dynamic_update_slice (_set_dus), else None."""
    owner = producer(value)
    if owner is None or owner.name not in ("stablehlo.scatter", "stablehlo.dynamic_update_slice"):
        return None
    found = (_set_window if owner.name == "stablehlo.scatter" else _set_dus)(owner)
    if found is None:
        return None
    update = owner.operands[2] if owner.name == "stablehlo.scatter" else owner.operands[1]
    return owner, found[0], found[1], update


def _scatter_support(op, axes):
    """Windows set into a zero tensor (a chain of _set_window scatters and _set_dus dynamic_update_slices;
    later ones win where they overlap): zero outside the union of the windows' positions per axis. The
    compact value is the same chain over a compact zero tensor, each window's start moved to its place there."""
    chain, value = [], op.result
    while not is_zero(value):
        found = window_set(value)
        if found is None:
            return None
        s, base, start, update = found
        if 0 not in shape_of(update):  # (an empty window writes nothing)
            chain.append((s, start, update))
        value = base
    chain.reverse()
    shape, element = shape_of(op.result), element_type(op.result)
    positions = {a: Positions.of(range(b[a], b[a] + shape_of(u)[a]) for _, b, u in chain) for a in axes}
    if None in positions.values():
        return None
    compact = tensor([len(positions[a]) if a in axes else n for a, n in enumerate(shape)], element)

    def set_into_zeros(loc):
        out = constant(np.zeros((), dtype_of(op.result)), compact, loc)
        for s, start, update in chain:
            moved = [positions[a].rank(b) if a in axes else b for a, b in enumerate(start)]
            if s.name == "stablehlo.dynamic_update_slice":
                out = update_at(out, update, moved, loc)
                continue
            to_operand = stablehlo.ScatterDimensionNumbers(s.attributes["scatter_dimension_numbers"])
            index = [moved[o] for o in to_operand.scattered_dims_to_operand_dims]
            copy = s.operation.clone()
            copy.operands[0] = out
            copy.operands[1] = constant(np.asarray(index), s.operands[1].type, loc)
            copy.results[0].set_type(compact)
            out = copy.results[0]
        return out
    return Support(positions, set_into_zeros)
