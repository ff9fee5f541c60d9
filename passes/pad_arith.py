"""Pad arithmetic (part of ``pad-push``): elementwise ops of pads at different offsets, and of a pad and a
splat. Two pads combined by an elementwise binary op whose paddings differ on one dim become one pad of
a concatenate of the pieces along that dim (``binary_of_shifted_pads``), and a pad combined with a
splat becomes a pad of the op on the pad's operand (``binary_of_pad_and_splat``). With
``pad_select.py`` (selects of boxes) and ``pad_slices.py`` (adjacent slices, pads and slices of
concatenates) these are the four families the strongest pad optimizer (Enzyme-JAX) has and the rest of
``pad-push`` lacked.

Every pattern is exact: the same op on the same values, or values copied; an operand dropped next to
a padding value only where that value is the op's identity bit for bit (``x + -0.0``, ``x * 1``,
``max(x, -inf)``, ...), and an operand replaced by a constant only where the padding value absorbs it
bit for bit (integer ``x * 0``, ``x & 0``, ...; float ``x * 0`` only under finite math). The three
modules import only ``_ir`` and ``pad``; ``pad_push`` puts their tables in the ``pad-push`` family.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from hloforge.frontend.registry import names
from hloforge.passes._ir import (
    broadcast_scalar, build, constant, element_type, finite_math,
    needs_operand, producer, rebuild, shape_of, tensor)
from hloforge.passes.pad import PAD, SLICE, edge_paddings, folds_otherwise, scalar_constant, single_use_pad, splat_of

CONCATENATE = "stablehlo.concatenate"
BINARY_OPS = names("binary")


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
    so ``-0.0 + 0.0`` gives -0.0 (``0 - x`` is counted too, to be safe); ``x * (1+0j)`` and
    ``x / (1+0j)`` of complex numbers become x, where the complex product is ``(a - b*0, a*0 + b)``:
    ``-0-0j`` gives ``+0-0j``, ``nan+0j`` gives ``nan+nanj`` (float ``x * 1`` and ``x / 1`` are x bit for
    bit); and a complex ``x / 0j`` is nan+nanj where the divisor is a literal (select_of_box says so too).
    A rewrite that creates or moves such an op changes the sign of a zero or a NaN part, so those
    wait for finite math (the fuzz test found ``0.0 + -0.0`` turned into -0.0, the optimize sweep
    ``(-0-0j) * (1+0j)`` into ``-0-0j``)."""
    if c is None or finite_math():
        return False
    kind, value, _ = _scalar(c)
    if name in ("stablehlo.add", "stablehlo.subtract"):
        return kind in ("f", "c") and value == 0
    if name == "stablehlo.divide" and kind == "c" and value == 0:
        return True  # (XLA gives nan+nanj for x / a literal 0j, where the run-time divide gives inf+infj)
    return name in ("stablehlo.multiply", "stablehlo.divide") and kind == "c" and value == 1


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

def plan_binary_of_shifted_pads(op):
    """The plan (a dict) of ``binary_of_shifted_pads`` for ``op`` (pure), or why it does not fire."""
    pads = [single_use_pad(v) for v in op.operands]
    if any(p is None for p in pads) or pads[0].result == pads[1].result:
        return "the operands are not two pads with no other user"
    if 0 in shape_of(op.result) or any(0 in shape_of(p.operands[0]) for p in pads):
        return "an empty operand (pad_of_empty's)"
    edges = [edge_paddings(p) for p in pads]
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
    if folds_otherwise(op, pads[0].operands[1], pads[1].operands[1]):
        return "f of the padding values would be an op of constants XLA folds otherwise (folds_otherwise)"
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
            return ("a window meets a padding value XLA folds away (zero in a float add or subtract, one in a "
                    "complex product or quotient: _xla_folds)")
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
    plan = plan_binary_of_shifted_pads(op)
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


class _PadAndSplat(NamedTuple):
    side: int  # which operand is the pad
    pad: object
    scalar: object  # the 0-d value the other operand broadcasts, or None (a splat constant)
    splat: object  # the splat's 0-d numpy value, or None


def plan_binary_of_pad_and_splat(op):
    """The pad and the splat of ``binary_of_pad_and_splat`` for ``op`` (pure), or why it does not fire."""
    reason = "no operand is a pad with no other user"
    for i in (0, 1):
        pad, other = single_use_pad(op.operands[i]), op.operands[1 - i]
        if pad is None:
            continue
        if producer(other, PAD) is not None:
            reason = "both operands are pads (binary_of_pads's case)"
            continue
        b = producer(other, "stablehlo.broadcast_in_dim")
        if b is not None and shape_of(b.operands[0]) == ():
            scalar = b.operands[0]
        elif splat_of(other) is not None:
            scalar = None
        else:
            reason = "the other operand is not a splat"
            continue
        if _xla_folds(op.name, splat_of(other)):
            reason = "a splat XLA folds away (x + 0.0 into x, complex x * (1+0j) into x: _xla_folds)"
            continue
        c = other if scalar is None else scalar
        if folds_otherwise(op, *((pad.operands[1], c) if i == 0 else (c, pad.operands[1]))):
            reason = "f of the padding value and the splat would be an op of constants XLA folds otherwise"
            continue
        return _PadAndSplat(i, pad, scalar, splat_of(other))
    return reason


@needs_operand(PAD)
def binary_of_pad_and_splat(op, rewriter):
    """f(pad(a, v, low, high, interior), splat c) -> pad(f(a, splat c), f(v, c), low, high, interior)  (either side)

    // Pattern: multiply(pad(a, 0, [1], [1]), broadcast(3.0)) -> pad(multiply(a, broadcast(3.0)), 0 * 3.0, [1], [1])
    Preconditions: f is an elementwise binary op (or compare); one operand is a pad with no other
    user, the other a splat constant or a broadcast of a 0-d value (not a pad: two pads are
    binary_of_pads's). The pad's elements and its padding meet the same value c, so nothing changes;
    the pad moves below f, where it can meet the pads f's result meets.
    """
    plan = plan_binary_of_pad_and_splat(op)
    if isinstance(plan, str):
        return plan
    i, pad, scalar, splat = plan
    other = op.operands[1 - i]
    x, v = pad.operands
    loc = op.location
    with rewriter.ip:
        if scalar is None:
            scalar = constant(splat, tensor([], element_type(other)), loc)
        c = broadcast_scalar(scalar, shape_of(x), loc)
        core = rebuild(op, [x, c] if i == 0 else [c, x], loc=loc)
        fv = rebuild(op, [v, scalar] if i == 0 else [scalar, v], loc=loc)
        out = rebuild(pad, [core, fv], loc=loc)
    rewriter.replace_op(op, [out])
    return None


PATTERNS = {
    "binary_of_shifted_pads": (BINARY_OPS, binary_of_shifted_pads),
    "binary_of_pad_and_splat": (BINARY_OPS, binary_of_pad_and_splat),
}
