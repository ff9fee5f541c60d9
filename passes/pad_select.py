"""Selects of boxes (part of ``pad-push``): a select whose predicate is a box (a pad of a splat, a
box-shaped constant, compares of an iota with constants, and/or/not of boxes) becomes a
``dynamic_update_slice`` of the chosen branch's window into the other (``select_of_box``), as Enzyme-JAX's
select-pad rewrite does, and a select of two pads alike becomes a pad of the select of their operands
(``select_of_pads``). Exact: the values are copied.
"""
from __future__ import annotations

import math

import numpy as np

from hloforge.frontend.calls import is_public
from hloforge.frontend.context import stablehlo
from hloforge.passes._ir import (
    build, constant_value, dtype_of, evaluate, ints, params_of, producer, shape_of, update_at)
from hloforge.passes.fold import OPAQUE, computed_at_run_time
from hloforge.passes.pad import PAD, SLICE, edge_paddings, same_value, scalar_constant, single_use_pad, splat_of


MAX_MASK_DEPTH = 6
RUN_TIME_LOOKS = 256  # ops computed_at_run_time reads before it answers no
# ops whose results XLA computes at run time: what the import folders do not see (OPAQUE), but not
# calls, which XLA inlines before it simplifies (a constant behind one is a literal to it then)
_RUN_TIME_OPS = OPAQUE - {"func.call"}


def _box_of_array(mask):
    """(start, limit, inside) when the boolean array ``mask`` is ``inside`` on one box and not outside."""
    for inside in (True, False):
        m = mask if inside else ~mask
        where = np.nonzero(m)
        if not where[0].size:
            return [0] * mask.ndim, [0] * mask.ndim, inside
        start = [int(w.min()) for w in where]
        limit = [int(w.max()) + 1 for w in where]
        box = tuple(slice(s, e) for s, e in zip(start, limit))
        if int(np.count_nonzero(m)) == math.prod(e - s for s, e in zip(start, limit)) and m[box].all():
            return start, limit, inside
    return None


def _iota_axis(value):
    """(dim of the result, the iota's 1-d values as numpy) of an iota or a broadcast of a 1-d iota."""
    op = producer(value)
    if op is None:
        return None
    if op.name == "stablehlo.broadcast_in_dim":
        inner = producer(op.operands[0], "stablehlo.iota")
        if inner is None or len(shape_of(inner.result)) != 1:
            return None
        dims = ints(op, "broadcast_dimensions")
        n = shape_of(inner.result)[0]
        if shape_of(value)[dims[0]] != n:
            return None
        return dims[0], np.arange(n).astype(dtype_of(value))
    if op.name == "stablehlo.iota":
        d = params_of(op)["dimension"]
        return d, np.arange(shape_of(value)[d]).astype(dtype_of(value))
    return None


