"""Compile-path guards: integer divide/remainder by a zero XLA would fold, empty concatenate operands,
converts of complex values to real types.

XLA:CPU's constant folder kills the process (SIGFPE) on an integer ``divide`` or
``remainder`` whose operands it can fold and whose divisor holds a 0, and its algebraic
simplifier makes zeros out of argument-dependent divisors (``x * 0``, ``x - x``,
``convert(x != x)``) before folding. At run time the same ops give all bits set (-1, or the
unsigned maximum) for ``x / 0`` and ``x`` for ``x % 0`` (and ``MIN / -1 = MIN``,
``MIN % -1 = 0``, which XLA folds the same way). These patterns rewrite every such op whose
divisor is neither a zero-free constant nor an argument of ``@main`` (which XLA cannot fold) so
that no divisor XLA can fold holds a 0, and produce exactly those run-time values in the zero
lanes, so results are unchanged. ``guard_for_xla`` applies the family on the compile path
(``Module.compile``, ``hloforge run``), so an unoptimized module cannot crash XLA either, with
pad-push's ``empty_concatenate_operands`` (XLA:CPU aborts the process on a slice reaching into
an empty concatenate operand) and ``convert_of_complex`` (XLA:CPU segfaults compiling the
convert of a complex splat constant to a real type, a literal or one it folds).
"""
from __future__ import annotations

import collections
from typing import NamedTuple

import numpy as np

from hloforge.frontend.context import ir, stablehlo
from hloforge.passes._ir import (
    Unsupported, build, constant, constant_value, dtype_of, producer, rebuild, shape_of)
from hloforge.passes import driver
from hloforge.passes.pad_concat import empty_concatenate_operands

MARKER = "hloforge.division_guard"  # on a guarded op: its divisor is zero-free whatever XLA folds
_ROOTS = ("stablehlo.divide", "stablehlo.remainder")
_READ_LIMIT = 1 << 24  # largest non-splat divisor constant read back


def _integer(op) -> bool:
    try:
        return dtype_of(op.result).kind in "iu"
    except Unsupported:
        return False


def _zero_lanes(value):
    """(divisor values, mask of its zeros) for a readable constant divisor, else None."""
    c = constant_value(value, limit=_READ_LIMIT)
    if c is None:
        return None
    return np.asarray(c), np.asarray(c) == 0


def _bool_type(value) -> ir.Type:
    return ir.RankedTensorType.get(list(ir.RankedTensorType(value.type).shape), ir.IntegerType.get_signless(1))


def _fill(op, x):
    """XLA:CPU's run-time result for a zero divisor: all bits set for divide, x for remainder."""
    if op.name == "stablehlo.divide":
        return constant(np.asarray(-1).astype(dtype_of(op.result)), op.result.type, op.location)
    return x


class _ZeroLanes(NamedTuple):
    values: np.ndarray  # the constant divisor
    zero: np.ndarray    # where it holds a 0


def _constant_with_zeros(op):
    """The integer ``op``'s constant divisor and its zeros, or why it has none (pure)."""
    if not _integer(op):
        return "the elements are not integers"
    lanes = _zero_lanes(op.operands[1])
    if lanes is None:
        return "the divisor is not a constant (a splat, or of at most 2**24 elements)"
    if not lanes[1].any():
        return "the constant divisor holds no 0"
    return _ZeroLanes(*lanes)


def _guard_constant(op, rewriter, plan):
    x, divisor = op.operands
    values, zero = plan
    with rewriter.ip:
        if zero.all():
            out = _fill(op, x)
        else:
            safe = constant(np.where(zero, 1, values), divisor.type, op.location)
            q = rebuild(op, [x, safe])
            mask = constant(zero, _bool_type(divisor), op.location)
            out = build("stablehlo.select", [mask, _fill(op, x), q], loc=op.location)
    rewriter.replace_op(op, [out])
    return None


def plan_divide_by_constant_zero(op):
    """The plan of ``divide_by_constant_zero`` for the divide ``op`` (pure), or why it does not fire."""
    return _constant_with_zeros(op)


def divide_by_constant_zero(op, rewriter):
    """divide(x, c) -> select(c == 0, -1, divide(x, c with its zeros set to 1))

    Preconditions: integer elements; c is a constant holding at least one 0 (splats of any
    size, others up to 2**24 elements). -1 is XLA:CPU's run-time x / 0 (all bits set; the
    maximum for unsigned types); an all-zero c gives that constant outright.
    """
    plan = plan_divide_by_constant_zero(op)
    if isinstance(plan, str):
        return plan
    return _guard_constant(op, rewriter, plan)


