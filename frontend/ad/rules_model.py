"""Derivative rules of the model ops: convolution, reduce_window, select_and_scatter, batch norm,
cholesky and triangular_solve (JAX's rules, as in
jax/_src/lax/convolution.py, windowed_reductions.py, special.py and linalg.py)."""
from __future__ import annotations

import math

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.ad._util import (
    add_any, conj, instantiate, like, mH, mT, matmul, needs, set_rules, sum_to_scalar, zeros_like)


# ---------------------------------------------------------------- convolution

def _dilate_shape(shape, dilation):
    return [0 if s == 0 else 1 + d * (s - 1) for s, d in zip(shape, dilation)]


def _vjp_lhs_padding(in_shape, window, strides, out_shape, padding, lhs_dilation, rhs_dilation):
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


def _conv_setup(rhs, dimension_numbers, window_strides, padding, lhs_dilation, rhs_dilation, window_reversal):
    d = dimension_numbers
    n = len(d.input_spatial_dimensions)
    flipped = [k for k, r in zip(d.kernel_spatial_dimensions, window_reversal or ()) if r]
    if flipped:  # a reversed window is a convolution with the reversed kernel
        rhs = ops.reverse(rhs, tuple(flipped))
    return (rhs, flipped, tuple(window_strides or (1,) * n), tuple(padding or ((0, 0),) * n),
            tuple(lhs_dilation or (1,) * n), tuple(rhs_dilation or (1,) * n))


def _conv_jvp(ins, outs, ts, **params):
    lhs, rhs = ins
    out = None
    if ts[0] is not None:
        out = ops.convolution(ts[0], rhs, **params)
    if ts[1] is not None:
        out = add_any(out, ops.convolution(lhs, ts[1], **params))
    return [out]


def _conv_vjp(ins, outs, cts, dimension_numbers, window_strides, padding, lhs_dilation, rhs_dilation,
              window_reversal, feature_group_count, batch_group_count, precision):
    """jax's _conv_general_dilated_transpose_lhs / _rhs: both transposes are convolutions."""
    lhs, rhs0 = ins
    g = cts[0]
    d = dimension_numbers
    rhs, flipped, strides, pads, ldil, rdil = _conv_setup(rhs0, d, window_strides, padding, lhs_dilation,
                                                          rhs_dilation, window_reversal)
    ib, if_, isp = d.input_batch_dimension, d.input_feature_dimension, d.input_spatial_dimensions
    kif, kof, ksp = d.kernel_input_feature_dimension, d.kernel_output_feature_dimension, d.kernel_spatial_dimensions
    ob, of, osp = d.output_batch_dimension, d.output_feature_dimension, d.output_spatial_dimensions
    lhs_s = [lhs.shape[i] for i in isp]
    rhs_s = [rhs.shape[i] for i in ksp]
    g_s = [g.shape[i] for i in osp]
    fgc, bgc = feature_group_count, batch_group_count
    out = [None, None]
    if needs(0):
        kernel = rhs
        groups = fgc
        if fgc > 1 or bgc > 1:
            kernel = _merge_axis(_split_axis(kernel, kof, max(fgc, bgc)), kof, kif)
            groups = max(fgc, bgc)
        dn = ops.ConvDimensions(ob, of, osp, kof, kif, ksp, ib, if_, isp)
        t_pads = _vjp_lhs_padding(lhs_s, rhs_s, strides, g_s, pads, ldil, rdil)
        kernel = ops.reverse(kernel, tuple(ksp)) if ksp else kernel
        r = ops.convolution(g, kernel, dn, window_strides=ldil, padding=t_pads, lhs_dilation=strides,
                            rhs_dilation=rdil, feature_group_count=groups, precision=precision)
        if bgc > 1:
            r = _merge_axis(_split_axis(r, if_, bgc), if_, ib)
        out[0] = r
    if needs(1):
        if 0 in g.shape:
            out[1] = zeros_like(rhs0)
        else:
            t_fgc, t_bgc = (bgc, 1) if bgc > 1 else (1, fgc)
            dn = ops.ConvDimensions(if_, ib, isp, ob, of, osp, kif, kof, ksp)
            t_pads = _vjp_rhs_padding(lhs_s, rhs_s, strides, g_s, pads, ldil, rdil)
            r = ops.convolution(lhs, g, dn, window_strides=rdil, padding=t_pads, lhs_dilation=ldil,
                                rhs_dilation=strides, feature_group_count=t_fgc, batch_group_count=t_bgc,
                                precision=precision)
            out[1] = ops.reverse(r, tuple(flipped)) if flipped else r
    return out


