"""Batch normalization: stablehlo.batch_norm_inference, batch_norm_training, batch_norm_grad.

No evaluate: XLA:CPU expands these ops with its own rsqrt, which differs from numpy's in the last
bits (4e-11 relative in float64)."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import attributes as attr
from hloforge.frontend.context import ir
from hloforge.frontend.ops._common import FLOAT, check_dtype, int_tuple, operand
from hloforge.frontend.registry import bind, register
from hloforge.frontend.tracing import Tensor


def _params(epsilon, feature_index):
    try:
        epsilon = float(epsilon)
    except (TypeError, ValueError):
        raise TypeError(f"batch_norm: epsilon must be a float, got {epsilon!r}") from None
    if not epsilon >= 0:
        raise ValueError(f"batch_norm: epsilon {epsilon} must be >= 0")
    return {"epsilon": float(np.float32(epsilon)),
            "feature_index": int_tuple("batch_norm", "feature_index", (feature_index,))[0]}


def _attributes(epsilon, feature_index):
    return {"epsilon": ir.FloatAttr.get(ir.F32Type.get(), epsilon), "feature_index": attr.i64(feature_index)}


def _decode(op):
    return {"epsilon": ir.FloatAttr(op.attributes["epsilon"]).value, "feature_index": attr.read_int(op, "feature_index")}


def _check(op, x, feature_index, vectors):
    check_dtype(op, x, (FLOAT,))
    if not 0 <= feature_index < x.ndim:
        raise ValueError(f"{op}: feature_index {feature_index} out of range for operand {x}")
    n = x.shape[feature_index]
    for name, v in vectors:
        if v.dtype != x.dtype or v.shape != (n,):
            raise TypeError(f"{op}: {name} must be a {x.dtype}[{n}] tensor (one per feature), got {v}")


def _along(v, x, feature_index):
    shape = [1] * x.ndim
    shape[feature_index] = -1
    return v.reshape(shape)


def _inference_rule(x, scale, offset, mean, variance, epsilon, feature_index):
    _check("batch_norm_inference", x, feature_index,
           (("scale", scale), ("offset", offset), ("mean", mean), ("variance", variance)))
    return x.shape, x.dtype


@register("stablehlo.batch_norm_inference", rule=_inference_rule, params=_params, attributes=_attributes,
          decode=_decode)
def batch_norm_inference(x, scale, offset, mean, variance, epsilon, feature_index, *, loc=None) -> Tensor:
    """``(x - mean) / sqrt(variance + epsilon) * scale + offset`` per feature; emits
    ``stablehlo.batch_norm_inference``.

    Args:
      x: float Tensor.
      scale, offset, mean, variance: 1-d Tensors of x's dtype, one entry per feature.
      epsilon: added to the variance (stored as a float32 attribute).
      feature_index: the feature dimension of x.
    Returns:
      A Tensor of x's shape and dtype.
    Example:
      >>> y = ops.batch_norm_inference(x, gamma, beta, mean, var, 1e-5, 1)
    """
    x = operand("batch_norm_inference", x)
    vs = [operand("batch_norm_inference", v, n, dtype=x.dtype)
          for v, n in ((scale, "scale"), (offset, "offset"), (mean, "mean"), (variance, "variance"))]
    return bind("stablehlo.batch_norm_inference", [x, *vs], epsilon=epsilon, feature_index=feature_index, loc=loc)


def _training_rule(x, scale, offset, epsilon, feature_index):
    _check("batch_norm_training", x, feature_index, (("scale", scale), ("offset", offset)))
    n = (x.shape[feature_index],)
    return [(x.shape, x.dtype), (n, x.dtype), (n, x.dtype)]


@register("stablehlo.batch_norm_training", rule=_training_rule, params=_params, attributes=_attributes,
          decode=_decode, traits={"variadic"})
def batch_norm_training(x, scale, offset, epsilon, feature_index, *, loc=None):
    """Normalize with the batch's own statistics; emits ``stablehlo.batch_norm_training``.

    Args:
      x: float Tensor.
      scale, offset: 1-d Tensors of x's dtype, one per feature.
      epsilon: added to the variance. feature_index: the feature dimension.
    Returns:
      (output, batch_mean, batch_var) — the variance is the biased (population) one.
    Example:
      >>> y, mean, var = ops.batch_norm_training(x, gamma, beta, 1e-5, 3)
    """
    x = operand("batch_norm_training", x)
    vs = [operand("batch_norm_training", v, n, dtype=x.dtype) for v, n in ((scale, "scale"), (offset, "offset"))]
    return tuple(bind("stablehlo.batch_norm_training", [x, *vs], epsilon=epsilon, feature_index=feature_index, loc=loc))


def _grad_rule(x, scale, mean, variance, grad_output, epsilon, feature_index):
    _check("batch_norm_grad", x, feature_index, (("scale", scale), ("mean", mean), ("variance", variance)))
    if grad_output.shape != x.shape or grad_output.dtype != x.dtype:
        raise TypeError(f"batch_norm_grad: grad_output {grad_output} must match the operand {x}")
    n = (x.shape[feature_index],)
    return [(x.shape, x.dtype), (n, x.dtype), (n, x.dtype)]


@register("stablehlo.batch_norm_grad", rule=_grad_rule, params=_params, attributes=_attributes,
          decode=_decode, traits={"variadic"})
def batch_norm_grad(x, scale, mean, variance, grad_output, epsilon, feature_index, *, loc=None):
    """Gradients of batch_norm_training; emits ``stablehlo.batch_norm_grad``.

    Args:
      x: the forward operand. scale: 1-d. mean, variance: the forward batch statistics.
      grad_output: the cotangent of the forward output.
      epsilon, feature_index: as in the forward op.
    Returns:
      (grad_operand, grad_scale, grad_offset).
    Example:
      >>> dx, dscale, doffset = ops.batch_norm_grad(x, gamma, mean, var, dy, 1e-5, 1)
    """
    x = operand("batch_norm_grad", x)
    vs = [operand("batch_norm_grad", v, n, dtype=x.dtype)
          for v, n in ((scale, "scale"), (mean, "mean"), (variance, "variance"), (grad_output, "grad_output"))]
    return tuple(bind("stablehlo.batch_norm_grad", [x, *vs], epsilon=epsilon, feature_index=feature_index, loc=loc))


__all__ = ["batch_norm_inference", "batch_norm_training", "batch_norm_grad"]
