"""numpy's ufunc objects, as jax.numpy has them: the 14 functions jax.numpy makes ``jnp.ufunc`` objects
(add, multiply, subtract, maximum, minimum, logaddexp, logaddexp2, bitwise and logical and/or/xor,
negative) are ``hloforge.numpy.ufunc`` objects here. Called, each is the function it was; it also has
``nin``, ``nout``, ``nargs``, ``identity`` and the methods ``reduce``, ``accumulate``, ``at``,
``reduceat`` and ``outer`` with jax.numpy's semantics. A reduction or running reduction that numpy has
a function for uses it (``add.reduce`` is ``sum`` along axis 0, ``logaddexp.reduce`` jax's logsumexp,
``add.at`` a scatter-add); the others loop over the axis with ``hloforge.lax.fori_loop``/``scan`` in
jax's order. Each method runs eagerly on concrete arrays, as the functions do.
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

from hloforge.frontend import dtypes, eager, lax, ops
from hloforge.frontend.numpy import _dtype_mode, _ordering, _reductions
from hloforge.frontend.numpy._base import (
    asarray, astype, broadcast_shapes, broadcast_to, normalize_axes, normalize_axis, splat, ufunc_dtypes)
from hloforge.frontend.numpy._indexing import take
from hloforge.frontend.numpy._shape import moveaxis
from hloforge.frontend.numpy._ufuncs import logaddexp


class ufunc:
    """A numpy ufunc over traced Tensors (jax.numpy's ``jnp.ufunc``): callable as the function it wraps,
    with ``nin``, ``nout``, ``nargs``, ``identity`` and the methods below.

    Example:
      >>> hnp.add.reduce(x, axis=1), hnp.multiply.outer(a, b), hnp.add.at(x, idx, 1.0, inplace=False)
    """

    def __init__(self, fn, nin: int, identity=None):
        functools.update_wrapper(self, fn)
        self._fn, self.nin, self.nout, self.nargs, self.identity = fn, nin, 1, nin, identity

    def __call__(self, *args, out=None, where=None):
        if out is not None or where is not None:
            raise NotImplementedError(f"hloforge.numpy.{self.__name__}: out= and where= are not supported "
                                      f"(got out={out!r}, where={where!r})")
        return self._fn(*args)

    def __repr__(self):
        return f"<hloforge.numpy.ufunc '{self.__name__}'>"

    def _binary(self, method: str, out) -> None:
        if self.nin != 2:
            raise ValueError(f"hloforge.numpy.{self.__name__}.{method}: only binary ufuncs have {method}")
        if out is not None:
            raise NotImplementedError(f"hloforge.numpy.{self.__name__}.{method}: out= is not supported "
                                      "(arrays are immutable)")

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None):
        """numpy.ufunc.reduce: ``a`` reduced with this function along ``axis`` (default 0; None: all axes)."""
        self._binary("reduce", out)
        if where is not None and self.identity is None and initial is None:
            raise ValueError(f"hloforge.numpy.{self.__name__}.reduce: reduction operation {self.__name__!r} does "
                             "not have an identity, so to use a where mask one has to specify 'initial'.")
        return _REDUCE(self, a, axis, dtype, keepdims, initial, where)

    def accumulate(self, a, axis=0, dtype=None, out=None):
        """numpy.ufunc.accumulate: the running reduction along ``axis`` (default 0)."""
        self._binary("accumulate", out)
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError(f"hloforge.numpy.{self.__name__}.accumulate: accumulate does not allow multiple "
                             f"axes, got axis={axis!r}")
        return _ACCUMULATE(self, a, axis, dtype)

    def at(self, a, indices, b=None, /, *, inplace=True):
        """numpy.ufunc.at, returning the updated copy: pass ``inplace=False`` (jax.numpy's rule)."""
        if inplace:
            raise NotImplementedError("hloforge.numpy: ufunc.at cannot update an array in place (arrays are "
                                      "immutable); pass inplace=False to get the updated copy, as jax.numpy asks")
        if (b is None) != (self.nin == 1):
            raise TypeError(f"hloforge.numpy.{self.__name__}.at: a {self.nin}-input ufunc takes "
                            f"{'no' if self.nin == 1 else 'one'} value array b, got b={b!r}")
        return _AT(self, a, _frozen(indices), b)

    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """numpy.ufunc.reduceat: the reductions of ``a[indices[i]:indices[i + 1]]`` along ``axis``."""
        self._binary("reduceat", out)
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError(f"hloforge.numpy.{self.__name__}.reduceat: reduceat requires a single integer axis, "
                             f"got axis={axis!r}")
        return _REDUCEAT(self, a, indices, axis, dtype)

    def outer(self, A, B, /):
        """numpy.ufunc.outer: this function of every pair of elements, of shape ``A.shape + B.shape``."""
        self._binary("outer", None)
        return _OUTER(self, A, B)


# ---------------------------------------------------------------- what each ufunc uses

def _bitwise(body, identity):
    """jax's bitwise and/or/xor reductions: integers (and bools) reduced with ``body``."""
    def reduce(a, axis, dtype, keepdims, initial, where):
        x = asarray(a)
        if not (dtypes.is_integer(x.dtype) or dtypes.is_bool(x.dtype)):
            raise TypeError(f"hloforge.numpy: bitwise reduction of dtype {x.dtype} (integers and bools only)")
        x = astype(x, dtypes.canonical(dtype)) if dtype is not None else x
        return _fold(x, axis, keepdims, initial, where, body, np.array(identity).astype(x.dtype))
    return reduce


def _logical(body, identity):
    def reduce(a, axis, dtype, keepdims, initial, where):
        return _fold(astype(asarray(a), bool), axis, keepdims, initial, where, body, np.array(identity))
    return reduce


def _fold(x, axis, keepdims, initial, where, body, identity):
    """``x`` reduced by ``body`` (an ops.reduce body) over ``axis``, masked by ``where``, after ``initial``."""
    axes = normalize_axes(axis, x.ndim)
    x = _reductions._masked(x, where, identity)
    out = ops.reduce(x, identity, axes, body)
    if initial is not None:
        combine = body if callable(body) else {"and": ops.and_, "or": ops.or_}[body]
        out = combine(splat(initial, x.dtype, out.shape), out)
    return _reductions._keep(x, out, axes, keepdims)


def _logsumexp(a, axis, dtype, keepdims, initial, where, scale=None):
    """jax.numpy's ``_logsumexp`` (logaddexp.reduce): log(sum(exp(a - max))) + max."""
    x = asarray(a)
    if not dtypes.is_inexact(x.dtype):
        x = astype(x, dtypes.default_float())
    if scale is not None:
        x = ops.multiply(x, splat(scale, x.dtype, x.shape))
        initial = None if initial is None else initial * scale
    axes = normalize_axes(axis, x.ndim)
    real = ops.real(x) if dtypes.is_complex(x.dtype) else x
    top = _reductions.max(real, axis=axes, keepdims=True, where=where, initial=-np.inf)
    top = ops.select(ops.is_finite(top), top, splat(0, top.dtype, top.shape))
    shifted = ops.exp(ops.subtract(x, broadcast_to(astype(top, x.dtype), x.shape)))
    total = _reductions.sum(shifted, axis=axes, keepdims=keepdims, where=where)
    kept = top if keepdims else ops.reshape(top, total.shape)
    out = ops.add(ops.log(total), astype(kept, total.dtype))
    if initial is not None:
        out = logaddexp(splat(initial, out.dtype, ()), out)
    return out if scale is None else ops.divide(out, splat(scale, out.dtype, out.shape))


def _sum(a, axis, dtype, keepdims, initial, where):
    return _reductions.sum(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


def _prod(a, axis, dtype, keepdims, initial, where):
    return _reductions.prod(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


def _extreme(reduction):
    def reduce(a, axis, dtype, keepdims, initial, where):
        x = asarray(a) if dtype is None else astype(asarray(a), dtypes.canonical(dtype))
        return reduction(x, axis=axis, keepdims=keepdims, initial=initial, where=where)
    return reduce


def _scatter(method, through_int=False):
    """jax's ``_add_at``/``_multiply_at``/``_subtract_at``: ``a.at[indices]`` updated with ``b``."""
    def at(a, indices, b):
        x = asarray(a)
        if through_int and dtypes.is_bool(x.dtype):
            flag = astype(astype(asarray(b), bool), np.int32)
            return astype(getattr(astype(x, np.int32).at[indices], method)(flag), bool)
        if method == "subtract":
            return x.at[indices].add(ops.neg(astype(asarray(b), x.dtype)))
        return getattr(x.at[indices], method)(b)
    return at


# name -> (nin, identity, reduce, accumulate, at); None: jax's generic loop
_TABLE = {
    "add": (2, 0, _sum, _ordering.cumsum, _scatter("add", True)),
    "multiply": (2, 1, _prod, _ordering.cumprod, _scatter("multiply", True)),
    "subtract": (2, None, None, None, _scatter("subtract")),
    "maximum": (2, None, _extreme(_reductions.max), None, None),
    "minimum": (2, None, _extreme(_reductions.min), None, None),
    "logaddexp": (2, -np.inf, _logsumexp, None, None),
    "logaddexp2": (2, -np.inf, functools.partial(_logsumexp, scale=float(np.log(2))), None, None),
    "bitwise_and": (2, -1, _bitwise("and", -1), None, None),
    "bitwise_or": (2, 0, _bitwise("or", 0), None, None),
    "bitwise_xor": (2, 0, _bitwise(ops.xor, 0), None, None),
    "logical_and": (2, True, _logical("and", True), None, None),
    "logical_or": (2, False, _logical("or", False), None, None),
    "logical_xor": (2, False, _logical(ops.xor, False), None, None),
    "negative": (1, None, None, None, None),
}


def make_ufuncs(names: dict) -> None:
    """Turn the functions jax.numpy makes ufuncs, among ``names`` (hloforge.numpy's globals, already
    eager and dtype-mode wrapped), into ufunc objects."""
    for name, (nin, identity, *_) in _TABLE.items():
        names[name] = ufunc(names[name], nin, identity)


# ---------------------------------------------------------------- the methods (eager, dtype-mode aware)

def _result_dtype(u, x):
    """The dtype ``u`` gives two elements of ``x``, as numpy's loop selection has it (jax: eval_shape)."""
    return ufunc_dtypes(getattr(np, u.__name__), x.dtype, x.dtype)[1]


def _reduce(u, a, axis, dtype, keepdims, initial, where):
    special = _TABLE[u.__name__][2]
    if special is not None:
        return special(a, axis, dtype, keepdims, initial, where)
    x = asarray(a)
    dtype = dtypes.canonical(dtype) if dtype is not None else _result_dtype(u, x)
    if isinstance(axis, (tuple, list)):
        raise NotImplementedError(f"hloforge.numpy.{u.__name__}.reduce: a tuple of axes, got axis={axis!r}")
    mask = None if where is None else broadcast_to(astype(asarray(where), bool), x.shape)
    if axis is None:
        final = (1,) * x.ndim if keepdims else ()
        x, axis = ops.reshape(x, (x.size,)), 0
        mask = None if mask is None else ops.reshape(mask, (x.size,))
    else:
        axis = normalize_axis(axis, x.ndim)
        final = x.shape[:axis] + ((1,) if keepdims else ()) + x.shape[axis + 1:]
    x = moveaxis(x, axis, 0)
    mask = None if mask is None else moveaxis(mask, axis, 0)
    if x.shape[0] == 0:
        if initial is None:
            raise ValueError(f"zero-size array to reduction operation {u.__name__} which has no identity")
        return splat(initial, dtype, final)

    def body(i, value):
        combined = u._fn(value, astype(x[i], dtype))
        return combined if mask is None else ops.select(mask[i], combined, value)

    start = astype(asarray(initial) if initial is not None else x[0], dtype)
    result = lax.fori_loop(0 if initial is not None else 1, x.shape[0], body, broadcast_to(start, x.shape[1:]))
    return ops.reshape(result, final) if keepdims else result


def _accumulate(u, a, axis, dtype):
    special = _TABLE[u.__name__][3]
    if special is not None:
        return special(a, axis=axis, dtype=dtype)
    x = asarray(a)
    dtype = dtypes.canonical(dtype) if dtype is not None else _result_dtype(u, x)
    axis = normalize_axis(axis, x.ndim)
    if x.size == 0:
        return splat(0, dtype, x.shape)
    x = moveaxis(x, axis, 0)

    def step(carry, _):
        i, value = carry
        nxt = lax.select(i == 0, astype(x[0], dtype), u._fn(astype(value, dtype), astype(x[i], dtype)))
        return (i + 1, nxt), nxt

    _, out = lax.scan(step, (np.int32(0), astype(x[0], dtype)), None, length=x.shape[0])
    return moveaxis(out, 0, axis)


def _at(u, a, indices, b):
    indices = _thawed(indices)
    special = _TABLE[u.__name__][4]
    if special is not None:
        return special(a, indices, b)
    x = asarray(a)
    dtype = _result_dtype(u, x) if b is not None else x.dtype
    x, args = astype(x, dtype), () if b is None else (astype(asarray(b), dtype),)
    indices = indices if isinstance(indices, tuple) else (indices,)
    shapes = [np.shape(i) for i in indices if not isinstance(i, slice)]
    shape = broadcast_shapes(*shapes) if shapes else ()
    if not shape:  # (scalars and slices: each element once)
        return x.at[indices].set(u._fn(x.at[indices].get(), *args))
    # (index arrays: one element at a time, so a repeated index applies the function again, as jax's scan)
    count = math.prod(shape)
    args = tuple(ops.reshape(broadcast_to(v, shape + v.shape[len(shape):]), (count,) + v.shape[len(shape):])
                 for v in args)
    flat = [i if isinstance(i, slice) else ops.reshape(broadcast_to(asarray(i), shape), (count,)) for i in indices]

    def body(k, value):
        where = tuple(i if isinstance(i, slice) else i[k] for i in flat)
        return value.at[where].set(u._fn(value.at[where].get(), *(v[k] for v in args)))

    return lax.fori_loop(0, count, body, x)


def _reduceat(u, a, indices, axis, dtype):
    x, idx = asarray(a), asarray(indices)
    if x.ndim == 0:
        raise ValueError(f"hloforge.numpy.{u.__name__}.reduceat: a must have 1 or more dimension, "
                         f"got a.shape={x.shape}")
    if idx.ndim != 1:
        raise ValueError(f"hloforge.numpy.{u.__name__}.reduceat: indices must be one-dimensional, "
                         f"got indices.shape={idx.shape}")
    axis = normalize_axis(axis, x.ndim)
    if dtype is not None:
        x = astype(x, dtypes.canonical(dtype))
    out = take(x, idx, axis=axis)
    bounds = ops.concatenate([astype(idx, np.int32), splat(x.shape[axis], np.int32, (1,))], 0)
    shape = tuple(idx.shape[0] if d == axis else 1 for d in range(out.ndim))
    start = broadcast_to(ops.reshape(bounds[:-1], shape), out.shape)
    end = broadcast_to(ops.reshape(bounds[1:], shape), out.shape)

    def body(i, value):
        inside = (i > start) & (i < end)  # (out[j] takes in a[i] for indices[j] < i < indices[j + 1])
        return ops.select(inside, u._fn(value, take(x, ops.reshape(i, (1,)), axis=axis)), value)

    return lax.fori_loop(0, x.shape[axis], body, out)


def _outer(u, A, B):
    x, y = asarray(A), asarray(B)
    return ops.reshape(u._fn(ops.reshape(x, (x.size, 1)), ops.reshape(y, (1, y.size))), x.shape + y.shape)


class _Slice(NamedTuple):  # (a hashable slice: eager calls key on their static arguments)
    start: object
    stop: object
    step: object


def _frozen(indices):
    if isinstance(indices, slice):
        return _Slice(indices.start, indices.stop, indices.step)
    if isinstance(indices, tuple):
        return tuple(_frozen(i) for i in indices)
    return indices


def _thawed(indices):
    if isinstance(indices, _Slice):
        return slice(*indices)
    if isinstance(indices, tuple):
        return tuple(_thawed(i) for i in indices)
    return indices


_REDUCE, _ACCUMULATE, _AT, _REDUCEAT, _OUTER = (eager.wrap(_dtype_mode.boundary(f))
                                                for f in (_reduce, _accumulate, _at, _reduceat, _outer))
