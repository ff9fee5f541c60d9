"""Automatic differentiation on StableHLO IR: hf.grad, vjp, jvp, jacfwd, jacrev, hessian,
custom_vjp/custom_jvp, and Module.vjp / Module.jvp. The rules live in the registry
(``OpInfo.rules["jvp"]`` / ``["vjp"]``), set with ``registry.def_rule`` by the modules imported here,
one per op family of ``frontend/ops/`` (same name); ``lax_linalg`` and ``lax_ordering`` hold the rules of
hloforge.lax.linalg's and hloforge.lax.ordering's composites."""
from hloforge.frontend.ad import (  # noqa: F401  (they fill OPS)
    bits, collective, compare, control_flow, convert, convolution, elementwise, factorization, fft, lax_linalg,
    lax_ordering, linalg, normalization, pad, shape, slicing, sort, structure, top_k, tuples, window)
from hloforge.frontend.ad import module_ad  # noqa: F401  (attaches Module.vjp / Module.jvp)
from hloforge.frontend.ad.custom import custom_jvp, custom_vjp
from hloforge.frontend.ad.api import grad, hessian, jacfwd, jacrev, jvp, value_and_grad, vjp

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "jacfwd", "jacrev", "hessian", "custom_vjp", "custom_jvp"]
