"""Derivative rules of the elementwise ops (frontend/ops/elementwise.py, compare.py, convert.py).

Complex numbers follow JAX: jvp rules multiply tangents by the complex derivative f'(z); vjp
rules are the transposes of the jvp rules with respect to the bilinear pairing Re(a * b) (no
conjugation), so that ``grad`` of a real loss returns conj(df/dz) = df/dx - i df/dy, as jax.grad.
"""
from __future__ import annotations

import math


from hloforge.frontend import dtypes
from hloforge.frontend import ops
from hloforge.frontend.ad._util import (
    add_any, conj, differentiable, div, like, mul, needs, neg, replace_zero, set_rules, splat, unbroadcast, zero_rules, zeros_like)


# ---------------------------------------------------------------- unary: y = f(x), dy = f'(x) dx

def _unary(deriv):
    def jvp(ins, outs, ts):
        return [mul(ts[0], deriv(ins[0], outs[0]))]

    def vjp(ins, outs, cts):
        return [None if cts[0] is None else mul(cts[0], deriv(ins[0], outs[0]))]
    return jvp, vjp


def _linear_unary(fn, transpose):
    return (lambda ins, outs, ts, **p: [fn(ts[0], **p)],
            lambda ins, outs, cts, **p: [transpose(cts[0], ins[0], **p)])


UNARY = {
    "stablehlo.exponential": lambda x, y: y,
    "stablehlo.log": lambda x, y: ops.divide(like(1, x), x),
    "stablehlo.log_plus_one": lambda x, y: ops.divide(like(1, x), ops.add(x, like(1, x))),
    "stablehlo.exponential_minus_one": lambda x, y: ops.add(y, like(1, y)),
    "stablehlo.sine": lambda x, y: ops.cos(x),
    "stablehlo.cosine": lambda x, y: ops.neg(ops.sin(x)),
    "stablehlo.tan": lambda x, y: ops.add(like(1, y), ops.multiply(y, y)),
    "stablehlo.tanh": lambda x, y: ops.subtract(like(1, y), ops.multiply(y, y)),
    "stablehlo.sqrt": lambda x, y: ops.divide(like(0.5, y), y),
    "stablehlo.rsqrt": lambda x, y: ops.multiply(like(-0.5, x), ops.divide(y, x)),
    "stablehlo.cbrt": lambda x, y: ops.divide(like(1 / 3, y), ops.multiply(y, y)),
    "stablehlo.logistic": lambda x, y: ops.multiply(y, ops.subtract(like(1, y), y)),
    "chlo.erf": lambda x, y: ops.multiply(like(2 / math.sqrt(math.pi), x), ops.exp(ops.neg(ops.multiply(x, x)))),
}
for _name, _deriv in UNARY.items():
    set_rules(_name, *_unary(_deriv))

for _name in ("stablehlo.floor", "stablehlo.ceil", "stablehlo.round_nearest_even", "stablehlo.round_nearest_afz",
              "stablehlo.sign", "stablehlo.not", "stablehlo.is_finite", "stablehlo.compare", "stablehlo.and",
              "stablehlo.or", "stablehlo.xor", "stablehlo.shift_left", "stablehlo.shift_right_arithmetic",
              "stablehlo.shift_right_logical"):
    zero_rules(_name)

set_rules("stablehlo.negate", *_linear_unary(lambda t: ops.neg(t), lambda c, x: ops.neg(c)))


def _abs_jvp(ins, outs, ts):
    x, t = ins[0], ts[0]
    if dtypes.is_complex(x.dtype):  # d|z| = Re(conj(z) dz) / |z|
        return [ops.real(ops.multiply(t, ops.divide(conj(x), ops.complex(replace_zero(outs[0]), zeros_like(outs[0])))))]
    return [ops.select(ops.compare(x, zeros_like(x), "GE"), t, ops.neg(t))]


def _abs_vjp(ins, outs, cts):
    x, c = ins[0], cts[0]
    if dtypes.is_complex(x.dtype):
        y = replace_zero(outs[0])
        return [ops.multiply(ops.complex(c, zeros_like(c)), ops.divide(conj(x), ops.complex(y, zeros_like(y))))]
    return [ops.select(ops.compare(x, zeros_like(x), "GE"), c, ops.neg(c))]


set_rules("stablehlo.abs", _abs_jvp, _abs_vjp)


def _real_t(c, x):  # the transpose of real: c -> c + 0i
    return ops.complex(c, zeros_like(c)) if dtypes.is_complex(x.dtype) else c


def _imag_t(c, x):  # the transpose of imag: c -> -i c
    return ops.complex(zeros_like(c), ops.neg(c)) if dtypes.is_complex(x.dtype) else None


set_rules("stablehlo.real", *_linear_unary(lambda t: ops.real(t) if dtypes.is_complex(t.dtype) else t, _real_t))
set_rules("stablehlo.imag", *_linear_unary(lambda t: ops.imag(t) if dtypes.is_complex(t.dtype) else zeros_like(t), _imag_t))


def _convert(t, dtype):
    return ops.convert(t, dtype) if differentiable(dtype) else None


def _convert_t(c, x, dtype):
    return ops.convert(c, x.dtype) if differentiable(x.dtype) and differentiable(dtype) else None


set_rules("stablehlo.convert", *_linear_unary(_convert, _convert_t))


# ---------------------------------------------------------------- binary

