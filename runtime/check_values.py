"""Comparing the values of ``hloforge check``'s assertions, with the StableHLO interpreter's semantics.

``Check.kind``:

- ``eq``: exactly equal (``-0.0`` equals ``0.0``; NaN equals NaN, where the interpreter's
  ``check.expect_eq`` fails on any NaN);
- ``almost_eq``: ``|actual - expected| <= tolerance`` per real and imaginary part, in float64 (infinities
  equal only themselves, NaN equals NaN);
- ``close``: ``min_ulp <= ULP distance <= max_ulp`` per element (the larger of the real and imaginary
  parts' distances): bitwise-equal values are 0 apart, two NaNs 0, a non-finite value and anything else
  not bitwise equal infinitely far, values of opposite signs the sum of their distances to zero.

Integers and booleans always compare exactly. Arrays may hold ml_dtypes' types (int4, float8_e4m3fn, ...).
"""
from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np

_ML_FLOATS = frozenset(np.dtype(d) for d in (
    ml_dtypes.bfloat16, ml_dtypes.float4_e2m1fn, ml_dtypes.float6_e2m3fn, ml_dtypes.float6_e3m2fn,
    ml_dtypes.float8_e3m4, ml_dtypes.float8_e4m3, ml_dtypes.float8_e4m3b11fnuz, ml_dtypes.float8_e4m3fn,
    ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2fnuz, ml_dtypes.float8_e8m0fnu))
_UNSIGNED_BITS = np.dtype(np.uint64)
_FAR = np.iinfo(np.uint64).max  # (the distance of values that are not close at all)


@dataclasses.dataclass
class Check:
    """One assertion: how to compare, and where it came from (for messages)."""
    kind: str                 # "eq", "almost_eq" or "close"
    max_ulp: int = 3
    min_ulp: int = 0
    tolerance: float = 1e-4
    name: str = ""            # the op, e.g. "check.expect_close" or "stablehlo.custom_call @check.eq"
    line: int | None = None   # its line in the file

    def describe(self) -> str:
        return f"{self.name}, line {self.line}" if self.line else self.name


def is_float(d) -> bool:
    d = np.dtype(d)
    return d.kind == "f" or d in _ML_FLOATS


def _parts(x: np.ndarray) -> list:
    return [x.real, x.imag] if x.dtype.kind == "c" else [x]


def _both_nan(a: np.ndarray, e: np.ndarray):
    return np.isnan(a) & np.isnan(e)


def _equal(a: np.ndarray, e: np.ndarray):
    if not is_float(a.dtype):
        return a == e
    af, ef = a.astype(np.float64), e.astype(np.float64)
    return (af == ef) | _both_nan(af, ef)


def _almost_equal(a: np.ndarray, e: np.ndarray, tolerance: float):
    if not is_float(a.dtype):
        return a == e
    af, ef = a.astype(np.float64), e.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        near = np.isfinite(af) & np.isfinite(ef) & (np.abs(af - ef) <= tolerance)
    return (af == ef) | _both_nan(af, ef) | near


def _float_format(d: np.dtype):
    """(bits, has a sign bit) of a real float dtype."""
    if d.kind == "f":
        return 8 * d.itemsize, True
    info = ml_dtypes.finfo(d)
    return int(info.bits), float(info.min) < 0


def bits_of(x: np.ndarray) -> np.ndarray:
    """The bit pattern of every element of a real array, as uint64."""
    x = np.ascontiguousarray(x)
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    return x.view(unsigned).astype(_UNSIGNED_BITS)


def _ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Units in the last place between real floats of one dtype, as StableHLO's check.expect_close
    counts them (uint64; non-finite values not bitwise equal are the largest uint64 apart)."""
    bits, signed = _float_format(a.dtype)
    sign = np.uint64(1 << (bits - 1)) if signed else np.uint64(0)
    ua, ub = bits_of(a), bits_of(b)
    ma, mb = ua & ~sign, ub & ~sign
    apart = np.where((ua & sign) == (ub & sign), np.maximum(ma, mb) - np.minimum(ma, mb), ma + mb)
    af, bf = a.astype(np.float64), b.astype(np.float64)
    apart = np.where(np.isfinite(af) & np.isfinite(bf), apart, np.uint64(_FAR))
    return np.where((ua == ub) | _both_nan(af, bf), np.uint64(0), apart)


def _distance(a: np.ndarray, e: np.ndarray) -> np.ndarray:
    return np.maximum.reduce([_ulp_distance(x, y) for x, y in zip(_parts(a), _parts(e))])


def compare(check: Check, actual: np.ndarray, expected: np.ndarray) -> str | None:
    """None if the check passes, else the reason (the first element that differs)."""
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return f"type mismatch: {actual.dtype}{list(actual.shape)} vs {expected.dtype}{list(expected.shape)}"
    actual, expected, distance = np.asarray(actual), np.asarray(expected), None
    if check.kind == "close" and is_float(actual.real.dtype):
        distance = np.asarray(_distance(actual, expected)).reshape(actual.shape)
        good = (distance >= check.min_ulp) & (distance <= check.max_ulp)
    elif check.kind == "almost_eq":
        good = np.logical_and.reduce([_almost_equal(a, e, check.tolerance)
                                      for a, e in zip(_parts(actual), _parts(expected))])
    else:
        good = np.logical_and.reduce([_equal(a, e) for a, e in zip(_parts(actual), _parts(expected))])
    bad = ~np.asarray(good).reshape(actual.shape)
    if not np.any(bad):
        return None
    i = tuple(int(v) for v in np.unravel_index(int(np.flatnonzero(bad)[0]), actual.shape))
    detail = ""
    if distance is not None:
        far = distance[i] == _FAR
        detail = (f", ULP difference {'infinite' if far else int(distance[i])} "
                  f"(allowed {check.min_ulp} to {check.max_ulp})")
    elif check.kind == "almost_eq" and is_float(actual.real.dtype):
        detail = f" (tolerance {check.tolerance:g})"
    return (f"{check.kind}: {int(np.sum(bad))} of {actual.size} elements differ; at index {list(i)}: "
            f"actual {actual[i]!s}, expected {expected[i]!s}{detail}")


def first_bit_difference(raw: np.ndarray, optimized: np.ndarray):
    """None when the two arrays hold the same bits, else (index, count of elements that differ)."""
    if raw.shape != optimized.shape or raw.dtype != optimized.dtype:
        return (), -1
    if not raw.size:
        return None
    flat_raw = np.ascontiguousarray(raw).view(np.uint8).reshape(raw.size, -1)
    flat_opt = np.ascontiguousarray(optimized).view(np.uint8).reshape(optimized.size, -1)
    bad = np.flatnonzero((flat_raw != flat_opt).any(axis=1))
    if not bad.size:
        return None
    return tuple(int(v) for v in np.unravel_index(int(bad[0]), raw.shape)), int(bad.size)


def hex_bits(x: np.ndarray, index) -> str:
    """The bits of one element (native byte order), most significant byte first."""
    element = np.ascontiguousarray(np.asarray(x)[index]).reshape(1)
    return "0x" + element.view(np.uint8)[::-1].tobytes().hex()
