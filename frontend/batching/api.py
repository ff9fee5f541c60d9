"""hf.vmap (jax.vmap's signature, semantics and error messages), on IR.

The function is traced once, per example, into the current block, over placeholders of one
example's shape; then every op that reads a batched value is re-emitted by its registry ``batch``
rule (``core.batch_tape``), and the per-example copy is erased (``batch_traced``, which
Module.vmap shares). Called on numpy or jax arrays, the same transformation is compiled with
hf.jit once per argument signature (Python scalars are part of the signature, so they stay weakly
typed inside, as in jax) and run.
"""
from __future__ import annotations

import collections
import functools
import inspect

import numpy as np
from jax import tree_util

from hloforge.frontend import dtypes, ops
from hloforge.frontend.ad.core import tape_of_block
from hloforge.frontend.batching import _util
from hloforge.frontend.batching import axes as named_axes
from hloforge.frontend.batching.core import batch_tape, erase_dead
from hloforge.frontend.jit import jit
from hloforge.frontend.tracing import Tensor, as_tensor, current_builder, is_tracing

MAX_SCALAR_SIGNATURES = 64  # compiled programs kept per vmapped function for distinct Python scalars


# ---------------------------------------------------------------- axes specifications

def _check_in_axes(in_axes):
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise TypeError("vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
                        f"arguments passed to the function, but got {in_axes}.")
    if not all(type(a) is int for a in tree_util.tree_leaves(in_axes)):
        raise TypeError("vmap in_axes must be an int, None, or (nested) container with those types as leaves, "
                        f"but got {in_axes}.")


def _check_out_axes(out_axes):
    if not all(type(a) is int for a in tree_util.tree_leaves(out_axes)):
        raise TypeError("vmap out_axes must be an int, None, or (nested) container with those types as leaves, "
                        f"but got {out_axes}.")


def flatten_axes(which, prefix, tree) -> list:
    """One axis (int or None) per leaf of ``tree`` from the axes tree ``prefix`` (jax's tree-prefix
    rule: an axis stands for every leaf of the subtree at its place)."""
    axes = []
    try:
        tree_util.tree_map(lambda a, sub: axes.extend([a] * len(tree_util.tree_leaves(sub))), prefix, tree,
                           is_leaf=lambda a: a is None)
    except ValueError:
        raise ValueError(f"vmap {which} specification must be a tree prefix of the corresponding value; got "
                         f"specification {prefix!r} for the value tree {tree_util.tree_structure(tree)}") from None
    return axes


def _leaf_shape(leaf) -> tuple:
    return tuple(leaf.shape) if hasattr(leaf, "shape") else np.shape(leaf)


def is_array(leaf) -> bool:
    """A leaf vmap can map or pass to the trace as a value: a Tensor, an array or a Python scalar
    (anything else, a string or an object, is passed to ``fun`` as it is when unbatched, as in jax)."""
    return isinstance(leaf, Tensor) or (hasattr(leaf, "shape") and hasattr(leaf, "dtype")) or _is_scalar(leaf)


def check_mappable(leaves, axes) -> None:
    for x, a in zip(leaves, axes):
        if a is not None and not is_array(x):
            raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type")


def normalized_axis(axis, leaf) -> int:
    """``axis`` of an argument leaf made nonnegative, or jax's ValueError when the leaf's rank is too low."""
    shape = _leaf_shape(leaf)
    if not -len(shape) <= axis < len(shape):
        raise ValueError(f"vmap was requested to map its argument along axis {axis}, which implies that its rank "
                         f"should be at least {axis + 1 if axis >= 0 else -axis}, but is only {len(shape)} (its "
                         f"shape is {shape})")
    return axis % len(shape)


def out_axis(axis, rank) -> int:
    """An out axis made nonnegative for a batched result of ``rank`` (numpy's AxisError wording, as jax)."""
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {rank}")
    return axis % rank


# ---------------------------------------------------------------- the batch size

