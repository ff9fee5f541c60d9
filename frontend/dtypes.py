"""Dtypes hloforge can represent, and numpy-2 promotion with weak Python scalars (NEP 50)."""
from __future__ import annotations

import numpy as np
import ml_dtypes

bfloat16 = np.dtype(ml_dtypes.bfloat16)

SUPPORTED = tuple(np.dtype(d) for d in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.complex64,
    np.complex128))
_SUPPORTED_SET = frozenset(SUPPORTED)

_WEAK_KIND = {bool: 0, int: 1, float: 2, complex: 3}
_DEFAULT_FOR_WEAK = {bool: np.dtype(bool), int: np.dtype(np.int64),
                     float: np.dtype(np.float64), complex: np.dtype(np.complex128)}


def canonical(dtype) -> np.dtype:
    """``np.dtype(dtype)``, checked to be one hloforge supports."""
    if isinstance(dtype, np.dtype) and dtype in _SUPPORTED_SET:  # (the common case)
        return dtype
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"unsupported dtype {dtype!r}") from None
    if d not in _SUPPORTED_SET:
        raise TypeError(f"unsupported dtype {d}; supported: {', '.join(x.name for x in SUPPORTED)}")
    return d


def is_bool(d) -> bool:
    return np.dtype(d) == np.bool_


def is_signed_int(d) -> bool:
    return np.dtype(d).kind == "i"


def is_unsigned_int(d) -> bool:
    return np.dtype(d).kind == "u"


def is_integer(d) -> bool:
    return np.dtype(d).kind in "iu"


def is_float(d) -> bool:
    """Real floating point, bfloat16 included."""
    d = np.dtype(d)
    return d.kind == "f" or d == bfloat16


def is_complex(d) -> bool:
    return np.dtype(d).kind == "c"


def is_inexact(d) -> bool:
    return is_float(d) or is_complex(d)


def kind_rank(d) -> int:
    """0 bool, 1 integer, 2 real float, 3 complex."""
    return 0 if is_bool(d) else 1 if is_integer(d) else 2 if is_float(d) else 3


def real_dtype(d) -> np.dtype:
    """complex64 -> float32, complex128 -> float64; other dtypes unchanged."""
    d = np.dtype(d)
    return {np.dtype(np.complex64): np.dtype(np.float32),
            np.dtype(np.complex128): np.dtype(np.float64)}.get(d, d)


def complex_dtype(d) -> np.dtype:
    """The complex dtype that holds ``d``: f64 -> c128, anything narrower -> c64."""
    d = np.dtype(d)
    if is_complex(d):
        return d
    return np.dtype(np.complex128) if d == np.float64 or is_integer(d) else np.dtype(np.complex64)


def _promote_strong(a: np.dtype, b: np.dtype) -> np.dtype:
    if a == b:
        return a
    if bfloat16 in (a, b):
        other = b if a == bfloat16 else a
        if other.kind in "biu":
            return bfloat16
        if other == np.float16:
            return np.dtype(np.float32)
    return np.result_type(a, b)


def _promote_weak(strong: np.dtype, scalar_type: type) -> np.dtype:
    rank = _WEAK_KIND[scalar_type]
    have = kind_rank(strong)
    if rank <= have:
        return strong
    if rank == 3:
        return complex_dtype(strong) if have == 2 else np.dtype(np.complex128)
    return _DEFAULT_FOR_WEAK[scalar_type]


def weak_type(value):
    """The Python scalar type of a weakly typed value, or None for a strongly typed one."""
    t = type(value)
    if t in _WEAK_KIND:
        return t
    if isinstance(value, bool):
        return bool
    if isinstance(value, int) and not isinstance(value, np.generic):
        return int
    if isinstance(value, float) and not isinstance(value, np.generic):
        return float
    if isinstance(value, complex) and not isinstance(value, np.generic):
        return complex
    return None


def result_type(*operands) -> np.dtype:
    """numpy-2 ``result_type`` over dtypes/tensors/arrays and weak Python scalars.

    >>> result_type(np.float32, 2.0)
    dtype('float32')
    """
    strong = None
    weak = []
    for x in operands:
        w = weak_type(x)
        if w is not None:
            weak.append(w)
            continue
        d = x if isinstance(x, np.dtype) else getattr(x, "dtype", None)
        d = canonical(d if d is not None else np.asarray(x).dtype) if not isinstance(x, type) else canonical(x)
        strong = d if strong is None else _promote_strong(strong, d)
    if strong is None:
        top = max(weak, key=_WEAK_KIND.__getitem__)
        return _DEFAULT_FOR_WEAK[top]
    for w in weak:
        strong = _promote_weak(strong, w)
    return strong


def check_scalar_fits(value, dtype: np.dtype, where: str) -> None:
    """NEP 50: a Python int that does not fit the integer dtype is an OverflowError."""
    if is_integer(dtype) and type(value) is int:
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise OverflowError(f"{where}: Python integer {value} out of bounds for {dtype}")
