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
"""
from __future__ import annotations

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.context import ir, stablehlo
from hloforge.frontend.ops.factorization import triangular_solve as _hlo_triangular_solve
from hloforge.frontend.tracing import Tensor, as_tensor, current_builder

_LAPACK_PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d", np.dtype(np.complex64): "c",
                  np.dtype(np.complex128): "z"}
SUPPORTED = tuple(_LAPACK_PREFIX)


# ---------------------------------------------------------------- the custom call

def _platform(platform):
    if platform is None:
        from hloforge.runtime.settings import config
        platform = config.device
    platform = {"cuda": "gpu"}.get(platform, platform)
    if platform not in ("cpu", "gpu"):
        raise ValueError(f"platform must be 'cpu' or 'gpu', got {platform!r}")
    return platform


def _lapack_target(fn: str, dtype) -> str:
    """jaxlib's LAPACK target name for ``fn`` (e.g. "potrf_ffi") and ``dtype``; loads LAPACK
    into jaxlib's kernels (jaxlib-version specific)."""
    from jaxlib import lapack
    lapack._lapack.initialize()
    return f"lapack_{_LAPACK_PREFIX[np.dtype(dtype)]}{fn}"


def _layout(rank: int, column_major: bool) -> tuple:
    if column_major and rank >= 2:
        return (rank - 2, rank - 1) + tuple(range(rank - 3, -1, -1))
    return tuple(range(rank - 1, -1, -1))


def _config_attr(value) -> ir.Attribute:
    if isinstance(value, (bool, np.bool_)):
        return ir.BoolAttr.get(bool(value))
    if isinstance(value, np.uint8):
        return ir.IntegerAttr.get(ir.IntegerType.get_unsigned(8), int(value))
    if isinstance(value, str):  # a LAPACK flag character ('L', 'N', ...)
        return ir.IntegerAttr.get(ir.IntegerType.get_unsigned(8), ord(value))
    raise TypeError(f"custom_call: unsupported backend_config value {value!r}")


def custom_call(target: str, operands, results, *, backend_config=None, operand_output_aliases=None,
                batch_dims: int = 0, column_major: bool = True, loc=None):
    """Emit ``stablehlo.custom_call @target`` the way jax's ``_linalg_ffi_lowering`` does:
    api_version 1 with an ``mhlo.backend_config`` dictionary, column-major layouts for the
    highest-rank arrays (row-major for the others), ``mhlo.frontend_attributes.num_batch_dims``
    and the operand/output aliases. Returns one Tensor per result.

    (The sdy.sharding_rule jax adds for Shardy is not emitted.)
    """
    b = current_builder("custom_call")
    operands = [as_tensor(o, what=f"custom_call {target}") for o in operands]
    results = [(tuple(s), np.dtype(d)) for s, d in results]
    top = max(o.ndim for o in operands)
    with b.ctx:
        index = ir.IndexType.get()

        def layouts(shapes):
            return ir.ArrayAttr.get([
                ir.DenseIntElementsAttr.get(np.asarray(_layout(len(s), column_major and len(s) == top), np.int64)
                                            .reshape(-1) if len(s) else np.zeros((0,), np.int64), type=index)
                for s in shapes])

        attrs = {
            "call_target_name": ir.StringAttr.get(target),
            "has_side_effect": ir.BoolAttr.get(False),
            "backend_config": ir.StringAttr.get(""),
            "api_version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1),
            "called_computations": ir.ArrayAttr.get([]),
            "operand_layouts": layouts([o.shape for o in operands]),
            "result_layouts": layouts([s for s, _ in results]),
            "mhlo.backend_config": ir.DictAttr.get({k: _config_attr(v) for k, v in (backend_config or {}).items()}),
            "mhlo.frontend_attributes": ir.DictAttr.get({"num_batch_dims": ir.StringAttr.get(str(batch_dims))}),
        }
        if operand_output_aliases:
            attrs["output_operand_aliases"] = ir.ArrayAttr.get([
                stablehlo.OutputOperandAlias.get(output_tuple_indices=[out] if len(results) > 1 else [],
                                                 operand_index=inp, operand_tuple_indices=[])
                for inp, out in operand_output_aliases.items()])
    op = b.emit("stablehlo.custom_call", operands, results, attrs, loc=loc)
    return [Tensor(r, s, d, b) for r, (s, d) in zip(op.results, results)]


