"""Layers with explicit weights (no hidden state): dense."""
from __future__ import annotations

from hloforge.frontend import numpy as hnp


def dense(x, w, b=None):
    """``x @ w + b`` over the last axis of ``x``; ``w`` has shape (in, out), ``b`` (out,)."""
    y = hnp.matmul(x, w)
    return y if b is None else y + b


def layer_norm(x, scale=None, bias=None, axis=-1, eps=1e-5):
    """(x - mean) / sqrt(var + eps) over ``axis``, then ``* scale + bias``."""
    mean = hnp.mean(x, axis=axis, keepdims=True)
    centered = x - mean
    var = hnp.mean(centered * centered, axis=axis, keepdims=True)
    y = centered / hnp.sqrt(var + eps)
    if scale is not None:
        y = y * scale
    return y if bias is None else y + bias
