"""Pad pushing's concatenates (the ``pad-push`` family; its table is ``pad_push.PATTERNS``).

A concatenate of pads, crops and splat blocks becomes one pad of the remaining pieces (never on a
shape computation, which shape refinement folds), nested concatenates along one dim become one,
and empty concatenate operands are dropped (the compile path's guards apply that one too). Every
pattern is exact.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from hloforge.frontend.context import ir
from hloforge.passes._ir import (
    broadcast_scalar, build, constant, dtype_of, element_type, has_one_use, ints, params_of,
    producer, shape_of, slice_params, tensor)
from hloforge.passes.pad import PAD, SLICE, paddings, same_value, scalar_constant, single_use_pad, splat_of

CONCATENATE = "stablehlo.concatenate"



# ops whose operands after the first (every operand of dynamic_iota) are shapes, sizes or paddings
SHAPE_CONSUMERS = ("stablehlo.dynamic_broadcast_in_dim", "stablehlo.dynamic_reshape", "stablehlo.dynamic_iota",
                   "stablehlo.dynamic_pad", "stablehlo.real_dynamic_slice", "stablehlo.dynamic_gather",
                   "stablehlo.dynamic_conv")


def _is_small_int(value) -> bool:
    """An integer (or index) tensor of rank 0 or 1: what a shape is computed in."""
    t = value.type
    if not isinstance(t, ir.RankedTensorType):
        return False
    return t.rank <= 1 and isinstance(t.element_type, (ir.IntegerType, ir.IndexType))


def _feeds_a_shape(value, depth: int) -> bool:
    for use in value.uses:
        user = use.owner
        if user.name in SHAPE_CONSUMERS and (use.operand_number > 0 or user.name == "stablehlo.dynamic_iota"):
            return True
        if depth and len(user.results) == 1 and _is_small_int(user.results[0]) and \
                _feeds_a_shape(user.results[0], depth - 1):
            return True
    return False


def _from_dimension_sizes(value, depth: int) -> bool:
    op = producer(value)
    if op is None:
        return False
    if op.name == "stablehlo.get_dimension_size":
        return True
    return bool(depth) and any(_is_small_int(v) and _from_dimension_sizes(v, depth - 1) for v in op.operands)


def is_shape_computation(value, depth: int = 8) -> bool:
    """``value``, a small integer tensor, feeds a shape operand of a dynamic op or is computed from
    a ``get_dimension_size``. Such values are left to shape refinement, whose folds know
    concatenates, reshapes, slices and integer arithmetic of dimension sizes but not pads: a pad
    there leaves a dynamic op XLA cannot translate."""
    return _is_small_int(value) and (_feeds_a_shape(value, depth) or _from_dimension_sizes(value, depth))


class _ConcatPlan(NamedTuple):
    d: int  # the concatenate's dimension
    v: object  # the padding value (0-d numpy array), or None
    v_op: object  # the Value holding it, or None
    outer: list  # (low, high, interior) of each other dimension, shared by every pad
    outer_padded: bool
    pads: list  # the pads opened
    merged: list  # the segments along d: ("v", n) | ("x", source, start, stop) | ("value", value)
    lead: int  # v elements before the segments, and after them
    trail: int
    single: object  # the one ("x", ...) segment left, or None
    needs_v: bool
    bare: bool  # no padding left around the segments


def _crops_within(pad, d: int) -> bool:
    """Whether ``pad``'s crops on dim ``d`` leave some of its operand (a crop reaching past it, as in
    ``pad(x: 1, low=-2, high=0)``, is ``negative_pad``'s: its segment would start past its end; the optimize
    sweep's seed 59 raised on it once makes_xla_fold kept such a pad)."""
    low, high, _ = paddings(pad)
    return max(-low[d], 0) <= shape_of(pad.operands[0])[d] - max(-high[d], 0)


