"""Derivative rules of hloforge.lax.linalg's factorizations: the ``stablehlo.composite`` ops named
``hloforge.linalg.<function>`` (frontend/lax/linalg.py) around the opaque LAPACK/cuSOLVER custom
calls. ``RULES`` maps a composite name to (jvp, vjp), entered in structure.COMPOSITE_RULES, which
the composite rule looks up before inlining a decomposition. Rules take (ins, outs, tangents or cotangents) and the
composite's attributes (the function's static options) as keywords.

The jvps are jax's (jax/_src/lax/linalg.py), built with hloforge ops on the composite's outputs:
cholesky (arXiv:1602.07527), triangular_solve, qr (with jax's wide and full_matrices cases), eigh
and svd (distinct eigen/singular values; jax's guards against dividing by zero), lu (De Hoog,
Anderssen and Lukas). The solves they need are hloforge.lax.linalg's, so a rule runs the same
LAPACK kernels as the function. A vjp is the transpose of its jvp, the way jax transposes
linearized jvps: reverse mode through the jvp (linear in the tangents) at zero tangents. Only
triangular_solve, linear in b, has a vjp of its own (jax's transpose rule); the other transposes
run through it. Complex values follow jax's convention (the cotangent of a real loss is
conj(dL/dz)), which the transposes inherit from the rules of the ops they are made of.
"""
from __future__ import annotations

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.ad import api
from hloforge.frontend.ad._util import (
    add_any, conj, differentiable, full, instantiate, matmul, mH, mT, needs, zeros_like)
from hloforge.frontend.ad.structure import COMPOSITE_RULES
from hloforge.frontend.lax import linalg as lax_linalg

# ---------------------------------------------------------------- matrix helpers (last two dims)


def _band(x, direction, k):
    """x where ``(j - i) direction k`` (column minus row, e.g. "LE" 0: the lower triangle), else 0."""
    d = ops.subtract(ops.iota(x.shape, np.int32, x.ndim - 1), ops.iota(x.shape, np.int32, x.ndim - 2))
    return ops.select(ops.compare(d, full(k, x.shape, np.int32), direction), x, zeros_like(x))


def _tril(x, k=0):
    return _band(x, "LE", k)


def _triu(x, k=0):
    return _band(x, "GE", k)


def _on_diagonal(shape):
    r = len(shape)
    return ops.compare(ops.iota(shape, np.int32, r - 2), ops.iota(shape, np.int32, r - 1), "EQ")


def _eye(shape, dtype):
    return ops.select(_on_diagonal(shape), full(1, shape, dtype), full(0, shape, dtype))


def _diag(x):
    """The diagonal (..., n) of square matrices (..., n, n)."""
    return ops.reduce(ops.select(_on_diagonal(x.shape), x, zeros_like(x)), np.zeros((), x.dtype), (x.ndim - 1,), "add")


def _rows(x, shape):
    """x (..., k) as the matrices of ``shape`` whose every row is x (x[..., None, :])."""
    return ops.broadcast_in_dim(x, shape, tuple(range(x.ndim - 1)) + (len(shape) - 1,))


def _cols(x, shape):
    """x (..., k) as the matrices of ``shape`` whose every column is x (x[..., :, None])."""
    return ops.broadcast_in_dim(x, shape, tuple(range(x.ndim - 1)) + (len(shape) - 2,))


def _block(x, rows, cols):
    """x[..., rows[0]:rows[1], cols[0]:cols[1]]."""
    lead = [0] * (x.ndim - 2)
    return ops.slice(x, lead + [rows[0], cols[0]], list(x.shape[:-2]) + [rows[1], cols[1]])


def _as(x, dtype):
    return x if x.dtype == np.dtype(dtype) else ops.convert(x, dtype)


def _real(x):
    return ops.real(x) if dtypes.is_complex(x.dtype) else x


def _sym(x):
    return ops.multiply(ops.add(x, mH(x)), full(0.5, x.shape, x.dtype))


def _solve(a, b, platform, **kw):
    return lax_linalg.triangular_solve(a, b, platform=platform, **kw)


