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
from typing import NamedTuple

import numpy as np

from hloforge.frontend.context import ir, stablehlo
from hloforge.passes._ir import (
    build, constant, element_type, evaluate, ints, params_of, producer, shape_of, slice_params, tensor)
from hloforge.passes.fold import BOUNDARY
from hloforge.passes.spectral_support import window_set

MAX_POSITIONS = 1 << 22  # largest position array evaluated at compile time
# the ops a position array is computed with (hloforge.numpy's _positions: iota, reshape, slices;
# an integer index pads the grid and gathers its row)
_EVALUATED = frozenset(f"stablehlo.{n}" for n in (
    "iota", "constant", "reshape", "slice", "broadcast_in_dim", "transpose", "reverse", "concatenate", "convert",
    "add", "subtract", "multiply", "pad", "gather", "dynamic_slice", "select", "clamp", "compare",
    "and", "or", "not", "reduce"))
RESHAPE = "stablehlo.reshape"


def _static(value, depth=0):
    """The numpy value of ``value`` when it is computed from constants and iotas by ``_EVALUATED``
    ops (at most MAX_POSITIONS elements each), else None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or depth > 64:
        return None
    if owner.name == "func.call" and BOUNDARY in owner.attributes and len(owner.operands) == 1:
        return _static(owner.operands[0], depth + 1)  # (inline's identity call around an iota)
    if owner.name not in _EVALUATED:
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
    if isinstance(out, (list, tuple)):  # (a reduce's results)
        out = out[0] if len(out) == 1 else None
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


MAX_RUNS = 16  # the most slices a gather of known positions becomes


def _runs(positions):
    """``positions`` (a 1-d int array) as (start, stop, step) runs of evenly spaced positions, in order."""
    runs, i = [], 0
    while i < len(positions):
        j = i + 1
        step = int(positions[j] - positions[i]) if j < len(positions) else 1
        if step < 1:
            step, j = 1, i + 1
        else:
            while j + 1 < len(positions) and positions[j + 1] - positions[j] == step:
                j += 1
            j += 1
        if j - i == 2 and j < len(positions) and positions[j] - positions[j - 1] == 1 and step != 1:
            j -= 1  # (a pair that starts a unit run belongs to that run)
        runs.append((int(positions[i]), int(positions[j - 1]) + 1, step))
        i = j
    return runs


class _GatherSlices(NamedTuple):
    dim: int | None  # the operand dim the positions index (None: one window)
    slices: list     # (start, limit, strides) per slice of the operand, concatenated along dim in order


def plan_gather_of_known_positions(op):
    """The slices of ``gather_of_known_positions`` for the gather ``op`` (pure), or why it does not fire."""
    x, index = op.operands
    p = params_of(op)
    shape, out = list(shape_of(x)), list(shape_of(op.result))
    rank, sizes = len(shape), list(p["slice_sizes"])
    if p["operand_batching_dims"] or p["start_indices_batching_dims"]:
        return "a batched gather"
    ivd, index_shape = p["index_vector_dim"], list(shape_of(index))
    batch = [n for i, n in enumerate(index_shape) if i != ivd]
    if len(batch) > 1:
        return "more than one dim of index vectors"
    positions = _static(index)
    if positions is None:
        return "the positions are not known at compile time"
    vectors = np.moveaxis(positions, ivd, -1).reshape(-1, len(p["start_index_map"])) if ivd < len(index_shape) \
        else positions.reshape(-1, 1)
    collapsed = list(p["collapsed_slice_dims"])
    if not batch:  # one window: a slice (the start clamped, as gather clamps it)
        start = [0] * rank
        for k, d in enumerate(p["start_index_map"]):
            start[d] = min(max(int(vectors[0][k]), 0), shape[d] - sizes[d])
        if list(p["offset_dims"]) != list(range(len(out))):
            return "the window's dims are not the result's, in order"
        return _GatherSlices(None, [(start, [a + n for a, n in zip(start, sizes)], [1] * rank)])
    # one dim d of the operand indexed by a list of positions; every other dim read whole
    if len(p["start_index_map"]) != 1 or collapsed != list(p["start_index_map"]):
        return "the index vectors index more than one dim, or the indexed dim is kept"
    d = collapsed[0]
    if any(n != (1 if i == d else shape[i]) for i, n in enumerate(sizes)):
        return "a dim besides the indexed one is not read whole"
    if list(p["offset_dims"]) != [i for i in range(rank) if i != d]:
        return "the positions' dim of the result is not the indexed dim's place"
    where = np.clip(vectors[:, 0].astype(np.int64), 0, shape[d] - 1)
    runs = _runs(where)
    if len(runs) > MAX_RUNS:
        return f"the positions make more than {MAX_RUNS} evenly spaced runs"
    slices = []
    for a, b, step in runs:
        start, limit, strides = [0] * rank, list(shape), [1] * rank
        start[d], limit[d], strides[d] = a, b, step
        slices.append((start, limit, strides))
    return _GatherSlices(d, slices)


def gather_of_known_positions(op, rewriter):
    """gather(x, positions known at compile time) -> concatenate([x[run] for run in runs], d), or one window x[s]

    // Pattern: gather(x: 2x4x33, [[0], [1], [2], [3]], collapsed [2], slice [2, 4, 1]) -> x[:, :, 0:4]
    Preconditions: no batching dims; the positions are known at compile time (constants, iotas and
    the ops on them, through inline's call boundaries, as ``_static`` evaluates them). Either there is
    one index vector (the result, in the window's dims, is a slice of x at the clamped start,
    reshaped where dims collapse), or one dim of index vectors indexes one dim d of x, which it
    collapses and whose place in the result it takes, every other dim read whole: the positions,
    clamped as gather clamps them, in runs of evenly spaced positions (at most 16 runs), become
    strided slices of x along d, concatenated (jnp.take, ``x[..., idx]`` with an index array, and
    jax's transpose of a window scatter). Exact: the same elements in the same places.
    """
    plan = plan_gather_of_known_positions(op)
    if isinstance(plan, str):
        return plan
    x, loc = op.operands[0], op.location
    with rewriter.ip:
        parts = [build("stablehlo.slice", [x], start_indices=a, limit_indices=b, strides=s, loc=loc)
                 for a, b, s in plan.slices]
        out = parts[0] if len(parts) == 1 else build("stablehlo.concatenate", parts, dimension=plan.dim, loc=loc)
        if shape_of(out) != shape_of(op.result):
            out = build(RESHAPE, [out], shape=shape_of(op.result), loc=loc)
    rewriter.replace_op(op, [out])


class _SliceOfSet(NamedTuple):
    source: object  # the set's operand or its update, which the slice reads instead
    start: list
    limit: list
    strides: list


def plan_slice_of_window_set(op):
    """The slice of ``slice_of_window_set`` for the slice ``op`` (pure), or why it does not fire."""
    found = window_set(op.operands[0])
    if found is None:
        return "the operand is not one window set at constant offsets (a scatter or dynamic_update_slice)"
    _, base, at, update = found
    start, limit, strides = slice_params(op)
    size = shape_of(update)
    last = [a + (n - 1) * s for a, n, s in zip(start, shape_of(op.result), strides)]  # (the last index read)
    if 0 in shape_of(op.result):
        return "an empty slice"
    if any(e < w or a >= w + n for a, e, w, n in zip(start, last, at, size)):
        return _SliceOfSet(base, start, limit, strides)  # (disjoint from the window on some dim)
    if all(a >= w and e < w + n for a, e, w, n in zip(start, last, at, size)):
        return _SliceOfSet(update, [a - w for a, w in zip(start, at)], [e - w + 1 for e, w in zip(last, at)], strides)
    return "the slice reads both the window and what is around it"


def slice_of_window_set(op, rewriter):
    """set(x, window at w, u)[s] -> x[s] when s misses the window, u[s - w] when s lies in it

    // Pattern: scatter(x: 64x33, [56, 0], u: 8x8)[0:8, 0:8] -> x[0:8, 0:8]
    Preconditions: the operand sets one whole window at constant offsets: a scatter of ``set``
    (``x.at[a:b, c:d].set(u)``, and jax's transpose of it, which zeroes the window of a cotangent)
    or a dynamic_update_slice (its offsets clamped as the op clamps them); the slice's indices all
    miss the window (on some dim) or all lie in it. Exact: the same elements.
    """
    plan = plan_slice_of_window_set(op)
    if isinstance(plan, str):
        return plan
    if plan.start == [0] * len(plan.start) and list(plan.limit) == list(shape_of(plan.source)) \
            and set(plan.strides) <= {1}:
        rewriter.replace_op(op, [plan.source])
        return None
    with rewriter.ip:
        out = build("stablehlo.slice", [plan.source], start_indices=plan.start, limit_indices=plan.limit,
                    strides=plan.strides, loc=op.location)
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
    "gather_of_known_positions": (("stablehlo.gather",), gather_of_known_positions),
    "reshape_of_reshape": ((RESHAPE,), reshape_of_reshape),
    "slice_of_window_set": (("stablehlo.slice",), slice_of_window_set),
}
