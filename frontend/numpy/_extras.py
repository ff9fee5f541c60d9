"""The rest of numpy's top level that needs no new lowering: host-side constructors (constants
in the trace), print options, einsum_path, the Bessel function i0, and the functional forms of
numpy's in-place writers (fill_diagonal, put, place) with static positions."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy import _math as m
from hloforge.frontend.numpy._base import asarray, astype, splat
from hloforge.frontend.numpy._shape import ravel, reshape
from hloforge.frontend.tracing import Tensor
from hloforge.frontend.numpy._reductions import sum as _sum
from hloforge.frontend.numpy._setops import _pick

# numpy's print options (they format numpy arrays; a Tensor prints its shape and dtype)
get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions
printoptions = np.printoptions


# ---------------------------------------------------------------- host data -> constants

def frombuffer(buffer, dtype=float, count=-1, offset=0):
    """numpy.frombuffer: a constant of the buffer's values."""
    return asarray(np.frombuffer(buffer, dtype=dtypes.canonical(dtype), count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
    """numpy.fromstring (text with ``sep``): a constant."""
    return asarray(np.fromstring(string, dtype=dtypes.canonical(dtype), count=count, sep=sep))


def fromiter(iterable, dtype, count=-1):
    """numpy.fromiter: a constant."""
    return asarray(np.fromiter(iterable, dtype=dtypes.canonical(dtype), count=count))


def fromfile(file, dtype=float, count=-1, sep="", offset=0):
    """numpy.fromfile: a constant of the file's values (read at trace time)."""
    return asarray(np.fromfile(file, dtype=dtypes.canonical(dtype), count=count, sep=sep, offset=offset))


def load(file, *args, **kwargs):
    """numpy.load of one array (.npy): a constant (read at trace time)."""
    out = np.load(file, *args, **kwargs)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"load: {file!r} holds {type(out).__name__}, not one array; use numpy.load")
    return asarray(out)


def from_dlpack(x, /, *, device=None, copy=None):
    """numpy.from_dlpack: a constant of the (host) array's values."""
    return asarray(np.from_dlpack(x))


def einsum_path(subscripts, *operands, optimize="greedy"):
    """numpy.einsum_path on the operands' shapes (the contraction order is static)."""
    shaped = [np.empty(o.shape, dtype=np.float32) if isinstance(o, Tensor) else np.asarray(o) for o in operands]
    return np.einsum_path(subscripts, *shaped, optimize=optimize)


# ---------------------------------------------------------------- i0

def _i0_series(ax, terms):
    """sum_k ((x/2)^2)^k / (k!)^2, k < terms (all terms positive: no cancellation)."""
    q = m.multiply(m.multiply(ax, ax), 0.25)
    total = splat(1, ax.dtype, ax.shape)
    term = total
    for k in range(1, terms):
        term = m.multiply(term, m.divide(q, float(k * k)))
        total = m.add(total, term)
    return total


def _i0_asymptotic(ax, terms):
    """e^x / sqrt(2 pi x) * sum_k ((2k-1)!!)^2 / (k! (8x)^k)."""
    safe = m.maximum(ax, 1.0)
    inv8x = m.divide(1.0, m.multiply(safe, 8.0))
    total = splat(1, ax.dtype, ax.shape)
    term = total
    for k in range(1, terms):
        term = m.multiply(term, m.multiply(inv8x, float((2 * k - 1) ** 2) / k))
        total = m.add(total, term)
    # e^x split in two so that the product does not overflow before the large-x limit
    half = m.exp(m.multiply(safe, 0.5))
    return m.multiply(m.multiply(half, m.divide(total, m.sqrt(m.multiply(safe, 2 * np.pi)))), half)


def i0(x):
    """numpy.i0: the modified Bessel function of the first kind, order 0 (power series below 30,
    the asymptotic expansion above)."""
    v = asarray(x)
    if dtypes.is_complex(v.dtype):
        raise TypeError("i0 not supported for complex values")
    if not dtypes.is_inexact(v.dtype):
        v = astype(v, np.float64)
    work = v if v.dtype in (np.float32, np.float64) else astype(v, np.float32)
    ax = m.abs(work)
    small = _i0_series(m.minimum(ax, 30.0), 64)
    large = _i0_asymptotic(ax, 14)
    return astype(m.where(m.less_equal(ax, 30.0), small, large), v.dtype)


# ---------------------------------------------------------------- functional in-place writers

def _no_inplace(name, inplace):
    if inplace:
        raise ValueError(f"{name}: Tensors are immutable; pass inplace=False and use the returned array")


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """numpy.fill_diagonal as a function (jax.numpy's ``inplace=False``): a copy with the main
    diagonal set to ``val`` (cycled); tall 2-D matrices repeat the diagonal every n + 1 rows with
    ``wrap``."""
    _no_inplace("fill_diagonal", inplace)
    x = asarray(a)
    if x.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if x.ndim > 2 and len(set(x.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    flat = ravel(x)
    step = 1 + int(np.cumprod(x.shape[:-1]).sum()) if x.ndim > 2 else x.shape[1] + 1
    end = flat.shape[0] if (x.ndim > 2 or wrap) else min(x.shape[1] * x.shape[1], flat.shape[0])
    positions = list(range(0, end, step))
    idx = ops.iota(flat.shape, np.int64, 0)
    out = flat
    vt = ravel(astype(asarray(val), x.dtype))
    for j, p in enumerate(positions):
        k = j % vt.shape[0] if vt.shape[0] else 0
        out = m.where(m.equal(idx, p), vt[k], out)
    return reshape(out, x.shape)


def put(a, ind, v, mode=None, *, inplace=True):
    """numpy.put as a function (``inplace=False``) with static flat indices: a copy with
    a.flat[ind] = v (v cycled; later indices win; mode 'wrap'/'clip', default 'raise' checks)."""
    _no_inplace("put", inplace)
    if isinstance(ind, Tensor):
        raise TypeError("put: indices must be static (ints or arrays of ints), got a traced Tensor")
    x = asarray(a)
    flat = ravel(x)
    n = flat.shape[0]
    idx = np.asarray(ind, dtype=np.int64).reshape(-1)
    mode = mode or "raise"
    if mode == "raise":
        bad = (idx < -n) | (idx >= n)
        if bad.any():
            raise IndexError(f"index {int(idx[bad][0])} is out of bounds for axis 0 with size {n}")
        idx = idx % n if n else idx
    elif mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    else:
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    vt = ravel(astype(asarray(v), x.dtype))
    if vt.shape[0] == 0:
        return x
    pos = ops.iota(flat.shape, np.int64, 0)
    out = flat
    for j, p in enumerate(idx.tolist()):
        out = m.where(m.equal(pos, p), vt[j % vt.shape[0]], out)
    return reshape(out, x.shape)


def place(arr, mask, vals, *, inplace=True):
    """numpy.place as a function (``inplace=False``): the True positions of ``mask`` take ``vals``
    in order, cycled (a traced mask ranks its positions with an n x n comparison)."""
    _no_inplace("place", inplace)
    x = asarray(arr)
    vt = ravel(astype(asarray(vals), x.dtype))
    if not isinstance(mask, Tensor):
        mk = np.asarray(mask, dtype=bool)
        if mk.size != x.size:
            raise ValueError("place: mask and data must be the same size")
        positions = np.flatnonzero(mk)
        if positions.size == 0:
            return x
        if vt.shape[0] == 0:
            raise ValueError("Cannot insert from an empty array!")
        return put(x, positions, vt, inplace=False)
    mk = ravel(astype(mask, bool))
    if mk.shape[0] != x.size:
        raise ValueError("place: mask and data must be the same size")
    if vt.shape[0] == 0:
        raise ValueError("Cannot insert from an empty array!")
    n = mk.shape[0]
    full = (n, n)
    before = ops.compare(ops.iota(full, np.int64, 1), ops.iota(full, np.int64, 0), "LT")
    counted = m.logical_and(before, ops.broadcast_in_dim(mk, full, (1,)))
    rank = m.remainder(_sum(astype(counted, np.int64), axis=1), vt.shape[0])
    return reshape(m.where(mk, _pick(vt, rank), ravel(x)), x.shape)
