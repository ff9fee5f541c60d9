"""What hloforge.nn.initializers' builders share: argument checks (dtype, shape, out_sharding),
run-time scalars and barriers that keep the values bit-equal to jax's eager ones, and fills."""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend import numpy as hnp
from hloforge.frontend.numpy._base import asarray
from hloforge.frontend.random._eager import eager
from hloforge.frontend.random._keys import shape_tuple
from hloforge.frontend.tracing import Tensor

F32 = np.dtype(np.float32)


@runtime_checkable
class Initializer(Protocol):
    """What the builders return (jax.nn.initializers.Initializer)."""

    def __call__(self, key, shape, dtype=None, out_sharding=None):
        raise NotImplementedError


def init_dtype(name: str, dtype, inexact=True) -> np.dtype:
    d = F32 if dtype is None else dtypes.canonical(dtype)
    if inexact and not dtypes.is_inexact(d):
        raise ValueError(f"hloforge.nn.initializers.{name}: dtype must be a float or complex dtype, got {d}")
    return d


def no_sharding(name: str, out_sharding) -> None:
    if out_sharding is not None:
        raise ValueError(f"hloforge.nn.initializers.{name}: out_sharding is not supported (got "
                         f"{out_sharding!r}); pass None and shard the result with hf.jit")


def init_shape(name: str, shape) -> tuple:
    return shape_tuple(f"hloforge.nn.initializers.{name}", shape)


def float_sampler(name: str, dtype) -> None:
    if not dtypes.is_float(dtype):
        raise ValueError(f"hloforge.nn.initializers.{name}: dtype must be a float dtype, got {dtype}")


def settled(sample):
    """``sample`` behind a stablehlo.optimization_barrier: jax scales the sampler's result in a
    separate eager op, and in one program XLA would reassociate the scaling with the sampler's
    last multiply or divide by a constant (sqrt(2) in normal), rounding differently."""
    return ops.optimization_barrier(sample)


def runtime(value, dtype=None):
    """A scalar parameter as a 0-d array (of ``dtype`` if given), so that outside a trace it is a
    run-time argument, as in jax's eager ops: XLA would otherwise fold constants (turning a
    division into a multiplication by the reciprocal, reassociating products) and round
    differently. Tensors pass unchanged."""
    if isinstance(value, Tensor):
        return value
    value = np.asarray(value)
    return value if dtype is None else value.astype(dtype)


@eager(static=("shape", "dtype"))
def filled(shape, dtype, value):
    """``value`` (a scalar or an array) broadcast to ``shape`` as ``dtype``."""
    return hnp.broadcast_to(asarray(value, dtype), shape)
