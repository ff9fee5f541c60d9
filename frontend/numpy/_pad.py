"""numpy.pad with every numpy mode, lowered to stablehlo.pad, slice, reverse, concatenate,
broadcast_in_dim, reduce and sort (never gather)."""
from __future__ import annotations

import fractions
import functools
import warnings

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy import _reductions as reductions
from hloforge.frontend.numpy._base import asarray, astype, broadcast_to, normalize_axis, splat
from hloforge.frontend.numpy._math import (
    add, divide, equal, floor, floor_divide, multiply, not_equal, round, subtract, where)
from hloforge.frontend.tracing import Tensor

# mode -> the keyword arguments it accepts (as numpy)
_KWARGS = {
    "constant": ("constant_values",), "edge": (), "linear_ramp": ("end_values",),
    "maximum": ("stat_length",), "mean": ("stat_length",), "median": ("stat_length",),
    "minimum": ("stat_length",), "reflect": ("reflect_type",), "symmetric": ("reflect_type",),
    "wrap": (), "empty": (),
}


def pad(x, pad_width, mode="constant", **kwargs) -> Tensor:
    """numpy.pad: pad every axis of ``x`` with numpy's semantics for each string mode.

    Emits StableHLO by mode: "constant" and "empty" one ``stablehlo.pad`` (one per run of
    sides sharing a constant when ``constant_values`` differ); "edge", "reflect", "symmetric",
    "wrap" ``stablehlo.slice``/``reverse``/``broadcast_in_dim``/``concatenate`` (no gather;
    widths wider than the axis repeat the reflection or wrap as numpy does); "linear_ramp"
    elementwise ops on ``iota``; "maximum", "minimum", "mean" ``stablehlo.reduce``; "median"
    ``stablehlo.sort``. Axes are padded in order, so corners come from later axes, as in numpy.

    Beyond numpy: in "constant" mode a negative width crops that side (as ``stablehlo.pad``
    does). "empty" pads with zeros. ``reflect_type`` other than "even"/"odd" is an error
    (numpy treats it as "even"). A callable ``mode`` is not supported. "linear_ramp" on integer
    or bool arrays with integer (or halves, quarters, ...) ``end_values`` is exact (int64
    arithmetic); numpy floors a float64 evaluation that is one lower in rare cases where the exact
    value is an integer (e.g. 42, not 43, at ``[0, 7]`` of
    ``np.pad([[70], [-20]], ((0, 0), (10, 0)), "linear_ramp", end_values=-20)``).

    Args:
      x: Tensor or array-like.
      pad_width: int, ``(before, after)``, ``((before_0, after_0), ...)`` one pair per axis,
        or a dict ``{axis: int or (before, after)}``; static ints.
      mode: "constant", "edge", "linear_ramp", "maximum", "mean", "median", "minimum",
        "reflect", "symmetric", "wrap" or "empty".
      constant_values: ("constant") scalar, pair or per-axis pairs, cast to x's dtype as numpy
        does; or one 0-d Tensor.
      end_values: ("linear_ramp") scalar, pair or per-axis pairs; the ramps' outer ends.
      stat_length: ("maximum", "mean", "median", "minimum") None (whole axis), int, pair or
        per-axis pairs: how many values at each edge the statistic uses.
      reflect_type: ("reflect", "symmetric") "even" (default) or "odd" (2 * edge - reflection).
    Returns:
      A Tensor of x's dtype, each axis grown by ``before + after``.
    Example:
      >>> y = hnp.pad(x, ((1, 2), (0, 3)), mode="reflect")   # x: (4, 5) -> (7, 8)
    """
    x = asarray(x)
    widths = _pad_widths(pad_width, x.ndim)
    if callable(mode):
        raise TypeError(f"pad: a callable mode ({mode!r}) is not supported; use one of the string modes "
                        f"{', '.join(_KWARGS)}")
    if not isinstance(mode, str) or mode not in _KWARGS:
        raise ValueError(f"pad: mode {mode!r} is not supported; expected one of {', '.join(_KWARGS)}")
    unsupported = sorted(set(kwargs) - set(_KWARGS[mode]))
    if unsupported:
        raise ValueError(f"pad: unsupported keyword arguments for mode {mode!r}: {unsupported}")
    if mode != "constant" and any(w < 0 for pair in widths for w in pair):
        raise ValueError(f"pad: pad_width {pad_width!r} has negative values; only mode 'constant' "
                         "crops with negative widths")
    if mode == "constant":
        return _constant(x, widths, kwargs.get("constant_values", 0))
    if mode == "empty":
        return _constant(x, widths, 0)
    if x.size == 0:
        for axis, (lo, hi) in enumerate(widths):
            if x.shape[axis] == 0 and (lo or hi):
                raise ValueError(f"pad: can't extend empty axis {axis} of shape {x.shape} (pad_width "
                                 f"{(lo, hi)}) using modes other than 'constant' or 'empty' (mode {mode!r})")
        return _constant(x, widths, 0)  # the result is empty too
    return _MODES[mode](x, widths, **kwargs)


