"""Window reductions: stablehlo.reduce_window and stablehlo.select_and_scatter (pooling and its
gradient)."""
from __future__ import annotations

import itertools
import types

import numpy as np

from hloforge.frontend import attributes as attr
from hloforge.frontend.context import shape_dtype_of
from hloforge.frontend.ops import _evaluate as ev
from hloforge.frontend.ops._common import COMPLEX, category, int_tuple, operand
from hloforge.frontend.ops.compare import NATURAL_COMPARE_TYPE, compare
from hloforge.frontend.ops.linalg import (
    _UFUNCS, REDUCERS, _named_body, has_zero, is_identity, named_reduction, order_free, reducer_name)
from hloforge.frontend.registry import Region, bind, body_of, register
from hloforge.frontend.tracing import Tensor

_OPTIONAL = ("window_strides", "base_dilations", "window_dilations")


def _check_body(op, body, names):
    if isinstance(body, str):
        if body not in names:
            raise ValueError(f"{op}: body {body!r} is not one of {', '.join(names)} or a callable")
    elif not callable(body):
        raise TypeError(f"{op}: body must be a name or a callable, got {type(body).__name__}")


def _padding(op, padding):
    if padding is None:
        return None
    try:
        return tuple(int_tuple(op, "padding", p, 2) for p in padding)
    except (TypeError, ValueError):
        raise ValueError(f"{op}: padding must be a sequence of (low, high) int pairs, got {padding!r}") from None


def _window_params(window_dimensions, window_strides=None, base_dilations=None, window_dilations=None,
                   padding=None, body="add"):
    _check_body("reduce_window", body, REDUCERS)
    out = {"window_dimensions": int_tuple("reduce_window", "window_dimensions", window_dimensions)}
    for name, value in zip(_OPTIONAL, (window_strides, base_dilations, window_dilations)):
        out[name] = None if value is None else int_tuple("reduce_window", name, value)
    return {**out, "padding": _padding("reduce_window", padding), "body": body}


def _dilated(n, d):
    return 0 if n == 0 else (n - 1) * d + 1


