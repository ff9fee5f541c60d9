"""numpy's advanced indexing, ``Tensor.at[...]`` updates, take/take_along_axis/put_along_axis.

Integer-array indices (constant or traced) in any position, mixed with slices, ``None`` and
``...``, follow numpy's result layout: the broadcast index dims replace the indexed dims in
place when the array indices are adjacent, else they come first. Boolean masks must be
constants (their result shape depends on their values). Basic indices (ints, slices, 0-d
Tensors) go to ``shape.getitem``.

Out of bounds: constant indices raise IndexError (numpy); traced ones are clamped (jax).
``x.at[idx]`` follows jax: negative indices wrap, then out-of-bound updates are dropped
(``mode="drop"``/``"fill"``/``"promise_in_bounds"``) or clamped (``"clip"``); ``get`` clamps by
default and fills with ``fill_value`` under ``mode="fill"``.
"""
from __future__ import annotations

import operator

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax._common import default_fill
from hloforge.frontend.numpy import _shape
from hloforge.frontend.numpy._base import asarray, astype, broadcast_to
from hloforge.frontend.numpy._math import clip, remainder
from hloforge.frontend.tracing import Tensor, as_tensor

_MODES = ("promise_in_bounds", "clip", "drop", "fill")


class _Mask:
    """A constant boolean mask, before it becomes its nonzero() arrays."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class _Adv:
    """An advanced index: a constant numpy integer array or a traced integer Tensor."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    @property
    def shape(self):
        return tuple(self.value.shape)


def _mask_error():
    return TypeError("boolean index of a traced Tensor: the result shape would depend on the mask's values "
                     "(NonConcreteBooleanIndexError in jax); use a constant mask, or "
                     "hloforge.numpy.where(mask, x, fill) to keep the shape")


def _items(key, x_ndim):
    """The key as a list of None, Ellipsis, slice, int, _Adv (constant masks become their nonzero()
    arrays); and whether it holds an array index."""
    out, has_array = [], False
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, slice):
            out.append(k)
        elif isinstance(k, Tensor):
            if dtypes.is_bool(k.dtype):
                raise _mask_error()
            if not dtypes.is_integer(k.dtype):
                raise IndexError(f"arrays used as indices must be of integer (or boolean) type, got {k}")
            out.append(_Adv(k) if k.ndim else k)
            has_array |= k.ndim > 0
        elif isinstance(k, (bool, np.bool_)):
            out.append(k)
        elif isinstance(k, (int, np.integer)):
            out.append(operator.index(k))
        elif isinstance(k, (list, tuple, np.ndarray)):
            if isinstance(k, (list, tuple)) and _holds_tensor(k):
                raise TypeError("index: a list of traced Tensors is not supported; stack them into one Tensor "
                                "(hloforge.numpy.stack)")
            arr = np.asarray(k)
            if arr.size == 0 and arr.dtype.kind == "f":
                arr = arr.astype(np.int64)
            if arr.dtype == np.bool_:
                if arr.ndim == 0:
                    out.append(bool(arr))
                    continue
                out.append(_Mask(arr))
                has_array = True
            elif arr.dtype.kind in "iu":
                out.append(_Adv(arr) if arr.ndim else int(arr))
                has_array |= arr.ndim > 0
            else:
                raise IndexError(f"arrays used as indices must be of integer (or boolean) type, got {arr.dtype}")
        else:
            raise TypeError(f"index: unsupported index {k!r} of type {type(k).__name__}")
    return out, has_array