# ---------------------------------------------------------------- arguments

def _has_tensor(value) -> bool:
    if isinstance(value, Tensor):
        return True
    return isinstance(value, (list, tuple)) and any(_has_tensor(v) for v in value)


def _static(name, value):
    if _has_tensor(value):
        raise TypeError(f"pad: {name} must be static Python/numpy numbers, got a traced Tensor")
    try:
        return np.asarray(value)
    except ValueError:
        raise ValueError(f"pad: {name} {value!r} is ragged; expected a scalar, a (before, after) pair "
                         "or one pair per axis") from None


def _pairs(name, value, ndim, a=None) -> list:
    """numpy's broadcast of a scalar, a pair or per-axis pairs (``a``, default ``value`` as an
    array) to ``ndim`` (before, after) pairs.

    Like numpy, a scalar or single pair yields numpy scalars, per-axis pairs Python scalars
    (which matters for how values are cast).
    """
    a = _static(name, value) if a is None else a
    if a.ndim < 3 and a.size == 1:
        v = a.ravel()[0]
        return [(v, v)] * ndim
    if a.ndim < 3 and a.size == 2 and a.shape != (2, 1):
        lo, hi = a.ravel()
        return [(lo, hi)] * ndim
    try:
        return [tuple(p) for p in np.broadcast_to(a, (ndim, 2)).tolist()]
    except ValueError:
        raise ValueError(f"pad: {name} {value!r} of shape {a.shape} cannot be broadcast to ({ndim}, 2), "
                         "one (before, after) pair per axis") from None


def _pad_widths(pad_width, ndim) -> list:
    if isinstance(pad_width, dict):
        seq = [(0, 0)] * ndim
        for axis, width in pad_width.items():
            pair = (width, width) if np.ndim(width) == 0 else tuple(width)
            if len(pair) != 2:
                raise ValueError(f"pad: pad_width[{axis!r}] = {width!r} must be an int or a (before, after) "
                                 "pair")
            seq[normalize_axis(axis, ndim, "pad_width axis")] = pair
        pad_width = seq
    a = _static("pad_width", pad_width)
    if a.dtype.kind != "i":
        raise TypeError(f"pad: pad_width {pad_width!r} must be of integral type, got dtype {a.dtype}")
    return [(int(lo), int(hi)) for lo, hi in _pairs("pad_width", pad_width, ndim, a)]


def _stat_lengths(stat_length, ndim) -> list:
    if stat_length is None:
        return [(None, None)] * ndim
    a = _static("stat_length", stat_length)
    if a.dtype.kind not in "iuf":
        raise TypeError(f"pad: stat_length {stat_length!r} must be numbers or None, got dtype {a.dtype}")
    rounded = np.round(a).astype(np.intp)  # numpy rounds float lengths
    pairs = [(int(lo), int(hi)) for lo, hi in _pairs("stat_length", stat_length, ndim, rounded)]
    if any(v < 0 for p in pairs for v in p):
        raise ValueError(f"pad: stat_length {stat_length!r} must be >= 0")
    return pairs


# ---------------------------------------------------------------- building blocks

def _take(x, axis, start, stop) -> Tensor:
    if (start, stop) == (0, x.shape[axis]):
        return x
    starts, limits = [0] * x.ndim, list(x.shape)
    starts[axis], limits[axis] = start, stop
    return ops.slice(x, starts, limits)


