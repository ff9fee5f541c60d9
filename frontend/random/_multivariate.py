"""multivariate_normal and orthogonal: normal samples through jax's linear algebra (the
LAPACK/cuSOLVER custom calls of hloforge.lax.linalg, which jax emits too, so the bits agree)."""
from __future__ import annotations

import operator

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax import linalg as lax_linalg
from hloforge.frontend.numpy._base import broadcast_to, splat
from hloforge.frontend.numpy._contractions import einsum
from hloforge.frontend.random._eager import eager
from hloforge.frontend.random._keys import key_operand, shape_tuple
from hloforge.frontend.random._params import (
    dtype_of, float_dtype, jax_binary, key_arg, no_sharding, param, promote, public, shape_of, tensor)
from hloforge.frontend.random._samplers import F32, check_shape, normal
from hloforge.frontend.tracing import Tensor

_LINALG_DTYPES = tuple(np.dtype(d) for d in (np.float32, np.float64, np.complex64, np.complex128))
_METHODS = ("svd", "eigh", "cholesky")


def _linalg_dtype(name: str, dtype) -> None:
    if np.dtype(dtype) not in _LINALG_DTYPES:
        raise TypeError(f"{name}: dtype {np.dtype(dtype).name} is not supported: the factorization (LAPACK) needs "
                        "float32, float64, complex64 or complex128")


def _scaled_columns(vectors: Tensor, values: Tensor) -> Tensor:
    """``vectors * sqrt(values[..., None, :])``."""
    root = ops.sqrt(values)
    root = ops.reshape(root, root.shape[:-1] + (1,) + root.shape[-1:])
    if root.dtype != vectors.dtype:
        root = ops.convert(root, vectors.dtype)
    return ops.multiply(vectors, broadcast_to(root, vectors.shape))


@eager(static=("shape", "dtype", "method"))
def _multivariate_normal(key, mean, cov, shape, dtype, method):
    key = key_operand(public("multivariate_normal"), key)
    mean, cov = tensor(mean), tensor(cov)
    if method == "svd":
        u, s, _ = lax_linalg.svd(cov, full_matrices=True)
        factor = _scaled_columns(u, s)
    elif method == "eigh":
        v, w = lax_linalg.eigh(cov, lower=True, symmetrize_input=True)
        factor = _scaled_columns(v, w)
    else:
        factor = lax_linalg.cholesky(cov, symmetrize_input=True)
    samples = normal(key, tuple(shape) + mean.shape[-1:], dtype)
    joint = promote(factor.dtype, samples.dtype)
    moved = einsum("...ij,...j->...i", ops.convert(factor, joint) if factor.dtype != joint else factor,
                   ops.convert(samples, joint) if samples.dtype != joint else samples)
    return jax_binary(ops.add, mean, False, moved, False)[0]


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky", *, out_sharding=None):
    """Multivariate normal samples (jax.random.multivariate_normal): ``mean + factor @ z`` for
    standard normals ``z`` and ``factor`` the Cholesky factor of ``cov`` (or ``u sqrt(s)`` of its
    SVD, ``v sqrt(w)`` of its eigendecomposition), through the LAPACK calls jax emits.

    Args:
      key: uint32[2] key.
      mean: means of shape ``(..., n)``.
      cov: covariances of shape ``(..., n, n)`` (positive definite for "cholesky").
      shape: the batch shape (without the last axis); None (default) broadcasts the batch shapes
        of mean and cov.
      dtype: the normals' float dtype; None (default) is the promoted dtype of mean and cov
        (float32 for Python lists).
      method: "cholesky" (default), "svd" or "eigh".
      out_sharding: None.
    Returns:
      An array of shape ``shape + (n,)``.
    Example:
      >>> x = hf.random.multivariate_normal(key, np.zeros(2), np.eye(2), (100,))
    """
    name = public("multivariate_normal")
    key_arg(name, key)
    (mean, mean_weak), (cov, cov_weak) = (param(name, what, _listed(x), F32) for what, x in (("mean", mean),
                                                                                             ("cov", cov)))
    strong = [dtype_of(x) for x, weak in ((mean, mean_weak), (cov, cov_weak)) if not weak]
    joint = promote(*strong) if len(strong) == 2 else strong[0] if strong else F32
    joint = joint if dtypes.is_float(joint) else F32
    mean, cov = (x if dtype_of(x) == joint else (ops.convert(x, joint) if isinstance(x, Tensor)
                                                 else np.asarray(x).astype(joint)) for x in (mean, cov))
    if method not in _METHODS:
        raise ValueError(f"{name}: method must be one of 'svd', 'eigh' and 'cholesky', got {method!r}")
    d = joint if dtype is None else float_dtype(name, dtype)
    if dtype is None and not dtypes.is_float(d):
        raise ValueError(f"{name}: dtype must be a float dtype, got {d}")
    no_sharding(name, out_sharding)
    _linalg_dtype(name, joint)
    mean_shape, cov_shape = shape_of(mean), shape_of(cov)
    if len(mean_shape) < 1:
        raise ValueError(f"{name}: mean must have at least one dimension (mean.ndim >= 1), got shape {mean_shape}")
    if len(cov_shape) < 2:
        raise ValueError(f"{name}: cov must have at least two dimensions (cov.ndim >= 2), got shape {cov_shape}")
    n = mean_shape[-1]
    if cov_shape[-2:] != (n, n):
        raise ValueError(f"{name}: cov must have shape (..., n, n) for n = {n} (mean's last dimension), got "
                         f"shape {cov_shape}")
    if shape is None:
        try:
            shape = tuple(np.broadcast_shapes(mean_shape[:-1], cov_shape[:-2]))
        except ValueError:
            raise ValueError(f"{name}: the batch shapes of mean {mean_shape[:-1]} and cov {cov_shape[:-2]} cannot "
                             "be broadcast together") from None
    else:
        shape = shape_tuple(name, shape)
        check_shape(name, shape, mean_shape[:-1], cov_shape[:-2])
    return _multivariate_normal(key, mean, cov, shape, d, method)


