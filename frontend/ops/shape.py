"""Data-movement StableHLO ops: constant, iota, reshape, transpose, broadcast_in_dim, slice,
dynamic_slice, concatenate, reverse."""
from __future__ import annotations

import math

import numpy as np

from hloforge.frontend import dtypes
from hloforge.frontend.context import i64_array, ir
from hloforge.frontend.ops._common import (
    builder, check_axes, int_tuple, operand)
from hloforge.frontend.registry import register
from hloforge.frontend.tracing import Tensor
from hloforge.frontend.tracing import constant as _constant


def _emit(name, operands, shape, dtype, attributes, loc) -> Tensor:
    b = builder()
    op = b.emit(name, operands, [(shape, dtype)], attributes, loc=loc)
    return Tensor(op.result, shape, dtype, b)


@register("stablehlo.constant")
def constant(value, dtype=None, *, loc=None) -> Tensor:
    """A constant tensor; emits ``stablehlo.constant`` (splat values stay compact).

    Args:
      value: array-like; Python scalars default to numpy's dtypes.
      dtype: optional dtype to cast ``value`` to.
    Returns:
      A Tensor of value's shape.
    Example:
      >>> c = ops.constant(np.eye(3, dtype=np.float32))
    """
    if isinstance(value, Tensor):
        raise TypeError("constant: value is already a traced Tensor; use ops.convert to change its dtype")
    if dtype is None and dtypes.weak_type(value) is not None:
        dtype = dtypes.result_type(value)
    return _constant(value, dtype, loc=loc)


def _iota_rule(shape, dtype, dimension):
    shape = int_tuple("iota", "shape", shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"iota: shape {shape} has a negative dimension")
    if not 0 <= dimension < len(shape):
        raise ValueError(f"iota: dimension {dimension} out of range for shape {shape}")
    dtype = dtypes.canonical(dtype)
    if dtypes.is_bool(dtype):
        raise TypeError("iota: dtype bool is not supported")
    return shape, dtype


@register("stablehlo.iota", _iota_rule)
def iota(shape, dtype, dimension: int = 0, *, loc=None) -> Tensor:
    """0, 1, 2, ... along ``dimension``, broadcast over the others; emits ``stablehlo.iota``.

    Args:
      shape: result shape (at least rank 1).
      dtype: integer, float or complex dtype.
      dimension: the dimension that counts.
    Returns:
      A Tensor of ``shape`` and ``dtype``.
    Example:
      >>> i = ops.iota((3, 4), np.int32, 1)
    """
    shape, dtype = _iota_rule(shape, dtype, dimension)
    return _emit("stablehlo.iota", [], shape, dtype, {"iota_dimension": _i64(dimension)}, loc)


def _i64(value) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))


def _reshape_rule(x, shape):
    shape = int_tuple("reshape", "shape", shape)
    if any(s < 0 for s in shape) or math.prod(shape) != x.size:
        raise ValueError(f"reshape: cannot reshape {x.shape} ({x.size} elements) into {shape}")
    return shape, x.dtype


@register("stablehlo.reshape", _reshape_rule)
def reshape(x, shape, *, loc=None) -> Tensor:
    """Same elements in row-major order, new shape; emits ``stablehlo.reshape``.

    Args:
      x: Tensor.
      shape: new shape with the same number of elements (no -1; see hloforge.numpy.reshape).
    Returns:
      A Tensor of ``shape``.
    Example:
      >>> y = ops.reshape(x, (2, 6))
    """
    x = operand("reshape", x)
    shape, dtype = _reshape_rule(x, shape)
    return _emit("stablehlo.reshape", [x], shape, dtype, None, loc)


def _transpose_rule(x, permutation):
    perm = check_axes("transpose", "permutation", permutation, x.ndim)
    if len(perm) != x.ndim:
        raise ValueError(f"transpose: permutation {list(perm)} is not a permutation of rank {x.ndim}")
    return tuple(x.shape[p] for p in perm), x.dtype


