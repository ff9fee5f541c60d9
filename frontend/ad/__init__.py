"""Automatic differentiation on StableHLO IR: hf.grad, vjp, jvp, jacfwd, jacrev, hessian,
custom_vjp/custom_jvp, and Module.vjp / Module.jvp. The rules live in the registry
(OpInfo.jvp / OpInfo.vjp), set by the rules_* modules imported here."""
from hloforge.frontend.ad import (  # noqa: F401  (they fill OPS)
    bits, collective, compare, convert, convolution, elementwise, factorization, fft, linalg, normalization, pad,
    rules_control, rules_stop_gradient, shape, slicing, sort, tuples, window)
from hloforge.frontend.ad import module_ad  # noqa: F401  (attaches Module.vjp / Module.jvp)
from hloforge.frontend.ad.custom import custom_jvp, custom_vjp
from hloforge.frontend.ad.api import grad, hessian, jacfwd, jacrev, jvp, value_and_grad, vjp

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "jacfwd", "jacrev", "hessian", "custom_vjp", "custom_jvp"]
