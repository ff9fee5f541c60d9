"""Shared machinery of hloforge.numpy: promotion, broadcasting, casting, axis normalization."""
from __future__ import annotations

import functools
import operator

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.tracing import Tensor, as_tensor, refuse_masked, splat


def asarray(x, dtype=None, *, device=None, copy=None) -> Tensor:
    """A Tensor for ``x`` (constants for array-likes), converted to ``dtype`` if given.

    ``device`` (the array API's): None or jax's default device, where eager results live; ``copy``
    is accepted and has no effect (arrays are immutable, so a copy is never observable).
    """
    check_device(device, "asarray")
    if isinstance(x, (list, tuple)) and _has_tensor(x):  # (e.g. [[a[i] * b[j] ...]] of 0-d arrays, eagerly)
        return _stack_nested(x, dtype)
    if isinstance(x, Tensor):
        t = as_tensor(x)
        return t if dtype is None else astype(t, dtype)
    what = "hloforge.numpy.asarray"
    if dtype is not None:
        dtype = dtypes.canonical(dtype)
        if dtypes.weak_type(x) is not None:
            dtypes.check_scalar_fits(x, dtype, what)
        if isinstance(x, np.ma.MaskedArray):
            return as_tensor(x, what=what)  # (which refuses it)
        return as_tensor(np.asarray(x).astype(dtype), what=what)
    t = as_tensor(x, what=what)
    w = dtypes.weak_type(x)
    if w in (float, complex) or (w is int and t.dtype == dtypes.default_int()):
        t.weak = True  # (a Python scalar's Tensor stays weak, as jax.numpy.asarray(0.5) is; not 2**63's uint64)
    return t


def _has_tensor(x) -> bool:
    return isinstance(x, Tensor) or (isinstance(x, (list, tuple)) and any(_has_tensor(o) for o in x))


def _stack_nested(x, dtype):
    """A (nested) sequence holding Tensors as one Tensor: the elements' common dtype (Python scalars
    weak), or ``dtype``; emits ``stablehlo.reshape`` and ``stablehlo.concatenate``."""
    parts = [o if isinstance(o, Tensor) or dtypes.weak_type(o) is not None else asarray(o) for o in x]
    parts = [_stack_nested(o, dtype) if isinstance(o, (list, tuple)) else o for o in parts]
    common = dtypes.canonical(dtype) if dtype is not None else dtypes.result_type(*parts)
    parts = [asarray(p, common) if not isinstance(p, Tensor) else astype(p, common) for p in parts]
    shapes = {p.shape for p in parts}
    if len(shapes) > 1:
        raise ValueError(f"hloforge.numpy.asarray: the sequence's elements have different shapes "
                         f"{sorted(shapes)} (an inhomogeneous sequence)")
    return ops.concatenate([ops.reshape(p, (1,) + p.shape) for p in parts], 0)


def astype(x, dtype, /, *, copy=True, device=None) -> Tensor:
    """numpy's ``x.astype(dtype)``: float->int truncates, complex->real keeps the real part,
    anything->bool is ``x != 0``. Emits ``stablehlo.convert`` (``compare`` for bool).

    ``copy`` and ``device`` as in the array API's ``astype`` (see ``asarray``).
    """
    check_device(device, "astype")
    x = asarray(x)
    dtype = dtypes.canonical(dtype)
    if x.dtype == dtype:
        return x
    if dtype == np.bool_:
        return ops.compare(x, splat(0, x.dtype, x.shape), "NE")
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(dtype):
        x = ops.real(x)
        if x.dtype == dtype:
            return x
    return ops.convert(x, dtype)


def default_device():
    """The device eager results live on: jax's first device."""
    import jax  # (jax's arrays are what eager calls return)
    return jax.devices()[0]


def check_device(device, what) -> None:
    """The array API's ``device=``: None or the default device (hloforge places nothing itself)."""
    if device is not None and device != default_device():
        raise ValueError(f"hloforge.numpy.{what}: device={device!r} is not supported; arrays live on "
                         f"{default_device()!r} (pass None or that device)")


def broadcast_shapes(*shapes, what="broadcast") -> tuple:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"{what}: shapes {', '.join(map(str, shapes))} cannot be broadcast together") from None