def plan_concatenate_of_pads(op):
    """The plan of ``concatenate_of_pads`` for ``op`` (pure): the merged segments along d and the outer
    padding, or the reason it does not fire."""
    if is_shape_computation(op.result):
        return "a shape computation (left to shape refinement)"
    d = params_of(op)["dimension"]
    rank = len(shape_of(op.result))
    pads = [p for p in (single_use_pad(v) for v in op.operands)
            if p is not None and not paddings(p)[2][d] and _crops_within(p, d)]
    if pads:
        v_op = pads[0].operands[1]
        if any(not same_value(p.operands[1], v_op) for p in pads):
            return "the pads pad with different values"
        v = scalar_constant(v_op)
    else:
        v_op, v = None, splat_of(op.operands[0])
        if v is None:
            v = splat_of(op.operands[-1])  # (None: only neighbouring crops can merge)
    outer = None  # the padding of the other dims, shared by every pad
    for p in pads:
        low, high, interior = paddings(p)
        other = [(low[i], high[i], interior[i]) for i in range(rank) if i != d]
        if outer is not None and other != outer:
            return "the pads pad the other dimensions differently"
        outer = other
    outer = outer or [(0, 0, 0)] * (rank - 1)
    outer_padded = any(any(t) for t in outer)
    pad_results = [p.result for p in pads]
    segments, before = [], 1  # ("v", n) | ("x", source, start, stop) | ("value", value)
    for o in op.operands:
        fill = splat_of(o)
        if v is not None and fill is not None and fill.dtype == v.dtype and fill.tobytes() == v.tobytes():
            segments.append(("v", shape_of(o)[d]))
            before += 1
        elif o in pad_results:
            p = producer(o, PAD)
            low, high, _ = paddings(p)
            a, n = p.operands[0], shape_of(p.operands[0])[d]
            segments += [("v", max(low[d], 0)), ("x", a, max(-low[d], 0), n - max(-high[d], 0)),
                         ("v", max(high[d], 0))]
            before += 1
        elif outer_padded:
            return "an operand that is not a pad or a v block sits beside pads of the other dimensions"
        elif (sl := producer(o, "stablehlo.slice")) is not None and has_one_use(sl.result) and _whole_but(sl, d):
            segments.append(("x", sl.operands[0], ints(sl, "start_indices")[d], ints(sl, "limit_indices")[d]))
            before += 1
        else:
            segments.append(("value", o))
    merged = _merge(segments)
    lead = merged.pop(0)[1] if merged and merged[0][0] == "v" else 0
    trail = merged.pop()[1] if merged and merged[-1][0] == "v" else 0
    if not merged:
        return "all padding (pad_of_splat and constant folding see to that)"
    single = None
    if len(merged) == 1 and merged[0][0] == "x":
        _, src, start, stop = merged[0]
        if (not lead or not start) and (not trail or stop == shape_of(src)[d]):
            single = merged[0]
    needs_v = bool(lead or trail or outer_padded or any(s[0] == "v" for s in merged))
    bare = not (lead or trail or outer_padded)
    if single is not None:
        after = int(single[2] != 0 or single[3] != shape_of(single[1])[d]) if bare else 1 + (v_op is None)
    else:
        after = (sum(_piece_ops(s, d) for s in merged) + (len(merged) > 1) + bool(lead or trail or outer_padded)
                 + (v_op is None and needs_v))
    if after >= before:
        return f"it would not leave fewer ops ({after} for {before})"
    return _ConcatPlan(d, v, v_op, outer, outer_padded, pads, merged, lead, trail, single, needs_v, bare)


def concatenate_of_pads(op, rewriter):
    """concatenate([pad(a, v, ...), v-block, slice(a'), ...], d) -> pad(concatenate(pieces), v, ...)

    Preconditions: along d the operands are pads (interior 0 on d, crops that leave some of the operand:
    ``_crops_within``), stride-1 slices covering whole
    other dims, blocks filled with v, or other values; all pads pad with v (the same value or equal
    constants) and either pad no other dim alike, or pad every other dim alike while every operand
    is a pad or a v block. Pads and slices with no other user are opened: v runs merge, neighbouring
    crops of one tensor merge (also with no v anywhere: concatenate([x[:k], x[k:]]) -> x), the runs
    at both ends become the outer pad's edges (a single remaining crop of x becomes pad(x, v) with
    negative edges where no run meets it). Fires only when that leaves fewer ops, and never on a
    shape computation (``is_shape_computation``: those are left to shape refinement).
    """
    plan = plan_concatenate_of_pads(op)
    if isinstance(plan, str):
        return plan
    d, v, v_op, outer, outer_padded, pads, merged, lead, trail, single, needs_v, bare = plan
    loc = op.location
    low, high, interior = [t[0] for t in outer], [t[1] for t in outer], [t[2] for t in outer]
    with rewriter.ip:
        if v_op is None and needs_v:
            v_op = constant(v, tensor([], element_type(op.result)), loc)
        if single is not None and bare:
            out = _materialize(single, d, v_op, None, loc)
        elif single is not None:
            _, src, start, stop = single
            low.insert(d, lead - start), high.insert(d, trail - (shape_of(src)[d] - stop)), interior.insert(d, 0)
            out = build(PAD, [src, v_op], low=low, high=high, interior=interior, loc=loc)
        else:
            block = list(shape_of(pads[0].operands[0]) if outer_padded else shape_of(op.result))
            pieces = [_materialize(s, d, v_op, block, loc) for s in merged]
            out = pieces[0] if len(pieces) == 1 else build(CONCATENATE, pieces, dimension=d, loc=loc)
            low.insert(d, lead), high.insert(d, trail), interior.insert(d, 0)
            if any(low) or any(high) or any(interior):
                out = build(PAD, [out, v_op], low=low, high=high, interior=interior, loc=loc)
    rewriter.replace_op(op, [out])