def _expand(items, shape):
    ndim = len(shape)
    if sum(k is Ellipsis for k in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(k.value.ndim if isinstance(k, _Mask) else 1 for k in items if k is not None and k is not Ellipsis)
    if consumed > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but {consumed} were indexed")
    fill = [slice(None)] * (ndim - consumed)
    if Ellipsis in [k if k is Ellipsis else None for k in items]:
        i = next(i for i, k in enumerate(items) if k is Ellipsis)
        items = items[:i] + fill + items[i + 1:]
    else:
        items = items + fill
    return _unmask(items, shape)


def _unmask(items, shape):
    """Constant masks -> their nonzero() index arrays, after checking them against ``shape``."""
    out, dim = [], 0
    for k in items:
        if isinstance(k, _Mask):
            for j, n in enumerate(k.value.shape):
                if n != shape[dim + j]:
                    raise IndexError(f"boolean index did not match indexed array along axis {dim + j}; size of "
                                     f"axis is {shape[dim + j]} but size of corresponding boolean axis is {n}")
            out.extend(_Adv(a) for a in np.nonzero(k.value))
            dim += k.value.ndim
            continue
        out.append(k)
        dim += k is not None
    return out


def getitem(x, key):
    """``x[key]`` with numpy's semantics (basic and advanced indexing)."""
    x = asarray(x)
    key = key if isinstance(key, tuple) else (key,)
    items, has_array = _items(key, x.ndim)
    if not has_array:
        return _shape.getitem(x, key)
    if any(isinstance(k, bool) for k in items):
        raise IndexError("index: boolean scalars mixed with array indices are not supported")
    return _advanced(x, _expand(items, x.shape), mode="numpy")


def _index_tensor(k, n, axis, mode, index_dtype):
    """One advanced index of ``index_dtype`` (a numpy array for constants, else a Tensor), negatives
    wrapped; under "drop"/"fill" out-of-bound entries become ``n`` (the sentinel slot the caller
    pads in)."""
    v = k.value if isinstance(k, _Adv) else k
    if isinstance(v, (int, np.ndarray)):
        arr = np.asarray(v)
        if mode == "numpy":
            bad = (arr < -n) | (arr >= n)
            if bad.any():
                raise IndexError(f"index {arr[bad].reshape(-1)[0]} is out of bounds for axis {axis} with size {n}")
        arr = np.where(arr < 0, arr + n, arr)
        if mode in ("drop", "fill"):
            arr = np.where((arr < 0) | (arr >= n), n, arr)
        elif mode == "clip":
            arr = np.clip(arr, 0, max(n - 1, 0))
        return arr.astype(index_dtype)
    if dtypes.is_unsigned_int(v.dtype) and v.dtype.itemsize >= np.dtype(index_dtype).itemsize:
        v = ops.clamp(as_tensor(np.zeros((), v.dtype)), v, as_tensor(np.asarray(n, v.dtype)))
    t = astype(v, index_dtype)
    zero, size = as_tensor(np.zeros((), index_dtype)), as_tensor(np.asarray(n, index_dtype))
    t = ops.select(ops.compare(t, broadcast_to(zero, t.shape), "LT"), ops.add(t, broadcast_to(size, t.shape)), t)
    if mode in ("drop", "fill"):
        bad = ops.or_(ops.compare(t, broadcast_to(zero, t.shape), "LT"), ops.compare(t, broadcast_to(size, t.shape), "GE"))
        t = ops.select(bad, broadcast_to(size, t.shape), t)
    return t


def _advanced(x, items, mode, pad_value=None):
    """Gather for expanded ``items`` (None, slice, int, 0-d Tensor, _Adv). ``mode``: "numpy",
    "clip", "drop"/"fill" (out-of-bound entries read ``pad_value``)."""
    # stage 1: the slices, as basic indexing does
    basic = tuple(k if isinstance(k, slice) else slice(None) for k in items if k is not None)
    y = _shape.getitem(x, basic) if any(k != slice(None) for k in basic) else x
    dims = [k for k in items if k is not None]
    adv = [d for d, k in enumerate(dims) if not isinstance(k, slice)]
    if not adv:
        return _shape.reshape(y, _final_shape(items, y, (), True))
    shapes = [dims[d].shape if isinstance(dims[d], (_Adv, Tensor)) else () for d in adv]
    try:
        batch = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with shapes "
                         + " ".join(str(tuple(s)) for s in shapes)) from None
    wide = max(y.shape) >= 2**31 - 1 or any(isinstance(dims[d], _Adv) and isinstance(dims[d].value, Tensor)
                                            and dims[d].value.dtype.itemsize == 8 for d in adv)
    index_dtype = np.int64 if wide else np.int32
    parts = [_index_tensor(dims[d], y.shape[d], d, mode, index_dtype) for d in adv]
    if all(isinstance(t, np.ndarray) for t in parts):  # one constant (and less for the folder to do)
        indices = as_tensor(np.stack([np.broadcast_to(t, batch) for t in parts], -1))
    else:
        parts = [ops.reshape(broadcast_to(asarray(t), batch), batch + (1,)) for t in parts]
        indices = parts[0] if len(parts) == 1 else ops.concatenate(parts, len(batch))
    if mode in ("drop", "fill"):
        pad = [1 if d in adv else 0 for d in range(y.ndim)]
        y = ops.pad(y, as_tensor(np.asarray(pad_value).astype(y.dtype)), [0] * y.ndim, pad, [0] * y.ndim)
    positions = [i for i, k in enumerate(items) if not isinstance(k, slice) and k is not None]
    contiguous = positions == list(range(positions[0], positions[0] + len(positions)))
    rest = [d for d in range(y.ndim) if d not in adv]
    p = sum(1 for d in rest if d < adv[0]) if contiguous else 0
    offset_dims = tuple(i for i in range(len(rest) + len(batch)) if not p <= i < p + len(batch))
    sizes = tuple(1 if d in adv else y.shape[d] for d in range(y.ndim))
    out = ops.gather(y, ops.reshape(indices, batch + (len(adv),)), offset_dims, tuple(sorted(adv)), tuple(adv),
                     len(batch), sizes)
    return _shape.reshape(out, _final_shape(items, out, batch, contiguous, rest_sizes=[y.shape[d] for d in rest]))