set_rules("stablehlo.convolution", _conv_jvp, _conv_vjp)


# ---------------------------------------------------------------- reduce_window, select_and_scatter

_CHOOSE = {"max": "GE", "min": "LE"}


def _window(window_dimensions, window_strides, base_dilations, window_dilations, padding):
    n = len(window_dimensions)
    return (tuple(window_strides or (1,) * n), tuple(base_dilations or (1,) * n),
            tuple(window_dilations or (1,) * n), tuple(padding or ((0, 0),) * n))


def _chooser(direction):
    """A variadic body over (value, carried) pairs keeping the pair whose value wins ``direction``."""
    def body(a, ta, b, tb):
        keep = ops.compare(a, b, direction)
        return ops.select(keep, a, b), ops.select(keep, ta, tb)
    return body


def _gather_chosen(x, t, direction, window_dimensions, **window):
    """select_and_gather_add: per window, the element of ``t`` where ``x`` wins (jax's rule)."""
    worst = -np.inf if direction in ("GE", "GT") else np.inf
    return ops.reduce_window([x, t], [worst, 0], window_dimensions,
                             body=_chooser(direction), **window)[1]


def _window_taps(x, fill, window_dimensions, window_strides, base_dilations, window_dilations, padding):
    """(the padded, base-dilated operand, [(start, limit, strides) of the strided slice of each tap])."""
    strides, base, wdil, pads = _window(window_dimensions, window_strides, base_dilations, window_dilations, padding)
    padded = ops.pad(x, fill, [lo for lo, _ in pads], [hi for _, hi in pads], [b - 1 for b in base])
    out_shape = [0 if n == 0 or (w - 1) * wd + 1 > n else (n - (w - 1) * wd - 1) // s + 1
                 for n, w, wd, s in zip(padded.shape, window_dimensions, wdil, strides)]
    taps = []
    for pos in np.ndindex(*window_dimensions):
        start = [p * wd for p, wd in zip(pos, wdil)]
        limit = [b + (m - 1) * s + 1 for b, m, s in zip(start, out_shape, strides)]
        taps.append((start, limit, list(strides)))
    return padded, taps


def _untap(padded_ct, x, window_dimensions, window_strides, base_dilations, window_dilations, padding):
    """The transpose of ``_window_taps``'s pad: crop the padding, keep every base-th element."""
    strides, base, wdil, pads = _window(window_dimensions, window_strides, base_dilations, window_dilations, padding)
    r = ops.pad(padded_ct, 0, [-lo for lo, _ in pads], [-hi for _, hi in pads], [0] * x.ndim)
    if any(b > 1 for b in base):
        r = ops.slice(r, [0] * x.ndim, r.shape, list(base))
    return r


def _mul_window_vjp(x, init, c, **window):
    """Product windows, zero-safe: each tap's cotangent is c times the product of the other taps
    (prefix and suffix products), scattered back by the transpose of its strided slice."""
    padded, taps = _window_taps(x, init, **window)
    slices = [ops.slice(padded, *t) for t in taps]
    n = len(slices)
    prefix = [None] * n
    suffix = [None] * n
    acc = None
    for i in range(n):
        prefix[i] = acc
        acc = slices[i] if acc is None else ops.multiply(acc, slices[i])
    acc = None
    for i in reversed(range(n)):
        suffix[i] = acc
        acc = slices[i] if acc is None else ops.multiply(acc, slices[i])
    scaled = ops.multiply(c, ops.broadcast_in_dim(init, c.shape, ()))
    total = None
    for i, (start, limit, strides) in enumerate(taps):
        others = scaled
        for p in (prefix[i], suffix[i]):
            if p is not None:
                others = ops.multiply(others, p)
        high = [m - (b + (k - 1) * s + 1) for m, b, k, s in zip(padded.shape, start, others.shape, strides)]
        total = add_any(total, ops.pad(others, 0, start, high, [s - 1 for s in strides]))
    return _untap(total, x, **window)


