"""The gamma family: gamma, loggamma and what jax builds on them (beta, dirichlet, chisquare, f, t).

jax 0.10's gamma sampler (``random_gamma_p``, lowered with ``vmap``): the key is split into one
key per element, and each element runs Marsaglia and Tsang's rejection loop on its own key (a
``stablehlo.while`` over all elements until every one has accepted, an inner loop redrawing the
normal until ``v > 0``). ``a < 1`` samples ``Gamma(a + 1)`` and boosts it by ``u**(1/a)`` (in log
space for loggamma). Written here over lane keys (``_lanes.py``), every element's arithmetic is
jax's op for op. The derivative in ``a`` is jax's implicit reparameterization: a custom jvp whose
tangent is ``t * random_gamma_grad(a, sample)`` (``/ sample`` in log space).
"""
from __future__ import annotations

import math

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.ad.custom import custom_jvp
from hloforge.frontend.lax.autodiff import stop_gradient
from hloforge.frontend.lax.control_flow import while_loop
from hloforge.frontend.lax.special import random_gamma_grad
from hloforge.frontend.numpy._base import broadcast_to, splat
from hloforge.frontend.random._eager import eager
from hloforge.frontend.random._keys import key_operand, shape_tuple, split2
from hloforge.frontend.random._lanes import lane_normal, lane_split, lane_uniform, lanes_of
from hloforge.frontend.random._params import (
    any_true, check_safe_cast, converted, float_dtype, key_arg, no_sharding, param, public, result_shape, with_params)
from hloforge.frontend.random._samplers import check_shape, finfo, normal_real
from hloforge.frontend.tracing import Tensor


# ---------------------------------------------------------------- the sampler

def _gamma_lanes(k1: Tensor, k2: Tensor, alpha: Tensor, log_space: bool) -> Tensor:
    """jax's ``_gamma_one`` for every lane: ``alpha`` and the keys of shape ``(n,)``."""
    dtype, shape = alpha.dtype, alpha.shape

    def c(v):
        return splat(v, dtype, shape)
    zero, one = c(0), c(1)
    boost_mask = ops.compare(alpha, one, "GE")
    alpha_orig = alpha
    alpha = ops.select(boost_mask, alpha, ops.add(alpha, one))
    d = ops.subtract(alpha, c(1.0 / 3.0))
    scale = ops.divide(c(1.0 / 3.0), ops.sqrt(d))
    (k1, k2), (sub1, sub2) = lane_split(k1, k2, 2)

    def rejected(X, V, U):  # (jax's _cond_fn: the loop goes on while it holds)
        squeeze = ops.compare(U, ops.subtract(one, ops.multiply(c(0.0331), ops.multiply(X, X))), "GE")
        log_test = ops.compare(ops.log(U), ops.add(ops.multiply(X, c(0.5)),
                                                   ops.multiply(d, ops.add(ops.subtract(one, V), ops.log(V)))), "GE")
        return ops.and_(squeeze, log_test)

    def normal_until_positive(x1, x2):
        def any_not_positive(carry):
            return any_true(ops.compare(carry[3], zero, "LE"))

        def draw(carry):
            a1, a2, x, v = carry
            more = ops.compare(v, zero, "LE")
            (n1, n2), (s1, s2) = lane_split(a1, a2, 2)
            x_new = lane_normal(s1, s2, dtype)
            v_new = ops.add(one, ops.multiply(x_new, scale))
            return [ops.select(more, new, old) for new, old in zip((n1, n2, x_new, v_new), carry)]
        _, _, x, v = while_loop(any_not_positive, draw, [x1, x2, zero, c(-1)])
        return x, v

    def any_rejected(carry):
        return any_true(rejected(*carry[2:]))

    def body(carry):
        more = rejected(*carry[2:])
        (n1, n2), (x1, x2), (u1, u2) = lane_split(carry[0], carry[1], 3)
        x, v = normal_until_positive(x1, x2)
        new = (n1, n2, ops.multiply(x, x), ops.multiply(ops.multiply(v, v), v), lane_uniform(u1, u2, dtype))
        return [ops.select(more, n, old) for n, old in zip(new, carry)]
    V = while_loop(any_rejected, body, [k1, k2, zero, one, c(2)])[3]
    u = lane_uniform(sub1, sub2, dtype)
    if log_space:
        log_samples = ops.neg(ops.neg(ops.log1p(ops.neg(u))))  # (-exponential(subkey))
        no_boost = ops.or_(boost_mask, ops.compare(log_samples, zero, "EQ"))
        log_boost = ops.select(no_boost, zero, ops.multiply(log_samples, ops.divide(one, alpha_orig)))
        return ops.add(ops.add(ops.log(d), ops.log(V)), log_boost)
    samples = ops.subtract(one, u)
    boost = ops.select(boost_mask, one, ops.power(samples, ops.divide(one, alpha_orig)))
    return ops.multiply(ops.multiply(d, V), boost)


