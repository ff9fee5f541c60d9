"""Convolution and pooling layers with explicit weights, channels-last by default (flax's layout)."""
from __future__ import annotations

import operator

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend import numpy as hnp
from hloforge.frontend.lax.convolution import conv_general_dilated, padtype_to_pads
from hloforge.frontend.numpy._base import asarray

_LAYOUTS = {"NHWC": ("HWIO", "NHWC"), "NCHW": ("OIHW", "NCHW")}


def _spatial(what, value, n, name):
    if isinstance(value, int):
        return (value,) * n
    try:
        out = tuple(operator.index(v) for v in value)
    except TypeError:
        raise TypeError(f"{what}: {name} must be an int or {n} ints, got {value!r}") from None
    if len(out) != n:
        raise ValueError(f"{what}: {name} {list(out)} must have {n} entries, one per spatial dimension")
    return out


def _layout_strings(layout, n):
    if layout not in _LAYOUTS:
        raise ValueError(f"conv: layout {layout!r} is not one of {', '.join(_LAYOUTS)}")
    letters = "HWDUVXYZ"[:n]
    if layout == "NHWC":
        return f"N{letters}C", f"{letters}IO", f"N{letters}C"
    return f"NC{letters}", f"OI{letters}", f"NC{letters}"


def conv(x, w, b=None, strides=1, padding="SAME", dilation=1, groups=1, layout="NHWC", precision=None):
    """An n-d convolution layer; emits one ``stablehlo.convolution`` (plus the bias add).

    Args:
      x: input, (batch, *spatial, in) for layout "NHWC" or (batch, in, *spatial) for "NCHW".
      w: kernel, (*window, in // groups, out) for "NHWC" (HWIO) or (out, in // groups, *window) for
        "NCHW" (OIHW).
      b: optional bias of shape (out,).
      strides, dilation: an int or one per spatial dimension (dilation is the kernel's).
      padding: 'SAME', 'VALID', or (low, high) pairs.
      groups: feature groups (groups = in: depthwise).
      layout: "NHWC" or "NCHW".
    Returns:
      The output, in x's layout.
    Example:
      >>> y = hf.nn.conv(x, w, b, strides=2)
    """
    x, w = asarray(x), asarray(w)
    if x.ndim < 3 or x.ndim != w.ndim:
        raise ValueError(f"conv: input {x.shape} and kernel {w.shape} must have one rank >= 3")
    n = x.ndim - 2
    dn = _layout_strings(layout, n)
    y = conv_general_dilated(x, w, _spatial("conv", strides, n, "strides"), padding,
                             rhs_dilation=_spatial("conv", dilation, n, "dilation"), dimension_numbers=dn,
                             feature_group_count=groups, precision=precision)
    if b is None:
        return y
    b = asarray(b, y.dtype)
    shape = (1,) * (y.ndim - 1) + (-1,) if layout == "NHWC" else (1, -1) + (1,) * n
    return y + hnp.reshape(b, shape)


def _pool_args(what, x, window_shape, strides, padding, layout):
    x = asarray(x)
    n = x.ndim - 2
    if n < 1:
        raise ValueError(f"{what}: input {x.shape} must be (batch, *spatial, features) with a spatial dimension")
    window = _spatial(what, window_shape, n, "window_shape")
    strides = window if strides is None else _spatial(what, strides, n, "strides")
    if layout not in _LAYOUTS:
        raise ValueError(f"{what}: layout {layout!r} is not one of {', '.join(_LAYOUTS)}")
    spatial = list(range(1, n + 1)) if layout == "NHWC" else list(range(2, n + 2))
    if isinstance(padding, str):
        pads = padtype_to_pads([x.shape[d] for d in spatial], window, strides, padding)
    else:
        pads = [tuple(p) for p in padding]
        if len(pads) != n:
            raise ValueError(f"{what}: padding {pads} must have {n} (low, high) pairs")
    full_window, full_strides, full_pads = [1] * x.ndim, [1] * x.ndim, [(0, 0)] * x.ndim
    for d, wd, s, p in zip(spatial, window, strides, pads):
        full_window[d], full_strides[d], full_pads[d] = wd, s, p
    return x, tuple(full_window), tuple(full_strides), tuple(full_pads)


def max_pool(x, window_shape, strides=None, padding="VALID", layout="NHWC"):
    """The maximum of each window (padding never wins); emits ``stablehlo.reduce_window``.

    Args:
      x: (batch, *spatial, features) ("NHWC") or (batch, features, *spatial) ("NCHW").
      window_shape: an int or one size per spatial dimension.
      strides: per spatial dimension (None: the window shape).
      padding: 'SAME', 'VALID' or (low, high) pairs.
    Returns:
      The pooled array.
    Example:
      >>> y = hf.nn.max_pool(x, (2, 2))
    """
    x, window, strides, pads = _pool_args("max_pool", x, window_shape, strides, padding, layout)
    if dtypes.is_complex(x.dtype):
        raise TypeError(f"max_pool: complex input {x.dtype} has no order")
    if dtypes.is_float(x.dtype):
        init = -np.inf
    elif dtypes.is_bool(x.dtype):
        init = False
    else:
        init = np.iinfo(x.dtype).min
    body = "or" if dtypes.is_bool(x.dtype) else "max"
    return ops.reduce_window(x, init, window, window_strides=strides, padding=pads, body=body)


def avg_pool(x, window_shape, strides=None, padding="VALID", count_include_pad=True, layout="NHWC"):
    """The mean of each window; emits ``stablehlo.reduce_window`` (and a second one counting the
    real elements when ``count_include_pad`` is False and there is padding).

    Args: as for max_pool; ``count_include_pad``: divide by the full window size (flax's default).
    Returns:
      The pooled array (float input).
    Example:
      >>> y = hf.nn.avg_pool(x, (2, 2), padding="SAME")
    """
    x, window, strides, pads = _pool_args("avg_pool", x, window_shape, strides, padding, layout)
    if not dtypes.is_float(x.dtype):
        raise TypeError(f"avg_pool: needs a float input, got {x.dtype}")
    total = ops.reduce_window(x, 0, window, window_strides=strides, padding=pads, body="add")
    if count_include_pad or all(p == (0, 0) for p in pads):
        return total * (1.0 / float(np.prod(window)))
    ones = hnp.ones(x.shape, x.dtype)
    count = ops.reduce_window(ones, 0, window, window_strides=strides, padding=pads, body="add")
    return total / count


__all__ = ["conv", "max_pool", "avg_pool"]
