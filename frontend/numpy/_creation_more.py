"""More of numpy's array creation: ranges (linspace, logspace, geomspace), matrices (eye,
identity, tri, tril, triu, diag, diagflat, vander), diagonal and trace, grids (meshgrid, indices,
ix_), index helpers (tril_indices & co., computed at trace time), window functions and array/copy."""
from __future__ import annotations

import builtins
import operator

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy._base import asarray, astype, broadcast_to, check_device, normalize_axis, splat
from hloforge.frontend.numpy._creation import zeros
from hloforge.frontend.numpy._shape import moveaxis, ravel, reshape
from hloforge.frontend.tracing import Tensor
from hloforge.frontend.numpy._math import abs as _abs, add, divide, exp, floor, log, multiply, power, sign, subtract, where
from hloforge.frontend.numpy._reductions import sum as _sum
from hloforge.frontend.numpy._shape import stack


def _int(value, what):
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"'{type(value).__name__}' object cannot be interpreted as an integer "
                        f"({what}={value!r})") from None


# ---------------------------------------------------------------- ranges

def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """numpy.linspace: ``num`` evenly spaced samples, computed as numpy does
    (``start + i * step``, the last one exactly ``stop``; integer dtypes floor)."""
    check_device(device, "linspace")
    num = _int(num, "num")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = (num - 1) if endpoint else num
    start_t, stop_t = asarray(start), asarray(stop)
    dt = dtypes.result_type(start, stop, float(num))
    out_dtype = dtypes.canonical(dtype) if dtype is not None else dt
    compute = dt if dtypes.is_inexact(dt) else np.dtype(np.float64)
    start_t, stop_t = astype(start_t, compute), astype(stop_t, compute)
    shape = np.broadcast_shapes(start_t.shape, stop_t.shape)
    start_t, stop_t = broadcast_to(start_t, shape), broadcast_to(stop_t, shape)
    delta = subtract(stop_t, start_t)
    full = (num,) + shape
    i = ops.iota(full, compute if not dtypes.is_complex(compute) else dtypes.real_dtype(compute), 0)
    i = astype(i, compute)
    d0 = broadcast_to(delta, full)
    s0 = broadcast_to(start_t, full)
    if div > 0:
        step = divide(delta, float(div))
        y = add(multiply(i, broadcast_to(step, full)), s0)
        if endpoint and num > 1:
            last = ops.compare(ops.iota(full, np.int32, 0), splat(num - 1, np.int32, full), "EQ")
            y = where(last, broadcast_to(stop_t, full), y)
    else:
        step = splat(np.nan, compute, shape)
        y = add(multiply(i, d0), s0)
    y = moveaxis(y, 0, normalize_axis(axis, len(full)))
    if dtypes.is_integer(out_dtype) and not dtypes.is_integer(compute):
        y = floor(y)
    y = astype(y, out_dtype)
    return (y, step) if retstep else y


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """numpy.logspace: ``base ** linspace(start, stop)``."""
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    out = power(base, y) if not isinstance(base, Tensor) else power(asarray(base), y)
    return out if dtype is None else astype(out, dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """numpy.geomspace: a geometric progression (real operands of one sign; the ends exact)."""
    s, e = asarray(start), asarray(stop)
    dt = dtypes.result_type(start, stop, float(num))
    if dtypes.is_complex(dt):
        raise TypeError("geomspace: complex start/stop are not supported")
    if not isinstance(start, Tensor) and not isinstance(stop, Tensor):
        if np.any(np.asarray(start) == 0) or np.any(np.asarray(stop) == 0):
            raise ValueError("Geometric sequence cannot include zero")
    s, e = astype(s, dt), astype(e, dt)
    lo, hi = log(_abs(s)), log(_abs(e))
    y = exp(linspace(lo, hi, num=num, endpoint=endpoint, axis=0))
    y = multiply(y, sign(s))
    if num > 0:
        first = ops.compare(ops.iota(y.shape, np.int32, 0), splat(0, np.int32, y.shape), "EQ")
        y = where(first, broadcast_to(s, y.shape), y)
        if endpoint and num > 1:
            last = ops.compare(ops.iota(y.shape, np.int32, 0), splat(num - 1, np.int32, y.shape), "EQ")
            y = where(last, broadcast_to(e, y.shape), y)
    y = moveaxis(y, 0, normalize_axis(axis, y.ndim))
    return y if dtype is None else astype(y, dtype)


# ---------------------------------------------------------------- matrices

def _mask(n, m, k, lower=True, shape=None):
    """(n, m) bool: j - i <= k (lower) or j - i >= k (upper)."""
    shape = shape or (n, m)
    r = len(shape)
    i = ops.iota(shape, np.int64, r - 2)
    j = ops.iota(shape, np.int64, r - 1)
    d = ops.subtract(j, i)
    return ops.compare(d, splat(k, np.int64, shape), "LE" if lower else "GE")


def tri(N, M=None, k=0, dtype=float):
    """numpy.tri: ones at and below the k-th diagonal."""
    N = _int(N, "N")
    M = N if M is None else _int(M, "M")
    if N < 0 or M < 0:
        raise ValueError(f"negative dimensions are not allowed: ({N}, {M})")
    return astype(_mask(N, M, _int(k, "k")), dtypes.canonicalize(dtype))


def eye(N, M=None, k=0, dtype=float, *, device=None):
    """numpy.eye: ones on the k-th diagonal."""
    check_device(device, "eye")
    N = _int(N, "N")
    M = N if M is None else _int(M, "M")
    if N < 0 or M < 0:
        raise ValueError(f"negative dimensions are not allowed: ({N}, {M})")
    k = _int(k, "k")
    shape = (N, M)
    d = ops.subtract(ops.iota(shape, np.int64, 1), ops.iota(shape, np.int64, 0))
    return astype(ops.compare(d, splat(k, np.int64, shape), "EQ"), dtypes.canonicalize(dtype))


def identity(n, dtype=float):
    """numpy.identity."""
    return eye(n, dtype=dtype)


def _triangle(m, k, lower):
    x = asarray(m)
    if x.ndim < 2:
        if x.ndim == 0:
            raise ValueError("input array must be at least 1-d")
        x = broadcast_to(x, (x.shape[0], x.shape[0]))
    mask = _mask(None, None, _int(k, "k") - (0 if lower else 0), lower, shape=x.shape)
    return ops.select(mask, x, splat(0, x.dtype, x.shape))


def tril(m, k=0):
    """numpy.tril: zero above the k-th diagonal (batched over leading dims)."""
    return _triangle(m, k, True)


def triu(m, k=0):
    """numpy.triu: zero below the k-th diagonal (batched over leading dims)."""
    return _triangle(m, k, False)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """numpy.diagonal: the diagonal of the (axis1, axis2) planes, as the last axis."""
    x = asarray(a)
    if x.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    a1, a2 = normalize_axis(axis1, x.ndim, "axis1"), normalize_axis(axis2, x.ndim, "axis2")
    if a1 == a2:
        raise ValueError("axis1 and axis2 cannot be the same")
    x = moveaxis(x, (a1, a2), (-2, -1))
    n, m = x.shape[-2:]
    offset = _int(offset, "offset")
    r0, c0 = (0, offset) if offset >= 0 else (-offset, 0)
    k = builtins.max(0, builtins.min(n - r0, m - c0))
    lead = x.shape[:-2]
    if k == 0:
        return splat(0, x.dtype, lead + (0,))
    x = ops.slice(x, [0] * len(lead) + [r0, c0], list(lead) + [r0 + k, c0 + k])
    flat = reshape(x, lead + (k * k,))
    return ops.slice(flat, [0] * (len(lead) + 1), list(lead) + [k * k], [1] * len(lead) + [k + 1])


def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    """numpy.trace: the sum of ``diagonal``."""
    return _sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def diag(v, k=0):
    """numpy.diag: a 2-D array with ``v`` on the k-th diagonal, or the k-th diagonal of a 2-D array."""
    x = asarray(v)
    k = _int(k, "k")
    if x.ndim == 2:
        return diagonal(x, k)
    if x.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    n = x.shape[0] + builtins.abs(k)
    padded = ops.pad(x, splat(0, x.dtype, ()), (0,), (builtins.abs(k),), (0,)) if k else x
    vals = ops.broadcast_in_dim(padded, (n, n), (0,) if k >= 0 else (1,))
    d = ops.subtract(ops.iota((n, n), np.int64, 1), ops.iota((n, n), np.int64, 0))
    on = ops.compare(d, splat(k, np.int64, (n, n)), "EQ")
    return ops.select(on, vals, splat(0, x.dtype, (n, n)))


def diagflat(v, k=0):
    """numpy.diagflat: ``diag`` of the flattened input."""
    return diag(ravel(asarray(v)), k)


def vander(x, N=None, increasing=False):
    """numpy.vander: columns are powers of x (decreasing unless ``increasing``)."""
    x = asarray(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    N = x.shape[0] if N is None else _int(N, "N")
    if N < 0:
        raise ValueError("N must be nonnegative")
    if x.dtype != dtypes.bfloat16:
        x = astype(x, np.promote_types(x.dtype, np.int64))  # numpy's vander dtype
    col = reshape(x, (x.shape[0], 1))
    cols, p = [], None
    for i in range(N):
        p = astype(splat(1, x.dtype, col.shape), x.dtype) if i == 0 else (col if i == 1 else multiply(p, col))
        cols.append(p)
    if not increasing:
        cols = cols[::-1]
    if not cols:
        return splat(0, x.dtype, (x.shape[0], 0))
    return ops.concatenate(cols, 1) if len(cols) > 1 else cols[0]


# ---------------------------------------------------------------- grids

def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """numpy.meshgrid ('xy' or 'ij' indexing, optionally sparse)."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    xs = [ravel(asarray(x)) for x in xi]
    n = len(xs)
    shape = [x.shape[0] for x in xs]
    if indexing == "xy" and n > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(xs):
        dim = i
        if indexing == "xy" and n > 1 and i < 2:
            dim = 1 - i
        if sparse:
            s = [1] * n
            s[dim] = x.shape[0]
            out.append(reshape(x, tuple(s)))
        else:
            out.append(ops.broadcast_in_dim(x, tuple(shape), (dim,)))
    return tuple(out)


def indices(dimensions, dtype=int, sparse=False):
    """numpy.indices: one grid per dimension (stacked, or sparse)."""
    dims = tuple(_int(d, "dimensions") for d in dimensions)
    dtype = dtypes.canonical(dtype)
    grids = []
    for i, d in enumerate(dims):
        if sparse:
            s = [1] * len(dims)
            s[i] = d
            grids.append(ops.iota(tuple(s), dtype, i) if dtype != np.bool_ else astype(ops.iota(tuple(s), np.int64, i), bool))
        else:
            grids.append(astype(ops.iota(dims, np.int64, i), dtype))
    if sparse:
        return tuple(grids)
    if not grids:
        return splat(0, dtype, (0,))
    return ops.concatenate([reshape(g, (1,) + dims) for g in grids], 0) if len(grids) > 1 else reshape(grids[0], (1,) + dims)


def ix_(*args):
    """numpy.ix_: open-mesh index arrays (each 1-D argument reshaped to its own axis)."""
    n = len(args)
    out = []
    for i, a in enumerate(args):
        x = asarray(a)
        if x.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        out.append(reshape(x, (1,) * i + (x.shape[0],) + (1,) * (n - i - 1)))
    return tuple(out)


# ---------------------------------------------------------------- index helpers (static: constants)

def _const_tuple(arrays):
    return tuple(asarray(np.asarray(a)) for a in arrays)


def tril_indices(n, k=0, m=None):
    """numpy.tril_indices (static: constants)."""
    return _const_tuple(np.tril_indices(n, k, m))


def triu_indices(n, k=0, m=None):
    """numpy.triu_indices (static: constants)."""
    return _const_tuple(np.triu_indices(n, k, m))


def _shape2(arr, what):
    shape = arr.shape if isinstance(arr, Tensor) else np.shape(arr)
    if len(shape) != 2:
        raise ValueError("input array must be 2-d")
    return shape


def tril_indices_from(arr, k=0):
    """numpy.tril_indices_from."""
    n, m = _shape2(arr, "tril_indices_from")
    return tril_indices(n, k, m)


def triu_indices_from(arr, k=0):
    """numpy.triu_indices_from."""
    n, m = _shape2(arr, "triu_indices_from")
    return triu_indices(n, k, m)


def diag_indices(n, ndim=2):
    """numpy.diag_indices (static: constants)."""
    return _const_tuple(np.diag_indices(n, ndim))


def diag_indices_from(arr):
    """numpy.diag_indices_from: every dimension must have the same length."""
    shape = arr.shape if isinstance(arr, Tensor) else np.shape(arr)
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))


def mask_indices(n, mask_func, k=0):
    """numpy.mask_indices for a numpy mask function (tril/triu): static constants."""
    m = np.asarray(mask_func(np.ones((n, n), int), k)) if not getattr(mask_func, "__module__", "").startswith(
        "hloforge") else np.asarray({"tril": np.tril, "triu": np.triu}[mask_func.__name__](np.ones((n, n), int), k))
    return _const_tuple(np.nonzero(m != 0))


# ---------------------------------------------------------------- window functions (static)

def _window(fn, M, *args):
    M = _int(M, "M")
    return asarray(np.asarray(fn(M, *args)))


def bartlett(M):
    """numpy.bartlett (a constant: M is static)."""
    return _window(np.bartlett, M)


def blackman(M):
    """numpy.blackman (a constant: M is static)."""
    return _window(np.blackman, M)


def hamming(M):
    """numpy.hamming (a constant: M is static)."""
    return _window(np.hamming, M)


def hanning(M):
    """numpy.hanning (a constant: M is static)."""
    return _window(np.hanning, M)


def kaiser(M, beta):
    """numpy.kaiser (a constant: M and beta are static)."""
    if isinstance(beta, Tensor):
        raise TypeError("kaiser: beta must be a static number, got a traced Tensor")
    return _window(np.kaiser, M, beta)


# ---------------------------------------------------------------- array, copy, empty

def array(object, dtype=None, *, copy=True, order="K", ndmin=0):
    """numpy.array: a Tensor of ``object`` (traced values pass through; nested lists of Tensors
    are stacked), with at least ``ndmin`` dimensions."""
    if isinstance(object, (list, tuple)) and builtins.any(isinstance(o, Tensor) or isinstance(o, (list, tuple))
                                                           for o in object) and _has_tensor(object):
        x = stack([array(o) for o in object])
    else:
        x = asarray(object)
    if dtype is not None:
        x = astype(x, dtype)
    if x.ndim < ndmin:
        x = reshape(x, (1,) * (ndmin - x.ndim) + x.shape)
    return x


def _has_tensor(obj):
    if isinstance(obj, Tensor):
        return True
    if isinstance(obj, (list, tuple)):
        return builtins.any(_has_tensor(o) for o in obj)
    return False


def copy(a, order="K"):
    """numpy.copy (values are immutable: the Tensor itself)."""
    return asarray(a)


def empty(shape, dtype=float, *, device=None):
    """numpy.empty: zeros (uninitialized memory has no meaning in StableHLO)."""
    check_device(device, "empty")
    return zeros(shape, dtype)


def empty_like(prototype, dtype=None, shape=None, *, device=None):
    """numpy.empty_like: zeros."""
    check_device(device, "empty_like")
    x = asarray(prototype)
    return zeros(x.shape if shape is None else shape, x.dtype if dtype is None else dtype)


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """numpy.fromfunction: ``function(*indices(shape))``."""
    return function(*indices(shape, dtype=dtype), **kwargs)
