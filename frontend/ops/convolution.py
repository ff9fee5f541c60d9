"""Convolution: stablehlo.convolution with full dimension numbers, window attributes and groups."""
from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np

from hloforge.frontend import attributes as attr
from hloforge.frontend.ops import _evaluate as ev
from hloforge.frontend.ops._common import check_dtype, int_tuple, operand
from hloforge.frontend.ops.linalg import PRECISIONS, decode_preferred, evaluated_dtype, preferred_dtype, result_dtype
from hloforge.frontend.registry import bind, register
from hloforge.frontend.tracing import Tensor


class ConvDimensions(NamedTuple):
    """StableHLO's ConvDimensionNumbers: which dimension of lhs, rhs and result is batch, feature
    and spatial (``n`` spatial dimensions, in the same order in all three)."""
    input_batch_dimension: int
    input_feature_dimension: int
    input_spatial_dimensions: tuple
    kernel_input_feature_dimension: int
    kernel_output_feature_dimension: int
    kernel_spatial_dimensions: tuple
    output_batch_dimension: int
    output_feature_dimension: int
    output_spatial_dimensions: tuple

    @classmethod
    def default(cls, rank: int) -> "ConvDimensions":
        """Batch, feature, spatial... for lhs and result; out-feature, in-feature, spatial... for
        the kernel (jax.lax's default, "NCHW", "OIHW", "NCHW")."""
        spatial = tuple(range(2, rank))
        return cls(0, 1, spatial, 1, 0, spatial, 0, 1, spatial)


_WINDOW = ("window_strides", "padding", "lhs_dilation", "rhs_dilation", "window_reversal")


def _dimensions(value) -> ConvDimensions:
    if not isinstance(value, (tuple, list)) or len(value) != 9:
        raise TypeError(f"convolution: dimension_numbers must be an ops.ConvDimensions (nine fields), "
                        f"got {value!r}")
    ints = [int_tuple("convolution", "dimension_numbers", (v,))[0] if i % 3 != 2 else
            int_tuple("convolution", "dimension_numbers", v) for i, v in enumerate(value)]
    return ConvDimensions(*ints)


def _precision(precision):
    pair = (precision, precision) if precision is None or isinstance(precision, str) else tuple(precision)
    if len(pair) != 2 or any(p is not None and p not in PRECISIONS for p in pair) or (None in pair and pair[0] != pair[1]):
        raise ValueError(f"convolution: precision {precision!r} is not one of {', '.join(PRECISIONS)}, "
                         "an (lhs, rhs) pair of them, or None")
    return pair[0] if pair[0] == pair[1] else pair


def _conv_params(dimension_numbers, window_strides=None, padding=None, lhs_dilation=None,
                 rhs_dilation=None, window_reversal=None, feature_group_count=1, batch_group_count=1,
                 precision=None, preferred_element_type=None):
    out = {"dimension_numbers": _dimensions(dimension_numbers)}
    for name, value in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                        ("rhs_dilation", rhs_dilation)):
        out[name] = None if value is None else int_tuple("convolution", name, value)
    if padding is None:
        out["padding"] = None
    else:
        try:
            out["padding"] = tuple((int_tuple("convolution", "padding", p, 2)) for p in padding)
        except (TypeError, ValueError):
            raise ValueError(f"convolution: padding must be a sequence of (low, high) int pairs, got {padding!r}") from None
    out["window_reversal"] = None if window_reversal is None else tuple(bool(v) for v in window_reversal)
    for name, value in (("feature_group_count", feature_group_count), ("batch_group_count", batch_group_count)):
        out[name] = int_tuple("convolution", name, (value,))[0]
    out["precision"] = _precision(precision)
    out["preferred_element_type"] = preferred_dtype("convolution", preferred_element_type)
    return out


def _dilated(n, d):
    return 0 if n == 0 else (n - 1) * d + 1


