"""``hloforge.lax.stop_gradient`` (jax.lax.stop_gradient): an identity with a zero derivative.

Each call is one ``stablehlo.composite "hloforge.stop_gradient"`` over the float and complex Tensor
leaves, its decomposition returning its operands: the name is the handle the AD knows
(frontend/ad/structure.py gives it zero rules in both modes), it survives printing,
parsing and Module.optimize (the passes leave composites alone), and XLA inlines the
decomposition, so the forward program is unchanged.
"""
from __future__ import annotations

from jax import tree_util

from hloforge.frontend import dtypes, ops
from hloforge.frontend.jit import jit
from hloforge.frontend.tracing import Tensor, is_tracing

STOP_GRADIENT = "hloforge.stop_gradient"


def stop_gradient(x):
    """``x`` unchanged, with a zero derivative in both modes (jax.lax.stop_gradient).

    Args:
      x: a pytree of Tensors (arrays and Python scalars outside a trace). Leaves that are not
        float or complex Tensors are returned as they are (they carry no derivative).
    Returns:
      A pytree of ``x``'s structure; outside a trace, of arrays (it runs under ``hf.jit``).
    Example:
      >>> hf.grad(lambda a: hnp.sum(hf.stop_gradient(a) * a))(x)   # x, not 2 x
    """
    leaves, tree = tree_util.tree_flatten(x)
    if not is_tracing():
        return _eager(x)
    stopped = [i for i, leaf in enumerate(leaves) if isinstance(leaf, Tensor) and dtypes.is_inexact(leaf.dtype)]
    if stopped:
        outs = ops.composite([leaves[i] for i in stopped], STOP_GRADIENT, lambda *xs: list(xs))
        for i, out in zip(stopped, outs):
            leaves[i] = out
    return tree_util.tree_unflatten(tree, leaves)


_eager = jit(stop_gradient)

__all__ = ["stop_gradient", "STOP_GRADIENT"]
