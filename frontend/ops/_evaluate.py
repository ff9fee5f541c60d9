"""Shared pieces of the ops' ``evaluate`` functions: StableHLO semantics on numpy arrays, bit for
bit as XLA computes them on this backend, both at run time and in XLA's own constant folder.

An evaluator returns None where its answer could differ from the backend's:
- library functions (exp, log, sin, tanh, pow, erf, the CHLO functions, complex multiply, divide,
  abs and sqrt, ...): XLA's kernels, XLA's constant folder and numpy's libm each round them their
  own way, so they are never evaluated (``tests/test_registry_dtypes.py`` checks what is);
- subnormal floats: XLA:CPU flushes them to zero at run time (inputs and results, every float
  width), its constant folder and numpy do not;
- NaN results of arithmetic: which NaN (sign, payload) comes out differs between numpy, XLA's
  kernels and its folder (``finish``);
- complex operands with an infinite, NaN or negative-zero part in an inexact op;
- sums of several float terms (reductions, contractions): the order of summation is the backend's.
16-bit floats are computed in float32 and rounded, as XLA does (exact for the IEEE operations
evaluated here: float32 has more than twice their precision plus two bits).
"""
from __future__ import annotations

import functools

import numpy as np


def kind(x: np.ndarray) -> str:
    """b, i, u, f (bfloat16 included) or c."""
    return "b" if x.dtype == np.bool_ else "f" if x.dtype.name == "bfloat16" else x.dtype.kind


def is_half(dtype: np.dtype) -> bool:
    return dtype.itemsize == 2 and (dtype.kind == "f" or dtype.name == "bfloat16")


def wide(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32) if is_half(x.dtype) else x


@functools.lru_cache(maxsize=None)
def smallest_normal(dtype: np.dtype) -> float:
    """The smallest normal magnitude (bfloat16 has float32's exponent range)."""
    if dtype.name == "bfloat16":
        return float(np.finfo(np.float32).tiny)
    return float(np.finfo(np.zeros((), dtype).real.dtype).tiny)


# significand bits and largest finite value of each real float dtype
FLOAT_FORMATS = {"float16": (11, 65504.0), "bfloat16": (8, 3.3895313892515355e38),
           "float32": (24, float(np.finfo(np.float32).max)), "float64": (53, float(np.finfo(np.float64).max))}


def significands(a: np.ndarray):
    """(exponent of the lowest set bit, number of significant bits) of nonzero finite float64 values."""
    m, e = np.frexp(np.abs(a))
    whole = (m * 2.0 ** 53).astype(np.int64)              # exact: the 53-bit significand
    low = np.frexp((whole & -whole).astype(np.float64))[1] - 1   # its lowest set bit
    return e - 53 + low, 53 - low


def sum_is_exact(terms: np.ndarray, axis, dtype) -> bool:
    """Every partial sum along ``axis`` of ``terms`` (float64 values, finite), in any order and
    grouping, is exact and normal in the float ``dtype``: then a sum whose order the backend
    chooses has one result (the exact sum; which zero a zero sum is stays open)."""
    bits, largest = FLOAT_FORMATS[dtype.name]
    if not terms.size:
        return True  # (empty sums: no partial sum to round)
    low = np.full(terms.shape, np.inf)
    nonzero = terms != 0
    low[nonzero] = significands(terms[nonzero])[0]
    with np.errstate(over="ignore"):  # (an all-zero sum has an infinite grain; huge sums overflow)
        grain = np.exp2(low.min(axis=axis))  # every term of a sum is a multiple of its grain
        bound = np.abs(terms).sum(axis=axis) * (1 + 2.0 ** -40)
        exact = (grain >= smallest_normal(dtype)) & (bound <= np.minimum(grain * 2.0 ** bits, largest))
    return bool(((bound == 0) | exact).all())


def product_is_exact(factors: np.ndarray, axis, dtype) -> bool:
    """Every partial product along ``axis`` of ``factors`` (float64 values), in any order, is exact
    and normal in the float ``dtype`` (nonzero finite factors whose significant bits add up to at
    most the dtype's, and no partial product out of its normal range)."""
    bits, largest = FLOAT_FORMATS[dtype.name]
    if not np.isfinite(factors).all() or (factors == 0).any():
        return False
    if not factors.size:
        return True
    magnitude = np.log2(np.abs(factors))
    return bool((significands(factors)[1].sum(axis=axis) <= bits).all()
                and (np.maximum(magnitude, 0).sum(axis=axis) < np.log2(largest) - 1).all()
                and (np.minimum(magnitude, 0).sum(axis=axis) > np.log2(smallest_normal(dtype)) + 1).all())


def has_subnormal(x: np.ndarray) -> bool:
    k = kind(x)
    if k not in "fc":
        return False
    tiny = smallest_normal(x.dtype)
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


def has_nan(x: np.ndarray) -> bool:
    return kind(x) in "fc" and bool(np.isnan(x).any())


def safe_inputs(xs, exact_complex: bool = False) -> bool:
    """No operand the backend computes differently from numpy (see the module docstring)."""
    for x in xs:
        if has_subnormal(x):
            return False
        if not exact_complex and has_special_complex(x):
            return False
    return True


def finish(out, dtype, nan_ok: bool = False) -> np.ndarray | None:
    """``out`` cast to ``dtype``; None when the result holds a subnormal the backend would flush,
    or a NaN (unless ``nan_ok``: ops that only move or flip bits keep a NaN's bits)."""
    out = np.asarray(out)
    with np.errstate(all="ignore"):
        out = out.astype(dtype)
    if has_subnormal(out) or (not nan_ok and has_nan(out)):
        return None
    return out


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