def mask_box(value, depth: int = MAX_MASK_DEPTH):
    """(start, limit, inside) when the boolean tensor ``value`` is ``inside`` exactly on one box of its
    shape (start <= limit per dim; an empty box when start == limit somewhere), else None (pure)."""
    shape = shape_of(value)
    if dtype_of(value) != np.bool_ or depth < 0:
        return None
    whole = ([0] * len(shape), list(shape))
    c = splat_of(value)
    if c is not None:
        return (*whole, bool(c))
    op = producer(value)
    if op is not None and op.name == "func.call" and "hloforge.call_boundary" in op.attributes:
        return mask_box(op.operands[list(op.results).index(value)], depth - 1)  # (inline's identity call)
    if op is None:
        return None
    if op.name == "stablehlo.constant":
        array = constant_value(value)
        return None if array is None else _box_of_array(np.asarray(array))
    if op.name == PAD:
        inner, pv = splat_of(op.operands[0]), scalar_constant(op.operands[1])
        edges = edge_paddings(op)
        if inner is None or pv is None or edges is None or bool(inner) == bool(pv):
            return None
        low, _ = edges
        return low, [lo + n for lo, n in zip(low, shape_of(op.operands[0]))], bool(inner)
    if op.name == "stablehlo.not":
        box = mask_box(op.operands[0], depth - 1)
        return None if box is None else (box[0], box[1], not box[2])
    if op.name in ("stablehlo.and", "stablehlo.or"):
        boxes = [mask_box(v, depth - 1) for v in op.operands]
        if any(b is None for b in boxes):
            return None
        want = op.name == "stablehlo.and"  # (and of insides, or of outsides: the intersection)
        for b in boxes:
            if _empty(b) or b[:2] == whole:  # (a constant mask: true or false everywhere)
                everywhere = b[2] if not _empty(b) else not b[2]
                other = boxes[1] if b is boxes[0] else boxes[0]
                if everywhere == want:
                    return other
                return (*whole, everywhere)
        boxes = [b if b[2] == want else _flip(b, shape) for b in boxes]
        if any(b is None for b in boxes):
            return None
        start = [max(a, b) for a, b in zip(boxes[0][0], boxes[1][0])]
        limit = [max(s, min(a, b)) for s, a, b in zip(start, boxes[0][1], boxes[1][1])]
        return start, limit, want
    if op.name == "stablehlo.broadcast_in_dim":
        box = mask_box(op.operands[0], depth - 1)
        if box is None:
            return None
        dims, inner = ints(op, "broadcast_dimensions"), shape_of(op.operands[0])
        start, limit = list(whole[0]), list(whole[1])
        for i, j in enumerate(dims):
            if inner[i] == shape[j]:
                start[j], limit[j] = box[0][i], box[1][i]
            elif box[0][i] != box[1][i] and (box[0][i], box[1][i]) != (0, inner[i]):
                return None
            elif box[0][i] == box[1][i]:
                start[j] = limit[j] = 0
        return start, limit, box[2]
    if op.name == "stablehlo.compare":
        for i in (0, 1):
            axis, c = _iota_axis(op.operands[i]), splat_of(op.operands[1 - i])
            if axis is None or c is None:
                continue
            d, values = axis
            args = [values, np.broadcast_to(c, values.shape)]
            row = evaluate("stablehlo.compare", *(args if i == 0 else args[::-1]), **params_of(op))
            if row is None:
                return None
            box = _box_of_array(np.asarray(row, bool))
            if box is None:
                return None
            start, limit = list(whole[0]), list(whole[1])
            start[d], limit[d] = box[0][0], box[1][0]
            return start, limit, box[2]
    return None


def _flip(box, shape):
    """The same mask as a box of the other value, when its complement is one (the box is whole on every
    dim but one and reaches one end there), else None."""
    start, limit, inside = box
    cut = [i for i, (s, e, n) in enumerate(zip(start, limit, shape)) if (s, e) != (0, n)]
    if len(cut) != 1:
        return None
    d = cut[0]
    if start[d] != 0 and limit[d] != shape[d]:
        return None
    other_start, other_limit = list(start), list(limit)
    other_start[d], other_limit[d] = (limit[d], shape[d]) if start[d] == 0 else (0, start[d])
    return other_start, other_limit, not inside


def _empty(box) -> bool:
    return any(s == e for s, e in zip(box[0], box[1]))


def plan_select_of_box(op):
    """The plan of ``select_of_box`` (pure): (start, limit, inner value, outer value), or a reason."""
    pred = op.operands[0]
    shape = shape_of(op.result)
    if shape_of(pred) != shape or not shape:
        return "a scalar predicate"
    box = mask_box(pred)
    if box is None:
        return "the predicate is not a box"
    start, limit, inside = box
    on_true, on_false = op.operands[1], op.operands[2]
    inner, outer = (on_true, on_false) if inside else (on_false, on_true)
    if _empty(box):
        inner = None
    elif start == [0] * len(shape) and limit == list(shape):
        outer = None
    kept = [v for v in (inner, outer) if v is not None]
    run_time = any(computed_at_run_time(v, [RUN_TIME_LOOKS], _RUN_TIME_OPS) for v in kept)
    if not run_time and not _takes_literals(op.result):
        return ("the result would be computed from constants only: XLA simplifies its users with a literal "
                "where it computes the select at run time, with other bits (x / (0+0j) gives nan+nanj for inf+nanj)")
    return start, limit, inner, outer


def _takes_literals(value) -> bool:
    """Whether every user of ``value`` keeps its bits whether XLA sees it as a literal or computes it: the
    return of a public function, or an optimization barrier (pure)."""
    for use in value.uses:
        user = use.owner
        if user.name == "stablehlo.optimization_barrier":
            continue
        if user.name != "func.return" or not is_public(user.parent.opview):
            return False
    return True


