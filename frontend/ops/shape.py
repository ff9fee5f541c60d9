"""Data-movement StableHLO ops: constant, iota, reshape, transpose, broadcast_in_dim, slice,
dynamic_slice, concatenate, reverse."""
from __future__ import annotations

import builtins
import math

import numpy as np

from hloforge.frontend import attributes as attr
from hloforge.frontend import dtypes
from hloforge.frontend.context import shape_dtype_of
from hloforge.frontend.ops._common import check_axes, int_tuple, operand
from hloforge.frontend.registry import bind, register
from hloforge.frontend.tracing import Tensor, refuse_masked
from hloforge.frontend.tracing import constant as _constant


def _constant_params(value, dtype=None):
    array = np.asarray(value, None if dtype is None else dtypes.canonical(dtype))
    return {"value": array, "dtype": dtypes.canonical(array.dtype)}


def _constant_decode(op):
    value = attr.constant_array(op)
    shape, dtype = shape_dtype_of(op.results[0].type)
    return {"value": np.broadcast_to(value[0], shape) if value[1] else value[0], "dtype": dtype}


def _constant_evaluate(value, dtype=None):
    return np.asarray(value, dtype)


@register("stablehlo.constant", rule=lambda value, dtype: (value.shape, dtype), params=_constant_params,
          decode=_constant_decode, evaluate=_constant_evaluate)
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
    refuse_masked(value, "hloforge.ops.constant")
    weak = dtypes.weak_type(value)
    if weak is int and type(value) is int:
        if dtype is None:
            dtype = dtypes.python_int_dtype(value, "hloforge.ops.constant")
        else:
            dtypes.check_scalar_fits(value, dtypes.canonical(dtype), "hloforge.ops.constant")
    elif dtype is None and weak is not None:
        dtype = dtypes.result_type(value)
    return _constant(value, dtype, loc=loc)


# ---------------------------------------------------------------- iota

def _iota_params(shape, dtype, dimension=0):
    shape = int_tuple("iota", "shape", shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"iota: shape {shape} has a negative dimension")
    if not 0 <= dimension < len(shape):
        raise ValueError(f"iota: dimension {dimension} out of range for shape {shape}")
    dtype = dtypes.canonical(dtype)
    if dtypes.is_bool(dtype):
        raise TypeError("iota: dtype bool is not supported")
    return {"shape": shape, "dtype": dtype, "dimension": int(dimension)}


def _iota_evaluate(shape, dtype, dimension):
    index = np.arange(shape[dimension]).reshape([-1 if d == dimension else 1 for d in range(len(shape))])
    return np.broadcast_to(index, shape).astype(dtype)


@register("stablehlo.iota", rule=lambda shape, dtype, dimension: (shape, dtype), params=_iota_params,
          attributes=lambda shape, dtype, dimension: {"iota_dimension": attr.i64(dimension)},
          decode=lambda op: dict(zip(("shape", "dtype"), shape_dtype_of(op.results[0].type)),
                                 dimension=attr.read_int(op, "iota_dimension")),
          evaluate=_iota_evaluate)
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
    return bind("stablehlo.iota", [], shape=shape, dtype=dtype, dimension=dimension, loc=loc)


# ---------------------------------------------------------------- reshape, transpose, broadcast

def _reshape_rule(x, shape):
    if any(s < 0 for s in shape) or math.prod(shape) != x.size:
        raise ValueError(f"reshape: cannot reshape {x.shape} ({x.size} elements) into {shape}")
    return shape, x.dtype


@register("stablehlo.reshape", rule=_reshape_rule,
          params=lambda shape: {"shape": int_tuple("reshape", "shape", shape)},
          decode=lambda op: {"shape": shape_dtype_of(op.results[0].type)[0]},
          evaluate=lambda x, shape: np.reshape(x, shape), traits={"movement"})
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
    return bind("stablehlo.reshape", [operand("reshape", x)], shape=shape, loc=loc)


def _transpose_rule(x, permutation):
    perm = check_axes("transpose", "permutation", permutation, x.ndim)
    if len(perm) != x.ndim:
        raise ValueError(f"transpose: permutation {list(perm)} is not a permutation of rank {x.ndim}")
    return tuple(x.shape[p] for p in perm), x.dtype


