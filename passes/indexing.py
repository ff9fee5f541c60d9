"""Flat index windows (``index-windows``): scatters and gathers over a flattened array at the
positions of one box become window scatters and slices.

``x.at[a:b, c:d].set(u)`` in hloforge.numpy scatters into ``reshape(x, (x.size,))`` at the flat
positions of the box (``iota`` reshaped to ``x.shape`` and sliced), and its derivative gathers
from the flattened cotangent at the same positions. XLA runs those as element-by-element loops,
and the FFT patterns (``fft-truncate``) cannot see which modes such a spectrum holds. When the
positions are known at compile time and enumerate one box of a shape ``S`` in row-major order,
the scatter is jax's window scatter of ``x.at[a:b, c:d].set(u)`` on the array of shape ``S`` (XLA
makes it a dynamic_update_slice; ``fft-truncate`` reads the windows) and the gather is a slice.

Every pattern is exact (the same values bit for bit).
"""
from __future__ import annotations

import math

import numpy as np

from hloforge.frontend.context import ir, stablehlo
from hloforge.passes._ir import (
    build, constant, element_type, evaluate, ints, params_of, producer, shape_of, tensor)

MAX_POSITIONS = 1 << 22  # largest position array evaluated at compile time
# the ops a position array is computed with (hloforge.numpy's _positions: iota, reshape, slices;
# an integer index pads the grid and gathers its row)
_EVALUATED = frozenset(f"stablehlo.{n}" for n in (
    "iota", "constant", "reshape", "slice", "broadcast_in_dim", "transpose", "reverse", "concatenate", "convert",
    "add", "subtract", "multiply", "pad", "gather", "dynamic_slice", "select", "clamp", "compare"))
RESHAPE = "stablehlo.reshape"


def _static(value, depth=0):
    """The numpy value of ``value`` when it is computed from constants and iotas by ``_EVALUATED``
    ops (at most MAX_POSITIONS elements each), else None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name not in _EVALUATED or depth > 64:
        return None
    if math.prod(shape_of(value)) > MAX_POSITIONS:
        return None
    op = owner.operation
    args = []
    for v in op.operands:
        a = _static(v, depth + 1)
        if a is None:
            return None
        args.append(a)
    try:
        out = evaluate(op.name, *args, **params_of(op))
    except Exception:  # (an op whose evaluate declines these operands)
        return None
    return None if out is None else np.asarray(out)


def _box(flat, shape):
    """(start, sizes) when ``flat`` (positions in an array of ``shape``) lists one box of it in
    row-major order, else None."""
    if flat.size == 0 or flat.dtype.kind not in "iu":
        return None
    size = math.prod(shape)
    first, last = int(flat[0]), int(flat[-1])
    if not (0 <= first <= last < size):
        return None
    start = [int(c) for c in np.unravel_index(first, shape)]
    sizes = [int(c) - s + 1 for c, s in zip(np.unravel_index(last, shape), start)]
    if min(sizes) < 1 or math.prod(sizes) != flat.size:
        return None
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    expected = np.asarray(first, np.int64)
    for n, stride in zip(sizes, strides):  # (the row-major positions of the box, built by broadcasting)
        expected = np.add.outer(expected, np.arange(n, dtype=np.int64) * stride)
    return (start, sizes) if np.array_equal(expected.ravel(), flat) else None


def _iota_box(index):
    """(S, start, sizes) when ``index`` is a unit-stride slice of a 1-d iota reshaped to S (how
    hloforge.numpy's .at[] computes the positions of basic slices), else None."""
    s = producer(index, "stablehlo.slice")
    if s is None or any(v != 1 for v in ints(s, "strides")):
        return None
    grid = s.operands[0]
    v = grid
    while (r := producer(v, RESHAPE)) is not None:
        v = r.operands[0]
    if producer(v, "stablehlo.iota") is None or len(shape_of(v)) != 1:
        return None
    start, limit = ints(s, "start_indices"), ints(s, "limit_indices")
    return tuple(shape_of(grid)), start, [b - a for a, b in zip(start, limit)]


def _find_box(flat_operand, index, users=()):
    """(S, start, sizes): the box of a shape S that the flat positions ``index`` list, or why there is none."""
    n = shape_of(flat_operand)[0]
    fast = _iota_box(index)
    if fast is not None and math.prod(fast[0]) == n and len(fast[0]) > 1:
        return fast
    positions = _static(index)
    if positions is None:
        return "the positions are not known at compile time"
    for shape in _shapes(flat_operand, index, users):
        box = _box(positions.ravel(), shape)
        if box is not None:
            return (shape, *box)
    return "the positions list no box of a shape the operand was flattened from, in row-major order"


def _shapes(flat_operand, index, users=()):
    """Candidate shapes S the flat operand was flattened from: its producer's operand, the
    reshapes of the result, the reshape of an iota in the position array's computation."""
    n = shape_of(flat_operand)[0]
    found = []
    r = producer(flat_operand, RESHAPE)
    if r is not None:
        found.append(shape_of(r.operands[0]))
    for u in users:
        if u.name == RESHAPE:
            found.append(shape_of(u.result))
    stack, seen = [index], 0
    while stack and seen < 32:
        v = stack.pop()
        seen += 1
        owner = v.owner
        if isinstance(owner, ir.Block) or owner.name not in _EVALUATED:
            continue
        if owner.name == RESHAPE and math.prod(shape_of(v)) == n:
            found.append(shape_of(v))
        stack.extend(owner.operation.operands)
    out = []
    for s in found:
        s = tuple(s)
        if len(s) > 1 and math.prod(s) == n and s not in out:
            out.append(s)
    return out


def _unflatten(value, shape, loc):
    """``value`` (1-d) as an array of ``shape``: the operand of the reshape that flattened it, or a reshape."""
    r = producer(value, RESHAPE)
    if r is not None and tuple(shape_of(r.operands[0])) == tuple(shape):
        return r.operands[0]
    return build(RESHAPE, [value], shape=shape, loc=loc)


def _scatter_dims(op):
    return stablehlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])


