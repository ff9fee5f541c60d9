"""jax.lax ordering and scans: sort, sort_key_val, top_k, approx_max_k/approx_min_k,
cumsum/cumprod/cummax/cummin/cumlogsumexp, associative_scan, argmax/argmin, iota."""
from __future__ import annotations

import operator

import numpy as np
from jax import tree_util

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax._common import lax_operand
from hloforge.frontend.ops.sort import _numpy_less
from hloforge.frontend.tracing import Tensor, as_tensor

_I32 = np.dtype(np.int32)


def _axis(axis, ndim, what):
    axis = operator.index(axis)
    if not -ndim <= axis < max(ndim, 1) or ndim == 0:
        raise ValueError(f"{what}: axis {axis} is out of bounds for array of rank {ndim}")
    return axis % ndim


def iota(dtype, size):
    """jax.lax.iota: ``[0, 1, ..., size - 1]``; emits ``stablehlo.iota``."""
    return ops.iota((operator.index(size),), dtypes.canonical(dtype), 0)


def broadcasted_iota(dtype, shape, dimension, *, out_sharding=None):
    """jax.lax.broadcasted_iota: counts along ``dimension`` of ``shape`` (``out_sharding``: None);
    emits ``stablehlo.iota``."""
    if out_sharding is not None:
        raise ValueError(f"hloforge.lax.broadcasted_iota: out_sharding={out_sharding!r} is not supported here; "
                         "pass None")
    shape = tuple(operator.index(s) for s in shape)
    return ops.iota(shape, dtypes.canonical(dtype), _axis(dimension, len(shape), "broadcasted_iota"))


# ---------------------------------------------------------------- sort, top_k

def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """jax.lax.sort: sort along ``dimension`` by the first ``num_keys`` operands (lexicographic;
    NaN last); emits ``stablehlo.sort``."""
    single = isinstance(operand, Tensor) or not isinstance(operand, (list, tuple))
    xs = [lax_operand(x, "sort operand") for x in ([operand] if single else operand)]
    if not xs:
        raise ValueError("sort: needs at least one operand")
    num_keys = operator.index(num_keys)
    if not 1 <= num_keys <= len(xs):
        raise ValueError(f"num_keys={num_keys} must be between 1 and len(operand)={len(xs)}")
    dim = _axis(dimension, xs[0].ndim, "sort")
    if num_keys == 1:
        out = ops.sort(xs, dim, "LT", is_stable=is_stable)
    else:
        def less(*args):
            lhs, rhs = args[0::2], args[1::2]
            result, equal = None, None
            for a, b in zip(lhs[:num_keys], rhs[:num_keys]):
                lt = _numpy_less(a, b)
                eq = ops.and_(ops.not_(lt), ops.not_(_numpy_less(b, a)))
                term = lt if equal is None else ops.and_(equal, lt)
                result = term if result is None else ops.or_(result, term)
                equal = eq if equal is None else ops.and_(equal, eq)
            return result
        out = ops.sort(xs, dim, less, is_stable=is_stable)
    return out[0] if single else tuple(out)


def top_k(operand, k, *, axis=-1):
    """jax.lax.top_k: the ``k`` largest along ``axis`` (descending, floats in XLA's total order as
    jax's: NaN first, -NaN last; ties keep the lower index first) and their int32 indices; emits a
    stable ``stablehlo.sort`` and a slice."""
    x = lax_operand(operand, "top_k operand")
    k = operator.index(k)
    ax = _axis(axis, x.ndim, "top_k")
    if not 0 <= k <= x.shape[ax]:
        raise ValueError(f"k argument to top_k must be nonnegative and at most the size of the axis, got "
                         f"k={k} for axis size {x.shape[ax]}")
    idx = ops.iota(x.shape, _I32, ax)
    values, indices = ops.sort([x, idx], ax, _total_order_gt if dtypes.is_float(x.dtype) else "GT", is_stable=True)
    limit = tuple(k if d == ax else n for d, n in enumerate(x.shape))
    return ops.slice(values, (0,) * x.ndim, limit), ops.slice(indices, (0,) * x.ndim, limit)


def _total_order_gt(a, b, *_):
    """XLA's TopK order, as jax's top_k: floats by total order (NaN above inf, -NaN below -inf, -0 below 0)."""
    return ops.compare(a, b, "GT", "TOTALORDER")


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """jax.lax.sort_key_val: ``values`` permuted as sorting ``keys`` along ``dimension`` permutes
    them; emits one two-operand ``stablehlo.sort``.

    Args:
      keys, values: arrays of one shape.
      dimension: the sorted dimension.
      is_stable: keep the order of equal keys.
    Returns:
      (sorted keys, values in that order).
    Example:
      >>> k, v = hf.lax.sort_key_val(scores, ids)
    """
    return sort((keys, values), dimension, is_stable, num_keys=1)