def _listed(x):
    """Python lists and scalars as float32 arrays (jax's default float), others unchanged."""
    if isinstance(x, (list, tuple)):
        value = np.asarray(x)
        return value.astype(F32) if value.dtype.kind in "biuf" else value
    return x


@eager(static=("n", "m", "shape", "dtype"))
def _orthogonal(key, n, m, shape, dtype):
    key = key_operand(public("orthogonal"), key)
    if min(n, m) == 0:
        return splat(0, dtype, tuple(shape) + (n, m))
    z = normal(key, tuple(shape) + (max(n, m), min(n, m)), dtype)
    q, r = lax_linalg.qr(z, full_matrices=False)
    k = min(n, m)
    diag = ops.reshape(ops.slice(ops.reshape(r, r.shape[:-2] + (k * k,)), (0,) * (r.ndim - 2) + (0,),
                                 r.shape[:-2] + (k * k,), (1,) * (r.ndim - 2) + (k + 1,)), r.shape[:-2] + (k,))
    signs = ops.reshape(ops.sign(diag), diag.shape[:-1] + (1, k))
    x = ops.multiply(q, broadcast_to(signs, q.shape))
    if n < m:
        return ops.transpose(x, tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2))
    return x


def orthogonal(key, n, shape=(), dtype=None, m=None, *, out_sharding=None):
    """Uniform samples of the orthogonal group O(n) (unitary U(n) for complex dtypes), or
    semi-orthogonal ``(n, m)`` matrices (jax.random.orthogonal): the Q of a normal sample's QR
    (LAPACK geqrf/orgqr, as jax), its columns' signs fixed by R's diagonal.

    Args:
      key: uint32[2] key.
      n: rows, a non-negative int.
      shape: the batch shape (default ``()``).
      dtype: float32 (default), float64, complex64 or complex128.
      m: columns (default n).
      out_sharding: None.
    Returns:
      An array of shape ``shape + (n, m)``.
    Example:
      >>> q = hf.random.orthogonal(key, 4)
    """
    name = public("orthogonal")
    key_arg(name, key)
    shape = shape_tuple(name, shape)
    d = float_dtype(name, dtype, allow_complex=True)
    sizes = []
    for what, v in (("n", n), ("m", n if m is None else m)):
        try:
            v = operator.index(v)
        except TypeError:
            raise TypeError(f"{name}: {what} must be a concrete int, got {v!r}") from None
        if v < 0:
            raise ValueError(f"{name}: {what} must be non-negative, got {v}")
        sizes.append(v)
    no_sharding(name, out_sharding)
    _linalg_dtype(name, d)
    return _orthogonal(key, sizes[0], sizes[1], shape, d)


__all__ = ["multivariate_normal", "orthogonal"]
