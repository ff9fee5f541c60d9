"""binomial and multinomial (jax.random's): inversion by geometric waiting times for ``n q <= 10``,
Hormann's BTRS rejection otherwise (both loops run; a select picks), and multinomial as a
``scan`` of binomials over the categories."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax.control_flow import scan, while_loop
from hloforge.frontend.lax.ordering import cumsum
from hloforge.frontend.numpy._base import broadcast_to, splat
from hloforge.frontend.random._discrete import loop_bound
from hloforge.frontend.random._eager import eager
from hloforge.frontend.random._lanes import loop_split, loop_uniform
from hloforge.frontend.random._keys import key_operand, shape_tuple, split_keys
from hloforge.frontend.random._params import (
    any_true, as_dtype, dtype_of, float_dtype, inexact_dtype, key_arg, param, promote, public, shape_of, tensor,
    weak_dtype)
from hloforge.frontend.random._samplers import check_shape
from hloforge.frontend.tracing import Tensor

_BOOL = np.dtype(np.bool_)
_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                  0.00925546218271273, 0.00833056343336287)


def _c(value, like: Tensor) -> Tensor:
    return splat(value, like.dtype, like.shape)


def _stirling_approx_tail(k: Tensor) -> Tensor:
    """jax's ``_stirling_approx_tail``: a table for k <= 9, the series beyond."""
    use_table = ops.compare(k, _c(9, k), "LE")
    k = ops.clamp(splat(0.0, k.dtype, ()), k, splat(9.0, k.dtype, ()))
    kp1 = ops.add(k, _c(1, k))
    kp1sq = ops.multiply(kp1, kp1)
    inner = ops.subtract(_c(1.0 / 360, k), ops.divide(_c(1.0 / 1260, k), kp1sq))
    approx = ops.divide(ops.subtract(_c(1.0 / 12, k), ops.divide(inner, kp1sq)), kp1)
    index = ops.convert(ops.floor(k), np.dtype(np.int32))
    table = _c(_STIRLING_TAIL[0], k)
    for i, v in enumerate(_STIRLING_TAIL[1:], 1):  # (the table lookup: exact values, as jax's gather)
        table = ops.select(ops.compare(index, splat(i, index.dtype, index.shape), "EQ"), _c(v, k), table)
    return ops.select(use_table, table, approx)


def _inversion(key: Tensor, count: Tensor, prob: Tensor, shape, dtype, bound) -> Tensor:
    counter, top = bound
    log1minusprob = ops.log1p(ops.neg(prob))

    def cond(carry):
        i, _, geom_sum, _ = carry
        return ops.and_(any_true(ops.compare(geom_sum, count, "LE")), ops.compare(i, splat(top, counter, ()), "LT"))

    def body(carry):
        i, num_geom, geom_sum, key = carry
        subkey, key = loop_split(key, 2)
        num_geom = ops.select(ops.compare(geom_sum, count, "LE"), ops.add(num_geom, _c(1, num_geom)), num_geom)
        u = loop_uniform(subkey, shape, prob.dtype)
        geom = ops.ceil(ops.divide(ops.log(u), log1minusprob))
        return ops.add(i, splat(1, counter, ())), num_geom, ops.add(geom_sum, geom), key
    init = (splat(0, counter, ()), _c(0, prob), _c(0, prob), key)
    k = while_loop(cond, body, init)[1]
    return ops.convert(ops.subtract(k, _c(1, k)), dtype)