# ---------------------------------------------------------------- helpers (hloforge.ops only)

def _c(value, dtype, shape=()):
    return ops.broadcast_in_dim(ops.constant(np.asarray(value).astype(dtype)), tuple(shape), ())


def _check(name, x, square=True):
    x = as_tensor(x, what=f"linalg.{name}")
    if x.ndim < 2:
        raise ValueError(f"{name}: operand must have rank >= 2 (a batch of matrices), got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{name}: operand must be a batch of square matrices, got shape {x.shape}")
    if x.dtype not in SUPPORTED:
        raise TypeError(f"{name}: dtype {x.dtype} is not supported (LAPACK/cuSOLVER take float32, float64, "
                        "complex64 or complex128)")
    return x


def _adjoint(x):
    nd = x.ndim
    t = ops.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))
    return ops.complex(ops.real(t), ops.neg(ops.imag(t))) if dtypes.is_complex(x.dtype) else t


def _symmetrize(x):
    return ops.divide(ops.add(x, _adjoint(x)), _c(2, x.dtype, x.shape))


def _nan_where_not(ok, x):
    """x, with every matrix of a batch whose ``ok`` flag is false set to NaN (jax's
    _replace_not_ok_with_nan)."""
    nb = ok.ndim
    mask = ops.broadcast_in_dim(ok, x.shape, tuple(range(nb)))
    return ops.select(mask, x, _c(np.nan, x.dtype, x.shape))


def _info_ok(info, direction="EQ"):
    return ops.compare(info, _c(0, np.int32, info.shape), direction)


def _triangle(x, lower, k=0):
    shape = x.shape
    r = len(shape)
    d = ops.subtract(ops.iota(shape, np.int32, r - 2), ops.iota(shape, np.int32, r - 1))  # i - j
    keep = ops.compare(d, _c(-k, np.int32, shape), "GE" if lower else "LE")
    return ops.select(keep, x, _c(0, x.dtype, shape))


def _eye(dtype, batch, m, n):
    shape = tuple(batch) + (m, n)
    r = len(shape)
    eq = ops.compare(ops.iota(shape, np.int32, r - 2), ops.iota(shape, np.int32, r - 1), "EQ")
    return ops.select(eq, _c(1, dtype, shape), _c(0, dtype, shape))