def _chosen_window_vjp(x, init, c, y, **window):
    """max/min windows with dilations (jax has no rule): each window's cotangent goes to the first
    tap attaining the result (select_and_scatter's GE/LE choice), scattered back per tap."""
    padded, taps = _window_taps(x, init, **window)
    taken = None
    total = None
    for start, limit, strides in taps:
        hit = ops.compare(ops.slice(padded, start, limit, strides), y, "EQ")
        if taken is not None:
            hit = ops.and_(hit, ops.not_(taken))
        taken = hit if taken is None else ops.or_(taken, hit)
        part = ops.select(hit, c, zeros_like(c))
        high = [m - (b + (k - 1) * s + 1) for m, b, k, s in zip(padded.shape, start, c.shape, strides)]
        total = add_any(total, ops.pad(part, 0, start, high, [s - 1 for s in strides]))
    return _untap(total, x, **window)


def _reduce_window_jvp(ins, outs, ts, body, **window):
    if len(ins) != 2 or not isinstance(body, str):
        raise NotImplementedError("hloforge AD: stablehlo.reduce_window is differentiable with one operand and "
                                  f"an add, mul, max or min body, got {len(ins) // 2} operand(s), body {body!r}")
    x, init = ins
    tx, ti = ts
    if body == "add":
        return [ops.reduce_window(instantiate(tx, x), instantiate(ti, init), body="add", **window)]
    if body in _CHOOSE:
        if tx is None:
            return [None]
        return [_gather_chosen(x, tx, _CHOOSE[body], **window)]
    if body == "mul":
        def prod(a, ta, b, tb):
            return ops.multiply(a, b), ops.add(ops.multiply(ta, b), ops.multiply(a, tb))
        return [ops.reduce_window([x, instantiate(tx, x)], [init, instantiate(ti, init)], body=prod, **window)[1]]
    return [None]  # and/or: integer results


def _reduce_window_vjp(ins, outs, cts, body, window_dimensions, window_strides, base_dilations,
                       window_dilations, padding):
    window = dict(window_dimensions=window_dimensions, window_strides=window_strides,
                  base_dilations=base_dilations, window_dilations=window_dilations, padding=padding)
    if len(ins) != 2 or not isinstance(body, str):
        return _reduce_window_jvp(ins, outs, [None] * len(ins), body, **window)
    x, init = ins
    c = cts[0]
    strides, base, wdil, pads = _window(**window)
    if body == "add":  # jax's _reduce_window_sum_transpose_rule
        t_pads = _vjp_lhs_padding(x.shape, window_dimensions, strides, c.shape, pads, base, wdil)
        padded = ops.pad(c, 0, [lo for lo, _ in t_pads], [hi for _, hi in t_pads], [s - 1 for s in strides])
        ct_x = ops.reduce_window(padded, 0, window_dimensions, window_strides=base, window_dilations=wdil,
                                 body="add")
        return [ct_x, sum_to_scalar(c) if needs(1) else None]
    if body in _CHOOSE:
        if any(b > 1 for b in base) or any(w > 1 for w in wdil):  # (select_and_scatter has no dilations)
            return [_chosen_window_vjp(x, init, c, outs[0], **window), None]
        return [ops.select_and_scatter(x, c, 0, window_dimensions, window_strides=strides, padding=pads,
                                       select=_CHOOSE[body], scatter="add"), None]
    if body == "mul":
        ct_init = None
        if needs(1):  # d y / d init = y / init per window
            ct_init = sum_to_scalar(ops.multiply(c, ops.divide(outs[0], ops.broadcast_in_dim(init, c.shape, ()))))
        return [_mul_window_vjp(x, init, c, **window), ct_init]
    return [None, None]


set_rules("stablehlo.reduce_window", _reduce_window_jvp, _reduce_window_vjp)


def _sas_check(select, scatter):
    if not isinstance(select, str) or scatter != "add":
        raise NotImplementedError("hloforge AD: stablehlo.select_and_scatter is differentiable with a named select "
                                  f"(GE, GT, LE, LT) and an add scatter, got select {select!r}, scatter {scatter!r}")


def _sas_jvp(ins, outs, ts, select, scatter, **window):
    """Linear in the source and the init value; the selection does not move."""
    _sas_check(select, scatter)
    x, source, init = ins
    if ts[1] is None and ts[2] is None:
        return [None]
    return [ops.select_and_scatter(x, instantiate(ts[1], source), instantiate(ts[2], init), select=select,
                                   scatter=scatter, **window)]


