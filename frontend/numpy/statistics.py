"""numpy's statistics: var/std, the NaN-ignoring reductions, median/percentile/quantile, average,
ptp, cov/corrcoef, count_nonzero, histograms, bincount (static length), searchsorted/digitize,
interp, convolve/correlate. Data-dependent positions (a quantile's index, a bin) are read with
one-hot selects, so every shape stays static."""
from __future__ import annotations

import builtins

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy import math as m
from hloforge.frontend.numpy._base import (
    asarray, astype, broadcast_to, normalize_axes, splat)
from hloforge.frontend.numpy.reductions import max as _max, mean as _mean, min as _min, sum as _sum
from hloforge.frontend.numpy.shape import concatenate, ravel, reshape, squeeze, transpose
from hloforge.frontend.numpy.ufuncs import isnan
from hloforge.frontend.tracing import Tensor


def _keep(shape, axes, out, keepdims):
    if not keepdims:
        return out
    return reshape(out, tuple(1 if d in axes else s for d, s in enumerate(shape)))


def _count(x, axes):
    return int(np.prod([x.shape[a] for a in axes], dtype=np.int64))


def _float_result(x, dtype):
    if dtype is not None:
        return dtypes.canonical(dtype)
    return x.dtype if dtypes.is_inexact(x.dtype) else np.dtype(np.float64)


def _acc(d):
    return np.dtype(np.float32) if d in (np.float16, dtypes.bfloat16) else d


# ---------------------------------------------------------------- variance

def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """numpy.var: mean(|x - mean(x)|**2) over ``axis`` divided by N - ddof (real result for complex)."""
    _no_out(out, where)
    if correction is not None:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    x = asarray(a)
    axes = normalize_axes(axis, x.ndim)
    res = _float_result(x, dtype)
    acc = _acc(res)
    xc = astype(x, acc)
    mu = _mean(xc, axis=axes, keepdims=True) if mean is None else astype(asarray(mean), acc)
    d = m.subtract(xc, mu)
    sq = m.multiply(d, m.conj(d)) if dtypes.is_complex(acc) else m.multiply(d, d)
    sq = m.real(sq)
    n = _count(x, axes)
    total = _sum(sq, axis=axes, keepdims=keepdims)
    out_ = m.divide(total, splat(builtins.max(n - ddof, 0), total.dtype, total.shape))
    return astype(out_, dtypes.real_dtype(res))


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """numpy.std: sqrt(var)."""
    return m.sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction))


def _no_out(out, where=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument is not supported (Tensors are immutable)")
    if where is not None:
        raise NotImplementedError("The 'where' argument is not supported")


def ptp(a, axis=None, out=None, keepdims=False):
    """numpy.ptp: max - min over ``axis``."""
    _no_out(out)
    x = asarray(a)
    return m.subtract(_max(x, axis=axis, keepdims=keepdims), _min(x, axis=axis, keepdims=keepdims))


def count_nonzero(a, axis=None, *, keepdims=False):
    """numpy.count_nonzero: int64 counts of nonzero elements."""
    x = asarray(a)
    return _sum(astype(astype(x, bool), np.int64), axis=axis, keepdims=keepdims)


# ---------------------------------------------------------------- NaN-ignoring reductions

def _nan_replaced(x, value):
    if not dtypes.is_inexact(x.dtype):
        return x
    return m.where(isnan(x), splat(value, x.dtype, x.shape), x)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """numpy.nansum: NaNs count as zero."""
    _no_out(out, where)
    s = _sum(_nan_replaced(asarray(a), 0), axis=axis, dtype=dtype, keepdims=keepdims)
    return s if initial is None else m.add(s, initial)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """numpy.nanprod: NaNs count as one."""
    _no_out(out, where)
    from hloforge.frontend.numpy.reductions import prod
    p = prod(_nan_replaced(asarray(a), 1), axis=axis, dtype=dtype, keepdims=keepdims)
    return p if initial is None else m.multiply(p, initial)


def _valid_count(x, axes, keepdims, dtype):
    ok = astype(m.logical_not(isnan(x)), dtype)
    return _sum(ok, axis=axes, dtype=dtype, keepdims=keepdims)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """numpy.nanmean: the mean of the non-NaN elements (NaN where there are none)."""
    _no_out(out, where)
    x = asarray(a)
    if not dtypes.is_inexact(x.dtype):
        return _mean(x, axis=axis, dtype=dtype, keepdims=keepdims)
    axes = normalize_axes(axis, x.ndim)
    res = _float_result(x, dtype)
    acc = _acc(res)
    xc = astype(x, acc)
    total = _sum(_nan_replaced(xc, 0), axis=axes, keepdims=keepdims)
    count = _valid_count(xc, axes, keepdims, dtypes.real_dtype(acc))
    return astype(m.divide(total, count), res)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """numpy.nanvar: the variance of the non-NaN elements."""
    _no_out(out, where)
    if correction is not None:
        ddof = correction
    x = asarray(a)
    if not dtypes.is_inexact(x.dtype):
        return var(x, axis, dtype, None, ddof, keepdims)
    axes = normalize_axes(axis, x.ndim)
    res = _float_result(x, dtype)
    acc = _acc(res)
    xc = astype(x, acc)
    mu = nanmean(xc, axis=axes, keepdims=True) if mean is None else astype(asarray(mean), acc)
    d = m.subtract(xc, mu)
    sq = m.real(m.multiply(d, m.conj(d)))
    total = _sum(_nan_replaced(sq, 0), axis=axes, keepdims=keepdims)
    count = _valid_count(xc, axes, keepdims, total.dtype)
    denom = m.maximum(m.subtract(count, ddof), 0)
    return astype(m.divide(total, denom), dtypes.real_dtype(res))


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """numpy.nanstd: sqrt(nanvar)."""
    return m.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction))


