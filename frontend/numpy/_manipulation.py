"""numpy's array manipulation: splitting, stacking, tiling and repeating, rolling and rotating,
atleast_nd, broadcasting helpers, append/insert/delete with static indices, diff, kron/outer."""
from __future__ import annotations

import builtins
import operator

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.numpy._base import (
    asarray, astype, broadcast_shapes as _broadcast_shapes, broadcast_to, normalize_axis, splat)
from hloforge.frontend.numpy._shape import (
    concatenate, flip, moveaxis, ravel, reshape, swapaxes, transpose)
from hloforge.frontend.tracing import Tensor
from hloforge.frontend.numpy._math import multiply, not_equal, subtract


def _take_slice(x, axis, start, stop):
    starts = [0] * x.ndim
    limits = list(x.shape)
    starts[axis], limits[axis] = start, stop
    if (start, stop) == (0, x.shape[axis]):
        return x
    return ops.slice(x, starts, limits)


# ---------------------------------------------------------------- splitting

def array_split(ary, indices_or_sections, axis=0):
    """numpy.array_split: sections may be unequal (the first ``n % sections`` get one more)."""
    x = asarray(ary)
    axis = normalize_axis(axis, x.ndim)
    n = x.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    else:
        idx = [operator.index(i) for i in indices_or_sections]
        bounds = [0] + idx + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        lo = builtins.min(builtins.max(lo + n if lo < 0 else lo, 0), n)
        hi = builtins.min(builtins.max(hi + n if hi < 0 else hi, 0), n)
        out.append(_take_slice(x, axis, lo, builtins.max(lo, hi)))
    return out


