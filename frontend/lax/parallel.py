"""Named-axis collectives over ``hf.vmap(..., axis_name=...)`` axes: jax.lax's ``psum``, ``pmean``,
``pmax``, ``pmin``, ``all_gather``, ``axis_index`` and ``axis_size``, and built on all_gather,
``ppermute``, ``pshuffle``, ``pbroadcast``, ``psum_scatter``, ``all_to_all`` and ``pswapaxes``.

Inside the per-example trace a collective is a ``func.call`` with a custom rule (as hf.custom_vjp's,
``frontend/ad/custom.py``) whose callee computes what the collective gives when its operand is the
same in every example (``psum``: x times the axis size; ``all_gather``: x repeated). The vmap's
sweep batches the call with the rule's ``custom_batch``: over its own axis it reduces (or gathers)
along the batch dimension, giving one value for all examples; over another axis it is the same
collective of the batched operand. jvp and vjp: psum, pmean and all_gather are linear (their
transposes: psum, pmean, and psum then this example's slice); pmax and pmin have no derivative, as
in jax. ``axis_index`` is the vmap's per-example index (a hidden batched iota).
"""
from __future__ import annotations

import numpy as np
from jax import tree_util

from hloforge.frontend import dtypes, ops
from hloforge.frontend.ad import core
from hloforge.frontend.ad._util import full
from hloforge.frontend.ad.custom import emit_rule_call
from hloforge.frontend.batching import axes as named_axes
from hloforge.frontend.batching._util import bdim_at
from hloforge.frontend.lax._common import lax_operand

_REDUCTIONS = ("psum", "pmean", "pmax", "pmin")