def _nan_extremum(name, reduce, fill):
    def fn(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        _no_out(out, where)
        x = asarray(a)
        if not dtypes.is_float(x.dtype):
            r = reduce(x, axis=axis, keepdims=keepdims)
        else:
            axes = normalize_axes(axis, x.ndim)
            r = reduce(_nan_replaced(x, fill), axis=axis, keepdims=keepdims)
            allnan = m.logical_not(_sum(astype(m.logical_not(isnan(x)), np.int32), axis=axes,
                                        keepdims=keepdims) > 0)
            r = m.where(allnan, splat(np.nan, r.dtype, r.shape), r)
        if initial is not None:
            r = (m.maximum if fill == -np.inf else m.minimum)(r, initial)
        return r
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"numpy.{name}: ignores NaNs (NaN where a slice is all NaN)."
    return fn


nanmax = _nan_extremum("nanmax", _max, -np.inf)
nanmin = _nan_extremum("nanmin", _min, np.inf)


# ---------------------------------------------------------------- quantiles

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _pick(sorted_x, index):
    """sorted_x[..., index[...]] along the last axis; ``index`` broadcasts against the leading dims
    with one extra leading q dim: (q..., lead...) -> values of that shape."""
    n = sorted_x.shape[-1]
    full = index.shape + (n,)
    iota = ops.iota(full, np.int64, len(full) - 1)
    hit = ops.compare(iota, broadcast_to(reshape(index, index.shape + (1,)), full), "EQ")
    vals = broadcast_to(sorted_x, full)
    chosen = ops.select(hit, vals, splat(0, vals.dtype, full))
    return ops.reduce(chosen, np.array(0, vals.dtype), (len(full) - 1,), "add")


def _quantile(name, a, q, axis, method, keepdims, ignore_nan, scale):
    if method not in _METHODS:
        if method in ("inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
                      "hazen", "weibull", "median_unbiased", "normal_unbiased"):
            raise NotImplementedError(f"{name}: method {method!r} is not supported; use one of {', '.join(_METHODS)}")
        raise ValueError(f"'{method}' is not a valid method. Use one of: {', '.join(_METHODS)}")
    x = asarray(a)
    if dtypes.is_complex(x.dtype):
        raise TypeError("a must be an array of real numbers")
    if not isinstance(q, Tensor):
        qa = np.asarray(q, dtype=np.float64) / scale
        if not ((qa >= 0) & (qa <= 1)).all():
            raise ValueError("Percentiles must be in the range [0, 100]" if scale == 100 else
                             "Quantiles must be in the range [0, 1]")
        q_weak = dtypes.weak_type(q) is not None
        qt = asarray(qa) if not q_weak else splat(float(qa), np.float64, ())
    else:
        qt = m.divide(q, scale) if scale != 1 else q
        q_weak = False
    axes = normalize_axes(axis, x.ndim)
    if method in ("lower", "higher", "nearest"):
        res = x.dtype
    else:
        base = x.dtype if dtypes.is_inexact(x.dtype) else np.dtype(np.float64)
        res = base if q_weak or dtypes.is_inexact(x.dtype) and isinstance(q, (float, int)) else \
            np.result_type(base, qt.dtype) if base != dtypes.bfloat16 else base
    lead_shape = tuple(s for d, s in enumerate(x.shape) if d not in axes)
    xt = transpose(x, [d for d in range(x.ndim) if d not in axes] + list(axes))
    xt = reshape(xt, lead_shape + (_count(x, axes),))
    n = xt.shape[-1]
    work = np.dtype(np.float64) if not dtypes.is_inexact(x.dtype) else _acc(x.dtype)
    sorted_x = ops.sort(xt, xt.ndim - 1, "LT")
    if ignore_nan and dtypes.is_float(x.dtype):
        valid = _sum(astype(m.logical_not(isnan(xt)), np.int64), axis=-1)
    else:
        valid = splat(n, np.int64, lead_shape)
    qv = astype(qt, np.float64)
    full = qv.shape + lead_shape
    qb = ops.broadcast_in_dim(qv, full, tuple(range(qv.ndim))) if qv.shape != full else qv
    nb = astype(ops.broadcast_in_dim(valid, full, tuple(range(qv.ndim, len(full)))) if lead_shape or qv.ndim
                else valid, np.float64)
    pos = m.multiply(qb, m.subtract(nb, 1.0))
    lo = m.floor(pos)
    hi = m.minimum(m.ceil(pos), m.maximum(m.subtract(nb, 1.0), 0.0))
    lo = m.maximum(lo, 0.0)
    frac = m.subtract(pos, lo)
    if method == "nearest":
        lo = hi = m.rint(pos)
    elif method == "lower":
        hi = lo
    elif method == "higher":
        lo = hi
    sx = broadcast_to(sorted_x, full + (n,)) if qv.ndim else sorted_x
    vlo = _pick(sx, astype(lo, np.int64))
    vhi = _pick(sx, astype(hi, np.int64))
    if method in ("lower", "higher", "nearest"):
        out = vlo
    else:
        vlo, vhi = astype(vlo, work), astype(vhi, work)
        if method == "midpoint":
            t = m.where(m.equal(frac, 0.0), 0.0, 0.5)
        else:
            t = frac
        t = astype(t, work)
        diff_ = m.subtract(vhi, vlo)
        out = m.where(m.greater_equal(t, 0.5), m.subtract(vhi, m.multiply(diff_, m.subtract(1, t))),
                      m.add(vlo, m.multiply(diff_, t)))
        if dtypes.is_float(x.dtype):
            # NaN propagates (numpy: any NaN in the slice gives NaN, unless ignored)
            has_nan = m.greater(_sum(astype(isnan(xt), np.int32), axis=-1), 0)
            bad = has_nan if not ignore_nan else m.equal(valid, 0)
            bad = ops.broadcast_in_dim(bad, full, tuple(range(qv.ndim, len(full)))) if full != bad.shape else bad
            out = m.where(bad, np.nan, out)
        out = astype(out, res)
    if keepdims:
        out = reshape(out, qv.shape + tuple(1 if d in axes else s for d, s in enumerate(x.shape)))
    return out


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
             weights=None, interpolation=None):
    """numpy.quantile (methods linear, lower, higher, midpoint, nearest): q's dims come first."""
    _no_out(out, weights)
    return _quantile("quantile", a, q, axis, interpolation or method, keepdims, False, 1)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
               weights=None, interpolation=None):
    """numpy.percentile: quantile(a, q / 100)."""
    _no_out(out, weights)
    return _quantile("percentile", a, q, axis, interpolation or method, keepdims, False, 100)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                weights=None, interpolation=None):
    """numpy.nanquantile: quantiles of the non-NaN elements."""
    _no_out(out, weights)
    return _quantile("nanquantile", a, q, axis, interpolation or method, keepdims, True, 1)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                  weights=None, interpolation=None):
    """numpy.nanpercentile."""
    _no_out(out, weights)
    return _quantile("nanpercentile", a, q, axis, interpolation or method, keepdims, True, 100)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """numpy.median: the 0.5 quantile (integers give float64)."""
    _no_out(out)
    return _quantile("median", a, 0.5, axis, "linear", keepdims, False, 1)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """numpy.nanmedian."""
    _no_out(out)
    return _quantile("nanmedian", a, 0.5, axis, "linear", keepdims, True, 1)


