"""StableHLO op semantics in numpy, for constant folding.

Every evaluator returns a numpy array of the op's result dtype, or None when the
op's result is implementation-defined for these inputs (integer division by zero,
out-of-range float -> int converts, ...) or when numpy's semantics might differ:
then the op is not folded. 16-bit floats are computed in float32 and rounded, as
XLA does; everything else in the op's own dtype.
"""
from __future__ import annotations

import numpy as np


def _is_half(dtype: np.dtype) -> bool:
    return dtype.itemsize == 2 and (dtype.kind == "f" or dtype.name == "bfloat16")


def _wide(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32) if _is_half(x.dtype) else x


def _kind(x: np.ndarray) -> str:
    """b, i, u, f (bfloat16 included) or c."""
    return "b" if x.dtype == np.bool_ else "f" if x.dtype.name == "bfloat16" else x.dtype.kind


def _trunc_div(a, b):
    q = np.floor_divide(a, b)
    if a.dtype.kind == "i":
        q = q + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0))).astype(a.dtype)
    return q


def _int_division_defined(a, b) -> bool:
    if (b == 0).any():
        return False
    return a.dtype.kind != "i" or not ((a == np.iinfo(a.dtype).min) & (b == -1)).any()


def _divide(a, b):
    if a.dtype.kind in "iu":
        return _trunc_div(a, b) if _int_division_defined(a, b) else None
    return np.divide(a, b)


def _remainder(a, b):
    if a.dtype.kind in "iu":
        return np.fmod(a, b) if _int_division_defined(a, b) else None
    return np.fmod(a, b)


def _minmax(fn):
    def run(a, b):
        if a.dtype.kind == "f" and ((a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))).any():
            return None  # max(-0, +0) is not pinned down
        return fn(a, b)
    return run


def _round_afz(x):
    r = np.trunc(x)
    return r + np.where(np.abs(x - r) >= 0.5, np.sign(x), 0).astype(x.dtype)


def _sign(x):
    return np.where(x == 0, x, np.sign(x)).astype(x.dtype) if x.dtype.kind == "f" else np.sign(x)


def _logistic(x):
    return (1 / (1 + np.exp(-x))).astype(x.dtype)


def _real(x):
    return x.real if x.dtype.kind == "c" else x


def _imag(x):
    return x.imag if x.dtype.kind == "c" else np.zeros_like(x)


def _not(x):
    return np.logical_not(x) if x.dtype == np.bool_ else np.invert(x)


def _bool_or_int(bool_fn, int_fn):
    return lambda a, b: bool_fn(a, b) if a.dtype == np.bool_ else int_fn(a, b)


# op name -> (operand kinds it folds: b bool, i/u ints, f float, c complex; numpy function)
UNARY = {
    "stablehlo.negate": ("iufc", np.negative),
    "stablehlo.abs": ("ifc", np.abs),
    "stablehlo.exponential": ("fc", np.exp),
    "stablehlo.exponential_minus_one": ("fc", np.expm1),
    "stablehlo.log": ("fc", np.log),
    "stablehlo.log_plus_one": ("fc", np.log1p),
    "stablehlo.sine": ("fc", np.sin),
    "stablehlo.cosine": ("fc", np.cos),
    "stablehlo.tan": ("fc", np.tan),
    "stablehlo.tanh": ("fc", np.tanh),
    "stablehlo.sqrt": ("fc", np.sqrt),
    "stablehlo.rsqrt": ("f", lambda x: (1 / np.sqrt(x)).astype(x.dtype)),
    "stablehlo.cbrt": ("f", np.cbrt),
    "stablehlo.logistic": ("f", _logistic),
    "stablehlo.floor": ("f", np.floor),
    "stablehlo.ceil": ("f", np.ceil),
    "stablehlo.round_nearest_even": ("f", np.rint),
    "stablehlo.round_nearest_afz": ("f", _round_afz),
    "stablehlo.sign": ("if", _sign),
    "stablehlo.not": ("biu", _not),
    "stablehlo.is_finite": ("f", np.isfinite),
    "stablehlo.real": ("fc", _real),
    "stablehlo.imag": ("fc", _imag),
}

BINARY = {
    # bool add is logical or in the spec but xor in XLA's CPU backend: not folded
    "stablehlo.add": ("iufc", np.add),
    "stablehlo.subtract": ("iufc", np.subtract),
    "stablehlo.multiply": ("biufc", _bool_or_int(np.logical_and, np.multiply)),
    "stablehlo.divide": ("iufc", _divide),
    "stablehlo.remainder": ("iuf", _remainder),
    "stablehlo.maximum": ("biuf", _minmax(np.maximum)),
    "stablehlo.minimum": ("biuf", _minmax(np.minimum)),
    "stablehlo.power": ("f", np.power),
    "stablehlo.and": ("biu", np.bitwise_and),
    "stablehlo.or": ("biu", np.bitwise_or),
    "stablehlo.xor": ("biu", np.bitwise_xor),
    "stablehlo.atan2": ("f", np.arctan2),
    "stablehlo.complex": ("f", lambda a, b: _complex(a, b)),
}


def _complex(a, b):
    out = np.empty(a.shape, np.complex64 if a.dtype == np.float32 else np.complex128)
    out.real, out.imag = a, b
    return out


