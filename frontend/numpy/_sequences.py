"""numpy's searching, binning and sequence functions: searchsorted/digitize, interp, histograms,
bincount (static length), convolve/correlate. Data-dependent positions (an insertion point, a bin,
an interpolation interval) are read with one-hot selects, so every shape stays static (at
O(n * m) elements)."""
from __future__ import annotations

import builtins

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy import _math as m
from hloforge.frontend.numpy._base import asarray, astype, broadcast_to, splat
from hloforge.frontend.numpy._reductions import max as _max, min as _min, sum as _sum
from hloforge.frontend.numpy._shape import concatenate, ravel, reshape
from hloforge.frontend.numpy._statistics import _pick
from hloforge.frontend.numpy._ufuncs import isnan
from hloforge.frontend.tracing import Tensor
from hloforge.frontend.numpy._shape import flip, stack
from hloforge.frontend.numpy._creation_more import linspace
from hloforge.frontend.numpy._manipulation import diff, outer


# ---------------------------------------------------------------- searching and binning

def _before(a, b, strict):
    """a < b (strict) or a <= b in numpy's sort order (NaN last), elementwise with broadcasting."""
    lt = m.less(a, b) if strict else m.less_equal(a, b)
    if dtypes.is_float(a.dtype) or dtypes.is_complex(a.dtype):
        an, bn = isnan(a), isnan(b)
        lt = m.logical_or(m.logical_and(lt, m.logical_not(an)), m.logical_and(bn, m.logical_not(an)))
        if not strict:
            lt = m.logical_or(lt, m.logical_and(an, bn))
    return lt


def searchsorted(a, v, side="left", sorter=None, *, method=None):
    """numpy.searchsorted on a sorted 1-D ``a``: int64 insertion indices, by counting the elements
    that sort before each value (NaN sorts last, as in numpy)."""
    if side not in ("left", "right"):
        raise ValueError(f"side must be either 'left' or 'right' (got {side!r})")
    x = asarray(a)
    if x.ndim != 1:
        raise ValueError("object too deep for desired array" if x.ndim > 1 else "object of too small depth for desired array")
    if sorter is not None:
        raise NotImplementedError("searchsorted: sorter is not supported (take_along_axis lives in another module)")
    vv = asarray(v)
    common = dtypes.result_type(x, vv)
    x, vv = astype(x, common), astype(vv, common)
    full = vv.shape + x.shape
    xb = ops.broadcast_in_dim(x, full, (len(full) - 1,))
    vb = ops.broadcast_in_dim(vv, full, tuple(range(vv.ndim)))
    before = _before(xb, vb, strict=(side == "left"))
    return _sum(astype(before, np.int64), axis=-1)


def digitize(x, bins, right=False):
    """numpy.digitize: the bin index of each x (bins monotonic, increasing or decreasing)."""
    b = asarray(bins)
    if b.ndim != 1:
        raise ValueError("bins must be one-dimensional")
    xv = asarray(x)
    if dtypes.is_complex(xv.dtype):
        raise TypeError("x may not be complex")
    side = "left" if right else "right"
    if b.shape[0] < 2:
        return searchsorted(b, xv, side)
    inc = searchsorted(b, xv, side)
    dec = m.subtract(b.shape[0], searchsorted(flip(b), xv, "right" if right else "left"))
    increasing = m.greater_equal(b[-1], b[0])
    return m.where(increasing, inc, dec)


def _take1d(table, index):
    """table[index] for a 1-D table and an integer index Tensor (one-hot select and sum)."""
    return _pick(table, index)