def _approx_k(name, is_max):
    def fn(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
           aggregate_to_topk=True):
        x = lax_operand(operand, f"hloforge.lax.{name} operand")
        k = operator.index(k)
        if k <= 0:
            raise ValueError(f"hloforge.lax.{name}: k must be positive, got {k}")
        if x.ndim == 0:
            raise TypeError(f"hloforge.lax.{name}: operand must have >= 1 dimension, got {x.shape}")
        if not dtypes.is_float(x.dtype):
            raise ValueError(f"hloforge.lax.{name}: operand must be a floating type, got {x.dtype}")
        if not aggregate_to_topk:
            raise ValueError(f"hloforge.lax.{name}: aggregate_to_topk=False is not supported (its result size is "
                             "XLA's approximate-top-k heuristic); pass True")
        ax = _axis(reduction_dimension, x.ndim, name)
        if x.shape[ax] < k:
            raise ValueError(f"hloforge.lax.{name}: k must be smaller than the size of reduction_dim "
                             f"{x.shape[ax]}, got {k}")
        direction = "GT" if is_max else "LT"

        def before(a, b, ia, ib):  # (XLA's fallback: a stable sort in IEEE total order)
            return ops.compare(a, b, direction, "TOTALORDER")
        idx = ops.iota(x.shape, _I32, ax)
        values, indices = ops.sort([x, idx], ax, before, is_stable=True)
        limit = tuple(k if d == ax else n for d, n in enumerate(x.shape))
        return ops.slice(values, (0,) * x.ndim, limit), ops.slice(indices, (0,) * x.ndim, limit)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"""jax.lax.{name}: the k {'largest' if is_max else 'smallest'} elements along
    ``reduction_dimension`` and their int32 indices, exactly, as XLA computes it on CPU and GPU (a
    stable ``stablehlo.sort`` in IEEE total order, then a ``slice``; on TPU jax approximates).

    Args:
      operand: a floating array.
      k: how many.
      reduction_dimension: the dimension.
      recall_target, reduction_input_size_override: accepted, unused (the result is exact).
      aggregate_to_topk: True (False, XLA's unaggregated size, is not supported).
    Returns:
      (values, indices).
    Example:
      >>> v, i = hf.lax.{name}(x, 4)
    """
    return fn


approx_max_k = _approx_k("approx_max_k", True)
approx_min_k = _approx_k("approx_min_k", False)


# ---------------------------------------------------------------- cumulative reductions

def _identity(name, dtype):
    if name == "add":
        return np.zeros((), dtype)
    if name == "logaddexp":
        return np.asarray(-np.inf).astype(dtype)
    if name == "mul":
        return np.ones((), dtype)
    if dtypes.is_bool(dtype):
        return np.asarray(name == "min")
    if dtypes.is_integer(dtype):
        info = np.iinfo(dtype)
        return np.asarray(info.min if name == "max" else info.max, dtype)
    return np.asarray(-np.inf if name == "max" else np.inf).astype(dtype)


def _logaddexp(a, b):
    # jax's real logaddexp: NaN differences (NaNs, same-signed infinities) give a + b
    delta = ops.subtract(a, b)
    stable = ops.add(ops.maximum(a, b), ops.log1p(ops.exp(ops.neg(ops.abs(delta)))))
    return ops.select(ops.compare(delta, delta, "NE"), ops.add(a, b), stable)


_COMBINE = {"add": ops.add, "mul": ops.multiply, "max": ops.maximum, "min": ops.minimum, "logaddexp": _logaddexp}


