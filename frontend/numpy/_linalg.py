"""numpy.linalg's factorizations and solvers over :mod:`hloforge.lax.linalg` (LAPACK/cuSOLVER
custom calls): solve, inv, det, slogdet, cholesky, qr, eigh, eigvalsh, svd, svdvals, norm, pinv,
lstsq, matrix_power, matrix_rank, cond, plus the array API extras (vector_norm, matrix_norm,
multi_dot, ...). Batched over leading dims; numpy's dtype rules (integers compute in float64,
float16 is refused as numpy refuses it) and numpy's shape errors (``numpy.linalg.LinAlgError``).

Where numpy raises at run time (a singular matrix, a matrix that is not positive definite),
values are data here: the results hold inf or NaN, as in jax.numpy.
"""
from __future__ import annotations

import builtins
import operator
from typing import NamedTuple

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax import linalg as lax_linalg
from hloforge.frontend.numpy import _math as m
from hloforge.frontend.numpy._base import asarray, astype, broadcast_shapes, broadcast_to, normalize_axis, splat
from hloforge.frontend.numpy._contractions import matmul
from hloforge.frontend.numpy._reductions import max as _max, min as _min, sum as _sum
from hloforge.frontend.numpy._shape import moveaxis, reshape, swapaxes
from hloforge.frontend.tracing import Tensor
from hloforge.frontend.numpy._reductions import all as _all
from hloforge.frontend.numpy._shape import transpose

LinAlgError = np.linalg.LinAlgError


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


# ---------------------------------------------------------------- checks and dtypes

def _linalg_dtype(x):
    """numpy's linalg dtype: float32/float64/complex64/complex128 stay, other integers and bools
    compute in float64, float16 and bfloat16 are refused."""
    d = x.dtype
    if d in (np.float16, dtypes.bfloat16):
        raise TypeError(f"array type {d} is unsupported in linalg")
    if d in lax_linalg.SUPPORTED:
        return d
    return np.dtype(np.float64)


def _matrices(x, what="array"):
    x = asarray(x)
    if x.ndim < 2:
        raise LinAlgError(f"{x.ndim}-dimensional array given. Array must be at least two-dimensional")
    return astype(x, _linalg_dtype(x))


def _square(x):
    x = _matrices(x)
    if x.shape[-1] != x.shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")
    return x


def _adj(x):
    return m.conj(swapaxes(x, -1, -2))


def _eye_like(x):
    shape = x.shape
    eq = ops.compare(ops.iota(shape, np.int32, x.ndim - 2), ops.iota(shape, np.int32, x.ndim - 1), "EQ")
    return ops.select(eq, splat(1, x.dtype, shape), splat(0, x.dtype, shape))


def _diag(x):
    """The main diagonals of a batch of square matrices: (..., n)."""
    n = x.shape[-1]
    lead = x.shape[:-2]
    flat = reshape(x, lead + (n * n,))
    if n == 0:
        return reshape(flat, lead + (0,))
    return ops.slice(flat, [0] * (len(lead) + 1), list(lead) + [n * n], [1] * len(lead) + [n + 1])


# ---------------------------------------------------------------- factorizations

def cholesky(a, /, *, upper=False, symmetrize_input=True):
    """numpy.linalg.cholesky: lower L with a = L L^H (``upper``: U = L^H); NaN where a is not
    positive definite (numpy raises LinAlgError at run time). ``symmetrize_input`` (jax.numpy's
    keyword and default): factor (a + a^H) / 2, so gradients are symmetric as jax's; False reads
    only the lower triangle, as numpy does."""
    x = _square(a)
    lt = lax_linalg.cholesky(x, symmetrize_input=symmetrize_input)
    return _adj(lt) if upper else lt


def qr(a, mode="reduced"):
    """numpy.linalg.qr: modes 'reduced' (Q (..., m, k), R (..., k, n)), 'complete' and 'r'."""
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"Unrecognized mode '{mode}'")
    if mode == "raw":
        raise NotImplementedError("qr: mode='raw' is not supported")
    x = _matrices(a)
    q, r = lax_linalg.qr(x, full_matrices=(mode == "complete"))
    return r if mode == "r" else QRResult(q, r)


