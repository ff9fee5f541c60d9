"""jax.lax's convolutions: conv_general_dilated, conv, conv_with_general_padding, conv_transpose."""
from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy._base import asarray
from hloforge.frontend.ops._common import int_tuple
from hloforge.frontend.ops.convolution import ConvDimensions


class ConvDimensionNumbers(NamedTuple):
    """jax.lax.ConvDimensionNumbers: for lhs, rhs and out, the dimension indices of (batch or
    out-feature, feature or in-feature, spatial...)."""
    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


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
                         preferred_element_type=None):
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
      preferred_element_type: compute and return in this dtype (operands are converted first).
    Returns:
      The convolution.
    Example:
      >>> y = hf.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    """
    lhs, rhs = asarray(lhs), asarray(rhs)
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
    if preferred_element_type is not None:
        target = dtypes.canonical(preferred_element_type)
        lhs = lhs if lhs.dtype == target else ops.convert(lhs, target)
        rhs = rhs if rhs.dtype == target else ops.convert(rhs, target)
    elif lhs.dtype != rhs.dtype:
        raise TypeError(f"conv_general_dilated requires arguments to have the same dtypes, got {lhs.dtype}, "
                        f"{rhs.dtype}.")
    return ops.convolution(lhs, rhs, _ops_dimensions(dn), window_strides=window_strides, padding=padding,
                           lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
                           feature_group_count=feature_group_count, batch_group_count=batch_group_count,
                           precision=_precision_names(precision))


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
    lhs, rhs = asarray(lhs), asarray(rhs)
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


__all__ = ["ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_permutations", "padtype_to_pads",
           "conv_general_dilated", "conv", "conv_with_general_padding", "conv_transpose"]
