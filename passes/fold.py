"""Constant folding: ops over constants become constants, and constant scales merge.

Values come from each op's registry entry (``OpInfo.evaluate``: StableHLO semantics in numpy, bit
for bit what XLA computes on this backend, in its kernels and in its own constant folders); an op
it declines (library functions, implementation-defined results, flushed subnormals, NaN results,
...) is left alone, and so is a fold whose constant would feed an op left to XLA (``_users_fold``).
Results of at most 1024 elements are materialized, splats of any size. Folding changes no bit of a
result; the scale patterns below reassociate floats only under finite math. The call boundaries
``inline`` leaves where a constant crossed a call go where the constants they expose fold exactly
(``call_boundary_of_constant``).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from hloforge.frontend.context import ir
from hloforge.frontend.registry import OPS, names
from hloforge.passes._ir import (
    MAX_FOLD, build, constant, constant_value, evaluate, finite_math, needs_operand, params_of,
    producer, shape_of, splat_value)

CONSTANT = "stablehlo.constant"
READ_LIMIT = 1 << 20  # largest non-splat operand a fold reads


def _all_constant(op) -> bool:
    if not len(op.operands):
        return False
    for v in op.operands:
        owner = v.owner
        if not hasattr(owner, "name") or owner.name != CONSTANT:
            return False
    return True


class _Folded(NamedTuple):
    values: list  # (array, splat) per result


def plan_fold(op):
    """The plan of ``_fold`` (every folding pattern's rewrite) for ``op`` (pure), or why it does not fire."""
    if not _all_constant(op):
        return "not every operand is a constant"
    operands = [_constant_operand(v) for v in op.operands]
    if any(o is None for o in operands):
        return f"a constant operand is not read (it is empty, or not a splat and over {READ_LIMIT} elements)"
    values = _evaluation(op, operands)
    if isinstance(values, str):
        return values
    if not _users_fold(op, values, USER_DEPTH):
        return "a user left with constant operands only would not fold too"
    return _Folded(values)


def _fold(op, rewriter):
    """Replace ``op`` (whose operands are constants) by constants of its registry evaluation.

    All-splat operands of an elementwise op are evaluated as 0-d arrays and give a splat of any
    size; a data-movement op of a splat is that splat. Otherwise the result has at most 1024
    elements. Declines (returns why) where evaluate does, and where a user would be left
    with constant operands only without folding too (``_users_fold``)."""
    plan = plan_fold(op)
    if isinstance(plan, str):
        return plan
    with rewriter.ip:
        outs = [constant(v, r.type, op.location) for (v, _), r in zip(plan.values, op.results)]
    rewriter.replace_op(op, outs)
    return None


def _constant_operand(value):
    """(array, splat) of a constant operand: its 0-d value if it is a splat; None if unreadable."""
    s = splat_value(value)
    if s is not None:
        return s, True
    a = constant_value(value, limit=READ_LIMIT)
    return None if a is None else (np.asarray(a), False)


def _evaluation(op, operands):
    """``op``'s registry evaluation on ``operands`` [(array, splat)]: [(array, splat)] per result,
    or why not (a string) where evaluate declines or the result would be a non-splat of over 1024 elements."""
    info = OPS[op.name]
    if info.evaluate is None:
        return "the registry does not evaluate it"
    params = params_of(op)
    splats = [a for a, splat in operands if splat]
    if len(splats) == len(operands) and ("elementwise" in info.traits or _same_splats(info, splats)):
        values = [splats[0]] if "movement" in info.traits else info.evaluate(*splats, **params)
        splat = True
    else:
        if any(math.prod(shape_of(r)) > MAX_FOLD for r in op.results):
            return f"the result is not a splat and has over {MAX_FOLD} elements"
        arrays = [np.broadcast_to(a, shape_of(v)) if splat else a for (a, splat), v in zip(operands, op.operands)]
        values, splat = info.evaluate(*arrays, **params), False
    if values is None:
        return "the registry's evaluate declines these values (it would not give XLA's bits)"
    return [(np.asarray(v), splat) for v in (values if isinstance(values, (list, tuple)) else [values])]


USER_DEPTH = 3  # how many users deep a fold checks that the constants it makes are folded further
# ops XLA never folds (it runs them, or hloforge's constants only pass through): a constant there is harmless
RUNTIME_OPS = {"stablehlo.custom_call", *names("control_flow"), "stablehlo.optimization_barrier",
               "stablehlo.rng_bit_generator", "stablehlo.all_reduce", "stablehlo.all_gather", "stablehlo.all_to_all",
               "stablehlo.reduce_scatter", "stablehlo.collective_permute", "stablehlo.collective_broadcast"}


def _users_fold(op, values, depth: int) -> bool:
    """Every user that folding ``op`` into ``values`` leaves with constant operands only folds too,
    ``depth`` users deep. XLA computes an op of constants with one of two constant folders: the
    StableHLO folders it runs on import, for literal constant operands, or its HLO evaluator,
    whose library functions (and signed zeros) round differently; a fold that gives such an op a
    literal where there was a computation can switch the folder, and change the op's bits."""
    known = list(zip(op.results, values))
    for result in op.results:
        for use in result.uses:
            user = use.owner
            info = OPS.get(getattr(user, "name", None))
            if info is None or user.name in RUNTIME_OPS or "non_tensor" in info.traits:
                continue
            operands = []
            for v in user.operands:
                found = next((value for r, value in known if r == v), None)
                if found is None:
                    if producer(v, CONSTANT) is None:
                        break  # (the user keeps a computed operand: XLA treats it as before)
                    found = _constant_operand(v)
                    if found is None:
                        return False
                operands.append(found)
            else:
                folded = _evaluation(user, operands)
                if isinstance(folded, str) or (depth and not _users_fold(user, folded, depth - 1)):
                    return False
    return True


def _same_splats(info, splats) -> bool:
    """A data-movement op of splats with one value (concatenate's operands may differ) is that splat."""
    return "movement" in info.traits and all(s.tobytes() == splats[0].tobytes() for s in splats)


def _folding(name: str, summary: str, preconditions: str):
    def pattern(op, rewriter):
        return _fold(op, rewriter)
    pattern.__name__ = pattern.__qualname__ = name
    pattern.__doc__ = f"{summary}\n\n    Preconditions: {preconditions}\n    "
    pattern.plan = plan_fold  # (the match half, for tools that look for one by pattern)
    return needs_operand(CONSTANT)(pattern)


_EVALUATED = tuple(n for n in names() if OPS[n].evaluate is not None and n != CONSTANT
                   and "non_tensor" not in OPS[n].traits)  # (no constant holds a token or tuple)
_ELEMENTWISE = tuple(n for n in _EVALUATED if {"elementwise", "unary"} <= OPS[n].traits
                     or {"elementwise", "binary"} <= OPS[n].traits)
_BY_NAME = {
    "compare_of_constants": ("stablehlo.compare",),
    "convert_of_constant": ("stablehlo.convert",),
    "broadcast_of_constant": ("stablehlo.broadcast_in_dim",),
    "reshape_of_constant": ("stablehlo.reshape",),
    "transpose_of_constant": ("stablehlo.transpose",),
    "reduce_of_constant": ("stablehlo.reduce",),
}
_NAMED = {n for roots in _BY_NAME.values() for n in roots}
ELEMENTWISE_ROOTS = tuple(n for n in _ELEMENTWISE if n not in _NAMED)
# pad and fft of constants belong to their own families
OTHER_ROOTS = tuple(n for n in _EVALUATED if n not in _NAMED | set(ELEMENTWISE_ROOTS)
                    and n not in ("stablehlo.pad", "stablehlo.fft"))

elementwise_of_constants = _folding(
    "elementwise_of_constants", "f(c1, ...) -> constant f(c1, ...)",
    "f is an elementwise unary or binary op with a registry evaluate (integer, bitwise and IEEE-exact "
    "float ops: no library function such as exp or sin, no complex multiply, divide, abs or sqrt), "
    "every operand is a constant, evaluate gives the backend's bits for every element (not for "
    "integer division by 0 or MIN / -1, float division by other than a power of two, max/min of +0 "
    "and -0, sign(-0), subnormals, NaN results, complex special values), and every user left with "
    "constant operands only folds too.")
compare_of_constants = _folding(
    "compare_of_constants", "compare(c1, c2, direction) -> constant bool",
    "both operands constants; compare_type absent or the dtype's natural one (not TOTALORDER); "
    "complex only for EQ and NE; no subnormal operand.")
convert_of_constant = _folding(
    "convert_of_constant", "convert(c) -> constant",
    "c is a constant; float -> integer only when every value is finite and in range after "
    "truncation; NaN -> bool is not folded.")
broadcast_of_constant = _folding(
    "broadcast_of_constant", "broadcast_in_dim(c, dims) -> constant",
    "c is a constant (a splat gives a splat of any size) and every user left with constant operands "
    "only folds too (XLA never folds a broadcast: it would see the user differently).")
reshape_of_constant = _folding(
    "reshape_of_constant", "reshape(c) -> constant", "c is a constant (a splat gives a splat of any size).")
transpose_of_constant = _folding(
    "transpose_of_constant", "transpose(c, p) -> constant", "c is a constant (a splat gives a splat of any size).")
reduce_of_constant = _folding(
    "reduce_of_constant", "reduce(c, init, dims, body=f) -> constant",
    "one input; c and init constants (c up to 2**20 elements); the body applies one of add, "
    "multiply, maximum, minimum, and, or to its two arguments and init is its identity (XLA may "
    "leave it out); float sums and products only where every partial result is exact in any order "
    "and no sum is zero.")
op_of_constants = _folding(
    "op_of_constants", "op(c1, ...) -> constant op(c1, ...)",
    "any other op with a registry evaluate (select, clamp, slice, concatenate, reverse, "
    "dynamic_slice, dot_general, sort, ...) whose operands are all constants, whose result has at "
    "most 1024 elements (splats of any size for data movement), which evaluate does not decline "
    "(float dots only where every product and partial sum is exact), and whose users left with "
    "constant operands only fold too.")


BOUNDARY = "hloforge.call_boundary"  # on inline's calls of identity functions that keep constants behind a call
BOUNDARY_FUNCTION = "hloforge_call_boundary"  # (their name; SymbolTable.insert makes each one unique)
FOLLOW_LIMIT = 256  # ops a dropped call boundary may reach before call_boundary_of_constant gives up
# ops whose results XLA's import folders never see as constants (XLA runs them, or folds them only
# after it has inlined calls)
OPAQUE = frozenset({
    "func.call", "stablehlo.optimization_barrier", "stablehlo.custom_call", "stablehlo.rng",
    "stablehlo.rng_bit_generator", "stablehlo.infeed", "stablehlo.recv", "stablehlo.all_reduce",
    "stablehlo.all_gather", "stablehlo.all_to_all", "stablehlo.reduce_scatter",
    "stablehlo.collective_permute", "stablehlo.collective_broadcast"})
# users that take a constant operand as the same bits whether XLA sees it as a literal or not
_TAKES_ANY_CONSTANT = frozenset({"func.return", "func.call", "stablehlo.optimization_barrier"})
# users that may not, even next to an operand XLA computes at run time (XLA removes some custom calls,
# as Sharding, and then folds their users; loops and branches move constants into their bodies)
_NOT_BESIDE_VALUES = frozenset({"stablehlo.custom_call", *names("control_flow")})


def plan_call_boundary_of_constant(op):
    """The plan of ``call_boundary_of_constant`` for the call ``op`` (pure), or why it does not fire."""
    return _boundary_group(op)


@needs_operand(CONSTANT)
def call_boundary_of_constant(op, rewriter):
    """call @identity(c) -> c  (the call boundaries inline puts where a constant crosses a call)

    Preconditions: the call carries ``hloforge.call_boundary`` and its operand is a constant;
    every op that would be left with constant operands only is one evaluate computes (XLA then
    folds it to the same bits, whichever folder it uses), and so on as far as those constants
    reach (at most 256 ops); every other op they reach has an operand XLA computes at run time
    (it compiles such an op the same way whether its other operand is a literal or comes through
    a call; not a custom call, loop or branch) or is ``func.return``, a call or a barrier.
    Boundaries of constants that meet in one op go together or not at all. Their identity
    functions go too.
    """
    group = plan_call_boundary_of_constant(op)
    if isinstance(group, str):
        return group
    for boundary in group:
        identity = _function(boundary, ir.FlatSymbolRefAttr(boundary.attributes["callee"]).value)
        rewriter.replace_op(boundary, [boundary.operands[0]])
        if identity is not None:
            rewriter.erase_op(identity)
    return None


def drop_boundaries(calls) -> None:
    """Drop the call boundaries among ``calls`` [(ir.Operation, its callee's name)], just made by
    inline, that call_boundary_of_constant would drop, outside the greedy driver."""
    dropped = set()  # (by callee: each boundary calls a function of its own)
    for call, name in calls:
        if name in dropped:
            continue
        group = _boundary_group(call)
        if isinstance(group, str):
            continue
        for boundary in group:
            callee = ir.FlatSymbolRefAttr(boundary.attributes["callee"]).value
            dropped.add(callee)
            identity = _function(boundary, callee)
            boundary.results[0].replace_all_uses_with(boundary.operands[0])
            boundary.operation.erase()
            if identity is not None:
                identity.erase()


def _boundary_of_constant(op):
    """(array, splat) of the constant behind ``op`` if it is a call boundary of one, else None."""
    if getattr(op, "name", None) != "func.call" or BOUNDARY not in op.attributes or len(op.operands) != 1:
        return None
    if producer(op.operands[0], CONSTANT) is None:
        return None
    return _constant_operand(op.operands[0])


def _function(op, name: str):
    """The func.func ``name`` of the module around ``op``, if it is one of inline's identities."""
    if not name.startswith(BOUNDARY_FUNCTION):
        return None
    module = op.operation
    while module.name != "builtin.module":
        module = module.parent
    for f in module.regions[0].blocks[0].operations:
        if f.operation.name == "func.func" and ir.StringAttr(f.attributes["sym_name"]).value == name:
            return f.operation
    return None


def _boundary_group(first):
    """The call boundaries of constants to drop with ``first``, or why not: XLA computes the same bits
    once their results are literals (the preconditions of call_boundary_of_constant). Values flow
    from the boundaries through every op whose operands become known; an op left waiting for an
    operand computed from other boundaries of constants takes those into the group."""
    value = _boundary_of_constant(first)
    if value is None:
        return "not a call boundary (hloforge.call_boundary) of a readable constant"
    group, known, work, waiting, budget = [], {}, [], {}, [FOLLOW_LIMIT]

    def join(boundary, value):
        group.append(boundary)
        known[boundary.results[0]] = value
        work.append(boundary.results[0])

    join(first, value)
    while work:
        while work:
            for use in list(work.pop().uses):
                user = use.owner
                if user.name in _TAKES_ANY_CONSTANT:
                    continue
                budget[0] -= 1
                info = OPS.get(user.name)
                if budget[0] < 0:
                    return f"the constants reach more than {FOLLOW_LIMIT} ops"
                if info is None:
                    return f"the constants reach {user.name}, which the registry does not know"
                if "non_tensor" in info.traits or not len(user.results):
                    return f"the constants reach {user.name}, which has no tensor results"
                outcome = _flow(user, known, work)
                if outcome is False:
                    return (f"XLA could fold {user.name} differently: evaluate declines it or cannot read a "
                            "constant operand")
                if outcome is None:
                    waiting[user.operation] = user
        for key, user in list(waiting.items()):
            if all(r in known for r in user.results):
                del waiting[key]
                continue
            found = [b for v in user.operands if _known_or_constant(v, known) is None
                     for b in _boundaries_behind(v, known, budget)]
            for boundary, value in found:
                if boundary.results[0] not in known:
                    join(boundary, value)
            if work:
                break  # (flow again; this op may now compute)
    for user in waiting.values():  # (each one keeps an operand that is not known)
        if all(r in known for r in user.results):
            continue
        if user.name in _NOT_BESIDE_VALUES:
            return f"the constants reach {user.name} beside a computed operand (XLA may fold it later)"
        if not any(computed_at_run_time(v, budget) for v in user.operands if _known_or_constant(v, known) is None):
            return (f"XLA folds {user.name}, computed from constants only, where evaluate declines or cannot "
                    "tell its bits")
    return tuple(group)


def _flow(user, known, work):
    """Evaluate ``user`` once its operands are known or literal: True when it did (its results are
    known now), None when an operand is still computed, False when XLA could fold it differently."""
    if all(r in known for r in user.results):
        return True
    operands = [_known_or_constant(v, known) for v in user.operands]
    if any(o is _UNREADABLE for o in operands):
        return False
    if any(o is None for o in operands):
        return None
    folded = _evaluation(user, operands)
    if isinstance(folded, str):
        return False
    for result, v in zip(user.results, folded):
        known[result] = v
        work.append(result)
    return True


def _boundaries_behind(value, known, budget) -> list:
    """[(boundary, its constant)] when ``value`` is computed from literals and boundaries of
    constants only (each boundary once), else []."""
    found, stack, seen = [], [value], set()
    while stack:
        v = stack.pop()
        if v in known or producer(v, CONSTANT) is not None:
            continue
        op = v.owner
        if isinstance(op, ir.Block):
            return []
        if op.operation in seen:
            continue
        seen.add(op.operation)
        budget[0] -= 1
        if budget[0] < 0:
            return []
        behind = _boundary_of_constant(op)
        if behind is not None:
            found.append((op, behind))
        elif op.name in OPAQUE or OPS.get(op.name) is None:
            return []  # (a call, a barrier, a custom call: XLA's import folders do not see through it)
        else:
            stack.extend(op.operands)
    return found


_UNREADABLE = object()


def _known_or_constant(v, known):
    """(array, splat) of a constant ``v`` (``known`` or a literal), _UNREADABLE, or None for a computed value."""
    if v in known:
        return known[v]
    if producer(v, CONSTANT) is None:
        return None
    found = _constant_operand(v)
    return _UNREADABLE if found is None else found


def computed_at_run_time(value, budget, opaque=OPAQUE) -> bool:
    """Whether ``value`` depends on a block argument or an op XLA runs (``opaque``), so that XLA cannot
    fold what it feeds; False too when that takes more than ``budget[0]`` looks (``budget`` is spent)."""
    stack, seen = [value], set()
    while stack:
        owner = stack.pop().owner
        if isinstance(owner, ir.Block) or owner.name in opaque:
            return True
        if owner.operation in seen:
            continue
        seen.add(owner.operation)
        budget[0] -= 1
        if budget[0] < 0:
            return False
        stack.extend(owner.operands)
    return False


def plan_multiply_by_one(op):
    """The plan of ``multiply_by_one`` for the multiply ``op`` (pure), or why it does not fire."""
    complex_one = False
    for i in (0, 1):
        c = splat_value(op.operands[i])
        if c is None or not c == 1:
            continue
        if c.dtype.kind == "c" and not finite_math():
            complex_one = True
            continue
        return op.operands[1 - i]
    if complex_one:
        return "a complex x * 1 without finite math (x * (1+0j) turns an infinite part into NaN)"
    return "neither operand is a splat constant 1"


@needs_operand(CONSTANT)
def multiply_by_one(op, rewriter):
    """x * 1 -> x  (and 1 * x -> x)

    Preconditions: the other operand is a splat constant 1; for complex x only under
    finite math (x * (1+0j) turns an infinite part into NaN).
    """
    x = plan_multiply_by_one(op)
    if isinstance(x, str):
        return x
    rewriter.replace_op(op, [x])
    return None


class _Scaled(NamedTuple):
    x: object          # the inner multiply's other operand
    scale: np.ndarray  # s1 * s2, 0-d


_SCALE_REASONS = (
    "no operand is a splat constant beside a multiply",
    "the inner multiply has no splat constant operand",
    "a float or complex scale without finite math (reassociating changes rounding and overflow)",
    "the registry does not evaluate s1 * s2")


def plan_multiply_of_multiply(op):
    """The plan of ``multiply_of_multiply`` for the multiply ``op`` (pure), or why it does not fire."""
    reached = 0
    for i in (0, 1):
        inner = producer(op.operands[1 - i], "stablehlo.multiply")
        s2 = splat_value(op.operands[i]) if inner is not None else None
        if s2 is None:
            continue
        reached = max(reached, 1)
        for j in (0, 1):
            s1 = splat_value(inner.operands[j])
            if s1 is None:
                continue
            if s1.dtype.kind in "fcV" and not finite_math():
                reached = max(reached, 2)
                continue
            scale = evaluate("stablehlo.multiply", s1, s2)
            if scale is None:
                reached = max(reached, 3)
                continue
            return _Scaled(inner.operands[1 - j], scale)
    return _SCALE_REASONS[reached]


@needs_operand(CONSTANT)
def multiply_of_multiply(op, rewriter):
    """(x * s1) * s2 -> x * (s1 * s2)

    Preconditions: s1 and s2 are splat constants whose product evaluate computes; for floats and
    complex only under finite math (reassociation changes rounding, and x * s1 may overflow where
    x * (s1 * s2) does not).
    """
    plan = plan_multiply_of_multiply(op)
    if isinstance(plan, str):
        return plan
    with rewriter.ip:
        c = constant(plan.scale, op.result.type, op.location)
        out = build("stablehlo.multiply", [plan.x, c], loc=op.location)
    rewriter.replace_op(op, [out])
    return None


PATTERNS = {
    "elementwise_of_constants": (ELEMENTWISE_ROOTS, elementwise_of_constants),
    **{name: (roots, globals()[name]) for name, roots in _BY_NAME.items()},
    "op_of_constants": (OTHER_ROOTS, op_of_constants),
    "call_boundary_of_constant": (("func.call",), call_boundary_of_constant),
    "multiply_by_one": (("stablehlo.multiply",), multiply_by_one),
    "multiply_of_multiply": (("stablehlo.multiply",), multiply_of_multiply),
}