@register("stablehlo.transpose", _transpose_rule)
def transpose(x, permutation, *, loc=None) -> Tensor:
    """Permute dimensions: result dim i is operand dim ``permutation[i]``; emits ``stablehlo.transpose``.

    Args:
      x: Tensor.
      permutation: a permutation of ``range(x.ndim)``.
    Returns:
      The permuted Tensor.
    Example:
      >>> y = ops.transpose(x, (1, 0))
    """
    x = operand("transpose", x)
    shape, dtype = _transpose_rule(x, permutation)
    return _emit("stablehlo.transpose", [x], shape, dtype, {"permutation": i64_array(permutation)}, loc)


def _broadcast_rule(x, shape, dims):
    shape = int_tuple("broadcast_in_dim", "shape", shape)
    dims = int_tuple("broadcast_in_dim", "broadcast_dimensions", dims)
    if len(dims) != x.ndim:
        raise ValueError(f"broadcast_in_dim: broadcast_dimensions {list(dims)} must have one entry per "
                         f"operand dimension ({x.ndim})")
    check_axes("broadcast_in_dim", "broadcast_dimensions", dims, len(shape))
    for i, d in enumerate(dims):
        if x.shape[i] not in (1, shape[d]):
            raise ValueError(f"broadcast_in_dim: operand dim {i} of size {x.shape[i]} cannot broadcast to "
                             f"result dim {d} of size {shape[d]} (shape {x.shape} -> {shape})")
    if any(s < 0 for s in shape):
        raise ValueError(f"broadcast_in_dim: shape {shape} has a negative dimension")
    return shape, x.dtype


@register("stablehlo.broadcast_in_dim", _broadcast_rule)
def broadcast_in_dim(x, shape, broadcast_dimensions, *, loc=None) -> Tensor:
    """Broadcast ``x`` into ``shape``: operand dim i maps to result dim ``broadcast_dimensions[i]``;
    emits ``stablehlo.broadcast_in_dim``.

    Args:
      x: Tensor.
      shape: result shape.
      broadcast_dimensions: one result dimension per operand dimension (size 1 or equal).
    Returns:
      A Tensor of ``shape``.
    Example:
      >>> y = ops.broadcast_in_dim(row, (4, 3), (1,))
    """
    x = operand("broadcast_in_dim", x)
    shape, dtype = _broadcast_rule(x, shape, broadcast_dimensions)
    attrs = {"broadcast_dimensions": i64_array(broadcast_dimensions)}
    return _emit("stablehlo.broadcast_in_dim", [x], shape, dtype, attrs, loc)


