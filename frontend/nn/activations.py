"""Piecewise activations (jax.nn's formulas, op for op): relu and relu6 (with jax's derivative at
the kinks), hard_sigmoid, hard_silu, hard_tanh, leaky_relu, elu, celu, selu, gelu, sparse_plus,
sparse_sigmoid, soft_sign, squareplus, identity.

Python scalar parameters are weakly typed (a float16 ``x`` stays float16); integer inputs
promote as hloforge.numpy promotes them (NumPy 2 rules).
"""
from __future__ import annotations

import math

from hloforge.frontend import dtypes, ops
from hloforge.frontend import numpy as hnp
from hloforge.frontend.ad.custom import custom_jvp
from hloforge.frontend.lax.special import erfc
from hloforge.frontend.numpy._base import asarray, splat


def real(name: str, x):
    """``x`` as a Tensor; complex inputs raise (these functions order their inputs)."""
    x = asarray(x)
    if dtypes.is_complex(x.dtype):
        raise TypeError(f"hloforge.nn.{name}: needs a real (integer or float) tensor, got {x.dtype}")
    return x


def with_jvp(name: str, primal, tangent):
    """``primal`` (one float Tensor -> Tensor) as a custom_jvp function whose tangent is
    ``tangent(x, y, t)`` (jax's defjvps rule; y = fn(x), so higher derivatives use the rule too)."""
    primal.__name__ = primal.__qualname__ = name  # (names the private function and errors)
    fn = custom_jvp(primal)

    def jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        y = fn(x)
        return y, tangent(x, y, t)

    fn.defjvp(jvp)
    return fn


def _zeros_like(t):
    return splat(0, t.dtype, t.shape)


def identity(x):
    """``x`` unchanged (jax.nn.identity); emits nothing.

    Example:
      >>> hf.nn.identity(x)
    """
    return asarray(x)


def _max0(x):
    return ops.maximum(x, splat(0, x.dtype, x.shape))


# jax.nn.relu's rule: the derivative at 0 is 0 (maximum's rule would split the tie, 0.5)
_float_relu = with_jvp("relu", _max0, lambda x, y, t: ops.select(
    ops.compare(x, _zeros_like(x), "GT"), t, _zeros_like(t)))


def relu(x):
    """max(x, 0) for integer, float or bool ``x``. Emits stablehlo.maximum (for floats inside a
    call of a private function carrying jax.nn.relu's derivative: 0 at x = 0, also for hessians;
    Module.optimize inlines it).

    Example:
      >>> hf.nn.relu(x)
    """
    x = real("relu", x)
    return _float_relu(x) if dtypes.is_float(x.dtype) else _max0(x)


def _relu6_primal(x):
    return hnp.minimum(hnp.maximum(x, 0), 6.0)


def _inside_0_6(x):
    return ops.and_(ops.compare(x, _zeros_like(x), "GT"), ops.compare(x, splat(6, x.dtype, x.shape), "LT"))


_float_relu6 = with_jvp("relu6", _relu6_primal,
                        lambda x, y, t: ops.select(_inside_0_6(x), t, _zeros_like(t)))


def relu6(x):
    """min(max(x, 0), 6) (jax.nn.relu6), with jax's derivative: 0 at x = 0 and x = 6.
    Emits stablehlo.maximum and stablehlo.minimum (floats: inside a custom_jvp call).

    Example:
      >>> hf.nn.relu6(x)
    """
    x = real("relu6", x)
    return _float_relu6(x) if dtypes.is_float(x.dtype) else _relu6_primal(x)


def hard_sigmoid(x):
    """relu6(x + 3) / 6 (jax.nn.hard_sigmoid). Emits add, maximum, minimum, divide.

    Example:
      >>> hf.nn.hard_sigmoid(x)
    """
    return relu6(real("hard_sigmoid", x) + 3.0) / 6.0


