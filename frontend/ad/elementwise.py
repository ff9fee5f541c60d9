"""Derivative rules of the elementwise ops (frontend/ops/elementwise.py): the StableHLO unary and
binary rows and the CHLO math functions.

Complex numbers follow JAX: jvp rules multiply tangents by the complex derivative f'(z); vjp
rules are the transposes of the jvp rules with respect to the bilinear pairing Re(a * b) (no
conjugation), so that ``grad`` of a real loss returns conj(df/dz) = df/dx - i df/dy, as jax.grad.
"""
from __future__ import annotations

import math

import numpy as np

from hloforge.frontend import dtypes
from hloforge.frontend import ops
from hloforge.frontend.ad._util import (
    add_any, conj, defbilinear, deflinear, div, like, mul, needs, neg, replace_zero, splat, zero_rules, zeros_like)
from hloforge.frontend.lax.special import bessel_i0e
from hloforge.frontend.registry import def_rule


# ---------------------------------------------------------------- unary: y = f(x), dy = f'(x) dx

def _def_unary(name, deriv):
    """The rules of ``name``, y = f(x), from its derivative ``deriv(x, y)``."""
    @def_rule("jvp", name)
    def jvp(ins, outs, ts):
        return [mul(ts[0], deriv(ins[0], outs[0]))]

    @def_rule("vjp", name)
    def vjp(ins, outs, cts):
        return [None if cts[0] is None else mul(cts[0], deriv(ins[0], outs[0]))]


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
    _def_unary(_name, _deriv)

zero_rules("stablehlo.floor", "stablehlo.ceil", "stablehlo.round_nearest_even", "stablehlo.round_nearest_afz",
           "stablehlo.sign", "stablehlo.not", "stablehlo.is_finite", "stablehlo.and", "stablehlo.or", "stablehlo.xor",
           "stablehlo.shift_left", "stablehlo.shift_right_arithmetic", "stablehlo.shift_right_logical")

deflinear("stablehlo.negate", lambda ct, x: [ops.neg(ct)])


@def_rule("jvp", "stablehlo.abs")
def _abs_jvp(ins, outs, ts):
    x, t = ins[0], ts[0]
    if dtypes.is_complex(x.dtype):  # d|z| = Re(conj(z) dz) / |z|
        return [ops.real(ops.multiply(t, ops.divide(conj(x), ops.complex(replace_zero(outs[0]), zeros_like(outs[0])))))]
    return [ops.select(ops.compare(x, zeros_like(x), "GE"), t, ops.neg(t))]


@def_rule("vjp", "stablehlo.abs")
def _abs_vjp(ins, outs, cts):
    x, c = ins[0], cts[0]
    if dtypes.is_complex(x.dtype):
        y = replace_zero(outs[0])
        return [ops.multiply(ops.complex(c, zeros_like(c)), ops.divide(conj(x), ops.complex(y, zeros_like(y))))]
    return [ops.select(ops.compare(x, zeros_like(x), "GE"), c, ops.neg(c))]


def _real_t(c, x):  # the transpose of real: c -> c + 0i
    return [ops.complex(c, zeros_like(c)) if dtypes.is_complex(x.dtype) else c]


def _imag_t(c, x):  # the transpose of imag: c -> -i c
    return [ops.complex(zeros_like(c), ops.neg(c)) if dtypes.is_complex(x.dtype) else None]


deflinear("stablehlo.real", _real_t)
deflinear("stablehlo.imag", _imag_t)


# ---------------------------------------------------------------- binary

def _def_binary(name, dl, dr):
    """The rules of ``name``, z = f(x, y), from the partial derivatives dl(x, y, z), dr(x, y, z)."""
    @def_rule("jvp", name)
    def jvp(ins, outs, ts):
        x, y = ins
        out = None
        if ts[0] is not None:
            out = mul(ts[0], dl(x, y, outs[0]))
        if ts[1] is not None:
            out = add_any(out, mul(ts[1], dr(x, y, outs[0])))
        return [out]

    @def_rule("vjp", name)
    def vjp(ins, outs, cts):
        x, y = ins
        c = cts[0]
        return [mul(c, dl(x, y, outs[0])) if needs(0) else None,
                mul(c, dr(x, y, outs[0])) if needs(1) else None]