def _btrs(key: Tensor, count: Tensor, prob: Tensor, shape, dtype, bound) -> Tensor:
    counter, top = bound
    c = _c
    one_minus_p = ops.subtract(c(1, prob), prob)
    stddev = ops.sqrt(ops.multiply(ops.multiply(count, prob), one_minus_p))
    b = ops.add(c(1.15, prob), ops.multiply(c(2.53, prob), stddev))
    a = ops.add(ops.add(c(-0.0873, prob), ops.multiply(c(0.0248, prob), b)), ops.multiply(c(0.01, prob), prob))
    mean = ops.add(ops.multiply(count, prob), c(0.5, prob))
    v_r = ops.subtract(c(0.92, prob), ops.divide(c(4.2, prob), b))
    r = ops.divide(prob, one_minus_p)
    alpha = ops.multiply(ops.add(c(2.83, prob), ops.divide(c(5.1, prob), b)), stddev)
    m = ops.floor(ops.multiply(ops.add(count, c(1, count)), prob))
    log_m_term = ops.multiply(ops.add(m, c(0.5, m)), ops.log(ops.divide(
        ops.add(m, c(1, m)), ops.multiply(r, ops.add(ops.subtract(count, m), c(1, m))))))

    def cond(carry):
        i, _, accepted, _ = carry
        return ops.and_(any_true(ops.not_(accepted)), ops.compare(i, splat(top, counter, ()), "LT"))

    def body(carry):
        i, k_out, accepted, key = carry
        key, sub0, sub1 = loop_split(key, 3)
        u = loop_uniform(sub0, shape, prob.dtype)
        v = loop_uniform(sub1, shape, prob.dtype)
        u = ops.subtract(u, c(0.5, u))
        us = ops.subtract(c(0.5, u), ops.abs(u))
        accept1 = ops.and_(ops.compare(us, c(0.07, us), "GE"), ops.compare(v, v_r, "LE"))
        k = ops.floor(ops.add(ops.multiply(ops.add(ops.divide(ops.multiply(c(2, a), a), us), b), u), mean))
        reject = ops.or_(ops.compare(k, c(0, k), "LT"), ops.compare(k, count, "GT"))
        v = ops.log(ops.divide(ops.multiply(v, alpha), ops.add(ops.divide(a, ops.multiply(us, us)), b)))
        count_m1 = ops.add(ops.subtract(count, m), c(1, m))
        count_k1 = ops.add(ops.subtract(count, k), c(1, k))
        ub = ops.add(log_m_term, ops.multiply(ops.add(count, c(1, count)), ops.log(ops.divide(count_m1, count_k1))))
        ub = ops.add(ub, ops.multiply(ops.add(k, c(0.5, k)),
                                      ops.log(ops.divide(ops.multiply(r, count_k1), ops.add(k, c(1, k))))))
        ub = ops.add(ub, _stirling_approx_tail(m))
        ub = ops.add(ub, _stirling_approx_tail(ops.subtract(count, m)))
        ub = ops.subtract(ub, _stirling_approx_tail(k))
        ub = ops.subtract(ub, _stirling_approx_tail(ops.subtract(count, k)))
        accept = ops.or_(accept1, ops.and_(ops.not_(reject), ops.compare(v, ub, "LE")))
        return (ops.add(i, splat(1, counter, ())), ops.select(accept, k, k_out), ops.or_(accepted, accept), key)
    init = (splat(0, counter, ()), c(-1, prob), splat(False, _BOOL, shape), key)
    return ops.convert(while_loop(cond, body, init)[1], dtype)


def binomial_impl(key: Tensor, count: Tensor, prob: Tensor, shape, dtype) -> Tensor:
    """jax's ``_binomial``: ``count`` and ``prob`` of one float dtype, broadcast to ``shape``."""
    count, prob = broadcast_to(count, shape), broadcast_to(prob, shape)
    p_lt_half = ops.compare(prob, _c(0.5, prob), "LT")
    q = ops.select(p_lt_half, prob, ops.subtract(_c(1.0, prob), prob))
    count_nan_or_neg = ops.or_(ops.compare(count, count, "NE"), ops.compare(count, _c(0.0, count), "LT"))
    count_inf = ops.is_inf(count)
    q_is_nan = ops.compare(q, q, "NE")
    q_l_0 = ops.compare(q, _c(0.0, q), "LT")
    q = ops.select(ops.or_(q_is_nan, q_l_0), _c(0.01, q), q)
    use_inversion = ops.or_(count_nan_or_neg, ops.compare(ops.multiply(count, q), _c(10.0, q), "LE"))
    count = ops.floor(count)
    count_inv = ops.select(use_inversion, count, _c(0.0, count))
    count_btrs = ops.select(use_inversion, _c(1e4, count), count)
    q_btrs = ops.select(use_inversion, _c(0.5, q), q)
    bound = loop_bound(dtype)
    samples = ops.select(use_inversion, _inversion(key, count_inv, q, shape, dtype, bound),
                         _btrs(key, count_btrs, q_btrs, shape, dtype, bound))
    invalid = ops.or_(ops.or_(q_l_0, q_is_nan), count_nan_or_neg)
    samples = ops.select(invalid, splat(np.nan, dtype, shape), samples)
    samples = ops.select(ops.and_(count_inf, ops.not_(invalid)), splat(np.inf, dtype, shape), samples)
    keep = ops.or_(ops.or_(ops.or_(p_lt_half, count_nan_or_neg), q_is_nan), count_inf)
    return ops.select(keep, samples, ops.subtract(ops.convert(count, dtype), samples))