def _final_shape(items, y, batch, contiguous, rest_sizes=None):
    sizes = iter(rest_sizes if rest_sizes is not None else y.shape)
    shape = [] if contiguous else list(batch)
    placed = not contiguous
    for k in items:
        if k is None:
            shape.append(1)
        elif isinstance(k, slice):
            shape.append(next(sizes))
        elif not placed:
            shape.extend(batch)
            placed = True
    return tuple(shape)


# ---------------------------------------------------------------- x.at[idx]

def _at_items(x, key):
    key = key if isinstance(key, tuple) else (key,)
    items, _ = _items(key, x.ndim)
    if any(isinstance(k, bool) for k in items):
        raise IndexError("at[]: boolean scalar indices are not supported")
    items = [_Adv(np.asarray(k)) if isinstance(k, int) and not isinstance(k, bool) else
             _Adv(k) if isinstance(k, Tensor) else k for k in items]
    return _expand(items, x.shape)


def _check_mode(mode):
    if mode is not None and mode not in _MODES:
        raise ValueError(f"at[]: mode {mode!r} is not one of {', '.join(map(repr, _MODES))} or None")


def _positions(x, items, mode):
    """Flat positions in ``x`` of the indexed elements, laid out as ``x[items]``; dropped entries
    hold ``x.size`` (outside)."""
    dtype = np.int32 if x.size < 2**31 - 1 else np.int64
    flat = ops.reshape(ops.iota((max(x.size, 1),), dtype, 0), (max(x.size, 1),)) if x.size else \
        as_tensor(np.zeros((0,), dtype))
    grid = _shape.reshape(flat, x.shape)
    return _advanced(grid, items, mode, pad_value=x.size)


class _IndexUpdateRef:
    """``x.at[idx]``: functional updates with jax's semantics."""
    __slots__ = ("x", "key")

    def __init__(self, x, key):
        self.x, self.key = x, key

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None):
        """``x[idx]``; out-of-bound indices clamp, or read ``fill_value`` (NaN, min int, True) with
        ``mode="fill"``."""
        _check_mode(mode)
        x = self.x
        items = _at_items(x, self.key)
        if mode == "fill":
            fill = default_fill(x.dtype) if fill_value is None else fill_value
            return _advanced(x, items, "fill", pad_value=fill)
        return _advanced(x, items, "clip")

    def _update(self, computation, values, mode, indices_are_sorted, unique_indices, what):
        _check_mode(mode)
        x = self.x
        items = _at_items(x, self.key)
        pos = _positions(x, items, "clip" if mode == "clip" else "drop")
        v = asarray(values)
        if v.dtype != x.dtype:
            if dtypes.weak_type(values) is None and not isinstance(values, Tensor) and np.ndim(values) == 0:
                v = asarray(np.asarray(values).astype(x.dtype))
            else:
                v = astype(v, x.dtype)
        try:
            v = broadcast_to(v, pos.shape)
        except ValueError:
            raise ValueError(f"at[].{what}: values of shape {v.shape} cannot be broadcast to the indexed "
                             f"shape {pos.shape}") from None
        flat = _shape.reshape(x, (x.size,))
        out = ops.scatter(flat, pos, v, (), (0,), (0,), pos.ndim, computation,
                          indices_are_sorted=indices_are_sorted, unique_indices=unique_indices)
        return _shape.reshape(out, x.shape)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x`` with ``x[idx] = values`` (for repeated indices one of the values wins)."""
        return self._update("set", values, mode, indices_are_sorted, unique_indices, "set")

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x`` with ``x[idx] += values``, repeated indices accumulating."""
        return self._update("add", values, mode, indices_are_sorted, unique_indices, "add")

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update("mul", values, mode, indices_are_sorted, unique_indices, "multiply")

    mul = multiply

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update("min", values, mode, indices_are_sorted, unique_indices, "min")

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update("max", values, mode, indices_are_sorted, unique_indices, "max")