@register("stablehlo.transpose", rule=_transpose_rule,
          params=lambda permutation: {"permutation": int_tuple("transpose", "permutation", permutation)},
          attributes=lambda permutation: {"permutation": attr.i64s(permutation)},
          decode=lambda op: {"permutation": attr.read_ints(op, "permutation")},
          evaluate=lambda x, permutation: np.transpose(x, permutation), traits={"movement"})
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
    return bind("stablehlo.transpose", [operand("transpose", x)], permutation=permutation, loc=loc)


def _broadcast_params(shape, broadcast_dimensions):
    return {"shape": int_tuple("broadcast_in_dim", "shape", shape),
            "broadcast_dimensions": int_tuple("broadcast_in_dim", "broadcast_dimensions", broadcast_dimensions)}


def _broadcast_rule(x, shape, broadcast_dimensions):
    dims = broadcast_dimensions
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


def broadcast_evaluate(x: np.ndarray, shape, broadcast_dimensions) -> np.ndarray:
    dims = broadcast_dimensions
    order = np.argsort(dims)
    x = np.transpose(x, order) if x.ndim else x
    expanded = [1] * len(shape)
    for i, d in enumerate(np.asarray(dims, dtype=np.int64)[order]):
        expanded[d] = x.shape[i]
    return np.broadcast_to(x.reshape(expanded), tuple(shape))


@register("stablehlo.broadcast_in_dim", rule=_broadcast_rule, params=_broadcast_params,
          attributes=lambda shape, broadcast_dimensions: {"broadcast_dimensions": attr.i64s(broadcast_dimensions)},
          decode=lambda op: {"shape": shape_dtype_of(op.results[0].type)[0],
                             "broadcast_dimensions": attr.read_ints(op, "broadcast_dimensions")},
          evaluate=broadcast_evaluate, traits={"movement"})
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
    return bind("stablehlo.broadcast_in_dim", [operand("broadcast_in_dim", x)], shape=shape,
                broadcast_dimensions=broadcast_dimensions, loc=loc)


# ---------------------------------------------------------------- slices

def _slice_params(start_indices, limit_indices, strides=None):
    start = int_tuple("slice", "start_indices", start_indices)
    limit = int_tuple("slice", "limit_indices", limit_indices)
    strides = (1,) * len(start) if strides is None else int_tuple("slice", "strides", strides)
    return {"start_indices": start, "limit_indices": limit, "strides": strides}