def _check_dims(name, dims, rank, what):
    flat = list(dims)
    if sorted(flat) != list(range(rank)):
        raise ValueError(f"convolution: {what} dimension numbers {flat} must be a permutation of "
                         f"range({rank}) (rank of {name})")


def _conv_rule(lhs, rhs, dimension_numbers, window_strides, padding, lhs_dilation, rhs_dilation,
               window_reversal, feature_group_count, batch_group_count, precision, preferred_element_type):
    d = dimension_numbers
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"convolution: lhs dtype {lhs.dtype} and rhs dtype {rhs.dtype} differ; convert one first")
    check_dtype("convolution", lhs, ("signed integer", "unsigned integer", "float", "complex"))
    out_dtype = result_dtype("convolution", lhs.dtype, preferred_element_type)
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise ValueError(f"convolution: lhs {lhs.shape} and rhs {rhs.shape} must have one rank >= 2")
    n = lhs.ndim - 2
    if not len(d[2]) == len(d[5]) == len(d[8]) == n:
        raise ValueError(f"convolution: dimension_numbers {tuple(d)} must name {n} spatial dimensions "
                         f"for operands of rank {lhs.ndim}")
    _check_dims("lhs", (d[0], d[1], *d[2]), lhs.ndim, "input")
    _check_dims("rhs", (d[3], d[4], *d[5]), rhs.ndim, "kernel")
    _check_dims("the result", (d[6], d[7], *d[8]), lhs.ndim, "output")
    strides = window_strides or (1,) * n
    pads = padding or ((0, 0),) * n
    ldil, rdil = lhs_dilation or (1,) * n, rhs_dilation or (1,) * n
    for name, v in (("window_strides", strides), ("padding", pads), ("lhs_dilation", ldil),
                    ("rhs_dilation", rdil), ("window_reversal", window_reversal or (False,) * n)):
        if len(v) != n:
            raise ValueError(f"convolution: {name} {list(v)} must have {n} entries, one per spatial dimension")
    for name, v in (("window_strides", strides), ("lhs_dilation", ldil), ("rhs_dilation", rdil)):
        if any(s < 1 for s in v):
            raise ValueError(f"convolution: {name} {list(v)} must be >= 1")
    fgc, bgc = feature_group_count, batch_group_count
    if fgc < 1 or bgc < 1:
        raise ValueError(f"convolution: feature_group_count {fgc} and batch_group_count {bgc} must be >= 1")
    if fgc > 1 and bgc > 1:
        raise ValueError(f"convolution: feature_group_count {fgc} and batch_group_count {bgc} cannot both be > 1")
    batch, features = lhs.shape[d[0]], lhs.shape[d[1]]
    k_in, k_out = rhs.shape[d[3]], rhs.shape[d[4]]
    if features % fgc:
        raise ValueError(f"convolution: input features {features} are not divisible by feature_group_count {fgc}")
    if k_in * fgc != features:
        raise ValueError(f"convolution: kernel input features {k_in} times feature_group_count {fgc} must equal "
                         f"the input features {features} (lhs {lhs.shape}, rhs {rhs.shape})")
    if k_out % fgc:
        raise ValueError(f"convolution: kernel output features {k_out} are not divisible by feature_group_count {fgc}")
    if batch % bgc:
        raise ValueError(f"convolution: input batch {batch} is not divisible by batch_group_count {bgc}")
    if k_out % bgc:
        raise ValueError(f"convolution: kernel output features {k_out} are not divisible by batch_group_count {bgc}")
    out = [0] * lhs.ndim
    out[d[6]], out[d[7]] = batch // bgc, k_out
    for i in range(n):
        size = _dilated(lhs.shape[d[2][i]], ldil[i]) + pads[i][0] + pads[i][1]
        window = _dilated(rhs.shape[d[5][i]], rdil[i])
        if size < 0:
            raise ValueError(f"convolution: spatial dimension {i} is negative ({size}) after padding {list(pads[i])}")
        out[d[8][i]] = 0 if size == 0 or window == 0 or window > size else (size - window) // strides[i] + 1
    return tuple(out), out_dtype