def plan_flat_scatter_window(op):
    """The box (S, start, sizes) of ``flat_scatter_window`` for the scatter ``op`` (pure), or why it does not fire."""
    if len(op.operands) != 3:
        return "the scatter updates several arrays"
    x, index, _ = op.operands
    if len(shape_of(x)) != 1:
        return "the operand is not flat (rank 1)"
    dims = _scatter_dims(op)
    rank_i = len(shape_of(index))
    if (list(dims.update_window_dims) or list(dims.inserted_window_dims) != [0]
            or list(dims.scattered_dims_to_operand_dims) != [0] or dims.index_vector_dim != rank_i
            or list(dims.input_batching_dims) or list(dims.scatter_indices_batching_dims)):
        return "a position is not one element (window, batching or index vector dims)"
    return _find_box(x, index, [u.owner for u in op.result.uses])


def flat_scatter_window(op, rewriter):
    """scatter(flat x, positions of a box of S, u) -> reshape(window scatter(x as S, start, u as box))

    Preconditions: one operand, update and result of rank 1 (x flattened); each position is one
    element (no update window dims, inserted dim 0, the index vector implicit); the positions are
    known at compile time (constants, iotas, reshapes, slices...) and list one box of a shape S
    (the shape x was flattened from, a reshape of the result, or the iota's) in row-major order.
    The window scatter keeps the update computation; each element still gets the same single
    update (a box lists every position once), so set, add, min, max and mul agree."""
    plan = plan_flat_scatter_window(op)
    if isinstance(plan, str):
        return plan
    x, index, update = op.operands
    shape, start, sizes = plan
    loc = op.location
    with rewriter.ip:
        base = _unflatten(x, shape, loc)
        window = build(RESHAPE, [update], shape=sizes, loc=loc)
        index_type = ir.RankedTensorType.get([len(shape)], ir.RankedTensorType(index.type).element_type)
        copy = op.clone()
        copy.operands[0] = base
        copy.operands[1] = constant(np.asarray(start), index_type, loc)
        copy.operands[2] = window
        copy.attributes["scatter_dimension_numbers"] = stablehlo.ScatterDimensionNumbers.get(
            update_window_dims=list(range(len(shape))), inserted_window_dims=[], input_batching_dims=[],
            scatter_indices_batching_dims=[], scattered_dims_to_operand_dims=list(range(len(shape))),
            index_vector_dim=0)
        copy.attributes["unique_indices"] = ir.BoolAttr.get(True)
        copy.results[0].set_type(tensor(shape, element_type(x)))
        out = build(RESHAPE, [copy.results[0]], shape=shape_of(x), loc=loc)
    rewriter.replace_op(op, [out])


def plan_flat_gather_slice(op):
    """The box (S, start, sizes) of ``flat_gather_slice`` for the gather ``op`` (pure), or why it does not fire."""
    y, index = op.operands
    if len(shape_of(y)) != 1:
        return "the operand is not flat (rank 1)"
    p = params_of(op)
    if (p["offset_dims"] or p["collapsed_slice_dims"] != (0,) or p["start_index_map"] != (0,)
            or p["index_vector_dim"] != len(shape_of(index)) or p["operand_batching_dims"]
            or p["start_indices_batching_dims"] or p["slice_sizes"] != (1,)):
        return "a position is not one element (offset, slice size, batching or index vector dims)"
    return _find_box(y, index)


def flat_gather_slice(op, rewriter):
    """gather(flat y, positions of a box of S) -> reshape(slice(y as S, box))

    Preconditions: a rank-1 operand, one element per position (slice sizes [1], collapsed dim 0,
    no offset dims, the index vector implicit, no batching dims), the positions known at compile
    time and listing one box of a shape S (the shape y was flattened from, or the iota's) in
    row-major order."""
    plan = plan_flat_gather_slice(op)
    if isinstance(plan, str):
        return plan
    y = op.operands[0]
    shape, start, sizes = plan
    loc = op.location
    with rewriter.ip:
        base = _unflatten(y, shape, loc)
        piece = build("stablehlo.slice", [base], start_indices=start,
                      limit_indices=[s + n for s, n in zip(start, sizes)],
                      strides=[1] * len(shape), loc=loc)
        out = build(RESHAPE, [piece], shape=shape_of(op.result), loc=loc)
    rewriter.replace_op(op, [out])


def plan_reshape_of_reshape(op):
    """The operand x of the inner reshape for ``reshape_of_reshape`` at ``op`` (pure), or why it does not fire."""
    inner = producer(op.operands[0], RESHAPE)
    return "the operand is not a reshape" if inner is None else inner.operands[0]


def reshape_of_reshape(op, rewriter):
    """reshape(reshape(x)) -> reshape(x), or x when that is x's own shape

    Preconditions: the operand is a reshape (the patterns above leave such pairs between a window
    scatter and its users)."""
    x = plan_reshape_of_reshape(op)
    if isinstance(x, str):
        return x
    if x.type == op.result.type:
        rewriter.replace_op(op, [x])
        return None
    with rewriter.ip:
        out = build(RESHAPE, [x], shape=shape_of(op.result), loc=op.location)
    rewriter.replace_op(op, [out])


PATTERNS = {
    "flat_scatter_window": (("stablehlo.scatter",), flat_scatter_window),
    "flat_gather_slice": (("stablehlo.gather",), flat_gather_slice),
    "reshape_of_reshape": ((RESHAPE,), reshape_of_reshape),
}
