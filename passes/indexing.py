"""Flat index windows (``index-windows``): scatters and gathers over a flattened array at the
positions of one box become window scatters and slices.

``x.at[a:b, c:d].set(u)`` in hloforge.numpy scatters into ``reshape(x, (x.size,))`` at the flat
positions of the box (``iota`` reshaped to ``x.shape`` and sliced), and its derivative gathers
from the flattened cotangent at the same positions. XLA runs those as element-by-element loops,
and the FFT patterns (``fft-truncate``) cannot see which modes such a spectrum holds. When the
positions are known at compile time and enumerate one box of a shape ``S`` in row-major order,
the scatter is jax's window scatter of ``x.at[a:b, c:d].set(u)`` on the array of shape ``S`` (XLA
makes it a dynamic_update_slice; ``fft-truncate`` reads the windows) and the gather is a slice.

The same holds for the index ops jax itself emits in FNO libraries (issue 47): a gather at known
positions (``jnp.take``, ``x[..., idx]``, jax's transpose of a window scatter) is slices of its
operand, a scatter of zeros at known positions (``out.at[:, rows, :m].set(u)``, the transpose of
``jnp.take``) a pad of its update, a slice of a window set at constant offsets reads the operand or
the update, and a dynamic_slice at constant offsets is a slice.

Every pattern is exact (the same values bit for bit), except ``scatter_of_known_positions`` of an
add into +0.0, which waits for finite math (a -0.0 update would become +0.0).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from hloforge.frontend.context import ir, stablehlo
from hloforge.frontend.ops.slicing import scatter_body_name
from hloforge.passes._ir import (
    build, constant, constant_value, element_type, evaluate, finite_math, ints, is_zero, params_of, producer, shape_of,
    slice_params, splat_value, tensor)
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
    """``positions`` (a 1-d int array) as (start, stop, step) runs of evenly spaced, increasing positions, in order."""
    runs, i, n = [], 0, len(positions)
    while i < n:
        step = int(positions[i + 1] - positions[i]) if i + 1 < n else 1
        j = i + 1
        if step >= 1:
            while j < n and positions[j] - positions[j - 1] == step:
                j += 1
        else:
            step = 1
        runs.append((int(positions[i]), int(positions[j - 1]) + 1, step))
        i = j
    return runs


def _vectors(index, ivd, width):
    """The index vectors of ``index`` (index vector dim ``ivd``, each ``width`` long), known at compile time
    (``_static``), as an array of the index's batch shape plus (width,), else None."""
    positions = _static(index)
    if positions is None or positions.dtype.kind not in "iu":
        return None
    if ivd < positions.ndim:
        positions = np.moveaxis(positions, ivd, -1)
    else:
        positions = positions[..., None]
    return positions.astype(np.int64) if positions.shape[-1] == width else None


def _mesh(index_map, dims, vectors, shape, sizes, clamp=True):
    """(per dim of ``dims``, the positions it is indexed at; the window's start on every dim) when batch dim j
    of the index vectors indexes ``dims[j]`` alone (its component varies along batch dim j only: a mesh, as
    ``x[:, rows[:, None], cols]`` makes, or one list of positions) and every other component is the same in
    each vector (one window of the other dims, clamped as gather clamps it or checked to be inside the operand
    as scatter needs); else why not."""
    index_map, k = list(index_map), vectors.ndim - 1
    if len(dims) != k or any(d not in index_map or sizes[d] != 1 for d in dims):
        return "the index vectors' dims are not the collapsed dims, of window size 1, one per dim of vectors"
    start, lists = [0] * len(shape), []
    for c, e in enumerate(index_map):
        column = vectors[..., c]
        if e in dims:
            j = dims.index(e)
            line = column[(0,) * j + (slice(None),) + (0,) * (k - j - 1)]
            if (column != line.reshape([-1 if i == j else 1 for i in range(k)])).any():
                return "a dim's positions vary along another dim of index vectors (not a mesh)"
            lists.append((j, line))
            continue
        if (column != column.flat[0]).any():
            return "the index vectors vary along a dim they do not collapse"
        v = int(column.flat[0])
        if clamp:
            v = min(max(v, 0), shape[e] - sizes[e])
        elif not 0 <= v <= shape[e] - sizes[e]:
            return "a window reaches out of the operand"
        start[e] = v
    return [line for _, line in sorted(lists, key=lambda t: t[0])], start