def _uplo(UPLO):
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"hloforge.numpy.linalg: UPLO must be one of None, 'L' or 'U', got {UPLO!r}")
    return UPLO != "U"


def eigh(a, UPLO=None, symmetrize_input=True):
    """numpy.linalg.eigh: (eigenvalues ascending, eigenvectors as columns) of Hermitian matrices.
    ``symmetrize_input`` (jax.numpy's keyword and default): decompose (a + a^H) / 2, so gradients are
    symmetric as jax's; False reads only the ``UPLO`` triangle ("L", the default, or "U"), as numpy
    does."""
    lower = _uplo(UPLO)
    x = _square(a)
    v, w = lax_linalg.eigh(x, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


class EigResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


def eig(a):
    """numpy.linalg.eig: EigResult(eigenvalues, right eigenvectors as columns). The results are
    always complex (numpy returns real arrays when every eigenvalue happens to be real, a
    value-dependent dtype), as in jax.numpy."""
    x = _square(a)
    w, vr = lax_linalg.eig(x, compute_left_eigenvectors=False)
    return EigResult(w, vr)


def eigvals(a):
    """numpy.linalg.eigvals (complex, as ``eig``)."""
    x = _square(a)
    return lax_linalg.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


def eigvalsh(a, UPLO="L", *, symmetrize_input=True):
    """numpy.linalg.eigvalsh: the ascending eigenvalues of Hermitian matrices (``symmetrize_input``
    as in :func:`eigh`)."""
    return eigh(a, UPLO, symmetrize_input=symmetrize_input).eigenvalues


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """numpy.linalg.svd: SVDResult(U, S, Vh) with S descending, or S (``compute_uv=False``).
    ``hermitian`` is accepted and computes the general SVD (the same S)."""
    x = _matrices(a)
    if not compute_uv:
        return lax_linalg.svd(x, full_matrices=False, compute_uv=False)
    u, s, vh = lax_linalg.svd(x, full_matrices=full_matrices)
    return SVDResult(u, s, vh)


def svdvals(x, /):
    """numpy.linalg.svdvals: the singular values, descending."""
    return svd(x, compute_uv=False)


# ---------------------------------------------------------------- LU: solve, inv, det

def solve(a, b):
    """numpy.linalg.solve: x with a x = b (b a vector only when it is 1-D, numpy 2), broadcasting
    batch dims; LU with partial pivoting (inf/NaN for singular a)."""
    x = _square(a)
    y = asarray(b)
    common = np.result_type(x.dtype, _linalg_dtype(y) if y.dtype not in (np.float16, dtypes.bfloat16) else x.dtype)
    x, y = astype(x, common), astype(y, common)
    n = x.shape[-1]
    vector = y.ndim == 1
    if vector:
        y = reshape(y, (y.shape[0], 1))
    if y.shape[-2] != n:
        raise ValueError(f"solve: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                         f"(m,m),(m,n)->(m,n) (size {y.shape[-2]} is different from {n})")
    batch = broadcast_shapes(x.shape[:-2], y.shape[:-2], what="solve")
    x = broadcast_to(x, batch + x.shape[-2:])
    y = broadcast_to(y, batch + y.shape[-2:])
    out = lax_linalg.solve(x, y)
    return reshape(out, out.shape[:-1]) if vector else out


def inv(a):
    """numpy.linalg.inv: solve(a, I)."""
    x = _square(a)
    if x.shape[-1] == 0:
        return x
    return lax_linalg.solve(x, _eye_like(x))


def det(a):
    """numpy.linalg.det: the product of U's diagonal times the permutation's sign."""
    x = _square(a)
    if x.shape[-1] == 0:
        return splat(1, x.dtype, x.shape[:-2])
    return lax_linalg.det(x)


def slogdet(a):
    """numpy.linalg.slogdet: SlogdetResult(sign, log|det|) (sign 0, logabsdet -inf when singular)."""
    x = _square(a)
    real = dtypes.real_dtype(x.dtype)
    if x.shape[-1] == 0:
        return SlogdetResult(splat(1, x.dtype, x.shape[:-2]), splat(0, real, x.shape[:-2]))
    return SlogdetResult(*lax_linalg.slogdet(x))


def matrix_power(a, n):
    """numpy.linalg.matrix_power: repeated squaring (inv for negative n, identity for 0)."""
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError("exponent must be an integer") from None
    x = asarray(a)
    if x.ndim < 2:
        raise LinAlgError(f"{x.ndim}-dimensional array given. Array must be at least two-dimensional")
    if x.shape[-1] != x.shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")
    if n == 0:
        return astype(_eye_like(x), x.dtype)
    if n < 0:
        x = inv(x)
        n = -n
    result, base = None, x
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


# ---------------------------------------------------------------- norms, rank, pinv, lstsq, cond

def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """numpy.linalg.vector_norm: the ``ord``-norm over ``axis`` (all axes when None)."""
    v = asarray(x)
    if not dtypes.is_inexact(v.dtype):
        v = astype(v, np.float64)
    if axis is None:
        axes = tuple(range(v.ndim))
    elif isinstance(axis, (tuple, list)):
        axes = tuple(normalize_axis(a, v.ndim) for a in axis)
    else:
        axes = (normalize_axis(axis, v.ndim),)
    a = m.abs(v)
    if ord == np.inf:
        out = _max(a, axis=axes, keepdims=keepdims) if a.size else splat(0, a.dtype, _kept(a, axes, keepdims))
    elif ord == -np.inf:
        out = _min(a, axis=axes, keepdims=keepdims)
    elif ord == 0:
        out = astype(_sum(astype(m.not_equal(a, 0), a.dtype), axis=axes, keepdims=keepdims), a.dtype)
    elif ord == 1:
        out = _sum(a, axis=axes, keepdims=keepdims)
    elif ord is None or ord == 2:
        out = m.sqrt(_sum(m.multiply(a, a), axis=axes, keepdims=keepdims))
    elif isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    else:
        out = m.power(_sum(m.power(a, float(ord)), axis=axes, keepdims=keepdims), 1.0 / ord)
    return out


def _kept(a, axes, keepdims):
    return tuple(1 if d in axes else s for d, s in enumerate(a.shape)) if keepdims else tuple(
        s for d, s in enumerate(a.shape) if d not in axes)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """numpy.linalg.matrix_norm over the last two axes."""
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def norm(x, ord=None, axis=None, keepdims=False):
    """numpy.linalg.norm: vector norms (1-D / one axis) and matrix norms ('fro', 'nuc', +-1, +-2,
    +-inf over two axes)."""
    v = asarray(x)
    if not dtypes.is_inexact(v.dtype):
        v = astype(v, np.float64)
    if axis is None:
        if ord is None:
            out = vector_norm(v, axis=None)
            return reshape(out, (1,) * v.ndim) if keepdims else out
        if v.ndim == 1:
            axis = (0,)
        elif v.ndim == 2:
            axis = (0, 1)
        else:
            raise ValueError("Improper number of dimensions to norm.")
    elif isinstance(axis, (int, np.integer)):
        axis = (axis,)
    else:
        axis = tuple(axis)
    if len(axis) == 1:
        if isinstance(ord, str):
            raise ValueError(f"Invalid norm order '{ord}' for vectors")
        return vector_norm(v, axis=axis[0], keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axis) != 2:
        raise ValueError("Improper number of dimensions to norm.")
    r, c = normalize_axis(axis[0], v.ndim), normalize_axis(axis[1], v.ndim)
    if r == c:
        raise ValueError("Duplicate axes given.")
    if ord is None or ord == "fro" or ord == "f":
        out = m.sqrt(_sum(m.real(m.multiply(v, m.conj(v))), axis=(r, c), keepdims=keepdims))
        return out
    a = m.abs(v)
    if ord in (1, -1):
        s = _sum(a, axis=r, keepdims=True)
        out = (_max if ord == 1 else _min)(s, axis=c, keepdims=True)
    elif ord in (np.inf, -np.inf):
        s = _sum(a, axis=c, keepdims=True)
        out = (_max if ord == np.inf else _min)(s, axis=r, keepdims=True)
    elif ord in (2, -2, "nuc"):
        mats = moveaxis(v, (r, c), (-2, -1))
        s = svd(mats, compute_uv=False)
        val = _max(s, axis=-1) if ord == 2 else _min(s, axis=-1) if ord == -2 else _sum(s, axis=-1)
        if keepdims:
            shape = list(v.shape)
            shape[r] = shape[c] = 1
            return reshape(val, tuple(shape))
        return val
    else:
        raise ValueError("Invalid norm order for matrices.")
    if keepdims:
        return out
    return reshape(out, tuple(s for d, s in enumerate(v.shape) if d not in (r, c)))


def _default_rtol(x):
    return builtins.max(x.shape[-2:]) * float(np.finfo(dtypes.real_dtype(x.dtype)).eps)


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """numpy.linalg.matrix_rank: the number of singular values above the tolerance (int64)."""
    x = asarray(A)
    if x.ndim < 2:
        return astype(m.logical_not(_all_zero(x)), np.int64)
    x = _matrices(x)
    s = svd(x, compute_uv=False)
    if tol is None:
        r = _default_rtol(x) if rtol is None else rtol
        tol_t = m.multiply(_max(s, axis=-1, keepdims=True), r) if s.shape[-1] else s
    else:
        tol_t = asarray(tol)
        tol_t = reshape(tol_t, tol_t.shape + (1,))
    return _sum(astype(m.greater(s, tol_t), np.int64), axis=-1)


def _all_zero(x):
    return _all(m.equal(x, 0))


def pinv(a, rcond=None, hermitian=False, *, rtol=None):
    """numpy.linalg.pinv: V diag(1/s) U^H, dropping singular values below rcond * max(s)
    (rcond defaults to 1e-15, or ``rtol``)."""
    x = _matrices(a)
    if rcond is None:
        rcond = 1e-15 if rtol is None else rtol
    mm, nn = x.shape[-2:]
    if mm == 0 or nn == 0:
        return splat(0, x.dtype, x.shape[:-2] + (nn, mm))
    u, s, vh = lax_linalg.svd(x, full_matrices=False)
    cutoff = m.multiply(asarray(rcond) if isinstance(rcond, Tensor) else rcond, _max(s, axis=-1, keepdims=True))
    big = m.greater(s, cutoff)
    sinv = m.where(big, m.divide(1, m.where(big, s, 1)), 0)
    sinv = astype(sinv, x.dtype)
    return matmul(_adj(vh), m.multiply(reshape(sinv, sinv.shape + (1,)), _adj(u)))


def lstsq(a, b, rcond=None):
    """numpy.linalg.lstsq: (x, residuals, rank, s). ``residuals`` has shape (k,) when m > n (numpy
    returns an empty array instead when a is rank-deficient), else (0,)."""
    x = asarray(a)
    y = asarray(b)
    if x.ndim != 2:
        raise LinAlgError(f"{x.ndim}-dimensional array given. Array must be two-dimensional")
    common = np.result_type(_linalg_dtype(x), _linalg_dtype(y))
    x, y = astype(x, common), astype(y, common)
    vector = y.ndim == 1
    if vector:
        y = reshape(y, (y.shape[0], 1))
    if y.ndim != 2:
        raise LinAlgError(f"{y.ndim}-dimensional array given. Array must be one or two-dimensional")
    mm, nn = x.shape
    if y.shape[0] != mm:
        raise LinAlgError("Incompatible dimensions")
    real = dtypes.real_dtype(common)
    if rcond is None:
        rcond = float(np.finfo(real).eps) * builtins.max(mm, nn)
    if mm == 0 or nn == 0:
        sol = splat(0, common, (nn, y.shape[1]))
        s = splat(0, real, (0,))
        rank = splat(0, np.int32, ())
    else:
        u, s, vh = lax_linalg.svd(x, full_matrices=False)
        cutoff = m.multiply(rcond, _max(s))
        big = m.greater(s, cutoff)
        rank = astype(_sum(astype(big, np.int32)), np.int32)
        sinv = astype(m.where(big, m.divide(1, m.where(big, s, 1)), 0), common)
        uhb = matmul(_adj(u), y)
        sol = matmul(_adj(vh), m.multiply(reshape(sinv, (sinv.shape[0], 1)), uhb))
    if mm > nn:
        r = m.subtract(matmul(x, sol), y)
        resid = _sum(m.real(m.multiply(r, m.conj(r))), axis=0)
    else:
        resid = splat(0, real, (0,))
    if vector:
        sol = reshape(sol, (nn,))
    return sol, resid, rank, s


def cond(x, p=None):
    """numpy.linalg.cond: s_max / s_min for p None/2 (-2: the inverse), else norm(x) * norm(inv(x))."""
    v = _square(x) if p not in (None, 2, -2) else _matrices(x)
    if p in (None, 2, -2):
        s = svd(v, compute_uv=False)
        big, small = s[..., 0], s[..., -1]
        return m.divide(big, small) if p != -2 else m.divide(small, big)
    return m.multiply(norm(v, p, axis=(-2, -1)), norm(inv(v), p, axis=(-2, -1)))


def multi_dot(arrays, *, out=None):
    """numpy.linalg.multi_dot: left-to-right matmuls (1-D ends as row/column vectors)."""
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    res = asarray(arrays[0])
    for a in arrays[1:]:
        res = matmul(res, a)
    return res


def tensorsolve(a, b, axes=None):
    """numpy.linalg.tensorsolve: x with tensordot(a, x, x.ndim) = b."""
    x, y = asarray(a), asarray(b)
    if axes is not None:
        allaxes = list(range(x.ndim))
        for k in axes:
            allaxes.remove(k)
            allaxes.insert(x.ndim, k)
        x = transpose(x, allaxes)
    oldshape = x.shape[-(x.ndim - y.ndim):]
    prod = int(np.prod(oldshape, dtype=np.int64))
    if int(np.prod(x.shape, dtype=np.int64)) != prod ** 2:
        raise LinAlgError("Input arrays must satisfy the requirement prod(a.shape[b.ndim:]) == "
                          "prod(a.shape[:b.ndim])")
    sol = solve(reshape(x, (prod, prod)), reshape(y, (prod,)))
    return reshape(sol, oldshape)


def tensorinv(a, ind=2):
    """numpy.linalg.tensorinv."""
    x = asarray(a)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    oldshape = x.shape
    prod = int(np.prod(oldshape[ind:], dtype=np.int64))
    invshape = oldshape[ind:] + oldshape[:ind]
    if int(np.prod(oldshape[:ind], dtype=np.int64)) != prod:
        raise LinAlgError("Last 2 dimensions of the array must be square")
    return reshape(inv(reshape(x, (-1, prod))), invshape)


def _export(name, fn):
    def wrapped(*args, **kwargs):
        return fn(*args, **kwargs)
    wrapped.__name__ = wrapped.__qualname__ = name
    wrapped.__doc__ = f"numpy.linalg.{name} (see hloforge.numpy.{name})."
    return wrapped


__all__ = ["LinAlgError", "EigResult", "eig", "eigvals", "EighResult", "QRResult", "SlogdetResult", "SVDResult", "cholesky", "qr", "eigh",
           "eigvalsh", "svd", "svdvals", "solve", "inv", "det", "slogdet", "matrix_power", "vector_norm",
           "matrix_norm", "norm", "matrix_rank", "pinv", "lstsq", "cond", "multi_dot", "tensorsolve", "tensorinv"]
