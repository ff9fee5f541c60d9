"""numpy's value-dependent-shape functions with jax.numpy's static ``size=`` argument: nonzero,
flatnonzero, argwhere, extract, compress, the unique family and the 1-D set operations.

The result has ``size`` entries (the first ones found, in numpy's order), padded with
``fill_value``; without ``size`` a traced input is an error (its result's shape would depend on
its values), while constants are computed at trace time. Compaction is one stable
``stablehlo.sort`` of (not selected, position)."""
from __future__ import annotations

import operator

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy import _math as m
from hloforge.frontend.numpy._base import asarray, astype, broadcast_to, normalize_axis, splat
from hloforge.frontend.numpy._reductions import any as _any, sum as _sum
from hloforge.frontend.numpy._shape import concatenate, moveaxis, ravel, reshape, stack
from hloforge.frontend.numpy._ufuncs import isnan
from hloforge.frontend.tracing import Tensor
from hloforge.frontend.numpy._manipulation import _gather_static
from hloforge.frontend.numpy._sequences import _before


def _need_size(name, x, size):
    if size is None and isinstance(x, Tensor):
        raise ValueError(f"{name}: the result's shape depends on the values of a traced array; pass size= "
                         "(a static int), as jax.numpy requires under jit")
    if size is not None:
        size = operator.index(size)
        if size < 0:
            raise ValueError(f"{name}: size must be non-negative, got {size}")
    return size


def _pick(table, index):
    """table[..., index] along the last axis (one-hot select and sum); index broadcasts to the
    leading dims of table with its own trailing dims."""
    n = table.shape[-1]
    full = index.shape + (n,)
    hit = ops.compare(ops.broadcast_in_dim(index, full, tuple(range(index.ndim))),
                      ops.iota(full, np.int64, len(full) - 1), "EQ")
    vals = broadcast_to(table, full)
    if vals.dtype == np.bool_:
        return _any(m.logical_and(hit, vals), axis=-1)
    return ops.reduce(ops.select(hit, vals, splat(0, vals.dtype, full)), np.array(0, vals.dtype),
                      (len(full) - 1,), "add")


def _compact(mask, size):
    """(positions of the True entries of 1-D ``mask`` in order, padded with -1 to ``size``;
    the True count)."""
    n = mask.shape[0]
    count = _sum(astype(mask, np.int64))
    if n == 0:
        return splat(-1, np.int64, (size,)), count
    key = astype(m.logical_not(mask), np.int32)
    _, pos = ops.sort([key, ops.iota((n,), np.int64, 0)], 0, "LT", is_stable=True)
    if size <= n:
        pos = pos[:size]
    else:
        pos = concatenate([pos, splat(-1, np.int64, (size - n,))])
    valid = m.less(ops.iota((size,), np.int64, 0), count)
    return m.where(valid, pos, -1), count


def flatnonzero(a, *, size=None, fill_value=None):
    """numpy.flatnonzero: int64 indices of the nonzero elements of the flattened array."""
    size = _need_size("flatnonzero", a, size)
    if size is None:
        return asarray(np.flatnonzero(np.asarray(a)).astype(np.int64))
    x = ravel(astype(asarray(a), bool))
    pos, _ = _compact(x, size)
    fill = 0 if fill_value is None else fill_value
    return m.where(m.less(pos, 0), fill, pos)


def nonzero(a, *, size=None, fill_value=None):
    """numpy.nonzero: a tuple of int64 index arrays, one per dimension."""
    x = asarray(a)
    if x.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() instead.")
    size = _need_size("nonzero", a, size)
    if size is None:
        return tuple(asarray(i.astype(np.int64)) for i in np.nonzero(np.asarray(a)))
    pos, _ = _compact(ravel(astype(x, bool)), size)
    fills = fill_value if isinstance(fill_value, (tuple, list)) else [0 if fill_value is None else fill_value] * x.ndim
    out, rest = [], m.maximum(pos, 0)
    for d in reversed(range(x.ndim)):
        out.append(m.remainder(rest, x.shape[d]) if x.shape[d] else rest)
        rest = m.floor_divide(rest, x.shape[d]) if x.shape[d] else rest
    out = out[::-1]
    return tuple(m.where(m.less(pos, 0), f, o) for o, f in zip(out, fills))


def argwhere(a, *, size=None, fill_value=None):
    """numpy.argwhere: (count, ndim) int64 indices of the nonzero elements."""
    x = asarray(a)
    size = _need_size("argwhere", a, size)
    if size is None:
        return asarray(np.argwhere(np.asarray(a)).astype(np.int64))
    if x.ndim == 0:
        return splat(0, np.int64, (size, 0))
    return stack(nonzero(x, size=size, fill_value=fill_value), axis=-1)