def elementwise(name: str, operands: list, result_dtype: np.dtype):
    """Apply the unary or binary op ``name``; None if it is not folded for these dtypes."""
    table = UNARY if len(operands) == 1 else BINARY
    entry = table.get(name)
    if entry is None or _kind(operands[0]) not in entry[0]:
        return None
    args = [np.atleast_1d(_wide(x)) for x in operands]
    with np.errstate(all="ignore"):
        out = entry[1](*args)
    if out is None:
        return None
    return np.asarray(out).astype(result_dtype).reshape(np.shape(operands[0]))


_COMPARE = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
            "GT": np.greater, "GE": np.greater_equal}
_COMPARE_TYPE = {"f": "FLOAT", "c": "FLOAT", "i": "SIGNED", "u": "UNSIGNED", "b": "UNSIGNED"}


def compare(a, b, direction: str, compare_type: str | None):
    kind = _kind(a)
    if compare_type is not None and compare_type != _COMPARE_TYPE[kind]:
        return None  # TOTALORDER, or a signedness that differs from the dtype's
    if kind == "c" and direction not in ("EQ", "NE"):
        return None
    with np.errstate(all="ignore"):
        return _COMPARE[direction](_wide(a), _wide(b))


def convert(x: np.ndarray, dtype: np.dtype):
    """StableHLO convert: complex -> real keeps the real part; float -> int truncates in range."""
    dtype = np.dtype(dtype)
    src = _kind(x)
    if src == "c" and dtype.kind != "c":
        if dtype == np.bool_:
            return None if np.isnan(x).any() else x != 0
        return convert(x.real, dtype)
    if dtype == np.bool_:
        return None if src in "fc" and np.isnan(x).any() else x != 0
    if src == "f" and dtype.kind in "iu":
        info = np.iinfo(dtype)
        t = np.trunc(x.astype(np.float64))
        if not np.isfinite(t).all() or (t < info.min).any() or (t > info.max).any():
            return None
        return t.astype(dtype)
    with np.errstate(all="ignore"):
        return x.astype(dtype)


def broadcast_in_dim(x: np.ndarray, shape, dims) -> np.ndarray:
    order = np.argsort(dims)
    x = np.transpose(x, order) if x.ndim else x
    expanded = [1] * len(shape)
    for i, d in enumerate(np.asarray(dims)[order]):
        expanded[d] = x.shape[i]
    return np.broadcast_to(x.reshape(expanded), tuple(shape))


_REDUCERS = {
    "stablehlo.add": (np.add, None), "stablehlo.multiply": (np.multiply, np.logical_and),
    "stablehlo.maximum": (np.maximum, np.logical_or), "stablehlo.minimum": (np.minimum, np.logical_and),
    "stablehlo.and": (np.bitwise_and, np.logical_and), "stablehlo.or": (np.bitwise_or, np.logical_or),
}


def reduce(x: np.ndarray, init: np.ndarray, dims, body: str):
    """``reduce`` with a body that applies one binary op ``body`` to its two arguments."""
    kind = _kind(x)
    if body not in _REDUCERS or kind not in "biuf" + ("c" if body in (
            "stablehlo.add", "stablehlo.multiply") else ""):
        return None
    count = int(np.prod([x.shape[d] for d in dims], dtype=np.int64))
    if _is_half(x.dtype) and count > 1:
        return None  # the rounding of a 16-bit accumulation is the backend's choice
    if body in ("stablehlo.maximum", "stablehlo.minimum") and kind == "f":
        if (x == 0).any():
            return None
    if count == 0:
        return np.broadcast_to(init, [n for d, n in enumerate(x.shape) if d not in dims])
    ufunc = _REDUCERS[body][1 if x.dtype == np.bool_ else 0]
    if ufunc is None:
        return None
    with np.errstate(all="ignore"):
        acc = ufunc.reduce(_wide(x), axis=tuple(dims))
        return np.asarray(ufunc(_wide(init), acc)).astype(x.dtype)


def pad(x: np.ndarray, value, low, high, interior) -> np.ndarray:
    """numpy reference of ``stablehlo.pad`` (negative edges crop)."""
    big = [max(lo, 0) + n + max(n - 1, 0) * it + max(hi, 0)
           for n, lo, hi, it in zip(x.shape, low, high, interior)]
    out = np.full(big, value, dtype=x.dtype)
    out[tuple(slice(max(lo, 0), max(lo, 0) + n + max(n - 1, 0) * it, it + 1)
              for n, lo, it in zip(x.shape, low, interior))] = x
    return out[tuple(slice(max(-lo, 0), b - max(-hi, 0)) for b, lo, hi in zip(big, low, high))]


def fft(x: np.ndarray, fft_type: str, lengths, result_dtype) -> np.ndarray:
    """StableHLO fft over the trailing ``len(lengths)`` dims, computed in double precision."""
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    x = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
    fn = {"FFT": np.fft.fftn, "IFFT": np.fft.ifftn, "RFFT": np.fft.rfftn, "IRFFT": np.fft.irfftn}
    with np.errstate(all="ignore"):
        return fn[fft_type](x, s=list(lengths), axes=axes).astype(result_dtype)