# ---------------------------------------------------------------- vjp = transpose of the jvp

def transposed(jvp):
    """The vjp of a rule whose jvp is ``jvp``: reverse mode through the (linear) jvp map."""
    def vjp(ins, outs, cts, **attributes):
        wanted = [i for i, x in enumerate(ins) if differentiable(x.dtype) and needs(i)]
        seeded = [j for j, (o, c) in enumerate(zip(outs, cts)) if c is not None and differentiable(o.dtype)]
        result = [None] * len(ins)
        if not wanted or not seeded:
            return result

        def linear(*tangents):
            ts = [None] * len(ins)
            for i, t in zip(wanted, tangents):
                ts[i] = t
            got = jvp(ins, outs, ts, **attributes)
            return [instantiate(got[j], outs[j]) for j in seeded]

        _, pullback = api.vjp(linear, *[zeros_like(ins[i]) for i in wanted])
        for i, g in zip(wanted, pullback([cts[j] for j in seeded])):
            result[i] = g
        return result
    vjp.__name__ = jvp.__name__.replace("jvp", "vjp")
    return vjp


# ---------------------------------------------------------------- cholesky

def _phi(x):
    """The lower triangle with the diagonal halved."""
    low = _tril(x)
    return ops.select(_on_diagonal(x.shape), ops.multiply(low, full(0.5, x.shape, x.dtype)), low)


def _cholesky_jvp(ins, outs, ts, symmetrize_input, platform):
    """dL = L phi(L^-1 dA L^-H) (jax: the tangent is used as it is without symmetrize_input)."""
    t = ts[0]
    if t is None:
        return [None]
    if symmetrize_input:
        t = _sym(t)
    L = outs[0]
    tmp = _solve(L, t, platform, left_side=False, lower=True, transpose_a=True, conjugate_a=True)
    return [matmul(L, _phi(_solve(L, tmp, platform, left_side=True, lower=True)))]


# ---------------------------------------------------------------- triangular_solve

def _masked_a(g, lower, unit_diagonal):
    k = (-1 if lower else 1) if unit_diagonal else 0
    return _tril(g, k) if lower else _triu(g, k)


def _op_a(g, transpose_a, conjugate_a):
    """op(g): g, g^T, conj(g) or g^H (each its own transpose under the pairing sum(a * b))."""
    g = mT(g) if transpose_a else g
    return conj(g) if conjugate_a else g


def _ts_jvp(ins, outs, ts, left_side, lower, transpose_a, conjugate_a, unit_diagonal, platform):
    """d(op(A)^-1 B) = op(A)^-1 dB - op(A)^-1 op(dA) X (left side; X op(dA) op(A)^-1 on the right)."""
    a, _ = ins
    x = outs[0]
    kw = dict(left_side=left_side, lower=lower, transpose_a=transpose_a, conjugate_a=conjugate_a,
              unit_diagonal=unit_diagonal)
    out = None
    if ts[1] is not None:
        out = _solve(a, ts[1], platform, **kw)
    if ts[0] is not None:
        g = _op_a(_masked_a(ts[0], lower, unit_diagonal), transpose_a, conjugate_a)
        out = add_any(out, ops.neg(_solve(a, matmul(g, x) if left_side else matmul(x, g), platform, **kw)))
    return [out]