class _GatherSlices(NamedTuple):
    dims: list    # the operand dims the positions index, in order ([]: one window)
    slices: list  # nested lists (one level per dim) of (start, limit, strides) slices of the operand


def plan_gather_of_known_positions(op):
    """The slices of ``gather_of_known_positions`` for the gather ``op`` (pure), or why it does not fire."""
    x, index = op.operands
    p = params_of(op)
    shape, out = list(shape_of(x)), list(shape_of(op.result))
    rank, sizes = len(shape), list(p["slice_sizes"])
    if p["operand_batching_dims"] or p["start_indices_batching_dims"]:
        return "a batched gather"
    ivd, index_shape = p["index_vector_dim"], list(shape_of(index))
    if 0 in shape or 0 in out or 0 in index_shape or not p["start_index_map"]:
        return "an empty operand, result or index array, or no index vector"
    vectors = _vectors(index, ivd, len(p["start_index_map"]))
    if vectors is None:
        return "the positions are not known at compile time"
    collapsed = list(p["collapsed_slice_dims"])
    if vectors.ndim == 1:  # one window: a slice (the start clamped, as gather clamps it)
        start = [0] * rank
        for k, d in enumerate(p["start_index_map"]):
            start[d] = min(max(int(vectors[k]), 0), shape[d] - sizes[d])
        if list(p["offset_dims"]) != list(range(len(out))):
            return "the window's dims are not the result's, in order"
        return _GatherSlices([], (start, [a + n for a, n in zip(start, sizes)], [1] * rank))
    mesh = _mesh(p["start_index_map"], collapsed, vectors, shape, sizes)
    if isinstance(mesh, str):
        return mesh
    lists, start = mesh
    if list(p["offset_dims"]) != [i for i in range(rank) if i not in collapsed]:
        return "the positions' dims of the result are not the indexed dims' places"
    runs = [_runs(np.clip(line, 0, shape[d] - 1)) for line, d in zip(lists, collapsed)]
    if math.prod(len(r) for r in runs) > MAX_RUNS:
        return f"the positions make more than {MAX_RUNS} slices"

    def nest(level, lo, hi, strides):
        if level == len(collapsed):
            return (lo, hi, strides)
        d, parts = collapsed[level], []
        for a, b, step in runs[level]:
            lo2, hi2, st2 = list(lo), list(hi), list(strides)
            lo2[d], hi2[d], st2[d] = a, b, step
            parts.append(nest(level + 1, lo2, hi2, st2))
        return parts
    return _GatherSlices(collapsed, nest(0, list(start), [w + n for w, n in zip(start, sizes)], [1] * rank))


def gather_of_known_positions(op, rewriter):
    """gather(x, positions known at compile time) -> concatenate([x[run] for run in runs], d), or one window x[s]

    // Pattern: gather(x: 2x4x33, [[0], [1], [2], [3]], collapsed [2], slice [2, 4, 1]) -> x[:, :, 0:4]
    Preconditions: no batching dims; the positions are known at compile time (constants, iotas and
    the ops on them, through inline's call boundaries, as ``_static`` evaluates them). Either there is
    one index vector (the result, in the window's dims, is a slice of x at the clamped start,
    reshaped where dims collapse), or each dim of index vectors indexes one collapsed dim of x (in
    order), whose place in the result it takes, and varies only that dim's position (a list of
    positions, or a mesh: ``x[:, rows[:, None], cols]``), the vectors' other components the same in
    each (one window of the other dims: ``x[:, rows, :m]``): the positions, clamped as gather clamps
    them, in runs of evenly spaced positions (at most 16 slices in all), become strided slices of x,
    concatenated dim by dim (jnp.take, ``x[..., idx]`` with index arrays, and jax's transpose of a
    window scatter). Exact: the same elements in the same places.
    """
    plan = plan_gather_of_known_positions(op)
    if isinstance(plan, str):
        return plan
    x, loc = op.operands[0], op.location

    def join(level, tree):
        if level == len(plan.dims):
            a, b, s = tree
            return build("stablehlo.slice", [x], start_indices=a, limit_indices=b, strides=s, loc=loc)
        parts = [join(level + 1, t) for t in tree]
        return parts[0] if len(parts) == 1 else build("stablehlo.concatenate", parts, dimension=plan.dims[level],
                                                      loc=loc)
    with rewriter.ip:
        out = join(0, plan.slices)
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


