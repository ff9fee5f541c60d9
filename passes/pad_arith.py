"""Pad arithmetic (part of ``pad-push``): elementwise ops of pads at different offsets, selects of boxes,
concatenates of adjacent slices, pads and slices of concatenates.

Four families the strongest pad optimizer (Enzyme-JAX) has and the rest of ``pad-push`` lacked:

- two pads combined by an elementwise binary op whose paddings differ on one dim become one pad of a
  concatenate of the pieces along that dim (``binary_of_shifted_pads``), and a pad combined with a
  splat becomes a pad of the op on the pad's operand (``binary_of_pad_and_splat``);
- a select whose predicate is a box (a pad of a splat, a box-shaped constant, compares of an iota with
  constants, and/or/not of boxes) becomes a ``dynamic_update_slice`` (``select_of_box``);
- adjacent slices of one tensor joined by a concatenate become one slice (``concatenate_of_adjacent_slices``);
- a pad of a concatenate takes in the edge padding of its end operands (``pad_of_concatenate``), and a
  slice of a concatenate reads only the operands it overlaps (``slice_of_concatenate``), so crops move
  into the slices and pads the concatenate joins.

Every pattern is exact: the same op on the same values, or values copied; an operand dropped next to
a padding value only where that value is the op's identity bit for bit (``x + -0.0``, ``x * 1``,
``max(x, -inf)``, ...), and an operand replaced by a constant only where the padding value absorbs it
bit for bit (integer ``x * 0``, ``x & 0``, ...; float ``x * 0`` only under finite math). This module
imports only ``_ir`` and ``pad``; ``pad_push`` puts its table in the ``pad-push`` family.
"""
from __future__ import annotations

import math

import numpy as np

from hloforge.frontend.context import ir, stablehlo
from hloforge.frontend.registry import names
from hloforge.passes._ir import (
    NO_MATCH, broadcast_scalar, build, constant, constant_value, dtype_of, element_type, evaluate, finite_math,
    has_one_use, ints, needs_operand, params_of, producer, rebuild, shape_of, tensor)
from hloforge.passes.pad import PAD, SLICE, paddings, same_value, scalar_constant

CONCATENATE = "stablehlo.concatenate"
BINARY_OPS = names("binary")


def _single_use_pad(value):
    p = producer(value, PAD)
    return p if p is not None and has_one_use(p.result) else None


def _splat_of(value):
    """The 0-d value of a splat constant or of a broadcast of a 0-d constant, else None."""
    b = producer(value, "stablehlo.broadcast_in_dim")
    if b is not None and shape_of(b.operands[0]) == ():
        return scalar_constant(b.operands[0])
    return scalar_constant(value)


# ---------------------------------------------------------------- identities and absorbing values

def _scalar(c):
    """(kind, value as a Python number, -0.0 sign) of a 0-d constant: kind "i" (integers and bool), "f"
    (floats, bfloat16 too), "c" (complex) or None."""
    c = np.asarray(c)
    if c.dtype.kind in "iub":
        return "i", c.item(), False
    if c.dtype.kind == "c":
        return "c", complex(c.item()), False
    try:
        f = float(c.astype(np.float64))
    except (TypeError, ValueError):
        return None, None, False
    return "f", f, bool(np.signbit(f))


def _all_ones(c) -> bool:
    c = np.asarray(c)
    return bool(c) if c.dtype == np.bool_ else bool(np.invert(c) == 0)


def _extreme(c, high: bool) -> bool:
    """Whether c is the largest (``high``) or smallest value of its integer or bool dtype."""
    c = np.asarray(c)
    if c.dtype == np.bool_:
        return bool(c) == high
    info = np.iinfo(c.dtype)
    return c.item() == (info.max if high else info.min)


