"""hloforge.lax.linalg's solves: triangular_solve, the LU factorization and what is built on it
(lu_solve, and hloforge's solve, det and slogdet composites); ``linalg.py`` exports them."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax._linalg_calls import (LU, LU_PIVOTS_TO_PERMUTATION, TRIANGULAR_SOLVE, _c, _check,
                                                 _composite, _info_ok, _nan_where_not, _platform, custom_call)
from hloforge.frontend.ops.factorization import triangular_solve as _hlo_triangular_solve
from hloforge.frontend.tracing import as_tensor


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
    lowering = TRIANGULAR_SOLVE[platform]
    if lowering is None:
        mode = ("ADJOINT" if conjugate_a and dtypes.is_complex(a.dtype) else "TRANSPOSE") if transpose_a \
            else "NO_TRANSPOSE"
        return _hlo_triangular_solve(a, b, left_side=left_side, lower=lower, unit_diagonal=unit_diagonal,
                                     transpose_a=mode)
    if b.size == 0 or m == 0:
        return b
    config = lowering.config(left_side=left_side, lower=lower, transpose_a=transpose_a, conjugate_a=conjugate_a,
                             unit_diagonal=unit_diagonal)

    def impl(a, b):
        return custom_call(lowering.target(a.dtype), [a, b], [(b.shape, b.dtype)], backend_config=config,
                           operand_output_aliases={1: 0}, batch_dims=a.ndim - 2)

    return _composite("triangular_solve", [a, b], impl, left_side=bool(left_side), lower=bool(lower),
                      transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a and transpose_a),
                      unit_diagonal=bool(unit_diagonal), platform=platform)[0]


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
        out, pivots, info = custom_call(LU[platform].target(x.dtype), [x],
                                        [(x.shape, x.dtype), (batch + (k,), np.int32), (batch, np.int32)],
                                        operand_output_aliases={0: 0}, batch_dims=len(batch))
        pivots = ops.subtract(pivots, _c(1, np.int32, pivots.shape))
        out = _nan_where_not(_info_ok(info, "GE"), out)
        to_permutation = LU_PIVOTS_TO_PERMUTATION[platform]
        if to_permutation is not None:
            (perm,) = custom_call(to_permutation.target(np.int32), [pivots], [(batch + (m,), np.int32)],
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
    if perm.shape[-1] == 0 or b.shape[-2] == 0:  # (a gather of size-1 row slices needs a row to slice)
        if perm.shape[-1]:
            raise ValueError(f"permute_rows: a permutation of {perm.shape[-1]} rows for matrices with none: {perm} "
                             f"and {b}")
        return _c(0, b.dtype, perm.shape + b.shape[-1:])
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