def _composite(name, operands, impl, **attributes):
    """``impl(*operands)`` as ``stablehlo.composite "hloforge.linalg.<name>"`` with ``attributes``
    (the static options the derivative rules read); a list of Tensors."""
    return ops.composite(list(operands), f"hloforge.linalg.{name}", impl, attributes=attributes)


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
        if platform == "cpu":
            target, config = _lapack_target("potrf_ffi", x.dtype), {"uplo": "L"}
        else:
            target, config = "cusolver_potrf_ffi", {"lower": True}
        l, info = custom_call(target, [x], [(x.shape, x.dtype), (batch, np.int32)], backend_config=config,
                              operand_output_aliases={0: 0}, batch_dims=len(batch))
        return _triangle(_nan_where_not(_info_ok(info), l), True)

    return _composite("cholesky", [x], impl, symmetrize_input=bool(symmetrize_input), platform=platform)[0]


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False, transpose_a: bool = False,
                     conjugate_a: bool = False, unit_diagonal: bool = False, platform=None):
    """jax.lax.linalg.triangular_solve: x with op(a) x = b (``left_side``) or x op(a) = b.
    Emits lapack_?trsm_ffi on CPU, stablehlo.triangular_solve on GPU (as jax does).

    Args:
      a: Tensor (..., m, m), triangular (only the ``lower`` or upper triangle is read).
      b: Tensor (..., m, n) (left side) or (..., n, m), a's dtype and batch dims.
      transpose_a, conjugate_a: op(a) = a, a^T, conj(a) or a^H.
      unit_diagonal: take a's diagonal as ones.
    Returns:
      x, b's shape and dtype.
    Example:
      >>> x = hf.lax.linalg.triangular_solve(l, b, left_side=True, lower=True)
    """
    a, b = _check("triangular_solve", a), as_tensor(b, what="linalg.triangular_solve")
    platform = _platform(platform)
    if a.dtype != b.dtype:
        raise TypeError(f"triangular_solve: a and b dtypes {a.dtype} and {b.dtype} differ")
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2]:
        raise ValueError(f"triangular_solve requires both arguments to have the same number of dimensions "
                         f"and equal batch dimensions, got {a.shape} and {b.shape}")
    m = a.shape[-1]
    if (b.shape[-2] if left_side else b.shape[-1]) != m:
        raise ValueError(f"triangular_solve: a {a.shape} does not match b {b.shape} on the "
                         f"{'left' if left_side else 'right'} side")
    if conjugate_a and not transpose_a and dtypes.is_complex(a.dtype):
        a = ops.complex(ops.real(a), ops.neg(ops.imag(a)))
        conjugate_a = False
    if platform == "gpu":
        mode = ("ADJOINT" if conjugate_a and dtypes.is_complex(a.dtype) else "TRANSPOSE") if transpose_a \
            else "NO_TRANSPOSE"
        return _hlo_triangular_solve(a, b, left_side=left_side, lower=lower, unit_diagonal=unit_diagonal,
                                     transpose_a=mode)
    if b.size == 0 or m == 0:
        return b
    config = {"side": "L" if left_side else "R", "uplo": "L" if lower else "U",
              "trans_x": ("C" if conjugate_a else "T") if transpose_a else "N",
              "diag": "U" if unit_diagonal else "N"}

    def impl(a, b):
        return custom_call(_lapack_target("trsm_ffi", a.dtype), [a, b], [(b.shape, b.dtype)], backend_config=config,
                           operand_output_aliases={1: 0}, batch_dims=a.ndim - 2)

    return _composite("triangular_solve", [a, b], impl, left_side=bool(left_side), lower=bool(lower),
                      transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a and transpose_a),
                      unit_diagonal=bool(unit_diagonal), platform=platform)[0]


def _geqrf(x, platform):
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    target = _lapack_target("geqrf_ffi", x.dtype) if platform == "cpu" else "cusolver_geqrf_ffi"
    return custom_call(target, [x], [(x.shape, x.dtype), (batch + (min(m, n),), x.dtype)],
                       operand_output_aliases={0: 0}, batch_dims=len(batch))


def _householder_product(a, taus, platform):
    if platform == "cpu":
        target = _lapack_target(("un" if dtypes.is_complex(a.dtype) else "or") + "gqr_ffi", a.dtype)
    else:
        target = "cusolver_orgqr_ffi"
    (q,) = custom_call(target, [a, taus], [(a.shape, a.dtype)], operand_output_aliases={0: 0},
                       batch_dims=a.ndim - 2)
    return q


def _slice_last2(x, rows, cols):
    nd = x.ndim
    return ops.slice(x, [0] * nd, list(x.shape[:-2]) + [rows, cols])


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
        if platform == "cpu":
            prefix = "he" if dtypes.is_complex(x.dtype) else "sy"
            target = _lapack_target(f"{prefix}evd_ffi", x.dtype)
            config = {"mode": "V", "uplo": "L" if lower else "U"}
        else:
            target, config = "cusolver_syevd_ffi", {"algorithm": np.uint8(0), "lower": bool(lower)}
        v, w, info = custom_call(target, [x], [(x.shape, x.dtype), (batch + (n,), real), (batch, np.int32)],
                                 backend_config=config, operand_output_aliases={0: 0}, batch_dims=len(batch))
        ok = _info_ok(info)
        return _nan_where_not(ok, v), _nan_where_not(ok, w)

    v, w = _composite("eigh", [x], impl, lower=bool(lower), symmetrize_input=bool(symmetrize_input),
                      sort_eigenvalues=bool(sort_eigenvalues), platform=platform)
    return v, w


