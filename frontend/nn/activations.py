"""Activation functions."""
from __future__ import annotations

import math

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend import numpy as hnp
from hloforge.frontend.ad.custom import custom_jvp
from hloforge.frontend.numpy._base import asarray, astype, splat, ufunc_dtypes


def _max0(x):
    return ops.maximum(x, splat(0, x.dtype, x.shape))


def _relu_jvp(primals, tangents):
    # jax.nn.relu's rule: the derivative at 0 is 0 (maximum's rule would split the tie, 0.5)
    (x,), (t,) = primals, tangents
    positive = ops.compare(x, splat(0, x.dtype, x.shape), "GT")
    return _max0(x), ops.select(positive, t, splat(0, t.dtype, t.shape))


def _relu_primal(x):
    return _max0(x)


_relu_primal.__name__ = _relu_primal.__qualname__ = "relu"  # (names the private function and errors)
_float_relu = custom_jvp(_relu_primal)
_float_relu.defjvp(_relu_jvp)


def relu(x):
    """max(x, 0) for integer, float or bool ``x``. Emits stablehlo.maximum (for floats inside a
    call of a private function carrying jax.nn.relu's derivative: 0 at x = 0, also for hessians;
    Module.optimize inlines it)."""
    x = asarray(x)
    if dtypes.is_complex(x.dtype):
        raise TypeError(f"relu: needs a real (integer or float) tensor, got {x.dtype}; for numpy's "
                        "lexicographic complex maximum use hloforge.numpy.maximum(x, 0)")
    return _float_relu(x) if dtypes.is_float(x.dtype) else _max0(x)


def gelu(x, approximate: bool = True):
    """Gaussian error linear unit.

    ``approximate=True``: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3))) (tanh form);
    ``approximate=False``: 0.5 x (1 + erf(x / sqrt(2))) (emits chlo.erf).
    """
    x = asarray(x)
    if not dtypes.is_float(x.dtype):
        raise TypeError(f"gelu: needs a float tensor, got {x.dtype}")
    if approximate:
        inner = (x + 0.044715 * x * x * x) * math.sqrt(2.0 / math.pi)
        return 0.5 * x * (1.0 + hnp.tanh(inner))
    return 0.5 * x * (1.0 + ops.erf(x * (1.0 / math.sqrt(2.0))))


def softmax(x, axis=-1):
    """exp(x - max) / sum(exp(x - max)) along ``axis``.

    Integers are converted first to the float dtype numpy's exp gives them (float16 for 8-bit,
    float32 for 16-bit, float64 for wider integers), so ``x - max`` cannot wrap around.
    """
    x = asarray(x)
    if x.dtype == np.bool_ or dtypes.is_complex(x.dtype):
        raise TypeError(f"softmax: needs an integer or float tensor, got {x.dtype}")
    if dtypes.is_integer(x.dtype):
        x = astype(x, ufunc_dtypes(np.exp, x.dtype)[1])
    shifted = x - hnp.max(x, axis=axis, keepdims=True)
    e = hnp.exp(shifted)
    return e / hnp.sum(e, axis=axis, keepdims=True)
