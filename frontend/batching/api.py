"""hf.vmap (jax.vmap's signature and semantics), on IR.

The function is traced once, per example, into the current block (over the first example of
each batched argument); then every op that reads a batched value is re-emitted by its registry
``batch`` rule (``core.batch_tape``), and the per-example copy is erased. Called on numpy or jax
arrays, the same transformation is compiled with hf.jit once per argument signature and run.
"""
from __future__ import annotations

import functools
import operator

import numpy as np
from jax import tree_util

from hloforge.frontend import ops
from hloforge.frontend.ad.core import tape_of_block
from hloforge.frontend.batching import _util
from hloforge.frontend.batching.core import batch_tape, erase_dead
from hloforge.frontend.jit import jit
from hloforge.frontend.tracing import Tensor, as_tensor, current_builder


def _name(fn) -> str:
    return getattr(fn, "__name__", None) or type(fn).__name__


def _is_axis(a) -> bool:
    return a is None or (isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)))


def _check_axes_spec(axes, what, which):
    leaves = tree_util.tree_leaves(axes, is_leaf=lambda a: a is None)
    if not all(_is_axis(a) for a in leaves):
        raise ValueError(f"{what}: {which} must be an int, None, or (nested) container with those types as "
                         f"leaves, but got {axes!r}.")


def _broadcast_prefix(prefix, tree, what, which) -> list:
    """One axis per leaf of ``tree`` from an axes ``prefix`` (jax's tree-prefix rule)."""
    axes = []
    try:
        tree_util.tree_map(lambda a, sub: axes.extend([a] * len(tree_util.tree_leaves(sub))), prefix, tree,
                           is_leaf=lambda a: a is None)
    except ValueError:
        raise ValueError(f"{what}: {which} specification must be a tree prefix of the corresponding value, got "
                         f"specification {prefix!r} for value tree {tree_util.tree_structure(tree)}.") from None
    return axes


def _leaf_shape(leaf) -> tuple:
    return tuple(leaf.shape) if hasattr(leaf, "shape") else np.shape(leaf)


def _in_axes_per_leaf(in_axes, args, kwargs, what) -> list:
    if isinstance(in_axes, list):  # (jax: a list is a leaf container too, but the top level is a tuple)
        in_axes = tuple(in_axes)
    if not isinstance(in_axes, tuple) or len(in_axes) != len(args):
        if isinstance(in_axes, tuple):
            raise ValueError(f"{what}: in_axes specification must be a tree prefix of the corresponding value, "
                             f"got specification {in_axes!r} for value tree "
                             f"{tree_util.tree_structure(args)}.")
        in_axes = (in_axes,) * len(args)
    axes = _broadcast_prefix(in_axes, args, what, "in_axes")
    return axes + [0] * len(tree_util.tree_leaves(kwargs))


def _normalized_axis(axis, shape, what, i, leaf):
    rank = len(shape)
    if not -rank <= axis < max(rank, 1) or rank == 0:
        raise ValueError(f"{what}: vmap was requested to map its argument along axis {axis}, which implies that "
                         f"its rank should be at least {axis + 1 if axis >= 0 else -axis}, but is only {rank} "
                         f"(its shape is {shape}) (argument leaf {i}: {leaf!r})")
    return axis % rank


def _size(leaves, axes, axis_size, what) -> int:
    sizes = {}
    for i, (leaf, a) in enumerate(zip(leaves, axes)):
        if a is not None:
            sizes.setdefault(_leaf_shape(leaf)[a], []).append((i, a, leaf))
    if axis_size is not None:
        axis_size = operator.index(axis_size)
        if axis_size < 0:
            raise ValueError(f"{what}: axis_size must be a nonnegative int, got {axis_size}")
        sizes.setdefault(axis_size, []).append(("axis_size", None, axis_size))
    if not sizes:
        raise ValueError(f"{what}: vmap must have at least one non-None value in in_axes, or an axis_size "
                         f"(got in_axes leaves {axes})")
    if len(sizes) > 1:
        lines = [f"  * {len(v)} axes had size {s}: " + ", ".join(
                    "axis_size" if i == "axis_size" else f"axis {a} of argument leaf {i} of shape {_leaf_shape(x)}"
                    for i, a, x in v) for s, v in sizes.items()]
        raise ValueError(f"{what}: vmap got inconsistent sizes for array axes to be mapped:\n" + "\n".join(lines))
    return next(iter(sizes))


def _example(x, axis):
    """The first example of ``x`` along ``axis`` (a placeholder the per-example trace reads)."""
    starts = [0] * x.ndim
    limits = list(x.shape)
    limits[axis] = 1
    shape = x.shape[:axis] + x.shape[axis + 1:]
    return ops.reshape(ops.slice(x, starts, limits), shape)


