"""numpy's products (tensordot, inner, vdot, vecdot, matvec, vecmat, cross), calculus on samples
(gradient, trapezoid, unwrap), index arithmetic (ravel_multi_index, unravel_index), bit packing,
and the callable helpers (apply_along_axis, apply_over_axes) that loop at trace time."""
from __future__ import annotations

import builtins
import operator

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy import _math as m
from hloforge.frontend.numpy._base import asarray, astype, broadcast_shapes, broadcast_to, normalize_axis, splat
from hloforge.frontend.numpy._contractions import einsum, matmul
from hloforge.frontend.numpy._reductions import sum as _sum
from hloforge.frontend.numpy._shape import concatenate, moveaxis, ravel, reshape, stack, transpose
from hloforge.frontend.tracing import Tensor
from hloforge.frontend.numpy._manipulation import diff


def tensordot(a, b, axes=2, *, precision=None):
    """numpy.tensordot: contract the last ``axes`` dims of a with the first of b (or explicit lists);
    ``precision`` as hloforge.numpy.matmul's."""
    x, y = asarray(a), asarray(b)
    if isinstance(axes, (int, np.integer)):
        k = operator.index(axes)
        if k < 0:
            raise ValueError("tensordot: axes must be non-negative")
        ax, bx = list(range(x.ndim - k, x.ndim)), list(range(k))
    else:
        ax, bx = axes
        ax = [ax] if isinstance(ax, (int, np.integer)) else list(ax)
        bx = [bx] if isinstance(bx, (int, np.integer)) else list(bx)
    if len(ax) != len(bx):
        raise ValueError("shape-mismatch for sum")
    ax = [normalize_axis(i, x.ndim) for i in ax]
    bx = [normalize_axis(i, y.ndim) for i in bx]
    for i, j in zip(ax, bx):
        if x.shape[i] != y.shape[j]:
            raise ValueError("shape-mismatch for sum")
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    ls = [next(letters) for _ in range(x.ndim)]
    rs = [next(letters) for _ in range(y.ndim)]
    for i, j in zip(ax, bx):
        rs[j] = ls[i]
    out = [c for d, c in enumerate(ls) if d not in ax] + [c for d, c in enumerate(rs) if d not in bx]
    return einsum(f"{''.join(ls)},{''.join(rs)}->{''.join(out)}", x, y, precision=precision)


def inner(a, b, *, precision=None):
    """numpy.inner: sum over the last axes (scalars multiply); ``precision`` as matmul's."""
    x, y = asarray(a), asarray(b)
    if x.ndim == 0 or y.ndim == 0:
        return m.multiply(x, y)
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(f"shapes {x.shape} and {y.shape} not aligned: {x.shape[-1]} (dim {x.ndim - 1}) != "
                         f"{y.shape[-1]} (dim {y.ndim - 1})")
    return tensordot(x, y, ([-1], [-1]), precision=precision)


def vdot(a, b, *, precision=None):
    """numpy.vdot: the flattened dot product, conjugating the first argument; ``precision`` as matmul's."""
    x, y = ravel(asarray(a)), ravel(asarray(b))
    if x.shape != y.shape:
        raise ValueError("cannot reshape array: vdot needs inputs of one size, "
                         f"got {x.shape[0]} and {y.shape[0]}")
    return tensordot(m.conj(x), y, 1, precision=precision)


def vecdot(x1, x2, /, *, axis=-1):
    """numpy.vecdot: sum(conj(x1) * x2) over ``axis`` with broadcasting."""
    x, y = asarray(x1), asarray(x2)
    ax_x, ax_y = normalize_axis(axis, x.ndim), normalize_axis(axis, y.ndim)
    if x.shape[ax_x] != y.shape[ax_y]:
        raise ValueError(f"vecdot: input arrays have mismatched dimensions along axis {axis}: "
                         f"{x.shape[ax_x]} and {y.shape[ax_y]}")
    x, y = moveaxis(x, ax_x, -1), moveaxis(y, ax_y, -1)
    prod = m.multiply(m.conj(x), y)
    return _sum(prod, axis=-1, dtype=prod.dtype)  # (numpy's vecdot: uint8 stays uint8, unlike sum)


def matvec(x1, x2, /):
    """numpy.matvec: (..., m, n) @ (..., n) -> (..., m)."""
    a, v = asarray(x1), asarray(x2)
    if a.ndim < 2 or v.ndim < 1:
        raise ValueError("matvec: x1 must be at least 2-D and x2 at least 1-D")
    out = matmul(a, reshape(v, v.shape + (1,)))
    return reshape(out, out.shape[:-1])


