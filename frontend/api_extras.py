"""hf.eval_shape and hf.ShapeDtypeStruct (jax's).

``hf.ShapeDtypeStruct`` is ``jax.ShapeDtypeStruct`` itself, so shapes flow between jax and
hloforge unchanged: ``hf.trace``, ``hf.jit(f).lower`` and ``hf.eval_shape`` take it (and anything
else with ``shape`` and ``dtype``) as an argument spec, as they take ``hf.ShapeDtype``, hloforge's
abstract value of a module's arguments and results, which may also have dynamic (None) dimensions.
"""
from __future__ import annotations

from jax import ShapeDtypeStruct, tree_util

from hloforge.frontend.trace_function import spec_of, trace_flat, weak_leaves
from hloforge.frontend.tracing import Tensor


def _spec(leaf, index: int) -> tuple:
    if isinstance(leaf, Tensor):
        return leaf.shape, leaf.dtype
    try:
        return spec_of(leaf, index)
    except (TypeError, ValueError) as e:
        message = str(e)
        raise type(e)("hloforge.eval_shape: " + (message[len("trace: "):] if message.startswith("trace: ")
                                                 else message)) from None


def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes of ``fun(*args, **kwargs)``, without compiling or running it
    (jax.eval_shape): ``fun`` is traced once to StableHLO, and the result types are read off.

    Args:
      fun: a function of pytrees of Tensors.
      *args, **kwargs: pytrees whose leaves are ``hf.ShapeDtypeStruct``/``hf.ShapeDtype``, arrays,
        anything with ``shape`` and ``dtype``, Python scalars (weakly typed, of the default dtypes,
        as hf.jit's arguments) or traced Tensors; only their shapes and dtypes are read.
    Returns:
      A pytree of ``fun``'s output structure of ``hf.ShapeDtypeStruct`` (jax.ShapeDtypeStruct).
    Example:
      >>> hf.eval_shape(lambda x: x @ x.T, hf.ShapeDtypeStruct((3, 4), np.float32))
      ShapeDtypeStruct(shape=(3, 3), dtype=float32)
    """
    if not callable(fun):
        raise TypeError(f"hloforge.eval_shape: fun must be callable, got {fun!r} of type {type(fun).__name__}")
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    module = trace_flat(fun, in_tree, [_spec(leaf, i) for i, leaf in enumerate(leaves)], kwargs_tree=True,
                        weak=weak_leaves(leaves))
    outs = [ShapeDtypeStruct(s.shape, s.dtype) for s in module.signature[1]]
    return tree_util.tree_unflatten(module.out_tree, outs)


__all__ = ["eval_shape", "ShapeDtypeStruct"]