def _gamma_of(log_space: bool):
    """``sample(keys, a)``: jax's ``random_gamma_p`` of each key of ``keys`` (uint32 ``(m, 2)``) and its
    row ``a[j]`` (``a``: ``(m, *shape)``, the sample's dtype), with jax's derivative in ``a``. Several
    keys share one rejection loop (beta's two gammas, f's two chi-squares): every element's
    arithmetic is its own, so each row is what a call with its key alone gives. The derivative is
    a custom jvp of the sample (``attach``), as jax's ``random_gamma_p`` defines it."""
    def sample(keys, a):
        n = math.prod(a.shape[1:])
        if n == 0:
            return splat(0, a.dtype, a.shape)
        k1, k2 = lanes_of(keys, n)
        flat = ops.reshape(a, (a.shape[0] * n,))
        return ops.reshape(_gamma_lanes(k1, k2, flat, log_space), a.shape)

    def attached(a, out):
        return out

    attached.__name__ = attached.__qualname__ = "loggamma" if log_space else "gamma"
    attach = custom_jvp(attached)

    def jvp(primals, tangents):
        (a, out), (a_dot, _) = primals, tangents
        return attach(a, out), ops.multiply(a_dot, _gamma_grad(out, a, log_space))
    attach.defjvp(jvp)

    def fn(keys, a):
        # the loop sees a held constant (no derivative goes through it); attach gives the sample
        # jax's derivative in a, read off the sample itself, so nothing is drawn twice
        return attach(a, sample(keys, stop_gradient(a)))
    return fn


def _gamma_grad(sample: Tensor, a: Tensor, log_space: bool) -> Tensor:
    """jax's ``_gamma_grad``: d sample / d a by implicit reparameterization."""
    if not log_space:
        return random_gamma_grad(a, sample)
    samples = ops.exp(sample)
    tiny = splat(finfo(samples.dtype).tiny, samples.dtype, samples.shape)
    samples = ops.select(ops.compare(samples, splat(0, samples.dtype, samples.shape), "EQ"), tiny, samples)
    return ops.divide(random_gamma_grad(a, samples), samples)


_SAMPLERS = {False: _gamma_of(False), True: _gamma_of(True)}


def gamma_impl(key: Tensor, a: Tensor, shape, dtype, log_space=False) -> Tensor:
    """jax's ``_gamma``: ``a`` converted to ``dtype`` and broadcast to ``shape``, then sampled."""
    return gammas_impl([key], [a], shape, dtype, log_space)[0]