def vecmat(x1, x2, /):
    """numpy.vecmat: conj(x1) (..., m) @ (..., m, n) -> (..., n)."""
    v, a = asarray(x1), asarray(x2)
    if a.ndim < 2 or v.ndim < 1:
        raise ValueError("vecmat: x2 must be at least 2-D and x1 at least 1-D")
    out = matmul(reshape(m.conj(v), v.shape[:-1] + (1, v.shape[-1])), a)
    return reshape(out, out.shape[:-2] + out.shape[-1:])


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """numpy.cross of 2- or 3-vectors (2-vectors give the z component)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = asarray(a), asarray(b)
    x, y = moveaxis(x, normalize_axis(axisa, x.ndim), -1), moveaxis(y, normalize_axis(axisb, y.ndim), -1)
    if x.shape[-1] not in (2, 3) or y.shape[-1] not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    comps = lambda t: [t[..., i] for i in range(t.shape[-1])]
    xa, ya = comps(x), comps(y)
    if len(xa) == 2 and len(ya) == 2:
        return m.subtract(m.multiply(xa[0], ya[1]), m.multiply(xa[1], ya[0]))
    zero = 0
    x0, x1, x2 = xa + [zero] * (3 - len(xa))
    y0, y1, y2 = ya + [zero] * (3 - len(ya))
    c = [m.subtract(m.multiply(x1, y2), m.multiply(x2, y1)),
         m.subtract(m.multiply(x2, y0), m.multiply(x0, y2)),
         m.subtract(m.multiply(x0, y1), m.multiply(x1, y0))]
    shape = broadcast_shapes(*[asarray(t).shape for t in c], what="cross")
    c = [broadcast_to(asarray(t), shape) for t in c]
    common = dtypes.result_type(*c)
    out = stack([astype(t, common) for t in c], axis=-1)
    return moveaxis(out, -1, normalize_axis(axisc, out.ndim))


# ---------------------------------------------------------------- calculus on samples

def _slice(x, axis, start, stop):
    starts, limits = [0] * x.ndim, list(x.shape)
    starts[axis], limits[axis] = start, stop
    return ops.slice(x, starts, limits)


def gradient(f, *varargs, axis=None, edge_order=1):
    """numpy.gradient: central differences inside, one-sided (first order) at the edges; scalar
    spacings or coordinate arrays."""
    x = asarray(f)
    if edge_order != 1:
        raise NotImplementedError("gradient: only edge_order=1 is supported")
    axes = list(range(x.ndim)) if axis is None else (
        [normalize_axis(axis, x.ndim)] if isinstance(axis, (int, np.integer)) else [normalize_axis(a, x.ndim) for a in axis])
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0 and not isinstance(varargs[0], Tensor):
        spacing = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise TypeError("invalid number of arguments")
    if not dtypes.is_inexact(x.dtype):
        x = astype(x, np.float64)
    out = []
    for ax, h in zip(axes, spacing):
        n = x.shape[ax]
        if n < 2:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at least "
                             "(edge_order + 1) elements are required.")
        first = m.subtract(_slice(x, ax, 1, 2), _slice(x, ax, 0, 1))
        last = m.subtract(_slice(x, ax, n - 1, n), _slice(x, ax, n - 2, n - 1))
        if np.ndim(h) == 0 and not isinstance(h, Tensor):
            mid = m.divide(m.subtract(_slice(x, ax, 2, n), _slice(x, ax, 0, n - 2)), 2.0 * h) if n > 2 else None
            first, last = m.divide(first, h), m.divide(last, h)
        else:
            c = astype(asarray(h), x.dtype)
            if c.ndim != 1 or c.shape[0] != n:
                raise ValueError("when 1d, distances must match the length of the corresponding dimension")
            d = m.subtract(c[1:], c[:-1])
            shp = [1] * x.ndim
            shp[ax] = n - 1
            d = reshape(d, tuple(shp))
            d1, d2 = _slice(d, ax, 0, n - 2), _slice(d, ax, 1, n - 1)
            if n > 2:
                a_ = m.divide(m.negative(d2), m.multiply(d1, m.add(d1, d2)))
                b_ = m.divide(m.subtract(d2, d1), m.multiply(d1, d2))
                c_ = m.divide(d1, m.multiply(d2, m.add(d1, d2)))
                mid = m.add(m.add(m.multiply(a_, _slice(x, ax, 0, n - 2)), m.multiply(b_, _slice(x, ax, 1, n - 1))),
                            m.multiply(c_, _slice(x, ax, 2, n)))
            else:
                mid = None
            first = m.divide(first, _slice(d, ax, 0, 1))
            last = m.divide(last, _slice(d, ax, n - 2, n - 1))
        parts = [first] + ([mid] if mid is not None else []) + [last]
        common = dtypes.result_type(*parts)
        out.append(concatenate([astype(p, common) for p in parts], ax))
    return out[0] if len(out) == 1 else tuple(out)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """numpy.trapezoid: the trapezoidal rule along ``axis``."""
    yv = asarray(y)
    ax = normalize_axis(axis, yv.ndim)
    n = yv.shape[ax]
    if not dtypes.is_inexact(yv.dtype):
        yv = astype(yv, np.float64)
    avg = m.divide(m.add(_slice(yv, ax, 1, n), _slice(yv, ax, 0, n - 1)), 2.0) if n > 1 else _slice(yv, ax, 0, 0)
    if x is None:
        return _sum(m.multiply(avg, dx), axis=ax)
    xv = asarray(x)
    if xv.ndim == 1:
        d = m.subtract(xv[1:], xv[:-1])
        shp = [1] * yv.ndim
        shp[ax] = d.shape[0]
        d = reshape(d, tuple(shp))
    else:
        xa = normalize_axis(axis, xv.ndim)
        d = m.subtract(_slice(xv, xa, 1, xv.shape[xa]), _slice(xv, xa, 0, xv.shape[xa] - 1))
    return _sum(m.multiply(avg, d), axis=ax)


def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    """numpy.unwrap: remove jumps larger than ``discont`` by adding multiples of ``period``."""
    x = asarray(p)
    if not dtypes.is_inexact(x.dtype):
        x = astype(x, np.float64)
    ax = normalize_axis(axis, x.ndim)
    n = x.shape[ax]
    if n < 2:
        return x
    if discont is None:
        discont = period / 2
    high = period / 2
    dd = diff(x, axis=ax)
    ddmod = m.subtract(m.remainder(m.add(dd, high), period), high)
    ddmod = m.where(m.logical_and(m.equal(ddmod, -high), m.greater(dd, 0)), high, ddmod)
    correct = m.subtract(ddmod, dd)
    correct = m.where(m.less(m.abs(dd), discont), 0, correct)
    tri = astype(ops.compare(ops.iota((n - 1, n - 1), np.int32, 0), ops.iota((n - 1, n - 1), np.int32, 1), "GE"),
                 correct.dtype)
    moved = moveaxis(correct, ax, -1)
    cum = matmul(moved, transpose(tri))
    cum = moveaxis(cum, -1, ax)
    head = _slice(x, ax, 0, 1)
    return concatenate([head, m.add(_slice(x, ax, 1, n), cum)], ax)


# ---------------------------------------------------------------- index arithmetic

def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """numpy.ravel_multi_index (modes 'wrap' and 'clip'; 'raise' checks constant indices only)."""
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    dims = tuple(operator.index(d) for d in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    idx = [astype(asarray(i), np.int64) for i in multi_index]
    for i, d in zip(multi_index, dims):
        if mode == "raise" and not isinstance(i, Tensor):
            a = np.asarray(i)
            if ((a < 0) | (a >= d)).any():
                raise ValueError("invalid entry in coordinates array")
    modes = [mode] * len(dims) if isinstance(mode, str) else list(mode)
    strides = np.cumprod((1,) + dims[::-1][:-1])[::-1] if order == "C" else np.cumprod((1,) + dims[:-1])
    out = None
    for i, d, s, md in zip(idx, dims, strides, modes):
        if md == "wrap":
            i = m.remainder(i, d)
        elif md == "clip" or md == "raise":
            i = m.clip(i, 0, d - 1)
        term = m.multiply(i, int(s))
        out = term if out is None else m.add(out, term)
    return out


def unravel_index(indices, shape, order="C"):
    """numpy.unravel_index: a tuple of coordinate arrays."""
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(operator.index(s) for s in shape)
    i = asarray(indices)
    if not dtypes.is_integer(i.dtype):
        raise TypeError("only int indices permitted")
    if not isinstance(indices, Tensor):
        a, total = np.asarray(indices), int(np.prod(shape))
        if ((a < 0) | (a >= total)).any():
            raise ValueError(f"index {int(a.reshape(-1)[((a < 0) | (a >= total)).reshape(-1)][0])} is out of bounds "
                             f"for array with size {total}")
    i = astype(i, np.int64)
    out = []
    dims = shape[::-1] if order == "C" else shape
    for d in dims:
        out.append(m.remainder(i, d))
        i = m.floor_divide(i, d)
    return tuple(out[::-1] if order == "C" else out)


# ---------------------------------------------------------------- bit packing

def packbits(a, axis=None, bitorder="big"):
    """numpy.packbits: 8 booleans (nonzero values) per uint8, zero-padded."""
    if bitorder not in ("big", "little"):
        raise ValueError("'order' must be either 'little' or 'big'")
    x = asarray(a)
    if not (dtypes.is_integer(x.dtype) or x.dtype == np.bool_):
        raise TypeError("Expected an input array of integer or boolean data type")
    if axis is None:
        x, axis = ravel(x), 0
    ax = normalize_axis(axis, x.ndim)
    bits = astype(astype(x, bool), np.uint8)
    n = bits.shape[ax]
    pad = (-n) % 8
    if pad:
        lo, hi = [0] * x.ndim, [0] * x.ndim
        hi[ax] = pad
        bits = ops.pad(bits, splat(0, np.uint8, ()), lo, hi, [0] * x.ndim)
    bits = moveaxis(bits, ax, -1)
    groups = reshape(bits, bits.shape[:-1] + ((n + pad) // 8, 8))
    weights = np.array([128, 64, 32, 16, 8, 4, 2, 1] if bitorder == "big" else [1, 2, 4, 8, 16, 32, 64, 128], np.uint8)
    packed = _sum(m.multiply(groups, asarray(weights)), axis=-1, dtype=np.uint8)
    return moveaxis(packed, -1, ax)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """numpy.unpackbits: each uint8 becomes 8 bits (uint8 0/1)."""
    if bitorder not in ("big", "little"):
        raise ValueError("'order' must be either 'little' or 'big'")
    x = asarray(a)
    if x.dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if axis is None:
        x, axis = ravel(x), 0
    ax = normalize_axis(axis, x.ndim)
    xm = moveaxis(x, ax, -1)
    shifts = np.array([7, 6, 5, 4, 3, 2, 1, 0] if bitorder == "big" else list(range(8)), np.uint8)
    full = xm.shape + (8,)
    xb = ops.broadcast_in_dim(xm, full, tuple(range(xm.ndim)))
    bits = ops.and_(ops.shift_right_logical(xb, ops.broadcast_in_dim(asarray(shifts), full, (xm.ndim,))),
                    splat(1, np.uint8, full))
    bits = reshape(bits, xm.shape[:-1] + (xm.shape[-1] * 8,))
    if count is not None:
        total = bits.shape[-1]
        count = count if count >= 0 else builtins.max(total + count, 0)
        if count <= total:
            bits = bits[..., :count]
        else:
            lo, hi = [0] * bits.ndim, [0] * bits.ndim
            hi[-1] = count - total
            bits = ops.pad(bits, splat(0, np.uint8, ()), lo, hi, [0] * bits.ndim)
    return moveaxis(bits, -1, ax)


# ---------------------------------------------------------------- callables looped at trace time

def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """numpy.apply_along_axis: ``func1d`` traced once per 1-D slice (the results are stacked)."""
    x = asarray(arr)
    ax = normalize_axis(axis, x.ndim)
    moved = moveaxis(x, ax, -1)
    lead = moved.shape[:-1]
    flat = reshape(moved, (int(np.prod(lead, dtype=np.int64)), moved.shape[-1]))
    outs = [asarray(func1d(flat[i], *args, **kwargs)) for i in range(flat.shape[0])]
    if not outs:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    res = stack(outs, 0)
    res = reshape(res, lead + res.shape[1:])
    k = res.ndim - len(lead)
    # numpy puts the function's output dims where the axis was
    return moveaxis(res, tuple(range(len(lead), res.ndim)), tuple(range(ax, ax + k))) if k else res


def apply_over_axes(func, a, axes):
    """numpy.apply_over_axes: ``func(a, axis)`` for each axis, keeping the rank."""
    x = asarray(a)
    for ax in ([axes] if isinstance(axes, (int, np.integer)) else axes):
        ax = normalize_axis(ax, x.ndim)
        r = asarray(func(x, ax))
        if r.ndim == x.ndim:
            x = r
        elif r.ndim == x.ndim - 1:
            x = reshape(r, r.shape[:ax] + (1,) + r.shape[ax:])
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return x