def plan_remainder_by_constant_zero(op):
    """The plan of ``remainder_by_constant_zero`` for the remainder ``op`` (pure), or why it does not fire."""
    return _constant_with_zeros(op)


def remainder_by_constant_zero(op, rewriter):
    """remainder(x, c) -> select(c == 0, x, remainder(x, c with its zeros set to 1))

    Preconditions: integer elements; c is a constant holding at least one 0 (splats of any
    size, others up to 2**24 elements). x is XLA:CPU's run-time x % 0; an all-zero c gives x.
    """
    plan = plan_remainder_by_constant_zero(op)
    if isinstance(plan, str):
        return plan
    return _guard_constant(op, rewriter, plan)


def _entry_argument(value) -> bool:
    """Whether ``value`` is an argument of the public ``@main``, XLA's entry computation, whose
    values XLA never sees (the arguments of other functions and of regions can become constants
    once XLA inlines calls or sinks loop invariants)."""
    owner = value.owner
    if not isinstance(owner, ir.Block):
        return False
    func = owner.owner
    if func is None or func.operation.name != "func.func" or str(func.attributes["sym_name"]) != '"main"':
        return False
    if "sym_visibility" in func.attributes and str(func.attributes["sym_visibility"]) != '"public"':
        return False
    return owner == func.regions[0].blocks[0]


def _nonzero(value, depth: int = 0) -> bool:
    """Whether ``value`` provably holds no 0: a zero-free constant, or a select of a zero-free
    value where its other operand may be 0 only in lanes it does not pick (hloforge.numpy's
    guarded divisor ``select(b == 0, 1, b)``, also after folding)."""
    lanes = _zero_lanes(value)
    if lanes is not None:
        return not lanes[1].any()
    select = producer(value, "stablehlo.select")
    if select is None or depth > 8:
        return False
    pred, on_true, on_false = select.operands
    if not _nonzero(on_true, depth + 1):
        return False
    if _nonzero(on_false, depth + 1):
        return True
    chosen = constant_value(pred, limit=_READ_LIMIT)
    if chosen is not None:  # (a select of constants the folders left alone)
        lanes = _zero_lanes(on_false)
        return bool(np.all(chosen)) or (lanes is not None and not (lanes[1] & ~np.asarray(chosen)).any())
    compare = producer(pred, "stablehlo.compare")
    if compare is None or "EQ" not in str(compare.attributes["comparison_direction"]):
        return False
    a, b = compare.operands
    for tested, other in ((a, b), (b, a)):
        zero = _zero_lanes(other)
        if tested == on_false and zero is not None and zero[1].all():
            return True
    return False


def _kept_from_zero(divisor):
    """For a divisor that is not a readable constant: why XLA cannot see it as a 0, or None if it might."""
    if producer(divisor, "stablehlo.constant") is not None:
        return "the divisor is a constant (divide_by_constant_zero's and remainder_by_constant_zero's case)"
    if _entry_argument(divisor):
        return "the divisor is an argument of @main, which XLA cannot fold"
    if _nonzero(divisor):
        return "the divisor is provably zero-free"
    return None


def _may_fold_to_zero(divisor) -> bool:
    """For a divisor that is not a readable constant: whether XLA might see it as a 0."""
    return _kept_from_zero(divisor) is None


def plan_division_by_folded_divisor(op):
    """The plan of ``division_by_folded_divisor`` for the division ``op`` (pure), or why it does not fire."""
    if op.name not in _ROOTS:
        return "not a divide or remainder"
    if not _integer(op):
        return "the elements are not integers"
    if MARKER in op.attributes:
        return "already guarded (hloforge.division_guard)"
    x, divisor = op.operands
    kept = _kept_from_zero(divisor)
    if kept is not None:
        return kept
    return x, divisor