def _conv_attributes(dimension_numbers, window_strides, padding, lhs_dilation, rhs_dilation, window_reversal,
                     feature_group_count, batch_group_count, precision, preferred_element_type):
    out = {"dimension_numbers": attr.conv_dimensions(dimension_numbers),
           "feature_group_count": attr.i64(feature_group_count), "batch_group_count": attr.i64(batch_group_count)}
    for name, value in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                        ("rhs_dilation", rhs_dilation)):
        if value is not None:
            out[name] = attr.i64s(value)
    if padding is not None:
        out["padding"] = attr.i64_matrix(padding)
    if window_reversal is not None:
        out["window_reversal"] = attr.bools(window_reversal)
    if precision is not None:
        out["precision_config"] = attr.precision_config((precision, precision) if isinstance(precision, str) else precision)
    return out


def _conv_decode(op):
    def ints(name):
        return attr.read_ints(op, name) if attr.has(op, name) else None
    return {"dimension_numbers": ConvDimensions(*attr.read_conv_dimensions(op)),
            "window_strides": ints("window_strides"), "padding": attr.read_i64_matrix(op, "padding"),
            "lhs_dilation": ints("lhs_dilation"), "rhs_dilation": ints("rhs_dilation"),
            "window_reversal": attr.read_bools(op, "window_reversal"),
            "feature_group_count": attr.read_int(op, "feature_group_count"),
            "batch_group_count": attr.read_int(op, "batch_group_count"), "precision": attr.read_precision(op),
            **decode_preferred(op)}


def _dilate(x, axes, factors):
    for axis, f in zip(axes, factors):
        if f > 1 and x.shape[axis] > 0:
            shape = list(x.shape)
            shape[axis] = (shape[axis] - 1) * f + 1
            out = np.zeros(shape, x.dtype)
            index = [slice(None)] * x.ndim
            index[axis] = slice(None, None, f)
            out[tuple(index)] = x
            x = out
    return x


def _pad(x, axes, pads):
    for axis, (lo, hi) in zip(axes, pads):
        width = [(0, 0)] * x.ndim
        width[axis] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, width)
        index = [slice(None)] * x.ndim
        index[axis] = slice(max(-lo, 0), x.shape[axis] - max(-hi, 0))
        x = x[tuple(index)]
    return x