def _identity(name: str, c, side: int) -> bool:
    """Whether ``f(x, c)`` (side 1) or ``f(c, x)`` (side 0) is x bit for bit, for every x of c's dtype
    (NaN, Inf and -0.0 included: ``x + 0.0`` turns -0.0 into +0.0, so that one only under finite math,
    as sum_of_disjoint_pads; ``x + -0.0`` is exact)."""
    if c is None:
        return False
    kind, value, negative = _scalar(c)
    if kind == "c":  # (x + 0j and x * (1+0j) change an infinite or -0.0 part: finite math only)
        return finite_math() and ((name == "stablehlo.add" and value == 0) or
                                  (name == "stablehlo.subtract" and side == 1 and value == 0) or
                                  (name == "stablehlo.multiply" and value == 1))
    if kind is None:
        return False
    if name == "stablehlo.add":
        return value == 0 and (kind == "i" or negative or finite_math())
    if name == "stablehlo.subtract":
        return side == 1 and value == 0 and (kind == "i" or not negative or finite_math())
    if name == "stablehlo.multiply":
        return value == 1
    if name == "stablehlo.divide":
        return side == 1 and value == 1 and np.asarray(c).dtype != np.bool_
    if name in ("stablehlo.or", "stablehlo.xor"):
        return kind == "i" and value == 0
    if name == "stablehlo.and":
        return kind == "i" and _all_ones(c)
    if name in ("stablehlo.maximum", "stablehlo.minimum"):
        low = name == "stablehlo.maximum"  # (the identity of max is the lowest value)
        if kind == "f":  # (max(NaN, -inf) is NaN, max(-0.0, -inf) is -0.0)
            return math.isinf(value) and (value < 0) == low
        return _extreme(c, high=not low)
    return False


def _xla_folds(name: str, c) -> bool:
    """Whether XLA's algebraic simplifier could replace ``f(x, c)`` or ``f(c, x)`` by x where IEEE
    does not: ``x + 0`` and ``x - 0`` of floats and complex numbers (zeros of either sign) become x,
    so ``-0.0 + 0.0`` gives -0.0 (``0 - x`` is counted too, to be safe). A rewrite that creates or
    moves such an op changes the sign of a zero result, so those wait for finite math (the fuzz test
    found ``0.0 + -0.0`` turned into -0.0)."""
    if c is None or finite_math() or name not in ("stablehlo.add", "stablehlo.subtract"):
        return False
    kind, value, _ = _scalar(c)
    return kind in ("f", "c") and value == 0


def _absorbs(name: str, c) -> bool:
    """Whether ``f(x, c)`` and ``f(c, x)`` are both ``f(c, c)`` bit for bit for every x (floats only
    under finite math: ``inf * 0`` is NaN and ``-x * 0`` is -0.0, ``max(NaN, inf)`` is NaN)."""
    if c is None:
        return False
    kind, value, negative = _scalar(c)
    if kind not in ("i", "f") or (kind == "f" and not finite_math()):
        return False
    if name == "stablehlo.multiply":
        return value == 0 and not negative
    if name == "stablehlo.and":
        return kind == "i" and value == 0
    if name == "stablehlo.or":
        return kind == "i" and _all_ones(c)
    if name in ("stablehlo.maximum", "stablehlo.minimum"):
        high = name == "stablehlo.maximum"
        if kind == "f":
            return math.isinf(value) and (value > 0) == high
        return _extreme(c, high=high)
    return False


# ---------------------------------------------------------------- family 1: arithmetic of pads

def _edge_paddings(pad):
    """(low, high) of a pad with no interior padding and no crops, else None."""
    low, high, interior = paddings(pad)
    if any(interior) or any(p < 0 for p in low + high):
        return None
    return low, high


