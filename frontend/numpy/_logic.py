"""numpy's comparisons of whole arrays (isclose, allclose, array_equal, array_equiv, isin), the
dtype and shape utilities (result_type, can_cast, promote_types, issubdtype, isdtype, ndim, shape,
size, isscalar, iterable, iscomplexobj, isrealobj), and select/choose/piecewise."""
from __future__ import annotations

import builtins

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy import _math as m
from hloforge.frontend.numpy._base import asarray, astype, broadcast_shapes, broadcast_to, splat
from hloforge.frontend.numpy._reductions import all as _all, any as _any
from hloforge.frontend.numpy._shape import ravel
from hloforge.frontend.numpy._ufuncs import isfinite, isnan
from hloforge.frontend.tracing import Tensor
from hloforge.frontend.numpy._creation_more import array


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """numpy.isclose: |a - b| <= atol + rtol * |b|; infinities equal only themselves."""
    x, y = asarray(a), asarray(b)
    common = dtypes.result_type(a if not isinstance(a, Tensor) else x, b if not isinstance(b, Tensor) else y)
    common = dtypes.result_type(common, 1.0)  # numpy: result_type(y, 1.)
    x, y = astype(x, common), astype(y, common)
    shape = broadcast_shapes(x.shape, y.shape, what="isclose")
    x, y = broadcast_to(x, shape), broadcast_to(y, shape)
    diff = m.abs(m.subtract(x, y))
    tol = m.add(atol, m.multiply(rtol, m.abs(y)))
    close = m.less_equal(diff, tol)
    fin = m.logical_and(isfinite(x), isfinite(y))
    close = m.logical_and(close, fin)
    close = m.logical_or(close, m.logical_and(m.logical_not(fin), m.equal(x, y)))
    if equal_nan:
        close = m.logical_or(close, m.logical_and(isnan(x), isnan(y)))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """numpy.allclose: all(isclose(...)), a 0-d bool Tensor."""
    return _all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """numpy.array_equal: same shape (decided statically) and equal elements."""
    x, y = asarray(a1), asarray(a2)
    if x.shape != y.shape:
        return splat(False, bool, ())
    eq = m.equal(x, y)
    if equal_nan:
        eq = m.logical_or(eq, m.logical_and(isnan(x), isnan(y)))
    return _all(eq)


def array_equiv(a1, a2):
    """numpy.array_equiv: broadcastable and equal elements."""
    x, y = asarray(a1), asarray(a2)
    try:
        np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        return splat(False, bool, ())
    return _all(m.equal(x, y))


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """numpy.isin: whether each element occurs in ``test_elements`` (a broadcast comparison)."""
    x, t = array(element), ravel(array(test_elements))
    common = dtypes.result_type(x, t)
    x, t = astype(x, common), astype(t, common)
    full = x.shape + t.shape
    eq = ops.compare(ops.broadcast_in_dim(x, full, tuple(range(x.ndim))),
                     ops.broadcast_in_dim(t, full, (x.ndim,)), "EQ")
    out = _any(eq, axis=-1) if t.shape[0] else splat(False, bool, x.shape)
    return m.logical_not(out) if invert else out


# ---------------------------------------------------------------- dtype and shape utilities

def _dt(x):
    if isinstance(x, Tensor):
        return x.dtype
    if isinstance(x, (np.dtype, type, str)):
        return dtypes.canonical(x)
    return x


def result_type(*arrays_and_dtypes):
    """numpy.result_type (NEP 50: Python scalars are weak)."""
    return dtypes.result_type(*[_dt(a) if isinstance(a, (Tensor, np.dtype, type, str)) else a
                                for a in arrays_and_dtypes])


def promote_types(type1, type2):
    """numpy.promote_types."""
    return dtypes.result_type(dtypes.canonical(type1), dtypes.canonical(type2))


def can_cast(from_, to, casting="safe"):
    """numpy.can_cast for dtypes and Tensors (by dtype)."""
    f = from_.dtype if isinstance(from_, Tensor) else from_
    return bool(np.can_cast(f, to, casting))


def issubdtype(arg1, arg2):
    """numpy.issubdtype (bfloat16 counts as a floating type)."""
    if isinstance(arg1, Tensor):
        arg1 = arg1.dtype
    try:
        if np.dtype(arg1) == dtypes.bfloat16:
            return arg2 in (np.floating, np.inexact, np.number, np.generic) or np.dtype(arg2) == dtypes.bfloat16
    except TypeError:
        pass
    return bool(np.issubdtype(arg1, arg2))