def _svd_impl(x, full_matrices, compute_uv, platform):
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    k = min(m, n)
    real = dtypes.real_dtype(x.dtype)
    nb = len(batch)
    if platform == "cpu":
        mode = "N" if not compute_uv else ("A" if full_matrices else "S")
        u_shape = batch + (m, m if full_matrices else k)
        vt_shape = batch + (n if full_matrices else k, n)
        _, s, u, vt, info = custom_call(
            _lapack_target("gesdd_ffi", x.dtype), [x],
            [(x.shape, x.dtype), (batch + (k,), real), (u_shape, x.dtype), (vt_shape, x.dtype), (batch, np.int32)],
            backend_config={"mode": mode}, operand_output_aliases={0: 0}, batch_dims=nb)
    elif m <= 1024 and n <= 1024:
        econ = not full_matrices and m > 32 and n > 32
        u_shape, v_shape = batch + (m, k if econ else m), batch + (n, k if econ else n)
        _, s, u, v, info = custom_call(
            "cusolver_gesvdj_ffi", [x],
            [(x.shape, x.dtype), (batch + (k,), real), (u_shape, x.dtype), (v_shape, x.dtype), (batch, np.int32)],
            backend_config={"full_matrices": not econ, "compute_uv": bool(compute_uv)},
            operand_output_aliases={0: 0}, batch_dims=nb)
        if compute_uv:
            vt = _adjoint(v)
            if not full_matrices and not econ:
                u, vt = _slice_last2(u, m, k), _slice_last2(vt, k, n)
    else:
        transposed = m < n
        u_shape = batch + (m, m if full_matrices else k)
        vt_shape = batch + (n if full_matrices else k, n)
        if not compute_uv:
            u_shape = vt_shape = ()
        outs = [(x.shape, x.dtype), (batch + (k,), real)] + (
            [(vt_shape, x.dtype), (u_shape, x.dtype)] if transposed else [(u_shape, x.dtype), (vt_shape, x.dtype)])
        _, s, u, vt, info = custom_call(
            "cusolver_gesvd_ffi", [x], outs + [(batch, np.int32)],
            backend_config={"full_matrices": bool(full_matrices), "compute_uv": bool(compute_uv),
                            "transposed": transposed},
            operand_output_aliases={0: 0}, batch_dims=nb, column_major=not transposed)
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


def lu_pivots_to_permutation(pivots, permutation_size: int):
    """jax.lax.linalg.lu_pivots_to_permutation: apply the row swaps ``pivots`` (0-based, LAPACK's
    order) to the identity permutation, one swap per iteration of a ``stablehlo.while`` (an
    unrolled loop made XLA's compile grow with the matrix size: 6.6 s at n = 256)."""
    pivots = as_tensor(pivots, what="lu_pivots_to_permutation")
    batch, k = pivots.shape[:-1], pivots.shape[-1]
    shape = batch + (permutation_size,)
    nb = len(batch)
    spread = tuple(range(nb))

    def entry(x, i):
        """x[..., i] of a (..., n) tensor, broadcast back to ``shape``."""
        one = ops.dynamic_slice(x, [ops.constant(np.int32(0))] * nb + [i], batch + (1,))
        return ops.broadcast_in_dim(ops.reshape(one, batch), shape, spread)

    def body(i, perm, pivots):  # (everything it reads is carried: re-emitted loops take no captures)
        pos = ops.iota(shape, np.int32, nb)
        at_i = ops.compare(pos, ops.broadcast_in_dim(i, shape, ()), "EQ")
        at_j = ops.compare(pos, entry(pivots, i), "EQ")
        pj = ops.reduce(ops.select(at_j, perm, _c(0, np.int32, shape)), np.int32(0), (nb,), "add")
        swapped = ops.select(at_i, ops.broadcast_in_dim(pj, shape, spread), ops.select(at_j, entry(perm, i), perm))
        return ops.add(i, ops.constant(np.int32(1))), swapped, pivots

    def cond(i, perm, pivots):
        return ops.compare(i, ops.constant(np.int32(min(k, permutation_size))), "LT")

    _, perm, _ = ops.while_([ops.constant(np.int32(0)), ops.iota(shape, np.int32, nb), pivots], cond, body)
    return perm


