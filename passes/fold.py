"""Constant folding: ops over constants become constants, and constant scales merge.

Values are computed by numpy in the op's dtype with StableHLO's semantics (see
``_eval``); an op whose result would be implementation-defined is left alone. Results
of at most 1024 elements are materialized, splats of any size.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from hloforge.frontend.context import stablehlo
from hloforge.passes import _eval
from hloforge.passes._ir import (
    MAX_FOLD, NO_MATCH, constant, constant_value, dtype_of, emit, finite_math, ints, producer, shape_of,
    splat_value)

CONSTANT = "stablehlo.constant"


def _all_constant(op) -> bool:
    for v in op.operands:
        owner = v.owner
        if not hasattr(owner, "name") or owner.name != CONSTANT:
            return False
    return True


def _constant_operands(pattern):
    """Run ``pattern`` only when every operand is a constant (the cheap check first)."""
    @functools.wraps(pattern)
    def checked(op, rewriter):
        return pattern(op, rewriter) if _all_constant(op) else NO_MATCH
    return checked


def _fold(op, rewriter, compute, splats: bool) -> bool:
    """Replace ``op`` (whose operands are constants) by the constant ``compute(*operand
    arrays)``. With ``splats``, all-splat operands are passed as 0-d arrays and a 0-d
    result becomes a splat of any size; else results have at most 1024 elements.
    Returns False if it declined."""
    shape, dtype = shape_of(op.result), dtype_of(op.result)
    args = [splat_value(v) for v in op.operands] if splats else [None]
    if any(a is None for a in args):
        if math.prod(shape) > MAX_FOLD:
            return False
        args = [constant_value(v, limit=1 << 20) for v in op.operands]
        if any(a is None for a in args):
            return False
        args = [np.asarray(a) for a in args]
    value = compute(*args)
    if value is None:
        return False
    with rewriter.ip:
        out = constant(np.asarray(value).astype(dtype, copy=False), op.result.type, op.location)
    rewriter.replace_op(op, [out])
    return True


@_constant_operands
def elementwise_of_constants(op, rewriter):
    """f(c1, ...) -> constant f(c1, ...)

    Preconditions: f is one of the unary/binary ops in ``_eval.UNARY``/``BINARY`` on a
    dtype it folds, every operand is a constant, and the result is implementation-defined
    for no element (integer division by 0 or MIN / -1, max/min of +0 and -0).
    """
    dtype = dtype_of(op.result)
    name = op.name
    if not _fold(op, rewriter, lambda *xs: _eval.elementwise(name, list(xs), dtype), True):
        return NO_MATCH


@_constant_operands
def compare_of_constants(op, rewriter):
    """compare(c1, c2, direction) -> constant bool

    Preconditions: both operands constants; compare_type absent or the dtype's natural one
    (not TOTALORDER); complex only for EQ and NE.
    """
    direction = _enum(op, "comparison_direction")
    ctype = _enum(op, "compare_type") if "compare_type" in op.attributes else None
    if not _fold(op, rewriter, lambda a, b: _eval.compare(a, b, direction, ctype), True):
        return NO_MATCH


def _enum(op, name: str) -> str:
    text = str(op.attributes[name])  # e.g. #stablehlo<comparison_direction EQ>
    return text[text.rindex(" ") + 1:-1]


@_constant_operands
def convert_of_constant(op, rewriter):
    """convert(c) -> constant

    Preconditions: c is a constant; float -> integer only when every value is finite and
    in range after truncation; NaN -> bool is not folded.
    """
    dtype = dtype_of(op.result)
    if not _fold(op, rewriter, lambda x: _eval.convert(x, dtype), True):
        return NO_MATCH


@_constant_operands
def broadcast_of_constant(op, rewriter):
    """broadcast_in_dim(c, dims) -> constant

    Preconditions: c is a constant (a splat gives a splat of any size).
    """
    shape = list(shape_of(op.result))
    dims = ints(op, "broadcast_dimensions")
    if not _fold(op, rewriter, lambda x: x if x.ndim == 0 else _eval.broadcast_in_dim(x, shape, dims),
                 True):
        return NO_MATCH


@_constant_operands
def reshape_of_constant(op, rewriter):
    """reshape(c) -> constant

    Preconditions: c is a constant (a splat gives a splat of any size).
    """
    shape = shape_of(op.result)
    if not _fold(op, rewriter, lambda x: x.reshape(shape) if x.ndim else x, True):
        return NO_MATCH


@_constant_operands
def transpose_of_constant(op, rewriter):
    """transpose(c, p) -> constant

    Preconditions: c is a constant (a splat gives a splat of any size).
    """
    perm = ints(op, "permutation")
    if not _fold(op, rewriter, lambda x: np.transpose(x, perm) if x.ndim else x, True):
        return NO_MATCH


@_constant_operands
def reduce_of_constant(op, rewriter):
    """reduce(c, init, dims, body=f) -> constant

    Preconditions: one input; c and init constants (c up to 2**20 elements); the body
    applies one of add, multiply, maximum, minimum, and, or to its two arguments;
    16-bit floats only when at most one element is reduced per result.
    """
    if len(op.operands) != 2:
        return NO_MATCH
    body = _reducer(op)
    dims = ints(op, "dimensions")
    if body is None or not _fold(op, rewriter, lambda x, init: _eval.reduce(x, init, dims, body), False):
        return NO_MATCH


def _reducer(op):
    """The name of the body's one binary op, when the body is ``return f(arg0, arg1)``."""
    block = op.regions[0].blocks[0]
    ops = list(block.operations)
    if len(ops) != 2 or len(ops[0].operands) != 2 or ops[1].name != "stablehlo.return":
        return None
    (a, b), (x, y) = list(ops[0].operands), list(block.arguments)
    if not ((a == x and b == y) or (a == y and b == x)) or ops[1].operands[0] != ops[0].result:
        return None
    return ops[0].name


