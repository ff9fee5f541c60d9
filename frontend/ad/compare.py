"""Derivative rules of the comparison and selection ops (frontend/ops/compare.py): compare has
no tangents; select and clamp follow JAX's rules (the predicate gets no cotangent)."""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.ad._util import add_any, needs, unbroadcast, zero_rules, zeros_like
from hloforge.frontend.registry import def_rule

zero_rules("stablehlo.compare")


@def_rule("jvp", "stablehlo.select")
def _select_jvp(ins, outs, ts):
    _, a, b = ins
    ta, tb = ts[1], ts[2]
    if ta is None and tb is None:
        return [None]
    return [ops.select(ins[0], ta if ta is not None else zeros_like(a), tb if tb is not None else zeros_like(b))]


@def_rule("vjp", "stablehlo.select")
def _select_vjp(ins, outs, cts):
    c = cts[0]
    zero = zeros_like(c)
    return [None, ops.select(ins[0], c, zero) if needs(1) else None, ops.select(ins[0], zero, c) if needs(2) else None]


def _full_shape(v, x):
    return v if v.shape == x.shape else ops.broadcast_in_dim(v, x.shape, ())


def _clamp_masks(lo, x, hi):
    """Where the result is min, x and max (JAX's clamp rules)."""
    lo, hi = _full_shape(lo, x), _full_shape(hi, x)
    m_lo = ops.and_(ops.compare(lo, x, "GT"), ops.compare(lo, hi, "LT"))
    m_x = ops.and_(ops.compare(x, lo, "GT"), ops.compare(x, hi, "LT"))
    m_hi = ops.compare(hi, x, "LT")
    return m_lo, m_x, m_hi


@def_rule("jvp", "stablehlo.clamp")
def _clamp_jvp(ins, outs, ts):
    x = ins[1]
    out = None
    for t, m in zip(ts, _clamp_masks(*ins)):
        if t is not None:
            out = add_any(out, ops.select(m, _full_shape(t, x), zeros_like(x)))
    return [out]


@def_rule("vjp", "stablehlo.clamp")
def _clamp_vjp(ins, outs, cts):
    c = cts[0]
    return [unbroadcast(ops.select(m, c, zeros_like(c)), v.shape) if needs(i) else None
            for i, (m, v) in enumerate(zip(_clamp_masks(*ins), ins))]
