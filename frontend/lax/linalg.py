"""``hloforge.lax.linalg``: jax.lax.linalg's factorizations, emitting the same LAPACK (CPU) and
cuSOLVER (GPU) custom calls jaxlib registers for jax, with jax's pre- and post-processing
(symmetrized input, NaN where the solver reports failure, zeroed triangles).

The target platform is chosen at trace time: ``platform="cpu"`` or ``"gpu"`` (default
``hloforge.config.device``); a module traced for one platform does not compile for the other.

Each factorization is wrapped in a ``stablehlo.composite`` named ``hloforge.linalg.<function>``
whose attributes are its static options and whose decomposition (a private function) holds the
custom calls: XLA inlines it, and hloforge's AD differentiates it by name
(frontend/ad/lax_linalg.py, jax's rules), as a custom call is opaque. ``lu_solve``, ``solve``,
``det`` and ``slogdet`` are hloforge's (jax.numpy.linalg computes them from the same calls):
``solve``, ``det`` and ``slogdet`` are composites too, so that their derivatives solve with the
matrix rather than differentiate its LU factorization.

The custom calls, their per-platform target tables and the shared helpers are in
``_linalg_calls.py``; triangular_solve and the LU family in ``_linalg_solve.py``.
"""
from __future__ import annotations

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax._linalg_calls import (CHOLESKY, EIG, EIGH, GEQRF, GESDD, GESVD, GESVDJ,
                                                 HOUSEHOLDER_PRODUCT, _adjoint, _c, _check, _composite, _eye,
                                                 _info_ok, _nan_where_not, _platform, _slice_last2, _symmetrize,
                                                 _triangle, custom_call)
# (exported here: SUPPORTED for numpy.linalg, the solves for everyone, _lapack_target for tests)
from hloforge.frontend.lax._linalg_calls import SUPPORTED, _lapack_target  # noqa: F401
from hloforge.frontend.lax._linalg_solve import (det, lu, lu_pivots_to_permutation, lu_solve,  # noqa: F401
                                                 permute_rows, slogdet, solve, triangular_solve)


# ---------------------------------------------------------------- the factorizations

def cholesky(x, *, symmetrize_input: bool = True, platform=None):
    """jax.lax.linalg.cholesky: the lower Cholesky factor L (a = L L^H) of each matrix; NaN for
    matrices that are not positive definite. Emits lapack_?potrf_ffi (CPU) or cusolver_potrf_ffi.

    Args:
      x: Tensor (..., n, n) of float32, float64, complex64 or complex128.
      symmetrize_input: factor (x + x^H) / 2 (jax's default); else only the lower triangle is read.
      platform: "cpu" or "gpu" (default: hloforge.config.device).
    Returns:
      L, lower triangular, x's shape and dtype.
    Example:
      >>> l = hf.lax.linalg.cholesky(a)
    """
    x = _check("cholesky", x)
    platform = _platform(platform)
    if x.shape[-1] == 0:
        return x

    def impl(x):
        if symmetrize_input:
            x = _symmetrize(x)
        batch = x.shape[:-2]
        call = CHOLESKY[platform]
        l, info = custom_call(call.target(x.dtype), [x], [(x.shape, x.dtype), (batch, np.int32)],
                              backend_config=call.config(), operand_output_aliases={0: 0}, batch_dims=len(batch))
        return _triangle(_nan_where_not(_info_ok(info), l), True)

    return _composite("cholesky", [x], impl, symmetrize_input=bool(symmetrize_input), platform=platform)[0]

def _geqrf(x, platform):
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    return custom_call(GEQRF[platform].target(x.dtype), [x], [(x.shape, x.dtype), (batch + (min(m, n),), x.dtype)],
                       operand_output_aliases={0: 0}, batch_dims=len(batch))


def _householder_product(a, taus, platform):
    (q,) = custom_call(HOUSEHOLDER_PRODUCT[platform].target(a.dtype), [a, taus], [(a.shape, a.dtype)],
                       operand_output_aliases={0: 0}, batch_dims=a.ndim - 2)
    return q