def isdtype(dtype, kind):
    """numpy.isdtype (array API kinds: 'bool', 'signed integer', 'real floating', ...)."""
    d = np.dtype(dtype)
    if d == dtypes.bfloat16:
        kinds = kind if isinstance(kind, tuple) else (kind,)
        return builtins.any(k in ("real floating", "numeric") or (not isinstance(k, str) and np.dtype(k) == d)
                            for k in kinds)
    return bool(np.isdtype(d, kind))


def ndim(a):
    """numpy.ndim."""
    return a.ndim if isinstance(a, Tensor) else np.ndim(a)


def shape(a):
    """numpy.shape."""
    return a.shape if isinstance(a, Tensor) else np.shape(a)


def size(a, axis=None):
    """numpy.size."""
    s = shape(a)
    return int(np.prod(s, dtype=np.int64)) if axis is None else s[axis]


def isscalar(element):
    """numpy.isscalar (a 0-d Tensor is not a scalar, as a 0-d ndarray is not)."""
    return False if isinstance(element, Tensor) else bool(np.isscalar(element))


def iterable(y):
    """numpy.iterable."""
    if isinstance(y, Tensor):
        return y.ndim > 0
    return bool(np.iterable(y))


def iscomplexobj(x):
    """numpy.iscomplexobj: the dtype is complex."""
    return dtypes.is_complex(x.dtype) if isinstance(x, Tensor) else bool(np.iscomplexobj(x))


def isrealobj(x):
    """numpy.isrealobj."""
    return not iscomplexobj(x)


# ---------------------------------------------------------------- select, choose, piecewise

def select(condlist, choicelist, default=0):
    """numpy.select: the first choice whose condition holds, else ``default``."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("select with an empty condition list is not possible")
    conds = [asarray(c) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    out = default
    for c, v in reversed(list(zip(conds, choicelist))):
        out = m.where(c, v, out)
    return asarray(out)


def choose(a, choices, out=None, mode="raise"):
    """numpy.choose: ``choices[a]`` elementwise (mode 'wrap' or 'clip'; 'raise' cannot check traced
    indices and clips)."""
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode not understood; got {mode!r}")
    idx = asarray(a)
    if not dtypes.is_integer(idx.dtype):
        raise TypeError(f"Cannot cast array data from dtype('{idx.dtype}') to dtype('int64') according to the rule 'safe'")
    cs = [asarray(c) for c in choices]
    n = len(cs)
    if not isinstance(a, Tensor):
        ia = np.asarray(a)
        if mode == "raise" and ((ia < 0) | (ia >= n)).any():
            raise ValueError("invalid entry in choice array")
    idx = astype(idx, np.int64)
    idx = m.remainder(idx, n) if mode == "wrap" else m.clip(idx, 0, n - 1)
    result = cs[0]
    for i, c in enumerate(cs[1:], 1):
        result = m.where(m.equal(idx, i), c, result)
    shape = broadcast_shapes(idx.shape, *[c.shape for c in cs], what="choose")
    return broadcast_to(result, shape)


def piecewise(x, condlist, funclist, *args, **kw):
    """numpy.piecewise: every function is evaluated on all of x; conditions select (later wins)."""
    x = asarray(x)
    if isinstance(condlist, Tensor) or not isinstance(condlist, (list, tuple)):
        condlist = [condlist]
    conds = [asarray(c) for c in condlist]
    n = len(conds)
    if len(funclist) not in (n, n + 1):
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    out = splat(0, x.dtype, x.shape)
    if len(funclist) == n + 1:
        other = m.logical_not(_any_of(conds, x.shape))
        conds = conds + [other]
    for c, f in zip(conds, funclist):
        val = f(x, *args, **kw) if callable(f) else f
        out = m.where(broadcast_to(c, x.shape), astype(asarray(val), x.dtype) if isinstance(val, Tensor) else
                      np.asarray(val, x.dtype) if not isinstance(val, Tensor) else val, out)
    return out


def _any_of(conds, shape):
    acc = splat(False, bool, shape)
    for c in conds:
        acc = m.logical_or(acc, broadcast_to(c, shape))
    return acc
