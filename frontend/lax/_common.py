"""What the lax modules share: operands with jax's defaults for Python scalars, fill values."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import dtypes
from hloforge.frontend.tracing import Tensor, as_tensor

_DEFAULTS = {int: np.int32, float: np.float32, complex: np.complex64}  # jax's, without x64


def lax_operand(x, what) -> Tensor:
    """``x`` as a Tensor of this trace; Python scalars become int32/float32/complex64, as in jax."""
    if isinstance(x, Tensor):
        return as_tensor(x, what=what)
    return as_tensor(x, _DEFAULTS.get(dtypes.weak_type(x)), what=what)


def default_fill(dtype):
    """jax's fill value for out-of-bound gathers: NaN, the most negative int, the largest uint, True."""
    if dtypes.is_inexact(dtype):
        return np.nan
    if dtypes.is_bool(dtype):
        return True
    info = np.iinfo(dtype)
    return info.min if dtypes.is_signed_int(dtype) else info.max