def _ts_vjp(ins, outs, cts, left_side, lower, transpose_a, conjugate_a, unit_diagonal, platform):
    """b's cotangent solves with op(a) transposed (jax's transpose rule); a's is -op^T(z x^T)
    (left side; -x^T z on the right), masked to the triangle the solve reads."""
    c = cts[0]
    if c is None:
        return [None, None]
    a, _ = ins
    x = outs[0]
    z = _solve(a, c, platform, left_side=left_side, lower=lower, transpose_a=not transpose_a,
               conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    ct_a = None
    if needs(0):
        g = ops.neg(matmul(z, mT(x)) if left_side else matmul(mT(x), z))
        ct_a = _masked_a(_op_a(g, transpose_a, conjugate_a), lower, unit_diagonal)
    return [ct_a, z]


# ---------------------------------------------------------------- qr

def _thin_qr_jvp(q, r, dx, platform):
    """(dq, dr) of x = q r with m >= n and r square (j-towns.github.io/papers/qr-derivative.pdf)."""
    dx_rinv = _solve(r, dx, platform, left_side=False, lower=False)            # dx r^-1
    qt_dx_rinv = matmul(mH(q), dx_rinv)
    low = _tril(qt_dx_rinv, -1)
    do = ops.subtract(low, mH(low))                                          # skew-Hermitian
    if dtypes.is_complex(q.dtype):  # the diagonal's imaginary part
        imag = ops.complex(zeros_like(ops.real(qt_dx_rinv)), ops.imag(qt_dx_rinv))
        do = ops.add(do, ops.multiply(_eye(do.shape, do.dtype), imag))
    dq = ops.add(matmul(q, ops.subtract(do, qt_dx_rinv)), dx_rinv)
    dr = matmul(ops.subtract(qt_dx_rinv, do), r)
    return dq, dr


def _adjoint_solve(a, b, platform):
    """x with a^H x = b, through a's LU factors."""
    lu, _, perm = lax_linalg.lu(a, platform=platform)
    return lax_linalg.lu_solve(lu, perm, b, trans=2, platform=platform)


def _qr_jvp(ins, outs, ts, full_matrices, platform):
    dx = ts[0]
    if dx is None:
        return [None, None]
    x = ins[0]
    q, r = outs
    m, n = x.shape[-2:]
    if m < n:  # x = [x1 x2], r = [r1 r2]: the square QR of x1, and r2 = q^H x2
        dq, dr1 = _thin_qr_jvp(q, _block(r, (0, m), (0, m)), _block(dx, (0, m), (0, m)), platform)
        dr2 = ops.add(matmul(mH(dq), _block(x, (0, m), (m, n))), matmul(mH(q), _block(dx, (0, m), (m, n))))
        return [dq, ops.concatenate([dr1, dr2], x.ndim - 1)]
    q_mn = _block(q, (0, m), (0, n)) if full_matrices else q
    r_nn = _block(r, (0, n), (0, n)) if full_matrices else r
    dq_mn, dr_nn = _thin_qr_jvp(q_mn, r_nn, dx, platform)
    if not full_matrices or m == n:
        return [dq_mn, dr_nn]
    # the last m - n columns of a full q (arXiv:2409.13374, eqs. 32-33, as jax)
    q_nn, q_pn, q_mp = _block(q_mn, (0, n), (0, n)), _block(q_mn, (n, m), (0, n)), _block(q, (0, m), (n, m))
    dq_nn, dq_pn = _block(dq_mn, (0, n), (0, n)), _block(dq_mn, (n, m), (0, n))
    z_pn_h = _adjoint_solve(ops.subtract(q_nn, _eye(q_nn.shape, q_nn.dtype)), mH(q_pn), platform)
    z_pn = mH(z_pn_h)
    dq_mp = ops.subtract(matmul(dq_mn, z_pn_h), matmul(ops.add(q_mn, matmul(q_mp, z_pn)),
                                                  mH(ops.subtract(dq_pn, matmul(z_pn, dq_nn)))))
    dr = ops.concatenate([dr_nn, full(0, x.shape[:-2] + (m - n, n), x.dtype)], x.ndim - 2)
    return [ops.concatenate([dq_mn, dq_mp], x.ndim - 1), dr]


# ---------------------------------------------------------------- eigh

def _eigh_jvp(ins, outs, ts, lower, symmetrize_input, sort_eigenvalues, platform):
    """dv = v (F * v^H dA v), dw = Re diag(v^H dA v), F_ij = 1 / (w_j - w_i) off the diagonal
    (distinct eigenvalues; jax's rule, which uses dA as it is without symmetrize_input)."""
    t = ts[0]
    if t is None:
        return [None, None]
    if symmetrize_input:
        t = _sym(t)
    v, w = outs
    shape = v.shape
    wc = _as(w, v.dtype)
    eye = _eye(shape, v.dtype)
    gaps = ops.add(eye, ops.subtract(_rows(wc, shape), _cols(wc, shape)))   # w_j - w_i, 1 on the diagonal
    f = ops.subtract(ops.divide(full(1, shape, v.dtype), gaps), eye)
    vav = matmul(matmul(mH(v), t), v)
    return [matmul(v, ops.multiply(f, vav)), _real(_diag(vav))]


# ---------------------------------------------------------------- svd

def _svd_jvp(ins, outs, ts, full_matrices, compute_uv, platform):
    """jax's rule (distinct nonzero singular values); U and V^H of the reduced SVD, recomputed
    when the function returns only s (as jax does)."""
    a = ins[0]
    m, n = a.shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            f"hloforge AD: the derivative of svd with full_matrices=True and compute_uv=True is only implemented for "
            f"square matrices (as in jax), got shape {a.shape}; use full_matrices=False")
    da = ts[0]
    if da is None:
        return [None] * len(outs)
    if compute_uv:
        u, s, vt = outs
    else:
        u, s, vt = lax_linalg.svd(a, full_matrices=False, compute_uv=True, platform=platform)
    dt, real = a.dtype, s.dtype
    ut, v = mH(u), mH(vt)
    ds_mat = matmul(matmul(ut, da), v)
    ds = _real(_diag(ds_mat))
    if not compute_uv:
        return [ds]
    k = s.shape[-1]
    sq = s.shape[:-1] + (k, k)
    s_row, s_col = _rows(s, sq), _cols(s, sq)   # s_j and s_i at (i, j)
    eye_r = _eye(sq, real)
    s_diffs = ops.multiply(ops.add(s_row, s_col), ops.subtract(s_row, s_col))
    f = _as(ops.subtract(ops.divide(full(1, sq, real), ops.add(s_diffs, eye_r)), eye_r), dt)
    dss = ops.multiply(_as(s_row, dt), ds_mat)
    sds = ops.multiply(_as(s_col, dt), ds_mat)
    s_zero = _as(ops.compare(s, zeros_like(s), "EQ"), real)
    s_inv = ops.subtract(ops.divide(full(1, s.shape, real), ops.add(s, s_zero)), s_zero)
    s_inv_mat = ops.multiply(_as(_rows(s_inv, sq), dt), _eye(sq, dt))
    du_dv_diag = ops.multiply(ops.multiply(ops.subtract(ds_mat, mH(ds_mat)), full(0.5, sq, dt)), s_inv_mat)
    du = matmul(u, ops.add(ops.multiply(f, ops.add(dss, mH(dss))), du_dv_diag))
    dv = matmul(v, ops.multiply(f, ops.add(sds, mH(sds))))
    if m > n:
        dav = matmul(da, v)
        du = ops.add(du, ops.divide(ops.subtract(dav, matmul(u, matmul(ut, dav))), _as(_rows(s, dav.shape), dt)))
    if n > m:
        dahu = matmul(mH(da), u)
        dv = ops.add(dv, ops.divide(ops.subtract(dahu, matmul(v, matmul(vt, dahu))), _as(_rows(s, dahu.shape), dt)))
    return [du, ds, mH(dv)]