def gammas_impl(keys, params, shape, dtype, log_space=False) -> list:
    """``gamma_impl`` of each key and parameter (one rejection loop for all)."""
    name = public("loggamma" if log_space else "gamma")
    for a in params:
        check_shape(name, shape, a.shape)
    stacked = ops.concatenate([ops.reshape(converted(a, dtype, shape), (1,) + tuple(shape)) for a in params], 0)
    key_rows = ops.concatenate([ops.reshape(k, (1, 2)) for k in keys], 0)
    out = _SAMPLERS[log_space](key_rows, stacked)
    return [ops.reshape(ops.slice(out, (j,) + (0,) * len(shape), (j + 1,) + tuple(shape)), tuple(shape))
            for j in range(len(params))]


@eager(static=("shape", "dtype", "log_space"))
def _gamma(key, a, shape, dtype, log_space):
    key = key_operand(public("loggamma" if log_space else "gamma"), key)
    return gamma_impl(key, converted(a, dtype), shape, dtype, log_space)


def _gamma_call(name, key, a, shape, dtype, out_sharding, log_space):
    name = public(name)
    key_arg(name, key)
    d = float_dtype(name, dtype)
    no_sharding(name, out_sharding)
    a, _ = param(name, "a", a, d)
    return _gamma(key, a, result_shape(name, shape, a), d, log_space)


def gamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """Gamma(a, 1) samples (jax.random.gamma, its rejection loop op for op).

    Marsaglia and Tsang: per element, on its own key of ``split(key, size)``, a ``stablehlo.while``
    draws a normal ``x`` (an inner loop until ``v = (1 + c x)**3 > 0``) and a uniform until the
    squeeze or log test accepts; ``a < 1`` boosts a ``Gamma(a + 1)`` sample by ``u**(1/a)``.
    Differentiable in ``a`` (jax's implicit reparameterization through random_gamma_grad).

    Args:
      key: uint32[2] key.
      a: shape parameter(s) > 0 (scalar, array or Tensor), broadcast to ``shape``.
      shape: result shape; None (default) is a's shape.
      dtype: a float dtype (float32 default).
      out_sharding: None (sharding is hf.jit's).
    Returns:
      An array of ``shape`` and ``dtype``.
    Example:
      >>> g = hf.random.gamma(key, 2.5, (1000,))
    """
    return _gamma_call("gamma", key, a, shape, dtype, out_sharding, False)


def loggamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """log of Gamma(a, 1) samples, accurate for small ``a`` (jax.random.loggamma).

    The gamma rejection loop of :func:`gamma`; the boost of ``a < 1`` is added in log space
    (``log(u) / a``), so ``exp(loggamma(key, a)) == gamma(key, a)`` to rounding.

    Args:
      key: uint32[2] key.
      a: shape parameter(s) > 0, broadcast to ``shape``.
      shape: result shape; None (default) is a's shape.
      dtype: a float dtype (float32 default).
      out_sharding: None.
    Returns:
      An array of ``shape`` and ``dtype``.
    Example:
      >>> lg = hf.random.loggamma(key, 0.01, (100,))
    """
    return _gamma_call("loggamma", key, a, shape, dtype, out_sharding, True)


# ---------------------------------------------------------------- built on gamma

@eager(static=("shape", "dtype"))
def _beta(key, a, b, shape, dtype):
    key = key_operand(public("beta"), key)
    a, b = (converted(x, dtype, shape) for x in (a, b))
    key_a, key_b = split2(key)
    log_a, log_b = gammas_impl([key_a, key_b], [a, b], shape, dtype, True)
    log_max = ops.maximum(log_a, log_b)
    scaled_a = ops.exp(ops.subtract(log_a, log_max))
    scaled_b = ops.exp(ops.subtract(log_b, log_max))
    return ops.divide(scaled_a, ops.add(scaled_a, scaled_b))


