"""Adjacent slices and concatenates (part of ``pad-push``): adjacent slices of one tensor joined by a
concatenate become one slice (``concatenate_of_adjacent_slices``); a pad of a concatenate takes in the edge
padding of its end operands (``pad_of_concatenate``), and a slice of a concatenate reads only the operands
it overlaps (``slice_of_concatenate``), so crops move into the slices and pads the concatenate joins.
Exact: values are only moved.
"""
from __future__ import annotations

from hloforge.passes._ir import build, has_one_use, params_of, producer, shape_of, slice_params
from hloforge.passes.pad import PAD, SLICE, paddings, same_value, single_use_pad

CONCATENATE = "stablehlo.concatenate"


def _extends(prev, nxt, d) -> bool:
    """Whether slice ``nxt`` continues slice ``prev`` along d (same source and other dims, same stride)."""
    if prev.operands[0] != nxt.operands[0]:
        return False
    (s1, l1, t1), (s2, l2, t2) = slice_params(prev), slice_params(nxt)
    for i in range(len(s1)):
        if i != d and (s1[i], l1[i], t1[i]) != (s2[i], l2[i], t2[i]):
            return False
    count = shape_of(prev.result)[d]
    return t1[d] == t2[d] and s2[d] == s1[d] + count * t1[d]


def plan_concatenate_of_adjacent_slices(op):
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
    plan = plan_concatenate_of_adjacent_slices(op)
    if isinstance(plan, str):
        return plan
    d, loc = params_of(op)["dimension"], op.location
    values = list(op.operands)
    with rewriter.ip:
        for i, j in reversed(plan):
            first = producer(values[i], SLICE)
            start, limit, strides = slice_params(first)
            count = sum(shape_of(v)[d] for v in values[i:j])
            limit[d] = start[d] + (count - 1) * strides[d] + 1
            x = first.operands[0]
            whole = start == [0] * len(start) and limit == list(shape_of(x)) and all(s == 1 for s in strides)
            values[i:j] = [x if whole else build(SLICE, [x], start_indices=start, limit_indices=limit,
                                                 strides=strides, loc=loc)]
        out = values[0] if len(values) == 1 else build(CONCATENATE, values, dimension=d, loc=loc)
    rewriter.replace_op(op, [out])


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
        inner = single_use_pad(operand)
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
    start, limit, strides = slice_params(op)
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
    start, limit, strides = slice_params(op)
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
    "concatenate_of_adjacent_slices": ((CONCATENATE,), concatenate_of_adjacent_slices),
    "pad_of_concatenate": ((PAD,), pad_of_concatenate),
    "slice_of_concatenate": ((SLICE,), slice_of_concatenate),
}