def _binary(dl, dr):
    """Rules of z = f(x, y) from the partial derivatives dl(x, y, z), dr(x, y, z)."""
    def jvp(ins, outs, ts):
        x, y = ins
        out = None
        if ts[0] is not None:
            out = mul(ts[0], dl(x, y, outs[0]))
        if ts[1] is not None:
            out = add_any(out, mul(ts[1], dr(x, y, outs[0])))
        return [out]

    def vjp(ins, outs, cts):
        x, y = ins
        c = cts[0]
        return [mul(c, dl(x, y, outs[0])) if needs(0) else None,
                mul(c, dr(x, y, outs[0])) if needs(1) else None]
    return jvp, vjp


def _add_jvp(ins, outs, ts):
    return [add_any(*ts)]


def _sub_jvp(ins, outs, ts):
    a, b = ts
    return [a if b is None else (ops.neg(b) if a is None else ops.subtract(a, b))]


set_rules("stablehlo.add", _add_jvp, lambda ins, outs, cts: [cts[0], cts[0]])
set_rules("stablehlo.subtract", _sub_jvp, lambda ins, outs, cts: [cts[0], ops.neg(cts[0]) if needs(1) else None])
set_rules("stablehlo.multiply", *_binary(lambda x, y, z: y, lambda x, y, z: x))
set_rules("stablehlo.divide", *_binary(lambda x, y, z: div(like(1, y), y), lambda x, y, z: neg(div(z, y))))


def _rem_dr(x, y, z):  # d fmod(x, y) / dy = -trunc(x / y)
    q = ops.divide(x, y)
    return ops.neg(ops.multiply(ops.sign(q), ops.floor(ops.abs(q))))


set_rules("stablehlo.remainder", *_binary(lambda x, y, z: like(1, x), _rem_dr))


def _pow_dl(x, y, z):  # y * x ** (y - 1), 0 where y == 0
    c = splat(y)
    if c is not None:  # a constant exponent (x ** 2): no select, no pow for 1 and 2
        if c == 0:
            return zeros_like(x)
        if c == 1:
            return like(1, x)
        return mul(like(c, x), x if c == 2 else ops.power(x, like(c - 1, x)))
    jac = ops.multiply(replace_zero(y), ops.power(x, ops.subtract(y, like(1, y))))
    return ops.select(ops.compare(y, zeros_like(y), "EQ"), zeros_like(y), jac)


set_rules("stablehlo.power", *_binary(_pow_dl, lambda x, y, z: ops.multiply(ops.log(replace_zero(x)), z)))


def _balanced(x, z, y):
    """1 where x alone attains the max/min z, 1/2 where x and y tie, else 0 (JAX's convention)."""
    one, half, zero = like(1, x), like(0.5, x), zeros_like(x)
    return ops.select(ops.compare(x, z, "EQ"), ops.select(ops.compare(y, z, "EQ"), half, one), zero)


for _name in ("stablehlo.maximum", "stablehlo.minimum"):
    set_rules(_name, *_binary(lambda x, y, z: _balanced(x, z, y), lambda x, y, z: _balanced(y, z, x)))


def _atan2_denominator(x, y):
    return ops.add(ops.multiply(x, x), ops.multiply(y, y))


set_rules("stablehlo.atan2", *_binary(lambda x, y, z: ops.divide(y, _atan2_denominator(x, y)),
                                 lambda x, y, z: ops.neg(ops.divide(x, _atan2_denominator(x, y)))))


def _complex_jvp(ins, outs, ts):
    re, im = ts
    return [ops.complex(re if re is not None else zeros_like(ins[0]), im if im is not None else zeros_like(ins[1]))]


def _complex_vjp(ins, outs, cts):  # the transpose of (a, b) -> a + ib: c -> (Re c, -Im c)
    return [ops.real(cts[0]), ops.neg(ops.imag(cts[0]))]


set_rules("stablehlo.complex", _complex_jvp, _complex_vjp)


# ---------------------------------------------------------------- select, clamp

def _select_jvp(ins, outs, ts):
    _, a, b = ins
    ta, tb = ts[1], ts[2]
    if ta is None and tb is None:
        return [None]
    return [ops.select(ins[0], ta if ta is not None else zeros_like(a), tb if tb is not None else zeros_like(b))]


def _select_vjp(ins, outs, cts):
    c = cts[0]
    zero = zeros_like(c)
    return [None, ops.select(ins[0], c, zero) if needs(1) else None, ops.select(ins[0], zero, c) if needs(2) else None]


set_rules("stablehlo.select", _select_jvp, _select_vjp)


def _full_shape(v, x):
    return v if v.shape == x.shape else ops.broadcast_in_dim(v, x.shape, ())


def _clamp_masks(lo, x, hi):
    """Where the result is min, x and max (JAX's clamp rules)."""
    lo, hi = _full_shape(lo, x), _full_shape(hi, x)
    m_lo = ops.and_(ops.compare(lo, x, "GT"), ops.compare(lo, hi, "LT"))
    m_x = ops.and_(ops.compare(x, lo, "GT"), ops.compare(x, hi, "LT"))
    m_hi = ops.compare(hi, x, "LT")
    return m_lo, m_x, m_hi


def _clamp_jvp(ins, outs, ts):
    x = ins[1]
    out = None
    for t, m in zip(ts, _clamp_masks(*ins)):
        if t is not None:
            out = add_any(out, ops.select(m, _full_shape(t, x), zeros_like(x)))
    return [out]


def _clamp_vjp(ins, outs, cts):
    c = cts[0]
    return [unbroadcast(ops.select(m, c, zeros_like(c)), v.shape) if needs(i) else None
            for i, (m, v) in enumerate(zip(_clamp_masks(*ins), ins))]


set_rules("stablehlo.clamp", _clamp_jvp, _clamp_vjp)

__all__ = ["zero_rules"]
