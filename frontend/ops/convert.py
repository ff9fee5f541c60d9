"""Element type conversion: stablehlo.convert."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import dtypes
from hloforge.frontend.context import shape_dtype_of
from hloforge.frontend.ops import _evaluate as ev
from hloforge.frontend.ops._common import operand
from hloforge.frontend.registry import bind, register


def _convert_params(dtype):
    return {"dtype": dtypes.canonical(dtype)}


def _convert_rule(x, dtype):
    return x.shape, dtype


def _convert_decode(op):
    return {"dtype": shape_dtype_of(op.results[0].type)[1]}


def _convert_evaluate(x, dtype):
    """StableHLO convert: complex -> real keeps the real part; float -> int truncates in range
    (out-of-range and NaN values are left to the backend: None)."""
    src = ev.kind(x)
    if not ev.safe_inputs([x], exact_complex=True):
        return None
    if src == "c" and dtype.kind != "c":  # (to bool too: XLA tests the real part alone)
        return _convert_evaluate(np.ascontiguousarray(x.real), dtype)
    if dtype == np.bool_:
        return None if src in "fc" and np.isnan(x).any() else x != 0
    if src == "f" and dtype.kind in "iu":
        info = np.iinfo(dtype)
        t = np.trunc(x.astype(np.float64))
        if not np.isfinite(t).all() or (t < info.min).any() or (t > info.max).any():
            return None
        return t.astype(dtype)
    return ev.finish(x, dtype)


@register("stablehlo.convert", rule=_convert_rule, params=_convert_params, decode=_convert_decode,
          evaluate=_convert_evaluate, traits={"elementwise", "unary", "linear"})
def convert(x, dtype, *, loc=None):
    """Cast elementwise to ``dtype``; emits ``stablehlo.convert``.

    Float to integer truncates toward zero; complex to real keeps the real part.

    Args:
      x: Tensor.
      dtype: any supported dtype.
    Returns:
      A Tensor of x's shape and the new dtype.
    Example:
      >>> y = ops.convert(x, np.float64)
    """
    return bind("stablehlo.convert", [operand("convert", x)], dtype=dtype, loc=loc)