def division_by_folded_divisor(op, rewriter):
    """divide(x, d) -> select(d == 0, -1, divide(x, select(d == 0, 1, d)))  (remainder: x for -1)

    Preconditions: integer elements; d is not a constant (the two patterns above handle
    those), not provably zero-free (a select that already keeps the zeros out) and not an
    argument of ``@main``, so XLA may simplify it to a 0 (``x * 0``, ``x - x``) and fold the op;
    the op is not already guarded (it carries ``hloforge.division_guard``, which the new op
    gets). Should XLA fold d to 0, the selects give XLA:CPU's run-time x / 0 and x % 0.
    """
    plan = plan_division_by_folded_divisor(op)
    if isinstance(plan, str):
        return plan
    x, divisor = plan
    dtype = dtype_of(op.result)
    with rewriter.ip:
        zeros, ones = (constant(np.full((), v, dtype), divisor.type, op.location) for v in (0, 1))
        zero = build("stablehlo.compare", [divisor, zeros], direction="EQ", loc=op.location)
        safe = build("stablehlo.select", [zero, ones, divisor], loc=op.location)
        q = rebuild(op, [x, safe])
        q.owner.attributes[MARKER] = ir.UnitAttr.get()
        out = build("stablehlo.select", [zero, _fill(op, x), q], loc=op.location)
    rewriter.replace_op(op, [out])
    return None


def plan_convert_of_complex(op):
    """The plan of ``convert_of_complex`` for the convert ``op`` (pure), or why it does not fire."""
    if not _complex_to_real(op):
        return "not a convert of complex values to a real type"
    return op.operands[0]


def convert_of_complex(op, rewriter):
    """convert(x) -> convert(real(x)), or real(x) when its type is the result's  (x complex, the result real)

    Preconditions: x has a complex element type and the result a real one (float, integer or
    bool). A complex number converts to a real type through its real part, in StableHLO and in
    XLA (its kernels and its folders), so the values are the same; the real part of a complex
    splat, and its convert, do not crash XLA:CPU's compiler.
    """
    x = plan_convert_of_complex(op)
    if isinstance(x, str):
        return x
    with rewriter.ip:
        out = build("stablehlo.real", [x], loc=op.location)
        if out.type != op.result.type:
            out = build("stablehlo.convert", [out], dtype=dtype_of(op.result), loc=op.location)
    rewriter.replace_op(op, [out])
    return None


def _complex_to_real(op) -> bool:
    try:
        source = ir.RankedTensorType(op.operands[0].type).element_type
        target = ir.RankedTensorType(op.result.type).element_type
    except ValueError:  # (unranked)
        return False
    return source.typeid == ir.ComplexType.static_typeid and target.typeid != ir.ComplexType.static_typeid


PATTERNS = {
    "divide_by_constant_zero": (stablehlo.DivOp, divide_by_constant_zero),
    "remainder_by_constant_zero": (stablehlo.RemOp, remainder_by_constant_zero),
    "division_by_folded_divisor": ((stablehlo.DivOp, stablehlo.RemOp), division_by_folded_divisor),
}
_COMPILE_PATH = {**PATTERNS, "empty_concatenate_operands": (stablehlo.ConcatenateOp, empty_concatenate_operands),
                 "convert_of_complex": (stablehlo.ConvertOp, convert_of_complex)}


def _needs_guard(op) -> bool:
    """Whether one of the patterns above matches ``op``."""
    if not _integer(op) or MARKER in op.attributes:
        return False
    divisor = op.operands[1]
    try:
        lanes = _zero_lanes(divisor)
        if lanes is not None:
            return bool(lanes[1].any())
        return _may_fold_to_zero(divisor)
    except Unsupported:
        return False


def _empty_concatenate(op) -> bool:
    try:
        return any(0 in shape_of(v) for v in op.operands)
    except Unsupported:
        return False


def guard_divisions(module):
    """``module`` itself, or a copy with this family applied when one of its integer
    divides/remainders could show XLA a constant zero divisor (which kills the process)."""
    return _guarded(module, PATTERNS, lambda op: op.name in _ROOTS and _needs_guard(op))


def guard_for_xla(module):
    """``module`` itself, or a copy with the guards applied when one of its ops could kill the
    process in XLA:CPU: this family's divisions, concatenates with an empty operand (pad-push's
    ``empty_concatenate_operands``) and converts of complex values to real types
    (``convert_of_complex``). The compile path runs this."""
    def needs(op):
        if op.name == "stablehlo.concatenate":
            return _empty_concatenate(op)
        if op.name == "stablehlo.convert":
            return _complex_to_real(op)
        return op.name in _ROOTS and _needs_guard(op)
    return _guarded(module, _COMPILE_PATH, needs)


def _guarded(module, table, needs):
    with module.context, ir.Location.unknown():
        if not any(needs(op) for op in module.walk()):
            return module
    copy = module.clone()
    with copy.context, ir.Location.unknown():
        driver.apply(copy.mlir, driver.pattern_set(table, collections.Counter()))
    return copy
