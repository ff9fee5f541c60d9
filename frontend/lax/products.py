"""jax.lax's products: dot, dot_general and batch_matmul, with jax's Precision enum and the
DotDimensionNumbers and PrecisionLike type aliases (jax's own: plain Python data)."""
from __future__ import annotations

import jax

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax._common import lax_operand
from hloforge.frontend.lax.convolution import _precision_names

Precision = jax.lax.Precision
PrecisionLike = jax.lax.PrecisionLike
DotDimensionNumbers = jax.lax.DotDimensionNumbers


def asarray(x):
    return lax_operand(x, "hloforge.lax dot operand")


def _same_dtype(what, lhs, rhs, preferred_element_type):
    if preferred_element_type is not None:
        target = dtypes.canonical(preferred_element_type)
        return (lhs if lhs.dtype == target else ops.convert(lhs, target),
                rhs if rhs.dtype == target else ops.convert(rhs, target))
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"{what} requires arguments to have the same dtypes, got {lhs.dtype}, {rhs.dtype}.")
    return lhs, rhs


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """jax.lax.dot_general; emits ``stablehlo.dot_general``.

    Args:
      lhs, rhs: arrays.
      dimension_numbers: ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``.
      precision: None, a precision or an (lhs, rhs) pair.
      preferred_element_type: compute in this dtype (operands are converted first).
    Returns:
      batch dims, then lhs free dims, then rhs free dims.
    Example:
      >>> y = hf.lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))
    """
    try:
        (lc, rc), (lb, rb) = dimension_numbers
    except (TypeError, ValueError):
        raise TypeError("dot_general: dimension_numbers must be ((lhs_contracting, rhs_contracting), "
                        f"(lhs_batch, rhs_batch)), got {dimension_numbers!r}") from None
    lhs, rhs = _same_dtype("dot_general", asarray(lhs), asarray(rhs), preferred_element_type)
    return ops.dot_general(lhs, rhs, tuple(lb), tuple(rb), tuple(lc), tuple(rc), precision=_precision_names(precision))


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None, out_sharding=None):
    """jax.lax.dot: a vector/matrix product (lhs's last dimension against rhs's first, for ranks 1
    and 2), or ``dot_general`` with ``dimension_numbers``; emits ``stablehlo.dot_general``.

    Args:
      lhs, rhs: arrays.
      dimension_numbers: None, or ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``.
      precision: None, a Precision / name, or an (lhs, rhs) pair.
      preferred_element_type: compute in this dtype (operands are converted first).
      out_sharding: None.
    Returns:
      The product.
    Example:
      >>> y = hf.lax.dot(a, b)
    """
    if out_sharding is not None:
        raise ValueError(f"hloforge.lax.dot: out_sharding={out_sharding!r} is not supported here; pass None")
    a, b = asarray(lhs), asarray(rhs)
    if dimension_numbers is None:
        if not (1 <= a.ndim <= 2 and 1 <= b.ndim <= 2 and a.shape[-1] == b.shape[0]):
            raise ValueError("hloforge.lax.dot: dimension_numbers must be specified when not performing simple "
                             "un-batched matrix-matrix, matrix-vector, or vector-vector products; got "
                             f"lhs_shape={a.shape} rhs_shape={b.shape}")
        dimension_numbers = (((a.ndim - 1,), (0,)), ((), ()))
    return dot_general(a, b, dimension_numbers, precision=precision, preferred_element_type=preferred_element_type)


def batch_matmul(lhs, rhs, precision=None):
    """jax.lax.batch_matmul: matrix products over leading batch dimensions (same rank >= 2,
    same batch shape); emits ``stablehlo.dot_general``."""
    lhs, rhs = asarray(lhs), asarray(rhs)
    if lhs.ndim < 2 or rhs.ndim < 2 or lhs.ndim != rhs.ndim:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D and have the same ndim, got {lhs.ndim} "
                         f"and {rhs.ndim}.")
    if lhs.shape[:-2] != rhs.shape[:-2]:
        raise ValueError(f"batch_matmul: batch dimensions {lhs.shape[:-2]} and {rhs.shape[:-2]} differ")
    batch = tuple(range(lhs.ndim - 2))
    return dot_general(lhs, rhs, (((lhs.ndim - 1,), (rhs.ndim - 2,)), (batch, batch)), precision=precision)


__all__ = ["Precision", "PrecisionLike", "DotDimensionNumbers", "dot", "dot_general", "batch_matmul"]
