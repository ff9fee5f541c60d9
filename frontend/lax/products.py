"""jax.lax's products: dot, dot_general, batch_matmul, ragged_dot and ragged_dot_general, with
jax's Precision enum, RaggedDotDimensionNumbers and the DotDimensionNumbers and PrecisionLike type
aliases (jax's own: plain Python data)."""
from __future__ import annotations

import jax
import ml_dtypes
import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax._common import lax_operand
from hloforge.frontend.lax.convolution import _precision_names
from hloforge.frontend.lax.ordering import cumsum

Precision = jax.lax.Precision
RaggedDotDimensionNumbers = jax.lax.RaggedDotDimensionNumbers
PrecisionLike = jax.lax.PrecisionLike
DotDimensionNumbers = jax.lax.DotDimensionNumbers


def asarray(x):
    return lax_operand(x, "hloforge.lax dot operand")


def _bit_width(d) -> int:
    return 1 if dtypes.is_bool(d) else np.dtype(d).itemsize * 8


def _precision_rank(d) -> tuple:
    """jax's (and XLA's HigherPrecisionType) order of operand dtypes: complex, then a float's range
    and mantissa, then bit width, then signed over unsigned."""
    real = dtypes.real_dtype(d) if dtypes.is_complex(d) else np.dtype(d)
    info = ml_dtypes.finfo(real) if dtypes.is_float(real) else None
    return (dtypes.is_complex(d), info.maxexp if info else -1, info.nmant if info else -1,
            _bit_width(real), not dtypes.is_unsigned_int(real))


