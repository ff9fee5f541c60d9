"""Smooth activations built on exp and log (jax.nn's formulas and derivative rules): sigmoid,
silu/swish, softplus, log_sigmoid, mish, log1mexp, glu.

sigmoid carries jax's derivative ``y (1 - y)`` (finite where exp(-x) overflows), softplus the
derivative of jax's ``logaddexp(x, 0)`` rule and log1mexp jax's ``1 / expm1(x)``, each as a
custom_jvp call (Module.optimize inlines them).
"""
from __future__ import annotations

import math

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend import numpy as hnp
from hloforge.frontend.nn.activations import real, with_jvp
from hloforge.frontend.numpy._base import astype, normalize_axis, splat, ufunc_dtypes


def _c(x, value):
    return splat(value, x.dtype, x.shape)


def inexact(name: str, x):
    """Real ``x`` as a float Tensor: integers and bools convert to the float dtype numpy's exp
    gives them (jax's promote_args_inexact, with hloforge.numpy's dtypes)."""
    x = real(name, x)
    if not dtypes.is_float(x.dtype):
        x = astype(x, ufunc_dtypes(np.exp, x.dtype)[1])
    return x


def _logistic(x):
    # jax lowers lax.logistic to this on every platform (not to stablehlo.logistic)
    one = _c(x, 1)
    return ops.divide(one, ops.add(one, ops.exp(ops.neg(x))))


_sigmoid = with_jvp("sigmoid", _logistic,
                    lambda x, y, t: ops.multiply(t, ops.multiply(y, ops.subtract(_c(y, 1), y))))


def sigmoid(x):
    """1 / (1 + exp(-x)) (jax.nn.sigmoid, lax.logistic's expansion: stablehlo.negate, exponential,
    add, divide), with jax's derivative ``y (1 - y)``. Float or complex input (integers raise,
    as in jax).

    Example:
      >>> hf.nn.sigmoid(x)
    """
    x = hnp.asarray(x)
    if not dtypes.is_inexact(x.dtype):
        raise TypeError(f"hloforge.nn.sigmoid: needs a float or complex tensor, got {x.dtype}")
    return _sigmoid(x)


def silu(x):
    """x * sigmoid(x) (jax.nn.silu; ``swish`` is the same function). Float or complex input.

    Example:
      >>> hf.nn.silu(x)
    """
    x = hnp.asarray(x)
    if not dtypes.is_inexact(x.dtype):
        raise TypeError(f"hloforge.nn.silu: needs a float or complex tensor, got {x.dtype}")
    return x * _sigmoid(x)


swish = silu


def _replace_inf(x):
    return ops.select(ops.compare(x, _c(x, np.inf), "EQ"), _c(x, 0), x)


def _softplus_primal(x):
    # jax's lax.logaddexp(x, 0), op for op
    zero = _c(x, 0)
    amax = ops.maximum(x, zero)
    delta = ops.subtract(x, zero)
    return ops.select(ops.compare(delta, delta, "NE"), ops.add(x, zero),
                      ops.add(amax, ops.log1p(ops.exp(ops.neg(ops.abs(delta))))))


_softplus = with_jvp("softplus", _softplus_primal, lambda x, y, t: ops.multiply(
    t, ops.exp(ops.subtract(_replace_inf(x), _replace_inf(y)))))


def softplus(x):
    """log(1 + exp(x)) as jax.nn.softplus computes it, ``logaddexp(x, 0)``: max(x, 0) +
    log1p(exp(-|x|)) (stablehlo.maximum, abs, negate, exponential, log_plus_one, add, select for
    NaN), with jax's logaddexp derivative exp(x - softplus(x)).

    Example:
      >>> hf.nn.softplus(x)
    """
    return _softplus(inexact("softplus", x))


def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x) (jax.nn.log_sigmoid).

    Example:
      >>> hf.nn.log_sigmoid(x)
    """
    return -_softplus(-inexact("log_sigmoid", x))


def mish(x):
    """x * tanh(softplus(x)) (jax.nn.mish; stablehlo.tanh over softplus's ops).

    Example:
      >>> hf.nn.mish(x)
    """
    x = inexact("mish", x)
    return x * hnp.tanh(_softplus(x))


def _log1mexp_primal(x):
    below = ops.compare(x, _c(x, math.log(2.0)), "LT")
    return ops.select(below, ops.log(ops.neg(ops.expm1(ops.neg(x)))),
                      ops.log1p(ops.neg(ops.exp(ops.neg(x)))))


_log1mexp = with_jvp("log1mexp", _log1mexp_primal, lambda x, y, t: ops.divide(t, ops.expm1(x)))


def log1mexp(x):
    """log(1 - exp(-x)) for x >= 0, accurately (jax.nn.log1mexp): log(-expm1(-x)) below log 2,
    log1p(-exp(-x)) above (stablehlo.select), with jax's derivative 1 / expm1(x).

    Example:
      >>> hf.nn.log1mexp(x)
    """
    return _log1mexp(inexact("log1mexp", x))


def glu(x, axis: int = -1):
    """Gated linear unit (jax.nn.glu): x split in two halves a, b along ``axis``, a * sigmoid(b).

    Args:
      x: float or complex input whose ``axis`` has even size.
      axis: the axis to split (default -1).
    Returns:
      An array with ``axis`` halved.
    Example:
      >>> hf.nn.glu(x)   # (4, 6) -> (4, 3)
    """
    x = hnp.asarray(x)
    if not dtypes.is_inexact(x.dtype):
        raise TypeError(f"hloforge.nn.glu: needs a float or complex tensor, got {x.dtype}")
    ax = normalize_axis(axis, x.ndim)
    if x.shape[ax] % 2:
        raise ValueError(f"hloforge.nn.glu: axis {axis} of shape {x.shape} has odd size {x.shape[ax]}; "
                         "it must be divisible by 2")
    a, b = hnp.split(x, 2, ax)
    return a * _sigmoid(b)


__all__ = ["sigmoid", "silu", "swish", "softplus", "log_sigmoid", "mish", "log1mexp", "glu"]