def plan_dynamic_slice_at_constants(op):
    """(start, limit) of ``dynamic_slice_at_constants`` for the dynamic_slice ``op`` (pure), or why it does not fire."""
    x, *offsets = op.operands
    start = []
    for v, n, k in zip(offsets, shape_of(x), shape_of(op.result)):
        c = constant_value(v)
        if c is None or np.ndim(c) != 0:
            return "an offset is not a constant"
        start.append(min(max(int(c), 0), n - k))
    return start, [a + k for a, k in zip(start, shape_of(op.result))]


def dynamic_slice_at_constants(op, rewriter):
    """dynamic_slice(x, c_0, ..., c_k, sizes) -> x[clamp(c_i) : clamp(c_i) + size_i]

    // Pattern: dynamic_slice(x: 64x33, 56, 0, sizes [8, 8]) -> x[56:64, 0:8]
    Preconditions: every offset is a constant (jax's transpose of a dynamic_update_slice at
    constant offsets); each is clamped as the op clamps it, so the window fits. Exact.
    """
    plan = plan_dynamic_slice_at_constants(op)
    if isinstance(plan, str):
        return plan
    start, limit = plan
    with rewriter.ip:
        out = build("stablehlo.slice", [op.operands[0]], start_indices=start, limit_indices=limit,
                    strides=[1] * len(start), loc=op.location)
    rewriter.replace_op(op, [out])


class _ScatterPieces(NamedTuple):
    dims: list     # the inserted dims, in order
    pieces: list   # per inserted dim, per run: (k0, k1, step, position of its first element along the dim)
    start: list    # the window's start on every dim (inserted dims: 0)


def plan_scatter_of_known_positions(op):
    """The pieces of ``scatter_of_known_positions`` for the scatter ``op`` (pure), or why it does not fire."""
    if len(op.operands) != 3:
        return "the scatter updates several arrays"
    x, index, update = op.operands
    if not is_zero(x):
        return "the operand is not all zeros"
    body = scatter_body_name(op)
    if body not in ("set", "add"):
        return "the update computation is neither set nor add"
    if body == "add" and not finite_math() and not _negative_zeros(x):
        return "an add into +0.0 turns a -0.0 update into +0.0 (finite math only, as pad_arith's x + 0.0)"
    p = params_of(op)
    if p["input_batching_dims"] or p["scatter_indices_batching_dims"]:
        return "a batched scatter"
    shape, rank = list(shape_of(x)), len(shape_of(x))
    index_map, inserted = list(p["scatter_dims_to_operand_dims"]), list(p["inserted_window_dims"])
    if 0 in shape or 0 in shape_of(update) or not index_map or not inserted:
        return "an empty operand or update, no index vector or no inserted dim"
    vectors = _vectors(index, p["index_vector_dim"], len(index_map))
    if vectors is None:
        return "the positions are not known at compile time"
    if list(p["update_window_dims"]) != [i for i in range(rank) if i not in inserted]:
        return "the update's positions dims are not the inserted dims' places"
    sizes = [1 if i in inserted else n for i, n in enumerate(shape_of(update))]
    mesh = _mesh(index_map, inserted, vectors, shape, sizes, clamp=False)
    if isinstance(mesh, str):
        return mesh
    lists, start = mesh
    pieces = []
    for line, d in zip(lists, inserted):
        if line.min() < 0 or line.max() >= shape[d]:
            return "a position is out of the operand (scatter skips it)"
        if (np.diff(line) <= 0).any():
            return "the positions are not increasing (repeated or unsorted)"
        runs, k = [], 0
        for a, b, step in _runs(line):
            n = len(range(a, b, step))
            runs.append((k, k + n, step, a))
            k += n
        pieces.append(runs)
    if math.prod(len(r) for r in pieces) > MAX_RUNS:
        return f"the positions make more than {MAX_RUNS} runs"
    return _ScatterPieces(inserted, pieces, start)