def beta(key, a, b, shape=None, dtype=None, *, out_sharding=None):
    """Beta(a, b) samples (jax.random.beta): ``ga / (ga + gb)`` of two loggamma samples (keys from
    ``split(key)``), scaled by their maximum first.

    Args:
      key: uint32[2] key.
      a, b: parameters > 0 (scalars, arrays or Tensors), broadcast to ``shape``.
      shape: result shape; None (default) broadcasts a and b.
      dtype: a float dtype (float32 default); a and b must cast to it safely.
      out_sharding: None.
    Returns:
      An array of ``shape`` and ``dtype`` in [0, 1].
    Example:
      >>> x = hf.random.beta(key, 2.0, 5.0, (100,))
    """
    name = public("beta")
    key_arg(name, key)
    d = float_dtype(name, dtype)
    no_sharding(name, out_sharding)
    a, b = param(name, "a", a, d), param(name, "b", b, d)
    check_safe_cast(name, d, a=a, b=b)
    return _beta(key, a[0], b[0], result_shape(name, shape, a[0], b[0]), d)


def softmax_last(x: Tensor) -> Tensor:
    """jax.nn.softmax(x, -1): ``exp(x - max) / sum(exp(x - max))``, the max held constant under
    differentiation, float16/bfloat16 summed in float32 (jnp.sum)."""
    axis = x.ndim - 1
    keep = x.shape[:-1] + (1,)
    x_max = ops.reshape(ops.reduce(x, -np.inf, (axis,), "max"), keep)
    unnormalized = ops.exp(ops.subtract(x, broadcast_to(stop_gradient(x_max), x.shape)))
    wide = unnormalized if unnormalized.dtype.itemsize >= 4 else ops.convert(unnormalized, np.float32)
    total = ops.reshape(ops.reduce(wide, 0, (axis,), "add"), keep)
    if total.dtype != x.dtype:
        total = ops.convert(total, x.dtype)
    return ops.divide(unnormalized, broadcast_to(total, x.shape))


@eager(static=("shape", "dtype"))
def _dirichlet(key, alpha, shape, dtype):
    key = key_operand(public("dirichlet"), key)
    alpha = converted(alpha, dtype)
    full = tuple(shape) + alpha.shape[-1:]
    return softmax_last(gamma_impl(key, alpha, full, dtype, True))


def dirichlet(key, alpha, shape=None, dtype=None, *, out_sharding=None):
    """Dirichlet(alpha) samples (jax.random.dirichlet): the softmax of loggamma samples along the
    last axis.

    Args:
      key: uint32[2] key.
      alpha: concentrations of shape ``(..., n)`` (array or Tensor), all > 0.
      shape: the batch shape (without the last axis); None (default) is ``alpha.shape[:-1]``.
      dtype: a float dtype (float32 default).
      out_sharding: None.
    Returns:
      An array of shape ``shape + (n,)`` whose last axis sums to 1.
    Example:
      >>> w = hf.random.dirichlet(key, np.ones(3), (10,))
    """
    name = public("dirichlet")
    key_arg(name, key)
    d = float_dtype(name, dtype)
    no_sharding(name, out_sharding)
    alpha, _ = param(name, "alpha", alpha, d)
    alpha_shape = tuple(np.shape(alpha)) if not isinstance(alpha, Tensor) else alpha.shape
    if len(alpha_shape) < 1:
        raise ValueError(f"{name}: alpha must have at least one dimension (alpha.ndim >= 1), got shape {alpha_shape}")
    if shape is None:
        shape = alpha_shape[:-1]
    else:
        shape = shape_tuple(name, shape)
        check_shape(name, shape, alpha_shape[:-1])
    return _dirichlet(key, alpha, shape, d)


@eager(static=("shape", "dtype"))
def _chisquare(key, df, shape, dtype):
    key = key_operand(public("chisquare"), key)
    return chisquare_impl(key, converted(df, dtype), shape, dtype)


def chisquare_impl(key: Tensor, df: Tensor, shape, dtype) -> Tensor:
    """jax's ``_chisquare``: ``2 exp(loggamma(key, df / 2))``."""
    return chisquares_impl([key], [df], shape, dtype)[0]


