"""Derivative rules of stablehlo.convolution (frontend/ops/convolution.py): bilinear
(``defbilinear``: the jvp is two convolutions), both transposes are convolutions (JAX's rules,
jax/_src/lax/convolution.py)."""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.ad._util import defbilinear, zeros_like
from hloforge.frontend.ad.linalg import in_dtype_of


def _dilate_shape(shape, dilation):
    return [0 if s == 0 else 1 + d * (s - 1) for s, d in zip(shape, dilation)]


def vjp_lhs_padding(in_shape, window, strides, out_shape, padding, lhs_dilation, rhs_dilation):
    """jax's _conv_general_vjp_lhs_padding (reduce_window's add transpose uses it too)."""
    lhs_d, rhs_d = _dilate_shape(in_shape, lhs_dilation), _dilate_shape(window, rhs_dilation)
    out_d = _dilate_shape(out_shape, strides)
    before = [r - lo - 1 for r, (lo, _) in zip(rhs_d, padding)]
    after = [l + r - 1 - o - b for l, r, o, b in zip(lhs_d, rhs_d, out_d, before)]
    return tuple(zip(before, after))


def _vjp_rhs_padding(in_shape, window, strides, out_shape, padding, lhs_dilation, rhs_dilation):
    lhs_d, rhs_d = _dilate_shape(in_shape, lhs_dilation), _dilate_shape(window, rhs_dilation)
    out_d = _dilate_shape(out_shape, strides)
    lows = [lo for lo, _ in padding]
    highs = [o - l + r - lo - 1 for o, l, r, lo in zip(out_d, lhs_d, rhs_d, lows)]
    return tuple(zip(lows, highs))


def _split_axis(x, axis, size1):
    """Dimension ``axis`` of x split into (size1, n // size1)."""
    shape = list(x.shape)
    shape[axis:axis + 1] = [size1, shape[axis] // size1]
    return ops.reshape(x, tuple(shape))


def _merge_axis(x, src, dst):
    """Axis ``src`` moved in front of axis ``dst`` (numbered without src) and merged into it."""
    perm = [i for i in range(x.ndim) if i != src]
    perm.insert(dst, src)
    if perm != list(range(x.ndim)):
        x = ops.transpose(x, tuple(perm))
    shape = list(x.shape)
    shape[dst:dst + 2] = [shape[dst] * shape[dst + 1]]
    return ops.reshape(x, tuple(shape))


def _conv_options(d, window_strides, padding, lhs_dilation, rhs_dilation, window_reversal):
    """(reversed kernel dims, strides, padding, lhs dilation, rhs dilation), defaults filled in."""
    n = len(d.input_spatial_dimensions)
    flipped = [k for k, r in zip(d.kernel_spatial_dimensions, window_reversal or ()) if r]
    return (flipped, tuple(window_strides or (1,) * n), tuple(padding or ((0, 0),) * n),
            tuple(lhs_dilation or (1,) * n), tuple(rhs_dilation or (1,) * n))


def _spatial_sizes(lhs, rhs, g, d):
    return ([lhs.shape[i] for i in d.input_spatial_dimensions], [rhs.shape[i] for i in d.kernel_spatial_dimensions],
            [g.shape[i] for i in d.output_spatial_dimensions])


def _conv_lhs_t(g, lhs, rhs, dimension_numbers, window_strides, padding, lhs_dilation, rhs_dilation,
                window_reversal, feature_group_count, batch_group_count, precision, preferred_element_type):
    """jax's _conv_general_dilated_transpose_lhs: a convolution of the cotangent with the spatially
    reversed kernel, feature groups moved into the kernel's output features."""
    d = dimension_numbers
    flipped, strides, pads, ldil, rdil = _conv_options(d, window_strides, padding, lhs_dilation, rhs_dilation,
                                                       window_reversal)
    if flipped:  # a reversed window is a convolution with the reversed kernel
        rhs = ops.reverse(rhs, tuple(flipped))
    ib, if_, isp = d.input_batch_dimension, d.input_feature_dimension, d.input_spatial_dimensions
    kif, kof, ksp = d.kernel_input_feature_dimension, d.kernel_output_feature_dimension, d.kernel_spatial_dimensions
    ob, of, osp = d.output_batch_dimension, d.output_feature_dimension, d.output_spatial_dimensions
    lhs_s, rhs_s, g_s = _spatial_sizes(lhs, rhs, g, d)
    fgc, bgc = feature_group_count, batch_group_count
    kernel = rhs
    groups = fgc
    if fgc > 1 or bgc > 1:
        kernel = _merge_axis(_split_axis(kernel, kof, max(fgc, bgc)), kof, kif)
        groups = max(fgc, bgc)
    dn = ops.ConvDimensions(ob, of, osp, kof, kif, ksp, ib, if_, isp)
    t_pads = vjp_lhs_padding(lhs_s, rhs_s, strides, g_s, pads, ldil, rdil)
    kernel = ops.reverse(kernel, tuple(ksp)) if ksp else kernel
    r = ops.convolution(g, in_dtype_of(kernel, g), dn, window_strides=ldil, padding=t_pads, lhs_dilation=strides,
                        rhs_dilation=rdil, feature_group_count=groups, precision=precision)
    if bgc > 1:
        r = _merge_axis(_split_axis(r, if_, bgc), if_, ib)
    return in_dtype_of(r, lhs)


def _conv_rhs_t(g, lhs, rhs, dimension_numbers, window_strides, padding, lhs_dilation, rhs_dilation,
                window_reversal, feature_group_count, batch_group_count, precision, preferred_element_type):
    """jax's _conv_general_dilated_transpose_rhs: a convolution of the input with the cotangent,
    feature groups becoming batch groups (and back)."""
    if 0 in g.shape:
        return zeros_like(rhs)
    d = dimension_numbers
    flipped, strides, pads, ldil, rdil = _conv_options(d, window_strides, padding, lhs_dilation, rhs_dilation,
                                                       window_reversal)
    ib, if_, isp = d.input_batch_dimension, d.input_feature_dimension, d.input_spatial_dimensions
    kif, kof, ksp = d.kernel_input_feature_dimension, d.kernel_output_feature_dimension, d.kernel_spatial_dimensions
    ob, of, osp = d.output_batch_dimension, d.output_feature_dimension, d.output_spatial_dimensions
    lhs_s, rhs_s, g_s = _spatial_sizes(lhs, rhs, g, d)
    fgc, bgc = feature_group_count, batch_group_count
    t_fgc, t_bgc = (bgc, 1) if bgc > 1 else (1, fgc)
    dn = ops.ConvDimensions(if_, ib, isp, ob, of, osp, kif, kof, ksp)
    t_pads = _vjp_rhs_padding(lhs_s, rhs_s, strides, g_s, pads, ldil, rdil)
    r = ops.convolution(in_dtype_of(lhs, g), g, dn, window_strides=rdil, padding=t_pads, lhs_dilation=ldil,
                        rhs_dilation=strides, feature_group_count=t_fgc, batch_group_count=t_bgc,
                        precision=precision)
    return in_dtype_of(ops.reverse(r, tuple(flipped)) if flipped else r, rhs)


defbilinear("stablehlo.convolution", _conv_lhs_t, _conv_rhs_t)
