"""jax.lax's special functions: erf_inv, lgamma, digamma (CHLO ops XLA expands) and the
regularized incomplete gamma functions igamma / igammac (series and continued fraction)."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend import numpy as hnp
from hloforge.frontend.numpy._base import asarray


def _float(what, x):
    x = asarray(x)
    if not dtypes.is_float(x.dtype):
        raise TypeError(f"{what} does not accept dtype {x.dtype}. Accepted dtypes are subtypes of floating.")
    return x


def erf_inv(x):
    """jax.lax.erf_inv; emits ``chlo.erf_inv``."""
    return ops.erf_inv(_float("erf_inv", x))


def lgamma(x):
    """jax.lax.lgamma (log |Gamma(x)|); emits ``chlo.lgamma``."""
    return ops.lgamma(_float("lgamma", x))


def digamma(x):
    """jax.lax.digamma; emits ``chlo.digamma``."""
    return ops.digamma(_float("digamma", x))


_TERMS = 48  # unrolled iterations of each expansion (float32-accurate for a, x up to ~30)


def _broadcast(a, x):
    shape = np.broadcast_shapes(a.shape, x.shape)
    return hnp.broadcast_to(a, shape), hnp.broadcast_to(x, shape)


def _prefix(a, x):
    """x**a e**-x / Gamma(a), in logs."""
    return hnp.exp(a * hnp.log(x) - x - lgamma(a))


def _series(a, x):
    """P(a, x) = prefix * sum_n x**n / (a (a+1) ... (a+n)): for x < a + 1."""
    term = 1.0 / a
    total = term
    for n in range(1, _TERMS):
        term = term * x / (a + n)
        total = total + term
    return _prefix(a, x) * total


def _continued_fraction(a, x):
    """Q(a, x) by Lentz's method on the Legendre continued fraction: for x >= a + 1."""
    tiny = 1e-30
    b = x + 1.0 - a
    c = 1.0 / tiny + 0.0 * x
    d = 1.0 / b
    h = d
    for i in range(1, _TERMS):
        an = -i * (i - a)
        b = b + 2.0
        d = an * d + b
        d = hnp.where(hnp.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = hnp.where(hnp.abs(c) < tiny, tiny, c)
        d = 1.0 / d
        h = h * d * c
    return _prefix(a, x) * h


def _igamma_pair(a, x):
    if dtypes.weak_type(x) is not None and dtypes.weak_type(a) is None:
        a = asarray(a)
        x = asarray(x, a.dtype)  # (a Python scalar takes the array's dtype, as in jax.lax)
    elif dtypes.weak_type(a) is not None and dtypes.weak_type(x) is None:
        x = asarray(x)
        a = asarray(a, x.dtype)
    a, x = _broadcast(*(_float("igamma", v) for v in (a, x)))
    if a.dtype != x.dtype:
        raise TypeError(f"igamma requires arguments to have the same dtypes, got {a.dtype}, {x.dtype}.")
    use_series = (x < a + 1.0)
    safe_x = hnp.where(x > 0, x, 1.0)
    p = _series(a, safe_x)
    q = _continued_fraction(a, hnp.where(use_series, a + 2.0, safe_x))
    return a, x, use_series, p, q


def igamma(a, x):
    """jax.lax.igamma: the regularized lower incomplete gamma function P(a, x); 0 at x = 0, NaN
    for a <= 0 or x < 0. Built from ops (48 unrolled terms of its series or continued fraction)."""
    a, x, use_series, p, q = _igamma_pair(a, x)
    out = hnp.where(use_series, p, 1.0 - q)
    out = hnp.where(x == 0, 0.0, out)
    return hnp.where((a <= 0) | (x < 0), hnp.nan, out).astype(a.dtype)


def igammac(a, x):
    """jax.lax.igammac: 1 - igamma(a, x), computed directly where that is accurate."""
    a, x, use_series, p, q = _igamma_pair(a, x)
    out = hnp.where(use_series, 1.0 - p, q)
    out = hnp.where(x == 0, 1.0, out)
    return hnp.where((a <= 0) | (x < 0), hnp.nan, out).astype(a.dtype)


__all__ = ["erf_inv", "lgamma", "digamma", "igamma", "igammac"]
