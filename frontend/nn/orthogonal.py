"""hloforge.nn.initializers' orthogonal and delta_orthogonal (jax.nn.initializers'): the shape as a
matrix, filled with jax.random.orthogonal's sample (the Q of a normal sample's QR, through the
LAPACK/cuSOLVER custom calls jax emits, so the bits agree)."""
from __future__ import annotations

import math
import operator

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend import numpy as hnp
from hloforge.frontend import random as hr
from hloforge.frontend.nn.initializer_args import (
    filled, init_dtype, init_shape, no_sharding, runtime, settled)
from hloforge.frontend.numpy._base import asarray
from hloforge.frontend.random._eager import eager

_QR_DTYPES = tuple(np.dtype(d) for d in (np.float32, np.float64, np.complex64, np.complex128))


def _orthogonal_matrix(key, n, m, dtype):
    """jax.random.orthogonal(key, n, (), dtype, m): Q of a normal (max, min) sample's QR, its
    columns' signs fixed by R's diagonal (transposed when n < m)."""
    z = hr.normal(key, (max(n, m), min(n, m)), dtype)
    q, r = hnp.linalg.qr(z)
    d = hnp.linalg.diagonal(r)
    x = q * hnp.expand_dims(ops.sign(d), -2)
    return hnp.matrix_transpose(x) if n < m else x


@eager(static=("shape", "dtype", "column_axis"))
def _orthogonal(key, shape, dtype, scale, column_axis):
    n_cols = shape[column_axis]
    n_rows = math.prod(shape) // n_cols
    q = _orthogonal_matrix(key, n_rows, n_cols, dtype)
    q = hnp.reshape(q, tuple(np.delete(shape, column_axis)) + (n_cols,))
    q = hnp.moveaxis(q, -1, column_axis)
    return asarray(scale, dtype) * settled(q)


def _orthogonal_checks(name, shape, dtype, column_axis):
    if dtype not in _QR_DTYPES:
        raise TypeError(f"hloforge.nn.initializers.{name}: dtype {dtype} is not supported (the QR needs "
                        "float32, float64, complex64 or complex128)")
    try:
        operator.index(column_axis)
        shape[column_axis]
    except (TypeError, IndexError):
        raise ValueError(f"hloforge.nn.initializers.{name}: column_axis {column_axis!r} is not an axis of the "
                         f"shape {shape}") from None


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer of (semi-)orthogonal matrices (jax.nn.initializers.orthogonal): the shape is
    read as a matrix with ``shape[column_axis]`` columns, filled with jax.random.orthogonal's
    sample (a normal sample's QR: the LAPACK/cuSOLVER custom calls jax emits), times ``scale``.

    Args:
      scale: multiplies the result (default 1.0).
      column_axis: the axis of the columns that are orthonormal (default -1).
      dtype: the initializer's default dtype: float32 (if None), float64, complex64, complex128.
    Example:
      >>> w = hf.nn.initializers.orthogonal()(key, (256, 256))
    """
    def init(key, shape, dtype=dtype, out_sharding=None):
        no_sharding("orthogonal", out_sharding)
        d = init_dtype("orthogonal", dtype)
        shape = init_shape("orthogonal", shape)
        if len(shape) < 2:
            raise ValueError(f"hloforge.nn.initializers.orthogonal: needs at least a 2D shape, got {shape}")
        _orthogonal_checks("orthogonal", shape, d, column_axis)
        if 0 in shape:
            return filled(shape, d, 0)
        return _orthogonal(key, shape, d, runtime(scale, d), operator.index(column_axis))
    return init


@eager(static=("shape", "dtype", "column_axis"))
def _delta_orthogonal(key, shape, dtype, scale, column_axis):
    matrix = _orthogonal(key, shape[-2:], dtype, scale, column_axis)
    center = tuple((k - 1) // 2 for k in shape[:-2])
    return hnp.zeros(shape, dtype).at[center].set(matrix)


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer of delta-orthogonal convolution kernels (jax.nn.initializers.delta_orthogonal):
    zeros except the spatial center, which holds an orthogonal (in, out) matrix.

    Args:
      scale: multiplies the orthogonal matrix (default 1.0).
      column_axis: its column axis (default -1).
      dtype: the initializer's default dtype (as for ``orthogonal``).
    Returns:
      ``init(key, shape)`` for 3D, 4D or 5D shapes (spatial..., in, out) with in <= out.
    Example:
      >>> k = hf.nn.initializers.delta_orthogonal()(key, (3, 3, 16, 32))
    """
    def init(key, shape, dtype=dtype, out_sharding=None):
        no_sharding("delta_orthogonal", out_sharding)
        d = init_dtype("delta_orthogonal", dtype)
        shape = init_shape("delta_orthogonal", shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError(f"hloforge.nn.initializers.delta_orthogonal: needs a 3D, 4D or 5D shape, got {shape}")
        if shape[-1] < shape[-2]:
            raise ValueError(f"hloforge.nn.initializers.delta_orthogonal: fan_in {shape[-2]} must be less than or "
                             f"equal to fan_out {shape[-1]} (shape {shape})")
        _orthogonal_checks("delta_orthogonal", shape[-2:], d, column_axis)
        if 0 in shape:
            return filled(shape, d, 0)
        return _delta_orthogonal(key, shape, d, runtime(scale, d), operator.index(column_axis))
    return init


__all__ = ["orthogonal", "delta_orthogonal"]