def _negative_zeros(x) -> bool:
    """Whether the zero splat ``x`` is -0.0 in every part (an add into it keeps every update's bits)."""
    b = producer(x, "stablehlo.broadcast_in_dim")
    c = splat_value(b.operands[0] if b is not None else x)
    if c is None or np.asarray(c).dtype.kind not in "fc":
        return c is not None  # (integers: 0 + u is u)
    parts = [np.real(c), np.imag(c)] if np.iscomplexobj(c) else [c]
    return all(np.signbit(v) for v in parts)


def scatter_of_known_positions(op, rewriter):
    """scatter(zeros, positions known at compile time, u) -> pad(concatenate([zeros, u[run], zeros, ...], d) per inserted dim d, 0)

    // Pattern: scatter(zeros: 2x4x33, [[0], [1], [2], [3]], u: 2x4x4, inserted [2]) -> pad(u, 0, high [0, 0, 29])
    Preconditions: one operand, a zero splat (or broadcast of one); the update computation is set, or
    add (where the zeros are -0.0, or under finite math: +0.0 + -0.0 is +0.0); no batching dims; index
    vectors known at compile time (``_static``) whose dims each index one inserted dim (in order) whose
    place in the update they take, varying only that dim's position (a list, or a mesh:
    ``out.at[:, rows[:, None], cols].set(u)``), the vectors' other components the same in each (one
    window of the other dims, inside the operand: ``out.at[:, :, rows, :m].set(u)``; and jax's transpose
    of a gather at known positions, a scatter-add); each dim's positions inside the operand (scatter
    skips the others) and increasing (so each element is set once), at most 16 runs in all. Along each
    inserted dim, each run of u is a slice of u (interior-padded with zeros when its positions step by
    more than one), between zero blocks, and the whole is padded with zeros around the window. Exact
    (set; add of -0.0).
    """
    plan = plan_scatter_of_known_positions(op)
    if isinstance(plan, str):
        return plan
    x, _, u = op.operands
    loc, rank, full = op.location, len(plan.start), shape_of(x)
    b = producer(x, "stablehlo.broadcast_in_dim")
    zero = np.asarray(splat_value(b.operands[0] if b is not None else x))
    with rewriter.ip:
        scalar = constant(zero, tensor([], element_type(x)), loc)
        out, low, high = u, list(plan.start), [0] * rank
        for d, runs in zip(plan.dims, plan.pieces):  # (spread u's positions dims one by one)
            parts, at, now = [], runs[0][3], list(shape_of(out))
            for k0, k1, step, first in runs:
                if first > at:
                    parts.append(constant(zero, tensor([first - at if i == d else n for i, n in enumerate(now)],
                                                       element_type(x)), loc))
                piece = out if (k0, k1) == (0, now[d]) else build(
                    "stablehlo.slice", [out], start_indices=[k0 if i == d else 0 for i in range(rank)],
                    limit_indices=[k1 if i == d else n for i, n in enumerate(now)], strides=[1] * rank, loc=loc)
                if step > 1 and k1 - k0 > 1:
                    piece = build("stablehlo.pad", [piece, scalar], low=[0] * rank, high=[0] * rank,
                                  interior=[step - 1 if i == d else 0 for i in range(rank)], loc=loc)
                parts.append(piece)
                at = first + (k1 - k0 - 1) * step + 1
            out = parts[0] if len(parts) == 1 else build("stablehlo.concatenate", parts, dimension=d, loc=loc)
            low[d], high[d] = runs[0][3], full[d] - at  # (the zeros before the first run and after the last)
        high = [h if i in plan.dims else n - a - s for i, (h, n, a, s) in
                enumerate(zip(high, full, low, shape_of(out)))]
        if any(low) or any(high):
            out = build("stablehlo.pad", [out, scalar], low=low, high=high, interior=[0] * rank, loc=loc)
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
    "scatter_of_known_positions": (("stablehlo.scatter",), scatter_of_known_positions),
    "reshape_of_reshape": ((RESHAPE,), reshape_of_reshape),
    "slice_of_window_set": (("stablehlo.slice",), slice_of_window_set),
    "dynamic_slice_at_constants": (("stablehlo.dynamic_slice",), dynamic_slice_at_constants),
}
