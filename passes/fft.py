"""FFT canonicalization and inverse-FFT elimination.

``CANONICALIZE`` patterns are exact. ``INVERSE`` patterns are exact in real arithmetic
and assume finite values: an Inf or NaN in x spreads to every element through an
FFT pair (``irfft(rfft(x))`` of ``[inf, 0]`` is all NaN) but stays where it was once
the pair is removed. ``Module.optimize(finite_math=False)`` skips them.
"""
from __future__ import annotations

import numpy as np

from hloforge.frontend import attributes as attr
from hloforge.frontend.context import ir
from hloforge.passes._ir import (
    MAX_FOLD, NO_MATCH, build, constant, constant_value, dtype_of, element_type, evaluate, ints, producer,
    shape_of, splat_value, tensor)

FFT = "stablehlo.fft"
TRANSPOSE = "stablehlo.transpose"


def fft_type(op) -> str:
    """"FFT", "IFFT", "RFFT" or "IRFFT"."""
    return attr.read_fft_type(op)


# ---------------------------------------------------------------- canonicalization

def fft_of_zero(op, rewriter):
    """fft(splat 0) -> splat 0

    Preconditions: the operand is a splat constant equal to 0 (any FFT type).
    """
    c = splat_value(op.operands[0])
    if c is None or c != 0:
        return NO_MATCH
    with rewriter.ip:
        out = constant(np.zeros((), dtype_of(op.result)), op.result.type, op.location)
    rewriter.replace_op(op, [out])


def fft_of_constant(op, rewriter):
    """fft(c, type, L) -> constant, computed by numpy in double precision

    Preconditions: c is a constant and both c and the result have at most 1024 elements.
    """
    x = op.operands[0]
    if producer(x, "stablehlo.constant") is None or np.prod(shape_of(op.result)) > MAX_FOLD:
        return NO_MATCH
    c = constant_value(x)
    if c is None:
        return NO_MATCH
    value = evaluate(FFT, np.asarray(c), fft_type=fft_type(op), fft_length=tuple(ints(op, "fft_length")))
    if value is None:
        return NO_MATCH
    with rewriter.ip:
        out = constant(value, op.result.type, op.location)
    rewriter.replace_op(op, [out])


def fft_of_transpose(op, rewriter):
    """fft(transpose(x, p), L) -> transpose(fft(x, L permuted by p), p)

    Preconditions: p maps batch dims to batch dims and FFT dims to FFT dims (the
    multi-dimensional transform is separable, so FFT dims may be permuted among
    themselves with their lengths); for RFFT and IRFFT p keeps the last dim last.
    """
    t = producer(op.operands[0], TRANSPOSE)
    if t is None:
        return NO_MATCH
    perm, lengths, kind = ints(t, "permutation"), ints(op, "fft_length"), fft_type(op)
    rank, batch = len(perm), len(perm) - len(lengths)
    if any((i < batch) != (p < batch) for i, p in enumerate(perm)) or perm == list(range(rank)):
        return NO_MATCH
    if kind in ("RFFT", "IRFFT") and perm[-1] != rank - 1:
        return NO_MATCH
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
        return NO_MATCH
    with rewriter.ip:
        f = build(FFT, [x], fft_type=kind, fft_length=new_lengths, loc=op.location)
        out = build(TRANSPOSE, [f], permutation=perm, loc=op.location)
    rewriter.replace_op(op, [out])


def transpose_of_transpose(op, rewriter):
    """transpose(transpose(x, p1), p2) -> transpose(x, [p1[i] for i in p2]), or x

    Preconditions: none beyond the producer being a transpose.
    """
    inner = producer(op.operands[0], TRANSPOSE)
    if inner is None:
        return NO_MATCH
    p1 = ints(inner, "permutation")
    perm = [p1[i] for i in ints(op, "permutation")]
    x = inner.operands[0]
    if perm == list(range(len(perm))):
        rewriter.replace_op(op, [x])
        return None
    with rewriter.ip:
        out = build(TRANSPOSE, [x], permutation=perm, loc=op.location)
    rewriter.replace_op(op, [out])


def noop_transpose(op, rewriter):
    """transpose(x, identity) -> x

    Preconditions: the permutation is [0, 1, ..., rank - 1].
    """
    perm = ints(op, "permutation")
    if perm != list(range(len(perm))):
        return NO_MATCH
    rewriter.replace_op(op, [op.operands[0]])