# ---------------------------------------------------------------- average, cov, corrcoef

def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """numpy.average: the (weighted) mean over ``axis``; ``returned`` adds the sum of weights."""
    x = asarray(a)
    axes = normalize_axes(axis, x.ndim)
    if weights is None:
        avg = _mean(x, axis=axes, keepdims=keepdims)
        scl = splat(_count(x, axes), avg.dtype, avg.shape)
        return (avg, scl) if returned else avg
    w = asarray(weights)
    if dtypes.is_integer(x.dtype) or x.dtype == np.bool_:
        res = np.result_type(x.dtype, w.dtype, np.float64) if w.dtype != dtypes.bfloat16 else np.dtype(np.float64)
    else:
        res = dtypes.result_type(x, w)
    if x.shape != w.shape:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if w.ndim != len(axes) or w.shape != tuple(x.shape[a] for a in axes):
            raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
        order = sorted(range(len(axes)), key=lambda i: axes[i])
        w = transpose(w, order) if len(axes) > 1 else w
        w = ops.broadcast_in_dim(astype(w, res), x.shape, tuple(sorted(axes)))
    w = astype(w, res)
    scl = _sum(w, axis=axes, keepdims=keepdims)
    avg = m.divide(_sum(m.multiply(astype(x, res), w), axis=axes, keepdims=keepdims), scl)
    return (avg, broadcast_to(scl, avg.shape)) if returned else avg


