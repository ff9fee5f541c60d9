"""jax.lax's shape functions: reshape, broadcasts, squeeze/expand_dims, transpose, rev, pad,
concatenate, split, stack/unstack, tile, full/full_like/empty, and the static helpers dtype,
broadcast_shapes and shape_as_value."""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax._common import lax_operand
from hloforge.frontend.lax.elementwise import as_operand, check_same_dtypes, convert_element_type
from hloforge.frontend.tracing import Tensor


def _ints(name, what, values):
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"hloforge.lax.{name}: {what} must be a sequence of ints, got {values!r}") from None


def _axis(name, axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"hloforge.lax.{name}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _no_sharding(name, value, what="out_sharding"):
    if value is not None:
        raise ValueError(f"hloforge.lax.{name}: {what}={value!r} is not supported here; pass None")


def _shape(name, shape):
    shape = (operator.index(shape),) if isinstance(shape, (int, np.integer)) else _ints(name, "shape", shape)
    if any(n < 0 for n in shape):
        raise TypeError(f"hloforge.lax.{name}: shape {shape} has a negative dimension")
    return shape


# ---------------------------------------------------------------- static helpers

def dtype(x):
    """jax.lax.dtype: the dtype of an array, Tensor or scalar (Python scalars: int32, float32,
    complex64, bool, as jax without x64), or a dtype-like canonicalized. No IR.

    Args:
      x: a Tensor, array, scalar or dtype-like.
    Returns:
      A numpy dtype.
    Example:
      >>> hf.lax.dtype(1.0)   # float32
    """
    if isinstance(x, Tensor) or hasattr(x, "dtype") and not isinstance(x, type):
        return np.dtype(x.dtype)
    if type(x) in (bool, int, float, builtins.complex):
        return np.dtype({bool: np.bool_, int: np.int32, float: np.float32, builtins.complex: np.complex64}[type(x)])
    return dtypes.canonical(x)


_dtype_of = dtype  # (full_like's dtype argument hides the function)


def broadcast_shapes(*shapes):
    """jax.lax.broadcast_shapes: numpy's broadcasting of shapes (ranks aligned on the right). No IR.

    Args:
      *shapes: tuples of ints.
    Returns:
      The broadcast shape.
    Example:
      >>> hf.lax.broadcast_shapes((2, 1), (3,))   # (2, 3)
    """
    shapes = [_ints("broadcast_shapes", "shape", s) for s in shapes]
    if not shapes:
        raise TypeError("hloforge.lax.broadcast_shapes: at least one shape is required")
    ndim = builtins.max(len(s) for s in shapes)
    out = []
    for d in range(ndim):
        sizes = {s[d - ndim + len(s)] for s in shapes if d - ndim + len(s) >= 0}
        big = sizes - {1}
        if len(big) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={[tuple(s) for s in shapes]}")
        out.append(big.pop() if big else 1)
    return tuple(out)


def shape_as_value(shape):
    """jax.lax.shape_as_value: a static shape as a numpy integer array (int32, or int64 for sizes
    past int32). No IR.

    Args:
      shape: a tuple of ints.
    Returns:
      A 1-d numpy array.
    Example:
      >>> hf.lax.shape_as_value((2, 3))   # array([2, 3], dtype=int32)
    """
    shape = _ints("shape_as_value", "shape", shape)
    wide = any(n > np.iinfo(np.int32).max for n in shape)
    return np.asarray(shape, np.int64 if wide else np.int32).reshape(len(shape))


# ---------------------------------------------------------------- reshape and broadcasts

def reshape(operand, new_sizes, dimensions=None, *, out_sharding=None):
    """jax.lax.reshape: ``operand`` (first transposed by ``dimensions``) in row-major order as
    ``new_sizes``; emits ``stablehlo.reshape`` (and a ``transpose``).

    Args:
      operand: an array.
      new_sizes: the new shape (same number of elements; no -1).
      dimensions: None, or a permutation applied before the reshape.
      out_sharding: None.
    Returns:
      An array of shape ``new_sizes``.
    Example:
      >>> y = hf.lax.reshape(x, (2, 6))
    """
    _no_sharding("reshape", out_sharding)
    x = as_operand("reshape", operand)
    new_sizes = _ints("reshape", "new_sizes", new_sizes)
    if any(n < 0 for n in new_sizes):
        raise TypeError(f"hloforge.lax.reshape: new_sizes must all be positive, got {new_sizes}.")
    if math.prod(new_sizes) != x.size:
        raise TypeError(f"hloforge.lax.reshape: total size must be unchanged, got new_sizes {new_sizes} (of total "
                        f"size {math.prod(new_sizes)}) for shape {x.shape} (of total size {x.size}).")
    if dimensions is not None:
        x = transpose(x, dimensions)
    return x if x.shape == new_sizes else ops.reshape(x, new_sizes)


def broadcast_in_dim(operand, shape, broadcast_dimensions, *, out_sharding=None):
    """jax.lax.broadcast_in_dim: operand dimension i becomes result dimension
    ``broadcast_dimensions[i]`` (size 1 or equal); emits ``stablehlo.broadcast_in_dim``.

    Args:
      operand: an array.
      shape: the result shape.
      broadcast_dimensions: one result dimension per operand dimension, increasing or not.
      out_sharding: None.
    Returns:
      An array of ``shape``.
    Example:
      >>> y = hf.lax.broadcast_in_dim(row, (4, 3), (1,))
    """
    _no_sharding("broadcast_in_dim", out_sharding)
    x = as_operand("broadcast_in_dim", operand)
    shape = _shape("broadcast_in_dim", shape)
    dims = _ints("broadcast_in_dim", "broadcast_dimensions", broadcast_dimensions)
    if len(dims) != x.ndim:
        raise TypeError(f"hloforge.lax.broadcast_in_dim: broadcast_dimensions must have length equal to operand "
                        f"ndim; got broadcast_dimensions {dims} for operand ndim {x.ndim}.")
    if len(shape) < x.ndim:
        raise TypeError(f"hloforge.lax.broadcast_in_dim: target broadcast shape must have equal or higher rank to "
                        f"the operand shape; got operand ndim {x.ndim} and target broadcast ndim {len(shape)}.")
    if len(set(dims)) != len(dims) or any(not 0 <= d < len(shape) for d in dims):
        raise TypeError(f"hloforge.lax.broadcast_in_dim: broadcast_dimensions must be distinct dimensions of the "
                        f"output, got {dims} for operand ndim {x.ndim} and shape {shape}.")
    if any(x.shape[i] not in (1, shape[d]) for i, d in enumerate(dims)):
        raise TypeError(f"hloforge.lax.broadcast_in_dim: operand dimension sizes must either be 1, or be equal to "
                        f"their corresponding dimensions in the target broadcast shape; got operand of shape "
                        f"{x.shape}, target broadcast shape {shape}, broadcast_dimensions {dims}")
    if x.shape == shape and dims == tuple(range(x.ndim)):
        return x
    return ops.broadcast_in_dim(x, shape, dims)


def broadcast(operand, sizes, *, out_sharding=None):
    """jax.lax.broadcast: new leading dimensions of ``sizes``; emits ``stablehlo.broadcast_in_dim``.

    Args:
      operand: an array.
      sizes: the sizes of the new leading dimensions.
      out_sharding: None.
    Returns:
      An array of shape ``sizes + operand.shape``.
    Example:
      >>> y = hf.lax.broadcast(x, (4,))
    """
    _no_sharding("broadcast", out_sharding)
    x = as_operand("broadcast", operand)
    sizes = _shape("broadcast", sizes)
    return broadcast_in_dim(x, sizes + x.shape, tuple(range(len(sizes), len(sizes) + x.ndim)))


def _broadcast_to(name, x, shape):
    """numpy's broadcast_to: ranks aligned on the right."""
    if x.ndim > len(shape) or any(n not in (1, m) for n, m in zip(x.shape[::-1], shape[::-1])):
        raise ValueError(f"hloforge.lax.{name}: incompatible types for broadcasting: input type "
                         f"{x.dtype.name}{list(x.shape)} and requested type {x.dtype.name}{list(shape)}")
    return broadcast_in_dim(x, shape, tuple(range(len(shape) - x.ndim, len(shape))))


def broadcast_like(arr, like_arr):
    """jax.lax.broadcast_like: ``arr`` broadcast (numpy's rules) to ``like_arr``'s shape; emits
    ``stablehlo.broadcast_in_dim``.

    Args:
      arr: an array.
      like_arr: an array (or anything with a ``shape``) whose shape is the target.
    Returns:
      An array of ``like_arr``'s shape and ``arr``'s dtype.
    Example:
      >>> y = hf.lax.broadcast_like(row, matrix)
    """
    x = as_operand("broadcast_like", arr)
    shape = tuple(like_arr.shape) if hasattr(like_arr, "shape") else np.shape(like_arr)
    return _broadcast_to("broadcast_like", x, shape)


def broadcast_to_rank(x, rank):
    """jax.lax.broadcast_to_rank: leading size-1 dimensions up to ``rank`` (an array of higher rank
    is returned as is); emits ``stablehlo.broadcast_in_dim``.

    Args:
      x: an array.
      rank: the rank wanted.
    Returns:
      An array of rank ``max(x.ndim, rank)``.
    Example:
      >>> y = hf.lax.broadcast_to_rank(v, 3)   # (1, 1, n)
    """
    t = as_operand("broadcast_to_rank", x)
    rank = operator.index(rank)
    return t if t.ndim >= rank else broadcast(t, (1,) * (rank - t.ndim))


def expand_dims(array, dimensions):
    """jax.lax.expand_dims: size-1 dimensions inserted at ``dimensions`` (of the result; negative
    ones count from its end); emits ``stablehlo.broadcast_in_dim``.

    Args:
      array: an array.
      dimensions: result dimensions to insert.
    Returns:
      An array of rank ``array.ndim + len(dimensions)``.
    Example:
      >>> y = hf.lax.expand_dims(x, (0, -1))
    """
    x = as_operand("expand_dims", array)
    dimensions = _ints("expand_dims", "dimensions", dimensions)
    if len(set(dimensions)) != len(dimensions):
        raise ValueError(f"hloforge.lax.expand_dims: repeated axis: {list(dimensions)}")
    ndim = x.ndim + len(dimensions)
    dims = [_axis("expand_dims", d, ndim) for d in dimensions]
    if len(set(dims)) != len(dims):
        raise ValueError(f"hloforge.lax.expand_dims: repeated axis: {dims}")
    shape = list(x.shape)
    for d in sorted(dims):
        shape.insert(d, 1)
    return broadcast_in_dim(x, tuple(shape), tuple(d for d in range(ndim) if d not in dims))


def squeeze(array, dimensions):
    """jax.lax.squeeze: remove size-1 ``dimensions`` (negative ones count from the end); emits
    ``stablehlo.reshape``.

    Args:
      array: an array.
      dimensions: the size-1 dimensions to remove.
    Returns:
      An array of rank ``array.ndim - len(dimensions)``.
    Example:
      >>> y = hf.lax.squeeze(x, (0,))
    """
    x = as_operand("squeeze", array)
    dims = sorted(_axis("squeeze", d, x.ndim) for d in _ints("squeeze", "dimensions", dimensions))
    if len(set(dims)) != len(dims):
        raise ValueError(f"hloforge.lax.squeeze: dimensions are not unique: {dims}")
    if any(x.shape[d] != 1 for d in dims):
        raise ValueError(f"hloforge.lax.squeeze: cannot select an axis to squeeze out which has size not equal "
                         f"to one, got shape={x.shape} and dimensions={tuple(dims)}")
    shape = tuple(n for d, n in enumerate(x.shape) if d not in dims)
    return x if shape == x.shape else ops.reshape(x, shape)


def collapse(operand, start_dimension, stop_dimension=None):
    """jax.lax.collapse: dimensions ``[start_dimension, stop_dimension)`` (Python slice rules)
    merged into one; emits ``stablehlo.reshape``.

    Args:
      operand: an array.
      start_dimension, stop_dimension: the range of dimensions (None: to the end).
    Returns:
      The reshaped array.
    Example:
      >>> y = hf.lax.collapse(x, 1)   # (a, b, c) -> (a, b * c)
    """
    x = as_operand("collapse", operand)
    lo, hi, _ = builtins.slice(start_dimension, stop_dimension).indices(x.ndim)
    if hi < lo:
        raise ValueError(f"hloforge.lax.collapse: invalid dimension range passed to collapse: "
                         f"{x.shape}[{start_dimension}:{stop_dimension}]")
    return reshape(x, x.shape[:lo] + (math.prod(x.shape[lo:hi]),) + x.shape[hi:])


def transpose(operand, permutation):
    """jax.lax.transpose: result dimension i is operand dimension ``permutation[i]``; emits
    ``stablehlo.transpose``.

    Args:
      operand: an array.
      permutation: a permutation of ``range(operand.ndim)``.
    Returns:
      The transposed array.
    Example:
      >>> y = hf.lax.transpose(x, (1, 0))
    """
    x = as_operand("transpose", operand)
    perm = _ints("transpose", "permutation", permutation)
    if sorted(perm) != list(range(x.ndim)):
        raise TypeError(f"hloforge.lax.transpose: permutation isn't a permutation of operand dimensions, got "
                        f"permutation {perm} for operand shape {x.shape}.")
    return x if perm == tuple(range(x.ndim)) else ops.transpose(x, perm)


def rev(operand, dimensions):
    """jax.lax.rev: reverse the order of elements along ``dimensions``; emits ``stablehlo.reverse``.

    Args:
      operand: an array.
      dimensions: distinct dimensions in ``[0, ndim)``.
    Returns:
      An array of the operand's shape.
    Example:
      >>> y = hf.lax.rev(x, (0,))
    """
    x = as_operand("rev", operand)
    dims = _ints("rev", "dimensions", dimensions)
    if len(set(dims)) != len(dims):
        raise TypeError(f"hloforge.lax.rev: dimensions must be unique, got {dims}.")
    if any(not 0 <= d < x.ndim for d in dims):
        raise TypeError(f"hloforge.lax.rev: dimensions must be in [0, {x.ndim}), got {dims}.")
    return ops.reverse(x, dims) if dims else x


def pad(operand, padding_value, padding_config):
    """jax.lax.pad: ``(low, high, interior)`` padding per dimension (negative low/high crop); emits
    ``stablehlo.pad``.

    Args:
      operand: an array.
      padding_value: a 0-d array of the operand's dtype.
      padding_config: one ``(low, high, interior)`` triple per dimension, interior >= 0.
    Returns:
      The padded array.
    Example:
      >>> y = hf.lax.pad(x, np.float32(0), [(1, 2, 0), (0, 0, 1)])
    """
    x = as_operand("pad", operand)
    v = as_operand("pad", padding_value)
    if v.dtype != x.dtype:
        raise TypeError(f"hloforge.lax.pad: operand and padding_value must be same dtype: got {x.dtype.name} and "
                        f"{v.dtype.name}.")
    if v.ndim:
        raise ValueError(f"hloforge.lax.pad: padding_value must be a scalar; got shape {v.shape}")
    config = [_ints("pad", "padding_config entry", c) for c in padding_config]
    if len(config) != x.ndim or any(len(c) != 3 for c in config):
        raise ValueError(f"hloforge.lax.pad: padding_config must hold one (low, high, interior) triple per axis of "
                         f"the operand, got padding_config {config} for operand shape {x.shape}")
    if any(c[2] < 0 for c in config):
        raise ValueError(f"hloforge.lax.pad: interior padding in padding_config must be nonnegative, got "
                         f"padding_config {config}")
    result = [lo + hi + n + builtins.max(n - 1, 0) * it for n, (lo, hi, it) in zip(x.shape, config)]
    if any(n < 0 for n in result):
        raise ValueError(f"hloforge.lax.pad: dimension size after padding is not at least 0, got result shape "
                         f"{tuple(result)}, for padding_config {config} and operand shape {x.shape}")
    return ops.pad(x, v, [c[0] for c in config], [c[1] for c in config], [c[2] for c in config])


# ---------------------------------------------------------------- joining and splitting

def concatenate(operands, dimension):
    """jax.lax.concatenate: join arrays of one dtype and rank along ``dimension`` (in
    ``[0, ndim)``); emits ``stablehlo.concatenate``.

    Args:
      operands: a sequence of arrays.
      dimension: the dimension to join along.
    Returns:
      The joined array.
    Example:
      >>> y = hf.lax.concatenate([a, b], 0)
    """
    xs = [as_operand("concatenate", x) for x in operands]
    if not xs:
        raise ValueError("hloforge.lax.concatenate requires a non-empty sequence of arrays")
    check_same_dtypes("concatenate", xs)
    dimension = operator.index(dimension)
    shapes = ", ".join(str(x.shape) for x in xs)
    if len({x.ndim for x in xs}) != 1:
        raise TypeError(f"hloforge.lax.concatenate: cannot concatenate arrays with different numbers of "
                        f"dimensions: got {shapes}.")
    if not 0 <= dimension < xs[0].ndim:
        raise TypeError(f"hloforge.lax.concatenate: dimension out of bounds: dimension {dimension} for shapes "
                        f"{shapes}.")
    if len({x.shape[:dimension] + x.shape[dimension + 1:] for x in xs}) != 1:
        raise TypeError(f"hloforge.lax.concatenate: cannot concatenate arrays with shapes that differ in "
                        f"dimensions other than the one being concatenated: concatenating along dimension "
                        f"{dimension} for shapes {shapes}.")
    return xs[0] if len(xs) == 1 else ops.concatenate(xs, dimension)


def split(operand, sizes, axis=0):
    """jax.lax.split: consecutive pieces of ``sizes`` along ``axis``; emits one ``stablehlo.slice``
    per piece.

    Args:
      operand: an array.
      sizes: non-negative sizes summing to ``operand.shape[axis]``.
      axis: the dimension to split.
    Returns:
      A list of arrays.
    Example:
      >>> a, b = hf.lax.split(x, (1, 2), axis=1)
    """
    x = as_operand("split", operand)
    axis = _axis("split", axis, x.ndim)
    sizes = _ints("split", "sizes", sizes)
    if any(s < 0 for s in sizes):
        raise ValueError(f"hloforge.lax.split: sizes passed to split must be nonnegative, got {list(sizes)}")
    if sum(sizes) != x.shape[axis]:
        raise ValueError(f"hloforge.lax.split: sum of sizes {sum(sizes)} must be equal to dimension {axis} of the "
                         f"operand shape {list(x.shape)}")
    out, start = [], 0
    for s in sizes:
        lo = tuple(start if d == axis else 0 for d in range(x.ndim))
        hi = tuple(start + s if d == axis else n for d, n in enumerate(x.shape))
        out.append(ops.slice(x, lo, hi))
        start += s
    return out


def stack(operands, axis=0):
    """jax.lax.stack: arrays of one shape and dtype along a new dimension ``axis``; emits
    ``stablehlo.broadcast_in_dim`` per operand and one ``concatenate``.

    Args:
      operands: a non-empty sequence of arrays.
      axis: the new dimension (negative: from the end of the result).
    Returns:
      An array of rank ``ndim + 1``.
    Example:
      >>> y = hf.lax.stack([a, b], axis=-1)
    """
    xs = [as_operand("stack", x) for x in operands]
    if not xs:
        raise ValueError("hloforge.lax.stack expects at least one operand, got 0.")
    if len({x.shape for x in xs}) != 1:
        raise ValueError(f"hloforge.lax.stack: all input arrays must have the same shape. Got "
                         f"{', '.join(str(x.shape) for x in xs)}.")
    check_same_dtypes("stack", xs)
    axis = _axis("stack", axis, xs[0].ndim + 1)
    return concatenate([expand_dims(x, (axis,)) for x in xs], axis)


def unstack(x, axis=0):
    """jax.lax.unstack: the slices along ``axis``, that dimension removed; emits ``stablehlo.slice``
    and ``reshape`` per slice.

    Args:
      x: an array of rank >= 1.
      axis: the dimension to unstack.
    Returns:
      A tuple of ``x.shape[axis]`` arrays.
    Example:
      >>> a, b = hf.lax.unstack(pair)
    """
    t = as_operand("unstack", x)
    if t.ndim == 0:
        raise ValueError(f"hloforge.lax.unstack requires arrays with rank > 0, however a scalar array of shape "
                         f"{t.shape} was passed.")
    axis = _axis("unstack", axis, t.ndim)
    return tuple(squeeze(piece, (axis,)) for piece in split(t, (1,) * t.shape[axis], axis))


def tile(operand, reps):
    """jax.lax.tile: ``operand`` repeated ``reps[d]`` times along each dimension d; emits
    ``stablehlo.broadcast_in_dim`` and ``reshape``.

    Args:
      operand: an array.
      reps: one non-negative count per dimension.
    Returns:
      An array of shape ``operand.shape * reps``.
    Example:
      >>> y = hf.lax.tile(x, (2, 3))
    """
    x = as_operand("tile", operand)
    reps = _ints("tile", "reps", reps)
    if len(reps) != x.ndim:
        raise TypeError(f"hloforge.lax.tile: reps length must be equal to the ndim of x, got len(reps)={len(reps)} "
                        f"and x.ndim={x.ndim}.")
    if any(r < 0 for r in reps):
        raise TypeError(f"hloforge.lax.tile: reps must be non-negative, got {reps}")
    wide = tuple(v for r, n in zip(reps, x.shape) for v in (r, n))
    spread = ops.broadcast_in_dim(x, wide, tuple(range(1, 2 * x.ndim, 2)))
    return ops.reshape(spread, tuple(r * n for r, n in zip(reps, x.shape)))


# ---------------------------------------------------------------- creation

def full(shape, fill_value, dtype=None, *, sharding=None):
    """jax.lax.full: an array of ``shape`` filled with a scalar; emits ``stablehlo.broadcast_in_dim``
    of the scalar (``convert``-ed to ``dtype`` if given).

    Args:
      shape: the shape.
      fill_value: a scalar (Python scalars: int32/float32/complex64, as jax without x64) or 0-d Tensor.
      dtype: the result dtype (default: the fill value's).
      sharding: None.
    Returns:
      An array of ``shape``.
    Example:
      >>> y = hf.lax.full((2, 3), 1.5)
    """
    _no_sharding("full", sharding, "sharding")
    shape = _shape("full", shape)
    if isinstance(fill_value, Tensor) or dtype is None:
        v = lax_operand(fill_value, "hloforge.lax.full fill_value")
    elif np.shape(fill_value):
        v = None
    else:  # (cast as jax does: 1.5 -> 1, 300 -> 44 in int8)
        with np.errstate(all="ignore"):
            v = ops.constant(np.asarray(fill_value).astype(dtypes.canonical(dtype)))
    if v is None or v.ndim:
        raise TypeError(f"hloforge.lax.full must be called with scalar fill_value, got fill_value.shape "
                        f"{np.shape(fill_value) if v is None else v.shape}.")
    if dtype is not None and v.dtype != dtypes.canonical(dtype):
        v = convert_element_type(v, dtype)
    return ops.broadcast_in_dim(v, shape, ()) if shape else v


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """jax.lax.full_like: ``full`` with ``x``'s shape and dtype by default.

    Args:
      x: an array or Tensor (anything with ``shape`` and ``dtype``; Python scalars count as 0-d).
      fill_value: a scalar.
      dtype, shape: override x's.
      sharding: None.
    Returns:
      The filled array; emits ``stablehlo.broadcast_in_dim`` of a constant.
    Example:
      >>> y = hf.lax.full_like(x, 0)
    """
    _no_sharding("full_like", sharding, "sharding")
    target_shape = (tuple(x.shape) if hasattr(x, "shape") else np.shape(x)) if shape is None else shape
    target_dtype = dtype if dtype is not None else _dtype_of(x)
    return full(target_shape, fill_value, target_dtype)


def empty(shape, dtype, *, out_sharding=None):
    """jax.lax.empty: an array whose values are not to be relied on (zeros here, as jax's lowering);
    emits a ``stablehlo.constant``.

    Args:
      shape: the shape (an int or a tuple).
      dtype: the dtype.
      out_sharding: None.
    Returns:
      An array of ``shape`` and ``dtype``.
    Example:
      >>> buf = hf.lax.empty((4,), np.float32)
    """
    _no_sharding("empty", out_sharding)
    return full(_shape("empty", shape), 0, dtype)


__all__ = ["dtype", "broadcast_shapes", "shape_as_value", "reshape", "broadcast_in_dim", "broadcast", "broadcast_like",
           "broadcast_to_rank", "expand_dims", "squeeze", "collapse", "transpose", "rev", "pad", "concatenate", "split",
           "stack", "unstack", "tile", "full", "full_like", "empty"]
