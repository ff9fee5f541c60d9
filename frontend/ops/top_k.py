"""chlo.top_k: the k largest elements along the last dimension and their indices (jax.lax.top_k
emits it; XLA expands it to a sort)."""
from __future__ import annotations

import numbers

import numpy as np

from hloforge.frontend import attributes as attr
from hloforge.frontend.ops import _evaluate as ev
from hloforge.frontend.ops._common import FLOAT, INT, check_dtype, operand
from hloforge.frontend.registry import bind, register


def _top_k_params(k):
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
        raise TypeError(f"top_k: k must be an int, got {k!r} of type {type(k).__name__}")
    if k < 0:
        raise ValueError(f"top_k: k must be >= 0, got {k}")
    return {"k": int(k)}


def _top_k_rule(x, *, k):
    check_dtype("top_k", x, (*INT, FLOAT))
    if x.ndim == 0:
        raise ValueError("top_k: operand must have rank >= 1, got a 0-d tensor")
    if k > x.shape[-1]:
        raise ValueError(f"top_k: k={k} exceeds the last dimension of operand shape {x.shape}")
    shape = (*x.shape[:-1], k)
    return [(shape, x.dtype), (shape, np.dtype(np.int32))]


def _top_k_evaluate(x, *, k):
    """Only rows of distinct values (no NaN, no zeros: the backend orders -0 below +0 and picks
    among equal values itself)."""
    if not ev.safe_inputs([x]) or ev.has_nan(x) or (ev.kind(x) == "f" and (x == 0).any()):
        return None
    wide = ev.wide(x)
    order = np.argsort(wide, axis=-1, kind="stable")
    ranked = np.take_along_axis(wide, order, -1)
    if x.shape[-1] > 1 and (ranked[..., 1:] == ranked[..., :-1]).any():
        return None
    index = np.flip(order, -1)[..., :k].astype(np.int32)
    return [np.take_along_axis(x, index, -1), index]


@register("chlo.top_k", rule=_top_k_rule, params=_top_k_params,
          attributes=lambda k: {"k": attr.i64(k)}, decode=lambda op: {"k": attr.read_int(op, "k")},
          evaluate=_top_k_evaluate, traits={"variadic"})
def top_k(x, k: int, *, loc=None):
    """The ``k`` largest elements along the last dimension, largest first, and their int32 indices;
    emits ``chlo.top_k`` (as jax.lax.top_k).

    Args:
      x: an integer or float Tensor of rank >= 1.
      k: 0 <= k <= x.shape[-1].
    Returns:
      (values, indices), both of shape ``x.shape[:-1] + (k,)``.
    Example:
      >>> values, indices = ops.top_k(x, 3)
    """
    return tuple(bind("chlo.top_k", [operand("top_k", x)], k=k, loc=loc))


__all__ = ["top_k"]