def extract(condition, arr, *, size=None, fill_value=0):
    """numpy.extract: the elements of ``arr`` where ``condition`` holds (flattened)."""
    size = _need_size("extract", condition if isinstance(condition, Tensor) else arr, size) if isinstance(
        condition, Tensor) else size
    x = ravel(asarray(arr))
    if size is None:
        idx = np.flatnonzero(np.asarray(condition))
        return _gather_static(x, 0, idx.tolist())
    pos, _ = _compact(ravel(astype(asarray(condition), bool)), size)
    vals = _pick(x, m.maximum(pos, 0))
    return m.where(m.less(pos, 0), fill_value, vals)


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """numpy.compress: the slices along ``axis`` where the 1-D ``condition`` holds."""
    if out is not None:
        raise NotImplementedError("The 'out' argument is not supported (Tensors are immutable)")
    x = asarray(a)
    if axis is None:
        x, axis = ravel(x), 0
    ax = normalize_axis(axis, x.ndim)
    if not isinstance(condition, Tensor):
        c = np.asarray(condition, dtype=bool).reshape(-1)
        if c.shape[0] > x.shape[ax]:
            raise IndexError(f"index {c.shape[0] - 1} is out of bounds for axis {ax} with size {x.shape[ax]}")
        idx = np.flatnonzero(c).tolist()
        if size is None:
            return _gather_static(x, ax, idx)
    if size is None:
        _need_size("compress", condition, None)
    c = ravel(astype(asarray(condition), bool))
    pos, _ = _compact(c, size)
    moved = moveaxis(x, ax, -1)
    lead = moved.shape[:-1]
    full = lead + (size,)
    idx = ops.broadcast_in_dim(m.maximum(pos, 0), full, (len(full) - 1,))
    vals = _pick(reshape(moved, lead + (1, moved.shape[-1])), idx) if moved.shape[-1] else splat(0, x.dtype, full)
    valid = ops.broadcast_in_dim(m.greater_equal(pos, 0), full, (len(full) - 1,))
    return moveaxis(m.where(valid, vals, fill_value), -1, ax)


# ---------------------------------------------------------------- unique

def _same(a, b, equal_nan):
    eq = m.equal(a, b)
    if equal_nan and (dtypes.is_float(a.dtype) or dtypes.is_complex(a.dtype)):
        eq = m.logical_or(eq, m.logical_and(isnan(a), isnan(b)))
    return eq


def _unique_parts(x, size, equal_nan):
    """(sorted values, run starts mask, original positions of the sorted values)."""
    n = x.shape[0]
    vals, pos = ops.sort([x, ops.iota((n,), np.int64, 0)], 0, "LT", is_stable=True)
    if n == 0:
        return vals, splat(False, bool, (0,)), pos
    first = concatenate([splat(True, bool, (1,)), m.logical_not(_same(vals[1:], vals[:-1], equal_nan))])
    return vals, first, pos


def _static_unique(ar, **kw):
    res = np.unique(np.asarray(ar), **kw)
    return tuple(asarray(r) for r in res) if isinstance(res, tuple) else asarray(res)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True,
           size=None, fill_value=None, sorted=True):
    """numpy.unique of the flattened array (``axis=None``), with jax.numpy's ``size``/``fill_value``
    (default fill: the smallest unique value)."""
    if axis is not None:
        raise NotImplementedError("unique: axis is not supported")
    size = _need_size("unique", ar, size)
    if size is None:
        return _static_unique(ar, return_index=return_index, return_inverse=return_inverse,
                              return_counts=return_counts, equal_nan=equal_nan)
    x0 = asarray(ar)
    x = ravel(x0)
    n = x.shape[0]
    vals, first, pos = _unique_parts(x, size, equal_nan)
    slots, count = _compact(first, size)
    safe = m.maximum(slots, 0)
    uvals = _pick(vals, safe) if n else splat(0, x.dtype, (size,))
    valid = m.greater_equal(slots, 0)
    fill = (vals[0] if n else splat(0, x.dtype, ())) if fill_value is None else fill_value
    uvals = m.where(valid, uvals, fill)
    out = [uvals]
    if return_index:
        out.append(m.where(valid, _pick(pos, safe) if n else splat(0, np.int64, (size,)), 0))
    if return_inverse:
        # the rank of each element among the distinct values
        full = (n, n)
        xb = ops.broadcast_in_dim(x, full, (0,))
        vb = ops.broadcast_in_dim(vals, full, (1,))
        fb = ops.broadcast_in_dim(first, full, (1,))
        below = m.logical_and(fb, m.logical_and(_before(vb, xb, strict=True), m.logical_not(_same(vb, xb, equal_nan))))
        inv = _sum(astype(below, np.int64), axis=1) if n else splat(0, np.int64, (0,))
        out.append(reshape(inv, x0.shape))
    if return_counts:
        full = (size, n)
        ub = ops.broadcast_in_dim(uvals, full, (0,))
        xb = ops.broadcast_in_dim(x, full, (1,))
        c = _sum(astype(_same(ub, xb, equal_nan), np.int64), axis=1) if n else splat(0, np.int64, (size,))
        out.append(m.where(valid, c, 0))
    return out[0] if len(out) == 1 else tuple(out)


def unique_values(x, /, *, size=None, fill_value=None):
    """numpy.unique_values."""
    return unique(x, size=size, fill_value=fill_value)