def _dot_operands(what, lhs, rhs, preferred_element_type):
    """(lhs, rhs, preferred) for ``ops.dot_general``, as jax.lax.dot_general types and lowers a
    product on CPU and GPU: the result dtype is ``preferred_element_type``, else the dtype of the
    operand of higher precision (``_precision_rank``); operands of different dtypes are converted to
    it first, operands of one dtype go in as they are (a bf16 x bf16 -> f32 product accumulates in
    float32 from bf16 operands)."""
    ranks = _precision_rank(lhs.dtype), _precision_rank(rhs.dtype)
    if ranks[0] == ranks[1] and lhs.dtype != rhs.dtype:
        raise TypeError(f"hloforge.lax.{what} argument type error: {lhs.dtype}, {rhs.dtype}")
    result = lhs.dtype if ranks[0] >= ranks[1] else rhs.dtype
    if preferred_element_type is not None:
        target = dtypes.canonical(preferred_element_type)
        if target != result and not dtypes.is_float(result) and _bit_width(target) < _bit_width(result):
            raise TypeError("`preferred_element_type` must not be narrower than the original type, got "
                            f"preferred_element_type of {target} for result type of {result}.")
        result = target
    if lhs.dtype != rhs.dtype:
        lhs, rhs = (x if x.dtype == result else ops.convert(x, result) for x in (lhs, rhs))
    return lhs, rhs, (None if result == lhs.dtype else result)


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None, *, out_sharding=None):
    """jax.lax.dot_general; emits ``stablehlo.dot_general``.

    Args:
      lhs, rhs: arrays.
      dimension_numbers: ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``.
      precision: None, a precision or an (lhs, rhs) pair.
      preferred_element_type: the result dtype (accumulate in it); None: the operands' dtype.
        Operands of different dtypes are converted to the result dtype, as jax lowers them.
      out_sharding: None.
    Returns:
      batch dims, then lhs free dims, then rhs free dims.
    Example:
      >>> y = hf.lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))
    """
    if out_sharding is not None:
        raise ValueError(f"hloforge.lax.dot_general: out_sharding={out_sharding!r} is not supported here; pass None")
    try:
        (lc, rc), (lb, rb) = dimension_numbers
    except (TypeError, ValueError):
        raise TypeError("dot_general: dimension_numbers must be ((lhs_contracting, rhs_contracting), "
                        f"(lhs_batch, rhs_batch)), got {dimension_numbers!r}") from None
    lhs, rhs, preferred = _dot_operands("dot_general", asarray(lhs), asarray(rhs), preferred_element_type)
    return ops.dot_general(lhs, rhs, tuple(lb), tuple(rb), tuple(lc), tuple(rc), precision=_precision_names(precision),
                           preferred_element_type=preferred)


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None, out_sharding=None):
    """jax.lax.dot: a vector/matrix product (lhs's last dimension against rhs's first, for ranks 1
    and 2), or ``dot_general`` with ``dimension_numbers``; emits ``stablehlo.dot_general``.

    Args:
      lhs, rhs: arrays.
      dimension_numbers: None, or ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``.
      precision: None, a Precision / name, or an (lhs, rhs) pair.
      preferred_element_type: as in dot_general.
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


# ---------------------------------------------------------------- ragged products

def _group_mask(x, gs, dim):
    """``x`` spread over a new leading group dimension: element i of ``dim`` kept in group g when
    ``starts[g] <= i < ends[g]`` (the running sums of ``gs``), 0 elsewhere, as jax densifies it."""
    g, n = gs.shape[0], x.shape[dim]
    ends = cumsum(gs)
    starts = ops.pad(ops.slice(ends, (0,), (g - 1,)), np.zeros((), gs.dtype), (1,), (0,))
    position = ops.iota((g, n), gs.dtype, 1)
    inside = ops.and_(ops.compare(ops.broadcast_in_dim(starts, (g, n), (0,)), position, "LE"),
                      ops.compare(position, ops.broadcast_in_dim(ends, (g, n), (0,)), "LT"))
    shape = (g,) + x.shape
    mask = ops.broadcast_in_dim(inside, shape, (0, dim + 1))
    spread = ops.broadcast_in_dim(x, shape, tuple(range(1, len(shape))))
    zero = ops.broadcast_in_dim(ops.constant(np.zeros((), x.dtype)), shape, ())
    return ops.select(mask, spread, zero)


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
    """jax.lax.ragged_dot_general: a dot_general whose lhs ragged dimension is split into
    consecutive groups of ``group_sizes``, as jax computes it off TPU: each operand with a ragged
    dimension is spread over a leading group dimension (a mask of ``select``s), then one
    ``stablehlo.dot_general``. The ragged dimension is a non-contracting one (each group meets its
    own rhs slice along ``rhs_group_dimensions``), a contracting one (a result per group, in front)
    or a batch one (the groups change nothing).

    Args:
      lhs, rhs: arrays.
      group_sizes: a 1-d integer array of g group sizes.
      ragged_dot_dimension_numbers: a jax.lax.RaggedDotDimensionNumbers.
      precision, preferred_element_type: as in dot_general.
      group_offset, out_sharding: None.
    Returns:
      The product: dot_general's shape, with a leading g for a ragged contracting dimension.
    Example:
      >>> y = hf.lax.ragged_dot_general(x, w, sizes, dn)
    """
    for name, value in (("group_offset", group_offset), ("out_sharding", out_sharding)):
        if value is not None:
            raise ValueError(f"hloforge.lax.ragged_dot_general: {name}={value!r} is not supported (jax implements "
                             "neither off TPU); pass None")
    dn = ragged_dot_dimension_numbers
    if not isinstance(dn, RaggedDotDimensionNumbers):
        raise TypeError(f"hloforge.lax.ragged_dot_general: ragged_dot_dimension_numbers must be a "
                        f"RaggedDotDimensionNumbers, got {type(dn).__name__}")
    a, b = asarray(lhs), asarray(rhs)
    gs = lax_operand(group_sizes, "hloforge.lax.ragged_dot_general group_sizes")
    if gs.ndim != 1 or not dtypes.is_integer(gs.dtype):
        raise TypeError(f"hloforge.lax.ragged_dot_general: group_sizes must be a 1-d integer array, got {gs} (batched "
                        "group sizes are not supported)")
    if len(dn.lhs_ragged_dimensions) != 1:
        raise TypeError(f"hloforge.lax.ragged_dot_general: needs one lhs ragged dimension, got "
                        f"{dn.lhs_ragged_dimensions}")
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    lc, rc, lb, rb = (list(map(int, v)) for v in (lc, rc, lb, rb))
    ragged = int(dn.lhs_ragged_dimensions[0])
    if not 0 <= ragged < a.ndim:
        raise TypeError(f"hloforge.lax.ragged_dot_general: lhs ragged dimension {ragged} is out of range for lhs of "
                        f"rank {a.ndim}")
    if ragged in lb:
        return dot_general(a, b, ((lc, rc), (lb, rb)), precision, preferred_element_type)
    g = gs.shape[0]
    if ragged in lc:
        rhs_ragged = rc[lc.index(ragged)]
        dims = (([d + 1 for d in lc], [d + 1 for d in rc]), ([0] + [d + 1 for d in lb], [0] + [d + 1 for d in rb]))
        return dot_general(_group_mask(a, gs, ragged), _group_mask(b, gs, rhs_ragged), dims, precision,
                           preferred_element_type)
    if len(dn.rhs_group_dimensions) != 1:
        raise TypeError(f"hloforge.lax.ragged_dot_general: a ragged non-contracting dimension needs one rhs group "
                        f"dimension, got {dn.rhs_group_dimensions}")
    group_dim = int(dn.rhs_group_dimensions[0])
    if not 0 <= group_dim < b.ndim or b.shape[group_dim] != g:
        raise TypeError(f"hloforge.lax.ragged_dot_general: rhs group dimension {group_dim} of rhs shape {b.shape} must "
                        f"have the {g} groups of group_sizes")
    dims = (([d + 1 for d in lc] + [0], rc + [group_dim]), ([d + 1 for d in lb], rb))
    return dot_general(_group_mask(a, gs, ragged), b, dims, precision, preferred_element_type)


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None, group_offset=None,
               out_sharding=None):
    """jax.lax.ragged_dot: ``lhs`` (m, k) in consecutive row groups of ``group_sizes``, group g
    times ``rhs[g]`` (g, k, n); ``ragged_dot_general`` with jax's basic dimension numbers.

    Args:
      lhs: an (m, k) array.
      rhs: a (g, k, n) array.
      group_sizes: g integer sizes (rows past their sum give 0).
      precision, preferred_element_type: as in dot_general.
      group_offset, out_sharding: None.
    Returns:
      An (m, n) array.
    Example:
      >>> y = hf.lax.ragged_dot(tokens, experts, counts)
    """
    basic = RaggedDotDimensionNumbers(dot_dimension_numbers=(([1], [1]), ([], [])), lhs_ragged_dimensions=[0],
                                      rhs_group_dimensions=[0])
    return ragged_dot_general(lhs, rhs, group_sizes, basic, precision, preferred_element_type, group_offset,
                              out_sharding)


__all__ = ["Precision", "PrecisionLike", "DotDimensionNumbers", "RaggedDotDimensionNumbers", "dot", "dot_general",
           "batch_matmul", "ragged_dot", "ragged_dot_general"]