def _type_str(leaf) -> str:
    if isinstance(leaf, Tensor) or hasattr(leaf, "dtype"):
        dtype = np.dtype(leaf.dtype)
    else:
        dtype = dtypes.result_type(leaf) if dtypes.weak_type(leaf) is not None else np.asarray(leaf).dtype
    return f"{dtype.name}[{','.join(map(str, _leaf_shape(leaf)))}]"


def _leaf_names(fun, args, kwargs) -> list:
    """jax's names of the argument leaves: ``argument x['w']``, ``args[2]``, ``kwargs['y']``."""
    try:
        params = list(inspect.signature(fun).bind(*args, **kwargs).signature.parameters)
    except (TypeError, ValueError):
        params = None

    def arg_name(path):
        i = path[0].idx
        if params is None or i >= len(params):
            return f"args{tree_util.keystr(path)}"
        return f"argument {params[i]}{tree_util.keystr(path[1:])}"

    names = [arg_name(p) for p, _ in tree_util.tree_flatten_with_path(args)[0]]
    return names + [f"kwargs{tree_util.keystr(p)}" for p, _ in tree_util.tree_flatten_with_path(kwargs)[0]]


def mapped_size(leaves, axes, axis_size, describe) -> int:
    """The batch size all mapped axes agree on (and ``axis_size``), else jax's ValueError.
    ``describe()``: the names of the leaves, for the message."""
    if not leaves and axis_size is None:
        raise ValueError("vmap wrapped function must be passed at least one argument containing an array or "
                         f"axis_size must be specified, got empty *args={describe.args} and **kwargs={describe.kwargs}")
    sizes = [None if a is None else _leaf_shape(x)[a] for x, a in zip(leaves, axes)]
    found = {s for s in sizes if s is not None} | ({axis_size} if axis_size is not None else set())
    if len(found) == 1:
        return found.pop()
    if not found:
        raise ValueError("vmap must have at least one non-None value in in_axes or axis_size must be specified")
    names = describe()
    counts = collections.Counter(s for s in sizes if s is not None).most_common()
    lines = [f"  * the `axis_size` argument was {axis_size};\n"] if axis_size is not None else []
    for k, (size, count) in enumerate(counts):
        i = sizes.index(size)
        example = f"axis {axes[i]} of {names[i]} of type {_type_str(leaves[i])}"
        if count == 1:
            lines.append(f"  * one axis had size {size}: {example};\n")
        else:
            lines.append(f"  * {'most' if k == 0 else 'some'} axes ({count} of them) had size {size}, e.g. "
                         f"{example};\n")
    raise ValueError(("vmap got inconsistent sizes for array axes to be mapped:\n" + "".join(lines))[:-2])


class _Describe:
    def __init__(self, fun, args, kwargs):
        self.fun, self.args, self.kwargs = fun, args, kwargs

    def __call__(self):
        return _leaf_names(self.fun, self.args, self.kwargs)


# ---------------------------------------------------------------- the transformation

