"""FFT canonicalization and inverse-FFT elimination.

``CANONICALIZE`` patterns are exact. ``INVERSE`` patterns are exact in real arithmetic
and assume finite values: an Inf or NaN in x spreads to every element through an
FFT pair (``irfft(rfft(x))`` of ``[inf, 0]`` is all NaN) but stays where it was once
the pair is removed. ``Module.optimize(finite_math=False)`` skips them.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from hloforge.frontend import attributes as attr
from hloforge.frontend.context import ir
from hloforge.passes._ir import (
    MAX_FOLD, build, constant, constant_value, dtype_of, element_type, evaluate, finite_math, ints, producer,
    shape_of, slice_params, splat_value, tensor)

FFT = "stablehlo.fft"
TRANSPOSE = "stablehlo.transpose"


def fft_type(op) -> str:
    """"FFT", "IFFT", "RFFT" or "IRFFT"."""
    return attr.read_fft_type(op)


# ---------------------------------------------------------------- canonicalization

class _Folded(NamedTuple):
    value: np.ndarray  # (in a tuple: an array has no truth value)


def plan_fft_of_zero(op):
    """The zero that ``fft_of_zero`` folds the fft ``op`` to (pure), or why it does not fire."""
    c = splat_value(op.operands[0])
    if c is None:
        return "the operand is not a splat constant"
    if c != 0:
        return "the operand is a splat of a nonzero value"
    dtype = dtype_of(op.result)
    if all(n == 1 for n in ints(op, "fft_length")):  # (a copy: each part keeps its sign)
        kind, c = fft_type(op), np.asarray(c)
        if kind == "RFFT":
            return _Folded(np.array(complex(c.real, 0.0), dtype))  # (complex(-0.0, 0.0) keeps the -0.0)
        if kind == "IRFFT":
            return _Folded(np.array(c.real, dtype))
        return _Folded(np.array(c, dtype))
    if not finite_math():
        return ("XLA's FFT gives zeros of either sign by a pattern of the length (+0.0 in, -0.0 out: rfft of "
                "length 8, fft of length 127), so a longer transform of zeros folds under finite math only")
    return _Folded(np.zeros((), dtype))


def fft_of_zero(op, rewriter):
    """fft(splat 0) -> splat 0

    Preconditions: the operand is a splat constant equal to 0 (any FFT type); every fft_length is 1
    (the result is the zero itself, each part's sign kept: rfft's imaginary part is +0.0), or finite
    math (the result is +0.0: XLA's FFT library turns zeros of either sign into zeros of both, in a
    pattern that depends on the length, as rfft of 8 zeros or fft of 127).
    """
    plan = plan_fft_of_zero(op)
    if isinstance(plan, str):
        return plan
    with rewriter.ip:
        out = constant(plan.value, op.result.type, op.location)
    rewriter.replace_op(op, [out])


def plan_fft_of_constant(op):
    """The value that ``fft_of_constant`` folds the fft ``op`` to (pure), or why it does not fire."""
    x = op.operands[0]
    if producer(x, "stablehlo.constant") is None:
        return "the operand is not a constant"
    if np.prod(shape_of(op.result)) > MAX_FOLD:
        return f"the result has more than {MAX_FOLD} elements"
    c = constant_value(x)
    if c is None:
        return f"the constant's value is not read (it is empty, or not a splat and over {MAX_FOLD} elements)"
    value = evaluate(FFT, np.asarray(c), fft_type=fft_type(op), fft_length=tuple(ints(op, "fft_length")))
    if value is None:
        return "the registry does not evaluate it (only length-1 transforms of finite, normal values)"
    return _Folded(value)


def fft_of_constant(op, rewriter):
    """fft(c, type, L) -> constant

    Preconditions: c is a constant, the result has at most 1024 elements, and the registry's
    evaluate gives XLA's bits for it (length-1 transforms of finite, normal values).
    """
    plan = plan_fft_of_constant(op)
    if isinstance(plan, str):
        return plan
    with rewriter.ip:
        out = constant(plan.value, op.result.type, op.location)
    rewriter.replace_op(op, [out])


class _TransposedFFT(NamedTuple):
    x: object       # what the transpose transposes
    kind: str       # the FFT type
    lengths: list   # the fft_length of the FFT of x
    perm: list      # the permutation, applied after the FFT


def plan_fft_of_transpose(op):
    """The plan of ``fft_of_transpose`` for the fft ``op`` (pure), or why it does not fire."""
    t = producer(op.operands[0], TRANSPOSE)
    if t is None:
        return "the operand is not a transpose"
    perm, lengths, kind = ints(t, "permutation"), ints(op, "fft_length"), fft_type(op)
    rank, batch = len(perm), len(perm) - len(lengths)
    if any((i < batch) != (p < batch) for i, p in enumerate(perm)):
        return "the permutation mixes batch and FFT dims"
    if perm == list(range(rank)):
        return "the permutation is the identity (noop_transpose's case)"
    if kind in ("RFFT", "IRFFT") and perm[-1] != rank - 1:
        return f"an {kind} whose permutation moves the last dim"
    new_lengths = [0] * len(lengths)
    for i in range(batch, rank):
        new_lengths[perm[i] - batch] = lengths[i - batch]
    x = t.operands[0]
    shape = list(shape_of(x))
    if kind == "RFFT":
        shape[-1] = new_lengths[-1] // 2 + 1
    elif kind == "IRFFT":
        shape[-1] = new_lengths[-1]
    if [shape[p] for p in perm] != list(shape_of(op.result)):
        return "the transposed FFT of x would not have the result's shape"
    return _TransposedFFT(x, kind, new_lengths, perm)


def fft_of_transpose(op, rewriter):
    """fft(transpose(x, p), L) -> transpose(fft(x, L permuted by p), p)

    Preconditions: p maps batch dims to batch dims and FFT dims to FFT dims (the
    multi-dimensional transform is separable, so FFT dims may be permuted among
    themselves with their lengths); for RFFT and IRFFT p keeps the last dim last.
    """
    plan = plan_fft_of_transpose(op)
    if isinstance(plan, str):
        return plan
    with rewriter.ip:
        f = build(FFT, [plan.x], fft_type=plan.kind, fft_length=plan.lengths, loc=op.location)
        out = build(TRANSPOSE, [f], permutation=plan.perm, loc=op.location)
    rewriter.replace_op(op, [out])


def plan_transpose_of_transpose(op):
    """(x, the composed permutation) of ``transpose_of_transpose`` for the transpose ``op`` (pure), or
    why it does not fire."""
    inner = producer(op.operands[0], TRANSPOSE)
    if inner is None:
        return "the operand is not a transpose"
    p1 = ints(inner, "permutation")
    return inner.operands[0], [p1[i] for i in ints(op, "permutation")]


def transpose_of_transpose(op, rewriter):
    """transpose(transpose(x, p1), p2) -> transpose(x, [p1[i] for i in p2]), or x

    Preconditions: none beyond the producer being a transpose.
    """
    plan = plan_transpose_of_transpose(op)
    if isinstance(plan, str):
        return plan
    x, perm = plan
    if perm == list(range(len(perm))):
        rewriter.replace_op(op, [x])
        return None
    with rewriter.ip:
        out = build(TRANSPOSE, [x], permutation=perm, loc=op.location)
    rewriter.replace_op(op, [out])


def plan_noop_transpose(op):
    """x, which ``noop_transpose`` puts in place of the transpose ``op`` (pure), or why it does not fire."""
    perm = ints(op, "permutation")
    if perm != list(range(len(perm))):
        return "the permutation is not the identity"
    return op.operands[0]


def noop_transpose(op, rewriter):
    """transpose(x, identity) -> x

    Preconditions: the permutation is [0, 1, ..., rank - 1].
    """
    plan = plan_noop_transpose(op)
    if isinstance(plan, str):
        return plan
    rewriter.replace_op(op, [plan])


def plan_slice_of_transpose(op):
    """(x, the permutation, x's slice start, limit and strides) of ``slice_of_transpose`` for the slice
    ``op`` (pure), or why it does not fire."""
    t = producer(op.operands[0], TRANSPOSE)
    if t is None:
        return "the operand is not a transpose"
    if any(u.owner.name != "stablehlo.slice" for u in t.result.uses):
        return "another user of the transpose is not a slice (the transpose would stay)"
    perm = ints(t, "permutation")
    start, limit, strides = slice_params(op)
    rank = len(perm)
    inner = [[0] * rank, [0] * rank, [1] * rank]
    for i, p in enumerate(perm):  # (result dim i is x's dim perm[i])
        inner[0][p], inner[1][p], inner[2][p] = start[i], limit[i], strides[i]
    return t.operands[0], perm, *inner


def slice_of_transpose(op, rewriter):
    """transpose(x, p)[s] -> transpose(x[s'], p), s' the slice s with its dims moved back by p

    // Pattern: transpose(x: 2x4x64, [0, 2, 1])[0:2, 0:8, 0:4] -> transpose(x[0:2, 0:4, 0:8], [0, 2, 1])
    Preconditions: every user of the transpose is a slice (so, once each has moved, the transpose
    is gone and an FFT that x is sees slices for users: jax transposes around an FFT over
    non-trailing axes, and fft-truncate reads the modes slices keep). Exact.
    """
    plan = plan_slice_of_transpose(op)
    if isinstance(plan, str):
        return plan
    x, perm, start, limit, strides = plan
    with rewriter.ip:
        s = build("stablehlo.slice", [x], start_indices=start, limit_indices=limit, strides=strides, loc=op.location)
        out = build(TRANSPOSE, [s], permutation=perm, loc=op.location)
    rewriter.replace_op(op, [out])


CANONICALIZE = {
    "fft_of_zero": ((FFT,), fft_of_zero),
    "fft_of_constant": ((FFT,), fft_of_constant),
    "fft_of_transpose": ((FFT,), fft_of_transpose),
    "transpose_of_transpose": ((TRANSPOSE,), transpose_of_transpose),
    "noop_transpose": ((TRANSPOSE,), noop_transpose),
    "slice_of_transpose": (("stablehlo.slice",), slice_of_transpose),
}


# ---------------------------------------------------------------- inverse elimination (finite math)

def _inverse_of(op, inner: str, value, what: str = "operand"):
    """x when ``value`` is ``inner(x, L)``, op's fft_length is L and op's type is x's type, else why
    not (``what`` names ``value`` in the reason)."""
    f = producer(value, FFT)
    if f is None or fft_type(f) != inner:
        return f"the {what} is not an {inner}"
    if ints(f, "fft_length") != ints(op, "fft_length"):
        return "the fft_lengths differ"
    x = f.operands[0]
    return x if x.type == op.result.type else "the result type is not x's"


def _plan_inverse(op, outer: str, inner: str):
    """x, for an ``outer`` ``op`` of ``inner(x)`` with the same lengths, or why not."""
    if fft_type(op) != outer:
        return f"an {fft_type(op)}, not an {outer}"
    return _inverse_of(op, inner, op.operands[0])


def _scalar_operand(value) -> bool:
    """A splat constant, or a broadcast_in_dim of a one-element tensor."""
    if splat_value(value) is not None:
        return True
    b = producer(value, "stablehlo.broadcast_in_dim")
    return b is not None and int(np.prod(shape_of(b.operands[0]))) == 1


def _peel_scales(value):
    """(scales, rest) for ``rest * s1 * s2 ...`` where each s is a scalar operand."""
    scales = []
    while (m := producer(value, "stablehlo.multiply")) is not None:
        a, b = m.operands
        if _scalar_operand(b):
            scales.append(b)
            value = a
        elif _scalar_operand(a):
            scales.append(a)
            value = b
        else:
            break
    return scales, value


def _real_scale(s, x_type):
    """A builder of the real ``s`` broadcast to ``x_type``, or None if s may be non-real."""
    element = ir.RankedTensorType(x_type).element_type  # (x's type is static: it is op's)
    c = splat_value(s)
    if c is not None:
        return None if c.imag != 0 else (lambda loc: constant(c.real, x_type, loc))
    b = producer(s, "stablehlo.broadcast_in_dim")
    u, dims = b.operands[0], ints(b, "broadcast_dimensions")
    u_type = tensor(shape_of(u), element)
    c = splat_value(u)
    if c is not None:
        if c.imag != 0:
            return None
        real = lambda loc: constant(c.real, u_type, loc)  # noqa: E731
    elif (conv := producer(u, "stablehlo.convert")) is not None and \
            dtype_of(conv.operands[0]).kind != "c":
        r = conv.operands[0]
        real = (lambda loc: r) if element_type(r) == element else (
            lambda loc: build("stablehlo.convert", [r], dtype=dtype_of(x_type), loc=loc))
    elif (cx := producer(u, "stablehlo.complex")) is not None and _is_zero(cx.operands[1]):
        real = lambda loc: cx.operands[0]  # noqa: E731
    elif _realness(u) is not None:
        real = lambda loc: build("stablehlo.real", [u], loc=loc)  # noqa: E731
    else:
        return None
    return lambda loc: build("stablehlo.broadcast_in_dim", [real(loc)], shape=shape_of(x_type),
                             broadcast_dimensions=dims, loc=loc)


def _realness(value, depth: int = 8):
    """"nonnegative" or "real" when complex ``value`` is computed from constants with imaginary part
    0 by products, quotients, sums, square roots of nonnegative values and such reductions (jax's
    ortho scale, ``1 / sqrt(reduce(mul, n))``, which constant folding leaves to XLA: its complex
    sqrt and division are XLA's own), so its imaginary part is 0 however it is rounded; else None."""
    if depth == 0:
        return None
    c = constant_value(value) if producer(value, "stablehlo.constant") is not None else None
    if c is not None:
        c = np.asarray(c)
        if c.dtype.kind != "c" or (c.imag != 0).any() or not np.isfinite(c.real).all():
            return None
        return "nonnegative" if (c.real >= 0).all() else "real"
    op = producer(value)
    if op is None:
        return None
    parts = [_realness(v, depth - 1) for v in op.operands]
    if any(p is None for p in parts):
        return None
    nonnegative = all(p == "nonnegative" for p in parts)
    if op.name in ("stablehlo.multiply", "stablehlo.divide", "stablehlo.add", "stablehlo.broadcast_in_dim",
                   "stablehlo.reshape") or (op.name == "stablehlo.reduce" and len(op.operands) == 2):
        if op.name == "stablehlo.reduce":
            body = list(op.regions[0].blocks[0].operations)
            if len(body) != 2 or body[0].name not in ("stablehlo.multiply", "stablehlo.add"):
                return None
        return "nonnegative" if nonnegative else "real"
    if op.name == "stablehlo.subtract":
        return "real"
    if op.name == "stablehlo.sqrt" and nonnegative:
        return "nonnegative"
    return None


def _is_zero(value) -> bool:
    c = splat_value(value)
    if c is None and (b := producer(value, "stablehlo.broadcast_in_dim")) is not None:
        c = splat_value(b.operands[0])
    return c is not None and c == 0


def _plan_inverse_scaled(op, outer: str, inner: str):
    """(x, a builder of each scale) for an ``outer`` ``op`` of ``inner(x) * s1 * s2 ...``, or why not."""
    if fft_type(op) != outer:
        return f"an {fft_type(op)}, not an {outer}"
    scales, rest = _peel_scales(op.operands[0])
    if not scales:
        return "the operand is not a product with a scalar"
    x = _inverse_of(op, inner, rest, "value the scalars multiply")
    if isinstance(x, str):
        return x
    if outer == "IRFFT":
        builders = [_real_scale(s, x.type) for s in scales]
        if any(b is None for b in builders):
            return "a scale is not known to be real"
    else:
        builders = [lambda loc, s=s: s for s in scales]
    return x, builders


def _scale(op, rewriter, plan):
    """Replaces ``op`` by x times each scale of ``plan``, a plan of ``_plan_inverse_scaled``."""
    x, builders = plan
    with rewriter.ip:
        out = x
        for scale in builders:
            out = build("stablehlo.multiply", [out, scale(op.location)], loc=op.location)
    rewriter.replace_op(op, [out])


def _inverse_pattern(name: str, outer: str, inner: str, scaled: bool, doc: str):
    """The pattern ``name``: an ``outer`` FFT of ``inner(x)`` (times scalars when ``scaled``) is x (times
    them); its pure match is the pattern's ``plan`` (x, or x and the scales' builders, or a reason)."""
    def plan(op):
        return (_plan_inverse_scaled if scaled else _plan_inverse)(op, outer, inner)

    def pattern(op, rewriter):
        found = plan(op)
        if isinstance(found, str):
            return found
        if scaled:
            _scale(op, rewriter, found)
        else:
            rewriter.replace_op(op, [found])
        return None
    pattern.__name__ = pattern.__qualname__ = name
    pattern.__doc__ = doc
    plan.__name__ = plan.__qualname__ = f"plan_{name}"
    pattern.plan = plan
    return pattern


_FINITE = "Finite math only."
_SCALARS = "every s is a splat constant or a broadcast of one (complex) element."
# name: (outer, inner, scaled, the rewrite, its preconditions)
_INVERSES = {
    "irfft_of_rfft": ("IRFFT", "RFFT", False, "irfft(rfft(x, L), L) -> x",
                      "both fft_lengths are equal element-wise (the complex shape is not enough: lengths 2k "
                      "and 2k+1 give the same number of bins) and the result type is x's."),
    "ifft_of_fft": ("IFFT", "FFT", False, "ifft(fft(x, L), L) -> x", "equal fft_lengths."),
    "fft_of_ifft": ("FFT", "IFFT", False, "fft(ifft(x, L), L) -> x", "equal fft_lengths."),
    "irfft_of_scaled_rfft": ("IRFFT", "RFFT", True, "irfft(rfft(x, L) * s, L) -> x * s",
                             "as irfft_of_rfft; every s (a chain of multiplies is peeled) is a scalar: a splat "
                             "constant or a broadcast of one element, and real: a constant with imaginary part 0, "
                             "a convert from a real type, or complex(re, 0)."),
    "ifft_of_scaled_fft": ("IFFT", "FFT", True, "ifft(fft(x, L) * s, L) -> x * s", f"as ifft_of_fft; {_SCALARS}"),
    "fft_of_scaled_ifft": ("FFT", "IFFT", True, "fft(ifft(x, L) * s, L) -> x * s", f"as fft_of_ifft; {_SCALARS}"),
}
INVERSE = {
    name: ((FFT,), _inverse_pattern(name, outer, inner, scaled,
                                    f"{rewrite}\n\n    Preconditions: {pre} {_FINITE}\n    "))
    for name, (outer, inner, scaled, rewrite, pre) in _INVERSES.items()}