def plan_shifted_pads(op):
    """The plan of ``binary_of_shifted_pads`` for ``op`` (pure), or a reason string."""
    pads = [_single_use_pad(v) for v in op.operands]
    if any(p is None for p in pads) or pads[0].result == pads[1].result:
        return "the operands are not two pads with no other user"
    if 0 in shape_of(op.result) or any(0 in shape_of(p.operands[0]) for p in pads):
        return "an empty operand (pad_of_empty's)"
    edges = [_edge_paddings(p) for p in pads]
    if any(e is None for e in edges):
        return "interior padding or crops"
    (la, ha), (lb, hb) = edges
    differ = [i for i in range(len(la)) if (la[i], ha[i]) != (lb[i], hb[i])]
    if len(differ) != 1:
        return "the paddings differ on no dim or on several (binary_of_pads, product_of_pads)"
    d = differ[0]
    n = shape_of(op.result)[d]
    sa = (la[d], la[d] + shape_of(pads[0].operands[0])[d])
    sb = (lb[d], lb[d] + shape_of(pads[1].operands[0])[d])
    v, w = (scalar_constant(p.operands[1]) for p in pads)
    cuts = sorted({0, n, *sa, *sb})
    segments = []  # (kind, begin, end): kind "c" (the constant f(v, w)), "ab", "a", "b", "a=", "=b"
    for begin, end in zip(cuts, cuts[1:]):
        in_a, in_b = sa[0] <= begin < sa[1], sb[0] <= begin < sb[1]
        if in_a and in_b:
            kind = "ab"
        elif in_a:
            kind = "c" if _absorbs(op.name, w) else "a=" if _identity(op.name, w, 1) else "a"
        elif in_b:
            kind = "c" if _absorbs(op.name, v) else "=b" if _identity(op.name, v, 0) else "b"
        else:
            kind = "c"
        if (kind == "a" and _xla_folds(op.name, w)) or (kind == "b" and _xla_folds(op.name, v)):
            return "a window meets a zero padding value in a float add or subtract (_xla_folds)"
        if segments and kind == "c" == segments[-1][0]:
            segments[-1] = ("c", segments[-1][1], end)
        else:
            segments.append((kind, begin, end))
    if len(segments) == 1 and segments[0][0] == "c":
        return {"pads": pads, "dim": d, "supports": (sa, sb), "segments": [], "lead": n, "trail": 0,
                "outer": (la, ha)}  # (constant everywhere: a broadcast)
    lead = segments.pop(0)[2] if segments[0][0] == "c" else 0
    trail = n - segments.pop()[1] if segments and segments[-1][0] == "c" else 0
    return {"pads": pads, "dim": d, "supports": (sa, sb), "segments": segments, "lead": lead, "trail": trail,
            "outer": (la, ha)}


@needs_operand(PAD)
def binary_of_shifted_pads(op, rewriter):
    """f(pad(a, v, l_a, h_a), pad(b, w, l_b, h_b)) -> pad(concatenate([f(a[i], b[j]), f(a[k], w), f(v, w)-block, ...], d), f(v, w), ...)

    // Pattern: add(pad(a, 0, [1], [0]), pad(b, 0, [0], [1])) -> concatenate([b[:1], a[:-1] + b[1:], a[-1:]])
    Preconditions: f is an elementwise binary op (or compare); both operands are different pads with
    no other user, no interior padding and no crops, whose edge paddings differ on exactly one dim d
    (equal ones are binary_of_pads's; several differing dims are left alone: the pieces would not be
    one concatenate). Along d the result splits where either support begins or ends: f of the two
    windows where both overlap; f(a's window, w) where only a does (a's window itself when w is f's
    identity bit for bit, the constant f(v, w) when w absorbs every value bit for bit), the same for
    b; the constant f(v, w) where neither does (at the ends: the outer pad's edges, with the other dims'
    padding; a result constant everywhere is a broadcast of it). The padding values need not be
    constants; f(v, w) is f on the two 0-d values.
    """
    plan = plan_shifted_pads(op)
    if isinstance(plan, str):
        return plan
    (pa, pb), d = plan["pads"], plan["dim"]
    a, b, v, w = pa.operands[0], pb.operands[0], pa.operands[1], pb.operands[1]
    (sa, sb), loc = plan["supports"], op.location
    block = list(shape_of(a))  # (the other dims: a's and b's, equal)

    def window(x, support, begin, end):
        start, limit = [0] * len(block), list(shape_of(x))
        start[d], limit[d] = begin - support[0], end - support[0]
        if start[d] == 0 and limit[d] == shape_of(x)[d]:
            return x
        return build(SLICE, [x], start_indices=start, limit_indices=limit, strides=[1] * len(block), loc=loc)

    def splat(value, begin, end):
        shape = list(block)
        shape[d] = end - begin
        return broadcast_scalar(value, shape, loc)

    with rewriter.ip:
        fvw = None
        pieces = []
        for kind, begin, end in plan["segments"]:
            shape = list(block)
            shape[d] = end - begin
            if kind == "c":
                fvw = fvw or rebuild(op, [v, w], loc=loc)
                pieces.append(splat(fvw, begin, end))
            elif kind == "a=":
                pieces.append(window(a, sa, begin, end))
            elif kind == "=b":
                pieces.append(window(b, sb, begin, end))
            else:
                lhs = window(a, sa, begin, end) if kind in ("ab", "a") else splat(v, begin, end)
                rhs = window(b, sb, begin, end) if kind in ("ab", "b") else splat(w, begin, end)
                pieces.append(rebuild(op, [lhs, rhs], loc=loc))
        if not pieces:
            fvw = fvw or rebuild(op, [v, w], loc=loc)
            rewriter.replace_op(op, [broadcast_scalar(fvw, shape_of(op.result), loc)])
            return None
        out = pieces[0] if len(pieces) == 1 else build(CONCATENATE, pieces, dimension=d, loc=loc)
        low, high = list(plan["outer"][0]), list(plan["outer"][1])
        low[d], high[d] = plan["lead"], plan["trail"]
        if any(low) or any(high):
            fvw = fvw or rebuild(op, [v, w], loc=loc)
            out = build(PAD, [out, fvw], low=low, high=high, interior=[0] * len(low), loc=loc)
    rewriter.replace_op(op, [out])


