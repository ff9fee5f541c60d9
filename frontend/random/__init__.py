"""``hloforge.random``: jax.random's API over threefry2x32, bit-for-bit equal to jax.random.

Keys are plain uint32[2] arrays (jax's "legacy" keys; a jax typed key array is accepted and
read with ``jax.random.key_data``). Everything is built from hloforge.ops: the threefry2x32
hash is 20 rounds of stablehlo.add/xor/shift_left/shift_right_logical/or, and the samplers
follow jax 0.10's derivations (``jax_threefry_partitionable`` on, its default) op for op, so
the same key gives the same bits as jax and floats within an ulp (the same StableHLO ops).
All 47 public callables of jax.random are here (docs/random.md has the table).

Default dtypes are jax's with x64 disabled: uint32 bits, float32 floats, int32 integers.

Inside a trace (hf.jit, hf.trace) the functions emit IR. Outside one they run like jax's:
each call is compiled with hf.jit (cached per shape, dtype and other static arguments) and
returns an array; ``PRNGKey`` is computed in numpy.
"""
from hloforge.frontend.random._keys import PRNGKey, bits, fold_in, key, split
from hloforge.frontend.random._samplers import bernoulli, normal, randint, truncated_normal, uniform
from hloforge.frontend.random._shuffle import choice, permutation
from hloforge.frontend.random._key_api import clone, key_data, key_dtype, key_impl, wrap_key_data
from hloforge.frontend.random._continuous import (
    cauchy, exponential, gumbel, laplace, logistic, lognormal, pareto, rayleigh, triangular, wald)
from hloforge.frontend.random._gamma import beta, chisquare, dirichlet, f, gamma, loggamma, t
from hloforge.frontend.random._norms import (
    ball, double_sided_maxwell, generalized_normal, maxwell, rademacher, weibull_min)
from hloforge.frontend.random._discrete import categorical, geometric, poisson
from hloforge.frontend.random._binomial import binomial, multinomial
from hloforge.frontend.random._multivariate import multivariate_normal, orthogonal

__all__ = ["PRNGKey", "key", "split", "fold_in", "bits", "uniform", "normal", "truncated_normal",
           "bernoulli", "randint", "permutation", "choice",
           "key_data", "wrap_key_data", "key_impl", "key_dtype", "clone",
           "exponential", "cauchy", "laplace", "logistic", "gumbel", "pareto", "rayleigh", "triangular",
           "lognormal", "wald", "gamma", "loggamma", "beta", "dirichlet", "chisquare", "f", "t",
           "rademacher", "maxwell", "double_sided_maxwell", "weibull_min", "generalized_normal", "ball",
           "categorical", "geometric", "poisson", "binomial", "multinomial", "multivariate_normal", "orthogonal"]

from hloforge.frontend.naming import name_missing_attributes as _public_errors  # noqa: E402
_public_errors(globals())  # (AttributeErrors name hloforge.random)
