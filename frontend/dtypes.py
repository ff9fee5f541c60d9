"""Dtypes hloforge can represent, and promotion with weak Python scalars (NEP 50).

Two promotion modes, chosen by ``hf.config.dtypes`` (``runtime/settings.py`` calls ``set_mode``):
"numpy" (numpy 2: float64/int64 defaults) and "jax" (jax without x64: 32-bit defaults, inputs'
64-bit dtypes canonicalized to 32 bits, jax's promotion lattice). In both, weakly typed values
(Python scalars, and Tensors marked ``weak``: hf.jit's Python scalar arguments and what is computed
from them) take the other operand's dtype, and a result is weak where jax's would be.
"""
from __future__ import annotations

import functools

import numpy as np
import ml_dtypes

bfloat16 = np.dtype(ml_dtypes.bfloat16)

SUPPORTED = tuple(np.dtype(d) for d in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.complex64,
    np.complex128))
_SUPPORTED_SET = frozenset(SUPPORTED)

_WEAK_KIND = {bool: 0, int: 1, float: 2, complex: 3}
_KIND_TYPE = (bool, int, float, complex)  # (kind_rank -> the Python type of that kind)
MODES = ("numpy", "jax")
_DEFAULTS = {"numpy": {bool: np.dtype(bool), int: np.dtype(np.int64), float: np.dtype(np.float64),
                       complex: np.dtype(np.complex128)},
             "jax": {bool: np.dtype(bool), int: np.dtype(np.int32), float: np.dtype(np.float32),
                     complex: np.dtype(np.complex64)}}
X32 = {np.dtype(a): np.dtype(b) for a, b in ((np.int64, np.int32), (np.uint64, np.uint32),
                                             (np.float64, np.float32), (np.complex128, np.complex64))}
"""64-bit dtype -> the 32-bit one jax uses without x64 (``canonicalize`` in "jax" mode)."""
MODE = ["numpy"]
"""The promotion mode, ``MODE[0]``: "numpy" or "jax" (set with ``set_mode``; read it, do not write it)."""
_DEFAULT_FOR_WEAK = _DEFAULTS["numpy"]


def set_mode(mode: str) -> None:
    """Select the promotion mode: "numpy" (numpy 2) or "jax" (jax without x64); ``hf.config.dtypes``
    calls this. ValueError for anything else."""
    global _DEFAULT_FOR_WEAK
    if mode not in MODES:
        raise ValueError(f"hf.config.dtypes must be one of {MODES}, got {mode!r}")
    MODE[0] = mode
    _DEFAULT_FOR_WEAK = _DEFAULTS[mode]


def mode() -> str:
    """The promotion mode: "numpy" or "jax" (``hf.config.dtypes``)."""
    return MODE[0]


def default_int() -> np.dtype:
    """The default integer dtype (index results, ``arange`` of Python ints): int64, int32 in "jax" mode."""
    return _DEFAULT_FOR_WEAK[int]


def default_float() -> np.dtype:
    """The default floating dtype (``zeros``, ``linspace``, Python floats): float64, float32 in "jax" mode."""
    return _DEFAULT_FOR_WEAK[float]


def default_complex() -> np.dtype:
    """The default complex dtype: complex128, complex64 in "jax" mode."""
    return _DEFAULT_FOR_WEAK[complex]


def canonicalize(dtype) -> np.dtype:
    """``canonical(dtype)``, narrowed to 32 bits in "jax" mode (as jax does without x64:
    float64 -> float32, int64 -> int32, uint64 -> uint32, complex128 -> complex64).

    >>> canonicalize(float)  # (in "jax" mode)
    dtype('float32')
    """
    d = canonical(dtype)
    return X32.get(d, d) if MODE[0] == "jax" else d


_RANKS = {d: 0 if d.kind == "b" else 1 if d.kind in "iu" else 3 if d.kind == "c" else 2 for d in SUPPORTED}


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
    r = _RANKS.get(d) if isinstance(d, np.dtype) else None
    return r if r is not None else 0 if is_bool(d) else 1 if is_integer(d) else 2 if is_float(d) else 3


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
    if MODE[0] == "jax":
        return _promote_jax(a, b)
    if bfloat16 in (a, b):
        other = b if a == bfloat16 else a
        if other.kind in "biu":
            return bfloat16
        if other == np.float16:
            return np.dtype(np.float32)
    return np.result_type(a, b)


def narrow(d, *inputs) -> np.dtype:
    """"jax" mode: the dtype numpy's rule gave (``d``, for operands of dtypes ``inputs``) narrowed to
    32 bits unless an operand is 64-bit itself (jax without x64 computes none in 64 bits; internal
    64-bit values keep theirs); "numpy" mode: ``canonical(d)``.

    >>> narrow(np.int64, np.int8)  # (numpy.sum of int8, in "jax" mode)
    dtype('int32')
    """
    d = canonical(d)
    if MODE[0] != "jax" or d not in X32 or any(np.dtype(i) in X32 for i in inputs):
        return d
    return X32[d]


