"""Layers with explicit weights (no hidden state): dense."""
from __future__ import annotations

from hloforge.frontend import numpy as hnp


def dense(x, w, b=None):
    """``x @ w + b`` over the last axis of ``x``; ``w`` has shape (in, out), ``b`` (out,)."""
    y = hnp.matmul(x, w)
    return y if b is None else y + b