# ---------------------------------------------------------------- lu

def _lu_jvp(ins, outs, ts, platform):
    """With P A = L U: L^-1 P dA U^-1 = L^-1 dL + dU U^-1, so dL = L tril(that, -1) and
    dU = triu(that) U, packed like lu (jax's rule, for any m, n)."""
    da = ts[0]
    if da is None:
        return [None, None, None]
    lu, _, perm = outs
    m, n = lu.shape[-2:]
    k = min(m, n)
    nd = lu.ndim
    zero = ops.constant(np.zeros((), lu.dtype))
    l = ops.pad(_tril(_block(lu, (0, m), (0, k)), -1), zero, [0] * nd, [0] * (nd - 1) + [m - k], [0] * nd)
    l = ops.add(l, _eye(l.shape, l.dtype))
    u = ops.pad(_triu(_block(lu, (0, k), (0, n))), zero, [0] * nd, [0] * (nd - 2) + [n - k, 0], [0] * nd)
    if n > k:  # ones on the diagonal below U's k rows keep the padded U invertible
        rows = ops.iota(u.shape, np.int32, nd - 2)
        low_eye = ops.and_(ops.compare(rows, full(k, u.shape, np.int32), "GE"),
                           ops.compare(rows, ops.iota(u.shape, np.int32, nd - 1), "EQ"))
        u = ops.select(low_eye, full(1, u.shape, u.dtype), u)
    la = _solve(l, lax_linalg.permute_rows(perm, da), platform, left_side=True, lower=True, unit_diagonal=True)
    lau = _solve(u, la, platform, left_side=False, lower=False)
    return [ops.add(matmul(l, _tril(lau, -1)), matmul(_triu(lau), u)), None, None]


