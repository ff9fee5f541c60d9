"""Batch normalization (StableHLO's batch_norm ops)."""
from __future__ import annotations

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy._base import asarray


def batch_norm(x, scale, bias, mean=None, var=None, *, axis=-1, eps=1e-5, return_stats=False):
    """Batch normalization over every dimension but ``axis`` (the features).

    With ``mean`` and ``var`` (running statistics): inference, emits
    ``stablehlo.batch_norm_inference``. Without: the batch's own statistics, emits
    ``stablehlo.batch_norm_training``; ``return_stats`` also returns (batch_mean, batch_var), the
    variance biased as flax's.

    Args:
      x: float array. scale, bias, mean, var: 1-d, one per feature (cast to x's dtype).
      axis: the feature dimension. eps: added to the variance.
    Returns:
      y, or (y, mean, var) with ``return_stats``.
    Example:
      >>> y = hf.nn.batch_norm(x, gamma, beta, running_mean, running_var)
    """
    x = asarray(x)
    if not dtypes.is_float(x.dtype):
        raise TypeError(f"batch_norm: needs a float input, got {x.dtype}")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"batch_norm: axis {axis} out of range for input of rank {x.ndim}")
    axis %= x.ndim
    scale, bias = asarray(scale, x.dtype), asarray(bias, x.dtype)
    if (mean is None) != (var is None):
        raise ValueError("batch_norm: pass both mean and var (inference) or neither (batch statistics)")
    if mean is not None:
        y = ops.batch_norm_inference(x, scale, bias, asarray(mean, x.dtype), asarray(var, x.dtype), eps, axis)
        return (y, asarray(mean, x.dtype), asarray(var, x.dtype)) if return_stats else y
    y, m, v = ops.batch_norm_training(x, scale, bias, eps, axis)
    return (y, m, v) if return_stats else y


__all__ = ["batch_norm"]