def _slice_rule(x, start, limit, strides):
    start = int_tuple("slice", "start_indices", start, x.ndim)
    limit = int_tuple("slice", "limit_indices", limit, x.ndim)
    strides = int_tuple("slice", "strides", strides, x.ndim)
    for d, (s, l, st, n) in enumerate(zip(start, limit, strides, x.shape)):
        if st < 1:
            raise ValueError(f"slice: strides {list(strides)} must be >= 1")
        if not 0 <= s <= l <= n:
            raise ValueError(f"slice: dim {d}: need 0 <= start <= limit <= size, got start {s}, "
                             f"limit {l}, size {n}")
    shape = tuple(-(-(l - s) // st) for s, l, st in zip(start, limit, strides))
    return shape, x.dtype


@register("stablehlo.slice", _slice_rule)
def slice(x, start_indices, limit_indices, strides=None, *, loc=None) -> Tensor:
    """Static strided slice ``x[start:limit:stride]`` per dimension; emits ``stablehlo.slice``.

    Args:
      x: Tensor.
      start_indices, limit_indices: per-dimension bounds, 0 <= start <= limit <= size.
      strides: per-dimension strides >= 1 (default all 1).
    Returns:
      The sliced Tensor.
    Example:
      >>> y = ops.slice(x, (0, 1), (4, 3))
    """
    x = operand("slice", x)
    strides = (1,) * x.ndim if strides is None else strides
    shape, dtype = _slice_rule(x, start_indices, limit_indices, strides)
    attrs = {"start_indices": i64_array(start_indices), "limit_indices": i64_array(limit_indices),
             "strides": i64_array(strides)}
    return _emit("stablehlo.slice", [x], shape, dtype, attrs, loc)


def _dynamic_slice_rule(x, starts, sizes):
    sizes = int_tuple("dynamic_slice", "slice_sizes", sizes, x.ndim)
    if len(starts) != x.ndim:
        raise ValueError(f"dynamic_slice: got {len(starts)} start indices for rank {x.ndim}")
    for d, (s, n) in enumerate(zip(sizes, x.shape)):
        if not 0 <= s <= n:
            raise ValueError(f"dynamic_slice: slice_sizes {list(sizes)} exceed shape {x.shape} at dim {d}")
    for i, s in enumerate(starts):
        if s.shape != () or s.dtype.kind not in "iu":
            raise TypeError(f"dynamic_slice: start index {i} must be a 0-d integer tensor, got {s}")
        if s.dtype != starts[0].dtype:
            raise TypeError(f"dynamic_slice: start indices mix dtypes {starts[0].dtype} and {s.dtype}")
    return sizes, x.dtype


@register("stablehlo.dynamic_slice", _dynamic_slice_rule)
def dynamic_slice(x, start_indices, slice_sizes, *, loc=None) -> Tensor:
    """Slice of static ``slice_sizes`` at run-time ``start_indices`` (clamped into range);
    emits ``stablehlo.dynamic_slice``.

    Args:
      x: Tensor.
      start_indices: one 0-d integer Tensor (or Python int) per dimension.
      slice_sizes: static sizes, 0 <= size <= dim.
    Returns:
      A Tensor of shape ``slice_sizes``.
    Example:
      >>> y = ops.dynamic_slice(x, (i, 0), (1, 8))
    """
    x = operand("dynamic_slice", x)
    starts = [operand("dynamic_slice", s, "start index",
                      dtype=np.int64 if not hasattr(s, "dtype") else None) for s in start_indices]
    shape, dtype = _dynamic_slice_rule(x, starts, slice_sizes)
    return _emit("stablehlo.dynamic_slice", [x, *starts], shape, dtype,
                 {"slice_sizes": i64_array(slice_sizes)}, loc)


def _concatenate_rule(xs, dimension):
    if not xs:
        raise ValueError("concatenate: needs at least one operand")
    first = xs[0]
    if not 0 <= dimension < max(first.ndim, 1) or first.ndim == 0:
        raise ValueError(f"concatenate: dimension {dimension} out of range for rank {first.ndim}")
    for i, x in enumerate(xs[1:], 1):
        if x.dtype != first.dtype:
            raise TypeError(f"concatenate: operand {i} dtype {x.dtype} differs from {first.dtype}")
        if x.ndim != first.ndim or any(a != b for d, (a, b) in enumerate(zip(x.shape, first.shape))
                                       if d != dimension):
            raise ValueError(f"concatenate: operand {i} shape {x.shape} does not match {first.shape} "
                             f"outside dimension {dimension}")
    shape = list(first.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return tuple(shape), first.dtype


@register("stablehlo.concatenate", _concatenate_rule)
def concatenate(xs, dimension: int, *, loc=None) -> Tensor:
    """Join tensors along ``dimension``; emits ``stablehlo.concatenate``.

    Args:
      xs: sequence of Tensors of one dtype and rank, equal outside ``dimension``.
      dimension: the dimension to join along.
    Returns:
      The joined Tensor.
    Example:
      >>> y = ops.concatenate([a, b], 0)
    """
    xs = [operand("concatenate", x) for x in xs]
    shape, dtype = _concatenate_rule(xs, dimension)
    return _emit("stablehlo.concatenate", xs, shape, dtype, {"dimension": _i64(dimension)}, loc)


def _reverse_rule(x, dimensions):
    check_axes("reverse", "dimensions", dimensions, x.ndim)
    return x.shape, x.dtype


@register("stablehlo.reverse", _reverse_rule)
def reverse(x, dimensions, *, loc=None) -> Tensor:
    """Reverse the order of elements along ``dimensions``; emits ``stablehlo.reverse``.

    Args:
      x: Tensor.
      dimensions: distinct dimensions to reverse.
    Returns:
      A Tensor of x's shape.
    Example:
      >>> y = ops.reverse(x, (0,))
    """
    x = operand("reverse", x)
    shape, dtype = _reverse_rule(x, dimensions)
    return _emit("stablehlo.reverse", [x], shape, dtype, {"dimensions": i64_array(dimensions)}, loc)


__all__ = ["constant", "iota", "reshape", "transpose", "broadcast_in_dim", "slice", "dynamic_slice",
           "concatenate", "reverse"]
