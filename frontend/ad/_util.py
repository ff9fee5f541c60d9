"""Small emitters the derivative rules share (all build StableHLO through hloforge.ops)."""
from __future__ import annotations

import threading

import numpy as np

from hloforge.frontend import dtypes
from hloforge.frontend import ops
from hloforge.frontend.tracing import Tensor


def differentiable(dtype) -> bool:
    """Float and complex values carry tangents; integers and bools have zero tangents."""
    return dtypes.is_inexact(dtype)


def full(value, shape, dtype) -> Tensor:
    """A splat of ``value`` (a broadcast 0-d constant)."""
    c = ops.constant(np.asarray(value, dtype=dtypes.canonical(dtype)))
    return c if tuple(shape) == () else ops.broadcast_in_dim(c, tuple(shape), ())


def zeros_like(x) -> Tensor:
    return full(0, x.shape, x.dtype)


def like(value, x) -> Tensor:
    return full(value, x.shape, x.dtype)


def instantiate(t, x) -> Tensor:
    """``t``, or zeros of x's shape and dtype where ``t`` is a symbolic zero (None)."""
    return zeros_like(x) if t is None else t


def conj(x) -> Tensor:
    if not dtypes.is_complex(x.dtype):
        return x
    return ops.complex(ops.real(x), ops.neg(ops.imag(x)))


def to_real(x) -> Tensor:
    """The real part of a complex cotangent (for real primals), else ``x``."""
    return ops.real(x) if dtypes.is_complex(x.dtype) else x


def sum_to_scalar(x) -> Tensor:
    return ops.reduce(x, 0, tuple(range(x.ndim)), "add") if x.ndim else x


def unbroadcast(ct, shape) -> Tensor:
    """Sum ``ct`` down to a 0-d ``shape`` (operands like select's pred or clamp's bounds)."""
    return sum_to_scalar(ct) if tuple(shape) == () and ct.shape != () else ct


def add_any(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return ops.add(a, b)


def replace_zero(x) -> Tensor:
    """x with zeros replaced by ones (guards a division whose numerator is zero there)."""
    zero = zeros_like(x)
    return ops.select(ops.compare(x, zero, "EQ"), like(1, x), x)


_needed = threading.local()


def needs(i: int) -> bool:
    """Inside a vjp rule: whether operand ``i``'s cotangent is used (it depends on the
    differentiated inputs). Rules may skip emitting the others; returning them anyway is fine."""
    mask = getattr(_needed, "mask", None)
    return mask is None or mask[i]


def set_needed(mask):
    _needed.mask = mask