def _whole_but(s, d) -> bool:
    start, limit, strides = slice_params(s)
    n = shape_of(s.operands[0])
    return strides[d] == 1 and all(start[i] == 0 and limit[i] == n[i] and strides[i] == 1
                                   for i in range(len(n)) if i != d)


def _merge(segments):
    out = []
    for s in segments:
        if (s[0] == "v" and s[1] == 0) or (s[0] == "x" and s[2] == s[3]):
            continue
        last = out[-1] if out else None
        if last and s[0] == last[0] == "v":
            out[-1] = ("v", last[1] + s[1])
        elif last and s[0] == last[0] == "x" and s[1] == last[1] and s[2] == last[3]:
            out[-1] = ("x", last[1], last[2], s[3])
        else:
            out.append(s)
    return out


def _piece_ops(s, d) -> int:
    """Ops that materialize one piece: a broadcast for a v run, a slice for a crop, none for a value."""
    if s[0] == "v":
        return 1
    if s[0] == "x":
        return int(s[2] != 0 or s[3] != shape_of(s[1])[d])
    return 0


def _materialize(s, d, v_op, block, loc):
    if s[0] == "value":
        return s[1]
    if s[0] == "v":
        shape = list(block)
        shape[d] = s[1]
        return broadcast_scalar(v_op, shape, loc)
    _, src, start, stop = s
    n = list(shape_of(src))
    if start == 0 and stop == n[d]:
        return src
    begin, end = [0] * len(n), list(n)
    begin[d], end[d] = start, stop
    return build(SLICE, [src], start_indices=begin, limit_indices=end, strides=[1] * len(begin), loc=loc)


def plan_empty_concatenate_operands(op):
    """The operands' element counts for ``empty_concatenate_operands`` at ``op`` (pure), or why it does not fire."""
    sizes = [math.prod(shape_of(v)) for v in op.operands]
    return "no operand has zero elements" if all(sizes) else sizes


def empty_concatenate_operands(op, rewriter):
    """concatenate([a, e, b], d) -> concatenate([a, b], d); a single operand left replaces the op

    Preconditions: e has no elements. A result with no elements becomes an operand of its type,
    else an empty constant. (XLA:CPU aborts the process on a slice that reaches into an empty
    operand, ``slice(concatenate([x: 2, e: 0]), [2:2])``; the compile path applies this too.)
    """
    sizes = plan_empty_concatenate_operands(op)
    if isinstance(sizes, str):
        return sizes
    with rewriter.ip:
        if not math.prod(shape_of(op.result)):
            same = [v for v in op.operands if v.type == op.result.type]
            out = same[0] if same else constant(np.zeros(shape_of(op.result), dtype_of(op.result)),
                                                op.result.type, op.location)
        else:
            kept = [v for v, n in zip(op.operands, sizes) if n]
            d = params_of(op)["dimension"]
            out = kept[0] if len(kept) == 1 else build(CONCATENATE, kept, dimension=d, loc=op.location)
    rewriter.replace_op(op, [out])
    return None


