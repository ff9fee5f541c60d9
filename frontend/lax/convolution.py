"""jax.lax's convolutions: conv_general_dilated, conv, conv_with_general_padding, conv_transpose,
conv_general_dilated_patches and conv_general_dilated_local, and the static shape helpers
conv_shape_tuple, conv_general_shape_tuple and conv_transpose_shape_tuple."""
from __future__ import annotations

import math
import operator
from typing import NamedTuple, Union

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax._common import lax_operand
from hloforge.frontend.ops._common import int_tuple
from hloforge.frontend.ops.convolution import ConvDimensions


class ConvDimensionNumbers(NamedTuple):
    """jax.lax.ConvDimensionNumbers: for lhs, rhs and out, the dimension indices of (batch or
    out-feature, feature or in-feature, spatial...)."""
    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


# (jax's alias, over hloforge's ConvDimensionNumbers; jax's ConvDimensionNumbers are accepted as well)
ConvGeneralDilatedDimensionNumbers = Union[None, ConvDimensionNumbers, tuple[str, str, str]]


def conv_general_permutations(dimension_numbers):
    """(lhs_perm, rhs_perm, out_perm) of a ("NCHW", "OIHW", "NCHW")-style string triple, as jax.lax
    computes them (spatial dimensions in the kernel string's order)."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    charpairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(charpairs):
        if not dimension_numbers[i].count(a) == dimension_numbers[i].count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters '{a}' and '{b}' "
                            f"exactly once, got {dimension_numbers[i]}.")
        if len(dimension_numbers[i]) != len(set(dimension_numbers[i])):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate characters, "
                            f"got {dimension_numbers[i]}.")
    if not set(lhs_spec) - {"N", "C"} == set(rhs_spec) - {"O", "I"} == set(out_spec) - {"N", "C"}:
        raise TypeError("convolution dimension_numbers elements must each have the same set of spatial "
                        f"characters, got {tuple(dimension_numbers)}.")

    def perm(spec, pair):
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs_spec:
            spatial = sorted(spatial, key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)

    return tuple(perm(s, p) for s, p in zip(dimension_numbers, charpairs))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """jax.lax.conv_dimension_numbers: None, a string triple or a ConvDimensionNumbers -> ConvDimensionNumbers."""
    if isinstance(dimension_numbers, ConvDimensionNumbers) or (
            type(dimension_numbers).__name__ == "ConvDimensionNumbers" and hasattr(dimension_numbers, "lhs_spec")):
        return ConvDimensionNumbers(*(tuple(map(int, s)) for s in dimension_numbers))
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"convolution requires lhs and rhs ndim to be equal, got {len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (list, tuple)) or len(dimension_numbers) != 3:
        raise TypeError(f"convolution dimension_numbers list/tuple must be length 3, got {dimension_numbers!r}.")
    if not all(isinstance(e, str) for e in dimension_numbers):
        raise TypeError("convolution dimension_numbers elements must be strings, got "
                        f"{tuple(type(e).__name__ for e in dimension_numbers)}.")
    for i, e in enumerate(dimension_numbers):
        if len(e) != len(lhs_shape):
            raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to the ndim of lhs and rhs, "
                            f"got {len(e)} for lhs and rhs shapes {tuple(lhs_shape)} and {tuple(rhs_shape)}.")
    return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


def _ops_dimensions(dn: ConvDimensionNumbers) -> ConvDimensions:
    lhs, rhs, out = dn
    return ConvDimensions(lhs[0], lhs[1], tuple(lhs[2:]), rhs[1], rhs[0], tuple(rhs[2:]), out[0], out[1], tuple(out[2:]))


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """'SAME', 'SAME_LOWER' or 'VALID' -> one (low, high) pair per spatial dimension, as jax.lax."""
    kind = padding.upper()
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise RuntimeError(f"Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got {padding}.")
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides):
        size = max((-(-n // s) - 1) * s + w - n, 0)
        pads.append((size // 2, size - size // 2) if kind == "SAME" else (size - size // 2, size // 2))
    return pads


def _dilate_dim(n, d):
    return 0 if n == 0 else 1 + d * (n - 1)


def _ints(name, values, n):
    return int_tuple("conv_general_dilated", name, values, n, per="spatial dimension")


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                         dimension_numbers=None, feature_group_count=1, batch_group_count=1, precision=None,
                         preferred_element_type=None, out_sharding=None):
    """jax.lax.conv_general_dilated; emits one ``stablehlo.convolution``.

    Args:
      lhs, rhs: input and kernel, rank n + 2.
      window_strides: n strides.
      padding: 'SAME', 'SAME_LOWER', 'VALID' or n (low, high) pairs.
      lhs_dilation, rhs_dilation: n dilation factors each (None: 1).
      dimension_numbers: None (NCHW/OIHW/NCHW), a string triple like ('NHWC', 'HWIO', 'NHWC') or
        a ConvDimensionNumbers.
      feature_group_count, batch_group_count: see ops.convolution.
      precision: None, a precision name or an (lhs, rhs) pair (jax.lax.Precision values work).
      preferred_element_type: the result dtype (accumulate in it, from the operands as they are);
        None: the operands' dtype.
      out_sharding: None.
    Returns:
      The convolution.
    Example:
      >>> y = hf.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    """
    if out_sharding is not None:
        raise ValueError(f"hloforge.lax.conv_general_dilated: out_sharding={out_sharding!r} is not supported here; "
                         "pass None")
    lhs = lax_operand(lhs, "hloforge.lax.conv_general_dilated lhs")
    rhs = lax_operand(rhs, "hloforge.lax.conv_general_dilated rhs")
    dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    n = lhs.ndim - 2
    window_strides = _ints("window_strides", window_strides, n)
    rhs_dilation = (1,) * n if rhs_dilation is None else _ints("rhs_dilation", rhs_dilation, n)
    if lhs_dilation is None:
        lhs_dilation = (1,) * n
    else:
        lhs_dilation = _ints("lhs_dilation", lhs_dilation, n)
        if isinstance(padding, str) and any(d != 1 for d in lhs_dilation):
            raise ValueError("String padding is not implemented for transposed convolution using this op. Please "
                             "either exactly specify the required padding or use conv_transpose.")
    if isinstance(padding, str):
        kernel = [rhs.shape[d] for d in dn.rhs_spec[2:]]
        padding = padtype_to_pads([lhs.shape[d] for d in dn.lhs_spec[2:]],
                                  [_dilate_dim(k, r) for k, r in zip(kernel, rhs_dilation)], window_strides, padding)
    else:
        try:
            padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
        except (ValueError, TypeError):
            raise ValueError("padding argument to conv_general_dilated should be a string or a sequence of "
                             f"(low, high) pairs, got {padding}") from None
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"conv_general_dilated requires arguments to have the same dtypes, got {lhs.dtype}, "
                        f"{rhs.dtype}.")
    preferred = _preferred(lhs.dtype, preferred_element_type)
    return ops.convolution(lhs, rhs, _ops_dimensions(dn), window_strides=window_strides, padding=padding,
                           lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
                           feature_group_count=feature_group_count, batch_group_count=batch_group_count,
                           precision=_precision_names(precision), preferred_element_type=preferred)


def _preferred(dtype, preferred_element_type):
    """``preferred_element_type`` checked as jax checks a convolution's: integers into integers of
    their signedness or into floats, floats into floats, complex into complex, never narrower."""
    if preferred_element_type is None:
        return None
    target = dtypes.canonical(preferred_element_type)
    if not (dtypes.is_integer(dtype) and dtypes.is_float(target)):
        kinds = (dtypes.is_integer, dtypes.is_float, dtypes.is_complex)
        if any(kind(dtype) and not kind(target) for kind in kinds):
            raise TypeError(f"hloforge.lax.conv_general_dilated: preferred_element_type {target} is incompatible with "
                            f"{dtype} operands; the compatible pairs are (integral, integral), (integral, floating), "
                            "(floating, floating), (complex, complex)")
        if dtypes.is_signed_int(dtype) and not dtypes.is_signed_int(target):
            raise TypeError(f"hloforge.lax.conv_general_dilated: preferred_element_type {target} must have the "
                            f"signedness of the {dtype} operands")
    if target.itemsize < np.dtype(dtype).itemsize:
        raise TypeError(f"hloforge.lax.conv_general_dilated: preferred_element_type {target} must not be narrower "
                        f"than the {dtype} operands")
    return None if target == dtype else target


def _precision_names(precision):
    """jax.lax.Precision values, strings ('highest', 'float32', ...) or pairs -> StableHLO names."""
    names = {"DEFAULT": "DEFAULT", "HIGH": "HIGH", "HIGHEST": "HIGHEST", "BFLOAT16": "DEFAULT",
             "TENSORFLOAT32": "HIGH", "FLOAT32": "HIGHEST", "FASTEST": "DEFAULT"}

    def one(p):
        if p is None:
            return None
        key = getattr(p, "name", p)
        if isinstance(key, str) and key.upper() in names:
            return names[key.upper()]
        raise ValueError(f"precision {p!r} is not a jax.lax.Precision, one of {', '.join(names)}, or None")

    if isinstance(precision, (tuple, list)):
        if len(precision) != 2:
            raise ValueError(f"precision {precision!r} must be one precision or an (lhs, rhs) pair")
        pair = tuple(one(p) for p in precision)
        return pair[0] if pair[0] == pair[1] else pair
    return one(precision)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """jax.lax.conv: NCHW input, OIHW kernel, no dilation. Emits ``stablehlo.convolution``."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, precision=None,
                              preferred_element_type=None):
    """jax.lax.conv_with_general_padding: conv_general_dilated with the default dimension numbers."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision, preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k, s, padding):
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(np.ceil(pad_len / 2))
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        pad_a, pad_len = pads[0], sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return pad_a, pad_len - pad_a


_TRANSPOSE_DEFAULTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"), 4: ("NHWC", "HWIO", "NHWC"),
                       5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """jax.lax.conv_transpose: a fractionally strided convolution (lhs dilated by ``strides``);
    emits ``stablehlo.convolution`` (and a reverse/transpose of the kernel with ``transpose_kernel``).

    Defaults to TensorFlow's layouts (NHWC, HWIO, NHWC for 2-d), as jax does.
    """
    lhs, rhs = lax_operand(lhs, "hloforge.lax.conv_transpose lhs"), lax_operand(rhs, "hloforge.lax.conv_transpose rhs")
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise ValueError(f"conv_transpose: lhs {lhs.shape} and rhs {rhs.shape} must have one rank >= 2")
    n = lhs.ndim - 2
    if dimension_numbers is None:
        if lhs.ndim not in _TRANSPOSE_DEFAULTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_DEFAULTS[lhs.ndim]
    dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    kernel = [rhs.shape[d] for d in dn.rhs_spec[2:]]
    rhs_dilation = (1,) * n if rhs_dilation is None else tuple(rhs_dilation)
    strides = tuple(strides)
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        replicated = [padding] * n if isinstance(padding, str) else [tuple(p) for p in padding]
        pads = tuple(_conv_transpose_padding(_dilate_dim(k, r), s, p)
                     for k, r, s, p in zip(kernel, rhs_dilation, strides, replicated))
    else:
        pads = padding
    if transpose_kernel:
        rhs = ops.reverse(rhs, dn.rhs_spec[2:])
        perm = list(range(rhs.ndim))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
        rhs = ops.transpose(rhs, perm)
    return conv_general_dilated(lhs, rhs, (1,) * n, pads, strides, rhs_dilation, dn, precision=precision,
                                preferred_element_type=preferred_element_type)


# ---------------------------------------------------------------- patches and unshared convolutions

def _moveaxis(x, sources, destinations):
    """numpy.moveaxis for a Tensor: one ``stablehlo.transpose``."""
    sources = [s % x.ndim for s in sources]
    destinations = [d % x.ndim for d in destinations]
    order = [d for d in range(x.ndim) if d not in sources]
    for dest, src in sorted(zip(destinations, sources)):
        order.insert(dest, src)
    return x if order == list(range(x.ndim)) else ops.transpose(x, order)


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                                 dimension_numbers=None, precision=None, preferred_element_type=None):
    """jax.lax.conv_general_dilated_patches: the receptive-field patches of ``lhs``, stacked along
    the feature dimension (input channel major, then the window positions); emits one grouped
    ``stablehlo.convolution`` with a one-hot kernel, as jax does.

    Args:
      lhs: the input, rank n + 2.
      filter_shape: the n window sizes.
      window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers: as in
        conv_general_dilated.
      precision: None or one precision (for lhs).
      preferred_element_type: compute and return in this dtype.
    Returns:
      An array with ``C * prod(filter_shape)`` features.
    Example:
      >>> p = hf.lax.conv_general_dilated_patches(x, (3, 3), (1, 1), "SAME")
    """
    x = lax_operand(lhs, "hloforge.lax.conv_general_dilated_patches lhs")
    filter_shape = tuple(operator.index(n) for n in filter_shape)
    dn = conv_dimension_numbers(x.shape, (1, 1) + filter_shape, dimension_numbers)
    lhs_spec, rhs_spec, _ = dn
    spatial = math.prod(filter_shape)
    channels = x.shape[lhs_spec[1]]
    eye = np.broadcast_to(np.eye(spatial, dtype=x.dtype), (channels, spatial, spatial))
    kernel = ops.constant(np.ascontiguousarray(eye).reshape((channels * spatial, 1) + filter_shape))
    kernel = _moveaxis(kernel, (0, 1), (rhs_spec[0], rhs_spec[1]))
    return conv_general_dilated(x, kernel, window_strides, padding, lhs_dilation, rhs_dilation, dn,
                                feature_group_count=channels,
                                precision=None if precision is None else (precision, "DEFAULT"),
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape, lhs_dilation=None,
                               rhs_dilation=None, dimension_numbers=None, precision=None):
    """jax.lax.conv_general_dilated_local: an unshared convolution (a separate kernel per output
    position), as jax computes it: ``conv_general_dilated_patches``, then a ``stablehlo.dot_general``
    batched over the output positions.

    Args:
      lhs: the input, rank n + 2.
      rhs: the kernels: spatial dimensions are the output positions, the in-feature dimension
        fuses the input channels and the window positions (channel major).
      window_strides, padding: as in conv_general_dilated.
      filter_shape: the n window sizes.
      lhs_dilation, rhs_dilation, dimension_numbers: as in conv_general_dilated.
      precision: None, one precision, or an (lhs, rhs) pair.
    Returns:
      The output.
    Example:
      >>> y = hf.lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (3, 3))
    """
    x = lax_operand(lhs, "hloforge.lax.conv_general_dilated_local lhs")
    w = lax_operand(rhs, "hloforge.lax.conv_general_dilated_local rhs")
    pair = _precision_names(precision)
    lhs_precision = pair[0] if isinstance(pair, tuple) else pair
    patches = conv_general_dilated_patches(x, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation,
                                           dimension_numbers, precision=lhs_precision)
    lhs_spec, rhs_spec, out_spec = conv_dimension_numbers(x.shape, (1, 1) + tuple(filter_shape), dimension_numbers)
    out_spatial, rhs_spatial = list(out_spec[2:]), list(rhs_spec[2:])
    rhs_batch = [rhs_spatial[i] for i in sorted(range(len(rhs_spatial)), key=lambda k: out_spatial[k])]
    if w.dtype != patches.dtype:
        raise TypeError(f"hloforge.lax.conv_general_dilated_local requires arguments to have the same dtypes, got "
                        f"{x.dtype}, {w.dtype}.")
    out = ops.dot_general(patches, w, tuple(sorted(out_spatial)), tuple(rhs_batch), (out_spec[1],), (rhs_spec[1],),
                          precision=pair)
    return _moveaxis(out, (-2, -1), (out_spec[0], out_spec[1]))


# ---------------------------------------------------------------- static shapes

def _stride_dim(n, window, stride):
    return max(n - window + stride, 0) // stride


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """jax.lax.conv_shape_tuple: the output shape of a convolution in the canonical (NC..., OI...)
    layout (no IR).

    Args:
      lhs_shape, rhs_shape: shapes in the canonical layout.
      strides: n window strides.
      pads: 'SAME'/'VALID'/'SAME_LOWER' or n (low, high) pairs.
      batch_group_count: the batch group count.
    Returns:
      A tuple of ints.
    Example:
      >>> hf.lax.conv_shape_tuple((1, 2, 5, 5), (3, 2, 3, 3), (1, 1), "SAME")   # (1, 3, 5, 5)
    """
    lhs_shape, rhs_shape = [operator.index(n) for n in lhs_shape], [operator.index(n) for n in rhs_shape]
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"hloforge.lax.conv_shape_tuple: wrong number of explicit pads for convolution: expected "
                        f"{len(lhs_shape) - 2}, got {len(pads)}.")
    padded = [n + lo + hi for n, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(n < 0 for n in padded):
        raise ValueError(f"hloforge.lax.conv_shape_tuple: negative padding is larger than the size of the "
                         f"corresponding dimension: got padding={list(pads)} for lhs_shape[2:]={lhs_shape[2:]}")
    space = tuple(_stride_dim(n, k, s) for n, k, s in zip(padded, rhs_shape[2:], strides))
    batch = lhs_shape[0] // batch_group_count if batch_group_count > 1 else lhs_shape[0]
    return (batch, rhs_shape[0]) + space


def _permuted(shape, perm):
    return [shape[p] for p in perm]


def _unpermuted(shape, perm):
    out = [0] * len(perm)
    for value, p in zip(shape, perm):
        out[p] = value
    return tuple(out)


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """jax.lax.conv_general_shape_tuple: the output shape of conv_general_dilated for
    ("NHWC", "HWIO", "NHWC")-style string dimension numbers (no IR).

    Args:
      lhs_shape, rhs_shape: the shapes.
      window_strides, padding: as in conv_general_dilated.
      dimension_numbers: a string triple.
    Returns:
      A tuple of ints.
    Example:
      >>> hf.lax.conv_general_shape_tuple((1, 5, 5, 2), (3, 3, 2, 4), (1, 1), "SAME", ("NHWC", "HWIO", "NHWC"))
    """
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple(_permuted(lhs_shape, lhs_perm), _permuted(rhs_shape, rhs_perm), window_strides, padding)
    return _unpermuted(out, out_perm)


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """jax.lax.conv_transpose_shape_tuple: the output shape of conv_transpose (no IR).

    Args:
      lhs_shape, rhs_shape: the shapes.
      window_strides: the transposed convolution's strides.
      padding: 'SAME', 'VALID' or n (low, high) pairs.
      dimension_numbers: a string triple.
    Returns:
      A tuple of ints.
    Example:
      >>> hf.lax.conv_transpose_shape_tuple((1, 5, 5, 2), (3, 3, 2, 4), (2, 2), "SAME", ("NHWC", "HWIO", "NHWC"))
    """
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_t, rhs_t = _permuted(lhs_shape, lhs_perm), _permuted(rhs_shape, rhs_perm)
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding) for k, s in zip(rhs_t[2:], window_strides)]
    totals = [sum(p) for p in padding]
    space = [(i - 1) * s - k + 2 + p for i, k, s, p in zip(lhs_t[2:], rhs_t[2:], window_strides, totals)]
    return _unpermuted([lhs_t[0], rhs_t[0], *space], out_perm)


__all__ = ["ConvDimensionNumbers", "ConvGeneralDilatedDimensionNumbers", "conv_dimension_numbers",
           "conv_general_permutations", "padtype_to_pads", "conv_general_dilated", "conv", "conv_with_general_padding",
           "conv_transpose", "conv_general_dilated_patches", "conv_general_dilated_local", "conv_shape_tuple",
           "conv_general_shape_tuple", "conv_transpose_shape_tuple"]
