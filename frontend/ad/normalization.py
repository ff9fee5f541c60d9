"""Derivative rules of the batch norm ops (frontend/ops/normalization.py): inference and training
in closed form, batch_norm_grad through an equivalent composition of elementwise ops and reduces."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.ad._util import add_any, instantiate, like, needs
from hloforge.frontend.registry import def_rule


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


@def_rule("jvp", "stablehlo.batch_norm_inference")
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


@def_rule("vjp", "stablehlo.batch_norm_inference")
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


@def_rule("jvp", "stablehlo.batch_norm_training")
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


@def_rule("vjp", "stablehlo.batch_norm_training")
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


@def_rule("jvp", "stablehlo.batch_norm_grad")
def _bn_grad_jvp(ins, outs, ts, epsilon, feature_index):
    from hloforge.frontend.ad import api
    primals = tuple(ins)
    tangents = tuple(instantiate(t, x) for t, x in zip(ts, ins))
    _, out = api.jvp(lambda *a: _bn_grad_composed(*a, epsilon, feature_index), primals, tangents)
    return list(out)


@def_rule("vjp", "stablehlo.batch_norm_grad")
def _bn_grad_vjp(ins, outs, cts, epsilon, feature_index):
    from hloforge.frontend.ad import api
    _, f_vjp = api.vjp(lambda *a: _bn_grad_composed(*a, epsilon, feature_index), *ins)
    return list(f_vjp(tuple(instantiate(c, o) for c, o in zip(cts, outs))))