def multiply_by_one(op, rewriter):
    """x * 1 -> x  (and 1 * x -> x)

    Preconditions: the other operand is a splat constant 1; for complex x only under
    finite math (x * (1+0j) turns an infinite part into NaN).
    """
    for i in (0, 1):
        c = splat_value(op.operands[i])
        if c is not None and c == 1 and (c.dtype.kind != "c" or finite_math()):
            rewriter.replace_op(op, [op.operands[1 - i]])
            return None
    return NO_MATCH


def multiply_of_multiply(op, rewriter):
    """(x * s1) * s2 -> x * (s1 * s2)

    Preconditions: s1 and s2 are splat constants; for floats and complex only under finite
    math (reassociation changes rounding, and x * s1 may overflow where x * (s1 * s2) does not).
    """
    for i in (0, 1):
        s2 = splat_value(op.operands[i])
        inner = producer(op.operands[1 - i], "stablehlo.multiply") if s2 is not None else None
        if inner is None:
            continue
        for j in (0, 1):
            s1 = splat_value(inner.operands[j])
            if s1 is None or (s1.dtype.kind in "fcV" and not finite_math()):
                continue
            scale = _eval.elementwise("stablehlo.multiply", [s1, s2], s1.dtype)
            with rewriter.ip:
                c = constant(scale, op.result.type, op.location)
                out = emit("stablehlo.multiply", [inner.operands[1 - j], c], op.result.type, None,
                           op.location)
            rewriter.replace_op(op, [out])
            return None
    return NO_MATCH


ELEMENTWISE_OPS = tuple(sorted(set(_eval.UNARY) | set(_eval.BINARY)))

PATTERNS = {
    "elementwise_of_constants": (ELEMENTWISE_OPS, elementwise_of_constants),
    "compare_of_constants": (stablehlo.CompareOp, compare_of_constants),
    "convert_of_constant": (stablehlo.ConvertOp, convert_of_constant),
    "broadcast_of_constant": (stablehlo.BroadcastInDimOp, broadcast_of_constant),
    "reshape_of_constant": (stablehlo.ReshapeOp, reshape_of_constant),
    "transpose_of_constant": (stablehlo.TransposeOp, transpose_of_constant),
    "reduce_of_constant": (stablehlo.ReduceOp, reduce_of_constant),
    "multiply_by_one": (stablehlo.MulOp, multiply_by_one),
    "multiply_of_multiply": (stablehlo.MulOp, multiply_of_multiply),
}
