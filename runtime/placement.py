"""hf.device_put and hf.block_until_ready (jax's functions, on hloforge's devices).

Arrays are placed through ``pjrt.put``, so float64/complex128/int64 values keep their dtype without
flipping jax's global x64 flag; Python scalars take numpy's dtypes (float64, int64), as they do
everywhere in hloforge.
"""
from __future__ import annotations

import numpy as np
from jax import tree_util

from hloforge.target import DEVICE_KINDS
from hloforge.frontend.tracing import Tensor, Value
from hloforge.runtime import pjrt
from hloforge.runtime.settings import config

_KINDS = ", ".join(map(repr, DEVICE_KINDS))  # 'cpu', 'gpu', 'tpu'


def _target(device):
    """A Device or a Sharding to place on; None: keep jax arrays, put host values on the default device."""
    if device is None:
        return None
    if isinstance(device, str):
        if device not in DEVICE_KINDS:
            raise ValueError(f"hloforge.device_put: device must be {_KINDS}, a Device of hf.devices() or a "
                             f"sharding, got {device!r}")
        return pjrt.resolve_device(device)
    if pjrt.is_sharding(device):
        return device
    if isinstance(device, pjrt.PartitionSpec):
        mesh = pjrt.context_mesh()
        if mesh is None:
            raise ValueError(f"hloforge.device_put: the PartitionSpec {device} needs a mesh: pass "
                             "hf.NamedSharding(mesh, spec), or set one with jax.set_mesh(mesh)")
        return pjrt.NamedSharding(mesh, device)
    if hasattr(device, "platform") and hasattr(device, "client"):
        try:
            return pjrt.resolve_device(device)
        except ValueError as e:
            raise ValueError(f"hloforge.device_put: {e}") from None
    raise TypeError(f"hloforge.device_put: device must be None, {_KINDS}, a Device of hf.devices(), a sharding "
                    f"(hf.NamedSharding, jax.sharding.SingleDeviceSharding) or a PartitionSpec, got {device!r} of "
                    f"type {type(device).__name__}")


def _host(leaf, index: int) -> np.ndarray:
    try:
        array = np.asarray(leaf)
    except Exception as e:
        raise TypeError(f"hloforge.device_put: leaf {index} of type {type(leaf).__name__} is not an array "
                        f"({e})") from None
    if array.dtype == object or array.dtype.kind in "USV":
        raise TypeError(f"hloforge.device_put: leaf {index} of type {type(leaf).__name__} is not an array of numbers "
                        f"(dtype {array.dtype})")
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    return array


def _put_all(x, target):
    leaves, tree = tree_util.tree_flatten(x)
    out = []
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, (Tensor, Value)):  # (inside a trace: placement is the compiler's business)
            out.append(leaf)
        elif pjrt.is_device_array(leaf):
            out.append(leaf if target is None else pjrt.put(leaf, target))
        else:
            where = target if target is not None else pjrt.resolve_device(None, config.device)
            out.append(pjrt.put(_host(leaf, i), where))
    return tree_util.tree_unflatten(tree, out)


def device_put(x, device=None):
    """The array leaves of the pytree ``x`` as jax.Arrays on ``device`` (jax.device_put).

    Args:
      x: a pytree of numpy arrays, jax arrays and Python scalars (float64/int64/bool, as numpy
        makes them); traced Tensors come back as they are.
      device: None (jax arrays stay where they are, host values go to the first device of
        ``hf.config.device``), "cpu", "gpu" or "tpu" (that kind's first device), a Device of
        ``hf.devices()``, a sharding (``hf.NamedSharding``, ``jax.sharding.SingleDeviceSharding``)
        or a PartitionSpec (over the mesh set with ``jax.set_mesh``); or a pytree prefix of ``x``
        of those (one target per subtree).
    Returns:
      A pytree of ``x``'s structure of jax.Arrays (committed to the device or sharding).
    Example:
      >>> params = hf.device_put({"w": np.ones((4, 4), np.float32)}, hf.devices("cpu")[0])
    """
    if isinstance(device, (list, tuple, dict)):
        try:
            return tree_util.tree_map(lambda d, sub: _put_all(sub, _target(d)), device, x,
                                      is_leaf=lambda v: v is None)
        except ValueError as e:
            if str(e).startswith("hloforge."):
                raise
            raise ValueError(f"hloforge.device_put: device must be one target or a pytree prefix of x: {e}") from None
    return _put_all(x, _target(device))


def block_until_ready(x):
    """``x`` itself, once the computations producing its jax.Array leaves have finished
    (jax.block_until_ready); other leaves are left alone.

    Example:
      >>> y = hf.block_until_ready(f(x))   # (time f's run, not its dispatch)
    """
    return pjrt.block_until_ready(x)


__all__ = ["device_put", "block_until_ready"]