def interp(x, xp, fp, left=None, right=None, period=None):
    """numpy.interp: piecewise-linear interpolation over increasing ``xp``."""
    xv, xpv, fpv = asarray(x), asarray(xp), asarray(fp)
    if xpv.ndim != 1 or fpv.ndim != 1:
        raise ValueError("Data points must be 1-D sequences")
    if xpv.shape[0] != fpv.shape[0]:
        raise ValueError("fp and xp are not of the same length")
    if xpv.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    if dtypes.is_complex(xv.dtype):
        raise TypeError("Cannot cast array data from dtype('complex128') to dtype('float64') according to the rule 'safe'")
    ftype = np.dtype(np.complex128) if dtypes.is_complex(fpv.dtype) else np.dtype(np.float64)
    xv, xpv, fpv = astype(xv, np.float64), astype(xpv, np.float64), astype(fpv, ftype)
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = builtins.abs(period)
        xv = m.remainder(xv, period)
        xpv = m.remainder(xpv, period)
        xpv, fpv = ops.sort([xpv, fpv], 0, "LT")
        xpv = concatenate([m.subtract(xpv[-1:], period), xpv, m.add(xpv[0:1], period)])
        fpv = concatenate([fpv[-1:], fpv, fpv[0:1]])
        left = right = None
    n = xpv.shape[0]
    if n == 1:
        out = broadcast_to(fpv[0], xv.shape)
    else:
        i = searchsorted(xpv, xv, "right")
        i = m.clip(i, 1, n - 1)
        x0, x1 = _take1d(xpv, m.subtract(i, 1)), _take1d(xpv, i)
        f0, f1 = _take1d(fpv, m.subtract(i, 1)), _take1d(fpv, i)
        t = m.divide(m.subtract(xv, x0), m.subtract(x1, x0))
        out = m.add(f0, m.multiply(t, m.subtract(f1, f0)))
        out = m.where(m.equal(xv, x1), f1, out)
    lo = fpv[0] if left is None else left
    hi = fpv[-1] if right is None else right
    out = m.where(m.less(xv, xpv[0]), lo, out)
    out = m.where(m.greater(xv, xpv[-1]), hi, out)
    return astype(out, ftype)


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """numpy.histogram_bin_edges for a static bin count or explicit edges."""
    x = ravel(asarray(a))
    if isinstance(bins, str):
        raise NotImplementedError(f"histogram: bin estimator {bins!r} is not supported; pass a bin count or edges")
    if not isinstance(bins, (int, np.integer)):
        e = asarray(bins)
        if e.ndim != 1:
            raise ValueError("`bins` must be 1d, when an array")
        if not isinstance(bins, Tensor) and (np.diff(np.asarray(bins)) < 0).any():
            raise ValueError("`bins` must increase monotonically, when an array")
        return e
    if bins < 1:
        raise ValueError("`bins` must be positive, when an integer")
    ftype = x.dtype if dtypes.is_float(x.dtype) else np.dtype(np.float64)
    if range is not None:
        lo, hi = range
        if lo > hi:
            raise ValueError("max must be larger than min in range parameter.")
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise ValueError(f"supplied range of [{lo}, {hi}] is not finite")
        lo_t, hi_t = splat(lo, ftype, ()), splat(hi, ftype, ())
    elif x.size == 0:
        lo_t, hi_t = splat(0, ftype, ()), splat(1, ftype, ())
    else:
        lo_t, hi_t = astype(_min(x), ftype), astype(_max(x), ftype)
    same = m.equal(lo_t, hi_t)
    lo_t = m.where(same, m.subtract(lo_t, 0.5), lo_t)
    hi_t = m.where(same, m.add(hi_t, 0.5), hi_t)
    return linspace(lo_t, hi_t, bins + 1, dtype=ftype)


def histogram(a, bins=10, range=None, density=None, weights=None):
    """numpy.histogram with a static bin count (or explicit edges): (counts, edges). Values outside
    the range are not counted; the last bin includes its right edge."""
    x = ravel(asarray(a))
    edges = histogram_bin_edges(x, bins, range)
    nb = edges.shape[0] - 1
    xf = astype(x, edges.dtype) if not dtypes.is_complex(x.dtype) else x
    idx = m.subtract(searchsorted(edges, xf, "right"), 1)
    last = m.equal(xf, edges[-1])
    idx = m.where(last, nb - 1, idx)
    inside = m.logical_and(m.greater_equal(xf, edges[0]), m.less_equal(xf, edges[-1]))
    idx = m.where(inside, idx, -1)
    if weights is None:
        w = splat(1, np.int64, x.shape)
    else:
        w = ravel(asarray(weights))
        if w.shape != x.shape:
            raise ValueError("weights should have the same shape as a.")
    full = (x.shape[0], nb)
    hit = ops.compare(ops.broadcast_in_dim(idx, full, (0,)), ops.iota(full, np.int64, 1), "EQ")
    wb = ops.broadcast_in_dim(w, full, (0,))
    counts = _sum(ops.select(hit, wb, splat(0, w.dtype, full)), axis=0, dtype=w.dtype if weights is not None else None)
    if density:
        widths = diff(edges)
        total = _sum(counts)
        return m.divide(m.divide(counts, total), widths), edges
    return counts, edges