def hard_silu(x):
    """x * hard_sigmoid(x) (jax.nn.hard_silu; ``hard_swish`` is the same function).

    Example:
      >>> hf.nn.hard_silu(x)
    """
    x = real("hard_silu", x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def hard_tanh(x):
    """-1 below -1, x on [-1, 1], 1 above 1 (jax.nn.hard_tanh: two stablehlo.select); integers
    keep their dtype.

    Example:
      >>> hf.nn.hard_tanh(x)
    """
    x = real("hard_tanh", x)
    return hnp.where(x > 1, 1, hnp.where(x < -1, -1, x))


def leaky_relu(x, negative_slope=1e-2):
    """x where x >= 0, else ``negative_slope * x`` (jax.nn.leaky_relu; stablehlo.select).

    Args:
      x: input.
      negative_slope: scalar or array broadcastable to ``x`` (default 0.01).
    Example:
      >>> hf.nn.leaky_relu(x, negative_slope=0.2)
    """
    x = real("leaky_relu", x)
    return hnp.where(x >= 0, x, negative_slope * x)


def elu(x, alpha=1.0):
    """x where x > 0, else alpha (exp(x) - 1) (jax.nn.elu: stablehlo.exponential_minus_one on
    the non-positive part, so large x never overflows the unused branch).

    Args:
      x: input.
      alpha: scalar or array (default 1.0).
    Example:
      >>> hf.nn.elu(x)
    """
    x = real("elu", x)
    return hnp.where(x > 0, x, alpha * hnp.expm1(hnp.where(x > 0, 0.0, x)))


def celu(x, alpha=1.0):
    """max(x, 0) + alpha (exp(min(x, 0) / alpha) - 1) (jax.nn.celu). Emits maximum, minimum,
    divide, exponential_minus_one, multiply, add.

    Args:
      x: input.
      alpha: scalar or array (default 1.0).
    Example:
      >>> hf.nn.celu(x, alpha=0.5)
    """
    x = real("celu", x)
    return hnp.maximum(x, 0.0) + alpha * hnp.expm1(hnp.minimum(x, 0.0) / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x):
    """scale * elu(x, alpha) with jax.nn.selu's constants (alpha 1.67326..., scale 1.05070...).

    Example:
      >>> hf.nn.selu(x)
    """
    return _SELU_SCALE * elu(real("selu", x), _SELU_ALPHA)


def _erfc_primal(x):
    return erfc(x)


# hloforge.lax.erfc is XLA's expansion in StableHLO ops; differentiating its branches gives NaN at 0,
# so it carries jax's erfc rule: -2/sqrt(pi) exp(-x**2)
_erfc = with_jvp("erfc", _erfc_primal, lambda x, y, t: ops.multiply(
    splat(-2.0 / math.sqrt(math.pi), x.dtype, x.shape), ops.multiply(t, ops.exp(ops.neg(ops.multiply(x, x))))))


def gelu(x, approximate: bool = True):
    """Gaussian error linear unit (jax.nn.gelu), in jax's op order.

    ``approximate=True``: x * 0.5 (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3))) (stablehlo.tanh);
    ``approximate=False``: 0.5 x erfc(-x / sqrt(2)) (hloforge.lax.erfc: XLA's expansion of
    chlo.erfc, accurate where 1 + erf would cancel).

    Example:
      >>> hf.nn.gelu(x)
    """
    x = asarray(x)
    if not dtypes.is_float(x.dtype):
        raise TypeError(f"hloforge.nn.gelu: needs a float tensor, got {x.dtype}")
    if approximate:
        cube = x * (x * x)  # (jax's x ** 3: lax.integer_pow's multiplications)
        cdf = 0.5 * (1.0 + hnp.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * cube)))
        return x * cdf
    return 0.5 * x * _erfc(-x * math.sqrt(0.5))


def sparse_plus(x):
    """0 for x <= -1, (x + 1)**2 / 4 on (-1, 1), x for x >= 1 (jax.nn.sparse_plus; two
    stablehlo.select).

    Example:
      >>> hf.nn.sparse_plus(x)
    """
    x = real("sparse_plus", x)
    return hnp.where(x <= -1.0, 0.0, hnp.where(x >= 1.0, x, hnp.square(x + 1.0) / 4))


def sparse_sigmoid(x):
    """0.5 * clip(x + 1, 0, 2) (jax.nn.sparse_sigmoid, the derivative of sparse_plus). Emits add,
    maximum, minimum, multiply.

    Example:
      >>> hf.nn.sparse_sigmoid(x)
    """
    return 0.5 * hnp.minimum(2.0, hnp.maximum(0.0, real("sparse_sigmoid", x) + 1.0))


def soft_sign(x):
    """x / (|x| + 1) (jax.nn.soft_sign). Emits abs, add, divide.

    Example:
      >>> hf.nn.soft_sign(x)
    """
    x = real("soft_sign", x)
    return x / (hnp.abs(x) + 1)


def squareplus(x, b=4):
    """(x + sqrt(x**2 + b)) / 2 (jax.nn.squareplus). Emits multiply, add, sqrt, divide.

    Args:
      x: input.
      b: smoothness, scalar or array (default 4).
    Example:
      >>> hf.nn.squareplus(x, b=1.0)
    """
    x = real("squareplus", x)
    return (x + hnp.sqrt(hnp.square(x) + b)) / 2


__all__ = ["identity", "relu", "relu6", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "leaky_relu",
           "elu", "celu", "selu", "gelu", "sparse_plus", "sparse_sigmoid", "soft_sign", "squareplus"]