def conv_evaluate(lhs, rhs, dimension_numbers, window_strides=None, padding=None, lhs_dilation=None,
                  rhs_dilation=None, window_reversal=None, feature_group_count=1, batch_group_count=1,
                  precision=None, preferred_element_type=None):
    """The convolution on numpy arrays (window by window), for integers (wrapping sums, exact in
    any order; a ``preferred_element_type`` integer accumulator not narrower); None for floats and
    complex (the order and precision of their sums are the backend's)."""
    out_dtype = evaluated_dtype(lhs, preferred_element_type)
    if ev.kind(lhs) not in "iu" or out_dtype is None:
        return None
    d = dimension_numbers
    n = lhs.ndim - 2
    strides = window_strides or (1,) * n
    x = np.transpose(lhs, (d[0], d[1], *d[2]))                 # (B, F, *S)
    k = np.transpose(rhs, (d[4], d[3], *d[5]))                 # (O, I, *K)
    if window_reversal:
        k = np.flip(k, [2 + i for i, r in enumerate(window_reversal) if r]) if any(window_reversal) else k
    spatial = list(range(2, 2 + n))
    x = _pad(_dilate(x, spatial, lhs_dilation or (1,) * n), spatial, padding or ((0, 0),) * n)
    k = _dilate(k, spatial, rhs_dilation or (1,) * n)
    out_spatial = [0 if x.shape[a] == 0 or k.shape[a] == 0 or k.shape[a] > x.shape[a]
                   else (x.shape[a] - k.shape[a]) // s + 1 for a, s in zip(spatial, strides)]
    fgc, bgc = feature_group_count, batch_group_count
    b, o = x.shape[0] // bgc, k.shape[0]
    acc_dtype = np.dtype(np.int64) if out_dtype.itemsize < 8 else out_dtype  # (exact for narrow ints)
    out = np.zeros((b, o, *out_spatial), acc_dtype)
    if all(out.shape):
        og = o // (fgc * bgc)
        for g in range(fgc * bgc):
            xs = x[:, g * k.shape[1]:(g + 1) * k.shape[1]] if fgc > 1 else x
            xs = xs[g * b:(g + 1) * b] if bgc > 1 else xs
            ks = k[g * og:(g + 1) * og]
            for pos in itertools.product(*(range(s) for s in k.shape[2:])):
                window = tuple(slice(p, p + (m - 1) * s + 1, s) for p, m, s in zip(pos, out_spatial, strides))
                patch = xs[(slice(None), slice(None)) + window]
                w = ks[(slice(None), slice(None)) + pos]
                out[:, g * og:(g + 1) * og] += np.einsum("bi...,oi->bo...", patch.astype(acc_dtype), w.astype(acc_dtype))
    info = np.iinfo(out_dtype)
    if out_dtype.itemsize < 8 and ((out < info.min) | (out > info.max)).any():
        return None  # (XLA's constant folder saturates a narrow sum that overflows, its kernels wrap it)
    with np.errstate(all="ignore"):
        out = out.astype(out_dtype)
    return np.transpose(out, np.argsort((d[6], d[7], *d[8])))


@register("stablehlo.convolution", rule=_conv_rule, params=_conv_params, attributes=_conv_attributes,
          decode=_conv_decode, evaluate=conv_evaluate, traits={"bilinear"})
def convolution(lhs, rhs, dimension_numbers=None, *, window_strides=None, padding=None, lhs_dilation=None,
                rhs_dilation=None, window_reversal=None, feature_group_count=1, batch_group_count=1,
                precision=None, preferred_element_type=None, loc=None) -> Tensor:
    """N-d convolution (cross-correlation) of ``lhs`` with the kernel ``rhs``; emits
    ``stablehlo.convolution``.

    Args:
      lhs: input Tensor of rank n + 2 (batch, feature and n spatial dimensions).
      rhs: kernel Tensor of lhs's rank and dtype (output feature, input feature, n spatial).
      dimension_numbers: an ``ops.ConvDimensions``; None: ``ConvDimensions.default(rank)``
        (NCHW input, OIHW kernel, NCHW result).
      window_strides, lhs_dilation, rhs_dilation: n ints >= 1 each (None: all 1, attribute left out).
      padding: n (low, high) pairs, negative entries crop (None: no padding).
      window_reversal: n bools, flip the kernel along those spatial dimensions.
      feature_group_count: grouped (depthwise) convolution: input features split into groups.
      batch_group_count: the batch split into groups, each convolved with a slice of the output
        features (the form weight gradients of grouped convolutions take); not both > 1.
      precision: None, "DEFAULT", "HIGH", "HIGHEST", or an (lhs, rhs) pair.
      preferred_element_type: the result dtype, as in ``ops.dot_general`` (None: lhs's).
    Returns:
      The result Tensor, laid out as ``dimension_numbers`` says.
    Example:
      >>> y = ops.convolution(x, w, window_strides=(2, 2), padding=((1, 1), (1, 1)))
    """
    lhs, rhs = operand("convolution", lhs, "lhs"), operand("convolution", rhs, "rhs")
    if dimension_numbers is None:
        dimension_numbers = ConvDimensions.default(lhs.ndim)
    return bind("stablehlo.convolution", [lhs, rhs], dimension_numbers=dimension_numbers,
                window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
                rhs_dilation=rhs_dilation, window_reversal=window_reversal,
                feature_group_count=feature_group_count, batch_group_count=batch_group_count,
                precision=precision, preferred_element_type=preferred_element_type, loc=loc)


__all__ = ["ConvDimensions", "convolution"]
