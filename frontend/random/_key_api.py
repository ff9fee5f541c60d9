"""jax's typed-key functions over hloforge's plain keys: key_data, wrap_key_data, key_impl,
key_dtype, clone.

hloforge keys are the uint32 data of threefry2x32 keys (``(..., 2)`` arrays), never typed key
arrays, so these are the identities jax's functions are on that data: ``key_data`` and
``wrap_key_data`` return the uint32 data (of a jax typed key too), ``key_impl`` names the one
implementation, ``key_dtype`` is jax's typed-key dtype of it (for jax's own functions), and
``clone`` returns its key (jax's is an identity outside key-reuse checking).
"""
from __future__ import annotations

import jax

from hloforge.frontend.random._eager import jax_typed_key_data
from hloforge.frontend.random._keys import check_impl, check_key
from hloforge.frontend.random._params import public


def key_data(keys):
    """The uint32 data of PRNG keys (jax.random.key_data): hloforge keys are that data already.

    Args:
      keys: uint32 keys of shape ``(..., 2)`` (arrays or Tensors), or a jax typed key array.
    Returns:
      The same uint32 ``(..., 2)`` array or Tensor (a jax typed key's data as a numpy array).
    Example:
      >>> hf.random.key_data(hf.random.key(0))   # array([0, 0], dtype=uint32)
    """
    return check_key(public("key_data"), keys, batched=True)


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Keys from their uint32 data (jax.random.wrap_key_data): hloforge's keys are that data, so it
    is returned as it is, checked (a jax typed key array gives its data).

    Args:
      key_bits_array: uint32 data of shape ``(..., 2)`` (array or Tensor).
      impl, dtype: None or "threefry2x32" (or jax's spec or key dtype of it), at most one of them.
    Returns:
      The uint32 ``(..., 2)`` keys.
    Example:
      >>> k = hf.random.wrap_key_data(np.array([0, 42], np.uint32))
    """
    name = public("wrap_key_data")
    if impl is not None and dtype is not None:
        raise ValueError(f"{name}: pass impl or dtype, not both")
    check_impl(name, impl if dtype is None else dtype)
    return check_key(name, key_bits_array, batched=True)


def key_impl(keys):
    """The PRNG implementation of keys (jax.random.key_impl): always "threefry2x32".

    Args:
      keys: uint32 keys of shape ``(..., 2)``, or a jax typed key array (of threefry2x32).
    Returns:
      The string "threefry2x32".
    Example:
      >>> hf.random.key_impl(key)   # 'threefry2x32'
    """
    name = public("key_impl")
    if jax_typed_key_data(keys) is not None:
        impl = jax.random.key_impl(keys)
        check_impl(name, impl)
    check_key(name, keys, batched=True)
    return "threefry2x32"


def key_dtype(impl_spec=None):
    """jax's typed-key dtype of threefry2x32 (jax.random.key_dtype), e.g. for
    ``jax.random.wrap_key_data(data, dtype=...)``; hloforge's own keys are uint32 data.

    Args:
      impl_spec: None or "threefry2x32" (or jax's spec or key dtype of it).
    Returns:
      ``jax.random.key_dtype("threefry2x32")``.
    Example:
      >>> jax.random.wrap_key_data(hf.random.key(0), dtype=hf.random.key_dtype())
    """
    check_impl(public("key_dtype"), impl_spec)
    return jax.random.key_dtype("threefry2x32")


def clone(key):
    """The key itself (jax.random.clone, an identity outside jax's key-reuse checking).

    Args:
      key: any key (array, Tensor or jax typed key).
    Returns:
      ``key``.
    Example:
      >>> same = hf.random.uniform(hf.random.clone(key))
    """
    return key


__all__ = ["key_data", "wrap_key_data", "key_impl", "key_dtype", "clone"]