def batch_traced(trace, leaves, axes, size, out_axes_of, what, axis_name=None) -> list:
    """The batched program of one per-example ``trace``, emitted into the current block.

    ``leaves``: the arguments (Tensors for batched ones, anything for ``axes[i] is None``);
    ``trace(inner)`` runs the per-example program over ``inner`` (a placeholder per batched leaf)
    and returns ``(output leaves, tape)``, tape None for "the ops it emitted into the block";
    ``out_axes_of(outs, dims)``: the out axis (nonnegative int or None) of each output leaf, from
    the batch dimensions the sweep found (None for unbatched). ``axis_name`` is bound to the batch
    axis while the trace runs and its tape is swept (``axes.py``). Returns the output leaves batched.
    """
    block = current_builder(what).ip.block
    start = len(block.operations)
    n = len(leaves)
    if axis_name is not None:  # (the axis index: one more batched input, iota over the batch)
        leaves, axes = list(leaves) + [ops.iota((size,), np.int32)], list(axes) + [0]
    env, inner = {}, []
    for i, (x, a) in enumerate(zip(leaves, axes)):
        if a is None:
            inner.append(x)  # (unbatched leaves go in as they are: Python scalars stay weak)
            continue
        t = as_tensor(x, what=f"{what}: argument leaf {i}")
        e = _util.zero_example(t, a)  # (erased afterwards)
        env[e.value] = (t, a)
        inner.append(e)
    traced = len(block.operations)
    with named_axes.bound(axis_name, size, inner[n] if axis_name is not None else None) as frame:
        outs, tape = trace(inner[:n])
        outs = [as_tensor(o, what=f"{what}: output leaf {i}") for i, o in enumerate(outs)]
        frame.sweeping = True
        batch_tape(tape if tape is not None else tape_of_block(list(block.operations)[traced:]), env, size)
    found = [env.get(o.value) for o in outs]
    o_axes = out_axes_of(outs, [None if f is None else f[1] for f in found])
    results = []
    for o, f, a in zip(outs, found, o_axes):
        if f is not None and f[1] is None:  # (computed anew, the same for every example)
            o, f = f[0], None
        if a is None:
            results.append(o)
        else:
            results.append(_util.bdim_at(*f, size, a) if f is not None else _util.broadcast_batch(o, size, a))
    keep = {r.value for r in results}
    erase_dead([op for op in list(block.operations)[start:] if not any(r in keep for r in op.operation.results)])
    return results


def _vmap_symbolic(fun, in_axes, out_axes, axis_size, axis_name, args, kwargs):
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    if isinstance(in_axes, tuple) and len(in_axes) != len(args):
        raise ValueError("vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
                         f"arguments passed to the function, but got len(in_axes)={len(in_axes)}, "
                         f"len(args)={len(args)}")
    axes = flatten_axes("in_axes", (in_axes, 0), (args, kwargs))
    check_mappable(leaves, axes)
    axes = [None if a is None else normalized_axis(a, x) for x, a in zip(leaves, axes)]
    size = mapped_size(leaves, axes, axis_size, _Describe(fun, args, kwargs))
    out_tree = []

    def trace(inner):
        f_args, f_kwargs = tree_util.tree_unflatten(tree, inner)
        out_leaves, treedef = tree_util.tree_flatten(fun(*f_args, **f_kwargs))
        out_tree.append(treedef)
        return out_leaves, None

    def out_axes_of(outs, dims):
        full = tree_util.tree_unflatten(out_tree[0], outs)
        spec = flatten_axes("out_axes", out_axes, full)
        paths = [p for p, _ in tree_util.tree_flatten_with_path(full)[0]]
        axes_out = []
        for o, d, a, path in zip(outs, dims, spec, paths):
            if a is None and d is not None:
                raise ValueError(f"at vmap out_axes{tree_util.keystr(path)}, got axis spec None but output was "
                                 f"batched on axis {d}")
            axes_out.append(None if a is None else out_axis(a, o.ndim + 1))
        return axes_out

    results = batch_traced(trace, leaves, axes, size, out_axes_of, "hf.vmap", axis_name)
    return tree_util.tree_unflatten(out_tree[0], results)


def _is_scalar(leaf) -> bool:
    return dtypes.weak_type(leaf) is not None


def _static(leaf) -> bool:
    return _is_scalar(leaf) or not is_array(leaf)


def _static_key(leaf):
    """A cache key of a closed-over leaf (repr for scalars: -0.0 and nan are keys too); None for an
    unhashable object, whose program is not kept."""
    if _is_scalar(leaf):
        return repr(leaf)
    try:
        hash(leaf)
    except TypeError:
        return None
    return leaf