def _sas_vjp(ins, outs, cts, select, scatter, window_dimensions, window_strides, padding):
    """The source's cotangent gathers the cotangent at each window's selected element."""
    _sas_check(select, scatter)
    x, source, init = ins
    c = cts[0]
    ct_source = _gather_chosen(x, c, select, window_dimensions, window_strides=window_strides,
                               padding=padding) if needs(1) else None
    return [None, ct_source, sum_to_scalar(c) if needs(2) else None]


set_rules("stablehlo.select_and_scatter", _sas_jvp, _sas_vjp)


# ---------------------------------------------------------------- batch norm

def _bn_axes(x, feature_index):
    return tuple(d for d in range(x.ndim) if d != feature_index)


def _along(v, x, feature_index):
    return ops.broadcast_in_dim(v, x.shape, (feature_index,))


def _bn_sum(t, feature_index):
    return ops.reduce(t, 0, _bn_axes(t, feature_index), "add")


def _bn_count(x, feature_index):
    return float(np.prod([x.shape[d] for d in _bn_axes(x, feature_index)]))


def _inv_std(variance, epsilon):
    return ops.rsqrt(ops.add(variance, like(epsilon, variance)))


def _bn_inference_jvp(ins, outs, ts, epsilon, feature_index):
    x, scale, offset, mean, var = ins
    tx, tscale, toffset, tmean, tvar = ts
    fi = feature_index
    inv = _inv_std(var, epsilon)
    centered = ops.subtract(x, _along(mean, x, fi))
    out = None
    if tx is not None:
        out = ops.multiply(tx, _along(ops.multiply(scale, inv), x, fi))
    if tscale is not None:
        out = add_any(out, ops.multiply(ops.multiply(centered, _along(inv, x, fi)), _along(tscale, x, fi)))
    if toffset is not None:
        out = add_any(out, _along(toffset, x, fi))
    if tmean is not None:
        out = add_any(out, _along(ops.neg(ops.multiply(tmean, ops.multiply(scale, inv))), x, fi))
    if tvar is not None:  # d rsqrt(v + eps) = -inv^3 / 2 dv
        dinv = ops.multiply(like(-0.5, inv), ops.multiply(ops.multiply(inv, ops.multiply(inv, inv)), tvar))
        out = add_any(out, ops.multiply(centered, _along(ops.multiply(scale, dinv), x, fi)))
    return [out]


def _bn_inference_vjp(ins, outs, cts, epsilon, feature_index):
    x, scale, offset, mean, var = ins
    c, fi = cts[0], feature_index
    inv = _inv_std(var, epsilon)
    centered = ops.subtract(x, _along(mean, x, fi))
    sum_c = _bn_sum(c, fi) if needs(2) or needs(3) else None
    sum_cc = _bn_sum(ops.multiply(c, centered), fi) if needs(1) or needs(4) else None
    return [ops.multiply(c, _along(ops.multiply(scale, inv), x, fi)) if needs(0) else None,
            ops.multiply(sum_cc, inv) if needs(1) else None,
            sum_c if needs(2) else None,
            ops.neg(ops.multiply(sum_c, ops.multiply(scale, inv))) if needs(3) else None,
            ops.multiply(ops.multiply(sum_cc, scale), ops.multiply(like(-0.5, inv),
                                                                   ops.multiply(inv, ops.multiply(inv, inv))))
            if needs(4) else None]


set_rules("stablehlo.batch_norm_inference", _bn_inference_jvp, _bn_inference_vjp)


