"""Shared pieces of the ops' ``evaluate`` functions: StableHLO semantics on numpy arrays, as XLA
computes them on this backend.

An evaluator returns None where its answer could differ from the backend's:
- subnormal floats: XLA:CPU flushes them to zero (inputs and results, every float width), numpy
  does not;
- complex operands with an infinite, NaN or negative-zero part in an inexact op: the branch cuts
  and special values of XLA's complex functions differ from numpy's.
16-bit floats are computed in float32 and rounded, as XLA does.
"""
from __future__ import annotations

import numpy as np


def kind(x: np.ndarray) -> str:
    """b, i, u, f (bfloat16 included) or c."""
    return "b" if x.dtype == np.bool_ else "f" if x.dtype.name == "bfloat16" else x.dtype.kind


def is_half(dtype: np.dtype) -> bool:
    return dtype.itemsize == 2 and (dtype.kind == "f" or dtype.name == "bfloat16")


def wide(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32) if is_half(x.dtype) else x


def _tiny(dtype: np.dtype) -> float:
    """The smallest normal magnitude (bfloat16 has float32's exponent range)."""
    if dtype.name == "bfloat16":
        return float(np.finfo(np.float32).tiny)
    return float(np.finfo(np.zeros((), dtype).real.dtype).tiny)


def has_subnormal(x: np.ndarray) -> bool:
    k = kind(x)
    if k not in "fc":
        return False
    tiny = _tiny(x.dtype)
    for part in ((x.real, x.imag) if k == "c" else (wide(x),)):
        a = np.abs(part)
        if ((a > 0) & (a < tiny)).any():
            return True
    return False


def has_special_complex(x: np.ndarray) -> bool:
    """An infinite, NaN or negative-zero real or imaginary part."""
    if kind(x) != "c":
        return False
    for part in (x.real, x.imag):
        if not np.isfinite(part).all() or ((part == 0) & np.signbit(part)).any():
            return True
    return False


def safe_inputs(xs, exact_complex: bool = False) -> bool:
    """No operand the backend computes differently from numpy (see the module docstring)."""
    for x in xs:
        if has_subnormal(x):
            return False
        if not exact_complex and has_special_complex(x):
            return False
    return True


def finish(out, dtype) -> np.ndarray | None:
    """``out`` cast to ``dtype``; None when the result holds a subnormal the backend would flush."""
    out = np.asarray(out)
    with np.errstate(all="ignore"):
        out = out.astype(dtype)
    return None if has_subnormal(out) else out


def _int_division_defined(a, b) -> bool:
    """Integer division by 0, or MIN / -1: implementation-defined, left to the backend."""
    if (b == 0).any():
        return False
    return a.dtype.kind != "i" or not ((a == np.iinfo(a.dtype).min) & (b == -1)).any()


def trunc_div(a, b):
    """Integer division rounding toward zero; None where it is implementation-defined."""
    if not _int_division_defined(a, b):
        return None
    q = np.floor_divide(a, b)
    if a.dtype.kind == "i":
        q = q + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0))).astype(a.dtype)
    return q


def trunc_rem(a, b):
    """Integer remainder with the dividend's sign; None where it is implementation-defined."""
    return np.fmod(a, b) if _int_division_defined(a, b) else None