def _eager(symbolic):
    """``symbolic`` compiled with hf.jit per argument signature; Python scalar leaves, and leaves
    that are not arrays (passed to ``fun`` as they are), are part of the signature (closed over),
    so scalars enter the trace weakly typed, as jax's do."""
    compiled = collections.OrderedDict()

    def call(args, kwargs):
        leaves, tree = tree_util.tree_flatten((args, kwargs))
        scalars = tuple((i, type(x), x) for i, x in enumerate(leaves) if _static(x))
        keys = tuple((i, t, _static_key(x)) for i, t, x in scalars)
        key = (tree, keys) if all(k is not None for _, _, k in keys) else None
        fn = compiled.get(key) if key is not None else None
        if fn is None:
            fn = jit(functools.partial(_with_scalars, symbolic, tree, scalars, len(leaves)))
            if key is not None:
                compiled[key] = fn
                if len(compiled) > MAX_SCALAR_SIGNATURES:
                    compiled.popitem(last=False)
        return fn(*[x for x in leaves if not _static(x)])
    return call


def _with_scalars(symbolic, tree, scalars, n, *arrays):
    leaves, rest = [None] * n, iter(arrays)
    fixed = {i: x for i, _, x in scalars}
    for i in range(n):
        leaves[i] = fixed[i] if i in fixed else next(rest)
    args, kwargs = tree_util.tree_unflatten(tree, leaves)
    return symbolic(*args, **kwargs)


def vmap(fun, in_axes=0, out_axes=0, axis_size=None, axis_name=None, spmd_axis_name=None):
    """Vectorize ``fun`` over a batch dimension (jax.vmap); emits each op's batched form.

    Args:
      fun: a function over Tensors (pytrees in and out).
      in_axes: an int, None, or a tuple with one entry per positional argument, each an int, None
        or a pytree prefix of that argument: the batch axis of each argument leaf (negative counts
        from the end), None for a leaf passed to every example unchanged (Python scalars stay
        weakly typed; strings and other objects are passed as they are). A list is taken as a
        tuple. Keyword arguments are batched along axis 0.
      out_axes: the batch axis of each output leaf (an int, None, or a pytree prefix of the
        output); None only for outputs that depend on no batched input. Outputs that depend on
        none are broadcast along their out axis.
      axis_size: the batch size; needed when no argument is batched.
      axis_name: a hashable name for the batch axis, for hloforge.lax's named-axis collectives
        inside ``fun`` (``psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``axis_index``).
      spmd_axis_name: jax's sharding of the batch axis; not supported (NotImplementedError).

    Returns:
      A function with ``fun``'s signature whose arguments and results carry the batch axis. Inside
      a trace it emits the batched ops; on arrays it compiles with hf.jit and runs.
    Raises:
      TypeError: ``fun`` is not callable, an axis is not an int or None, or a mapped leaf is not
        an array (jax's messages).
      ValueError: mapped sizes disagree (naming the sizes and arguments), an axis is out of range,
        an axes tree is not a prefix of its value, or out_axes is None for a batched output.

    Example:
      >>> hf.vmap(lambda w, x: w @ x, in_axes=(None, 0))(w, xs)   # w: (3, 4), xs: (8, 4) -> (8, 3)
    """
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    if isinstance(in_axes, list):  # (jax: the top level is a tuple of per-argument entries)
        in_axes = tuple(in_axes)
    _check_in_axes(in_axes)
    _check_out_axes(out_axes)
    if axis_size is not None and (type(axis_size) is not int or axis_size < 0):
        raise TypeError(f"hf.vmap: axis_size must be a nonnegative int or None, got {axis_size!r}")
    if spmd_axis_name is not None:
        raise NotImplementedError(f"hf.vmap: spmd_axis_name={spmd_axis_name!r}: hloforge batches on one device "
                                  "(shard the batched program with hf.jit's in_shardings instead)")
    try:
        hash(axis_name)
    except TypeError:
        raise TypeError(f"hf.vmap: axis_name must be hashable, got {axis_name!r}") from None

    def symbolic(*args, **kwargs):
        return _vmap_symbolic(fun, in_axes, out_axes, axis_size, axis_name, args, kwargs)

    eager = _eager(symbolic)

    @functools.wraps(fun)
    def batched(*args, **kwargs):
        if is_tracing():
            return symbolic(*args, **kwargs)
        return eager(args, kwargs)
    return batched