class _IndexUpdateHelper:
    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __getitem__(self, key):
        return _IndexUpdateRef(self.x, key)


def at(x) -> _IndexUpdateHelper:
    return _IndexUpdateHelper(x)


# ---------------------------------------------------------------- take, take_along_axis, put_along_axis

def _axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def take(a, indices, axis=None, out=None, mode=None, fill_value=None):
    """numpy.take: ``a`` indexed by ``indices`` along ``axis`` (flattened when None). ``mode``:
    None/"raise" (numpy's: constants checked), "wrap", "clip" (numpy's: negatives clip to 0),
    "fill" (out of bounds read ``fill_value``)."""
    if out is not None:
        raise NotImplementedError("take: out= is not supported (arrays are immutable)")
    a = asarray(a)
    if axis is None:
        a, axis = _shape.ravel(a), 0
    axis = _axis(axis, a.ndim)
    n = a.shape[axis]
    idx = indices if isinstance(indices, Tensor) else np.asarray(indices)
    if mode in ("wrap", "clip"):
        if isinstance(idx, Tensor):
            idx = remainder(idx, n) if mode == "wrap" else clip(idx, 0, n - 1)
        else:
            idx = np.mod(idx, n) if mode == "wrap" else np.clip(idx, 0, n - 1)
    elif mode not in (None, "raise", "fill"):
        raise ValueError(f"take: mode {mode!r} is not one of 'raise', 'wrap', 'clip', 'fill'")
    key = (slice(None),) * axis + (idx,)
    if mode == "fill":
        fill = default_fill(a.dtype) if fill_value is None else fill_value
        items = _at_items(a, key)
        return _advanced(a, items, "fill", pad_value=fill)
    if isinstance(idx, np.ndarray) and idx.ndim == 0:
        return getitem(a, (slice(None),) * axis + (int(idx),))
    return getitem(a, key)


def _along_axis_key(arr, indices, axis, what):
    if indices.ndim != arr.ndim:
        raise ValueError(f"{what}: indices and arr must have the same number of dimensions; "
                         f"got {indices.ndim} and {arr.ndim}")
    key = []
    for d in range(arr.ndim):
        if d == axis:
            key.append(indices)
        else:
            shape = [1] * arr.ndim
            shape[d] = arr.shape[d]
            key.append(np.arange(arr.shape[d]).reshape(shape))
    return tuple(key)


def take_along_axis(arr, indices, axis=-1):
    """numpy.take_along_axis: ``out[i, j] = arr[i, indices[i, j]]`` (for axis 1), broadcasting the
    other dims."""
    arr = asarray(arr)
    if axis is None:
        arr, axis = _shape.ravel(arr), 0
    axis = _axis(axis, arr.ndim)
    idx = indices if isinstance(indices, Tensor) else np.asarray(indices)
    return getitem(arr, _along_axis_key(arr, idx, axis, "take_along_axis"))


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """jax.numpy.put_along_axis: ``arr`` with ``values`` written at ``indices`` along ``axis``;
    requires ``inplace=False`` (Tensors are immutable), as in jax."""
    if inplace:
        raise ValueError("put_along_axis cannot modify a Tensor in place; pass inplace=False and use the "
                         "returned Tensor")
    arr = asarray(arr)
    if axis is None:
        arr_flat = _shape.ravel(arr)
        return _shape.reshape(put_along_axis(arr_flat, indices, values, 0, inplace=False, mode=mode), arr.shape)
    axis = _axis(axis, arr.ndim)
    idx = indices if isinstance(indices, Tensor) else np.asarray(indices)
    return at(arr)[_along_axis_key(arr, idx, axis, "put_along_axis")].set(values, mode=mode)


__all__ = ["getitem", "take", "take_along_axis", "put_along_axis", "at"]


def _holds_tensor(seq) -> bool:
    """Whether a (nested) list or tuple holds a Tensor (without numpy converting it)."""
    return any(isinstance(e, Tensor) or (isinstance(e, (list, tuple)) and _holds_tensor(e)) for e in seq)
