"""numpy's polynomial functions on coefficient arrays (highest power first): polyval, polyadd,
polysub, polymul, polydiv, polyder, polyint, poly, polyfit; trim_zeros with static input."""
from __future__ import annotations

import operator

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy import _math as m
from hloforge.frontend.numpy._base import asarray, astype, splat
from hloforge.frontend.numpy._shape import concatenate, reshape
from hloforge.frontend.tracing import Tensor
from hloforge.frontend.numpy._creation import zeros_like
from hloforge.frontend.numpy._sequences import convolve
from hloforge.frontend.numpy._linalg import eigvals, lstsq
from hloforge.frontend.numpy._creation_more import eye, vander
from hloforge.frontend.numpy._reductions import sum as _sum


def _poly1d(p, what):
    x = asarray(p)
    if x.ndim != 1:
        raise ValueError(f"{what}: coefficients must be 1-D, got shape {x.shape}")
    return x


def polyval(p, x):
    """numpy.polyval: Horner's rule, ``p[0] * x**(n-1) + ... + p[n-1]``."""
    c = _poly1d(p, "polyval")
    xv = asarray(x)
    y = zeros_like(xv)
    for i in range(c.shape[0]):
        y = m.add(m.multiply(y, xv), c[i])
    return y


def _pad_front(x, n):
    if n <= 0:
        return x
    return ops.pad(x, splat(0, x.dtype, ()), (n,), (0,), (0,))


def polyadd(a1, a2):
    """numpy.polyadd: aligned at the lowest power."""
    a, b = _poly1d(a1, "polyadd"), _poly1d(a2, "polyadd")
    common = dtypes.result_type(a, b)
    a, b = astype(a, common), astype(b, common)
    n = max(a.shape[0], b.shape[0])
    return m.add(_pad_front(a, n - a.shape[0]), _pad_front(b, n - b.shape[0]))


def polysub(a1, a2):
    """numpy.polysub."""
    a, b = _poly1d(a1, "polysub"), _poly1d(a2, "polysub")
    common = dtypes.result_type(a, b)
    a, b = astype(a, common), astype(b, common)
    n = max(a.shape[0], b.shape[0])
    return m.subtract(_pad_front(a, n - a.shape[0]), _pad_front(b, n - b.shape[0]))


def polymul(a1, a2):
    """numpy.polymul: the convolution of the coefficients."""
    return convolve(_poly1d(a1, "polymul"), _poly1d(a2, "polymul"))


def polydiv(u, v):
    """numpy.polydiv: (quotient, remainder) by long division (the divisor's leading coefficient
    must be nonzero; static lengths)."""
    a, b = _poly1d(u, "polydiv"), _poly1d(v, "polydiv")
    common = np.result_type(dtypes.result_type(a, b), np.float64) if not dtypes.is_inexact(
        dtypes.result_type(a, b)) else dtypes.result_type(a, b)
    a, b = astype(a, common), astype(b, common)
    n, k = a.shape[0], b.shape[0]
    if k == 0:
        raise ValueError("polydiv: the divisor has no coefficients")
    scale = m.divide(1.0, b[0])
    rem = [a[i] for i in range(n)]
    q = []
    for i in range(n - k + 1):
        coeff = m.multiply(scale, rem[i])
        q.append(coeff)
        for j in range(k):
            rem[i + j] = m.subtract(rem[i + j], m.multiply(coeff, b[j]))
    quot = ops.concatenate([reshape(c, (1,)) for c in q], 0) if q else splat(0, common, (1,))
    r = rem[max(n - k + 1, 0):] if n >= k else rem
    r_t = ops.concatenate([reshape(c, (1,)) for c in r], 0) if len(r) > 1 else (
        reshape(r[0], (1,)) if r else splat(0, common, (1,)))
    return quot, r_t


def polyder(p, m_=1):
    """numpy.polyder: the m-th derivative."""
    c = _poly1d(p, "polyder")
    order = operator.index(m_)
    if order < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    for _ in range(order):
        n = c.shape[0]
        if n <= 1:
            return splat(0, c.dtype if dtypes.is_inexact(c.dtype) or n else c.dtype, (1,)) if n <= 1 else c
        powers = np.arange(n - 1, 0, -1)
        c = m.multiply(c[:-1], powers.astype(c.dtype) if c.dtype != np.bool_ else powers)
    return c


