"""Sampling from arrays: permutation and choice (jax.random's derivations, bit-for-bit)."""
from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax.ordering import cumsum
from hloforge.frontend.numpy._base import astype, splat
from hloforge.frontend.random._eager import eager
from hloforge.frontend.random._keys import key_operand, no_sharding, raw_bits, split2
from hloforge.frontend.random._samplers import F32, I32, _randint_impl, gumbel_impl, uniform_impl
from hloforge.frontend.tracing import Tensor, as_tensor

_UINT32_MAX = 2 ** 32 - 1


def _rounds(size: int) -> int:
    """jax's static number of sort rounds: enough that 32-bit sort keys make ties unlikely."""
    return int(np.ceil(3 * np.log(max(1, size)) / np.log(_UINT32_MAX)))


def _shuffle(key: Tensor, x: Tensor, axis: int, key_length=None) -> Tensor:
    """jax's ``_shuffle``: stable sorts along ``axis`` by fresh 32-bit keys, one per round.

    ``key_length``: draw the keys for a 1-d ``arange(key_length)`` (jax's non-independent
    permutation) and sort every slice of ``x`` by them, which equals jax's gather by the
    shuffled indices.
    """
    keys_shape = x.shape if key_length is None else (key_length,)
    for _ in range(_rounds(math.prod(keys_shape))):
        key, subkey = split2(key)
        sort_keys = raw_bits(subkey, 32, keys_shape)
        if key_length is not None:
            sort_keys = ops.broadcast_in_dim(sort_keys, x.shape, (axis,))
        _, x = ops.sort([sort_keys, x], axis, "LT", is_stable=True)
    return x


def _axis(name: str, axis, ndim: int) -> int:
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{name}: axis must be an int, got {axis!r}") from None
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim


def _static_int(name: str, x):
    """A Python int for an int-like ``x`` (not a Tensor), else None."""
    if isinstance(x, Tensor) or isinstance(x, (bool, np.bool_)):
        return None
    if isinstance(x, (int, np.integer)):
        return int(x)
    return None


_MAX_POPULATION = 2 ** 31  # int32 indices 0 .. 2**31 - 1 (jax's index dtype without x64)


def _check_population(name: str, what: str, n: int) -> None:
    if n > _MAX_POPULATION:
        raise OverflowError(f"{name}: {what} = {n} is too large: its indices are int32 (jax's default without "
                            f"x64), so the population can have at most 2**31 = {_MAX_POPULATION} entries")


def static_population(value):
    """A concrete 0-d integer array (numpy or jax) as a Python int, so that it stays static as jax
    treats it; anything else unchanged."""
    if isinstance(value, (Tensor, int)) or not hasattr(value, "dtype") or np.shape(value) != ():
        return value
    return int(value) if np.dtype(value.dtype).kind in "iu" else value


def _arange(n: int) -> Tensor:
    return ops.iota((n,), I32) if n > 0 else splat(0, I32, (0,))


def _array_operand(name: str, what: str, x) -> Tensor:
    if isinstance(x, Tensor):
        return as_tensor(x, what=f"{name} {what}")
    try:
        value = np.asarray(x)
    except (TypeError, ValueError):
        value = np.asarray(None)
    if value.dtype == object:
        raise TypeError(f"{name}: {what} must be an int or an array, got {type(x).__name__}")
    if isinstance(x, (list, tuple)):
        value = python_values(value)
    return as_tensor(value, what=f"{name} {what}")


def python_values(value: np.ndarray) -> np.ndarray:
    """Python lists take jax's default dtypes (x64 off): int32, float32, complex64."""
    default = {"i": I32, "u": I32, "f": F32, "c": np.dtype(np.complex64)}.get(value.dtype.kind)
    if default is None or (value.dtype.kind in "iu" and value.size
                           and not -2 ** 31 <= int(value.min()) <= int(value.max()) < 2 ** 31):
        return value
    return value.astype(default)