def _bn_training_jvp(ins, outs, ts, epsilon, feature_index):
    x, scale, offset = ins
    tx, tscale, toffset = ts
    y, mean, var = outs
    fi = feature_index
    inv = _inv_std(var, epsilon)
    centered = ops.subtract(x, _along(mean, x, fi))
    xhat = ops.multiply(centered, _along(inv, x, fi))
    t_y = t_mean = t_var = None
    if tx is not None:
        n = _bn_count(x, fi)
        t_mean = ops.multiply(_bn_sum(tx, fi), like(1 / n, mean))
        t_var = ops.multiply(_bn_sum(ops.multiply(centered, tx), fi), like(2 / n, var))
        t_inv = ops.multiply(like(-0.5, inv), ops.multiply(ops.multiply(inv, ops.multiply(inv, inv)), t_var))
        t_xhat = ops.add(ops.multiply(ops.subtract(tx, _along(t_mean, x, fi)), _along(inv, x, fi)),
                         ops.multiply(centered, _along(t_inv, x, fi)))
        t_y = ops.multiply(t_xhat, _along(scale, x, fi))
    if tscale is not None:
        t_y = add_any(t_y, ops.multiply(xhat, _along(tscale, x, fi)))
    if toffset is not None:
        t_y = add_any(t_y, _along(toffset, x, fi))
    return [t_y, t_mean, t_var]


def _bn_training_vjp(ins, outs, cts, epsilon, feature_index):
    """The output's cotangent through stablehlo.batch_norm_grad; the batch statistics' cotangents
    added by hand (d mean / dx = 1/N, d var / dx = 2 (x - mean) / N)."""
    x, scale, offset = ins
    y, mean, var = outs
    cy, cmean, cvar = cts
    fi = feature_index
    ct_x = ct_scale = ct_offset = None
    if cy is not None:
        ct_x, ct_scale, ct_offset = ops.batch_norm_grad(x, scale, mean, var, cy, epsilon, fi)
    n = _bn_count(x, fi)
    if cmean is not None:
        ct_x = add_any(ct_x, _along(ops.multiply(cmean, like(1 / n, cmean)), x, fi))
    if cvar is not None:
        centered = ops.subtract(x, _along(mean, x, fi))
        ct_x = add_any(ct_x, ops.multiply(centered, _along(ops.multiply(cvar, like(2 / n, cvar)), x, fi)))
    return [ct_x, ct_scale, ct_offset]


set_rules("stablehlo.batch_norm_training", _bn_training_jvp, _bn_training_vjp)


def _bn_grad_composed(x, scale, mean, var, dy, epsilon, feature_index):
    """batch_norm_grad from elementwise ops and reduces (its derivatives are theirs)."""
    fi = feature_index
    n = _bn_count(x, fi)
    inv = _inv_std(var, epsilon)
    centered = ops.subtract(x, _along(mean, x, fi))
    sum_dy = _bn_sum(dy, fi)
    sum_dyc = _bn_sum(ops.multiply(dy, centered), fi)
    grad_scale = ops.multiply(sum_dyc, inv)
    inner = ops.subtract(ops.subtract(ops.multiply(dy, like(n, dy)), _along(sum_dy, x, fi)),
                         ops.multiply(centered, _along(ops.multiply(sum_dyc, ops.multiply(inv, inv)), x, fi)))
    grad_x = ops.multiply(inner, _along(ops.multiply(scale, ops.multiply(inv, like(1 / n, inv))), x, fi))
    return grad_x, grad_scale, sum_dy


def _bn_grad_jvp(ins, outs, ts, epsilon, feature_index):
    from hloforge.frontend.ad import api
    primals = tuple(ins)
    tangents = tuple(instantiate(t, x) for t, x in zip(ts, ins))
    _, out = api.jvp(lambda *a: _bn_grad_composed(*a, epsilon, feature_index), primals, tangents)
    return list(out)


def _bn_grad_vjp(ins, outs, cts, epsilon, feature_index):
    from hloforge.frontend.ad import api
    _, f_vjp = api.vjp(lambda *a: _bn_grad_composed(*a, epsilon, feature_index), *ins)
    return list(f_vjp(tuple(instantiate(c, o) for c, o in zip(cts, outs))))


set_rules("stablehlo.batch_norm_grad", _bn_grad_jvp, _bn_grad_vjp)


# ---------------------------------------------------------------- cholesky, triangular_solve

def _triangle(x, lower, k=0):
    """tril(x, k) (lower) or triu(x, k)."""
    rows = ops.iota(x.shape, np.int32, x.ndim - 2)
    cols = ops.iota(x.shape, np.int32, x.ndim - 1)
    diff = ops.subtract(cols, rows)  # j - i
    keep = ops.compare(diff, ops.constant(np.full(x.shape, k, np.int32)), "LE" if lower else "GE")
    return ops.select(keep, x, zeros_like(x))