def _cumulative(name, what):
    def fn(operand, axis=0, reverse=False):
        x = lax_operand(operand, f"{what} operand")
        ax = _axis(axis, x.ndim, what)
        if name in ("max", "min") and dtypes.is_complex(x.dtype):
            raise TypeError(f"{what} does not accept dtype {x.dtype}")
        if name == "logaddexp" and not dtypes.is_float(x.dtype):
            raise TypeError(f"hloforge.lax.{what} does not accept dtype {x.dtype}. Accepted dtypes are subtypes of "
                            "floating (complex logaddexp is not supported).")
        if x.shape[ax] == 0:
            return x
        if name == "add":
            return _running(x, ax, reverse, "add")
        if name in ("mul", "logaddexp"):
            # (a composite: its derivative is that of the associative scan, as in jax, not of the window)
            return ops.composite([x], f"{SCAN_COMPOSITE}{what}", lambda x: _running(x, ax, reverse, name),
                                 attributes={"axis": ax, "reverse": bool(reverse)})[0]
        combine = _COMBINE[name]  # (max, min: exact, so the log-step scan gives jax's bits)
        if reverse:
            x = ops.reverse(x, (ax,))
        n, shift = x.shape[ax], 1
        pad_value = as_tensor(_identity(name, x.dtype))
        while shift < n:  # Hillis-Steele: after step k each element combines the 2**k before it
            low = [shift if d == ax else 0 for d in range(x.ndim)]
            high = [-shift if d == ax else 0 for d in range(x.ndim)]
            shifted = ops.pad(x, pad_value, low, high, [0] * x.ndim)
            x = combine(shifted, x)
            shift *= 2
        return ops.reverse(x, (ax,)) if reverse else x
    fn.__name__ = fn.__qualname__ = what
    windowed = ("one ``stablehlo.reduce_window`` (window n, n - 1 padding), as jax lowers it, so it rounds as "
                "jax's" + (", inside ``stablehlo.composite`` \"hloforge.lax." + what + "\" (differentiated as jax's "
                           "associative scan)" if name != "add" else "") + ".")
    fn.__doc__ = (f"jax.lax.{what}: the running {name} along ``axis`` (from the end with ``reverse``); "
                  + (windowed if name in ("add", "mul", "logaddexp") else
                     f"log2(n) steps of ``stablehlo.pad`` and ``{name}`` (exact: as jax's bit for bit)."))
    return fn


SCAN_COMPOSITE = "hloforge.lax."
"""The prefix of cumprod's and cumlogsumexp's composites (attributes ``axis``, ``reverse``)."""

_WINDOW_BODY = {"add": "add", "mul": "mul", "logaddexp": _logaddexp}


def _running(x, axis, reverse, name):
    """The running ``name`` as jax lowers cumsum/cumprod/cumlogsumexp (cumred_reduce_window_impl): a
    window of the whole axis, padded by n - 1 before it (after it with ``reverse``); XLA rewrites the
    long window into a scan."""
    n = x.shape[axis]
    window = tuple(n if d == axis else 1 for d in range(x.ndim))
    padding = tuple(((0, n - 1) if reverse else (n - 1, 0)) if d == axis else (0, 0) for d in range(x.ndim))
    body = _WINDOW_BODY[name]
    if dtypes.is_bool(x.dtype):
        body = "or" if name == "add" else "and"
    return ops.reduce_window(x, _identity(name, x.dtype), window, window_strides=(1,) * x.ndim, padding=padding,
                             body=body)


def scan_combine(what):
    """The associative function of composite ``hloforge.lax.<what>``'s scan (its derivative rules)."""
    return _COMBINE[{"cumprod": "mul", "cumlogsumexp": "logaddexp"}[what]]


cumsum = _cumulative("add", "cumsum")
cumprod = _cumulative("mul", "cumprod")
cummax = _cumulative("max", "cummax")
cummin = _cumulative("min", "cummin")
cumlogsumexp = _cumulative("logaddexp", "cumlogsumexp")


def _interleave(a, b, axis):
    """a's elements at the even positions of ``axis``, b's at the odd ones (pads and one add)."""
    ones = a.shape[axis] == b.shape[axis]
    zero_a, zero_b = as_tensor(np.zeros((), a.dtype)), as_tensor(np.zeros((), b.dtype))
    n = a.ndim

    def config(lo, hi):
        return ([lo if d == axis else 0 for d in range(n)], [hi if d == axis else 0 for d in range(n)],
                [1 if d == axis else 0 for d in range(n)])
    pa, pb = ops.pad(a, zero_a, *config(0, 1 if ones else 0)), ops.pad(b, zero_b, *config(1, 0 if ones else 1))
    return ops.or_(pa, pb) if dtypes.is_bool(a.dtype) else ops.add(pa, pb)


def _slice_axis(x, start, limit, stride, axis):
    n = x.shape[axis]
    limit = n if limit is None else (limit + n if limit < 0 else limit)
    lo = [start if d == axis else 0 for d in range(x.ndim)]
    hi = [max(limit, start) if d == axis else s for d, s in enumerate(x.shape)]
    return ops.slice(x, lo, hi, [stride if d == axis else 1 for d in range(x.ndim)])


