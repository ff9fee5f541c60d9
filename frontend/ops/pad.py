"""The exact one-op pad builder. numpy's pad modes live in hloforge.numpy.pad."""
from __future__ import annotations

import math
import warnings

import numpy as np

from hloforge.frontend import attributes as attr
from hloforge.frontend import dtypes
from hloforge.frontend.ops._common import int_tuple, operand
from hloforge.frontend.registry import bind, register
from hloforge.frontend.tracing import Tensor, as_tensor

_ATTRIBUTES = {"low": "edge_padding_low", "high": "edge_padding_high", "interior": "interior_padding"}


def padded_size(n: int, lo: int, hi: int, interior: int) -> int:
    return lo + hi + n + max(n - 1, 0) * interior


_INT64 = (-(1 << 63), (1 << 63) - 1)


def _pad_params(low, high, interior=None):
    out = {}
    for name, value in (("low", low), ("high", high), ("interior", interior)):
        if value is not None:
            value = int_tuple("pad", _ATTRIBUTES[name], value)
            if any(not _INT64[0] <= v <= _INT64[1] for v in value):
                raise ValueError(f"pad: {_ATTRIBUTES[name]} {list(value)} does not fit in int64")
        out[name] = value
    if out["interior"] is None:
        out["interior"] = (0,) * len(out["low"])
    return out


def _pad_rule(x, value, low, high, interior):
    for name, v in (("edge_padding_low", low), ("edge_padding_high", high), ("interior_padding", interior)):
        if len(v) != x.ndim:
            raise ValueError(f"pad: {name} {list(v)} must have {x.ndim} entries, one per dimension")
    if any(i < 0 for i in interior):
        raise ValueError(f"pad: interior_padding {list(interior)} must be >= 0")
    if value.shape != () or value.dtype != x.dtype:
        raise TypeError(f"pad: padding_value must be a 0-d {x.dtype} tensor, got {value}")
    shape = tuple(padded_size(*a) for a in zip(x.shape, low, high, interior))
    if any(s < 0 for s in shape):
        raise ValueError(f"pad: result shape {shape} has a negative dimension (operand {x.shape}, low "
                         f"{list(low)}, high {list(high)}, interior {list(interior)})")
    return shape, x.dtype


def _padding_value(x, value) -> Tensor:
    """A Python/numpy scalar becomes a constant of x's dtype; lossy casts are refused."""
    if isinstance(value, Tensor):
        return operand("pad", value, "padding_value")
    if _plus_zero(value):  # (the common case, which every dtype holds exactly)
        return as_tensor(np.zeros((), x.dtype), what="pad padding_value")
    v = np.asarray(value)
    if v.shape != ():
        raise TypeError(f"pad: padding_value must be a scalar, got {value!r} of shape {v.shape}")
    if v.dtype not in dtypes.SUPPORTED:
        raise TypeError(f"pad: padding_value {value!r} is not a number of a supported dtype "
                        f"(got dtype {v.dtype}; expected a scalar castable to {x.dtype})")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cast = v.astype(x.dtype)
    if not _same_number(cast, v):
        raise TypeError(f"pad: padding_value {value!r} cannot be represented exactly in {x.dtype} "
                        f"(it would become {cast.item()!r}); cast it first")
    return as_tensor(cast, what="pad padding_value")


def _plus_zero(value) -> bool:
    """A Python 0, 0.0 or 0j (not -0.0: its sign bit must survive)."""
    kind = type(value)
    if kind is int:
        return value == 0
    if kind is float:
        return value == 0 and math.copysign(1.0, value) > 0
    if kind is complex:
        return _plus_zero(value.real) and _plus_zero(value.imag)
    return False


def _same_number(a: np.ndarray, b: np.ndarray) -> bool:
    """Exact comparison of two 0-d arrays as Python numbers (int vs float compares exactly);
    NaN equals NaN."""
    a, b = (v.item() if isinstance(v.item(), (bool, int, float, complex)) else float(v) for v in (a, b))
    return all(p == q or (p != p and q != q) for p, q in ((a.real, b.real), (a.imag, b.imag)))


def pad_evaluate(x: np.ndarray, value, low, high, interior) -> np.ndarray:
    """numpy reference of ``stablehlo.pad`` (negative edges crop)."""
    big = [max(lo, 0) + n + max(n - 1, 0) * it + max(hi, 0)
           for n, lo, hi, it in zip(x.shape, low, high, interior)]
    out = np.full(big, value, dtype=x.dtype)
    out[tuple(slice(max(lo, 0), max(lo, 0) + n + max(n - 1, 0) * it, it + 1)
              for n, lo, it in zip(x.shape, low, interior))] = x
    return out[tuple(slice(max(-lo, 0), b - max(-hi, 0)) for b, lo, hi in zip(big, low, high))]


@register("stablehlo.pad", rule=_pad_rule, params=_pad_params,
          attributes=lambda **p: {_ATTRIBUTES[k]: attr.i64s(v) for k, v in p.items()},
          decode=lambda op: {k: attr.read_ints(op, a) for k, a in _ATTRIBUTES.items()},
          evaluate=pad_evaluate)
def pad(x, padding_value, low, high, interior=None, *, loc=None) -> Tensor:
    """Edge and interior padding; emits one ``stablehlo.pad``.

    Negative ``low``/``high`` crop. Result dim = low + high + n + (n - 1) * interior.

    Args:
      x: Tensor.
      padding_value: a 0-d Tensor of x's dtype, or a Python/numpy scalar that x's dtype holds
        exactly (it is cast; a lossy cast such as 1.5 into an integer tensor is a TypeError).
      low, high: per-dimension edge padding (may be negative).
      interior: per-dimension padding between elements, >= 0 (default 0).
    Returns:
      The padded Tensor.
    Example:
      >>> y = ops.pad(x, 0.0, (1, 0), (2, -1))
    """
    x = operand("pad", x)
    value = _padding_value(x, padding_value)
    return bind("stablehlo.pad", [x, value], low=low, high=high,
                interior=(0,) * x.ndim if interior is None else interior, loc=loc)