def _broadcast_shape(shapes, what) -> tuple:
    """``broadcast_shapes`` without numpy for the common case: one shape, and scalars."""
    ranked = {s for s in shapes if s != ()}
    if len(ranked) <= 1:
        return tuple(ranked.pop()) if ranked else ()
    return broadcast_shapes(*shapes, what=what)


def broadcast_to(x, shape) -> Tensor:
    """numpy's ``broadcast_to``: right-aligned, size-1 dims stretch. Emits broadcast_in_dim."""
    x = asarray(x)
    shape = tuple(int(s) for s in shape)
    if x.shape == shape:
        return x
    if len(shape) < x.ndim or any(a not in (1, b) for a, b in zip(x.shape[::-1], shape[::-1])):
        raise ValueError(f"broadcast_to: cannot broadcast shape {x.shape} to {shape}")
    offset = len(shape) - x.ndim
    return ops.broadcast_in_dim(x, shape, tuple(range(offset, len(shape))))


def operands(what, *xs, dtype=None):
    """Promote ``xs`` (Tensors, arrays, weak Python scalars) to one dtype and one shape.

    Scalars and arrays become constants of the common dtype (splats stay one op).
    """
    first = xs[0]
    if type(first) is Tensor and (dtype is None or dtype == first.dtype) and all(
            type(x) is Tensor and x.shape == first.shape and x.dtype == first.dtype for x in xs[1:]):
        return [as_tensor(x, what=what) for x in xs]  # (the common case: nothing to promote or broadcast)
    common = dtype if dtype is not None else dtypes.result_type(*xs)
    weak = [dtypes.weak_type(x) for x in xs]
    shapes = [x.shape if isinstance(x, Tensor) else () if w is not None else np.shape(x) for x, w in zip(xs, weak)]
    shape = _broadcast_shape(shapes, what)
    out = []
    for x, w in zip(xs, weak):
        if isinstance(x, Tensor):
            out.append(broadcast_to(astype(as_tensor(x, what=what), common), shape))
            continue
        if w is not None:
            dtypes.check_scalar_fits(x, common, what)
            out.append(splat(x, common, shape))
            continue
        refuse_masked(x, what)
        array = np.asarray(x)
        if array.size == 1 or (array.size and (array == array.reshape(-1)[0]).all()):
            out.append(splat(array.reshape(-1)[0] if array.size else 0, common, shape))
        else:
            out.append(broadcast_to(as_tensor(array.astype(common)), shape))
    return out


@functools.lru_cache(maxsize=None)
def _ufunc_types(ufunc, in_dtypes):
    """numpy's loop for ``ufunc`` on these input dtypes: (input dtypes, output dtype)."""
    try:
        resolved = ufunc.resolve_dtypes(tuple(in_dtypes) + (None,) * ufunc.nout)
        return tuple(resolved[:ufunc.nin]), resolved[ufunc.nin]
    except (TypeError, np.exceptions.DTypePromotionError) as e:
        raise TypeError(f"{ufunc.__name__}: not supported for dtype(s) "
                        f"{', '.join(str(d) for d in in_dtypes)} ({e})") from None


def ufunc_dtypes(ufunc, *in_dtypes):
    """(compute dtype, result dtype) as numpy selects them; bfloat16 computes in bfloat16."""
    if any(d == dtypes.bfloat16 for d in in_dtypes):
        return in_dtypes[0], in_dtypes[0]
    ins, out = _ufunc_types(ufunc, tuple(np.dtype(d) for d in in_dtypes))
    if dtypes.MODE[0] == "jax" and not any(d in dtypes.X32 for d in in_dtypes):
        # (jax without x64: integers and bools compute inexact functions in float32, none in 64 bits)
        if dtypes.is_inexact(out) and not any(dtypes.is_inexact(d) for d in in_dtypes):
            return dtypes.default_float(), dtypes.default_float()
        return dtypes.canonicalize(ins[0]), dtypes.canonicalize(out)
    return ins[0], out


def normalize_axis(axis: int, ndim: int, what="axis") -> int:
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {axis!r}") from None
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def normalize_axes(axis, ndim: int, what="axis") -> tuple:
    """None -> all axes; int or sequence -> sorted non-negative tuple; repeats raise."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(normalize_axis(a, ndim, what) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"duplicate value in '{what}': {tuple(axis)}")
        return axes
    return (normalize_axis(axis, ndim, what),)
