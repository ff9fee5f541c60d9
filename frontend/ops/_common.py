"""Helpers shared by the op families: operand conversion and dtype-category checks."""
from __future__ import annotations

import functools
import operator

from hloforge.frontend import dtypes
from hloforge.frontend.tracing import Tensor, as_tensor

# dtype categories as the StableHLO spec names them
BOOL, SINT, UINT, FLOAT, COMPLEX = "bool", "signed integer", "unsigned integer", "float", "complex"
INT = (SINT, UINT)
NUMERIC = (SINT, UINT, FLOAT, COMPLEX)
ALL = (BOOL, SINT, UINT, FLOAT, COMPLEX)


@functools.lru_cache(maxsize=256)  # (rules ask for every operand of every op)
def category(dtype) -> str:
    if dtypes.is_bool(dtype):
        return BOOL
    if dtypes.is_signed_int(dtype):
        return SINT
    if dtypes.is_unsigned_int(dtype):
        return UINT
    if dtypes.is_float(dtype):
        return FLOAT
    return COMPLEX


def check_dtype(op: str, x: Tensor, allowed, what="operand") -> None:
    if category(x.dtype) not in allowed:
        raise TypeError(f"{op}: {what} dtype {x.dtype} is not supported; expected {' or '.join(allowed)}")


def operand(op: str, x, what="operand", dtype=None) -> Tensor:
    return as_tensor(x, dtype, what=f"{op} {what}" if what else op)


def same_shape_and_dtype(op: str, *xs: Tensor) -> None:
    first = xs[0]
    for x in xs[1:]:
        if x.dtype != first.dtype:
            raise TypeError(f"{op}: operand dtypes {first.dtype} and {x.dtype} differ; convert one first")
        if x.shape != first.shape:
            raise ValueError(
                f"{op}: operand shapes {first.shape} and {x.shape} differ; StableHLO ops do not "
                "broadcast (use hloforge.numpy or ops.broadcast_in_dim)")


def int_tuple(op: str, name: str, values, length=None, per="dimension") -> tuple:
    """Normalize a sequence of Python ints, with a clear error for anything else (``per``: what
    each of ``length`` entries stands for, in that error)."""
    if type(values) is tuple and all(type(v) is int for v in values):
        out = values  # (the common case: rules and AD pass canonical tuples)
    else:
        try:
            out = tuple(operator.index(v) for v in values)
        except TypeError:
            raise TypeError(f"{op}: {name} must be a sequence of ints, got {values!r}") from None
    if length is not None and len(out) != length:
        raise ValueError(f"{op}: {name} {list(out)} must have {length} entries, one per {per}")
    return out


def check_axes(op: str, name: str, axes, ndim: int, unique=True) -> tuple:
    """Validate dimension numbers in [0, ndim)."""
    axes = int_tuple(op, name, axes)
    for a in axes:
        if not 0 <= a < ndim:
            raise ValueError(f"{op}: {name} {list(axes)} out of range for rank {ndim}")
    if unique and len(set(axes)) != len(axes):
        raise ValueError(f"{op}: {name} {list(axes)} repeat a dimension")
    return axes