@needs_operand(PAD)
def binary_of_pad_and_splat(op, rewriter):
    """f(pad(a, v, low, high, interior), splat c) -> pad(f(a, splat c), f(v, c), low, high, interior)  (either side)

    // Pattern: multiply(pad(a, 0, [1], [1]), broadcast(3.0)) -> pad(multiply(a, broadcast(3.0)), 0 * 3.0, [1], [1])
    Preconditions: f is an elementwise binary op (or compare); one operand is a pad with no other
    user, the other a splat constant or a broadcast of a 0-d value (not a pad: two pads are
    binary_of_pads's). The pad's elements and its padding meet the same value c, so nothing changes;
    the pad moves below f, where it can meet the pads f's result meets.
    """
    for i in (0, 1):
        pad, other = _single_use_pad(op.operands[i]), op.operands[1 - i]
        if pad is None or producer(other, PAD) is not None:
            continue
        b = producer(other, "stablehlo.broadcast_in_dim")
        if b is not None and shape_of(b.operands[0]) == ():
            scalar = b.operands[0]
        elif _splat_of(other) is not None:
            scalar = None
        else:
            continue
        x, v = pad.operands
        if _xla_folds(op.name, _splat_of(other)):
            continue
        loc = op.location
        with rewriter.ip:
            if scalar is None:
                scalar = constant(_splat_of(other), tensor([], element_type(other)), loc)
            c = broadcast_scalar(scalar, shape_of(x), loc)
            core = rebuild(op, [x, c] if i == 0 else [c, x], loc=loc)
            fv = rebuild(op, [v, scalar] if i == 0 else [scalar, v], loc=loc)
            out = rebuild(pad, [core, fv], loc=loc)
        rewriter.replace_op(op, [out])
        return None
    return NO_MATCH


# ---------------------------------------------------------------- family 2: selects of boxes