# ---------------------------------------------------------------- solve (jax's custom_linear_solve)

def _solve_jvp(ins, outs, ts, transpose, platform):
    """op(a) x = b: d x = op(a)^-1 (db - op(da) x), one more solve with the same a."""
    (a, _), (x,), (da, db) = ins, outs, ts
    if da is None and db is None:
        return [None]
    rhs = db
    if da is not None:
        dax = matmul(mT(da) if transpose else da, x)
        rhs = ops.neg(dax) if rhs is None else ops.subtract(rhs, dax)
    return [lax_linalg.solve(a, rhs, transpose=transpose, platform=platform)]


def _solve_vjp(ins, outs, cts, transpose, platform):
    """The transpose: ct_b = op(a)^-T ct_x, ct_a = -ct_b x^T (transposed for op(a) = a^T)."""
    (a, _), (x,), (c,) = ins, outs, cts
    if c is None:
        return [None, None]
    ct_b = lax_linalg.solve(a, c, transpose=not transpose, platform=platform)
    ct_a = ops.neg(matmul(x, mT(ct_b)) if transpose else matmul(ct_b, mT(x))) if needs(0) else None
    return [ct_a, ct_b]


def _trace_of_solve(a, da, platform):
    """tr(a^-1 da) per matrix: (...,)."""
    return ops.reduce(_diag(lax_linalg.solve(a, da, platform=platform)), np.zeros((), a.dtype), (a.ndim - 2,), "add")


def _det_jvp(ins, outs, ts, platform):
    """d det = det tr(a^-1 da) (jax's rule, for an invertible a)."""
    if ts[0] is None:
        return [None]
    return [ops.multiply(outs[0], _trace_of_solve(ins[0], ts[0], platform))]


def _slogdet_jvp(ins, outs, ts, platform):
    """d log|det| = re tr(a^-1 da); for complex a the sign turns by i im tr(a^-1 da) (jax's rule)."""
    if ts[0] is None:
        return [None, None]
    t = _trace_of_solve(ins[0], ts[0], platform)
    if not dtypes.is_complex(t.dtype):
        return [None, t]
    turn = ops.complex(zeros_like(ops.real(t)), ops.imag(t))
    return [ops.multiply(turn, outs[0]), ops.real(t)]


RULES = {
    "hloforge.linalg.solve": (_solve_jvp, _solve_vjp),
    "hloforge.linalg.det": (_det_jvp, transposed(_det_jvp)),
    "hloforge.linalg.slogdet": (_slogdet_jvp, transposed(_slogdet_jvp)),
    "hloforge.linalg.cholesky": (_cholesky_jvp, transposed(_cholesky_jvp)),
    "hloforge.linalg.triangular_solve": (_ts_jvp, _ts_vjp),
    "hloforge.linalg.qr": (_qr_jvp, transposed(_qr_jvp)),
    "hloforge.linalg.eigh": (_eigh_jvp, transposed(_eigh_jvp)),
    "hloforge.linalg.svd": (_svd_jvp, transposed(_svd_jvp)),
    "hloforge.linalg.lu": (_lu_jvp, transposed(_lu_jvp)),
}
COMPOSITE_RULES.update(RULES)

__all__ = ["RULES", "transposed"]