def _vmap_symbolic(fn, in_axes, out_axes, axis_size, args, kwargs, what):
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    axes = _in_axes_per_leaf(in_axes, args, kwargs, what)
    axes = [None if a is None else _normalized_axis(int(a), _leaf_shape(x), what, i, x)
            for i, (x, a) in enumerate(zip(leaves, axes))]
    size = _size(leaves, axes, axis_size, what)
    block = current_builder(what).ip.block
    start = len(block.operations)
    env, inner = {}, []
    for i, (x, a) in enumerate(zip(leaves, axes)):
        if a is None:
            inner.append(x)  # (unbatched leaves go in as they are: Python scalars stay weak)
            continue
        t = as_tensor(x, what=f"{what}: argument leaf {i}")
        if size == 0:
            raise ValueError(f"{what}: hloforge.vmap over a batch of size 0 is not supported (argument leaf {i} "
                             f"has shape {t.shape})")
        e = _example(t, a)
        env[e.value] = (t, a)
        inner.append(e)
    traced = len(block.operations)
    f_args, f_kwargs = tree_util.tree_unflatten(tree, inner)
    out = fn(*f_args, **f_kwargs)
    new_ops = list(block.operations)[traced:]
    batch_tape(tape_of_block(new_ops), env, size)
    out_leaves, out_tree = tree_util.tree_flatten(out)
    _check_axes_spec(out_axes, what, "out_axes")
    o_axes = _broadcast_prefix(out_axes, out, what, "out_axes")
    results = []
    for i, (o, a) in enumerate(zip(out_leaves, o_axes)):
        o = as_tensor(o, what=f"{what}: output leaf {i}")
        batched = env.get(o.value)
        if a is None:
            if batched is not None:
                raise ValueError(f"{what}: vmap has mapped output (output leaf {i}) but out_axes is None")
            results.append(o)
            continue
        if not -(o.ndim + 1) <= a <= o.ndim:
            raise ValueError(f"{what}: out_axes {a} is out of range for output leaf {i} of rank {o.ndim} "
                             f"(the batched value has rank {o.ndim + 1})")
        a %= o.ndim + 1
        results.append(_util.bdim_at(*batched, size, a) if batched is not None else
                       _util.broadcast_batch(o, size, a))
    keep = {r.value for r in results}
    erase_dead([op for op in list(block.operations)[start:] if not any(r in keep for r in op.operation.results)])
    return tree_util.tree_unflatten(out_tree, results)


def _symbolic(*trees) -> bool:
    return any(isinstance(l, Tensor) for t in trees for l in tree_util.tree_leaves(t))


def vmap(fun, in_axes=0, out_axes=0, axis_size=None, axis_name=None, spmd_axis_name=None):
    """Vectorize ``fun`` over a batch dimension (jax.vmap); emits each op's batched form.

    Args:
      fun: a function over Tensors (pytrees in and out).
      in_axes: an int, None, or a pytree prefix of the positional arguments: the batch axis of each
        argument leaf, None for an argument passed to every example unchanged. Keyword arguments
        are batched along axis 0.
      out_axes: the batch axis of each output leaf (an int, None, or a pytree prefix of the output).
      axis_size: the batch size, needed when no argument is batched.
      axis_name: a name for the batch axis (collectives over it are not supported yet).

    Returns:
      A function with ``fun``'s signature whose arguments and results carry the batch axis.

    Example:
      >>> hf.vmap(lambda w, x: w @ x, in_axes=(None, 0))(w, xs)   # w: (3, 4), xs: (8, 4) -> (8, 3)
    """
    what = f"vmap({_name(fun)})"
    if not callable(fun):
        raise TypeError(f"hloforge.vmap: fun must be callable, got {fun!r}")
    _check_axes_spec(in_axes, what, "in_axes")
    _check_axes_spec(out_axes, what, "out_axes")
    if axis_name is not None or spmd_axis_name is not None:
        raise NotImplementedError(f"{what}: axis_name / spmd_axis_name (collectives over the vmapped axis) are "
                                  "not supported yet")

    def symbolic(*args, **kwargs):
        return _vmap_symbolic(fun, in_axes, out_axes, axis_size, args, kwargs, what)

    compiled = jit(symbolic)

    @functools.wraps(fun)
    def batched(*args, **kwargs):
        if _symbolic(args, kwargs):
            return symbolic(*args, **kwargs)
        return compiled(*args, **kwargs)
    return batched