def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """numpy.histogramdd with static bin counts: (counts, [edges per dimension])."""
    s = asarray(sample)
    if s.ndim == 1:
        s = reshape(s, (s.shape[0], 1))
    n, d = s.shape
    bins = [bins] * d if isinstance(bins, (int, np.integer)) else list(bins)
    if len(bins) != d:
        raise ValueError("The dimension of bins must be equal to the dimension of the sample x.")
    ranges = [None] * d if range is None else list(range)
    flat = None
    edges_all, sizes = [], []
    for k in builtins.range(d):
        col = s[:, k]
        e = histogram_bin_edges(col, bins[k], ranges[k])
        edges_all.append(e)
        nb = e.shape[0] - 1
        sizes.append(nb)
        cf = astype(col, e.dtype)
        idx = m.subtract(searchsorted(e, cf, "right"), 1)
        idx = m.where(m.equal(cf, e[-1]), nb - 1, idx)
        inside = m.logical_and(m.greater_equal(cf, e[0]), m.less_equal(cf, e[-1]))
        idx = m.where(inside, idx, -(1 << 40))
        flat = idx if flat is None else m.add(m.multiply(flat, nb), idx)
    cells = int(np.prod(sizes))
    w = splat(1, np.int64, (n,)) if weights is None else astype(asarray(weights), np.float64)
    full = (n, cells)
    flat = m.where(m.less(flat, 0), -1, flat)
    hit = ops.compare(ops.broadcast_in_dim(flat, full, (0,)), ops.iota(full, np.int64, 1), "EQ")
    counts = _sum(ops.select(hit, ops.broadcast_in_dim(w, full, (0,)), splat(0, w.dtype, full)), axis=0)
    counts = reshape(astype(counts, np.float64), tuple(sizes))
    if density:
        counts = m.divide(counts, _sum(counts))
        for k, e in enumerate(edges_all):
            shape = [1] * d
            shape[k] = sizes[k]
            counts = m.divide(counts, reshape(diff(e), tuple(shape)))
    return counts, edges_all


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """numpy.histogram2d: (counts, x edges, y edges)."""
    xv, yv = asarray(x), asarray(y)
    if xv.shape != yv.shape:
        raise ValueError("x and y must have the same length.")
    counts, edges = histogramdd(stack([ravel(xv), ravel(yv)], axis=1), bins, range, density, weights)
    return counts, edges[0], edges[1]


def bincount(x, weights=None, minlength=0, *, length=None):
    """numpy.bincount for non-negative integers; the output length must be static: ``length``
    (jax.numpy's argument), else ``minlength`` when the input is a constant's max + 1 fits it."""
    xv = asarray(x)
    if xv.ndim != 1:
        raise ValueError("object too deep for desired array" if xv.ndim > 1 else "object of too small depth for desired array")
    if not dtypes.is_integer(xv.dtype) and xv.dtype != np.bool_:
        raise TypeError(f"Cannot cast array data from dtype('{xv.dtype}') to dtype('int64') according to the rule 'safe'")
    if minlength is not None and minlength < 0:
        raise ValueError("'minlength' must not be negative")
    if length is None:
        if not isinstance(x, Tensor):
            arr = np.asarray(x)
            length = builtins.max(int(arr.max()) + 1 if arr.size else 0, minlength or 0)
        else:
            raise ValueError("bincount: the output length depends on the values; pass length= (a static int)")
    w = splat(1, np.int64, xv.shape) if weights is None else asarray(weights)
    full = (xv.shape[0], length)
    hit = ops.compare(ops.broadcast_in_dim(astype(xv, np.int64), full, (0,)), ops.iota(full, np.int64, 1), "EQ")
    counts = _sum(ops.select(hit, ops.broadcast_in_dim(w, full, (0,)), splat(0, w.dtype, full)), axis=0,
                  dtype=None if weights is None else (w.dtype if dtypes.is_inexact(w.dtype) else np.float64))
    return counts


# ---------------------------------------------------------------- convolution of sequences

def convolve(a, v, mode="full"):
    """numpy.convolve of 1-D sequences (full, same, valid): the outer product's anti-diagonal sums."""
    return _conv("convolve", a, v, mode, False)


def correlate(a, v, mode="valid"):
    """numpy.correlate of 1-D sequences: c[k] = sum_n a[n + k] * conj(v[n])."""
    return _conv("correlate", a, v, mode, True)


def _conv(name, a, v, mode, correlate_):
    x, y = asarray(a), asarray(v)
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError(f"{name}: object too deep for desired array" if builtins.max(x.ndim, y.ndim) > 1 else
                         f"{name}: object of too small depth for desired array")
    if x.shape[0] == 0:
        raise ValueError("a cannot be empty")
    if y.shape[0] == 0:
        raise ValueError("v cannot be empty")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"mode must be one of 'full', 'same', or 'valid' (got {mode!r})")
    common = dtypes.result_type(x, y)
    x, y = astype(x, common), astype(y, common)
    if correlate_:
        y = flip(m.conj(y))
    n, k = x.shape[0], y.shape[0]
    p = outer(x, y)                                   # (n, k)
    if p.dtype == np.bool_:
        p = astype(p, np.int64)
    zero = splat(0, p.dtype, ())
    padded = ops.pad(p, zero, (0, 0), (0, n), (0, 0))  # (n, k + n)
    flat = reshape(padded, (n * (n + k),))
    shifted = reshape(ops.slice(flat, [0], [n * (n + k - 1)]), (n, n + k - 1))
    full = _sum(shifted, axis=0, dtype=p.dtype)
    if common == np.bool_:
        full = astype(full, bool)
    lo, hi = builtins.min(n, k), builtins.max(n, k)
    if mode == "full":
        out = full
    elif mode == "same":
        # numpy centres correlate and convolve differently when the second sequence is longer
        start = ((k - 1) // 2 if n >= k else n // 2) if correlate_ else (lo - 1) // 2
        out = full[start:start + hi]
    else:
        out = full[lo - 1:hi]
    return out