def polyint(p, m_=1, k=None):
    """numpy.polyint: the m-th antiderivative with integration constants ``k`` (default 0)."""
    c = _poly1d(p, "polyint")
    order = operator.index(m_)
    if order < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    ks = [0] * order if k is None else ([k] * order if np.ndim(k) == 0 else list(k))
    if len(ks) < order:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    if not dtypes.is_inexact(c.dtype):
        c = astype(c, np.float64)
    for i in range(order):
        n = c.shape[0]
        c = m.divide(c, np.arange(n, 0, -1).astype(np.float64))
        c = concatenate([c, reshape(astype(asarray(ks[i]), c.dtype), (1,))])
    return c


def poly(seq_of_zeros):
    """numpy.poly of a 1-D sequence of roots: the monic polynomial's coefficients."""
    z = asarray(seq_of_zeros)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] > 0:
        raise NotImplementedError("poly: the characteristic polynomial of a matrix needs eigvals, "
                                  "which hloforge.numpy.linalg does not have yet")
    if z.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    dt = z.dtype if dtypes.is_inexact(z.dtype) else np.dtype(np.float64)
    c = splat(1, dt, (1,))
    for i in range(z.shape[0]):
        c = convolve(c, concatenate([splat(1, dt, (1,)), reshape(m.negative(astype(z[i], dt)), (1,))]))
    return c


def roots(p, *, strip_zeros=True):
    """numpy.roots: the eigenvalues of the companion matrix (always complex, as in jax.numpy).
    Leading and trailing zeros are stripped for constant coefficients; traced coefficients are
    taken as they are (their zeros cannot be seen at trace time)."""
    if not isinstance(p, Tensor):
        arr = np.atleast_1d(np.asarray(p))
        if arr.ndim != 1:
            raise ValueError("Input must be a rank-1 array.")
        nz = np.flatnonzero(arr)
        if nz.size == 0:
            return asarray(np.zeros(0, np.complex128))
        trailing = arr.shape[0] - nz[-1] - 1
        arr = arr[nz[0]:nz[-1] + 1]
        c = asarray(arr)
    else:
        c = _poly1d(p, "roots")
        trailing = 0
    if not dtypes.is_inexact(c.dtype):
        c = astype(c, np.float64)
    n = c.shape[0]
    cdt = dtypes.complex_dtype(c.dtype) if not dtypes.is_complex(c.dtype) else c.dtype
    if n < 2:
        out = splat(0, cdt, (0,))
    else:
        first = reshape(m.negative(m.divide(c[1:], c[0])), (1, n - 1))
        if n == 2:
            comp = first
        else:
            comp = concatenate([first, astype(eye(n - 2, n - 1), c.dtype)], axis=0)
        out = eigvals(comp)
    if trailing:
        out = concatenate([out, splat(0, out.dtype, (trailing,))])
    return out


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """numpy.polyfit by least squares (``hloforge.numpy.linalg.lstsq``)."""
    deg = operator.index(deg)
    if deg < 0:
        raise ValueError("expected deg >= 0")
    xv, yv = astype(asarray(x), np.float64), asarray(y)
    if xv.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if xv.shape[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if yv.ndim < 1 or yv.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if xv.shape[0] != yv.shape[0]:
        raise TypeError("expected x and y to have same length")
    if full or cov:
        raise NotImplementedError("polyfit: full=True and cov=True are not supported")
    yv = astype(yv, np.result_type(yv.dtype, np.float64) if yv.dtype != dtypes.bfloat16 else np.float64)
    lhs = vander(xv, deg + 1)
    rhs = yv
    if w is not None:
        wv = astype(asarray(w), np.float64)
        lhs = m.multiply(lhs, reshape(wv, (wv.shape[0], 1)))
        rhs = m.multiply(rhs, wv if rhs.ndim == 1 else reshape(wv, (wv.shape[0], 1)))
    # column scaling, as numpy does, for conditioning
    scale = m.sqrt(_sum(m.multiply(lhs, lhs), axis=0))
    scale = m.where(m.equal(scale, 0), 1.0, scale)
    c = lstsq(m.divide(lhs, scale), rhs, rcond=rcond)[0]
    return m.divide(c, scale) if c.ndim == 1 else m.divide(c, reshape(scale, (scale.shape[0], 1)))


def trim_zeros(filt, trim="fb"):
    """numpy.trim_zeros for a constant (non-traced) input: the result's length depends on the values."""
    if isinstance(filt, Tensor):
        raise TypeError("trim_zeros: the result's shape depends on the values; pass a constant array")
    return asarray(np.trim_zeros(np.asarray(filt), trim))
