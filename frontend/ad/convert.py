"""Derivative rules of stablehlo.convert (frontend/ops/convert.py): linear between inexact
dtypes; to or from an integer or bool dtype there is no tangent."""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.ad._util import differentiable
from hloforge.frontend.registry import def_rule


def _convert(t, dtype):
    return ops.convert(t, dtype) if differentiable(dtype) else None


def _convert_t(c, x, dtype):
    return ops.convert(c, x.dtype) if differentiable(x.dtype) and differentiable(dtype) else None


def_rule("jvp", "stablehlo.convert")(lambda ins, outs, ts, **p: [_convert(ts[0], **p)])
def_rule("vjp", "stablehlo.convert")(lambda ins, outs, cts, **p: [_convert_t(cts[0], ins[0], **p)])