def lu(x, *, platform=None):
    """jax.lax.linalg.lu: (lu, pivots, permutation) with the unit-lower L and upper U packed in
    ``lu``, 0-based int32 row-swap ``pivots`` (..., min(m, n)) and the int32 ``permutation``
    (..., m) with x[permutation] = L U. Emits lapack_?getrf_ffi (cusolver_getrf_ffi on GPU).

    Example:
      >>> lu, piv, perm = hf.lax.linalg.lu(a)
    """
    x = _check("lu", x, square=False)
    platform = _platform(platform)
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    k = min(m, n)
    if m == 0 or n == 0:
        return x, _c(0, np.int32, batch + (0,)), ops.iota(batch + (m,), np.int32, len(batch))

    def impl(x):
        target = _lapack_target("getrf_ffi", x.dtype) if platform == "cpu" else "cusolver_getrf_ffi"
        out, pivots, info = custom_call(target, [x], [(x.shape, x.dtype), (batch + (k,), np.int32),
                                                      (batch, np.int32)],
                                        operand_output_aliases={0: 0}, batch_dims=len(batch))
        pivots = ops.subtract(pivots, _c(1, np.int32, pivots.shape))
        out = _nan_where_not(_info_ok(info, "GE"), out)
        if platform == "gpu":
            (perm,) = custom_call("cu_lu_pivots_to_permutation", [pivots], [(batch + (m,), np.int32)],
                                  batch_dims=len(batch), column_major=False)
        else:
            perm = lu_pivots_to_permutation(pivots, m)
        return out, pivots, perm

    out, pivots, perm = _composite("lu", [x], impl, platform=platform)
    return out, pivots, perm


def permute_rows(perm, b):
    """b[..., perm, :] for a batch of int32 permutations (..., n): a batched gather (whose transpose
    is a scatter-add)."""
    perm, b = as_tensor(perm, what="linalg.permute_rows"), as_tensor(b, what="linalg.permute_rows")
    if perm.dtype.kind not in "iu" or b.ndim < 2 or perm.shape[:-1] != b.shape[:-2]:
        raise TypeError(f"permute_rows: needs integer permutations (..., m) and matrices (..., n, k) with the "
                        f"same batch dims, got {perm} and {b}")
    nb = perm.ndim - 1
    batch = tuple(range(nb))
    return ops.gather(b, perm, (b.ndim - 1,), (nb,), (nb,), perm.ndim, (1,) * (nb + 1) + (b.shape[-1],),
                      operand_batching_dims=batch, start_indices_batching_dims=batch)


def _inverse_permutation(perm):
    """q with q[perm[i]] = i: q[j] = sum_i i * (perm[i] == j)."""
    n = perm.shape[-1]
    shape = perm.shape + (n,)
    nd = perm.ndim
    hit = ops.compare(ops.broadcast_in_dim(perm, shape, tuple(range(nd))), ops.iota(shape, np.int32, nd), "EQ")
    return ops.reduce(ops.select(hit, ops.iota(shape, np.int32, nd - 1), _c(0, np.int32, shape)), np.int32(0),
                      (nd - 1,), "add")