CANONICALIZE = {
    "fft_of_zero": ((FFT,), fft_of_zero),
    "fft_of_constant": ((FFT,), fft_of_constant),
    "fft_of_transpose": ((FFT,), fft_of_transpose),
    "transpose_of_transpose": ((TRANSPOSE,), transpose_of_transpose),
    "noop_transpose": ((TRANSPOSE,), noop_transpose),
}


# ---------------------------------------------------------------- inverse elimination (finite math)

def _inverse_of(op, outer: str, inner: str, value):
    """x when ``value`` is ``inner(x, L)``, op is ``outer(., L)`` and op's type is x's type."""
    f = producer(value, FFT)
    if f is None or fft_type(f) != inner or ints(f, "fft_length") != ints(op, "fft_length"):
        return None
    x = f.operands[0]
    return x if x.type == op.result.type else None


def _eliminate(op, rewriter, outer: str, inner: str):
    if fft_type(op) != outer:
        return NO_MATCH
    x = _inverse_of(op, outer, inner, op.operands[0])
    if x is None:
        return NO_MATCH
    rewriter.replace_op(op, [x])


def irfft_of_rfft(op, rewriter):
    """irfft(rfft(x, L), L) -> x

    Preconditions: both fft_lengths are equal element-wise (the complex shape is not
    enough: lengths 2k and 2k+1 give the same number of bins) and the result type is x's.
    Finite math only.
    """
    return _eliminate(op, rewriter, "IRFFT", "RFFT")


def ifft_of_fft(op, rewriter):
    """ifft(fft(x, L), L) -> x

    Preconditions: equal fft_lengths. Finite math only.
    """
    return _eliminate(op, rewriter, "IFFT", "FFT")


def fft_of_ifft(op, rewriter):
    """fft(ifft(x, L), L) -> x

    Preconditions: equal fft_lengths. Finite math only.
    """
    return _eliminate(op, rewriter, "FFT", "IFFT")


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


def _eliminate_scaled(op, rewriter, outer: str, inner: str):
    if fft_type(op) != outer:
        return NO_MATCH
    scales, rest = _peel_scales(op.operands[0])
    if not scales:
        return NO_MATCH
    x = _inverse_of(op, outer, inner, rest)
    if x is None:
        return NO_MATCH
    if outer == "IRFFT":
        builders = [_real_scale(s, x.type) for s in scales]
        if any(b is None for b in builders):
            return NO_MATCH
    else:
        builders = [lambda loc, s=s: s for s in scales]
    with rewriter.ip:
        out = x
        for scale in builders:
            out = build("stablehlo.multiply", [out, scale(op.location)], loc=op.location)
    rewriter.replace_op(op, [out])


def irfft_of_scaled_rfft(op, rewriter):
    """irfft(rfft(x, L) * s, L) -> x * s

    Preconditions: as irfft_of_rfft; every s (a chain of multiplies is peeled) is a
    scalar: a splat constant or a broadcast of one element, and real: a constant with
    imaginary part 0, a convert from a real type, or complex(re, 0). Finite math only.
    """
    return _eliminate_scaled(op, rewriter, "IRFFT", "RFFT")


def ifft_of_scaled_fft(op, rewriter):
    """ifft(fft(x, L) * s, L) -> x * s

    Preconditions: as ifft_of_fft; every s is a splat constant or a broadcast of one
    (complex) element. Finite math only.
    """
    return _eliminate_scaled(op, rewriter, "IFFT", "FFT")


def fft_of_scaled_ifft(op, rewriter):
    """fft(ifft(x, L) * s, L) -> x * s

    Preconditions: as fft_of_ifft; every s is a splat constant or a broadcast of one
    (complex) element. Finite math only.
    """
    return _eliminate_scaled(op, rewriter, "FFT", "IFFT")


INVERSE = {
    "irfft_of_rfft": ((FFT,), irfft_of_rfft),
    "ifft_of_fft": ((FFT,), ifft_of_fft),
    "fft_of_ifft": ((FFT,), fft_of_ifft),
    "irfft_of_scaled_rfft": ((FFT,), irfft_of_scaled_rfft),
    "ifft_of_scaled_fft": ((FFT,), ifft_of_scaled_fft),
    "fft_of_scaled_ifft": ((FFT,), fft_of_scaled_ifft),
}