def _phi(x):
    """The lower triangle with the diagonal halved."""
    low = _triangle(x, True)
    eye = ops.compare(ops.iota(x.shape, np.int32, x.ndim - 2), ops.iota(x.shape, np.int32, x.ndim - 1), "EQ")
    return ops.select(eye, ops.multiply(low, like(0.5, low)), low)


def _read_triangle(t, lower):
    """The Hermitian matrix the op sees: the named triangle and its mirror."""
    return ops.add(_triangle(t, lower), mH(_triangle(t, lower, -1 if lower else 1)))


def _read_triangle_t(c, lower):
    return ops.add(_triangle(c, lower), _triangle(mH(c), lower, -1 if lower else 1))


def _cholesky_jvp(ins, outs, ts, lower):
    """jax's rule (arXiv:1602.07527): dL = L phi(L^-1 dA L^-H), dA the Hermitian matrix of the
    triangle the op reads; upper factors as the adjoint of the lower one."""
    t = _read_triangle(ts[0], lower)
    L = _triangle(outs[0], lower)
    if not lower:
        L = mH(L)
    tmp = mH(ops.triangular_solve(L, mH(t), left_side=True, lower=True))          # dA L^-H
    dL = matmul(L, _phi(ops.triangular_solve(L, tmp, left_side=True, lower=True)))
    return [dL if lower else mH(dL)]


def _cholesky_vjp(ins, outs, cts, lower):
    c = cts[0]
    L = _triangle(outs[0], lower)
    if not lower:
        L, c = mH(L), mH(c)
    ct_p = matmul(mT(L), c)
    ct_t2 = _phi(ct_p)
    ct_t1 = ops.triangular_solve(conj(L), ct_t2, left_side=False, lower=True)               # ct_t2 conj(L)^-1
    ct_s = ops.triangular_solve(L, ct_t1, left_side=True, lower=True, transpose_a="TRANSPOSE")  # L^-T ct_t1
    return [_read_triangle_t(ct_s, lower)]


set_rules("stablehlo.cholesky", _cholesky_jvp, _cholesky_vjp)


def _op_a(g, transpose_a):
    if transpose_a == "TRANSPOSE":
        return mT(g)
    if transpose_a == "ADJOINT":
        return mH(g)
    return g


def _a_mask(g, lower, unit_diagonal):
    return _triangle(g, lower, (-1 if lower else 1) if unit_diagonal else 0)


def _ts_jvp(ins, outs, ts, left_side, lower, unit_diagonal, transpose_a):
    a, b = ins
    x = outs[0]
    kw = dict(left_side=left_side, lower=lower, unit_diagonal=unit_diagonal, transpose_a=transpose_a)
    out = None
    if ts[1] is not None:
        out = ops.triangular_solve(a, ts[1], **kw)
    if ts[0] is not None:  # d(op(A)^-1 B) = -op(A)^-1 op(dA) X (left), -X op(dA) op(A)^-1 (right)
        g = _op_a(_a_mask(ts[0], lower, unit_diagonal), transpose_a)
        out = add_any(out, ops.neg(ops.triangular_solve(a, matmul(g, x) if left_side else matmul(x, g), **kw)))
    return [out]


def _ts_vjp(ins, outs, cts, left_side, lower, unit_diagonal, transpose_a):
    """The cotangent of b solves with op(a) transposed (jax's rule; ADJOINT: conj(a) untransposed)."""
    a, b = ins
    x, c = outs[0], cts[0]
    flipped = {"NO_TRANSPOSE": "TRANSPOSE", "TRANSPOSE": "NO_TRANSPOSE", "ADJOINT": "NO_TRANSPOSE"}[transpose_a]
    a_t = conj(a) if transpose_a == "ADJOINT" else a
    z = ops.triangular_solve(a_t, c, left_side=left_side, lower=lower, unit_diagonal=unit_diagonal, transpose_a=flipped)
    ct_a = None
    if needs(0):
        ct_g = ops.neg(matmul(z, mT(x)) if left_side else matmul(mT(x), z))
        ct_a = _a_mask(_op_a(ct_g, transpose_a), lower, unit_diagonal)  # (op is its own transpose)
    return [ct_a, z]


set_rules("stablehlo.triangular_solve", _ts_jvp, _ts_vjp)
