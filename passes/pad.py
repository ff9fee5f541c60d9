"""Pad canonicalization: remove, merge, fold and push ``stablehlo.pad`` towards the arguments.

Every pattern is exact: the rewritten IR computes the same values bit for bit (``unary_of_pad`` of a
function XLA may round differently when it folds it only under finite math).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from hloforge.frontend.context import ir
from hloforge.frontend.registry import OPS, names
from hloforge.passes._ir import (
    MAX_FOLD, broadcast_scalar, build, constant, constant_value, dtype_of, element_type, evaluate,
    finite_math, has_one_use, ints, needs_operand, params_of, producer, rebuild, shape_of, slice_params, splat_value)

PAD, SLICE = "stablehlo.pad", "stablehlo.slice"
MOVEMENT = frozenset(names("movement")) | {PAD}
_SIMPLIFIED = frozenset(f"stablehlo.{n}" for n in ("add", "subtract", "multiply", "divide", "remainder", "power"))
CONSTANT_LOOKS = 64  # ops a pad that becomes a broadcast of its padding value looks at below it


def makes_xla_fold(result, padding, x) -> bool:
    """Whether replacing ``result`` (a pad of ``x`` with ``padding``, or a slice of one, all padding) by a
    broadcast of the constant ``padding`` would give
    XLA's constant folders an op to compute that XLA computed at run time before: a user (through data
    movement, ``CONSTANT_LOOKS`` ops deep) whose operands would all be constants. XLA folds such an op
    with its HLO evaluator, which computes complex division, library functions and signed zeros
    otherwise than its kernels (the optimize sweep: ``(-1.5-0j) / (1.5+0j)`` folded to ``-1-0j``, the
    kernel gives ``-1+0j``); or float or complex arithmetic with a run-time operand, which XLA's
    simplifier rewrites next to a constant (``x / c`` as ``x * (1/c)``, the same -1-0j). A padding value
    computed at run time, or a pad of constants, changes nothing."""
    from hloforge.passes.fold import computed_at_run_time  # (fold imports this module's neighbours)
    if computed_at_run_time(padding, [CONSTANT_LOOKS]) or not computed_at_run_time(x, [CONSTANT_LOOKS]):
        return False
    stack, constant_values, looks = [result], set(), CONSTANT_LOOKS
    while stack:
        value = stack.pop()
        constant_values.add(value)
        for use in value.uses:
            user = use.owner
            looks -= 1
            if looks < 0:
                return True  # (too far to tell: as if it did)
            if not isinstance(getattr(user, "name", None), str) or user.name.startswith("func."):
                continue
            others = [v for v in user.operands if v not in constant_values]
            if any(computed_at_run_time(v, [CONSTANT_LOOKS]) for v in others):
                if user.name in _SIMPLIFIED and np.dtype(dtype_of(value)).kind in "fc":
                    return True  # (a constant operand: XLA rewrites x / c as x * (1/c), drops x + 0, ...)
                continue  # (XLA still computes it at run time)
            if user.name not in MOVEMENT:
                return True
            stack.extend(user.results)
    return False



def folds_otherwise(op, v, w) -> bool:
    """Whether ``f(v, w)`` (``op``'s operation, its attributes kept, on the values ``v`` and ``w``) is an op
    of two constants whose value the registry's ``evaluate`` declines: XLA would fold it with its HLO
    evaluator, which computes it otherwise than the kernel that computed it at run time before the
    rewrite (the optimize sweep: ``(nan+0j) / (1+0j)``, nan+nanj at run time, folded to nan+0j); or a
    value computed from constants by ops, which XLA folds too (an op of a run-time value is not). Never
    under finite math, as ``pad_arith._xla_folds``."""
    from hloforge.passes.fold import computed_at_run_time  # (fold imports this module's neighbours)
    if finite_math():  # (signed zeros and NaN parts, where the evaluator and the kernels differ, are what it allows)
        return False
    a, b = scalar_constant(v), scalar_constant(w)
    for value, found in ((v, a), (w, b)):
        if found is None and not computed_at_run_time(value, [CONSTANT_LOOKS]):
            return True  # (computed from constants by ops: XLA folds it, and hloforge cannot tell how)
    if a is None or b is None:
        return False
    try:
        return evaluate(op.name, a, b, **params_of(op)) is None
    except (TypeError, ValueError, ArithmeticError):
        return True


def paddings(op):
    """(low, high, interior) of a pad op, as lists."""
    p = params_of(op)
    return list(p["low"]), list(p["high"]), list(p["interior"])


def scalar_constant(value):
    """The 0-d numpy value of a splat constant, or of a convert chain over one; else None."""
    s = splat_value(value)
    if s is not None:
        return s
    conv = producer(value, "stablehlo.convert")
    if conv is None:
        return None
    inner = scalar_constant(conv.operands[0])
    return None if inner is None else evaluate("stablehlo.convert", inner, dtype=dtype_of(value))


def splat_of(value):
    """The 0-d value of a splat constant or of a broadcast of a 0-d constant, else None."""
    b = producer(value, "stablehlo.broadcast_in_dim")
    if b is not None and shape_of(b.operands[0]) == ():
        return scalar_constant(b.operands[0])
    return scalar_constant(value)


def edge_paddings(pad):
    """(low, high) of a pad with no interior padding and no crops, else None."""
    low, high, interior = paddings(pad)
    if any(interior) or any(p < 0 for p in low + high):
        return None
    return low, high


def is_zero_scalar(value) -> bool:
    """Whether ``value`` is a zero constant (either sign), through converts and broadcasts of a 0-d one."""
    v = scalar_constant(value)
    return v is not None and bool(v == 0)


def is_float(value) -> bool:
    """Whether ``value``'s elements are floating point or complex (bf16 included)."""
    return dtype_of(value).kind in "fcV" or str(element_type(value)) == "bf16"


def support_of(pad):
    """(low, high) of x's elements inside the pad's result, per dim; None with interior or crops."""
    low, high, interior = paddings(pad)
    if any(interior) or any(p < 0 for p in low + high):
        return None
    n = shape_of(pad.operands[0])
    return [(lo, lo + k) for lo, k in zip(low, n)]


def single_use_pad(value):
    """The pad that makes ``value`` when ``value`` has no other user, else None."""
    p = producer(value, PAD)
    return p if p is not None and has_one_use(p.result) else None


def same_value(a, b) -> bool:
    """True when ``a`` and ``b`` are the same SSA value or constants with identical bits."""
    if a == b:
        return True
    ca, cb = scalar_constant(a), scalar_constant(b)
    return ca is not None and cb is not None and ca.dtype == cb.dtype and ca.tobytes() == cb.tobytes()


def plan_noop_pad(op):
    """The operand for ``noop_pad`` at the pad ``op`` (pure), or why it does not fire."""
    low, high, interior = paddings(op)
    if any(low) or any(high) or any(interior):
        return "the pad pads"
    return op.operands[0]


def noop_pad(op, rewriter):
    """pad(x, v, low=0, high=0, interior=0) -> x

    Preconditions: every edge and interior padding is 0.
    """
    x = plan_noop_pad(op)
    if isinstance(x, str):
        return x
    rewriter.replace_op(op, [x])


def plan_pad_of_empty(op):
    """The padding value for ``pad_of_empty`` at the pad ``op`` (pure), or why it does not fire."""
    if 0 not in shape_of(op.operands[0]):
        return "x has elements"
    if makes_xla_fold(op.result, *reversed(list(op.operands))):
        return "the broadcast would give XLA's constant folder an op it computed at run time (makes_xla_fold)"
    return op.operands[1]


def pad_of_empty(op, rewriter):
    """pad(x, v, ...) -> broadcast(v)

    Preconditions: x has no elements, so every result element is the padding value; the padding value
    is computed at run time, or no op below would then have constant operands only (``makes_xla_fold``).
    """
    v = plan_pad_of_empty(op)
    if isinstance(v, str):
        return v
    with rewriter.ip:
        out = broadcast_scalar(v, shape_of(op.result), op.location)
    rewriter.replace_op(op, [out])


class _Value(NamedTuple):
    value: object  # (a tuple, so that a zero is a plan and not a falsy "no")


def plan_pad_of_splat(op):
    """The splat value (a numpy scalar) for ``pad_of_splat`` at the pad ``op`` (pure), or why it does
    not fire."""
    c = splat_value(op.operands[0])
    if c is None:
        return "the operand is not a splat constant"
    v = scalar_constant(op.operands[1])
    if v is None or v.tobytes() != c.tobytes():
        return "the padding value is not a constant with the splat's bits"
    return _Value(c)


def pad_of_splat(op, rewriter):
    """pad(splat c, c, ...) -> splat c (of the padded shape)

    Preconditions: the operand is a splat constant whose value has the same bits as the
    constant padding value.
    """
    plan = plan_pad_of_splat(op)
    if isinstance(plan, str):
        return plan
    with rewriter.ip:
        out = constant(plan.value, op.result.type, op.location)
    rewriter.replace_op(op, [out])


def plan_pad_of_constant(op):
    """The folded value (a numpy array) for ``pad_of_constant`` at the pad ``op`` (pure), or why it
    does not fire."""
    x = op.operands[0]
    if producer(x, "stablehlo.constant") is None:
        return "the operand is not a constant"
    if np.prod(shape_of(op.result)) > MAX_FOLD:
        return f"the result has more than {MAX_FOLD} elements"
    c, v = constant_value(x), scalar_constant(op.operands[1])
    if c is None or v is None:
        return "the operand or the padding value is not a readable constant"
    return _Value(evaluate(PAD, np.asarray(c), v, **dict(zip(("low", "high", "interior"), paddings(op)))))


def pad_of_constant(op, rewriter):
    """pad(c, v, low, high, interior) -> constant

    Preconditions: c and v are constants and the result has at most 1024 elements.
    """
    plan = plan_pad_of_constant(op)
    if isinstance(plan, str):
        return plan
    with rewriter.ip:
        out = constant(plan.value, op.result.type, op.location)
    rewriter.replace_op(op, [out])


def plan_pad_of_pad(op):
    """(the inner pad, low, high) for ``pad_of_pad`` at the outer pad ``op`` (pure), or why it does
    not fire."""
    inner = producer(op.operands[0], PAD)
    if inner is None:
        return "the operand is not a pad"
    l2, h2, i2 = paddings(op)
    l1, h1, i1 = paddings(inner)
    if any(i1) or any(i2):
        return "a pad has interior padding"
    if any(a < 0 < b for a, b in zip(l1 + h1, l2 + h2)):
        return "the inner pad crops a side the outer pads"
    if not same_value(inner.operands[1], op.operands[1]):
        return "the pads pad with different values"
    return inner, [a + b for a, b in zip(l1, l2)], [a + b for a, b in zip(h1, h2)]


def pad_of_pad(op, rewriter):
    """pad(pad(x, v, l1, h1), v, l2, h2) -> pad(x, v, l1 + l2, h1 + h2)

    Preconditions: both padding values are equal (the same value, or constants with the same
    bits, also through converts); both interiors are 0; on every side the inner padding is
    >= 0 or the outer one <= 0 (an inner crop followed by an outer pad would bring back
    padding where x's cropped elements were).
    """
    plan = plan_pad_of_pad(op)
    if isinstance(plan, str):
        return plan
    inner, low, high = plan
    with rewriter.ip:
        out = build(PAD, [inner.operands[0], op.operands[1]], low=low, high=high, interior=[0] * len(low),
                    loc=op.location)
    rewriter.replace_op(op, [out])


class _Crop(NamedTuple):
    start: list     # x's slice
    limit: list
    low: list       # the padding left around it
    high: list
    empty: bool     # no element of x is left: the result is a broadcast of v


def plan_negative_pad(op):
    """The plan of ``negative_pad`` for the pad ``op`` (pure), or why it does not fire."""
    low, high, interior = paddings(op)
    if all(p >= 0 for p in low + high):
        return "no edge padding is negative"
    if any(it and (lo < 0 or hi < 0) for lo, hi, it in zip(low, high, interior)):
        return "a dimension that crops has interior padding"
    shape, result = shape_of(op.operands[0]), shape_of(op.result)
    start = [min(max(-lo, 0), n) for lo, n in zip(low, shape)]
    limit = [max(a, min(n + hi, n)) if not it else n for a, n, hi, it in zip(start, shape, high, interior)]
    kept = [b - a + max(b - a - 1, 0) * it for a, b, it in zip(start, limit, interior)]
    new_low = [min(max(lo, 0), r) for lo, r in zip(low, result)]
    new_high = [r - lo - k for r, lo, k in zip(result, new_low, kept)]
    empty = any(a == b for a, b in zip(start, limit))
    if empty and makes_xla_fold(op.result, op.operands[1], op.operands[0]):
        return "no element of x is left, and the broadcast would give XLA's constant folder an op (makes_xla_fold)"
    return _Crop(start, limit, new_low, new_high, empty)


def negative_pad(op, rewriter):
    """pad(x, v, low, high) -> slice(x), or pad(slice(x), v, low', high'), or broadcast(v)

    Preconditions: some edge padding is negative (a crop) and the interior padding is 0 on
    every dimension that crops; all-nonpositive padding becomes a bare slice. A crop may
    reach past x into the padding on the other side (``pad(x: 2, low=-3, high=2)`` has one
    element, the padding value): x's slice is clamped to x and the padding kept is what is
    left of the result, so the slice never starts past its limit; when no element of x is
    left on some dimension the result is a broadcast of v, unless that gives XLA's constant folder an
    op it computed at run time (``makes_xla_fold``).
    """
    plan = plan_negative_pad(op)
    if isinstance(plan, str):
        return plan
    interior = paddings(op)[2]
    with rewriter.ip:
        if plan.empty:
            out = broadcast_scalar(op.operands[1], shape_of(op.result), op.location)
        else:
            out = build(SLICE, [op.operands[0]], start_indices=plan.start, limit_indices=plan.limit,
                        strides=[1] * len(plan.start), loc=op.location)
            if any(plan.low) or any(plan.high) or any(interior):
                out = build(PAD, [out, op.operands[1]], low=plan.low, high=plan.high, interior=interior,
                            loc=op.location)
    rewriter.replace_op(op, [out])


def plan_slice_of_pad(op):
    """(the pad, x's slice start and limit, the padding left, whether the slice is all padding) for
    ``slice_of_pad`` at the slice ``op`` (pure), or why it does not fire."""
    pad = producer(op.operands[0], PAD)
    if pad is None:
        return "the operand is not a pad"
    low, high, interior = paddings(pad)
    if any(interior):
        return "the pad has interior padding (slice_of_interior_pad's case)"
    x = pad.operands[0]
    plan = _slice_through_pad(shape_of(x), low, high, *slice_params(op))
    if plan is None:
        return "the slice has a stride on a padded dimension"
    xs, xe, new_low, new_high, empty = plan
    if empty and makes_xla_fold(op.result, pad.operands[1], x):
        return "the slice is all padding, and its broadcast would give XLA's constant folder an op (makes_xla_fold)"
    if not empty and (any(new_low) or any(new_high)) and not has_one_use(pad.result):
        return "the pad has other users and padding would be left"  # (a second, smaller pad would add an op)
    return pad, xs, xe, new_low, new_high, empty


@needs_operand(PAD)
def slice_of_pad(op, rewriter):
    """slice(pad(x, v, low, high)) -> pad(slice(x), v, low', high'), x, or broadcast(v)

    Preconditions: the pad's interior is 0 and the slice's stride is 1 on every padded
    dimension; when the result still needs padding, the pad has no other user. When the slice
    lies wholly in the padding the result is a broadcast of v, unless that gives XLA's constant
    folder an op it computed at run time (``makes_xla_fold``).
    """
    plan = plan_slice_of_pad(op)
    if isinstance(plan, str):
        return plan
    pad, xs, xe, new_low, new_high, empty = plan
    x, strides = pad.operands[0], ints(op, "strides")
    with rewriter.ip:
        if empty:
            out = broadcast_scalar(pad.operands[1], shape_of(op.result), op.location)
        else:
            out = x
            if xs != [0] * len(xs) or xe != list(shape_of(x)) or any(s != 1 for s in strides):
                out = build(SLICE, [x], start_indices=xs, limit_indices=xe, strides=strides, loc=op.location)
            if any(new_low) or any(new_high):
                out = build(PAD, [out, pad.operands[1]], low=new_low, high=new_high, interior=[0] * len(xs),
                            loc=op.location)
    rewriter.replace_op(op, [out])


def _slice_through_pad(shape, low, high, start, limit, strides):
    """Per dimension: x's slice [xs, xe) and the padding left before and after it."""
    xs, xe, new_low, new_high, empty = [], [], [], [], False
    for n, lo, hi, s, l, st in zip(shape, low, high, start, limit, strides):
        if lo == 0 and hi == 0:
            xs.append(s), xe.append(l), new_low.append(0), new_high.append(0)
            empty |= l <= s
            continue
        if st != 1:
            return None
        a, b = min(max(s - lo, 0), n), min(max(l - lo, 0), n)
        b = max(a, b)
        before = min(max(lo - s, 0), l - s)
        xs.append(a), xe.append(b), new_low.append(before), new_high.append(l - s - before - (b - a))
        empty |= b == a
    return xs, xe, new_low, new_high, empty


def plan_unary_of_pad(op):
    """The pad of ``unary_of_pad`` for the unary ``op`` (pure), or why it does not fire."""
    pad = producer(op.operands[0], PAD)
    if pad is None:
        return "the operand is not a pad"
    if not has_one_use(pad.result):
        return "the pad has other users (unary_of_shared_pad's case)"
    if not unary_keeps_bits(op, pad.operands[1]):
        return "without finite math, f(v) is not a constant the registry evaluates"
    return pad


@needs_operand(PAD)
def unary_of_pad(op, rewriter):
    """f(pad(x, v, low, high, interior)) -> pad(f(x), f(v), low, high, interior)

    Preconditions: f is an elementwise unary op (or convert) and the pad has no other user;
    without finite math, v is a constant whose f(v) evaluate computes. (XLA computed f(v) with
    its kernels, and now folds f(v) or runs it on one element: for library functions such as
    tanh or exp that can round differently, so under finite math only.)
    """
    pad = plan_unary_of_pad(op)
    if isinstance(pad, str):
        return pad
    x, v = pad.operands
    with rewriter.ip:
        out = rebuild(pad, [rebuild(op, [x]), rebuild(op, [v])])
    rewriter.replace_op(op, [out])


def unary_keeps_bits(op, v) -> bool:
    """Whether the unary ``op`` may move onto the padding value ``v``: under finite math, or when
    ``v`` is a constant on which the registry evaluates ``op`` (bit for bit what XLA computes)."""
    if finite_math():
        return True
    value = splat_value(v)
    info = OPS[op.name]
    return value is not None and info.evaluate is not None and info.evaluate(value, **params_of(op)) is not None


def _window_of(pad):
    """(x, start, limit) when ``pad`` pads x, or a stride-1 slice x[start:limit] with no other user,
    on some side, with no interior padding and no crops, each padded side of the slice reaching x's edge: then the
    pad is the window [start - low, limit + high) (in x's coordinates) of a pad of x. Else None."""
    low, high, interior = paddings(pad)
    if any(interior) or any(p < 0 for p in low + high) or not any(low + high):
        return None
    x = pad.operands[0]
    start, limit = [0] * len(low), list(shape_of(x))
    sl = producer(x, "stablehlo.slice")
    if sl is not None and has_one_use(x) and all(st == 1 for st in ints(sl, "strides")):
        x, start, limit = sl.operands[0], ints(sl, "start_indices"), ints(sl, "limit_indices")
    n = shape_of(x)
    if any((lo and s) or (hi and e != k) for lo, hi, s, e, k in zip(low, high, start, limit, n)):
        return None
    return x, start, limit


class _WindowsPlan(NamedTuple):
    x: object
    members: list  # the pads, in the order of ``windows``
    windows: list  # each pad's (begin, end) in x's coordinates
    low: list      # the common pad's paddings
    high: list
    first: object  # the member first in the block: the common pad goes before it


def plan_pads_of_windows(op):
    """The plan of ``pads_of_windows`` for the pad ``op`` (pure), or why it does not fire."""
    mine = _window_of(op)
    if mine is None:
        return "not a pad of x or of a slice of x that reaches x's edge on every padded side"
    x, v, block = mine[0], op.operands[1], op.operation.block
    group = {}
    for use in x.uses:
        user = use.owner
        if user.name == "stablehlo.slice" and has_one_use(user.result):
            user = next(iter(user.result.uses)).owner
        if user.name != PAD or user.result in group or user.operation.block != block:
            continue
        found = _window_of(user)
        if found is not None and found[0] == x and same_value(user.operands[1], v):
            group[user.result] = (user, found[1], found[2])
    if len(group) < 2:
        return "no other window of the same x padded with the same value in this block"
    n, members = shape_of(x), list(group.values())
    windows = []
    for pad, start, limit in members:
        low, high, _ = paddings(pad)
        windows.append(([s - lo for s, lo in zip(start, low)], [e + hi for e, hi in zip(limit, high)]))
    big_low = [max([0] + [-w[0][d] for w in windows]) for d in range(len(n))]
    big_high = [max([0] + [w[1][d] - n[d] for w in windows]) for d in range(len(n))]
    whole = ([-lo for lo in big_low], [k + hi for k, hi in zip(n, big_high)])
    slices_gone = sum(pad.operands[0] != x for pad, _, _ in members)
    after = 1 + sum(w != whole for w in windows)
    if after > len(members) + slices_gone:
        return f"it would leave more ops ({after} for {len(members) + slices_gone})"
    pads = [pad for pad, _, _ in members]
    first = min(pads, key=lambda p: sum(q.operation.is_before_in_block(p.operation) for q in pads))
    return _WindowsPlan(x, pads, windows, big_low, big_high, first)


def pads_of_windows(op, rewriter):
    """pad(x[s:e], v, l, h), pad(x[s':e'], v, l', h') -> slices [s - l + L, e + h + L) of pad(x, v, L, H)

    Preconditions: two or more pads in one block pad x itself or stride-1 slices of x (slices with
    no other user) with the same value v (the same value, or constants with the same bits), with no
    interior padding and no crops, and every side a pad pads is a side where its slice reaches x's
    edge (so each pad is a window of one pad of x; L and H are the largest paddings past x's edges);
    fires only when that leaves no more ops (one slice at least disappears, or one pad is the whole
    common pad). Each window reaches into the padding, so slice_of_pad leaves the slices alone.
    """
    plan = plan_pads_of_windows(op)
    if isinstance(plan, str):
        return plan
    n, low = shape_of(plan.x), plan.low
    whole = ([-lo for lo in low], [k + hi for k, hi in zip(n, plan.high)])
    with ir.InsertionPoint(plan.first.operation), op.location:
        common = build(PAD, [plan.x, plan.first.operands[1]], low=low, high=plan.high, interior=[0] * len(n),
                       loc=op.location)
    for pad, (begin, end) in zip(plan.members, plan.windows):
        if (begin, end) == whole:
            rewriter.replace_op(pad, [common])
            continue
        with ir.InsertionPoint(pad.operation):
            out = build(SLICE, [common], start_indices=[b + lo for b, lo in zip(begin, low)],
                        limit_indices=[e + lo for e, lo in zip(end, low)], strides=[1] * len(n), loc=pad.location)
        rewriter.replace_op(pad, [out])


UNARY_OPS = names("elementwise", "unary")

PATTERNS = {
    "noop_pad": ((PAD,), noop_pad),
    "pad_of_empty": ((PAD,), pad_of_empty),
    "pad_of_splat": ((PAD,), pad_of_splat),
    "pad_of_constant": ((PAD,), pad_of_constant),
    "pad_of_pad": ((PAD,), pad_of_pad),
    "negative_pad": ((PAD,), negative_pad),
    "slice_of_pad": (("stablehlo.slice",), slice_of_pad),
    "unary_of_pad": (UNARY_OPS, unary_of_pad),
    "pads_of_windows": ((PAD,), pads_of_windows),
}