def lu_solve(lu, permutation, b, *, trans: int = 0, platform=None):
    """x with op(a) x = b from ``lu(a)``'s packed factors and permutation (a[permutation] = L U),
    op(a) = a, a^T or a^H for ``trans`` 0, 1 or 2 (jax.scipy.linalg.lu_solve's convention, with
    the permutation instead of the pivots). Two triangular solves and a permutation.

    Args:
      lu: (..., n, n) packed L (unit lower) and U; permutation: int32 (..., n).
      b: (..., n, k) with lu's batch dims and dtype.
    Example:
      >>> lu, _, perm = hf.lax.linalg.lu(a); x = hf.lax.linalg.lu_solve(lu, perm, b)
    """
    if trans not in (0, 1, 2):
        raise ValueError(f"lu_solve: trans must be 0, 1 or 2, got {trans!r}")
    lu, b = _check("lu_solve", lu), as_tensor(b, what="linalg.lu_solve")
    permutation = as_tensor(permutation, what="linalg.lu_solve")
    if b.dtype != lu.dtype:
        raise TypeError(f"lu_solve: lu and b dtypes {lu.dtype} and {b.dtype} differ")
    if b.ndim != lu.ndim or b.shape[:-1] != lu.shape[:-1] or permutation.shape != lu.shape[:-1]:
        raise ValueError(f"lu_solve: needs lu (..., n, n), permutation (..., n) and b (..., n, k) with one batch "
                         f"shape, got lu {lu.shape}, permutation {permutation.shape} and b {b.shape}")
    kw = dict(left_side=True, platform=platform)
    if trans == 0:
        y = triangular_solve(lu, permute_rows(permutation, b), lower=True, unit_diagonal=True, **kw)
        return triangular_solve(lu, y, lower=False, **kw)
    # op(a) = op(U) op(L) P
    kw.update(transpose_a=True, conjugate_a=trans == 2)
    y = triangular_solve(lu, b, lower=False, **kw)
    y = triangular_solve(lu, y, lower=True, unit_diagonal=True, **kw)
    return permute_rows(_inverse_permutation(permutation), y)


def solve(a, b, *, transpose: bool = False, platform=None):
    """x with a x = b (``transpose``: a^T x = b, no conjugation) for square matrices a (..., n, n)
    and b (..., n, k) with a's batch dims and dtype: LU with partial pivoting and ``lu_solve``
    (inf or NaN for a singular a). A ``stablehlo.composite "hloforge.linalg.solve"``: its derivatives
    solve with the same factorization instead of differentiating it (what jax.numpy.linalg.solve's
    custom_linear_solve does). hloforge's, not jax.lax.linalg's.

    Example:
      >>> x = hf.lax.linalg.solve(a, b)
    """
    a, b = _check("solve", a), as_tensor(b, what="linalg.solve")
    platform = _platform(platform)
    if a.dtype != b.dtype:
        raise TypeError(f"solve: a and b dtypes {a.dtype} and {b.dtype} differ")
    if b.ndim != a.ndim or b.shape[:-1] != a.shape[:-1]:
        raise ValueError(f"solve: b must be (..., n, k) with a's batch dims and n, got a {a.shape} and b {b.shape}")
    if a.shape[-1] == 0 or b.shape[-1] == 0:
        return b

    def impl(a, b):
        factors, _, perm = lu(a, platform=platform)
        return [lu_solve(factors, perm, b, trans=1 if transpose else 0, platform=platform)]

    return _composite("solve", [a, b], impl, transpose=bool(transpose), platform=platform)[0]


def _lu_diagonal_and_parity(x, platform):
    """U's diagonal (..., n) of the LU factorization of square x, and the permutation's sign (-1 or
    1, x's dtype, (...,))."""
    factors, pivots, _ = lu(x, platform=platform)
    nd = x.ndim
    on_diagonal = ops.compare(ops.iota(x.shape, np.int32, nd - 2), ops.iota(x.shape, np.int32, nd - 1), "EQ")
    diagonal = ops.reduce(ops.select(on_diagonal, factors, _c(0, x.dtype, x.shape)), np.zeros((), x.dtype), (nd - 1,),
                          "add")
    moved = ops.compare(pivots, ops.iota(pivots.shape, np.int32, nd - 2), "NE")
    swaps = ops.reduce(ops.select(moved, _c(1, np.int32, pivots.shape), _c(0, np.int32, pivots.shape)), np.int32(0),
                       (nd - 2,), "add")
    odd = ops.compare(ops.remainder(swaps, _c(2, np.int32, swaps.shape)), _c(1, np.int32, swaps.shape), "EQ")
    return diagonal, ops.select(odd, _c(-1, x.dtype, swaps.shape), _c(1, x.dtype, swaps.shape))


