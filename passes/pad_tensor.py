"""A pad and a full tensor (part of ``pad-push``; ``pad_push.PATTERNS`` holds this table): an elementwise op
of a zero pad and a tensor that is no pad works on the tensor's window only. The product and the
quotient stay a pad of the op on the window; the sum updates the tensor's window in place.
"""
from __future__ import annotations

from hloforge.frontend.registry import names
from hloforge.passes._ir import build, finite_math, needs_operand, producer, rebuild, update_at
from hloforge.passes.pad import PAD, SLICE, is_float, is_zero_scalar, single_use_pad, splat_of, support_of

SUM_OPS = names("zero_identity")  # add, or, xor
PRODUCT_OPS = names("zero_absorbing")  # multiply, and (for floats only without Inf/NaN)
_ZERO_PAD = "a zero pad with no other user, no interior padding and no crops, beside a non-pad"


def plan_product_of_pad(op):
    """The plan (i, the pad operand i, its support) of ``product_of_pad`` for ``op`` (pure), or why it does not fire."""
    if is_float(op.result) and not finite_math():
        return "a float product without finite math (inf * 0 is NaN, -x * 0 is -0.0)"
    found = _zero_pad_beside_tensor(op, (0, 1))
    return f"no operand is {_ZERO_PAD}" if found is None else found


@needs_operand(PAD)
def product_of_pad(op, rewriter):
    """pad(a, 0, low, high) * b -> pad(a * b[low : n - high], 0, low, high)  (either side)

    Preconditions: * is multiply or and; the pad's padding value is 0, it has no other user, no
    interior padding and no crops; b is not a pad (two pads are product_of_pads's or
    binary_of_pads's case). For floats and complex only under finite math (Inf * 0 is NaN, and
    -x * 0 is -0.0).
    """
    plan = plan_product_of_pad(op)
    if isinstance(plan, str):
        return plan
    _absorbing_pad(op, rewriter, plan)


def plan_quotient_of_pad(op):
    """The plan (0, the dividend pad, its support) of ``quotient_of_pad`` for ``op`` (pure), or why it does not fire."""
    if not is_float(op.result):
        return "an integer quotient (0 / 0 is -1)"
    if not finite_math():
        return "a quotient without finite math (0 / 0 is NaN, 0 / -b is -0.0)"
    found = _zero_pad_beside_tensor(op, (0,))
    return f"the dividend is not {_ZERO_PAD}" if found is None else found


@needs_operand(PAD)
def quotient_of_pad(op, rewriter):
    """pad(a, 0, low, high) / b -> pad(a / b[low : n - high], 0, low, high)

    Preconditions: floats or complex, under finite math (0 / 0 is NaN, 0 / -b is -0.0); the pad
    is the dividend, its padding value is 0, it has no other user, no interior padding and no
    crops; b is not a pad. (jax's transpose of rfft divides the padded cotangent spectrum by its
    bin weights before the inverse FFT: this lets fft-truncate see the pad.)
    """
    plan = plan_quotient_of_pad(op)
    if isinstance(plan, str):
        return plan
    _absorbing_pad(op, rewriter, plan)


def plan_sum_of_pad(op):
    """The plan of ``sum_of_pad`` for the sum ``op`` (pure): (which operand is the pad, the pad, its
    support), or why it does not fire."""
    if is_float(op.result) and not finite_math():
        return "a float add without finite math (-0.0 + 0.0 is +0.0)"
    found = _zero_pad_beside_tensor(op, (0, 1))
    if found is None:
        return f"no operand is {_ZERO_PAD}"
    i, pad, support = found
    other = op.operands[1 - i]
    if splat_of(other) is not None:
        return "the other operand is a splat (binary_of_pad_and_splat's case)"
    if _sum_of_a_pad(other):
        return "the other operand is a sum with a pad operand (the pad-sum patterns merge those first)"
    if any(b <= a for a, b in support):
        return "the pad's operand is empty"
    return found


def _sum_of_a_pad(value) -> bool:
    owner = producer(value)
    return owner is not None and owner.name in SUM_OPS and any(producer(v, PAD) is not None for v in owner.operands)


@needs_operand(PAD)
def sum_of_pad(op, rewriter):
    """pad(a, 0, low, high) + b -> dynamic_update_slice(b, a + b[low : n - high], low)  (either side)

    Preconditions: + is add, or or xor; the pad's padding value is 0, it has no other user, no
    interior padding and no crops, and a is not empty; b is not a pad (two pads are the
    sum_of_*_pads patterns' and binary_of_pads's) nor a splat (binary_of_pad_and_splat's). For
    float add only under finite math (b + 0.0 turns a -0.0 of b into +0.0, the update keeps it).
    """
    plan = plan_sum_of_pad(op)
    if isinstance(plan, str):
        return plan
    i, pad, support = plan
    other, start = op.operands[1 - i], [a for a, _ in support]
    with rewriter.ip:
        window = build(SLICE, [other], start_indices=start, limit_indices=[b for _, b in support],
                       strides=[1] * len(support), loc=op.location)
        core = rebuild(op, [pad.operands[0], window] if i == 0 else [window, pad.operands[0]])
        out = update_at(other, core, start, op.location)
    rewriter.replace_op(op, [out])


def _zero_pad_beside_tensor(op, sides):
    """(i, the pad, its support) for the first operand i in ``sides`` that is a zero pad with no other
    user, no interior padding and no crops, whose other operand is no pad; else None."""
    for i in sides:
        pad, other = single_use_pad(op.operands[i]), op.operands[1 - i]
        if pad is None or producer(other, PAD) is not None or not is_zero_scalar(pad.operands[1]):
            continue
        support = support_of(pad)
        if support is not None:
            return i, pad, support
    return None


def _absorbing_pad(op, rewriter, plan):
    """f(pad(a, 0), b) -> pad(f(a, b[support]), 0), for the plan (i, the pad, its support) of the pad operand i."""
    i, pad, support = plan
    x, other = pad.operands[0], op.operands[1 - i]
    with rewriter.ip:
        window = build(SLICE, [other], start_indices=[a for a, _ in support],
                       limit_indices=[b for _, b in support], strides=[1] * len(support), loc=op.location)
        core = rebuild(op, [x, window] if i == 0 else [window, x])
        out = rebuild(pad, [core, pad.operands[1]], loc=op.location)
    rewriter.replace_op(op, [out])


PATTERNS = {
    "product_of_pad": (PRODUCT_OPS, product_of_pad),
    "quotient_of_pad": (("stablehlo.divide",), quotient_of_pad),
    "sum_of_pad": (SUM_OPS, sum_of_pad),
}