def _reverse(x, axis):
    return None if x is None else ops.reverse(x, (axis,))


def _repeat(x, axis, width):
    """``x`` (size 1 along ``axis``) repeated ``width`` times along it; None for width 0."""
    if x is None or width == 0:
        return None
    shape = list(x.shape)
    shape[axis] = width
    return broadcast_to(x, shape)


def _join(left, x, right, axis) -> Tensor:
    parts = [p for p in (left, x, right) if p is not None and p.shape[axis] > 0]
    return parts[0] if len(parts) == 1 else ops.concatenate(parts, axis)


def _per_axis(x, widths, pad_axis, *per_axis_args) -> Tensor:
    """numpy's order: pad axis 0, then axis 1 of that result, ... (corners come from later axes)."""
    for axis, (lo, hi) in enumerate(widths):
        if lo or hi:
            x = pad_axis(x, axis, lo, hi, *(arg[axis] for arg in per_axis_args))
    return x


# ---------------------------------------------------------------- modes

def _fill_value(value, dtype):
    """``value`` cast to ``dtype`` by numpy's assignment rules, as numpy.pad stores it."""
    out = np.zeros(1, dtype)
    try:
        out[...] = value
    except (TypeError, ValueError, OverflowError) as e:
        raise type(e)(f"pad: constant_values entry {value!r} cannot be stored in {dtype}: {e}") from None
    return out[0]


def _constant(x, widths, values) -> Tensor:
    if isinstance(values, Tensor):
        if values.ndim:
            raise TypeError(f"pad: constant_values as a Tensor must be 0-d, got {values}")
        value = astype(values, x.dtype)
        fills = [(value, value)] * x.ndim
    else:
        fills = [tuple(_fill_value(v, x.dtype) for v in pair) for pair in _pairs("constant_values", values,
                                                                               x.ndim)]
    # One stablehlo.pad per run of sides (axis by axis, before then after) that share a value:
    # a later pad covers the earlier ones' corners, as numpy's later axes do.
    groups, crops = [], []
    for axis, (pair, fill) in enumerate(zip(widths, fills)):
        for side, (width, value) in enumerate(zip(pair, fill)):
            if width < 0:
                crops.append((axis, side, width))
            elif width > 0:
                if not groups or not _same_value(groups[-1][0], value):
                    groups.append([value, [0] * x.ndim, [0] * x.ndim])
                groups[-1][1 + side][axis] = width
    if crops and not groups:
        groups.append([fills[0][0], [0] * x.ndim, [0] * x.ndim])
    for axis, side, width in crops:
        groups[0][1 + side][axis] = width
    for value, low, high in groups:
        x = ops.pad(x, value, low, high)
    return x


def _same_value(a, b) -> bool:
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return a is b
    return np.asarray(a).tobytes() == np.asarray(b).tobytes()


def _edge_axis(x, axis, lo, hi) -> Tensor:
    n = x.shape[axis]
    first, last = _take(x, axis, 0, 1), _take(x, axis, n - 1, n)
    return _join(_repeat(first, axis, lo), x, _repeat(last, axis, hi), axis)


def _edge(x, widths) -> Tensor:
    return _per_axis(x, widths, _edge_axis)


def _reflect_type(reflect_type) -> bool:
    if reflect_type not in ("even", "odd"):
        raise ValueError(f"pad: reflect_type {reflect_type!r} must be 'even' or 'odd'")
    return reflect_type == "odd"


def _odd(edge, chunk):
    """numpy's ``2 * edge - chunk``, computed in numpy's dtypes and stored back in chunk's."""
    return None if chunk is None else astype(subtract(multiply(2, edge), chunk), chunk.dtype)