@def_rule("jvp", "stablehlo.add")
def _add_jvp(ins, outs, ts):
    return [add_any(*ts)]


@def_rule("jvp", "stablehlo.subtract")
def _sub_jvp(ins, outs, ts):
    a, b = ts
    return [a if b is None else (ops.neg(b) if a is None else ops.subtract(a, b))]


def_rule("vjp", "stablehlo.add")(lambda ins, outs, cts: [cts[0], cts[0]])
def_rule("vjp", "stablehlo.subtract")(lambda ins, outs, cts: [cts[0], ops.neg(cts[0]) if needs(1) else None])
defbilinear("stablehlo.multiply", lambda ct, x, y: mul(ct, y), lambda ct, x, y: mul(ct, x), op=mul)
_def_binary("stablehlo.divide", lambda x, y, z: div(like(1, y), y), lambda x, y, z: neg(div(z, y)))


def _rem_dr(x, y, z):  # d fmod(x, y) / dy = -trunc(x / y)
    q = ops.divide(x, y)
    return ops.neg(ops.multiply(ops.sign(q), ops.floor(ops.abs(q))))


_def_binary("stablehlo.remainder", lambda x, y, z: like(1, x), _rem_dr)


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


_def_binary("stablehlo.power", _pow_dl, lambda x, y, z: ops.multiply(ops.log(replace_zero(x)), z))


def _balanced(x, z, y):
    """1 where x alone attains the max/min z, 1/2 where x and y tie, else 0 (JAX's convention)."""
    one, half, zero = like(1, x), like(0.5, x), zeros_like(x)
    return ops.select(ops.compare(x, z, "EQ"), ops.select(ops.compare(y, z, "EQ"), half, one), zero)


for _name in ("stablehlo.maximum", "stablehlo.minimum"):
    _def_binary(_name, lambda x, y, z: _balanced(x, z, y), lambda x, y, z: _balanced(y, z, x))


def _atan2_denominator(x, y):
    return ops.add(ops.multiply(x, x), ops.multiply(y, y))


_def_binary("stablehlo.atan2", lambda x, y, z: ops.divide(y, _atan2_denominator(x, y)),
            lambda x, y, z: ops.neg(ops.divide(x, _atan2_denominator(x, y))))


# the transpose of (a, b) -> a + ib: c -> (Re c, -Im c)
deflinear("stablehlo.complex", lambda ct, re, im: [ops.real(ct), ops.neg(ops.imag(ct))])


# ---------------------------------------------------------------- CHLO math (y = f(x), dy = f'(x) dx)

def _one_minus_sq(x):
    return ops.multiply(ops.subtract(like(1, x), x), ops.add(like(1, x), x))


def _recip(x):
    return ops.divide(like(1, x), x)


def _trigamma(x):
    """polygamma(1, x) from registry ops: reflection for x < 1/2, the recurrence up to x + 6 and
    the asymptotic series there (float64 accurate to ~1e-13; chlo.polygamma has no registry row)."""
    half = like(0.5, x)
    reflect = ops.compare(x, half, "LT")
    z = ops.select(reflect, ops.subtract(like(1, x), x), x)  # z >= 1/2
    acc = zeros_like(x)
    for _ in range(6):
        acc = ops.add(acc, _recip(ops.multiply(z, z)))
        z = ops.add(z, like(1, z))
    r = _recip(z)
    r2 = ops.multiply(r, r)
    # 1/z + 1/(2z^2) + sum B_2k / z^(2k+1)
    coeffs = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6]
    series = like(coeffs[-1], x)
    for c in reversed(coeffs[:-1]):
        series = ops.add(like(c, x), ops.multiply(series, r2))
    tail = ops.add(ops.add(r, ops.multiply(half, r2)), ops.multiply(ops.multiply(series, r2), r))
    positive = ops.add(acc, tail)
    # psi1(1 - x) + psi1(x) = pi^2 / sin^2(pi x)
    s = ops.sin(ops.multiply(like(math.pi, x), x))
    reflected = ops.subtract(ops.divide(like(math.pi ** 2, x), ops.multiply(s, s)), positive)
    return ops.select(reflect, reflected, positive)