@eager(static=("shape", "dtype"))
def _binomial(key, n, p, shape, dtype):
    key = key_operand(public("binomial"), key)
    p = tensor(p)
    count = ops.convert(tensor(n), p.dtype) if tensor(n).dtype != p.dtype else tensor(n)
    return binomial_impl(key, count, p, shape, dtype)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) samples (jax.random.binomial), as floats.

    Computed in p's float dtype (float32 for Python scalars and integers): inversion by geometric
    waiting times where ``n min(p, 1-p) <= 10``, BTRS rejection (Stirling tails) elsewhere, both
    a ``stablehlo.while``; NaN for invalid parameters, inf for infinite ``n``.

    Args:
      key: uint32[2] key.
      n: numbers of trials (scalars, arrays or Tensors; floats are floored).
      p: success probabilities.
      shape: result shape; None (default) broadcasts n and p.
      dtype: the result's float dtype (float32 default).
    Returns:
      A float array of ``shape``.
    Example:
      >>> k = hf.random.binomial(key, 20, 0.3, (100,))
    """
    name = public("binomial")
    key_arg(name, key)
    d = float_dtype(name, dtype)
    (n, _), (p, p_weak) = param(name, "n", n, d), param(name, "p", p, d)
    p = as_dtype(p, inexact_dtype(p, p_weak, d))
    if shape is None:
        try:
            shape = tuple(np.broadcast_shapes(shape_of(n), shape_of(p)))
        except ValueError:
            raise ValueError(f"{name}: n shape {shape_of(n)} and p shape {shape_of(p)} cannot be broadcast "
                             "together") from None
    else:
        shape = shape_tuple(name, shape)
        check_shape(name, shape, shape_of(n), shape_of(p))
    return _binomial(key, n, p, shape, d)


# ---------------------------------------------------------------- multinomial

@eager(static=("shape", "dtype", "unroll"))
def _multinomial(key, n, p, shape, dtype, unroll):
    key = key_operand(public("multinomial"), key)
    n, p = tensor(n), tensor(p)
    n, p = broadcast_to(n, shape[:-1]), broadcast_to(p, shape)
    p = ops.transpose(p, (p.ndim - 1,) + tuple(range(p.ndim - 1)))
    remaining = cumsum(p, 0, reverse=True)
    ratios = ops.divide(p, ops.select(ops.compare(remaining, _c(0, remaining), "EQ"), _c(1, remaining), remaining))
    keys = split_keys(key, (ratios.shape[0],))

    def step(remainder, ratio_key):
        ratio, k = ratio_key
        prob = ops.minimum(ops.maximum(ratio, _c(0, ratio)), _c(1, ratio))
        count = binomial_impl(k, remainder, prob, remainder.shape, remainder.dtype)
        return ops.subtract(remainder, count), count
    _, counts = scan(step, n, (ratios, keys), unroll=unroll)
    counts = ops.transpose(counts, tuple(range(1, counts.ndim)) + (0,))
    return counts if counts.dtype == dtype else ops.convert(counts, dtype)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial(n, p) counts (jax.random.multinomial): a ``scan`` over the categories drawing
    ``binomial(remaining trials, p_i / remaining probability)`` with the keys of
    ``split(key, categories)``.

    Args:
      key: uint32[2] key.
      n: numbers of trials, broadcast to ``shape[:-1]``.
      p: probabilities along the last axis.
      shape: the full result shape, categories last (jax broadcasts p to it); None (default) is p's shape.
      dtype: the result's float dtype (float32 default).
      unroll: the scan's unroll (accepted; XLA unrolls as it sees fit).
    Returns:
      A float array of ``shape`` (counts per category).
    Example:
      >>> c = hf.random.multinomial(key, 10.0, np.array([0.2, 0.3, 0.5], np.float32))
    """
    name = public("multinomial")
    key_arg(name, key)
    d = float_dtype(name, dtype)
    (n, n_weak), (p, p_weak) = param(name, "n", n, d), param(name, "p", p, d)
    strong = [dtype_of(x) for x, weak in ((n, n_weak), (p, p_weak)) if not weak]
    joint = promote(*strong) if len(strong) == 2 else strong[0] if strong else weak_dtype(d)
    joint = joint if dtypes.is_float(joint) else weak_dtype(d)  # (jax's promote_dtypes_inexact)
    n, p = as_dtype(n, joint), as_dtype(p, joint)
    shape = shape_of(p) if shape is None else shape_tuple(name, shape)
    if not shape:
        raise ValueError(f"{name}: p must have at least one dimension (the categories), got shape {shape_of(p)}")
    for what, x, target in (("n", n, shape[:-1]), ("p", p, shape)):
        try:
            ok = tuple(np.broadcast_shapes(shape_of(x), target)) == tuple(target)
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"{name}: {what} of shape {shape_of(x)} cannot be broadcast to {tuple(target)}")
    return _multinomial(key, n, p, shape, d, unroll)


__all__ = ["binomial", "multinomial"]