def qr(x, *, pivoting: bool = False, full_matrices: bool = True, use_magma=None, platform=None):
    """jax.lax.linalg.qr: (q, r) with x = q r. Emits ?geqrf_ffi then ?orgqr_ffi/?ungqr_ffi
    (cusolver_geqrf_ffi/cusolver_orgqr_ffi on GPU).

    Args:
      x: Tensor (..., m, n).
      full_matrices: q is (..., m, m) and r (..., m, n); else q (..., m, k), r (..., k, n),
        k = min(m, n).
    Returns:
      (q, r).
    Example:
      >>> q, r = hf.lax.linalg.qr(a, full_matrices=False)
    """
    if pivoting:
        raise NotImplementedError("qr: pivoting (geqp3) is not supported yet")
    x = _check("qr", x, square=False)
    platform = _platform(platform)
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    if m == 0 or n == 0:
        k = m if full_matrices else min(m, n)
        return _eye(x.dtype, batch, m, k), _c(0, x.dtype, batch + (k, n))

    def impl(x):
        r, taus = _geqrf(x, platform)
        if m < n:
            q = _householder_product(_slice_last2(r, m, m), taus, platform)
        elif full_matrices:
            nd = r.ndim
            padded = ops.pad(r, ops.constant(np.zeros((), x.dtype)), [0] * nd, [0] * (nd - 1) + [m - n], [0] * nd)
            q = _householder_product(padded, taus, platform)
        else:
            q = _householder_product(r, taus, platform)
            r = _slice_last2(r, n, n)
        return q, _triangle(r, False)

    q, r = _composite("qr", [x], impl, full_matrices=bool(full_matrices), platform=platform)
    return q, r


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True, sort_eigenvalues: bool = True,
         subset_by_index=None, platform=None):
    """jax.lax.linalg.eigh: (v, w), eigenvectors (columns) and ascending real eigenvalues of
    Hermitian matrices. Emits lapack_?syevd_ffi/?heevd_ffi (cusolver_syevd_ffi on GPU).

    Args:
      x: Tensor (..., n, n).
      lower: read the lower (or upper) triangle when ``symmetrize_input`` is False.
    Returns:
      (v, w): v of x's shape and dtype, w (..., n) real.
    Example:
      >>> v, w = hf.lax.linalg.eigh(a)
    """
    x = _check("eigh", x)
    platform = _platform(platform)
    n = x.shape[-1]
    if subset_by_index is not None and tuple(subset_by_index) != (0, n):
        raise NotImplementedError("eigh: subset_by_index is not supported on CPU and GPU")
    batch = x.shape[:-2]
    real = dtypes.real_dtype(x.dtype)
    if n == 0:
        return x, _c(0, real, batch + (0,))

    def impl(x):
        if symmetrize_input:
            x = _symmetrize(x)
        call = EIGH[platform]
        v, w, info = custom_call(call.target(x.dtype), [x],
                                 [(x.shape, x.dtype), (batch + (n,), real), (batch, np.int32)],
                                 backend_config=call.config(lower=lower), operand_output_aliases={0: 0},
                                 batch_dims=len(batch))
        ok = _info_ok(info)
        return _nan_where_not(ok, v), _nan_where_not(ok, w)

    v, w = _composite("eigh", [x], impl, lower=bool(lower), symmetrize_input=bool(symmetrize_input),
                      sort_eigenvalues=bool(sort_eigenvalues), platform=platform)
    return v, w


def _lapack_svd(x, full_matrices, compute_uv):
    """(s, u, vt, info) from LAPACK's gesdd."""
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    k = min(m, n)
    u_shape = batch + (m, m if full_matrices else k)
    vt_shape = batch + (n if full_matrices else k, n)
    _, s, u, vt, info = custom_call(
        GESDD.target(x.dtype), [x],
        [(x.shape, x.dtype), (batch + (k,), dtypes.real_dtype(x.dtype)), (u_shape, x.dtype), (vt_shape, x.dtype),
         (batch, np.int32)],
        backend_config=GESDD.config(full_matrices=full_matrices, compute_uv=compute_uv), operand_output_aliases={0: 0},
        batch_dims=len(batch))
    return s, u, vt, info


def _cusolver_svd(x, full_matrices, compute_uv):
    """(s, u, vt, info) from cuSOLVER's Jacobi SVD (m, n <= 1024) or gesvd, as jax's default algorithm."""
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    k = min(m, n)
    real = dtypes.real_dtype(x.dtype)
    nb = len(batch)
    if m <= 1024 and n <= 1024:
        econ = not full_matrices and m > 32 and n > 32
        u_shape, v_shape = batch + (m, k if econ else m), batch + (n, k if econ else n)
        _, s, u, v, info = custom_call(
            GESVDJ.target(x.dtype), [x],
            [(x.shape, x.dtype), (batch + (k,), real), (u_shape, x.dtype), (v_shape, x.dtype), (batch, np.int32)],
            backend_config=GESVDJ.config(full_matrices=not econ, compute_uv=compute_uv),
            operand_output_aliases={0: 0}, batch_dims=nb)
        vt = None
        if compute_uv:
            vt = _adjoint(v)
            if not full_matrices and not econ:
                u, vt = _slice_last2(u, m, k), _slice_last2(vt, k, n)
        return s, u, vt, info
    transposed = m < n
    u_shape = batch + (m, m if full_matrices else k)
    vt_shape = batch + (n if full_matrices else k, n)
    if not compute_uv:
        u_shape = vt_shape = ()
    outs = [(x.shape, x.dtype), (batch + (k,), real)] + (
        [(vt_shape, x.dtype), (u_shape, x.dtype)] if transposed else [(u_shape, x.dtype), (vt_shape, x.dtype)])
    _, s, u, vt, info = custom_call(
        GESVD.target(x.dtype), [x], outs + [(batch, np.int32)],
        backend_config=GESVD.config(full_matrices=full_matrices, compute_uv=compute_uv, transposed=transposed),
        operand_output_aliases={0: 0}, batch_dims=nb, column_major=not transposed)
    return s, u, vt, info


