"""Pad pushing (``pad-push``): pads move past layout ops and merge through binary ops and concatenates.

Moving a pad below a transpose, reshape or broadcast (``pad_layout``'s patterns) lets it meet the
next pad, slice or FFT (where ``pad-canonicalize`` and ``fft-truncate`` take over); two pads combined by
an elementwise op become one pad (same padding) or one concatenate (disjoint supports); the concatenate
patterns are ``pad_concat``'s, Enzyme-JAX's four families (``ARITH_PATTERNS``) ``pad_arith``'s, ``pad_select``'s
and ``pad_slices``', and ``PATTERNS`` here is the family's one table. Slices move up through
elementwise ops and pads down through products and shared unary ops, so that a gradient's
spectrum masks and conjugations (applied to a whole spectrum between an FFT and the slice or pad
of its modes) no longer hide the truncation from ``fft-truncate``. Every pattern is exact, except
where its docstring says it needs finite math (``optimize(finite_math=False)`` skips those).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from hloforge.frontend.context import stablehlo
from hloforge.frontend.registry import names
from hloforge.passes._ir import (
    broadcast_scalar, build, constant, dtype_of, element_type, finite_math, has_one_use,
    needs_operand, producer, rebuild, shape_of, slice_params, tensor)
from hloforge.passes import pad_arith, pad_layout, pad_select, pad_slices, pad_tensor, pad_window
from hloforge.passes.pad import (
    PAD, SLICE, folds_otherwise, is_float, is_zero_scalar, paddings, same_value, single_use_pad, support_of,
    unary_keeps_bits)
from hloforge.passes.pad_concat import (
    concatenate_of_alike_pads, concatenate_of_concatenate, concatenate_of_pads, empty_concatenate_operands)
from hloforge.passes.pad_tensor import PRODUCT_OPS, SUM_OPS

BINARY_OPS = names("binary")
ARITH_PATTERNS = {**pad_arith.PATTERNS, **pad_select.PATTERNS, **pad_slices.PATTERNS}
ELEMENTWISE_OPS = names("elementwise")
UNARY_OPS = names("elementwise", "unary")


def _zero_pads(op):
    """The two pads ``op`` combines when they are different pads with no other user and a zero
    padding value, else None."""
    pads = [single_use_pad(v) for v in op.operands]
    if any(p is None for p in pads) or pads[0].result == pads[1].result:
        return None
    return pads if all(is_zero_scalar(p.operands[1]) for p in pads) else None


# ---------------------------------------------------------------- through binary ops

def plan_binary_of_pads(op):
    """The two pads of ``binary_of_pads`` for the binary ``op`` (pure), or why it does not fire."""
    pa, pb = producer(op.operands[0], PAD), producer(op.operands[1], PAD)
    if pa is None or pb is None:
        return "an operand is not a pad"
    if paddings(pa) != paddings(pb):
        return "the pads' edge or interior paddings differ"
    if pa.result != pb.result and not (has_one_use(pa.result) and has_one_use(pb.result)):
        return "a pad has another user"
    if folds_otherwise(op, pa.operands[1], pb.operands[1]):
        return "f of the padding values would be an op of constants XLA folds otherwise (folds_otherwise)"
    return pa, pb


@needs_operand(PAD)
def binary_of_pads(op, rewriter):
    """f(pad(a, v, low, high, interior), pad(b, w, low, high, interior)) -> pad(f(a, b), f(v, w), ...)

    Preconditions: f is an elementwise binary op (attributes such as a comparison direction are
    kept); both pads have the same edge and interior paddings (so a and b have one shape); each pad
    has no other user (or both operands are the same pad); f(v, w) of constants is one the registry
    evaluates (``folds_otherwise``).
    """
    plan = plan_binary_of_pads(op)
    if isinstance(plan, str):
        return plan
    pa, pb = plan
    with rewriter.ip:
        core = rebuild(op, [pa.operands[0], pb.operands[0]])
        value = rebuild(op, [pa.operands[1], pb.operands[1]])
        out = rebuild(pa, [core, value], loc=op.location)
    rewriter.replace_op(op, [out])


class _Disjoint(NamedTuple):
    first: object   # the pad whose support comes first on d
    second: object
    d: int
    gap: int        # the zeros between the two supports on d
    low: list       # the padding around the concatenate
    high: list


def plan_sum_of_disjoint_pads(op):
    """The plan of ``sum_of_disjoint_pads`` for the sum ``op`` (pure), or why it does not fire."""
    if is_float(op.result) and not finite_math():  # (of the three, only add takes floats)
        return "a float add without finite math (-0.0 + 0.0 is +0.0)"
    pads = _zero_pads(op)
    if pads is None:
        return "not two different zero pads with no other user"
    return disjoint_pads(pads, shape_of(op.result))


def disjoint_pads(pads, full):
    """The _Disjoint plan for the sum of two zero pads (of result shape ``full``) when their supports are equal
    on every dim but one, where they do not overlap; else why not."""
    sa, sb = support_of(pads[0]), support_of(pads[1])
    if sa is None or sb is None:
        return "a pad has interior padding or crops"
    if any(b <= a for a, b in sa + sb):
        return "a pad pads an empty tensor"  # (pad_of_empty's; it would leave an empty concatenate operand)
    differ = [d for d, (x, y) in enumerate(zip(sa, sb)) if x != y]
    if len(differ) != 1:
        return "the supports differ on more than one dim"
    d = differ[0]
    if sa[d][1] <= sb[d][0]:
        (s1, p1), (s2, p2) = (sa, pads[0]), (sb, pads[1])
    elif sb[d][1] <= sa[d][0]:
        (s1, p1), (s2, p2) = (sb, pads[1]), (sa, pads[0])
    else:
        return "the supports overlap"
    high = [n - (s[1] if i != d else s2[d][1]) for i, (n, s) in enumerate(zip(full, s1))]
    return _Disjoint(p1, p2, d, s2[d][0] - s1[d][1], [s[0] for s in s1], high)


@needs_operand(PAD)
def sum_of_disjoint_pads(op, rewriter):
    """pad(a, 0, l_a, h_a) + pad(b, 0, l_b, h_b) -> pad(concatenate([a, 0, b], d), 0, l_a, h_b)

    Preconditions: + is add, or or xor, both padding values are 0 and the pads have no other
    user, no interior padding and no crops; the supports of a and b are equal on every dim but one,
    d, where they do not overlap (a zero block fills a gap between them; the pad disappears when
    nothing is left around the concatenate). For float add only under finite math: x + 0 turns a
    -0.0 of x into +0.0, and the concatenate keeps the -0.0.
    """
    plan = plan_sum_of_disjoint_pads(op)
    if isinstance(plan, str):
        return plan
    with rewriter.ip:
        parts = [plan.first.operands[0]]
        if plan.gap:
            shape = list(shape_of(plan.first.operands[0]))
            shape[plan.d] = plan.gap
            parts.append(constant(np.zeros((), dtype_of(op.result)), tensor(shape, element_type(op.result)),
                                  op.location))
        parts.append(plan.second.operands[0])
        out = build("stablehlo.concatenate", parts, dimension=plan.d, loc=op.location)
        if any(plan.low) or any(plan.high):
            out = build(PAD, [out, plan.first.operands[1]], low=plan.low, high=plan.high,
                        interior=[0] * len(plan.low), loc=op.location)
    rewriter.replace_op(op, [out])


def plan_sum_of_pads_regrouped(op):
    """(the rest, and the two pads) of ``sum_of_pads_regrouped`` for the sum ``op`` (pure), or why it does not fire."""
    if is_float(op.result) and not finite_math():
        return "a float add without finite math (the zeros' signs may differ)"
    shape = shape_of(op.result)
    for i in (0, 1):
        outer, inner = single_use_pad(op.operands[1 - i]), producer(op.operands[i], op.name)
        if outer is None or inner is None or not has_one_use(inner.result) or not is_zero_scalar(outer.operands[1]):
            continue
        if _zero_pads(inner) is not None and isinstance(disjoint_pads(_zero_pads(inner), shape), _Disjoint):
            continue  # (sum_of_disjoint_pads joins the inner pair first: regrouping it away could go round)
        for j in (0, 1):
            pad = single_use_pad(inner.operands[j])
            if pad is None or pad.result == outer.result or not is_zero_scalar(pad.operands[1]):
                continue
            if isinstance(disjoint_pads([pad, outer], shape), _Disjoint):
                return inner.operands[1 - j], pad, outer
    return "not (x + pad) + pad of two zero pads that sum_of_disjoint_pads would join"


@needs_operand(PAD)
def sum_of_pads_regrouped(op, rewriter):
    """(x + pad(a, 0, ...)) + pad(b, 0, ...) -> x + (pad(a, 0, ...) + pad(b, 0, ...))  (either order of each sum)

    // Pattern: (pad(c1) + pad(c2)) + pad(c3), c2 and c3 corners in one row -> pad(c1) + pad(concatenate([c2, 0, c3]))
    Preconditions: + is add, or or xor (associative); the inner sum has no other user; both pads pad with 0,
    have no other user, and are joined by sum_of_disjoint_pads (supports equal on every dim but one, apart
    there): an FNO-3d gradient's cotangent spectrum, four corners that differ on two dims, becomes one pad
    in two joins. For float add only under finite math: at each element at most one pad adds a nonzero, so
    the sums agree except for the sign of a zero.
    """
    plan = plan_sum_of_pads_regrouped(op)
    if isinstance(plan, str):
        return plan
    rest, a, b = plan
    with rewriter.ip:
        pads = rebuild(op, [a.result, b.result])
        out = rebuild(op, [rest, pads])
    rewriter.replace_op(op, [out])


def plan_product_of_pads(op):
    """(the two pads, their supports, the supports' intersection) for ``product_of_pads`` at the
    product ``op`` (pure), or why it does not fire."""
    if is_float(op.result) and not finite_math():
        return "a float or complex product without finite math (Inf * 0 is NaN)"
    pads = [single_use_pad(v) for v in op.operands]
    if any(p is None for p in pads) or pads[0].result == pads[1].result:
        return "not two different pads with no other user"
    if paddings(pads[0]) == paddings(pads[1]):
        return "the pads pad alike (binary_of_pads' case)"
    if not all(is_zero_scalar(p.operands[1]) for p in pads):
        return "a padding value is not 0"
    supports = [support_of(p) for p in pads]
    if any(s is None for s in supports):
        return "a pad has interior padding or crops"
    return pads, supports, [(max(x[0], y[0]), min(x[1], y[1])) for x, y in zip(*supports)]


@needs_operand(PAD)
def product_of_pads(op, rewriter):
    """pad(a, 0, l_a, h_a) * pad(b, 0, l_b, h_b) -> pad(slice(a) * slice(b), 0, ...), or broadcast(0)

    Preconditions: * is multiply or and, both padding values are 0, the pads have no other user,
    no interior padding and no crops, and their paddings differ (equal ones are binary_of_pads):
    the product is 0 outside the intersection of the supports, kept by the slices. For floats and
    complex only under finite math (Inf * 0 is NaN, and -x * 0 is -0.0).
    """
    plan = plan_product_of_pads(op)
    if isinstance(plan, str):
        return plan
    pads, supports, both = plan
    full = shape_of(op.result)
    with rewriter.ip:
        if any(b <= a for a, b in both):
            zero = constant(np.zeros((), dtype_of(op.result)), tensor([], element_type(op.result)), op.location)
            rewriter.replace_op(op, [broadcast_scalar(zero, shape_of(op.result), op.location)])
            return None
        parts = []
        for p, s in zip(pads, supports):
            start = [a - lo for (a, _), (lo, _) in zip(both, s)]
            limit = [b - lo for (_, b), (lo, _) in zip(both, s)]
            x = p.operands[0]
            parts.append(x if start == [0] * len(start) and limit == list(shape_of(x)) else
                         build(SLICE, [x], start_indices=start, limit_indices=limit, strides=[1] * len(start),
                               loc=op.location))
        core = rebuild(op, parts)
        out = build(PAD, [core, pads[0].operands[1]], low=[a for a, _ in both],
                    high=[n - b for n, (_, b) in zip(full, both)], interior=[0] * len(full), loc=op.location)
    rewriter.replace_op(op, [out])


class _Interleave(NamedTuple):
    a: object     # the first phase's operand (positions l, l + 2, ...)
    b: object     # the second phase's (one element later), possibly a itself
    d: int
    value: object  # the padding value (a zero)
    low: list      # the interleave's padding
    high: list
    interior: list


def plan_sum_of_interleaved_pads(op):
    """The plan of ``sum_of_interleaved_pads`` for the sum ``op`` (pure), or why it does not fire."""
    if is_float(op.result) and not finite_math():
        return "a float add without finite math (-0.0 + 0.0 is +0.0)"
    pads = _zero_pads(op)
    if pads is None:
        return "not two different zero pads with no other user"
    (la, ha, ia), (lb, hb, ib) = paddings(pads[0]), paddings(pads[1])
    if any(e < 0 for e in la + ha + lb + hb):
        return "a pad crops"
    differ = [i for i in range(len(la)) if (la[i], ha[i], ia[i]) != (lb[i], hb[i], ib[i])]
    if len(differ) != 1 or ia[differ[0]] != 1 or ib[differ[0]] != 1:
        return "the pads do not differ on exactly one dim, with interior padding 1 on both"
    d = differ[0]
    if lb[d] == la[d] - 1:
        pads, (la, ha, ia), (lb, hb, ib) = pads[::-1], (lb, hb, ib), (la, ha, ia)
    a, b = pads[0].operands[0], pads[1].operands[0]
    if lb[d] != la[d] + 1 or shape_of(a) != shape_of(b) or shape_of(a)[d] == 0:
        return "the second phase does not start one element after the first, on an operand of the same shape"
    high, interior = list(ha), list(ia)
    high[d], interior[d] = hb[d], 0
    return _Interleave(a, b, d, pads[0].operands[1], list(la), high, interior)


@needs_operand(PAD)
def sum_of_interleaved_pads(op, rewriter):
    """pad(a, 0, l, h, interior 1 on d) + pad(b, 0, l + 1, h - 1, interior 1 on d) -> pad(interleave(a, b, d), 0, l, h - 1)

    interleave(a, b, d) is reshape(concatenate([a, b] with a new unit dim after d, d + 1)), or
    reshape(broadcast_in_dim(a)) when b is a: a zero-insertion upsample plus its one-step shift.
    Preconditions: the root is add, or or xor of two pads; both padding values are 0, neither pad
    has another user or crops; on one dim d both have interior padding 1 and operands of equal size
    k >= 1, the second starts one element later; every other dim is padded alike by both. For float
    add only under finite math (x + 0 turns a -0.0 of x into +0.0, the interleave keeps -0.0).
    """
    plan = plan_sum_of_interleaved_pads(op)
    if isinstance(plan, str):
        return plan
    a, b, d = plan.a, plan.b, plan.d
    n = list(shape_of(a))
    pair = n[:d + 1] + [2] + n[d + 1:]
    with rewriter.ip:
        if a == b:
            dims = [i if i <= d else i + 1 for i in range(len(n))]
            both = build("stablehlo.broadcast_in_dim", [a], shape=pair, broadcast_dimensions=dims, loc=op.location)
        else:
            unit = n[:d + 1] + [1] + n[d + 1:]
            parts = [build("stablehlo.reshape", [x], shape=unit, loc=op.location) for x in (a, b)]
            both = build("stablehlo.concatenate", parts, dimension=d + 1, loc=op.location)
        core = list(n)
        core[d] *= 2
        out = build("stablehlo.reshape", [both], shape=core, loc=op.location)
        if any(plan.low) or any(plan.high) or any(plan.interior):
            out = build(PAD, [out, plan.value], low=plan.low, high=plan.high, interior=plan.interior, loc=op.location)
    rewriter.replace_op(op, [out])


# ---------------------------------------------------------------- interior padding

def plan_slice_of_interior_pad(op):
    """(the pad, its new low and high) for ``slice_of_interior_pad`` at the slice ``op`` (pure), or
    why it does not fire."""
    pad = producer(op.operands[0], PAD)
    if pad is None:
        return "the operand is not a pad"
    low, high, interior = paddings(pad)
    if not any(interior):
        return "the pad has no interior padding (slice_of_pad's case)"
    if any(p < 0 for p in low + high):
        return "the pad crops"
    start, limit, strides = slice_params(op)
    n, full = shape_of(pad.operands[0]), shape_of(pad.result)
    core = [k + max(k - 1, 0) * it for k, it in zip(n, interior)]
    if any(st != 1 for st in strides):
        return "the slice has a stride"
    if any(s > lo or l < lo + c for s, l, lo, c in zip(start, limit, low, core)):
        return "the slice cuts into x or the padding between its elements"
    return pad, [lo - s for lo, s in zip(low, start)], [hi - (f - l) for hi, f, l in zip(high, full, limit)]


@needs_operand(PAD)
def slice_of_interior_pad(op, rewriter):
    """slice(pad(x, v, low, high, interior)) -> pad(x, v, low - start, high - (n - limit), interior)

    Preconditions: the pad has interior padding (others are slice_of_pad's) and no crops; the
    slice has stride 1 and only trims edge padding: on every dim it keeps all of x and the padding
    between x's elements.
    """
    plan = plan_slice_of_interior_pad(op)
    if isinstance(plan, str):
        return plan
    pad, low, high = plan
    with rewriter.ip:
        out = build(PAD, list(pad.operands), low=low, high=high, interior=paddings(pad)[2], loc=op.location)
    rewriter.replace_op(op, [out])


def plan_pad_of_interior_pad(op):
    """The inner pad of ``pad_of_interior_pad`` for the pad ``op`` (pure), or why it does not fire."""
    inner = producer(op.operands[0], PAD)
    if inner is None:
        return "the operand is not a pad"
    l2, h2, i2 = paddings(op)
    l1, h1, i1 = paddings(inner)
    if not any(i1):
        return "the inner pad has no interior padding (pad_of_pad's case)"
    if any(i2):
        return "the outer pad has interior padding"
    if any(p < 0 for p in l1 + h1 + l2 + h2):
        return "a pad crops"
    if not same_value(inner.operands[1], op.operands[1]):
        return "the pads pad with different values"
    return inner


def pad_of_interior_pad(op, rewriter):
    """pad(pad(x, v, l1, h1, interior), v, l2, h2) -> pad(x, v, l1 + l2, h1 + h2, interior)

    Preconditions: the inner pad has interior padding (others are pad_of_pad's), the outer has
    none; both padding values are equal (the same value, or constants with the same bits); no
    edge is negative.
    """
    inner = plan_pad_of_interior_pad(op)
    if isinstance(inner, str):
        return inner
    (l1, h1, i1), (l2, h2, _) = paddings(inner), paddings(op)
    with rewriter.ip:
        out = build(PAD, [inner.operands[0], op.operands[1]], low=[a + b for a, b in zip(l1, l2)],
                    high=[a + b for a, b in zip(h1, h2)], interior=i1, loc=op.location)
    rewriter.replace_op(op, [out])


# ---------------------------------------------------------------- slices up, pads down


def plan_slice_of_elementwise(op):
    """The slices of ``op``'s result grouped by their parameters, for ``slice_of_elementwise`` at
    the elementwise ``op`` (pure), or why it does not fire."""
    users = [u.owner for u in op.result.uses]
    if not users or any(u.name != "stablehlo.slice" for u in users):
        return "a user of the result is not a slice"
    shape = shape_of(op.result)
    if any(shape_of(v) != shape for v in op.operands):
        return "an operand is a scalar (a select predicate or clamp bound)"
    groups: dict = {}
    for u in users:
        groups.setdefault(tuple(map(tuple, slice_params(u))), []).append(u)
    sizes = [math.prod(shape_of(g[0].result)) for g in groups.values()]
    if max(sizes) >= math.prod(shape) or sum(sizes) > math.prod(shape):
        return "the slices keep the whole result, or overlap"
    return groups


def slice_of_elementwise(op, rewriter):
    """f(a, b, ...)[s] -> f(a[s], b[s], ...), once per distinct slice s of f's result

    Preconditions: f is elementwise, its operands have its result's shape (no scalar select
    predicate or clamp bound), every user of its result is a slice, and the distinct slices are
    each smaller than the result and together no larger (so no element is computed twice).
    """
    groups = plan_slice_of_elementwise(op)
    if isinstance(groups, str):
        return groups
    for (start, limit, strides), group in groups.items():
        with rewriter.ip:
            parts = [build(SLICE, [v], start_indices=start, limit_indices=limit, strides=strides, loc=op.location)
                     for v in op.operands]
            out = rebuild(op, parts)
        for u in group:
            rewriter.replace_op(u, [out])
    rewriter.erase_op(op)


def plan_slice_of_slice(op):
    """(x, start, limit, strides) of the one slice that ``slice_of_slice`` makes of the slice ``op``
    (pure), or why it does not fire."""
    inner = producer(op.operands[0], "stablehlo.slice")
    if inner is None:
        return "the operand is not a slice"
    (start1, _, strides1), (start2, _, strides2) = slice_params(inner), slice_params(op)
    sizes = shape_of(op.result)
    # (an empty dim slices 0:0: the composed start may lie past the operand's end there)
    start = [a + b * s if n else 0 for a, b, s, n in zip(start1, start2, strides1, sizes)]
    strides = [a * b for a, b in zip(strides1, strides2)]
    limit = [b + (n - 1) * s + 1 if n else b for b, n, s in zip(start, sizes, strides)]
    return inner.operands[0], start, limit, strides


def slice_of_slice(op, rewriter):
    """x[s1][s2] -> x[s], s the composition of s1 and s2

    Preconditions: the operand is a slice (any strides; it keeps its other users).
    """
    plan = plan_slice_of_slice(op)
    if isinstance(plan, str):
        return plan
    x, start, limit, strides = plan
    with rewriter.ip:
        out = build(SLICE, [x], start_indices=start, limit_indices=limit, strides=strides, loc=op.location)
    rewriter.replace_op(op, [out])


def plan_unary_of_shared_pad(op):
    """The pad of ``unary_of_shared_pad`` for the unary ``op`` (pure), or why it does not fire."""
    pad = producer(op.operands[0], PAD)
    if pad is None:
        return "the operand is not a pad"
    if has_one_use(pad.result):
        return "the pad has one user (unary_of_pad's case)"
    if any(u.owner.name not in UNARY_OPS for u in pad.result.uses):
        return "another user of the pad is not an elementwise unary op"
    if not all(unary_keeps_bits(u.owner, pad.operands[1]) for u in pad.result.uses):
        return "a user's f(v) is not exact"
    return pad


@needs_operand(PAD)
def unary_of_shared_pad(op, rewriter):
    """f(pad(x, v, low, high, interior)) -> pad(f(x), f(v), low, high, interior), for a pad with several users

    Preconditions: f is an elementwise unary op (or convert) and so is every other user of the
    pad (each gets its own pad, and the shared one goes away; one user is unary_of_pad's case);
    f(v) as in unary_of_pad.
    """
    pad = plan_unary_of_shared_pad(op)
    if isinstance(pad, str):
        return pad
    x, v = pad.operands
    with rewriter.ip:
        fx = rebuild(op, [x])
        fv = rebuild(op, [v])
        out = rebuild(pad, [fx, fv], loc=op.location)
    rewriter.replace_op(op, [out])


PATTERNS = {
    "binary_of_pads": (BINARY_OPS, binary_of_pads),
    "sum_of_disjoint_pads": (SUM_OPS, sum_of_disjoint_pads),
    "sum_of_pads_regrouped": (SUM_OPS, sum_of_pads_regrouped),
    "product_of_pads": (PRODUCT_OPS, product_of_pads),
    "sum_of_interleaved_pads": (SUM_OPS, sum_of_interleaved_pads),
    **pad_layout.PATTERNS,  # (pads below transpose, reshape and broadcast_in_dim)
    "empty_concatenate_operands": (stablehlo.ConcatenateOp, empty_concatenate_operands),
    "concatenate_of_pads": (stablehlo.ConcatenateOp, concatenate_of_pads),
    "concatenate_of_concatenate": (stablehlo.ConcatenateOp, concatenate_of_concatenate),
    "concatenate_of_alike_pads": (stablehlo.ConcatenateOp, concatenate_of_alike_pads),
    "slice_of_interior_pad": (stablehlo.SliceOp, slice_of_interior_pad),
    "pad_of_interior_pad": (stablehlo.PadOp, pad_of_interior_pad),
    "slice_of_elementwise": (ELEMENTWISE_OPS, slice_of_elementwise),
    "slice_of_slice": (stablehlo.SliceOp, slice_of_slice),
    "unary_of_shared_pad": (UNARY_OPS, unary_of_shared_pad),
    **pad_tensor.PATTERNS,  # (a pad and a full tensor)
    **ARITH_PATTERNS,  # (tried after the patterns above on the same root)
    **pad_window.PATTERNS,  # (pads into convolution and reduce_window padding)
}