def cov(m_, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """numpy.cov: the covariance matrix of the rows (variables) of ``m`` (and ``y``)."""
    from hloforge.frontend.numpy.linalg import matmul
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    x = asarray(m_)
    if x.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is None:
        dtype = np.result_type(x.dtype, np.float64) if y is None else np.result_type(x.dtype, asarray(y).dtype, np.float64)
    X = _atleast_2d(astype(x, dtype))
    if not rowvar and X.shape[0] != 1:
        X = transpose(X)
    if X.shape[0] == 0:
        return reshape(splat(0, dtype, (0,)), (0, 0))
    if y is not None:
        Y = asarray(y)
        if Y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
        Y = _atleast_2d(astype(Y, dtype))
        if not rowvar and Y.shape[0] != 1:
            Y = transpose(Y)
        X = concatenate([X, Y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    for wt, what in ((fweights, "fweights"), (aweights, "aweights")):
        if wt is None:
            continue
        wt = astype(asarray(wt), np.float64)
        if wt.ndim > 1:
            raise RuntimeError(f"cannot handle multidimensional {what}")
        if wt.shape[0] != X.shape[1]:
            raise RuntimeError(f"incompatible numbers of samples and {what}")
        w = wt if w is None else m.multiply(w, wt)
    if w is None:
        avg = _mean(X, axis=1)
        wsum = float(X.shape[1])
        fact = splat(builtins.max(X.shape[1] - ddof, 0), dtypes.real_dtype(dtype), ())
    else:
        w = astype(w, dtypes.real_dtype(dtype))
        avg, wsum = average(X, axis=1, weights=w, returned=True)
        wsum = wsum[0]
        if ddof == 0:
            fact = wsum
        elif aweights is None:
            fact = m.subtract(wsum, ddof)
        else:
            aw = astype(asarray(aweights), w.dtype)
            fact = m.subtract(wsum, m.divide(m.multiply(ddof, _sum(m.multiply(w, aw))), wsum))
        fact = m.maximum(fact, 0)
    Xc = m.subtract(X, reshape(astype(avg, X.dtype), (X.shape[0], 1)))
    Xw = Xc if w is None else m.multiply(Xc, reshape(astype(w, X.dtype), (1, X.shape[1])))
    c = matmul(Xc if w is None else Xw, transpose(m.conj(Xc)))
    c = m.divide(c, astype(fact, dtypes.real_dtype(dtype)))
    return squeeze(c) if c.shape == (1, 1) else c


def _atleast_2d(x):
    return reshape(x, (1,) * (2 - x.ndim) + x.shape) if x.ndim < 2 else x


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """numpy.corrcoef: the normalized covariance, clipped to [-1, 1]."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return m.divide(c, c)
    d = m.sqrt(m.real(_diag(c)))
    n = d.shape[0]
    c = m.divide(c, reshape(d, (n, 1)))
    c = m.divide(c, reshape(d, (1, n)))
    if dtypes.is_complex(c.dtype):
        return ops.complex(m.clip(m.real(c), -1, 1), m.clip(m.imag(c), -1, 1))
    return m.clip(c, -1, 1)


def _diag(c):
    n = c.shape[0]
    flat = reshape(c, (n * n,))
    return ops.slice(flat, [0], [n * n], [n + 1])


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
    from hloforge.frontend.numpy.shape import flip
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
    from hloforge.frontend.numpy.creation_more import linspace
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
        from hloforge.frontend.numpy.manipulation import diff
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
        from hloforge.frontend.numpy.manipulation import diff
        counts = m.divide(counts, _sum(counts))
        for k, e in enumerate(edges_all):
            shape = [1] * d
            shape[k] = sizes[k]
            counts = m.divide(counts, reshape(diff(e), tuple(shape)))
    return counts, edges_all


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """numpy.histogram2d: (counts, x edges, y edges)."""
    from hloforge.frontend.numpy.shape import stack
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
    from hloforge.frontend.numpy.manipulation import outer
    from hloforge.frontend.numpy.shape import flip
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
