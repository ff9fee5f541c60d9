"""Module.vmap: batch any Module's entry function (parsed from jax or a file, traced, optimized).

The entry function is re-emitted op for op into a new trace (as Module.vjp does) over per-example
placeholders, the batching sweep re-emits each op that reads a batched value with its registry
``batch`` rule, and the per-example copy is erased (``api.batch_traced``).
"""
from __future__ import annotations

import operator

from hloforge.frontend.ad import core
from hloforge.frontend.ad.module_ad import _entry, _recursion_room
from hloforge.frontend.batching.api import batch_traced
from hloforge.frontend.module import Module, ShapeDtype
from hloforge.frontend.trace_function import trace

WHAT = "Module.vmap"
_UNKNOWN_OP = "hloforge AD: cannot differentiate "  # (frontend/ad/core.py: an op without a registry entry)


def _per_item(axes, n, which):
    """One axis (int or None) per argument or result from an int, None or a sequence of them."""
    if axes is None or _is_int(axes):
        return [axes] * n
    if isinstance(axes, (list, tuple)):
        if len(axes) != n:
            raise ValueError(f"{WHAT}: {which} has {len(axes)} entries ({list(axes)}) for {n} "
                             f"{'arguments' if which == 'in_axes' else 'results'}")
        if all(a is None or _is_int(a) for a in axes):
            return list(axes)
    raise TypeError(f"{WHAT}: {which} must be an int, None, or a sequence of ints and Nones with one entry per "
                    f"{'argument' if which == 'in_axes' else 'result'}, got {axes!r}")


def _is_int(a) -> bool:
    return not isinstance(a, bool) and hasattr(a, "__index__")


def _axis(a, rank, which, i) -> int:
    a = operator.index(a)
    if not -rank <= a < rank:
        raise ValueError(f"{WHAT}: {which} {a} of {'argument' if which == 'in_axes' else 'result'} {i} is out "
                         f"of range for its batched rank {rank} (axes -{rank}..{rank - 1})")
    return a % rank


def _static(specs, which):
    for i, s in enumerate(specs):
        if not s.is_static:
            raise ValueError(f"{WHAT}: {which} {i} of the entry function has the dynamic type {s}; batching "
                             "needs static shapes")


def _batched_spec(spec, axis, size) -> ShapeDtype:
    shape = list(spec.shape)
    shape.insert(axis, size)
    return ShapeDtype(shape, spec.dtype)


def module_vmap(self, axis_size, in_axes=0, out_axes=0, *, name: str = "main") -> Module:
    """A new Module whose ``@name`` is this module's entry function over a batch of ``axis_size``
    examples (jax.vmap of the program it holds).

    Args:
      axis_size: the batch size (a nonnegative int).
      in_axes: where each argument gets the batch dimension: an int (every argument), None (no
        argument: each is shared by all examples) or a sequence with one int or None per argument.
        Negative axes count from the end of the batched argument.
      out_axes: where each result carries the batch dimension, the same way; None only for a
        result that depends on no batched argument. Results that depend on none are broadcast.
      name: the entry function's name in the new module.
    Returns:
      A Module with the batched signature, which compiles and runs.
    Raises:
      TypeError/ValueError: bad axes, a dynamic shape, a batched result with out_axes None.
      NotImplementedError: an op of the module has no batch rule yet.
    Example:
      >>> m = hf.Module.parse(jax.jit(f).lower(x).as_text())
      >>> mb = m.vmap(8, in_axes=(0, None))      # f over 8 examples of its first argument
    """
    if not _is_int(axis_size) or operator.index(axis_size) < 0:
        raise TypeError(f"{WHAT}: axis_size must be a nonnegative int, got {axis_size!r}")
    size = operator.index(axis_size)
    ins, outs = self.signature
    _static(ins, "argument")
    _static(outs, "result")
    in_ax = [None if a is None else _axis(a, len(s.shape) + 1, "in_axes", i)
             for i, (s, a) in enumerate(zip(ins, _per_item(in_axes, len(ins), "in_axes")))]
    out_ax = [None if a is None else _axis(a, len(s.shape) + 1, "out_axes", i)
              for i, (s, a) in enumerate(zip(outs, _per_item(out_axes, len(outs), "out_axes")))]
    specs = [s if a is None else _batched_spec(s, a, size) for s, a in zip(ins, in_ax)]
    func_op, symbols, source, depth = _entry(self, WHAT)  # (source: keeps an inlined copy alive)

    def reemit(inner):
        try:
            return core.reemit_function(func_op, inner, symbols)
        except NotImplementedError as e:  # (AD's re-emission words it for AD; name this transformation)
            if not str(e).startswith(_UNKNOWN_OP):
                raise
            raise NotImplementedError(f"{WHAT}: cannot batch {str(e)[len(_UNKNOWN_OP):]}") from None

    def out_axes_of(results, dims):
        for i, (d, a) in enumerate(zip(dims, out_ax)):
            if a is None and d is not None:
                raise ValueError(f"{WHAT}: out_axes is None for result {i}, but the result depends on a batched "
                                 f"argument (it is batched on axis {d})")
        return out_ax

    def body(*args):
        return tuple(batch_traced(reemit, list(args), in_ax, size, out_axes_of, WHAT))

    with _recursion_room(depth):
        return trace(body, *specs, name=name)


Module.vmap = module_vmap