# platform -> its SVD lowering (the platforms' calls differ in their results, not only in names)
SVD_LOWERINGS = {"cpu": _lapack_svd, "gpu": _cusolver_svd}


def _svd_impl(x, full_matrices, compute_uv, platform):
    s, u, vt, info = SVD_LOWERINGS[platform](x, full_matrices, compute_uv)
    ok = _info_ok(info)
    s = _nan_where_not(ok, s)
    if not compute_uv:
        return s
    return _nan_where_not(ok, u), s, _nan_where_not(ok, vt)


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None, algorithm=None,
        platform=None):
    """jax.lax.linalg.svd: (u, s, vh) with x = u diag(s) vh (or s alone), s descending.
    Emits lapack_?gesdd_ffi on CPU; on GPU cusolver_gesvdj_ffi (m, n <= 1024) or
    cusolver_gesvd_ffi, as jax's default algorithm does.

    Args:
      x: Tensor (..., m, n).
      full_matrices: u (..., m, m), vh (..., n, n); else (..., m, k), (..., k, n).
      compute_uv: return (u, s, vh); else only s.
    Returns:
      (u, s, vh) or s (real, (..., k)).
    Example:
      >>> u, s, vh = hf.lax.linalg.svd(a, full_matrices=False)
    """
    if algorithm is not None:
        raise NotImplementedError("svd: only the default algorithm is supported")
    x = _check("svd", x, square=False)
    platform = _platform(platform)
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    k = min(m, n)
    if subset_by_index is not None and tuple(subset_by_index) != (0, k):
        raise NotImplementedError("svd: subset_by_index is not supported on CPU and GPU")
    real = dtypes.real_dtype(x.dtype)
    if m == 0 or n == 0:
        s = _c(0, real, batch + (0,))
        if not compute_uv:
            return s
        return (_eye(x.dtype, batch, m, m if full_matrices else k), s,
                _eye(x.dtype, batch, n if full_matrices else k, n))
    out = _composite("svd", [x], lambda x: _svd_impl(x, full_matrices, compute_uv, platform),
                     full_matrices=bool(full_matrices), compute_uv=bool(compute_uv), platform=platform)
    return tuple(out) if compute_uv else out[0]


def eig(x, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True, platform=None):
    """jax.lax.linalg.eig: [w, vl, vr] (the eigenvector entries as requested) of general square
    matrices, complex results. Emits lapack_?geev_ffi (CPU only, as jax's default).

    Example:
      >>> w, vl, vr = hf.lax.linalg.eig(a)
    """
    x = _check("eig", x)
    platform = _platform(platform)
    if platform not in EIG:
        raise NotImplementedError("eig: only the CPU (LAPACK geev) lowering is supported")
    batch, n = x.shape[:-2], x.shape[-1]
    cdt = dtypes.complex_dtype(x.dtype) if not dtypes.is_complex(x.dtype) else x.dtype
    if n == 0:
        out = [_c(0, cdt, batch + (0,))]
        return out + [_c(0, cdt, x.shape)] * (int(compute_left_eigenvectors) + int(compute_right_eigenvectors))
    real = not dtypes.is_complex(x.dtype)
    w_specs = [(batch + (n,), x.dtype)] * (2 if real else 1)
    call = EIG[platform]
    outs = custom_call(call.target(x.dtype), [x], w_specs + [(x.shape, cdt), (x.shape, cdt), (batch, np.int32)],
                       backend_config=call.config(compute_left_eigenvectors, compute_right_eigenvectors),
                       batch_dims=len(batch))
    *w, vl, vr, info = outs
    w = ops.complex(w[0], w[1]) if real else w[0]
    ok = _info_ok(info)
    out = [_nan_where_not(ok, w)]
    if compute_left_eigenvectors:
        out.append(_nan_where_not(ok, vl))
    if compute_right_eigenvectors:
        out.append(_nan_where_not(ok, vr))
    return out


__all__ = ["eig", "cholesky", "triangular_solve", "qr", "eigh", "svd", "lu", "lu_pivots_to_permutation", "lu_solve",
           "permute_rows", "solve", "det", "slogdet", "custom_call"]

from hloforge.frontend import eager as _eager  # noqa: E402
_eager.wrap_namespace(globals(), [n for n in __all__ if n != "custom_call"])  # (callable eagerly: frontend/eager.py)
from hloforge.frontend.naming import name_missing_attributes as _public_errors  # noqa: E402
_public_errors(globals())  # (AttributeErrors name hloforge.<module>)