def _i1e_deriv(x, y):
    """i0e(x) - y (sign(x) + 1/x), and 1/2 where |x| <= eps (jax's rule)."""
    eps = 2.0 ** -7 if x.dtype.name == "bfloat16" else float(np.finfo(x.dtype).eps)
    tiny = ops.compare(ops.abs(x), like(eps, x), "LE")
    safe = ops.select(tiny, like(eps, x), x)
    d = ops.subtract(bessel_i0e(safe), ops.multiply(y, ops.add(ops.sign(safe), _recip(safe))))
    return ops.select(tiny, like(0.5, x), d)


CHLO = {
    "chlo.asin": lambda x, y: _recip(ops.sqrt(_one_minus_sq(x))),
    "chlo.acos": lambda x, y: ops.neg(_recip(ops.sqrt(_one_minus_sq(x)))),
    "chlo.atan": lambda x, y: _recip(ops.add(like(1, x), ops.multiply(x, x))),
    "chlo.sinh": lambda x, y: ops.cosh(x),
    "chlo.cosh": lambda x, y: ops.sinh(x),
    "chlo.asinh": lambda x, y: _recip(ops.sqrt(ops.add(ops.multiply(x, x), like(1, x)))),
    "chlo.acosh": lambda x, y: _recip(ops.sqrt(ops.multiply(ops.subtract(x, like(1, x)), ops.add(x, like(1, x))))),
    "chlo.atanh": lambda x, y: _recip(_one_minus_sq(x)),
    "chlo.erf_inv": lambda x, y: ops.multiply(like(math.sqrt(math.pi) / 2, y), ops.exp(ops.multiply(y, y))),
    "chlo.lgamma": lambda x, y: ops.digamma(x),
    "chlo.digamma": lambda x, y: _trigamma(x),
    "chlo.square": lambda x, y: ops.add(x, x),
    "chlo.erfc": lambda x, y: ops.multiply(like(-2 / math.sqrt(math.pi), x), ops.exp(ops.neg(ops.multiply(x, x)))),
    "chlo.bessel_i1e": _i1e_deriv,
}
for _name, _deriv in CHLO.items():
    _def_unary(_name, _deriv)


def _is_constant(t):
    """t is a stablehlo.constant, or one broadcast, reshaped or converted (jax's lowering of a
    Python-scalar argument)."""
    owner = t.value.owner
    while getattr(owner, "name", None) in ("stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.convert"):
        owner = owner.operands[0].owner
    return getattr(owner, "name", None) == "stablehlo.constant"


def _special_binary(name, d_rhs, lhs_error):
    """Rules of a CHLO function differentiable in its rhs only (d_rhs(lhs, rhs, out)); a tangent or
    cotangent of the lhs raises ``lhs_error`` (jax has no rule for it either); a constant lhs (the
    order of polygamma in jax's lowering) has none to compute."""
    @def_rule("jvp", name)
    def jvp(ins, outs, ts):
        if ts[0] is not None:
            raise lhs_error()
        return [None if ts[1] is None else mul(ts[1], d_rhs(*ins, outs[0]))]

    @def_rule("vjp", name)
    def vjp(ins, outs, cts):
        if cts[0] is None:
            return [None, None]
        if needs(0) and not _is_constant(ins[0]):
            raise lhs_error()
        return [None, mul(cts[0], d_rhs(*ins, outs[0]))]


# d polygamma(n, x) / dx = polygamma(n + 1, x), as jax
_special_binary("chlo.polygamma", lambda n, x, y: ops.polygamma(ops.add(n, like(1, n)), x),
                lambda: ValueError("polygamma: no derivative with respect to the order n (jax has none either)"))
# d zeta(x, q) / dq = -x zeta(x + 1, q); in x there is no closed form (jax.lax.zeta has no rule;
# jax.scipy.special.zeta differentiates a series expansion that its lowered module does not contain)
_special_binary("chlo.zeta", lambda x, q, y: ops.neg(ops.multiply(x, ops.zeta(ops.add(x, like(1, x)), q))),
                lambda: NotImplementedError("zeta: no derivative with respect to x (the exponent) is implemented; "
                                            "only with respect to q"))

# bool results, integer bit counts, nextafter (piecewise constant, as jax): zero tangents
zero_rules("chlo.is_inf", "chlo.is_pos_inf", "chlo.is_neg_inf", "chlo.next_after", "stablehlo.popcnt",
           "stablehlo.count_leading_zeros")
