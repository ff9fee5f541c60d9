"""Derivative rules of the StableHLO factorization ops (frontend/ops/factorization.py): cholesky
and triangular_solve (JAX's rules, jax/_src/lax/linalg.py). hloforge.lax.linalg's composites have
their own rules (lax_linalg.py)."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.ad._util import add_any, conj, like, mH, mT, matmul, needs, zeros_like
from hloforge.frontend.registry import def_rule


def _triangle(x, lower, k=0):
    """tril(x, k) (lower) or triu(x, k)."""
    rows = ops.iota(x.shape, np.int32, x.ndim - 2)
    cols = ops.iota(x.shape, np.int32, x.ndim - 1)
    diff = ops.subtract(cols, rows)  # j - i
    keep = ops.compare(diff, ops.constant(np.full(x.shape, k, np.int32)), "LE" if lower else "GE")
    return ops.select(keep, x, zeros_like(x))


def _phi(x):
    """The lower triangle with the diagonal halved."""
    low = _triangle(x, True)
    eye = ops.compare(ops.iota(x.shape, np.int32, x.ndim - 2), ops.iota(x.shape, np.int32, x.ndim - 1), "EQ")
    return ops.select(eye, ops.multiply(low, like(0.5, low)), low)


def _read_triangle(t, lower):
    """The Hermitian matrix the op sees: the named triangle and its mirror."""
    return ops.add(_triangle(t, lower), mH(_triangle(t, lower, -1 if lower else 1)))


def _read_triangle_t(c, lower):
    return ops.add(_triangle(c, lower), _triangle(mH(c), lower, -1 if lower else 1))


@def_rule("jvp", "stablehlo.cholesky")
def _cholesky_jvp(ins, outs, ts, lower):
    """jax's rule (arXiv:1602.07527): dL = L phi(L^-1 dA L^-H), dA the Hermitian matrix of the
    triangle the op reads; upper factors as the adjoint of the lower one."""
    t = _read_triangle(ts[0], lower)
    L = _triangle(outs[0], lower)
    if not lower:
        L = mH(L)
    tmp = mH(ops.triangular_solve(L, mH(t), left_side=True, lower=True))          # dA L^-H
    dL = matmul(L, _phi(ops.triangular_solve(L, tmp, left_side=True, lower=True)))
    return [dL if lower else mH(dL)]


@def_rule("vjp", "stablehlo.cholesky")
def _cholesky_vjp(ins, outs, cts, lower):
    c = cts[0]
    L = _triangle(outs[0], lower)
    if not lower:
        L, c = mH(L), mH(c)
    ct_p = matmul(mT(L), c)
    ct_t2 = _phi(ct_p)
    ct_t1 = ops.triangular_solve(conj(L), ct_t2, left_side=False, lower=True)               # ct_t2 conj(L)^-1
    ct_s = ops.triangular_solve(L, ct_t1, left_side=True, lower=True, transpose_a="TRANSPOSE")  # L^-T ct_t1
    return [_read_triangle_t(ct_s, lower)]


def _op_a(g, transpose_a):
    if transpose_a == "TRANSPOSE":
        return mT(g)
    if transpose_a == "ADJOINT":
        return mH(g)
    return g


def _a_mask(g, lower, unit_diagonal):
    return _triangle(g, lower, (-1 if lower else 1) if unit_diagonal else 0)


@def_rule("jvp", "stablehlo.triangular_solve")
def _ts_jvp(ins, outs, ts, left_side, lower, unit_diagonal, transpose_a):
    a, b = ins
    x = outs[0]
    kw = dict(left_side=left_side, lower=lower, unit_diagonal=unit_diagonal, transpose_a=transpose_a)
    out = None
    if ts[1] is not None:
        out = ops.triangular_solve(a, ts[1], **kw)
    if ts[0] is not None:  # d(op(A)^-1 B) = -op(A)^-1 op(dA) X (left), -X op(dA) op(A)^-1 (right)
        g = _op_a(_a_mask(ts[0], lower, unit_diagonal), transpose_a)
        out = add_any(out, ops.neg(ops.triangular_solve(a, matmul(g, x) if left_side else matmul(x, g), **kw)))
    return [out]


@def_rule("vjp", "stablehlo.triangular_solve")
def _ts_vjp(ins, outs, cts, left_side, lower, unit_diagonal, transpose_a):
    """The cotangent of b solves with op(a) transposed (jax's rule; ADJOINT: conj(a) untransposed)."""
    a, b = ins
    x, c = outs[0], cts[0]
    flipped = {"NO_TRANSPOSE": "TRANSPOSE", "TRANSPOSE": "NO_TRANSPOSE", "ADJOINT": "NO_TRANSPOSE"}[transpose_a]
    a_t = conj(a) if transpose_a == "ADJOINT" else a
    z = ops.triangular_solve(a_t, c, left_side=left_side, lower=lower, unit_diagonal=unit_diagonal, transpose_a=flipped)
    ct_a = None
    if needs(0):
        ct_g = ops.neg(matmul(z, mT(x)) if left_side else matmul(mT(x), z))
        ct_a = _a_mask(_op_a(ct_g, transpose_a), lower, unit_diagonal)  # (op is its own transpose)
    return [ct_a, z]