def split(ary, indices_or_sections, axis=0):
    """numpy.split: equal sections (an error if they do not divide the axis) or split points."""
    x = asarray(ary)
    if isinstance(indices_or_sections, (int, np.integer)):
        n = x.shape[normalize_axis(axis, x.ndim)]
        if indices_or_sections <= 0 or n % indices_or_sections:
            raise ValueError("array split does not result in an equal division")
    return array_split(x, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    """numpy.hsplit: split along axis 1 (axis 0 for 1-D)."""
    x = asarray(ary)
    if x.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(x, indices_or_sections, 1 if x.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """numpy.vsplit: split along axis 0 (arrays of rank >= 2)."""
    x = asarray(ary)
    if x.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(x, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """numpy.dsplit: split along axis 2 (arrays of rank >= 3)."""
    x = asarray(ary)
    if x.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(x, indices_or_sections, 2)


def unstack(x, axis=0):
    """numpy.unstack: the slices along ``axis``, as a tuple."""
    x = asarray(x)
    if x.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    axis = normalize_axis(axis, x.ndim)
    if x.shape[axis] == 0:
        return ()
    return tuple(reshape(p, p.shape[:axis] + p.shape[axis + 1:]) for p in array_split(x, x.shape[axis], axis))


# ---------------------------------------------------------------- atleast_nd and stacking

def _atleast(n, arys):
    out = []
    for a in arys:
        x = asarray(a)
        if x.ndim < n:
            if n == 3 and x.ndim == 2:
                x = reshape(x, x.shape + (1,))
            elif n == 3 and x.ndim == 1:
                x = reshape(x, (1,) + x.shape + (1,))
            else:
                x = reshape(x, (1,) * (n - x.ndim) + x.shape)
        out.append(x)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys):
    """numpy.atleast_1d."""
    return _atleast(1, arys)


def atleast_2d(*arys):
    """numpy.atleast_2d: 1-D (n,) becomes (1, n)."""
    return _atleast(2, arys)


def atleast_3d(*arys):
    """numpy.atleast_3d: (n,) becomes (1, n, 1), (m, n) becomes (m, n, 1)."""
    return _atleast(3, arys)


def _seq(tup, what):
    if isinstance(tup, Tensor):
        return list(tup)
    tup = list(tup)
    if not tup:
        raise ValueError("need at least one array to concatenate")
    return tup


def hstack(tup, dtype=None):
    """numpy.hstack: concatenate along axis 1 (axis 0 for 1-D arrays)."""
    xs = [atleast_1d(a) for a in _seq(tup, "hstack")]
    return concatenate(xs, 0 if xs[0].ndim == 1 else 1, dtype=dtype)


def vstack(tup, dtype=None):
    """numpy.vstack: concatenate along axis 0 after atleast_2d."""
    return concatenate([atleast_2d(a) for a in _seq(tup, "vstack")], 0, dtype=dtype)


row_stack = vstack


def dstack(tup, dtype=None):
    """numpy.dstack: concatenate along axis 2 after atleast_3d."""
    return concatenate([atleast_3d(a) for a in _seq(tup, "dstack")], 2, dtype=dtype)


def column_stack(tup):
    """numpy.column_stack: 1-D arrays become columns."""
    xs = [asarray(a) for a in _seq(tup, "column_stack")]
    xs = [reshape(x, (x.shape[0], 1)) if x.ndim < 2 else x for x in (atleast_1d(x) for x in xs)]
    return concatenate(xs, 1)


def concat(arrays, /, *, axis=0):
    """numpy.concat (the array API name of concatenate)."""
    return concatenate(arrays, axis)


def block(arrays):
    """numpy.block: assemble from nested lists (the innermost lists join along the last axis)."""
    def depth(a):
        return 1 + depth(a[0]) if isinstance(a, list) and a else (0 if not isinstance(a, list) else 1)

    def leaves_ndim(a):
        return builtins.max(leaves_ndim(b) for b in a) if isinstance(a, list) else asarray(a).ndim

    if isinstance(arrays, tuple):
        raise TypeError("arrays is a tuple. Only lists can be used to arrange blocks, and np.block does "
                        "not allow implicit conversion from tuple to ndarray.")
    d = depth(arrays)
    ndim = builtins.max(leaves_ndim(arrays), d)

    def build(a, level):
        if not isinstance(a, list):
            x = asarray(a)
            return reshape(x, (1,) * (ndim - x.ndim) + x.shape)
        if not a:
            raise ValueError("List at arrays cannot be empty")
        parts = [build(b, level + 1) for b in a]
        return concatenate(parts, axis=-(d - level))
    return build(arrays, 0)


def permute_dims(a, /, axes):
    """numpy.permute_dims (the array API transpose)."""
    return transpose(a, axes)


def matrix_transpose(x, /):
    """numpy.matrix_transpose: swap the last two axes."""
    x = asarray(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose requires at least 2 dimensions; got ndim={x.ndim}")
    return swapaxes(x, -1, -2)


def rollaxis(a, axis, start=0):
    """numpy.rollaxis: move ``axis`` to before ``start``."""
    x = asarray(a)
    axis = normalize_axis(axis, x.ndim)
    if not -x.ndim <= start <= x.ndim:
        raise np.exceptions.AxisError(f"'start' arg requires {-x.ndim} <= start < {x.ndim + 1}, but {start} was passed in")
    start = start + x.ndim if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(x, axis, start) if axis != start else x


# ---------------------------------------------------------------- tile, repeat, roll, rot90

def tile(A, reps):
    """numpy.tile: ``reps`` copies along each axis (broadcast + reshape)."""
    x = asarray(A)
    reps = (operator.index(reps),) if isinstance(reps, (int, np.integer)) else tuple(operator.index(r) for r in reps)
    if builtins.any(r < 0 for r in reps):
        raise ValueError(f"negative dimensions are not allowed: reps {reps}")
    n = builtins.max(len(reps), x.ndim)
    reps = (1,) * (n - len(reps)) + reps
    x = reshape(x, (1,) * (n - x.ndim) + x.shape)
    inter = tuple(v for r, s in zip(reps, x.shape) for v in (r, s))
    b = ops.broadcast_in_dim(x, inter, tuple(range(1, 2 * n, 2)))
    return reshape(b, tuple(r * s for r, s in zip(reps, x.shape)))


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """numpy.repeat with static ``repeats`` (an int, or one int per element of the axis)."""
    x = asarray(a)
    if isinstance(repeats, Tensor):
        raise TypeError("repeat: repeats must be static (an int or a sequence of ints), got a traced Tensor")
    if axis is None:
        x, axis = ravel(x), 0
    axis = normalize_axis(axis, x.ndim)
    reps = np.asarray(repeats)
    if reps.dtype.kind not in "iub":
        raise TypeError(f"Cannot cast array data from dtype('{reps.dtype}') to dtype('int64') according to the rule 'safe'")
    if (reps < 0).any():
        raise ValueError("repeat: repeats may not contain negative values.")
    n = x.shape[axis]
    if reps.ndim == 0 or reps.size == 1:
        r = int(reps.reshape(-1)[0])
        shape = x.shape[:axis + 1] + (r,) + x.shape[axis + 1:]
        dims = tuple(d for d in range(x.ndim + 1) if d != axis + 1)
        b = ops.broadcast_in_dim(x, shape, dims)
        return reshape(b, x.shape[:axis] + (n * r,) + x.shape[axis + 1:])
    if reps.shape != (n,):
        raise ValueError(f"operands could not be broadcast together with shape ({n},) ({reps.size},)")
    parts = [_take_slice(x, axis, i, i + 1) for i in range(n)]
    parts = [repeat(p, int(r), axis) for p, r in zip(parts, reps) if r]
    if not parts:
        return _take_slice(x, axis, 0, 0)
    return concatenate(parts, axis)


def roll(a, shift, axis=None):
    """numpy.roll with static shifts: two slices and a concatenate per axis."""
    x = asarray(a)
    if axis is None:
        return reshape(roll(ravel(x), shift, 0), x.shape)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    shifts = (shift,) * len(axes) if isinstance(shift, (int, np.integer)) else tuple(shift)
    if len(shifts) != len(axes):
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences of the same length")
    for ax, s in zip(axes, shifts):
        ax = normalize_axis(ax, x.ndim)
        n = x.shape[ax]
        if n == 0:
            continue
        s = operator.index(s) % n
        if s:
            x = concatenate([_take_slice(x, ax, n - s, n), _take_slice(x, ax, 0, n - s)], ax)
    return x


def rot90(m, k=1, axes=(0, 1)):
    """numpy.rot90: rotate by 90 degrees ``k`` times in the plane of ``axes``."""
    x = asarray(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or builtins.abs(axes[0] - axes[1]) == x.ndim:
        raise ValueError("Axes must be different.")
    if not (-x.ndim <= axes[0] < x.ndim and -x.ndim <= axes[1] < x.ndim):
        raise ValueError(f"Axes={axes} out of range for array of ndim={x.ndim}.")
    a0, a1 = axes[0] % x.ndim, axes[1] % x.ndim
    k = operator.index(k) % 4
    if k == 0:
        return x
    if k == 2:
        return flip(flip(x, a0), a1)
    perm = list(range(x.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return transpose(flip(x, a1), perm)
    return flip(transpose(x, perm), a1)


def fliplr(m):
    """numpy.fliplr: reverse axis 1."""
    x = asarray(m)
    if x.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(x, 1)


def flipud(m):
    """numpy.flipud: reverse axis 0."""
    x = asarray(m)
    if x.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(x, 0)


# ---------------------------------------------------------------- broadcasting

def broadcast_shapes(*shapes):
    """numpy.broadcast_shapes (plain Python: shapes are static)."""
    return _broadcast_shapes(*[(s,) if isinstance(s, int) else tuple(s) for s in shapes], what="broadcast_shapes")


def broadcast_arrays(*args):
    """numpy.broadcast_arrays: every argument broadcast to the common shape."""
    xs = [asarray(a) for a in args]
    shape = _broadcast_shapes(*[x.shape for x in xs], what="broadcast_arrays")
    return tuple(broadcast_to(x, shape) for x in xs)


# ---------------------------------------------------------------- append, insert, delete, resize

def append(arr, values, axis=None):
    """numpy.append: concatenate (flattened when ``axis`` is None)."""
    x, v = asarray(arr), asarray(values)
    if axis is None:
        return concatenate([ravel(x), ravel(v)], 0)
    return concatenate([x, v], axis)


def _static_indices(obj, n, what):
    if isinstance(obj, Tensor):
        raise TypeError(f"{what}: indices must be static (ints, slices or sequences), got a traced Tensor")
    if isinstance(obj, slice):
        return list(range(*obj.indices(n)))
    idx = np.asarray(obj)
    if idx.dtype == np.bool_:
        if idx.shape != (n,):
            raise ValueError(f"boolean array argument obj to {what} must be one dimensional and match the "
                             f"axis length of {n}")
        return np.flatnonzero(idx).tolist()
    if idx.dtype.kind not in "iu" and idx.size:
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    return idx.astype(np.int64).reshape(-1).tolist()


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """numpy.delete with static indices: the kept slices, concatenated."""
    x = asarray(arr)
    if axis is None:
        x, axis = ravel(x), 0
    axis = normalize_axis(axis, x.ndim)
    n = x.shape[axis]
    drop = set()
    for i in _static_indices(obj, n, "delete"):
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
        drop.add(i % n)
    keep = [i for i in range(n) if i not in drop]
    return _gather_static(x, axis, keep)


def _gather_static(x, axis, idx):
    """Rows ``idx`` (static) of ``x`` along ``axis``: contiguous runs become slices."""
    parts, start = [], None
    for j, i in enumerate(idx):
        if start is None:
            start, prev = i, i
        elif i == prev + 1:
            prev = i
        else:
            parts.append(_take_slice(x, axis, start, prev + 1))
            start, prev = i, i
    if start is not None:
        parts.append(_take_slice(x, axis, start, prev + 1))
    if not parts:
        return _take_slice(x, axis, 0, 0)
    return parts[0] if len(parts) == 1 else concatenate(parts, axis)


def insert(arr, obj, values, axis=None):
    """numpy.insert with static indices: ``values`` go before the given positions."""
    x = asarray(arr)
    if axis is None:
        x, axis = ravel(x), 0
    axis = normalize_axis(axis, x.ndim)
    n = x.shape[axis]
    scalar = isinstance(obj, (int, np.integer))
    idx = [operator.index(obj)] if scalar else _static_indices(obj, n + 1, "insert")
    for i in idx:
        if not -n <= i <= n:
            raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
    idx = [i % (n + 1) if i >= 0 else i + n for i in idx]
    v = astype(asarray(values), x.dtype)
    v = reshape(v, (1,) * (x.ndim - v.ndim) + v.shape)  # numpy's ndmin
    if scalar:
        v = moveaxis(v, 0, axis)
        blocks = [(idx[0], broadcast_to(v, x.shape[:axis] + (v.shape[axis],) + x.shape[axis + 1:]))]
    else:
        v = broadcast_to(v, x.shape[:axis] + (len(idx),) + x.shape[axis + 1:])
        order = np.argsort(idx, kind="stable")
        blocks = [(idx[j], _take_slice(v, axis, int(j), int(j) + 1)) for j in order]
    parts, pos = [], 0
    for i, b in blocks:
        if i > pos:
            parts.append(_take_slice(x, axis, pos, i))
            pos = i
        parts.append(b)
    if pos < n:
        parts.append(_take_slice(x, axis, pos, n))
    return concatenate(parts, axis)


def resize(a, new_shape):
    """numpy.resize: repeat the flattened array to fill ``new_shape``."""
    x = ravel(asarray(a))
    new_shape = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    if builtins.any(s < 0 for s in new_shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    total = int(np.prod(new_shape, dtype=np.int64))
    if x.size == 0 or total == 0:
        return splat(0, x.dtype, new_shape)
    reps = -(-total // x.size)
    return reshape(tile(x, reps)[:total], new_shape)


# ---------------------------------------------------------------- differences and products

def diff(a, n=1, axis=-1, prepend=None, append=None):
    """numpy.diff: the n-th discrete difference along ``axis`` (bools: not-equal)."""
    x = asarray(a)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if x.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = normalize_axis(axis, x.ndim)
    parts = []
    for extra in (prepend, None, append):
        if extra is None:
            continue
        e = asarray(extra)
        if e.ndim == 0:
            e = broadcast_to(e, x.shape[:axis] + (1,) + x.shape[axis + 1:])
        parts.append(e)
    if prepend is not None or append is not None:
        pieces = ([parts[0]] if prepend is not None else []) + [x] + ([parts[-1]] if append is not None else [])
        x = concatenate(pieces, axis)
    for _ in range(n):
        m = x.shape[axis]
        if m == 0:
            break
        hi, lo = _take_slice(x, axis, 1, m), _take_slice(x, axis, 0, m - 1)
        x = not_equal(hi, lo) if x.dtype == np.bool_ else subtract(hi, lo)
    return x


def ediff1d(ary, to_end=None, to_begin=None):
    """numpy.ediff1d: differences of the flattened array, with optional ends."""
    x = ravel(asarray(ary))
    d = diff(x) if x.size else x
    parts = ([ravel(astype(asarray(to_begin), x.dtype))] if to_begin is not None else []) + [d] + (
        [ravel(astype(asarray(to_end), x.dtype))] if to_end is not None else [])
    return concatenate(parts, 0) if len(parts) > 1 else d


def outer(a, b):
    """numpy.outer: flattened a times flattened b."""
    x, y = ravel(asarray(a)), ravel(asarray(b))
    return multiply(reshape(x, (x.size, 1)), reshape(y, (1, y.size)))


def kron(a, b):
    """numpy.kron: the Kronecker product."""
    x, y = asarray(a), asarray(b)
    n = builtins.max(x.ndim, y.ndim)
    x = reshape(x, (1,) * (n - x.ndim) + x.shape)
    y = reshape(y, (1,) * (n - y.ndim) + y.shape)
    xe = reshape(x, tuple(v for s in x.shape for v in (s, 1)))
    ye = reshape(y, tuple(v for s in y.shape for v in (1, s)))
    return reshape(multiply(xe, ye), tuple(p * q for p, q in zip(x.shape, y.shape)))
