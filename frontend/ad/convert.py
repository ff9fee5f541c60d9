"""Derivative rules of stablehlo.convert (frontend/ops/convert.py): linear between inexact
dtypes; to or from an integer or bool dtype there is no tangent."""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.ad._util import deflinear, differentiable


def _convert_t(ct, x, dtype):
    return [ops.convert(ct, x.dtype) if differentiable(x.dtype) and differentiable(dtype) else None]


deflinear("stablehlo.convert", _convert_t)
