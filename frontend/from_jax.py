"""``hf.from_jax(fn)``: call a jax function inside an hloforge program.

jax lowers ``fn`` once per argument signature (pytree structure, shapes, dtypes); its StableHLO is
parsed into the current trace's context, its private functions are inlined, and the body of its
``@main`` is cloned at the insertion point, so the program contains jax's ops as if they had been
traced by hloforge (the passes and the compiler see one module).
"""
from __future__ import annotations

import contextlib
import functools
import threading

import jax
import numpy as np
from jax import tree_util

from hloforge.frontend import dtypes
from hloforge.frontend.context import inline_call, ir
from hloforge.frontend.jit import jit
from hloforge.frontend.location import user_location
from hloforge.frontend.module import Module
from hloforge.frontend.tracing import Tensor, as_tensor, current_builder, is_tracing
from hloforge.passes.pipeline import run as run_passes

_WIDE = {np.dtype(d) for d in (np.float64, np.complex128, np.int64, np.uint64)}


def from_jax(fn, *, name: str | None = None):
    """Wrap the jax function ``fn`` for use in hloforge programs.

    Inside a trace (``hf.jit``, ``hf.trace``) the wrapper lowers ``fn`` with ``jax.jit`` at its
    arguments' shapes and dtypes (once per signature) and inlines the resulting StableHLO ops
    into the program. Outside a trace it compiles itself with ``hf.jit`` and returns arrays. So
    optax optimizers, flax applies and ``jax.nn`` functions run inside ``hf.jit`` unchanged.

    Arguments are pytrees of Tensors, arrays and Python scalars (which become 0-d tensors of
    numpy's default dtypes, as hloforge's own arguments do). jax lowers with 64-bit types enabled
    (scoped to this thread) when an argument is 64-bit, so float64 arrives exact.

    Args:
      fn: a jax-traceable function.
      name: its name in error messages (default ``fn.__name__``).
    Returns:
      A function with ``fn``'s pytree signature.
    Raises:
      TypeError: an argument leaf is not an array, or jax cannot lower ``fn`` (the message quotes
        jax's error).
    Example:
      >>> step = hf.from_jax(lambda g, s, p: optax.adam(1e-3).update(g, s, p))
    """
    label = name or getattr(fn, "__name__", "fn")
    lowered: dict = {}
    lock = threading.Lock()

    def lower(tree, specs):
        key = (tree, specs)
        entry = lowered.get(key)
        if entry is None:
            with lock:
                entry = lowered.get(key)
                if entry is None:
                    entry = lowered[key] = _lower(fn, label, tree, specs)
        return entry

    @functools.wraps(fn)
    def traced(*args, **kwargs):
        leaves, tree = tree_util.tree_flatten((args, kwargs))
        specs = tuple(_spec(leaf, i, label) for i, leaf in enumerate(leaves))
        text, out_tree = lower(tree, specs)
        b = current_builder(f"from_jax({label})")
        operands = [as_tensor(leaf, dtype, what=f"from_jax({label}) argument leaf {i}")
                    for i, (leaf, (_, dtype)) in enumerate(zip(leaves, specs))]
        with b.ctx:
            module = ir.Module.parse(text)
            main = next(op for op in module.body.operations
                        if op.operation.name == "func.func"
                        and ir.StringAttr(op.attributes["sym_name"]).value == "main")
            with b.ip, user_location(None):
                results = inline_call(main, [t.value for t in operands])
        return tree_util.tree_unflatten(out_tree, [b.tensor(v) for v in results])

    eager = jit(traced)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if is_tracing():
            return traced(*args, **kwargs)
        for i, leaf in enumerate(tree_util.tree_leaves((args, kwargs))):
            _spec(leaf, i, label)  # (the argument errors of the traced call, before hf.jit's own)
        return eager(*args, **kwargs)

    return call


def _spec(leaf, index: int, label: str) -> tuple:
    if isinstance(leaf, Tensor):
        return leaf.shape, leaf.dtype
    if dtypes.weak_type(leaf) is not None:
        return (), dtypes.result_type(leaf)
    try:
        array = leaf if hasattr(leaf, "shape") and hasattr(leaf, "dtype") else np.asarray(leaf)
        return tuple(array.shape), dtypes.canonical(array.dtype)
    except (TypeError, ValueError) as e:
        raise TypeError(f"from_jax({label}): argument leaf {index} of type {type(leaf).__name__} is not an "
                        f"array or a scalar ({e})") from None


def _lower(fn, label, tree, specs):
    """(StableHLO text whose @main calls no private function, output pytree structure)."""
    structs = [jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in specs]
    args, kwargs = tree_util.tree_unflatten(tree, structs)
    wide = any(np.dtype(d) in _WIDE for _, d in specs)
    try:
        with jax.enable_x64(True) if wide else contextlib.nullcontext():
            lowered = jax.jit(fn, keep_unused=True).lower(*args, **kwargs)
            out_tree = tree_util.tree_structure(lowered.out_info)
            text = lowered.as_text()
    except Exception as e:
        shown = ", ".join(f"{np.dtype(d).name}{list(s)}" for s, d in specs)
        raise TypeError(f"from_jax({label}): jax could not lower it for argument leaves ({shown}): "
                        f"{type(e).__name__}: {e}") from None
    module = Module.parse(text)
    run_passes(module, "inline,symbol-dce")
    calls = [op for op in module.walk() if op.name == "func.call"]
    if calls:
        raise TypeError(f"from_jax({label}): jax's lowering keeps {len(calls)} call(s) hloforge cannot inline")
    try:
        module.verify()
    except ValueError as e:
        raise TypeError(f"from_jax({label}): jax's lowering does not verify: {e}") from None
    return module.to_text(debug_info=True), out_tree


__all__ = ["from_jax"]