def associative_scan(fn, elems, reverse=False, axis=0):
    """jax.lax.associative_scan: the inclusive scan of an associative ``fn`` along ``axis``, by
    jax's recursive odd/even algorithm (log2(n) levels of ``stablehlo.slice``, ``fn``, ``pad`` and
    ``concatenate``), over a pytree of arrays.

    Args:
      fn: an associative function of two pytrees of arrays (of elems' structure), built with
        hloforge.lax / hloforge.numpy, applied to whole slices.
      elems: a pytree of arrays with one size along ``axis``.
      reverse: scan from the end.
      axis: the scanned dimension.
    Returns:
      A pytree of elems' structure.
    Example:
      >>> sums = hf.lax.associative_scan(hf.lax.add, x)
    """
    if not callable(fn):
        raise TypeError("hloforge.lax.associative_scan: fn argument should be callable.")
    leaves, tree = tree_util.tree_flatten(elems)
    xs = [lax_operand(v, "hloforge.lax.associative_scan elems") for v in leaves]
    if not xs:
        raise ValueError("hloforge.lax.associative_scan: elems has no arrays")
    ax = _axis(axis, xs[0].ndim, "associative_scan")
    if any(x.ndim != xs[0].ndim or x.shape[ax] != xs[0].shape[ax] for x in xs[1:]):
        raise ValueError(f"hloforge.lax.associative_scan: array inputs must have the same first dimension. "
                         f"(saw: {[x.shape for x in xs]})")
    if reverse:
        xs = [ops.reverse(x, (ax,)) for x in xs]

    def combine(a, b):
        out = tree_util.tree_leaves(fn(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b)))
        return [lax_operand(v, "hloforge.lax.associative_scan fn output") for v in out]

    def scan(elems):
        n = elems[0].shape[ax]
        if n < 2:
            return elems
        reduced = combine([_slice_axis(e, 0, -1, 2, ax) for e in elems], [_slice_axis(e, 1, None, 2, ax) for e in elems])
        odd = scan(reduced)
        if n % 2 == 0:
            even = combine([_slice_axis(e, 0, -1, 1, ax) for e in odd], [_slice_axis(e, 2, None, 2, ax) for e in elems])
        else:
            even = combine(odd, [_slice_axis(e, 2, None, 2, ax) for e in elems])
        even = [ops.concatenate([_slice_axis(e, 0, 1, 1, ax), r], ax) for e, r in zip(elems, even)]
        return [_interleave(e, o, ax) for e, o in zip(even, odd)]

    out = scan(xs)
    if reverse:
        out = [ops.reverse(x, (ax,)) for x in out]
    return tree_util.tree_unflatten(tree, out)


# ---------------------------------------------------------------- argmax, argmin

def _arg(name, direction):
    def fn(operand, axis, index_dtype):
        x = lax_operand(operand, f"{name} operand")
        ax = _axis(axis, x.ndim, name)
        index_dtype = dtypes.canonical(index_dtype)
        if not dtypes.is_integer(index_dtype):
            raise TypeError(f"{name}: index_dtype must be an integer type, got {index_dtype}")
        if dtypes.is_complex(x.dtype):
            raise TypeError(f"{name} does not accept dtype {x.dtype}")
        if x.shape[ax] == 0:
            raise ValueError(f"{name}: attempt to get {name} of an empty axis")
        idx = ops.iota(x.shape, index_dtype, ax)
        init = _identity("max" if direction == "GT" else "min", x.dtype)

        def body(av, ai, bv, bi):
            # keep (av, ai) when av beats bv, NaN beating everything, ties to the lower index
            a_nan = ops.compare(av, av, "NE") if dtypes.is_inexact(x.dtype) else None
            b_nan = ops.compare(bv, bv, "NE") if dtypes.is_inexact(x.dtype) else None
            beats = ops.compare(av, bv, direction)
            tie = ops.compare(av, bv, "EQ")
            if a_nan is not None:
                beats = ops.or_(ops.and_(a_nan, ops.not_(b_nan)), ops.and_(beats, ops.not_(b_nan)))
                tie = ops.or_(tie, ops.and_(a_nan, b_nan))
            pick_a = ops.or_(beats, ops.and_(tie, ops.compare(ai, bi, "LT")))
            return ops.select(pick_a, av, bv), ops.select(pick_a, ai, bi)

        _, out = ops.reduce([x, idx], [init, np.zeros((), index_dtype)], (ax,), body)
        return out
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"jax.lax.{name}: the index of the {'largest' if direction == 'GT' else 'smallest'} "
                  "element along ``axis`` (NaN wins; ties: the first); one variadic ``stablehlo.reduce``.")
    return fn


argmax = _arg("argmax", "GT")
argmin = _arg("argmin", "LT")

__all__ = ["sort", "sort_key_val", "top_k", "approx_max_k", "approx_min_k", "cumsum", "cumprod", "cummax", "cummin",
           "cumlogsumexp", "associative_scan", "argmax", "argmin", "iota", "broadcasted_iota"]
