"""jax.lax ordering and scans: sort, top_k, cumsum/cumprod/cummax/cummin, argmax/argmin, iota."""
from __future__ import annotations

import operator

import numpy as np

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


def broadcasted_iota(dtype, shape, dimension):
    """jax.lax.broadcasted_iota: counts along ``dimension`` of ``shape``; emits ``stablehlo.iota``."""
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
    """jax.lax.top_k: the ``k`` largest along ``axis`` (descending; ties keep the lower index
    first) and their int32 indices; emits a stable ``stablehlo.sort`` and a slice."""
    x = lax_operand(operand, "top_k operand")
    k = operator.index(k)
    ax = _axis(axis, x.ndim, "top_k")
    if not 0 <= k <= x.shape[ax]:
        raise ValueError(f"k argument to top_k must be nonnegative and at most the size of the axis, got "
                         f"k={k} for axis size {x.shape[ax]}")
    idx = ops.iota(x.shape, _I32, ax)
    values, indices = ops.sort([x, idx], ax, "GT", is_stable=True)
    limit = tuple(k if d == ax else n for d, n in enumerate(x.shape))
    return ops.slice(values, (0,) * x.ndim, limit), ops.slice(indices, (0,) * x.ndim, limit)


# ---------------------------------------------------------------- cumulative reductions

def _identity(name, dtype):
    if name == "add":
        return np.zeros((), dtype)
    if name == "mul":
        return np.ones((), dtype)
    if dtypes.is_bool(dtype):
        return np.asarray(name == "min")
    if dtypes.is_integer(dtype):
        info = np.iinfo(dtype)
        return np.asarray(info.min if name == "max" else info.max, dtype)
    return np.asarray(-np.inf if name == "max" else np.inf).astype(dtype)


_COMBINE = {"add": ops.add, "mul": ops.multiply, "max": ops.maximum, "min": ops.minimum}


def _cumulative(name, what):
    def fn(operand, axis=0, reverse=False):
        x = lax_operand(operand, f"{what} operand")
        ax = _axis(axis, x.ndim, what)
        if name in ("max", "min") and dtypes.is_complex(x.dtype):
            raise TypeError(f"{what} does not accept dtype {x.dtype}")
        combine = _COMBINE[name]
        if dtypes.is_bool(x.dtype) and name in ("add", "mul"):
            combine = ops.or_ if name == "add" else ops.and_
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
    fn.__doc__ = (f"jax.lax.{what}: the running {name} along ``axis`` (from the end with ``reverse``); "
                  f"log2(n) steps of ``stablehlo.pad`` and ``{name}``.")
    return fn


cumsum = _cumulative("add", "cumsum")
cumprod = _cumulative("mul", "cumprod")
cummax = _cumulative("max", "cummax")
cummin = _cumulative("min", "cummin")


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

__all__ = ["sort", "top_k", "cumsum", "cumprod", "cummax", "cummin", "argmax", "argmin", "iota",
           "broadcasted_iota"]
