"""Elementwise CHLO ops (inverse trigonometric, hyperbolic, infinity tests, nextafter, square, erfc,
bessel_i1e, polygamma, zeta): one
registry row each, like :mod:`hloforge.frontend.ops.elementwise`. StableHLO has no such ops; XLA
expands CHLO (as it does for ``chlo.erf``), and jax emits the same ops for ``jnp.arcsin`` & co."""
from __future__ import annotations

import numpy as np

from hloforge.frontend.ops._common import COMPLEX, FLOAT
from hloforge.frontend.ops.elementwise import BOOLEAN, SAME, define_rows

# pyname, op, operand dtypes, summary, numpy function, kinds evaluated, result, exact complex.
# The inverse trigonometric and hyperbolic functions are not evaluated: XLA's expansions, XLA's constant
# folder and numpy's libm each round them their own way.
UNARY = [
    ("asin", "chlo.asin", (FLOAT, COMPLEX), "Inverse sine", None, "fc", SAME, False),
    ("acos", "chlo.acos", (FLOAT, COMPLEX), "Inverse cosine", None, "fc", SAME, False),
    ("atan", "chlo.atan", (FLOAT, COMPLEX), "Inverse tangent", None, "fc", SAME, False),
    ("sinh", "chlo.sinh", (FLOAT, COMPLEX), "Hyperbolic sine", None, "fc", SAME, False),
    ("cosh", "chlo.cosh", (FLOAT, COMPLEX), "Hyperbolic cosine", None, "fc", SAME, False),
    ("asinh", "chlo.asinh", (FLOAT, COMPLEX), "Inverse hyperbolic sine", None, "fc", SAME, False),
    ("acosh", "chlo.acosh", (FLOAT, COMPLEX), "Inverse hyperbolic cosine", None, "fc", SAME, False),
    ("atanh", "chlo.atanh", (FLOAT, COMPLEX), "Inverse hyperbolic tangent", None, "fc", SAME, False),
    ("is_inf", "chlo.is_inf", (FLOAT,), "True where x is +-inf", np.isinf, "f", BOOLEAN, False),
    ("is_pos_inf", "chlo.is_pos_inf", (FLOAT,), "True where x is +inf", np.isposinf, "f", BOOLEAN, False),
    ("is_neg_inf", "chlo.is_neg_inf", (FLOAT,), "True where x is -inf", np.isneginf, "f", BOOLEAN, False),
    # real square is one correctly rounded product (XLA expands it to multiply); complex square is not
    ("square", "chlo.square", (FLOAT, COMPLEX), "x * x", np.square, "f", SAME, False),
    ("erfc", "chlo.erfc", (FLOAT,), "The complementary error function 1 - erf(x)", None, "f", SAME, False),
    ("bessel_i1e", "chlo.bessel_i1e", (FLOAT,), "The scaled modified Bessel function exp(-|x|) I1(x)", None, "f",
     SAME, False),
]

BINARY = [
    # not evaluated: steps next to 0 land on subnormals, which XLA:CPU keeps for 16-bit floats and
    # flushes for wider ones
    ("next_after", "chlo.next_after", (FLOAT,), "nextafter(lhs, rhs)", None, "fc", SAME, False),
    # series expansions of XLA's: not evaluated
    ("polygamma", "chlo.polygamma", (FLOAT,), "The polygamma function psi^(lhs)(rhs) (lhs: the order n)", None,
     "f", SAME, False),
    ("zeta", "chlo.zeta", (FLOAT,), "The Hurwitz zeta function zeta(lhs, rhs) (lhs: x, rhs: q)", None, "f",
     SAME, False),
]

_defined = define_rows(UNARY, BINARY)

(asin, acos, atan, sinh, cosh, asinh, acosh, atanh, is_inf, is_pos_inf, is_neg_inf, square, erfc, bessel_i1e) = (
    _defined[r[0]] for r in UNARY)
next_after, polygamma, zeta = (_defined[r[0]] for r in BINARY)
