"""numpy's statistics: var/std, the NaN-ignoring reductions, median/percentile/quantile, average,
ptp, cov/corrcoef, count_nonzero (searching, binning and convolution are in ``sequences.py``).
A quantile's data-dependent position is read with a one-hot select, so every shape stays static."""
from __future__ import annotations

import builtins

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy import _math as m
from hloforge.frontend.numpy._base import (
    asarray, astype, broadcast_to, normalize_axes, splat)
from hloforge.frontend.numpy._reductions import max as _max, mean as _mean, min as _min, sum as _sum
from hloforge.frontend.numpy._shape import concatenate, reshape, squeeze, transpose
from hloforge.frontend.numpy._ufuncs import isnan
from hloforge.frontend.tracing import Tensor
from hloforge.frontend.numpy._reductions import prod
from hloforge.frontend.numpy._contractions import matmul


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