def _names(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _no_groups(what, axis_index_groups):
    if axis_index_groups is not None:
        raise NotImplementedError(f"hloforge.lax.{what}: axis_index_groups={axis_index_groups!r} is not supported")


def _collective(kind, x, axis_name, **params):
    """Apply the collective ``kind`` over each name of ``axis_name`` to every leaf of ``x``."""
    leaves, tree = tree_util.tree_flatten(x)
    out = []
    for i, leaf in enumerate(leaves):
        if kind in _REDUCTIONS and dtypes.weak_type(leaf) is not None:  # a Python number stays one, as in jax
            sizes = [named_axes.frame_of(n, f"hloforge.lax.{kind}").size for n in _names(axis_name)]
            out.append(leaf * int(np.prod(sizes)) if kind == "psum" else leaf)
            continue
        t = lax_operand(leaf, f"hloforge.lax.{kind} operand leaf {i}")
        for name in _names(axis_name):
            named_axes.frame_of(name, f"hloforge.lax.{kind}")
            t = _emit(kind, name, params, t)
        out.append(t)
    return tree_util.tree_unflatten(tree, out)


def psum(x, axis_name, *, axis_index_groups=None):
    """The sum over the examples of the named vmap axis (jax.lax.psum); the same value in every
    example. Emits ``stablehlo.reduce`` (add) over the batch dimension.

    Args:
      x: a pytree of arrays or Python scalars (``psum(1, name)`` is the axis size).
      axis_name: a name bound by ``hf.vmap(..., axis_name=...)``, or a tuple of names.
    Returns:
      ``x``'s structure, each leaf summed over the axis.
    Raises:
      NameError: the name is not bound (jax's message).
    Example:
      >>> hf.vmap(lambda v: v / lax.psum(v, "i"), axis_name="i")(xs)   # normalized over the batch
    """
    _no_groups("psum", axis_index_groups)
    return _collective("psum", x, axis_name)


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean over the named vmap axis (jax.lax.pmean): psum divided by the axis size.

    Example:
      >>> hf.vmap(lambda v: v - lax.pmean(v, "i"), axis_name="i")(xs)
    """
    _no_groups("pmean", axis_index_groups)
    return _collective("pmean", x, axis_name)


def pmax(x, axis_name, *, axis_index_groups=None):
    """The maximum over the named vmap axis (jax.lax.pmax); emits ``stablehlo.reduce`` (max).

    Example:
      >>> hf.vmap(lambda v: lax.pmax(v, "i"), axis_name="i")(xs)
    """
    _no_groups("pmax", axis_index_groups)
    return _collective("pmax", x, axis_name)


def pmin(x, axis_name, *, axis_index_groups=None):
    """The minimum over the named vmap axis (jax.lax.pmin); emits ``stablehlo.reduce`` (min).

    Example:
      >>> hf.vmap(lambda v: lax.pmin(v, "i"), axis_name="i")(xs)
    """
    _no_groups("pmin", axis_index_groups)
    return _collective("pmin", x, axis_name)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Every example's ``x`` stacked along a new dimension ``axis`` (concatenated along ``axis``
    with ``tiled``), the same value in every example (jax.lax.all_gather); a transpose (and a
    reshape) of the batched operand.

    Example:
      >>> hf.vmap(lambda v: lax.all_gather(v, "i"), axis_name="i")(xs)   # (n, n, ...)
    """
    _no_groups("all_gather", axis_index_groups)
    if isinstance(axis_name, (tuple, list)) and len(axis_name) != 1:
        raise NotImplementedError(f"hloforge.lax.all_gather: one axis name at a time, got {axis_name!r}")
    leaves = tree_util.tree_leaves(x)
    for leaf in leaves:
        rank = np.ndim(leaf) if not hasattr(leaf, "ndim") else leaf.ndim
        top = rank if not tiled else rank - 1
        if type(axis) is not int or not -top - 1 <= axis <= top or (tiled and rank == 0):
            raise ValueError(f"hloforge.lax.all_gather: axis {axis!r} is out of range for an operand of rank "
                             f"{rank} (tiled={tiled})")
    return tree_util.tree_map(
        lambda leaf: _collective("all_gather", leaf, axis_name, axis=_gather_axis(leaf, axis, tiled), tiled=tiled), x)


def _gather_axis(leaf, axis, tiled) -> int:
    rank = leaf.ndim if hasattr(leaf, "ndim") else np.ndim(leaf)
    return axis % (rank if tiled else rank + 1)


def axis_index(axis_name):
    """This example's position along the named vmap axis, an int32 0-d tensor (jax.lax.axis_index).

    Example:
      >>> hf.vmap(lambda v: v * lax.axis_index("i"), axis_name="i")(xs)
    """
    return named_axes.frame_of(axis_name, "hloforge.lax.axis_index").index


def axis_size(axis_name) -> int:
    """The number of examples of the named vmap axis, a Python int (jax.lax.axis_size).

    Example:
      >>> n = lax.axis_size("i")
    """
    return int(np.prod([named_axes.frame_of(n, "hloforge.lax.axis_size").size for n in _names(axis_name)]))


# ---------------------------------------------------------------- collectives built on all_gather
# Each is jax.lax's function written as an all_gather (one value for all examples once the vmap has
# swept the axis) and a pick by this example's axis_index, so its derivatives and batching are
# all_gather's, dynamic_slice's and select's.

def _one_name(what, axis_name):
    if isinstance(axis_name, (tuple, list)):
        if len(axis_name) != 1:
            raise NotImplementedError(f"hloforge.lax.{what}: one axis name at a time, got {axis_name!r}")
        axis_name = axis_name[0]
    return axis_name, named_axes.frame_of(axis_name, f"hloforge.lax.{what}")


def _leafwise(what, x, fn):
    leaves, tree = tree_util.tree_flatten(x)
    return tree_util.tree_unflatten(tree, [fn(lax_operand(leaf, f"hloforge.lax.{what} operand leaf {i}"))
                                           for i, leaf in enumerate(leaves)])


def _source_table(what, perm, size, pairs: bool) -> np.ndarray:
    """destination -> source example (-1: none) of ``perm``: (source, destination) pairs, or a list of sources."""
    shape = "a list of (source, destination) pairs" if pairs else "a list of example indices"
    try:
        perm = [tuple(map(int, p)) if pairs else int(p) for p in perm]
    except (TypeError, ValueError):
        raise TypeError(f"hloforge.lax.{what}: perm must be {shape}, got {perm!r}") from None
    if not pairs:
        if sorted(perm) != list(range(size)):
            raise ValueError(f"hloforge.lax.{what}: perm {perm!r} is not a permutation of range({size})")
        return np.asarray(perm, np.int32)
    if any(len(p) != 2 for p in perm):
        raise TypeError(f"hloforge.lax.{what}: perm must be {shape}, got {perm!r}")
    sources, destinations = [p[0] for p in perm], [p[1] for p in perm]
    if len(set(sources)) != len(sources) or len(set(destinations)) != len(destinations):
        raise ValueError(f"hloforge.lax.{what}: sources and destinations must be unique, got perm={perm!r}")
    if any(not 0 <= i < size for i in sources + destinations):
        raise ValueError(f"hloforge.lax.{what}: perm {perm!r} names an example outside range({size})")
    table = np.full(size, -1, np.int32)
    table[destinations] = sources
    return table


def _from_table(name, frame, table, t):
    """Example ``table[this example]``'s ``t`` (zeros where the table says -1)."""
    if frame.size == 0:  # (no example, none to send or receive: the table is empty)
        return full(0, t.shape, t.dtype)
    gathered = _collective("all_gather", t, name, axis=0, tiled=False)
    source = ops.reshape(ops.dynamic_slice(ops.constant(table), [frame.index], [1]), ())
    zero = ops.constant(np.zeros((), np.int32))
    picked = _take(gathered, ops.maximum(source, zero), axis=0, tiled=False, size=frame.size)
    if (table >= 0).all():
        return picked
    has_source = ops.broadcast_in_dim(ops.compare(source, zero, "GE"), picked.shape, ())
    return ops.select(has_source, picked, full(0, picked.shape, picked.dtype))


def ppermute(x, axis_name, perm):
    """Each example sends its ``x`` to another (jax.lax.ppermute): ``perm`` lists (source, destination)
    pairs; an example no pair sends to gets zeros. Emits an all_gather's transpose and a dynamic_slice.

    Example:
      >>> hf.vmap(lambda v: lax.ppermute(v, "i", [(i, (i + 1) % 4) for i in range(4)]), axis_name="i")(xs)
    """
    name, frame = _one_name("ppermute", axis_name)
    table = _source_table("ppermute", perm, frame.size, pairs=True)
    return _leafwise("ppermute", x, lambda t: _from_table(name, frame, table, t))


def pshuffle(x, axis_name, perm):
    """Example ``i`` gets example ``perm[i]``'s ``x`` (jax.lax.pshuffle).

    Example:
      >>> hf.vmap(lambda v: lax.pshuffle(v, "i", [3, 2, 1, 0]), axis_name="i")(xs)
    """
    name, frame = _one_name("pshuffle", axis_name)
    table = _source_table("pshuffle", perm, frame.size, pairs=False)
    return _leafwise("pshuffle", x, lambda t: _from_table(name, frame, table, t))


def pbroadcast(x, axis_name, source):
    """Example ``source``'s ``x`` in every example (jax.lax.pbroadcast).

    Example:
      >>> hf.vmap(lambda v: lax.pbroadcast(v, "i", 0), axis_name="i")(xs)
    """
    name, frame = _one_name("pbroadcast", axis_name)
    if type(source) is not int or not 0 <= source < frame.size:
        raise ValueError(f"hloforge.lax.pbroadcast: source {source!r} is not an example of the axis (size {frame.size})")
    table = np.full(frame.size, source, np.int32)
    return _leafwise("pbroadcast", x, lambda t: _from_table(name, frame, table, t))


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """The sum over the examples, scattered (jax.lax.psum_scatter): example ``i`` gets block ``i`` of the
    sum along ``scatter_dimension`` (one element of it, removing the dimension, unless ``tiled``).

    Example:
      >>> hf.vmap(lambda v: lax.psum_scatter(v, "i"), axis_name="i")(xs)   # xs: (n, n, ...)
    """
    _no_groups("psum_scatter", axis_index_groups)
    name, frame = _one_name("psum_scatter", axis_name)

    def scatter(t):
        dim = _checked_dim("psum_scatter", "scatter_dimension", scatter_dimension, t.ndim)
        _check_split("psum_scatter", t, dim, frame.size, tiled)
        total = _collective("psum", t, name)
        return _take(total, frame.index, axis=dim, tiled=tiled, size=frame.size)
    return _leafwise("psum_scatter", x, scatter)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """jax.lax.all_to_all: ``x`` split along ``split_axis`` into one block per example; example ``i``
    gets every example's block ``i``, joined along ``concat_axis`` (a new dimension there, the split
    one removed, unless ``tiled``).

    Example:
      >>> hf.vmap(lambda v: lax.all_to_all(v, "i", 0, 1), axis_name="i")(xs)   # xs: (n, n, m)
    """
    _no_groups("all_to_all", axis_index_groups)
    name, frame = _one_name("all_to_all", axis_name)

    def exchange(t):
        split = _checked_dim("all_to_all", "split_axis", split_axis, t.ndim)
        concat = _checked_dim("all_to_all", "concat_axis", concat_axis, t.ndim)
        _check_split("all_to_all", t, split, frame.size, tiled)
        gathered = _collective("all_gather", t, name, axis=0, tiled=False)   # (n, *t.shape)
        blocks = _take(gathered, frame.index, axis=split + 1, tiled=tiled, size=frame.size)
        rest = blocks.shape[1:]
        perm = list(range(1, blocks.ndim))
        perm.insert(concat, 0)
        moved = ops.transpose(blocks, tuple(perm))   # (the examples' blocks along concat_axis)
        if not tiled:
            return moved
        return ops.reshape(moved, rest[:concat] + (frame.size * rest[concat],) + rest[concat + 1:])
    return _leafwise("all_to_all", x, exchange)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """jax.lax.pswapaxes: the named axis and positional ``axis`` trade places (``all_to_all`` with
    ``split_axis = concat_axis = axis``).

    Example:
      >>> hf.vmap(lambda v: lax.pswapaxes(v, "i", 0), axis_name="i")(xs)   # xs: (n, n, m)
    """
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def _checked_dim(what, label, dim, rank):
    if type(dim) is not int or not -rank <= dim < rank:
        raise ValueError(f"hloforge.lax.{what}: {label}={dim!r} is out of range for an operand of rank {rank}")
    return dim % rank


def _check_split(what, t, dim, size, tiled):
    n = t.shape[dim]
    if (tiled and n % size) or (not tiled and n != size):
        need = f"a multiple of the axis size {size}" if tiled else f"the axis size {size}"
        raise ValueError(f"hloforge.lax.{what}: dimension {dim} of the operand (shape {t.shape}) must be {need}"
                         f"{' (tiled=True)' if tiled else ''}, got {n}")


# ---------------------------------------------------------------- the call and its rules

def _emit(kind, name, params, x):
    """The collective as a custom-rule call over ``x`` (one example's value)."""
    rule = _Collective(kind, name, params, named_axes.frame_of(name, f"hloforge.lax.{kind}").size)
    key = core.custom_key(kind, str(name))
    out, = emit_rule_call(lambda ins: [rule.uniform(ins[0])], [x], key)
    core.CUSTOM_RULES[key] = rule
    return out


class _Collective:
    """A ``core.CUSTOM_RULES`` entry: one collective over one axis name of ``size`` examples.

    Inside the vmap that binds the name its derivatives are collectives again (the sweep batches
    them); a call left after the sweep (its operand was the same in every example) is its callee,
    ``uniform``, and differentiates as that."""

    def __init__(self, kind, name, params, size: int):
        self.kind, self.name, self.params, self.size = kind, name, dict(params), size
        self.what = f"hloforge.lax.{kind}"

    def uniform(self, x):
        """The collective of an operand that is the same in every example."""
        if self.kind == "psum":
            return ops.multiply(x, full(self.size, x.shape, x.dtype))
        if self.kind == "all_gather":
            return _gathered([x] * self.size, x.shape, x.dtype, **self.params)
        return x  # (pmean, pmax, pmin of n equal values)

    def call(self, ins):  # (re-emitted when a module holding the call is re-emitted)
        if named_axes.is_bound(self.name, self.what):
            return [_emit(self.kind, self.name, self.params, ins[0])]
        return [self.uniform(ins[0])]

    def custom_batch(self, entry, size, ins, dims):
        (x,), (d,) = ins, dims
        if not named_axes.sweeping(self.name, self.what):  # an inner axis: the collective of each of its examples
            if self.kind != "all_gather":
                return [_emit(self.kind, self.name, self.params, x)], [d]
            x = bdim_at(x, d, size, 0)
            params = {**self.params, "axis": self.params["axis"] + 1}
            return [_emit(self.kind, self.name, params, x)], [0]
        return [self._over_batch(x, d, size)], [None]

    def _over_batch(self, x, d, size):
        if self.kind == "all_gather":
            x = bdim_at(x, d, size, 0)
            return _gathered([ops.reshape(ops.slice(x, [i] + [0] * (x.ndim - 1), [i + 1, *x.shape[1:]]),
                                          x.shape[1:]) for i in range(size)], x.shape[1:], x.dtype, **self.params)
        if self.kind == "pmax" or self.kind == "pmin":
            init = _lowest(x.dtype) if self.kind == "pmax" else _highest(x.dtype)
            return ops.reduce(x, init, (d,), "max" if self.kind == "pmax" else "min")
        total = ops.reduce(x, np.zeros((), x.dtype), (d,), "add")
        if self.kind == "pmean":
            return ops.divide(total, full(size, total.shape, total.dtype))
        return total

    def _differentiable(self):
        if self.kind in ("pmax", "pmin"):
            raise NotImplementedError(f"{self.what}: not differentiable (jax defines no derivative for it)")

    def custom_jvp(self, entry, tangents):
        self._differentiable()
        t = tangents[0]
        if t is None:
            return [None]
        return [self.call([t])[0]]

    def custom_vjp(self, entry, cts, needed=None):
        self._differentiable()
        ct = cts[0]
        if ct is None:
            return [None]
        bound = named_axes.is_bound(self.name, self.what)
        if self.kind != "all_gather":
            return [self.call([ct])[0]]
        if not bound:  # d/dx of n copies of x: the sum of the copies' cotangents
            return [_sum_blocks(ct, self.size, tile=entry.ins[0].shape[self.params["axis"]], **self.params)]
        # d/dx_i of stack_j(x_j) for every example: the sum of the examples' cotangents, at i
        frame = named_axes.frame_of(self.name, self.what)
        x = entry.ins[0]
        if frame.size == 0:  # (no example: nothing to take a block of)
            return [full(0, x.shape, x.dtype)]
        return [_take(_emit("psum", self.name, {}, ct), frame.index, size=frame.size, **self.params)]


def _sum_blocks(x, size, axis, tiled, tile):
    """The sum of the ``size`` blocks of ``x`` along ``axis`` (elements, or tiles of ``tile``
    elements: the length of the gathered value's dimension, 0 too)."""
    if tiled:
        n = tile
        x = ops.reshape(x, x.shape[:axis] + (size, n) + x.shape[axis + 1:])
    return ops.reduce(x, np.zeros((), x.dtype), (axis,), "add")


def _gathered(pieces, shape, dtype, axis, tiled):
    """The ``pieces`` (each of ``shape``) concatenated (tiled) or stacked along ``axis``; zeros of the
    gathered shape when there are none (an empty batch)."""
    if not pieces:
        out = list(shape)
        if tiled:
            out[axis] = 0
        else:
            out.insert(axis, 0)
        return full(0, tuple(out), dtype)
    if tiled:
        return ops.concatenate(pieces, axis)
    expanded = [ops.reshape(p, p.shape[:axis] + (1,) + p.shape[axis:]) for p in pieces]
    return ops.concatenate(expanded, axis)


def _take(x, index, axis, tiled, size):
    """Example ``index``'s block of ``x`` along ``axis``: one element of ``size``, or one of
    ``size`` tiles."""
    n = x.shape[axis] // size if tiled else 1
    starts = [ops.constant(np.zeros((), np.int32))] * x.ndim
    starts[axis] = ops.multiply(index, ops.constant(np.array(n, np.int32)))
    sizes = list(x.shape)
    sizes[axis] = n
    block = ops.dynamic_slice(x, starts, sizes)
    return block if tiled else ops.reshape(block, x.shape[:axis] + x.shape[axis + 1:])


def _lowest(dtype):
    if dtypes.is_bool(dtype):
        return np.array(False)
    if dtypes.is_inexact(dtype):
        return np.array(-np.inf, dtype)
    return np.array(np.iinfo(dtype).min, dtype)


def _highest(dtype):
    if dtypes.is_bool(dtype):
        return np.array(True)
    if dtypes.is_inexact(dtype):
        return np.array(np.inf, dtype)
    return np.array(np.iinfo(dtype).max, dtype)