@eager(static=("axis", "independent"), dynamic={"x": static_population})
def permutation(key, x, axis=0, independent=False, *, out_sharding=None):
    """A random permutation of ``range(x)`` or of ``x`` along ``axis`` (jax.random.permutation).

    Sort-based shuffling: ``ceil(3 ln(n) / ln(2**32 - 1))`` rounds (one for n < 1600) of a stable
    stablehlo.sort by fresh 32-bit random keys. Bit-for-bit equal to jax's result.

    Args:
      key: uint32[2] key.
      x: a Python int ``n`` (permute ``arange(n)``, int32 as jax) or an array/Tensor of rank >= 1.
      axis: the axis to permute along.
      independent: shuffle every slice along ``axis`` independently (default: one permutation
        of the slices, the same for all).
      out_sharding: None (sharding is hf.jit's).
    Returns:
      The permuted array (x's shape and dtype).
    Example:
      >>> order = hf.random.permutation(key, 10)
    """
    key = key_operand("permutation", key)
    no_sharding("hloforge.random.permutation", out_sharding)
    n = _static_int("permutation", x)
    if n is not None or np.ndim(x) == 0 and not isinstance(x, Tensor):
        if n is None:
            value = np.asarray(x)
            if not dtypes.is_integer(value.dtype):
                raise TypeError(f"permutation: x must be an integer or at least 1-dimensional, got {x!r}")
            n = int(value)
        _axis("permutation", axis, 1)
        _check_population("permutation", "x", n)
        return _shuffle(key, _arange(n), 0)
    x = _array_operand("permutation", "x", x)
    if x.ndim == 0:
        raise TypeError(f"permutation: x must be a Python int or an array of rank >= 1, got {x} "
                        "(a traced 0-d x has no static length)")
    axis = _axis("permutation", axis, x.ndim)
    if independent or x.ndim == 1:
        return _shuffle(key, x, axis)
    return _shuffle(key, x, axis, key_length=x.shape[axis])


# ---------------------------------------------------------------- choice

def _take(x: Tensor, indices: Tensor, axis: int) -> Tensor:
    """``x`` indexed by in-range 1-d ``indices`` along ``axis`` (jnp.take), exactly for every dtype:
    a variadic stablehlo.reduce over a one-hot mask picks each element (O(k * n) memory)."""
    k, n = indices.shape[0], x.shape[axis]
    full = x.shape[:axis] + (k, n) + x.shape[axis + 1:]
    x_dims = tuple(range(axis)) + (axis + 1,) + tuple(range(axis + 2, len(full)))
    xb = ops.broadcast_in_dim(x, full, x_dims)
    hit = ops.compare(ops.broadcast_in_dim(indices, (k, n), (0,)), ops.iota((k, n), indices.dtype, 1), "EQ")
    hb = ops.broadcast_in_dim(hit, full, (axis, axis + 1))

    def pick(acc_hit, acc_value, hit, value):
        return ops.or_(acc_hit, hit), ops.select(hit, value, acc_value)

    _, out = ops.reduce([hb, xb], [False, 0], (axis + 1,), pick)
    return out


def _probabilities(p) -> Tensor:
    """p as an inexact Tensor: Python values and integer arrays in float32 (jax's default float),
    float arrays and Tensors in their own dtype."""
    if isinstance(p, Tensor):
        p = as_tensor(p, what="choice p")
        return p if dtypes.is_inexact(p.dtype) else astype(p, F32)
    try:
        value = np.asarray(p)
    except (TypeError, ValueError):
        value = np.asarray(None)
    if value.dtype == object or value.dtype.kind not in "biufc":
        raise TypeError(f"choice: p must be an array of probabilities, got {type(p).__name__} {p!r}")
    if isinstance(p, (float, int, list, tuple)):
        value = python_values(value)
    if not dtypes.is_inexact(value.dtype):
        value = value.astype(F32)
    return as_tensor(value)


