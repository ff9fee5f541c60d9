"""Matrix factorization ops: stablehlo.cholesky and stablehlo.triangular_solve (batched over
leading dims). XLA expands both on every backend; :mod:`hloforge.lax.linalg` emits LAPACK/cuSOLVER
custom calls instead, as jax does on CPU and GPU."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import attributes as attr
from hloforge.frontend.context import stablehlo
from hloforge.frontend.ops._common import COMPLEX, FLOAT, check_dtype, operand
from hloforge.frontend.registry import bind, register
from hloforge.frontend.tracing import Tensor

TRANSPOSES = ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT")


def _square(op, a, what="operand"):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{op}: {what} must be a batch of square matrices (rank >= 2, equal last two dims), "
                         f"got shape {a.shape}")


# ---------------------------------------------------------------- cholesky

def _cholesky_rule(a, lower):
    check_dtype("cholesky", a, (FLOAT, COMPLEX))
    _square("cholesky", a)
    return a.shape, a.dtype


def _cholesky_evaluate(a, lower):
    """Empty matrices only (an empty result); None otherwise: XLA expands the factorization into
    its own blocked algorithm, whose rounding differs from LAPACK's."""
    return np.zeros(a.shape, a.dtype) if a.size == 0 else None


@register("stablehlo.cholesky", rule=_cholesky_rule, params=lambda lower=True: {"lower": bool(lower)},
          attributes=lambda lower: {"lower": attr.boolean(lower)},
          decode=lambda op: {"lower": attr.read_bool(op, "lower")}, evaluate=_cholesky_evaluate)
def cholesky(a, *, lower=True, loc=None) -> Tensor:
    """Cholesky factor of Hermitian positive-definite matrices; emits ``stablehlo.cholesky``.

    Only the ``lower`` (or upper) triangle of ``a`` is read; the other triangle of the result is
    implementation-defined in the spec.

    Args:
      a: Tensor of shape (..., n, n), float or complex.
      lower: compute L with a = L L^H (True) or U with a = U^H U (False).
    Returns:
      A Tensor of a's shape and dtype.
    Example:
      >>> l = ops.cholesky(a)
    """
    return bind("stablehlo.cholesky", [operand("cholesky", a)], lower=lower, loc=loc)


# ---------------------------------------------------------------- triangular_solve

def _ts_params(left_side=True, lower=True, unit_diagonal=False, transpose_a="NO_TRANSPOSE"):
    if transpose_a not in TRANSPOSES:
        raise ValueError(f"triangular_solve: transpose_a {transpose_a!r} is not one of {', '.join(TRANSPOSES)}")
    return {"left_side": bool(left_side), "lower": bool(lower), "unit_diagonal": bool(unit_diagonal),
            "transpose_a": transpose_a}


def _ts_rule(a, b, left_side, lower, unit_diagonal, transpose_a):
    check_dtype("triangular_solve", a, (FLOAT, COMPLEX), "a")
    if a.dtype != b.dtype:
        raise TypeError(f"triangular_solve: a and b dtypes {a.dtype} and {b.dtype} differ; convert one first")
    _square("triangular_solve", a, "a")
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2]:
        raise ValueError(f"triangular_solve: a {a.shape} and b {b.shape} must have the same rank and batch dims")
    k = b.shape[-2] if left_side else b.shape[-1]
    if k != a.shape[-1]:
        raise ValueError(f"triangular_solve: a {a.shape} does not match b {b.shape} on the "
                         f"{'left' if left_side else 'right'} side")
    return b.shape, b.dtype


def _ts_attributes(left_side, lower, unit_diagonal, transpose_a):
    return {"left_side": attr.boolean(left_side), "lower": attr.boolean(lower),
            "unit_diagonal": attr.boolean(unit_diagonal), "transpose_a": stablehlo.TransposeAttr.get(transpose_a)}


def _ts_decode(op):
    return {"left_side": attr.read_bool(op, "left_side"), "lower": attr.read_bool(op, "lower"),
            "unit_diagonal": attr.read_bool(op, "unit_diagonal"),
            "transpose_a": stablehlo.TransposeAttr(op.attributes["transpose_a"]).value}


def _ts_evaluate(a, b, left_side, lower, unit_diagonal, transpose_a):
    """Empty results only; None otherwise: XLA expands the solve into its own blocked algorithm,
    whose rounding differs from LAPACK's."""
    return np.zeros(b.shape, b.dtype) if b.size == 0 else None


@register("stablehlo.triangular_solve", rule=_ts_rule, params=_ts_params, attributes=_ts_attributes,
          decode=_ts_decode, evaluate=_ts_evaluate)
def triangular_solve(a, b, *, left_side=True, lower=True, unit_diagonal=False, transpose_a="NO_TRANSPOSE",
                     loc=None) -> Tensor:
    """Solve op(a) x = b (``left_side``) or x op(a) = b for triangular ``a``; emits
    ``stablehlo.triangular_solve``.

    Args:
      a: Tensor (..., n, n), float or complex; only its ``lower`` (or upper) triangle is read,
        and its diagonal is taken as ones with ``unit_diagonal``.
      b: Tensor (..., n, k) (left side) or (..., k, n), a's dtype and batch dims.
      transpose_a: "NO_TRANSPOSE", "TRANSPOSE" or "ADJOINT": op(a).
    Returns:
      x, a Tensor of b's shape and dtype.
    Example:
      >>> x = ops.triangular_solve(l, b, left_side=True, lower=True)
    """
    a, b = operand("triangular_solve", a, "a"), operand("triangular_solve", b, "b")
    return bind("stablehlo.triangular_solve", [a, b], left_side=left_side, lower=lower,
                unit_diagonal=unit_diagonal, transpose_a=transpose_a, loc=loc)