def _mirror_axis(x, axis, lo, hi, symmetric, odd) -> Tensor:
    """numpy's repeated reflection: each round mirrors at most the current width's whole periods."""
    n = x.shape[axis]
    if n == 1:  # numpy extends singleton axes with the edge value
        return _edge_axis(x, axis, lo, hi)
    skip = 0 if symmetric else 1  # reflect does not repeat the edge value
    while lo > 0 or hi > 0:
        m = x.shape[axis]
        chunk = m // n * n if symmetric else (m - 1) // (n - 1) * (n - 1)
        cl, cr = min(chunk, lo), min(chunk, hi)
        left = _reverse(_take(x, axis, skip, skip + cl), axis) if cl else None
        right = _reverse(_take(x, axis, m - skip - cr, m - skip), axis) if cr else None
        if odd:
            left, right = _odd(_take(x, axis, 0, 1), left), _odd(_take(x, axis, m - 1, m), right)
        x = _join(left, x, right, axis)
        lo, hi = lo - cl, hi - cr
    return x


def _mirror(symmetric):
    """Mode "symmetric" (the edge value repeats) or "reflect" (it does not)."""
    def fill(x, widths, reflect_type="even") -> Tensor:
        odd = _reflect_type(reflect_type)
        return _per_axis(x, widths, lambda x, axis, lo, hi: _mirror_axis(x, axis, lo, hi, symmetric, odd))
    return fill


def _wrap_axis(x, axis, lo, hi) -> Tensor:
    n = x.shape[axis]
    while lo > 0 or hi > 0:
        m = x.shape[axis]
        period = m // n * n
        cl, cr = min(period, lo), min(period, hi)
        left = _take(x, axis, period - cl, period) if cl else None
        right = _take(x, axis, m - period, m - period + cr) if cr else None
        x = _join(left, x, right, axis)
        lo, hi = lo - cl, hi - cr
    return x


def _wrap(x, widths) -> Tensor:
    return _per_axis(x, widths, _wrap_axis)