def plan_concatenate_of_concatenate(op):
    """The flattened operands for ``concatenate_of_concatenate`` at ``op`` (pure), or why it does not fire."""
    d = params_of(op)["dimension"]
    flat, changed = [], False
    for o in op.operands:
        inner = producer(o, "stablehlo.concatenate")
        if inner is not None and has_one_use(inner.result) and params_of(inner)["dimension"] == d:
            flat += list(inner.operands)
            changed = True
        else:
            flat.append(o)
    return flat if changed else "no operand is a concatenate along the same dimension with no other user"


def concatenate_of_concatenate(op, rewriter):
    """concatenate([a, concatenate([b, c], d), e], d) -> concatenate([a, b, c, e], d)

    Preconditions: the inner concatenate joins along the same dimension and has no other user.
    """
    flat = plan_concatenate_of_concatenate(op)
    if isinstance(flat, str):
        return flat
    with rewriter.ip:
        out = build(CONCATENATE, flat, dimension=params_of(op)["dimension"], loc=op.location)
    rewriter.replace_op(op, [out])



class _AlikeRun(NamedTuple):
    first: int     # the run's first operand
    pads: list     # its pads
    low: list      # the padding they share (0 on d)
    high: list


def _alike_runs(op, d):
    """Runs of two or more adjacent operands that are pads with no other user, one padding value, no
    interior padding, no crops and no padding on ``d``, with the padding all of them share."""
    runs, run = [], []
    for i, value in enumerate(list(op.operands) + [None]):
        pad = None if value is None else single_use_pad(value)
        if pad is not None:
            low, high, interior = paddings(pad)
            if any(interior) or any(p < 0 for p in low + high) or low[d] or high[d]:
                pad = None
        if pad is not None and run and not same_value(pad.operands[1], run[0][1].operands[1]):
            runs.append(run)
            run = []
        if pad is None:
            if len(run) > 1:
                runs.append(run)
            run = []
        else:
            run.append((i, pad))
    out = []
    for run in (r for r in runs if len(r) > 1):
        pads = [p for _, p in run]
        low = [min(paddings(p)[0][k] for p in pads) for k in range(len(shape_of(op.result)))]
        high = [min(paddings(p)[1][k] for p in pads) for k in range(len(shape_of(op.result)))]
        left = sum((paddings(p)[0], paddings(p)[1]) != (low, high) for p in pads)
        if any(low + high) and 1 + left < len(pads):
            out.append(_AlikeRun(run[0][0], pads, low, high))
    return out


def plan_concatenate_of_alike_pads(op):
    """The plan of ``concatenate_of_alike_pads`` (pure): the runs to merge, or why it does not fire."""
    runs = _alike_runs(op, params_of(op)["dimension"])
    return runs or "no run of adjacent pads that share padding of the other dims and would leave fewer pads"


def concatenate_of_alike_pads(op, rewriter):
    """concatenate([.., pad(a, v, l, h), pad(b, v, l, h'), ..], d) -> concatenate([.., pad(concatenate([a, pad(b, v, 0, h' - h)], d), v, l, h), ..], d)

    Preconditions: two or more adjacent operands are pads with no other user, the same padding value
    (the same value, or constants with the same bits), no interior padding, no crops and no padding on
    d; the padding all of them have on the other dims moves outside their concatenate, and what one has
    beyond it stays a pad of its own; fires only when that leaves fewer pads. Exact: values are moved.
    """
    plan = plan_concatenate_of_alike_pads(op)
    if isinstance(plan, str):
        return plan
    d, loc = params_of(op)["dimension"], op.location
    operands = list(op.operands)
    with rewriter.ip:
        for run in reversed(plan):
            parts = []
            for pad in run.pads:
                low, high, _ = paddings(pad)
                rest_low, rest_high = [a - b for a, b in zip(low, run.low)], [a - b for a, b in zip(high, run.high)]
                x = pad.operands[0]
                parts.append(x if not any(rest_low + rest_high) else
                             build(PAD, [x, pad.operands[1]], low=rest_low, high=rest_high,
                                   interior=[0] * len(low), loc=loc))
            inner = build(CONCATENATE, parts, dimension=d, loc=loc)
            merged = build(PAD, [inner, run.pads[0].operands[1]], low=run.low, high=run.high,
                           interior=[0] * len(run.low), loc=loc)
            operands[run.first:run.first + len(run.pads)] = [merged]
        out = merged if len(operands) == 1 else build(CONCATENATE, operands, dimension=d, loc=loc)
    rewriter.replace_op(op, [out])