def select_of_box(op, rewriter):
    """select(box mask, t, f) -> dynamic_update_slice(f, t[box], box start)  (t and f swapped where the mask is false on the box)

    // Pattern: select(pad(true, false, [2], [3]), pad(x, 0, [2], [3]), y) -> dynamic_update_slice(y, x, 2)
    Preconditions: the predicate has the result's shape and is one value on a box and the other
    outside it: a pad of a splat boolean with the other value, a constant of that form, a compare of
    an iota (or a broadcast of a 1-d one) with a splat whose values along the iota's dim form one
    interval or its complement (evaluated by the registry: any direction and type), a broadcast of such
    a mask, its not, an and or an or of boxes (each of the value the op keeps, or of the other where
    its complement is a box: a box reaching one end of its one cut dim), also behind inline's call boundary (an
    identity call: the mask is read, not computed, so how XLA would compute it does not matter). A mask true or false everywhere picks one
    operand. The result is not computed from constants only (no block argument or op XLA runs below it),
    unless its users are the return of a public function or optimization barriers: XLA computes a
    select of such a mask at run time where it does not fold the mask (an and of iota compares), but
    simplifies the users of a literal with other bits (``x / (0+0j)``: nan+nanj for inf+nanj; ``x + 0.0``: x).
    The offsets are constants (i64), so the update never clamps. (t[box] of a pad padded
    exactly to the box is the pad's operand: slice_of_pad.)
    """
    plan = plan_select_of_box(op)
    if isinstance(plan, str):
        return plan
    start, limit, inner, outer = plan
    if inner is None or outer is None:
        rewriter.replace_op(op, [outer if inner is None else inner])
        return None
    loc = op.location
    with rewriter.ip:
        update = build(SLICE, [inner], start_indices=start, limit_indices=limit, strides=[1] * len(start), loc=loc)
        out = update_at(outer, update, start, loc)
    rewriter.replace_op(op, [out])


def plan_select_of_pads(op):
    """The plan of ``select_of_pads`` for the select ``op`` (pure): the two pads, or why it does not fire."""
    pads = [single_use_pad(v) for v in op.operands[1:]]
    if any(p is None for p in pads) or pads[0].result == pads[1].result:
        return "the branches are not two different pads with no other user"
    edges = [edge_paddings(p) for p in pads]
    if edges[0] is None or edges[0] != edges[1]:
        return "the pads differ in their paddings, or have interior padding or crops"
    if not same_value(pads[0].operands[1], pads[1].operands[1]):
        return "the pads pad with different values"
    return pads


def select_of_pads(op, rewriter):
    """select(p, pad(a, v, l, h), pad(b, v, l, h)) -> pad(select(p[l : n - h], a, b), v, l, h)

    // Pattern: select(p, pad(a, 0, [1], [2]), pad(b, 0, [1], [2])) -> pad(select(p[1:n-2], a, b), 0, [1], [2])
    Preconditions: both branches are pads with no other user, the same edge paddings (no interior
    padding, no crops) and the same padding value (the same value, or constants with the same bits);
    the predicate is a scalar or is sliced to the pads' window. Exact: the select copies values.
    """
    plan = plan_select_of_pads(op)
    if isinstance(plan, str):
        return plan
    low, high = edge_paddings(plan[0])
    pred, shape = op.operands[0], shape_of(op.result)
    with rewriter.ip:
        if shape_of(pred):
            pred = build(SLICE, [pred], start_indices=low, limit_indices=[n - h for n, h in zip(shape, high)],
                         strides=[1] * len(shape), loc=op.location)
        core = build("stablehlo.select", [pred, plan[0].operands[0], plan[1].operands[0]], loc=op.location)
        out = build(PAD, [core, plan[0].operands[1]], low=low, high=high, interior=[0] * len(shape), loc=op.location)
    rewriter.replace_op(op, [out])


def plan_select_of_same_branches(op):
    """The branch of ``select_of_same_branches`` for the select ``op`` (pure), or why it does not fire."""
    _, a, b = op.operands
    if not same_value(a, b):
        return "the branches differ"
    return a


def select_of_same_branches(op, rewriter):
    """select(p, a, a) -> a

    // Pattern: select(p, zeros, zeros) -> zeros
    Preconditions: both branches are the same value, or constants with the same bits (as jax's gradient
    of a scatter at an index array selects between two zero cotangents; XLA's simplifier folds it too,
    after its CSE). Exact.
    """
    a = plan_select_of_same_branches(op)
    if isinstance(a, str):
        return a
    rewriter.replace_op(op, [a])


PATTERNS = {
    "select_of_same_branches": ((stablehlo.SelectOp.OPERATION_NAME,), select_of_same_branches),
    "select_of_box": ((stablehlo.SelectOp.OPERATION_NAME,), select_of_box),
    "select_of_pads": ((stablehlo.SelectOp.OPERATION_NAME,), select_of_pads),
}