def _slice_rule(x, start_indices, limit_indices, strides):
    for name, v in (("start_indices", start_indices), ("limit_indices", limit_indices), ("strides", strides)):
        if len(v) != x.ndim:
            raise ValueError(f"slice: {name} {list(v)} must have {x.ndim} entries, one per dimension")
    for d, (s, l, st, n) in enumerate(zip(start_indices, limit_indices, strides, x.shape)):
        if st < 1:
            raise ValueError(f"slice: strides {list(strides)} must be >= 1")
        if not 0 <= s <= l <= n:
            raise ValueError(f"slice: dim {d}: need 0 <= start <= limit <= size, got start {s}, "
                             f"limit {l}, size {n}")
    shape = tuple(-(-(l - s) // st) for s, l, st in zip(start_indices, limit_indices, strides))
    return shape, x.dtype


def _slice_evaluate(x, start_indices, limit_indices, strides):
    return x[tuple(builtins.slice(s, l, st) for s, l, st in zip(start_indices, limit_indices, strides))]


_SLICE_ATTRS = ("start_indices", "limit_indices", "strides")


@register("stablehlo.slice", rule=_slice_rule, params=_slice_params,
          attributes=lambda **p: {k: attr.i64s(p[k]) for k in _SLICE_ATTRS},
          decode=lambda op: {k: attr.read_ints(op, k) for k in _SLICE_ATTRS},
          evaluate=_slice_evaluate, traits={"movement"})
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
    return bind("stablehlo.slice", [operand("slice", x)], start_indices=start_indices,
                limit_indices=limit_indices, strides=strides, loc=loc)


def _dynamic_slice_rule(x, *starts, slice_sizes):
    if len(slice_sizes) != x.ndim:
        raise ValueError(f"dynamic_slice: slice_sizes {list(slice_sizes)} must have {x.ndim} entries, "
                         "one per dimension")
    if len(starts) != x.ndim:
        raise ValueError(f"dynamic_slice: got {len(starts)} start indices for rank {x.ndim}")
    for d, (s, n) in enumerate(zip(slice_sizes, x.shape)):
        if not 0 <= s <= n:
            raise ValueError(f"dynamic_slice: slice_sizes {list(slice_sizes)} exceed shape {x.shape} at dim {d}")
    for i, s in enumerate(starts):
        if s.shape != () or s.dtype.kind not in "iu":
            raise TypeError(f"dynamic_slice: start index {i} must be a 0-d integer tensor, got {s}")
        if s.dtype != starts[0].dtype:
            raise TypeError(f"dynamic_slice: start indices mix dtypes {starts[0].dtype} and {s.dtype}")
    return slice_sizes, x.dtype


def _dynamic_slice_evaluate(x, *starts, slice_sizes):
    """Start indices are clamped into [0, size - slice_size], as the spec says."""
    index = []
    for s, size, n in zip(starts, slice_sizes, x.shape):
        begin = int(np.clip(int(s), 0, n - size))
        index.append(builtins.slice(begin, begin + size))
    return x[tuple(index)]


@register("stablehlo.dynamic_slice", rule=_dynamic_slice_rule,
          params=lambda slice_sizes: {"slice_sizes": int_tuple("dynamic_slice", "slice_sizes", slice_sizes)},
          attributes=lambda slice_sizes: {"slice_sizes": attr.i64s(slice_sizes)},
          decode=lambda op: {"slice_sizes": attr.read_ints(op, "slice_sizes")},
          evaluate=_dynamic_slice_evaluate,
          arrange=lambda operands: (operands[0], operands[1:]))
def dynamic_slice(x, start_indices, slice_sizes, *, loc=None) -> Tensor:
    """Slice of static ``slice_sizes`` at run-time ``start_indices`` (clamped into range);
    emits ``stablehlo.dynamic_slice``.

    Args:
      x: Tensor.
      start_indices: one 0-d integer Tensor (or Python int, given the Tensors' dtype, else int64)
        per dimension.
      slice_sizes: static sizes, 0 <= size <= dim.
    Returns:
      A Tensor of shape ``slice_sizes``.
    Example:
      >>> y = ops.dynamic_slice(x, (i, 0), (1, 8))
    """
    x = operand("dynamic_slice", x)
    index_dtype = next((s.dtype for s in start_indices if isinstance(s, Tensor)), np.dtype(np.int64))
    starts = [operand("dynamic_slice", s, "start index",
                      dtype=index_dtype if not hasattr(s, "dtype") else None) for s in start_indices]
    return bind("stablehlo.dynamic_slice", [x, *starts], slice_sizes=slice_sizes, loc=loc)


# ---------------------------------------------------------------- concatenate, reverse

def _concatenate_rule(*xs, dimension):
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


def _concatenate_params(dimension):
    return {"dimension": int_tuple("concatenate", "dimension", (dimension,))[0]}


@register("stablehlo.concatenate", rule=_concatenate_rule, params=_concatenate_params,
          attributes=lambda dimension: {"dimension": attr.i64(dimension)},
          decode=lambda op: {"dimension": attr.read_int(op, "dimension")},
          evaluate=lambda *xs, dimension: np.concatenate(xs, axis=dimension),
          arrange=lambda operands: (list(operands),), traits={"movement"})
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
    return bind("stablehlo.concatenate", xs, dimension=dimension, loc=loc)


def _reverse_rule(x, dimensions):
    check_axes("reverse", "dimensions", dimensions, x.ndim)
    return x.shape, x.dtype


@register("stablehlo.reverse", rule=_reverse_rule,
          params=lambda dimensions: {"dimensions": int_tuple("reverse", "dimensions", dimensions)},
          attributes=lambda dimensions: {"dimensions": attr.i64s(dimensions)},
          decode=lambda op: {"dimensions": attr.read_ints(op, "dimensions")},
          evaluate=lambda x, dimensions: np.flip(x, dimensions) if dimensions else x, traits={"movement"})
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
    return bind("stablehlo.reverse", [operand("reverse", x)], dimensions=dimensions, loc=loc)


__all__ = ["constant", "iota", "reshape", "transpose", "broadcast_in_dim", "slice", "dynamic_slice",
           "concatenate", "reverse"]