@eager(static=("shape", "replace", "axis", "mode"), dynamic={"a": static_population})
def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """A random sample of ``a``'s entries along ``axis`` (jax.random.choice, bit-for-bit).

    With replacement: ``randint`` indices (uniform) or inverse-CDF search of the cumulative
    ``p`` (stablehlo.reduce_window, compare, reduce); without: the first entries of a
    ``permutation`` (uniform) or the Gumbel top-k trick (stable stablehlo.sort by
    ``gumbel + log(p)``). Indices into an array pick entries with a one-hot stablehlo.reduce.

    Args:
      key: uint32[2] key.
      a: a Python int ``n`` (sample from ``arange(n)``, int32 as jax) or an array of rank >= 1.
      shape: a tuple, the sample shape (default ``()``).
      replace: sample with replacement (default True).
      p: None (uniform) or 1-d probabilities of length ``a.shape[axis]`` (Python lists and
        integer arrays are float32 as in jax; float arrays keep their dtype).
      axis: the axis of ``a`` to sample along.
      mode: the Gumbel sampler's precision for ``replace=False`` with ``p``: "low" (default)
        or "high".
    Returns:
      An array of shape ``shape`` (int ``a``) or ``a.shape[:axis] + shape + a.shape[axis+1:]``.
    Example:
      >>> rows = hf.random.choice(key, data, (16,), replace=False)
    """
    key = key_operand("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"choice: shape must be a sequence of ints, got {shape!r}")
    shape = tuple(operator.index(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"choice: shape {shape} has a negative dimension")
    if mode not in (None, "low", "high"):
        raise ValueError(f"choice: mode must be None, 'low' or 'high', got {mode!r}")
    n = _static_int("choice", a)
    if n is None and not isinstance(a, Tensor) and np.ndim(a) == 0:
        value = np.asarray(a)
        if not dtypes.is_integer(value.dtype):
            raise TypeError(f"choice: a must be an integer or an array of rank >= 1, got {a!r}")
        n = int(value)
    arr = None
    if n is None:
        arr = _array_operand("choice", "a", a)
        if arr.ndim == 0:
            raise TypeError(f"choice: a must be a Python int or an array of rank >= 1, got {arr} "
                            "(a traced 0-d a has no static value)")
        axis = _axis("choice", axis, arr.ndim)
        n = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return splat(0, I32 if arr is None else arr.dtype, shape)
    if n <= 0:
        raise ValueError(f"choice: a must be greater than 0 unless no samples are taken, got {n}")
    if arr is None:
        _check_population("choice", "a", n)
    if not replace and n_draws > n:
        raise ValueError(f"choice: cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n}) when replace=False")
    if p is None:
        if replace:
            zero, top = as_tensor(np.int64(0)), as_tensor(np.int64(n))
            ind = _randint_impl(key, shape, zero, top, I32)
            result = ind if arr is None else _take(arr, ops.reshape(ind, (n_draws,)), axis)
        else:
            source = _arange(n) if arr is None else arr
            perm = _shuffle(key, source, 0 if arr is None else axis,
                            None if arr is None or arr.ndim == 1 else n)
            start = (0,) * perm.ndim
            limit = tuple(n_draws if d == (0 if arr is None else axis) else s for d, s in enumerate(perm.shape))
            result = ops.slice(perm, start, limit)
    else:
        probs = _probabilities(p)
        if probs.shape != (n,):
            raise ValueError(f"choice: p must be None or a 1-d vector of length a.shape[axis] = {n}, "
                             f"got shape {probs.shape}")
        if replace:
            cumulative = cumsum(probs)  # (one reduce_window, as jnp.cumsum: jax's roundings)
            total = ops.reshape(ops.slice(cumulative, (n - 1,), (n,)), ())
            u = uniform_impl(key, shape, probs.dtype, as_tensor(np.array(0.0, probs.dtype)),
                             as_tensor(np.array(1.0, probs.dtype)))
            r = ops.multiply(ops.broadcast_in_dim(total, shape, ()),
                             ops.subtract(splat(1, probs.dtype, shape), u))
            # searchsorted(cumulative, r, side="left") == count of cumulative < r
            rf = ops.reshape(r, (n_draws,))
            below = ops.compare(ops.broadcast_in_dim(cumulative, (n_draws, n), (1,)),
                                ops.broadcast_in_dim(rf, (n_draws, n), (0,)), "LT")
            ind = ops.reduce(ops.convert(below, I32), 0, (1,), "add")
            result = ind if arr is None else _take(arr, ind, axis)
        else:
            g = ops.add(gumbel_impl(key, (n,), probs.dtype, mode or "low"), ops.log(probs))
            if arr is None:
                _, order = ops.sort([g, ops.iota((n,), I32)], 0, "GT", is_stable=True)
                result = ops.slice(order, (0,), (n_draws,))
            else:
                gb = ops.broadcast_in_dim(g, arr.shape, (axis,))
                _, ordered = ops.sort([gb, arr], axis, "GT", is_stable=True)
                limit = tuple(n_draws if d == axis else s for d, s in enumerate(arr.shape))
                result = ops.slice(ordered, (0,) * arr.ndim, limit)
    out_shape = shape if arr is None else arr.shape[:axis] + shape + arr.shape[axis + 1:]
    return ops.reshape(result, out_shape)


__all__ = ["permutation", "choice"]