def det(x, *, platform=None):
    """The determinants (...,) of square matrices: U's diagonal product times the permutation's
    sign. A ``stablehlo.composite "hloforge.linalg.det"`` differentiated with jax's rule
    (d det = det tr(x^-1 dx)); hloforge's, not jax.lax.linalg's.

    Example:
      >>> d = hf.lax.linalg.det(a)
    """
    x = _check("det", x)
    platform = _platform(platform)

    def impl(x):
        diagonal, parity = _lu_diagonal_and_parity(x, platform)
        return [ops.multiply(ops.reduce(diagonal, np.ones((), x.dtype), (x.ndim - 2,), "mul"), parity)]

    return _composite("det", [x], impl, platform=platform)[0]


def slogdet(x, *, platform=None):
    """(sign, log|det|) of square matrices (sign 0 and log|det| -inf for a singular one), from
    the LU factorization. A ``stablehlo.composite "hloforge.linalg.slogdet"`` differentiated with
    jax's rule (d log|det| = re tr(x^-1 dx)); hloforge's, not jax.lax.linalg's.

    Example:
      >>> sign, logabsdet = hf.lax.linalg.slogdet(a)
    """
    x = _check("slogdet", x)
    platform = _platform(platform)

    def impl(x):
        diagonal, parity = _lu_diagonal_and_parity(x, platform)
        last = (x.ndim - 2,)
        magnitude = ops.abs(diagonal)
        logabs = ops.reduce(ops.log(magnitude), np.zeros((), magnitude.dtype), last, "add")
        if dtypes.is_complex(x.dtype):
            zero = ops.compare(magnitude, _c(0, magnitude.dtype, magnitude.shape), "EQ")
            safe = ops.select(zero, _c(1, magnitude.dtype, magnitude.shape), magnitude)
            unit = ops.divide(diagonal, ops.complex(safe, _c(0, safe.dtype, safe.shape)))
            unit = ops.select(zero, _c(0, x.dtype, unit.shape), unit)
        else:
            unit = ops.sign(diagonal)
        return [ops.multiply(ops.reduce(unit, np.ones((), x.dtype), last, "mul"), parity), logabs]

    sign, logabs = _composite("slogdet", [x], impl, platform=platform)
    return sign, logabs


def eig(x, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True, platform=None):
    """jax.lax.linalg.eig: [w, vl, vr] (the eigenvector entries as requested) of general square
    matrices, complex results. Emits lapack_?geev_ffi (CPU only, as jax's default).

    Example:
      >>> w, vl, vr = hf.lax.linalg.eig(a)
    """
    x = _check("eig", x)
    platform = _platform(platform)
    if platform != "cpu":
        raise NotImplementedError("eig: only the CPU (LAPACK geev) lowering is supported")
    batch, n = x.shape[:-2], x.shape[-1]
    cdt = dtypes.complex_dtype(x.dtype) if not dtypes.is_complex(x.dtype) else x.dtype
    if n == 0:
        out = [_c(0, cdt, batch + (0,))]
        return out + [_c(0, cdt, x.shape)] * (int(compute_left_eigenvectors) + int(compute_right_eigenvectors))
    real = not dtypes.is_complex(x.dtype)
    w_specs = [(batch + (n,), x.dtype)] * (2 if real else 1)
    outs = custom_call(_lapack_target("geev_ffi", x.dtype), [x],
                       w_specs + [(x.shape, cdt), (x.shape, cdt), (batch, np.int32)],
                       backend_config={"compute_left": "V" if compute_left_eigenvectors else "N",
                                       "compute_right": "V" if compute_right_eigenvectors else "N"},
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

from hloforge.frontend.naming import name_missing_attributes as _public_errors  # noqa: E402
_public_errors(globals())  # (AttributeErrors name hloforge.<module>)