@functools.lru_cache(maxsize=None)
def _promote_jax(a: np.dtype, b: np.dtype) -> np.dtype:
    """jax's lattice (``jax.numpy.promote_types``); a 64-bit result of 32-bit operands (uint32 and
    int32) narrowed as jax without x64 narrows it."""
    from hloforge.frontend import jax_api
    out = jax_api.promote_types(a, b)
    return X32[out] if out in X32 and a not in X32 and b not in X32 else out


def _promote_weak(strong: np.dtype, scalar_type: type) -> np.dtype:
    rank = _WEAK_KIND[scalar_type]
    have = kind_rank(strong)
    if rank <= have:
        return strong
    if rank == 3:
        return complex_dtype(strong) if have == 2 else _DEFAULT_FOR_WEAK[complex]
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
    """numpy-2 ``result_type`` over dtypes/tensors/arrays and weak Python scalars (jax's in "jax"
    mode: 32-bit defaults, numpy arrays' 64-bit dtypes as 32-bit ones, jax's lattice).

    >>> result_type(np.float32, 2.0)
    dtype('float32')
    """
    return _promotion(operands)


def weak_result(*operands) -> bool:
    """Whether promoting ``operands`` gives a weakly typed result, as jax decides: every operand
    is weak (Python scalars, weak Tensors), or the weak ones are of a higher kind than the strong
    ones, which are bools or integers (``int32_array * 0.5`` is weak; ``float16_array * 1j`` is not).

    >>> weak_result(np.int32, 0.5), weak_result(np.float32, 0.5)
    (True, False)
    """
    weak_rank = strong_rank = -1
    for x in operands:
        w = weak_type(x)
        if w is None and getattr(x, "weak", False) is True:
            w = _KIND_TYPE[kind_rank(x.dtype)]
        if w is not None:
            weak_rank = max(weak_rank, _WEAK_KIND[w])
            continue
        d = x if isinstance(x, (np.dtype, type)) else getattr(x, "dtype", None)
        strong_rank = max(strong_rank, kind_rank(d if d is not None else np.asarray(x).dtype))
        if strong_rank >= 2:  # (a strong float or complex: never weak)
            return False
    return weak_rank >= 0 and weak_rank > strong_rank


def _promotion(operands) -> np.dtype:
    jax_mode = MODE[0] == "jax"
    strong = None
    weak = []
    weak_base = None  # (the promoted dtypes of weak Tensors)
    for x in operands:
        w = weak_type(x)
        if w is not None:
            weak.append(w)
            continue
        if getattr(x, "weak", False) is True:  # (a weakly typed Tensor)
            weak.append(_KIND_TYPE[kind_rank(x.dtype)])
            weak_base = x.dtype if weak_base is None else _promote_strong(weak_base, x.dtype)
            continue
        if isinstance(x, (np.dtype, type)):
            d = canonical(x)
        else:
            d = getattr(x, "dtype", None)
            array_like = d is None or isinstance(x, (np.ndarray, np.generic))
            d = canonical(d if d is not None else np.asarray(x).dtype)
            if jax_mode and array_like:
                d = X32.get(d, d)
        strong = d if strong is None else _promote_strong(strong, d)
    if strong is None:
        if weak_base is None:
            return _DEFAULT_FOR_WEAK[max(weak, key=_WEAK_KIND.__getitem__)]
        for w in weak:
            weak_base = _promote_weak(weak_base, w)
        return weak_base
    for w in weak:
        strong = _promote_weak(strong, w)
    return strong


def python_int_dtype(value: int, where: str) -> np.dtype:
    """The dtype of a constant made of the Python int ``value`` when none is asked for: the default
    integer, or uint64 for one in [2**63, 2**64) in "numpy" mode (as ``np.asarray(2**63)``). Beyond, an
    OverflowError naming the value (numpy would make an object array; jax, in "jax" mode, refuses
    what int32 does not hold)."""
    d = _DEFAULT_FOR_WEAK[int]
    info = np.iinfo(d)
    if info.min <= value <= info.max:
        return d
    if MODE[0] == "numpy":
        if 0 <= value < 2**64:
            return np.dtype(np.uint64)
        raise OverflowError(f"{where}: Python int {value} too large to convert to int64 or uint64")
    raise OverflowError(f"{where}: Python int {value} too large to convert to {d} (hf.config.dtypes is \"jax\")")


def check_ints_fit(array: np.ndarray, where: str) -> None:
    """In "jax" mode, an OverflowError for a 64-bit integer array made of Python ints (a list) holding a
    value int32 does not, as jax refuses it (instead of narrowing it with a wrap)."""
    info = np.iinfo(np.int32)
    bad = array[(array < info.min) | (array > info.max)] if array.dtype.kind == "i" else array[array > info.max]
    if bad.size:
        raise OverflowError(f"{where}: Python integer {int(bad.reshape(-1)[0])} out of bounds for int32 "
                            f"(hf.config.dtypes is \"jax\")")


def check_scalar_fits(value, dtype: np.dtype, where: str) -> None:
    """NEP 50: a Python int that does not fit the integer dtype is an OverflowError."""
    if is_integer(dtype) and type(value) is int:
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise OverflowError(f"{where}: Python integer {value} out of bounds for {dtype}")