def _ramp(edge, axis, num, start) -> Tensor:
    """``numpy.linspace(start, edge, num, endpoint=False, dtype=edge.dtype)`` along ``axis``."""
    shape = list(edge.shape)
    shape[axis] = num
    exact = _small_fraction(start)
    if not dtypes.is_inexact(edge.dtype) and exact is not None:
        # Exact integer arithmetic: floor(start + k * (edge - start) / num), or != 0 for bool.
        # numpy floors a float64 evaluation of this, which is one lower in rare cases where the exact
        # value is an integer; evaluating numpy's float formula here would not match it either,
        # because XLA rewrites x / c as x * (1 / c) and fuses a * b + c into an FMA.
        a, den = exact  # start = a / den
        e = astype(edge, np.int64)
        e = e if den == 1 else multiply(e, den)
        numerator = add(multiply(ops.iota(shape, np.int64, axis), subtract(e, a)), a * num)
        if edge.dtype == np.bool_:
            return not_equal(numerator, 0)
        return astype(floor_divide(numerator, num * den), edge.dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dt = np.linspace(start, np.zeros(1, edge.dtype), 1, endpoint=False).dtype  # numpy's working dtype
    first = asarray(np.asarray(start).astype(dt))
    delta = subtract(astype(edge, dt), first)
    k = astype(ops.iota(shape, dtypes.real_dtype(dt), axis), dt)
    step = divide(delta, num)
    # numpy switches to (k / num) * delta when any step is 0 (denormals, gh-5437)
    y = add(where(reductions.any(equal(step, 0)), multiply(divide(k, num), delta), multiply(k, step)), first)
    if dtypes.is_integer(edge.dtype):
        y = floor(y)
    return astype(y, edge.dtype)


def _small_fraction(value):
    """``value`` as (numerator, power-of-two denominator) if it is real, finite and simple enough
    for int64 arithmetic (integers, halves, quarters, ...); else None."""
    v = np.asarray(value)
    if v.dtype.kind not in "biuf" or not np.isfinite(v):
        return None
    f = fractions.Fraction(v.item())
    return (f.numerator, f.denominator) if f.denominator <= 2**16 and abs(f.numerator) < 2**40 else None


def _ramp_axis(x, axis, lo, hi, end_values) -> Tensor:
    n = x.shape[axis]
    left = _ramp(_take(x, axis, 0, 1), axis, lo, end_values[0]) if lo else None
    right = _reverse(_ramp(_take(x, axis, n - 1, n), axis, hi, end_values[1]), axis) if hi else None
    return _join(left, x, right, axis)


def _linear_ramp(x, widths, end_values=0) -> Tensor:
    if _has_tensor(end_values):
        raise TypeError("pad: end_values must be static Python/numpy numbers, got a traced Tensor")
    return _per_axis(x, widths, _ramp_axis, _pairs("end_values", end_values, x.ndim))


def _round_cast(value, dtype) -> Tensor:
    """numpy.pad stores a statistic by rounding (half to even) for integer arrays, then casting."""
    if dtypes.is_integer(dtype):
        value = round(value)
    return astype(value, dtype)


def _complex_extreme(x, axis, largest) -> Tensor:
    """numpy's max/min of complex values: lexicographic (real, then imag), NaN propagates."""
    def body(ar, ai, br, bi):
        a_nan = ops.or_(ops.compare(ar, ar, "NE"), ops.compare(ai, ai, "NE"))
        b_nan = ops.or_(ops.compare(br, br, "NE"), ops.compare(bi, bi, "NE"))
        d = "GT" if largest else "LT"
        b_wins = ops.or_(ops.compare(br, ar, d), ops.and_(ops.compare(br, ar, "EQ"), ops.compare(bi, ai, d)))
        take_b = ops.or_(b_nan, ops.and_(ops.not_(a_nan), b_wins))
        return ops.select(take_b, br, ar), ops.select(take_b, bi, ai)

    re, im = ops.real(x), ops.imag(x)
    init = np.array(-np.inf if largest else np.inf, re.dtype)
    r, i = ops.reduce([re, im], [init, init], (axis,), body)
    shape = list(x.shape)
    shape[axis] = 1
    return ops.reshape(ops.complex(r, i), shape)


def _extreme(largest):
    def stat(chunk, axis):
        if dtypes.is_complex(chunk.dtype):
            return _complex_extreme(chunk, axis, largest)
        return (reductions.max if largest else reductions.min)(chunk, axis=axis, keepdims=True)
    return stat


def _mean(chunk, axis) -> Tensor:
    return _round_cast(reductions.mean(chunk, axis=axis, keepdims=True), chunk.dtype)


def _median(chunk, axis) -> Tensor:
    """numpy.median via ``stablehlo.sort``: the middle value, or the mean of the two middle values;
    NaN if any value is NaN."""
    k = chunk.shape[axis]
    if k == 0:  # numpy: the median of nothing is NaN
        shape = list(chunk.shape)
        shape[axis] = 1
        nan_dtype = chunk.dtype if dtypes.is_inexact(chunk.dtype) else np.float64
        return _round_cast(splat(np.nan, nan_dtype, shape), chunk.dtype)
    s = ops.sort(chunk, axis)  # numpy's order: NaN last
    value = reductions.mean(_take(s, axis, (k - 1) // 2, k // 2 + 1), axis=axis, keepdims=True)
    if dtypes.is_inexact(chunk.dtype):
        last = _take(s, axis, k - 1, k)
        value = where(ops.compare(last, last, "NE"), last, value)
    return _round_cast(value, chunk.dtype)


_STATS = {"maximum": _extreme(True), "minimum": _extreme(False), "mean": _mean, "median": _median}


def _stat_axis(stat, x, axis, lo, hi, lengths) -> Tensor:
    n = x.shape[axis]
    llen, rlen = (n if v is None else min(v, n) for v in lengths)
    left = stat(_take(x, axis, 0, llen), axis) if lo else None
    if hi and (left is None or not llen == rlen == n):
        right = stat(_take(x, axis, n - rlen, n), axis)
    else:
        right = left
    return _join(_repeat(left, axis, lo), x, _repeat(right, axis, hi), axis)


def _statistic(mode):
    def fill(x, widths, stat_length=None):
        lengths = _stat_lengths(stat_length, x.ndim)
        if mode in ("maximum", "minimum") and any(0 in p for p in lengths):
            raise ValueError(f"pad: stat_length {stat_length!r} of 0 yields no value for mode {mode!r}")
        return _per_axis(x, widths, functools.partial(_stat_axis, _STATS[mode]), lengths)
    return fill


_MODES = {"edge": _edge, "reflect": _mirror(False), "symmetric": _mirror(True), "wrap": _wrap,
          "linear_ramp": _linear_ramp, **{m: _statistic(m) for m in _STATS}}

__all__ = ["pad"]