MAX_MASK_DEPTH = 6


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
    c = _splat_of(value)
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
        inner, pv = _splat_of(op.operands[0]), scalar_constant(op.operands[1])
        edges = _edge_paddings(op)
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
            axis, c = _iota_axis(op.operands[i]), _splat_of(op.operands[1 - i])
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
        return start, limit, None, outer
    if start == [0] * len(shape) and limit == list(shape):
        return start, limit, inner, None
    return start, limit, inner, outer


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
    operand. The offsets are constants (i64), so the update never clamps. (t[box] of a pad padded
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
        i64 = ir.IntegerType.get_signless(64)
        offsets = [constant(np.int64(s), tensor([], i64), loc) for s in start]
        out = build("stablehlo.dynamic_update_slice", [outer, update, *offsets], loc=loc)
    rewriter.replace_op(op, [out])


# ---------------------------------------------------------------- family 3: adjacent slices

def _slice_params(op):
    return ints(op, "start_indices"), ints(op, "limit_indices"), ints(op, "strides")


def _extends(prev, nxt, d) -> bool:
    """Whether slice ``nxt`` continues slice ``prev`` along d (same source and other dims, same stride)."""
    if prev.operands[0] != nxt.operands[0]:
        return False
    (s1, l1, t1), (s2, l2, t2) = _slice_params(prev), _slice_params(nxt)
    for i in range(len(s1)):
        if i != d and (s1[i], l1[i], t1[i]) != (s2[i], l2[i], t2[i]):
            return False
    count = shape_of(prev.result)[d]
    return t1[d] == t2[d] and s2[d] == s1[d] + count * t1[d]


def plan_adjacent_slices(op):
    """Runs [i, j) of concatenate operands that are adjacent slices of one tensor (pure), or a reason."""
    d = params_of(op)["dimension"]
    slices = [producer(v, SLICE) for v in op.operands]
    runs, i = [], 0
    while i < len(slices):
        j = i + 1
        while slices[i] is not None and j < len(slices) and slices[j] is not None and \
                _extends(slices[j - 1], slices[j], d):
            j += 1
        if j - i > 1:
            runs.append((i, j))
        i = j
    return runs or "no two neighbouring operands are adjacent slices of one tensor"


def concatenate_of_adjacent_slices(op, rewriter):
    """concatenate([x[s:k], x[k:e], ...], d) -> concatenate([x[s:e], ...], d)  (x itself when that is all of x)

    // Pattern: concatenate([x[:, 0:2], x[:, 2:5]], 1) -> x[:, 0:5]
    Preconditions: neighbouring operands are slices of one tensor with the same start, limit and
    stride on every other dim and the same stride on d, each starting where the last one's elements
    would continue (strides > 1 included); the slices may have other users (they stay for them).
    A concatenate left with one operand is that operand.
    """
    plan = plan_adjacent_slices(op)
    if isinstance(plan, str):
        return plan
    d, loc = params_of(op)["dimension"], op.location
    values = list(op.operands)
    with rewriter.ip:
        for i, j in reversed(plan):
            first = producer(values[i], SLICE)
            start, limit, strides = _slice_params(first)
            count = sum(shape_of(v)[d] for v in values[i:j])
            limit[d] = start[d] + (count - 1) * strides[d] + 1
            x = first.operands[0]
            whole = start == [0] * len(start) and limit == list(shape_of(x)) and all(s == 1 for s in strides)
            values[i:j] = [x if whole else build(SLICE, [x], start_indices=start, limit_indices=limit,
                                                 strides=strides, loc=loc)]
        out = values[0] if len(values) == 1 else build(CONCATENATE, values, dimension=d, loc=loc)
    rewriter.replace_op(op, [out])


# ---------------------------------------------------------------- family 4: pads and slices of concatenates

def plan_pad_of_concatenate(op):
    """(new low on d, new high on d, inner edges taken from the first and last operands) (pure), or a reason."""
    concat = producer(op.operands[0], CONCATENATE)
    if concat is None or not has_one_use(concat.result):
        return "the operand is not a concatenate with no other user"
    d = params_of(concat)["dimension"]
    low, high, interior = paddings(op)
    if interior[d]:
        return "interior padding along the concatenate's dim"
    taken = []
    for end, operand in ((0, concat.operands[0]), (1, concat.operands[-1])):
        inner = _single_use_pad(operand)
        if inner is None or (end == 1 and len(concat.operands) == 1 and taken):
            taken.append(0)
            continue
        il, ih, ii = paddings(inner)
        edge = (il, ih)[end][d]
        ok = not ii[d] and edge > 0 and same_value(inner.operands[1], op.operands[1])
        taken.append(edge if ok else 0)
    if not any(taken):
        return "neither end operand is a pad of the same value with edge padding along d"
    return d, taken


def pad_of_concatenate(op, rewriter):
    """pad(concatenate([pad(a, v, l1 on d), ..., pad(b, v, h1 on d)], d), v, l, h) -> pad(concatenate([a, ..., b], d), v, l + l1, h + h1)

    // Pattern: pad(concatenate([pad(a, 0, [2], [0]), b]), 0, [1], [0]) -> pad(concatenate([a, b]), 0, [3], [0])
    Preconditions: the pad's operand is a concatenate along d with no other user, the pad has no
    interior padding on d; the first (last) operand is a pad with no other user, the same padding
    value (the same value, or constants with the same bits), no interior padding on d and a positive
    low (high) edge on d: those rows are all v, so they join the outer pad's edge (its other dims'
    padding and crops are unchanged; an inner pad left with no padding is its operand). The outer
    pad then meets what a pad_of_pad or concatenate_of_pads can merge.
    """
    plan = plan_pad_of_concatenate(op)
    if isinstance(plan, str):
        return plan
    d, taken = plan
    concat = producer(op.operands[0], CONCATENATE)
    values, loc = list(concat.operands), op.location
    low, high, interior = paddings(op)
    with rewriter.ip:
        for end, edge in enumerate(taken):
            if not edge:
                continue
            index = 0 if end == 0 else len(values) - 1
            inner = producer(values[index], PAD)
            il, ih, ii = paddings(inner)
            (il if end == 0 else ih)[d] = 0
            x = inner.operands[0]
            values[index] = x if not any(il + ih + ii) else build(PAD, [x, inner.operands[1]], low=il, high=ih,
                                                                  interior=ii, loc=loc)
            (low if end == 0 else high)[d] += edge
        joined = values[0] if len(values) == 1 else build(CONCATENATE, values, dimension=d, loc=loc)
        out = build(PAD, [joined, op.operands[1]], low=low, high=high, interior=interior, loc=loc)
    rewriter.replace_op(op, [out])


def plan_slice_of_concatenate(op):
    """The operands a slice of a concatenate reads and each one's window along d (pure), or a reason."""
    concat = producer(op.operands[0], CONCATENATE)
    if concat is None:
        return "the operand is not a concatenate"
    d = params_of(concat)["dimension"]
    start, limit, strides = _slice_params(op)
    if strides[d] != 1:
        return "stride along the concatenate's dim"
    if limit[d] <= start[d]:
        return "an empty slice"
    pieces, offset = [], 0
    for i, v in enumerate(concat.operands):
        n = shape_of(v)[d]
        a, b = max(start[d], offset), min(limit[d], offset + n)
        if a < b:
            pieces.append((i, a - offset, b - offset))
        offset += n
    last = shape_of(concat.operands[-1])[d]
    if len(pieces) == len(concat.operands) and pieces[0][1] == 0 and pieces[-1][2] == last:
        return "the slice reads every operand whole along d"
    if len(pieces) > 1 and not has_one_use(concat.result):
        return "the concatenate has other users and the slice reads several operands"
    return d, pieces


def slice_of_concatenate(op, rewriter):
    """concatenate([a, b, c], d)[s] -> concatenate([b[s'], c[s'']], d), or b[s'] when the slice lies in b

    // Pattern: concatenate([a: 3, b: 4], 0)[2:5] -> concatenate([a[2:3], b[0:2]], 0)
    Preconditions: the slice has stride 1 on d and is not empty; it leaves out part of some operand
    along d; when it reads several operands the concatenate has no other user. Each operand read is
    sliced with the slice's start, limit and strides on the other dims (a whole operand, unsliced,
    stays as is), so crops reach the slices and pads the concatenate joins.
    """
    plan = plan_slice_of_concatenate(op)
    if isinstance(plan, str):
        return plan
    d, pieces = plan
    concat = producer(op.operands[0], CONCATENATE)
    start, limit, strides = _slice_params(op)
    loc = op.location
    with rewriter.ip:
        parts = []
        for i, a, b in pieces:
            v = concat.operands[i]
            s, e = list(start), list(limit)
            s[d], e[d] = a, b
            whole = s == [0] * len(s) and e == list(shape_of(v)) and all(t == 1 for t in strides)
            parts.append(v if whole else build(SLICE, [v], start_indices=s, limit_indices=e, strides=strides, loc=loc))
        out = parts[0] if len(parts) == 1 else build(CONCATENATE, parts, dimension=d, loc=loc)
    rewriter.replace_op(op, [out])


PATTERNS = {
    "binary_of_shifted_pads": (BINARY_OPS, binary_of_shifted_pads),
    "binary_of_pad_and_splat": (BINARY_OPS, binary_of_pad_and_splat),
    "select_of_box": ((stablehlo.SelectOp.OPERATION_NAME,), select_of_box),
    "concatenate_of_adjacent_slices": ((CONCATENATE,), concatenate_of_adjacent_slices),
    "pad_of_concatenate": ((PAD,), pad_of_concatenate),
    "slice_of_concatenate": ((SLICE,), slice_of_concatenate),
}