def chisquares_impl(keys, dfs, shape, dtype) -> list:
    """``chisquare_impl`` of each key and df (one rejection loop for all)."""
    halves = [ops.divide(df, splat(2, dtype, df.shape)) for df in dfs]
    two = splat(2, dtype, shape)
    return [ops.multiply(ops.exp(log_g), two) for log_g in gammas_impl(keys, halves, shape, dtype, True)]


def chisquare(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Chi-square samples with ``df`` degrees of freedom (jax.random.chisquare): ``2 exp(loggamma(df / 2))``.

    Args:
      key: uint32[2] key.
      df: degrees of freedom > 0 (scalar, array or Tensor), broadcast to ``shape``.
      shape: result shape; None (default) is df's shape.
      dtype: a float dtype (float32 default); df must cast to it safely.
      out_sharding: None.
    Returns:
      An array of ``shape`` and ``dtype``.
    Example:
      >>> x = hf.random.chisquare(key, 3.0, (100,))
    """
    shape, d, (df,) = with_params("chisquare", key, dtype, out_sharding, shape, df=df)
    return _chisquare(key, df, shape, d)


@eager(static=("shape", "dtype"))
def _f(key, dfnum, dfden, shape, dtype):
    key = key_operand(public("f"), key)
    dfden, dfnum = converted(dfden, dtype), converted(dfnum, dtype)
    key_dfd, key_dfn = split2(key)
    chi2_dfn, chi2_dfd = chisquares_impl([key_dfn, key_dfd], [dfnum, dfden], shape, dtype)
    num = ops.divide(chi2_dfn, broadcast_to(dfnum, shape))
    den = ops.divide(chi2_dfd, broadcast_to(dfden, shape))
    return ops.divide(num, den)


def f(key, dfnum, dfden, shape=None, dtype=None, *, out_sharding=None):
    """F-distribution samples (jax.random.f): ``(chi2(dfnum) / dfnum) / (chi2(dfden) / dfden)``,
    the two chi-squares from ``split(key)``.

    Args:
      key: uint32[2] key.
      dfnum, dfden: degrees of freedom > 0 of the numerator and denominator, broadcast to ``shape``.
      shape: result shape; None (default) broadcasts dfnum and dfden.
      dtype: a float dtype (float32 default); the parameters must cast to it safely.
      out_sharding: None.
    Returns:
      An array of ``shape`` and ``dtype``.
    Example:
      >>> x = hf.random.f(key, 5.0, 10.0, (100,))
    """
    shape, d, (dfnum, dfden) = with_params("f", key, dtype, out_sharding, shape, dfnum=dfnum, dfden=dfden)
    return _f(key, dfnum, dfden, shape, d)


@eager(static=("shape", "dtype"))
def _t(key, df, shape, dtype):
    key = key_operand(public("t"), key)
    df = converted(df, dtype)
    key_n, key_g = split2(key)
    n = normal_real(key_n, shape, dtype)
    half_df = ops.divide(df, splat(2, dtype, df.shape))
    g = gamma_impl(key_g, half_df, shape, dtype)
    return ops.multiply(n, ops.sqrt(ops.divide(broadcast_to(half_df, shape), g)))


def t(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Student's t samples with ``df`` degrees of freedom (jax.random.t): ``n * sqrt((df/2) / g)``
    for a normal ``n`` and a Gamma(df/2) ``g`` (keys from ``split(key)``).

    Args:
      key: uint32[2] key.
      df: degrees of freedom > 0, broadcast to ``shape``.
      shape: result shape; None (default) is df's shape.
      dtype: a float dtype (float32 default); df must cast to it safely.
      out_sharding: None.
    Returns:
      An array of ``shape`` and ``dtype``.
    Example:
      >>> x = hf.random.t(key, 4.0, (100,))
    """
    shape, d, (df,) = with_params("t", key, dtype, out_sharding, shape, df=df)
    return _t(key, df, shape, d)


__all__ = ["gamma", "loggamma", "beta", "dirichlet", "chisquare", "f", "t"]