def unique_counts(x, /, *, size=None, fill_value=None):
    """numpy.unique_counts: (values, counts)."""
    if size is None and not isinstance(x, Tensor):
        r = np.unique_counts(np.asarray(x))
        return type(r)(asarray(r.values), asarray(r.counts))
    v, c = unique(x, return_counts=True, size=size, fill_value=fill_value)
    return np.lib._arraysetops_impl.UniqueCountsResult(v, c) if hasattr(np.lib, "_arraysetops_impl") else (v, c)


def unique_inverse(x, /, *, size=None, fill_value=None):
    """numpy.unique_inverse: (values, inverse_indices)."""
    if size is None and not isinstance(x, Tensor):
        r = np.unique_inverse(np.asarray(x))
        return type(r)(asarray(r.values), asarray(r.inverse_indices))
    v, i = unique(x, return_inverse=True, size=size, fill_value=fill_value)
    return np.lib._arraysetops_impl.UniqueInverseResult(v, i) if hasattr(np.lib, "_arraysetops_impl") else (v, i)


def unique_all(x, /, *, size=None, fill_value=None):
    """numpy.unique_all: (values, indices, inverse_indices, counts)."""
    if size is None and not isinstance(x, Tensor):
        r = np.unique_all(np.asarray(x))
        return type(r)(*(asarray(t) for t in r))
    v, i, inv, c = unique(x, return_index=True, return_inverse=True, return_counts=True, size=size,
                          fill_value=fill_value)
    return np.lib._arraysetops_impl.UniqueAllResult(v, i, inv, c) if hasattr(np.lib, "_arraysetops_impl") else (
        v, i, inv, c)


# ---------------------------------------------------------------- 1-D set operations

def _member(x, t, equal_nan=True):
    full = x.shape + t.shape
    if t.shape[0] == 0:
        return splat(False, bool, x.shape)
    eq = _same(ops.broadcast_in_dim(x, full, (0,)), ops.broadcast_in_dim(t, full, (1,)), equal_nan)
    return _any(eq, axis=-1)


def _setop(name, ar1, ar2, size, fill_value, keep):
    if size is None and not isinstance(ar1, Tensor) and not isinstance(ar2, Tensor):
        return asarray(getattr(np, name)(np.asarray(ar1), np.asarray(ar2)))
    size = _need_size(name, ar1 if isinstance(ar1, Tensor) else ar2, size)
    a, b = ravel(asarray(ar1)), ravel(asarray(ar2))
    common = dtypes.result_type(a, b)
    a, b = astype(a, common), astype(b, common)
    pool = keep(a, b)
    # sort the kept candidates first (masked values last), then unique the kept ones
    cand, mask = pool
    n = cand.shape[0]
    if n == 0:
        return splat(0 if fill_value is None else fill_value, common, (size,))
    key = astype(m.logical_not(mask), np.int32)
    k_sorted, v_sorted = ops.sort([key, cand], 0, lambda k1, k2, v1, v2: _lex_lt(k1, k2, v1, v2), is_stable=True)
    kept = m.equal(k_sorted, 0)
    first = concatenate([splat(True, bool, (1,)), m.logical_not(_same(v_sorted[1:], v_sorted[:-1], True))])
    first = m.logical_and(first, kept)
    slots, count = _compact(first, size)
    vals = _pick(v_sorted, m.maximum(slots, 0))
    fill = v_sorted[0] if fill_value is None else fill_value
    return m.where(m.greater_equal(slots, 0), vals, fill)


def _lex_lt(k1, k2, v1, v2):
    """(key, value) lexicographic less-than with NaN values last (a sort comparator body)."""
    klt = ops.compare(k1, k2, "LT")
    keq = ops.compare(k1, k2, "EQ")
    vlt = ops.compare(v1, v2, "LT")
    if dtypes.is_float(v1.dtype):  # numpy's order: NaN last
        nan1, nan2 = ops.compare(v1, v1, "NE"), ops.compare(v2, v2, "NE")
        vlt = ops.or_(vlt, ops.and_(nan2, ops.not_(nan1)))
    return ops.or_(klt, ops.and_(keq, vlt))


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """numpy.union1d: sorted distinct values of either input."""
    return _setop("union1d", ar1, ar2, size, fill_value,
                  lambda a, b: (concatenate([a, b]), splat(True, bool, (a.shape[0] + b.shape[0],))))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None, fill_value=None):
    """numpy.intersect1d: sorted distinct values in both inputs."""
    if return_indices:
        raise NotImplementedError("intersect1d: return_indices is not supported")
    return _setop("intersect1d", ar1, ar2, size, fill_value, lambda a, b: (a, _member(a, b)))


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """numpy.setdiff1d: sorted distinct values of ar1 not in ar2."""
    return _setop("setdiff1d", ar1, ar2, size, fill_value, lambda a, b: (a, m.logical_not(_member(a, b))))


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """numpy.setxor1d: sorted distinct values in exactly one input."""
    return _setop("setxor1d", ar1, ar2, size, fill_value,
                  lambda a, b: (concatenate([a, b]), concatenate([m.logical_not(_member(a, b)),
                                                                  m.logical_not(_member(b, a))])))
