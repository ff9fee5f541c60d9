"""hloforge.lax's special functions (erfc, bessel_i0e/i1e, zeta, polygamma, betainc, igamma_grad_a,
random_gamma_grad) against jax.lax on the same inputs, edge values included (a few hf.jit and
jax.jit programs per dtype); and their errors."""
from __future__ import annotations

import numpy as np
import pytest

from hloforge import lax

from lax_helpers import both, refuses

EDGES = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 7.9, 8.0, 8.1, 30.0, -30.0, 100.0, np.inf, -np.inf, np.nan]
NAMES = ["erfc", "bessel_i0e", "bessel_i1e", "zeta", "polygamma", "betainc", "igamma_grad_a", "random_gamma_grad"]


def _inputs(dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = np.concatenate([EDGES, rng.uniform(-10, 10, 15)]).astype(dtype)
    a = np.concatenate([[0.5, 1, 2, 3, 0.1, 10, 0, -1, np.nan], rng.uniform(0.1, 8, 23)]).astype(dtype)
    q = (np.abs(x) + 0.5).astype(dtype)  # (zeta's q, the x of the incomplete gamma functions: NaN, inf too)
    return x, a, a[::-1].copy(), q, rng.uniform(0, 1, 32).astype(dtype), np.floor(a).astype(dtype)


def _special(L, names, x, a, b, q, u, m):
    fns = {"erfc": lambda: L.erfc(x), "bessel_i0e": lambda: L.bessel_i0e(x), "bessel_i1e": lambda: L.bessel_i1e(x),
           "zeta": lambda: L.zeta(L.add(a, L.full_like(a, 1)), q), "polygamma": lambda: L.polygamma(m, q),
           "betainc": lambda: L.betainc(a, b, u), "igamma_grad_a": lambda: L.igamma_grad_a(a, q),
           "random_gamma_grad": lambda: L.random_gamma_grad(a, q)}
    return [fns[n]() for n in names]


# (dtype, functions) per program: XLA's compile time grows faster than the program, and the two
# igamma derivatives share their while loops (slow to compile), so each runs on one dtype
CASES = [(np.float32, NAMES[:5]), (np.float32, ["betainc"]), (np.float32, ["igamma_grad_a"]),
         (np.float64, NAMES[:6]), (np.float64, ["random_gamma_grad"]), (np.float16, NAMES[:5])]


@pytest.mark.parametrize("dtype,names", CASES, ids=[f"{np.dtype(d).name}-{'-'.join(n)}" for d, n in CASES])
def test_special_functions_match_jax(dtype, names):
    both(lambda L, *args: _special(L, names, *args), *_inputs(dtype), labels=names)


ERRORS = [
    (lambda x: lax.erfc(lax.convert_element_type(x, np.int32)), TypeError,
     r"hloforge\.lax\.erfc does not accept dtype int32 at position 0\. Accepted dtypes at position 0 are subtypes of "
     r"floating\."),
    (lambda x: lax.zeta(x, lax.convert_element_type(x, np.float16)), TypeError,
     r"hloforge\.lax\.zeta requires arguments to have the same dtypes, got float32, float16\."),
    (lambda x: lax.betainc(x, x, x[:2]), TypeError, r"hloforge\.lax\.betainc got incompatible shapes for broadcasting"),
    (lambda x: lax.polygamma(1.0, lax.convert_element_type(x, np.float64)), TypeError,
     r"polygamma requires arguments to have the same dtypes, got float32, float64"),
    (lambda x: lax.random_gamma_grad(x), TypeError, r"random_gamma_grad takes two arguments \(a, x\), got 1"),
    (lambda x: lax.bessel_i1e(lax.complex(x, x)), TypeError, r"bessel_i1e does not accept dtype complex64"),
]


@pytest.mark.parametrize("fn,exc,match", ERRORS)
def test_errors(fn, exc, match):
    refuses(fn, np.ones(3, np.float32), exc=exc, match=match)