def window_shape(op, shape, window_dimensions, window_strides, base_dilations, window_dilations, padding):
    """The result shape of a window op over ``shape``; validates every attribute's length and range."""
    rank = len(shape)
    strides = window_strides or (1,) * rank
    base = base_dilations or (1,) * rank
    wdil = window_dilations or (1,) * rank
    pads = padding or ((0, 0),) * rank
    for name, v in (("window_dimensions", window_dimensions), ("window_strides", strides),
                    ("base_dilations", base), ("window_dilations", wdil), ("padding", pads)):
        if len(v) != rank:
            raise ValueError(f"{op}: {name} {list(v)} must have {rank} entries, one per operand dimension")
    for name, v in (("window_dimensions", window_dimensions), ("window_strides", strides),
                    ("base_dilations", base), ("window_dilations", wdil)):
        if any(s < 1 for s in v):
            raise ValueError(f"{op}: {name} {list(v)} must be >= 1")
    out = []
    for d in range(rank):
        size = _dilated(shape[d], base[d]) + pads[d][0] + pads[d][1]
        if size < 0:
            raise ValueError(f"{op}: dimension {d} is negative ({size}) after padding {list(pads[d])}")
        window = _dilated(window_dimensions[d], wdil[d])
        out.append(0 if size == 0 or window > size else (size - window) // strides[d] + 1)
    return tuple(out)


def _split(operands):
    n = len(operands) // 2
    return list(operands[:n]), list(operands[n:])


def _window_rule(*operands, body, **window):
    xs, inits = _split(operands)
    if not xs or len(operands) % 2:
        raise ValueError(f"reduce_window: needs as many init values as operands, got {len(operands)} tensors")
    for i, (x, init) in enumerate(zip(xs, inits)):
        if x.shape != xs[0].shape:
            raise ValueError(f"reduce_window: operand {i} shape {x.shape} differs from {xs[0].shape}")
        if init.shape != () or init.dtype != x.dtype:
            raise TypeError(f"reduce_window: init value {i} must be a 0-d {x.dtype} tensor, got {init}")
    if isinstance(body, str):
        if len(xs) != 1:
            raise ValueError("reduce_window: a named body reduces one operand; pass a callable for several")
        cat = category(xs[0].dtype)
        if body in ("and", "or") and cat in ("float", COMPLEX):
            raise TypeError(f"reduce_window: body {body!r} needs bool or integer operands, got {xs[0].dtype}")
        if body in ("max", "min") and cat == COMPLEX:
            raise TypeError(f"reduce_window: body {body!r} does not order complex operands")
    shape = window_shape("reduce_window", xs[0].shape, **window)
    return [(shape, x.dtype) for x in xs]


def _window_attributes(window_dimensions, window_strides, base_dilations, window_dilations, padding, body=None):
    out = {"window_dimensions": attr.i64s(window_dimensions)}
    for name, value in zip(_OPTIONAL, (window_strides, base_dilations, window_dilations)):
        if value is not None:
            out[name] = attr.i64s(value)
    if padding is not None:
        out["padding"] = attr.i64_matrix(padding)
    return out


def _window_regions(operands, body, **window):
    xs, _ = _split(operands)
    scalars = [((), x.dtype) for x in xs]
    fn = _named_body(body) if isinstance(body, str) else body
    return [Region(scalars + scalars, fn, scalars, "reduce_window: body")]


def _window_decode(op):
    out = {"window_dimensions": attr.read_ints(op, "window_dimensions"),
           "padding": attr.read_i64_matrix(op, "padding")}
    for name in _OPTIONAL:
        out[name] = attr.read_ints(op, name) if attr.has(op, name) else None
    out["body"] = reducer_name(op) or body_of(op.regions[0])
    return out


def windows(x: np.ndarray, fill, window_dimensions, window_strides=None, base_dilations=None,
            window_dilations=None, padding=None):
    """(padded base, out shape, [index tuples of each window element]) of a window op on numpy."""
    rank = x.ndim
    base = base_dilations or (1,) * rank
    strides = window_strides or (1,) * rank
    wdil = window_dilations or (1,) * rank
    pads = padding or ((0, 0),) * rank
    for d in range(rank):
        if base[d] > 1 and x.shape[d] > 0:
            shape = list(x.shape)
            shape[d] = _dilated(shape[d], base[d])
            out = np.full(shape, fill, x.dtype)
            index = [slice(None)] * rank
            index[d] = slice(None, None, base[d])
            out[tuple(index)] = x
            x = out
        lo, hi = pads[d]
        width = [(0, 0)] * rank
        width[d] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, width, constant_values=fill)
        index = [slice(None)] * rank
        index[d] = slice(max(-lo, 0), x.shape[d] - max(-hi, 0))
        x = x[tuple(index)]
    out_shape = tuple(0 if x.shape[d] == 0 or _dilated(window_dimensions[d], wdil[d]) > x.shape[d] else
                      (x.shape[d] - _dilated(window_dimensions[d], wdil[d])) // strides[d] + 1 for d in range(rank))
    taps = []
    for pos in itertools.product(*(range(w) for w in window_dimensions)):
        taps.append(tuple(slice(p * wd, p * wd + (m - 1) * s + 1, s) if m else slice(0, 0)
                          for p, wd, m, s in zip(pos, wdil, out_shape, strides)))
    return x, out_shape, taps


def _window_evaluate(*operands, body, **window):
    """One operand, a named body and its identity as the init value (XLA leaves padding out of the
    windows; the spec reduces it as init values). Float sums and products only where every partial
    result is exact whatever the order, and no sum is zero; no max or min over a float zero (which
    zero comes out is the backend's)."""
    named = named_reduction(operands, body)
    if named is None or not is_identity(body, named[1]):
        return None
    x, init, k = named
    inexact = k in "fc" and body in ("add", "mul")
    if inexact and not order_free(x, tuple(range(x.ndim)), body):
        return None
    if k == "f" and body in ("max", "min") and (x == 0).any():
        return None
    ufunc = _UFUNCS[body][1 if x.dtype == np.bool_ else 0]
    if ufunc is None:
        return None  # bool add: logical or in the spec, xor in XLA:CPU
    padded, shape, taps = windows(x, init, **window)
    acc = np.broadcast_to(init, shape).copy()
    if inexact:
        wide = np.complex128 if k == "c" else np.float64
        padded, acc = padded.astype(wide), acc.astype(wide)
    with np.errstate(all="ignore"):
        for tap in taps:
            if all(shape):
                acc = ufunc(acc, padded[tap])
    out = ev.finish(acc, x.dtype)
    if out is None or (inexact and body == "add" and has_zero(out)):
        return None
    return [out]


@register("stablehlo.reduce_window", rule=_window_rule, params=_window_params, attributes=_window_attributes,
          regions=_window_regions, decode=_window_decode, evaluate=_window_evaluate,
          arrange=lambda operands: tuple(_split(operands)), traits={"variadic"})
def reduce_window(operands, init_values, window_dimensions, *, window_strides=None, base_dilations=None,
                  window_dilations=None, padding=None, body="add", loc=None):
    """Reduce each window of the operand(s) with ``body``; emits ``stablehlo.reduce_window``.

    Padding and base-dilation holes hold the init value.

    Args:
      operands: a Tensor, or a sequence of Tensors of one shape (variadic).
      init_values: one 0-d value per operand (Python scalars are cast to the operand's dtype).
      window_dimensions: the window's size per dimension.
      window_strides, base_dilations, window_dilations: per dimension, >= 1 (None: 1, attribute
        left out).
      padding: (low, high) per dimension (None: no padding).
      body: "add", "mul", "max", "min", "and", "or" or a callable as for ops.reduce.
    Returns:
      A Tensor (one operand) or a tuple of Tensors.
    Example:
      >>> y = ops.reduce_window(x, -np.inf, (1, 1, 2, 2), window_strides=(1, 1, 2, 2), body="max")
    """
    single = isinstance(operands, Tensor) or not isinstance(operands, (list, tuple))
    xs = [operand("reduce_window", x) for x in ([operands] if single else operands)]
    inits = init_values if isinstance(init_values, (list, tuple)) else [init_values]
    if len(inits) != len(xs):
        raise ValueError(f"reduce_window: needs as many init values as operands, got {len(xs)} and {len(inits)}")
    inits = [operand("reduce_window", v, "init value", dtype=x.dtype) for v, x in zip(inits, xs)]
    out = bind("stablehlo.reduce_window", [*xs, *inits], window_dimensions=window_dimensions,
               window_strides=window_strides, base_dilations=base_dilations, window_dilations=window_dilations,
               padding=padding, body=body, loc=loc)
    return out[0] if single else tuple(out)


# ---------------------------------------------------------------- select_and_scatter

SELECTS = ("GE", "GT", "LE", "LT")


def _sas_params(window_dimensions, window_strides=None, padding=None, select="GE", scatter="add"):
    if isinstance(select, str):
        if select not in SELECTS:
            raise ValueError(f"select_and_scatter: select {select!r} is not one of {', '.join(SELECTS)} or a callable")
    elif not callable(select):
        raise TypeError(f"select_and_scatter: select must be a name or a callable, got {type(select).__name__}")
    _check_body("select_and_scatter", scatter, REDUCERS)
    return {"window_dimensions": int_tuple("select_and_scatter", "window_dimensions", window_dimensions),
            "window_strides": None if window_strides is None else
            int_tuple("select_and_scatter", "window_strides", window_strides),
            "padding": _padding("select_and_scatter", padding), "select": select, "scatter": scatter}


def _sas_rule(x, source, init, window_dimensions, window_strides, padding, select, scatter):
    if source.dtype != x.dtype or init.dtype != x.dtype:
        raise TypeError(f"select_and_scatter: operand {x}, source {source} and init value {init} must share a dtype")
    if init.shape != ():
        raise TypeError(f"select_and_scatter: init value must be a 0-d {x.dtype} tensor, got {init}")
    if isinstance(select, str) and category(x.dtype) == COMPLEX:
        raise TypeError(f"select_and_scatter: select {select!r} does not order complex operands")
    shape = window_shape("select_and_scatter", x.shape, window_dimensions, window_strides, None, None, padding)
    if source.shape != shape:
        raise ValueError(f"select_and_scatter: source shape {source.shape} must be the window result shape {shape} "
                         f"(operand {x.shape}, window {list(window_dimensions)})")
    return x.shape, x.dtype


def _sas_attributes(window_dimensions, window_strides, padding, select, scatter):
    return _window_attributes(window_dimensions, window_strides, None, None, padding)


def _select_body(direction, dtype):
    kind = NATURAL_COMPARE_TYPE[category(dtype)]

    def body(a, b):
        return compare(a, b, direction, kind)
    return body


def _sas_regions(operands, window_dimensions, window_strides, padding, select, scatter):
    dtype = operands[0].dtype
    scalar = [((), dtype)]
    sel = _select_body(select, dtype) if isinstance(select, str) else select
    sc = _named_body(scatter) if isinstance(scatter, str) else scatter
    return [Region(scalar * 2, sel, [((), np.dtype(bool))], "select_and_scatter: select",
                   describe="a 0-d bool Tensor"),
            Region(scalar * 2, sc, scalar, "select_and_scatter: scatter")]


def _select_name(op):
    block = op.regions[0].blocks[0]
    ops = list(block.operations)
    if len(ops) != 2 or ops[0].name != "stablehlo.compare" or list(ops[0].operands) != list(block.arguments):
        return None
    direction = attr.read_comparison_direction(ops[0])
    kind = attr.read_comparison_type(ops[0])
    natural = NATURAL_COMPARE_TYPE[category(shape_dtype_of(block.arguments[0].type)[1])]
    return direction if direction in SELECTS and kind == natural else None


def _sas_decode(op):
    scatter = types.SimpleNamespace(regions=[op.regions[1]])  # (reducer_name reads regions[0])
    return {"window_dimensions": attr.read_ints(op, "window_dimensions"),
            "window_strides": attr.read_ints(op, "window_strides") if attr.has(op, "window_strides") else None,
            "padding": attr.read_i64_matrix(op, "padding"),
            "select": _select_name(op) or body_of(op.regions[0]),
            "scatter": reducer_name(scatter) or body_of(op.regions[1])}


def _sas_evaluate(x, source, init, window_dimensions, window_strides, padding, select, scatter):
    """Named select on ints (first selected element wins ties), add scatter on ints."""
    if not isinstance(select, str) or scatter != "add" or ev.kind(x) not in "iu":
        return None
    fill = np.iinfo(x.dtype).min if select in ("GE", "GT") else np.iinfo(x.dtype).max
    padded, shape, taps = windows(x, fill, window_dimensions, window_strides, None, None, padding)
    pads = padding or ((0, 0),) * x.ndim
    best = None  # the running winner is replaced when select(winner, candidate) is false
    choice = np.zeros(shape, np.int64)
    for t, tap in enumerate(taps):
        v = padded[tap]
        if best is None:
            best = v.copy()
            continue
        keep = {"GE": best >= v, "GT": best > v, "LE": best <= v, "LT": best < v}[select]
        best = np.where(keep, best, v)
        choice = np.where(keep, choice, t)
    out = np.full(padded.shape, init, x.dtype)
    strides = window_strides or (1,) * x.ndim
    for index in itertools.product(*(range(s) for s in shape)):
        tap = taps[choice[index]]
        target = tuple(sl.start + i * st for sl, i, st in zip(tap, index, strides))
        with np.errstate(all="ignore"):  # (integer sums wrap, as on the backend)
            out[target] += source[index]
    crop = tuple(slice(max(lo, 0), out.shape[d] - max(hi, 0)) for d, (lo, hi) in enumerate(pads))
    result = out[crop]
    return result if result.shape == x.shape else None  # (negative padding: not evaluated)


@register("stablehlo.select_and_scatter", rule=_sas_rule, params=_sas_params, attributes=_sas_attributes,
          regions=_sas_regions, decode=_sas_decode, evaluate=_sas_evaluate)
def select_and_scatter(x, source, init_value, window_dimensions, *, window_strides=None, padding=None,
                       select="GE", scatter="add", loc=None) -> Tensor:
    """For each window of ``x`` pick one element with ``select`` and scatter the matching
    ``source`` element onto it with ``scatter`` (max-pool's gradient); emits
    ``stablehlo.select_and_scatter``.

    Args:
      x: the operand Tensor.
      source: one value per window (the reduce_window result shape).
      init_value: the 0-d starting value of every result element.
      window_dimensions, window_strides, padding: as for reduce_window.
      select: "GE" (the first maximum), "GT", "LE", "LT" or a callable (a, b) -> 0-d bool, true
        when a is kept over b.
      scatter: "add", ... or a callable (acc, value) -> 0-d Tensor.
    Returns:
      A Tensor of x's shape and dtype.
    Example:
      >>> dx = ops.select_and_scatter(x, dy, 0.0, (2, 2), window_strides=(2, 2))
    """
    x = operand("select_and_scatter", x)
    source = operand("select_and_scatter", source, "source")
    init = operand("select_and_scatter", init_value, "init value", dtype=x.dtype)
    return bind("stablehlo.select_and_scatter", [x, source, init], window_dimensions=window_dimensions,
                window_strides=window_strides, padding=padding, select=select, scatter=scatter, loc=loc)


__all__ = ["reduce_window", "select_and_scatter"]
