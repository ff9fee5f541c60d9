"""``hf.from_jax(fn)``: call a jax function inside an hloforge program.

jax lowers ``fn`` once per argument signature (pytree structure, shapes, dtypes); its StableHLO is
parsed into the current trace's context, its private functions are inlined, and its ``@main``
becomes a private function of the program that a ``func.call`` tagged with
``hloforge.custom_rule`` calls (the representation of hf.custom_vjp, frontend/ad/custom.py).
Module.optimize's inliner removes the call, so the passes and the compiler see jax's ops in one
function. hloforge's AD differentiates the call with jax's own derivative of ``fn`` (``jax.vjp``, as
a forward that returns the residuals and a pullback that reads them; ``jax.jvp``), themselves from_jax
functions, so stop_gradient, custom_vjp/custom_jvp rules and jax's conventions (relu'(0) = 0) hold,
which the lowered ops alone lose.
"""
from __future__ import annotations

import contextlib
import functools
import re
import threading

import jax
import jax.numpy as jnp
import numpy as np
from jax import tree_util

from hloforge.frontend import dtypes, jax_api
from hloforge.frontend.ad import core
from hloforge.frontend.ad._util import differentiable
from hloforge.frontend.context import ir
from hloforge.frontend.jit import jit
from hloforge.frontend.module import Module
from hloforge.frontend.tracing import Tensor, as_tensor, current_builder, is_tracing, spec_of_type
from hloforge.passes.fold import BOUNDARY
from hloforge.passes.pipeline import run as run_passes

_WIDE = {np.dtype(d) for d in (np.float64, np.complex128, np.int64, np.uint64)}
_CALLBACK = re.compile(r"stablehlo\.custom_call @(\"?[\w.]*callback[\w.]*\"?)")


def from_jax(fn, *, name: str | None = None):
    """Wrap the jax function ``fn`` for use in hloforge programs.

    Inside a trace (``hf.jit``, ``hf.trace``) the wrapper lowers ``fn`` with ``jax.jit`` at its
    arguments' shapes and dtypes (once per signature) and calls the resulting StableHLO, a private
    function that Module.optimize inlines into the program. Outside a trace it compiles itself with
    ``hf.jit`` and returns arrays. So optax optimizers, flax applies and ``jax.nn`` functions run
    inside ``hf.jit`` unchanged. hloforge's derivatives of the call (hf.grad, hf.vjp, hf.jvp, ...)
    are jax's derivatives of ``fn``: ``jax.lax.stop_gradient``, ``jax.custom_vjp`` and
    ``jax.custom_jvp`` inside ``fn`` are honoured.

    Arguments are pytrees of Tensors, arrays and Python scalars (which become 0-d tensors of
    numpy's default dtypes, as hloforge's own arguments do); other leaves (functions, strings: an
    eqx.Module's fields) are static, as ``eqx.filter_jit`` makes them, and key the lowering. jax lowers with 64-bit types enabled
    (scoped to this thread) when an argument is 64-bit, so float64 arrives exact.

    Args:
      fn: a jax-traceable function, without host callbacks (jax.debug.print, pure_callback,
        io_callback) and closing over no value of an enclosing jax transformation.
      name: its name in error messages (default ``fn.__name__``).
    Returns:
      A function with ``fn``'s pytree signature.
    Raises:
      TypeError: an argument leaf is neither an array nor hashable, jax cannot lower ``fn`` (the message quotes
        jax's error), ``fn`` uses host callbacks, or it closes over a jax tracer.
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

    with_static: dict = {}  # static leaves' key -> the from_jax function of the array leaves alone

    def with_static_bound(leaves, tree):
        """(the from_jax function of the array leaves alone, with the leaves that are not arrays (functions,
        strings: eqx modules' fields) bound as static; the array leaves)."""
        key, bound, arrays = jax_api.bind_static(fn, tree, leaves, f"from_jax({label})")
        inner = with_static.get(key)
        if inner is None:
            inner = with_static.setdefault(key, from_jax(bound, name=label))
        return inner, arrays

    def static_call(leaves, tree):
        inner, arrays = with_static_bound(leaves, tree)
        return inner(*arrays)

    @functools.wraps(fn)
    def traced(*args, **kwargs):
        leaves, tree = tree_util.tree_flatten((args, kwargs))
        leaves = jax_api.raw_keys(leaves)
        if not all(map(jax_api.is_array_leaf, leaves)):
            return static_call(leaves, tree)
        specs = tuple(_spec(leaf, i, label) for i, leaf in enumerate(leaves))
        call = lower(tree, specs)
        operands = [as_tensor(leaf, dtype, what=f"from_jax({label}) argument leaf {i}")
                    for i, (leaf, (_, dtype)) in enumerate(zip(leaves, specs))]
        return tree_util.tree_unflatten(call.out_tree, call.call(operands))

    eager = jit(traced)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if is_tracing():
            return traced(*args, **kwargs)
        leaves, tree = tree_util.tree_flatten((args, kwargs))
        leaves = jax_api.raw_keys(leaves)
        if not all(map(jax_api.is_array_leaf, leaves)):
            return static_call(leaves, tree)
        for i, leaf in enumerate(leaves):
            _spec(leaf, i, label)  # (the argument errors of the traced call, before hf.jit's own)
        args, kwargs = tree_util.tree_unflatten(tree, leaves)
        return eager(*args, **kwargs)

    key_results: dict = {}

    def result_keys(*args, **kwargs) -> tuple:
        """Per result leaf at these arguments: the typed PRNG key dtype jax gives it, or None. (from_jax
        lowers typed keys as their key data, so the results are key data, which hf.optimize makes keys again.)"""
        leaves, tree = tree_util.tree_flatten((args, kwargs))
        if not all(map(jax_api.is_array_leaf, leaves)):
            inner, arrays = with_static_bound(leaves, tree)
            return inner.result_keys(*arrays)
        if not any(map(jax_api.is_typed_key, leaves)):  # (keys made inside: the lowering's own results)
            raw = jax_api.raw_keys(leaves)
            return lower(tree, tuple(_spec(leaf, i, label) for i, leaf in enumerate(raw))).out_keys
        specs = tuple(jax_api.shape_dtype(leaf) for leaf in leaves)
        found = key_results.get((tree, specs))
        if found is None:  # (keys from typed key arguments: jax's results at those, the lowering's being raw)
            found = key_results[tree, specs] = _result_keys(fn, tree, specs)
        return found

    call.result_keys = result_keys
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


def _lower(fn, label, tree, specs) -> "_JaxCall":
    """jax's lowering of ``fn`` at ``specs``, its @main calling no private function."""
    structs = [jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in specs]
    args, kwargs = tree_util.tree_unflatten(tree, structs)
    shown = ", ".join(f"{np.dtype(d).name}{list(s)}" for s, d in specs)
    try:
        with _x64_for(specs):
            traced = jax.jit(fn, keep_unused=True).trace(*args, **kwargs)
            lowered = traced.lower()
            out_tree = tree_util.tree_structure(lowered.out_info)
            text = lowered.as_text()
    except Exception as e:
        raise TypeError(f"from_jax({label}): jax could not lower it for argument leaves ({shown}): "
                        f"{type(e).__name__}: {e}") from None
    callback = _CALLBACK.search(text)
    if callback:
        raise TypeError(f"from_jax({label}): jax's lowering calls the host callback {callback.group(1)} "
                        "(jax.debug.print, jax.debug.callback, pure_callback or io_callback), and jax host "
                        "callbacks cannot be embedded in an hloforge program; remove it from the function")
    module = Module.parse(text).without_shardings()  # (an hloforge program gets its shardings from hf.jit)
    run_passes(module, "inline,symbol-dce")
    # (inline's call boundaries stay: their identity functions come along into each trace, _clone_into)
    calls = [op for op in module.walk() if op.name == "func.call" and BOUNDARY not in op.attributes]
    if calls:
        raise TypeError(f"from_jax({label}): jax's lowering keeps {len(calls)} call(s) hloforge cannot inline")
    n_args = len(module.entry_function().regions[0].blocks[0].arguments)
    if n_args != len(specs):
        raise TypeError(f"from_jax({label}): the function closes over {n_args - len(specs)} jax tracer(s) (values "
                        f"of an enclosing jax.jit, jax.grad or jax.vmap: jax lowers it with {n_args} arguments for "
                        f"its {len(specs)} argument leaves ({shown})), which cannot enter an hloforge program; the "
                        "function must take it as an argument")
    try:
        module.verify()
    except ValueError as e:
        raise TypeError(f"from_jax({label}): jax's lowering does not verify: {e}") from None
    call = _JaxCall(fn, label, tree, specs, module.to_text(debug_info=True), out_tree)
    # (a custom call, such as the CPU's LAPACK factorizations, is opaque to hloforge's AD: jax's derivative then)
    call.plain = not jax_api.has_own_derivatives(traced.jaxpr) and not _has_custom_calls(module)
    call.out_keys = jax_api.key_dtypes(tree_util.tree_leaves(lowered.out_info))
    return call


def _has_custom_calls(module: Module) -> bool:
    return any(op.name == "stablehlo.custom_call" for op in module.walk())


def _result_keys(fn, tree, specs) -> tuple:
    """jax's typed PRNG key dtype of each result leaf of ``fn`` at argument leaves ``specs`` (or None)."""
    structs = [jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in specs]
    with _x64_for([s for s in specs if not jax_api.is_key_dtype(s[1])]):
        out = jax.eval_shape(functools.partial(_all_leaves, fn, tree), *structs)
    return jax_api.key_dtypes(out)


def _x64_for(specs):
    wide = any(np.dtype(d) in _WIDE for _, d in specs)
    return jax.enable_x64(True) if wide else contextlib.nullcontext()


class _JaxCall:
    """One lowering of a from_jax function: the private function it becomes in each trace, the
    call to it, and its derivative rules (a ``core.CUSTOM_RULES`` entry, as hf.custom_vjp's)."""

    def __init__(self, fn, label, tree, specs, text, out_tree):
        self.fn, self.label, self.tree, self.specs, self.text, self.out_tree = fn, label, tree, specs, text, out_tree
        self.key = core.custom_key("from_jax", label)
        self.plain = False  # (no custom_jvp/custom_vjp/stop_gradient/custom call: jax's derivative is its ops')
        self.out_keys = ()  # (per result leaf: its typed PRNG key dtype, which crosses as key data, or None)
        self.out_specs = None
        self._derivatives: dict = {}
        self._lock = threading.Lock()
        core.CUSTOM_RULES[self.key] = self

    def call(self, operands) -> list:
        """Emit the tagged ``func.call`` over ``operands`` (Tensors); its result Tensors."""
        b = current_builder(f"from_jax({self.label})")
        self._define(b)
        with b.ctx:
            attrs = {"callee": ir.FlatSymbolRefAttr.get(self.key), core.CUSTOM_ATTR: ir.StringAttr.get(self.key)}
        op = b.emit("func.call", operands, self.out_specs, attrs)
        return [b.tensor(r) for r in op.results]

    def _define(self, b) -> None:
        """Add the private function to the trace's module, once."""
        defined = getattr(b, "_from_jax_functions", None)
        if defined is None:
            defined = b._from_jax_functions = set()
        if self.key in defined:
            return
        # (a builder emitting into an existing module may find it there)
        if self.out_specs is None or self.key not in core.symbols_of(b.module):
            self._clone_into(b)
        defined.add(self.key)

    def _clone_into(self, b) -> None:
        with b.ctx:
            parsed = ir.Module.parse(self.text)
            main = next(op for op in parsed.body.operations if op.operation.name == "func.func"
                        and ir.StringAttr(op.attributes["sym_name"]).value == "main")
            f = main.operation.clone(ip=ir.InsertionPoint(b.module.body))
            for attribute in list(f.attributes):
                if attribute not in ("sym_name", "function_type"):
                    del f.attributes[attribute]  # (jax's result names, shardings and layouts)
            f.attributes["sym_name"] = ir.StringAttr.get(self.key)
            f.attributes["sym_visibility"] = ir.StringAttr.get("private")
            types = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value).results
            self.out_specs = [spec_of_type(t) for t in types]
            self._clone_boundaries(parsed, f, b)

    def _clone_boundaries(self, parsed, f, b) -> None:
        """The identity functions of inline's call boundaries in ``f`` (jax's lowering, inlined), copied from
        ``parsed`` into the trace's module under names of this call's own, and ``f``'s calls renamed."""
        functions = {ir.StringAttr(op.attributes["sym_name"]).value: op.operation for op in parsed.body.operations
                     if op.operation.name == "func.func"}
        stack, renamed = [f], {}
        while stack:
            for block in (blk for region in stack.pop().regions for blk in region.blocks):
                for op in block.operations:
                    op = op.operation
                    stack.append(op)
                    if op.name != "func.call" or BOUNDARY not in op.attributes:
                        continue
                    callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
                    if callee not in renamed:
                        renamed[callee] = f"{self.key}_{callee}"
                        copy = functions[callee].clone(ip=ir.InsertionPoint(b.module.body))
                        copy.attributes["sym_name"] = ir.StringAttr.get(renamed[callee])
                    op.attributes["callee"] = ir.FlatSymbolRefAttr.get(renamed[callee])

    def custom_vjp(self, entry, cts, needed=None) -> list:
        """jax.vjp of ``fn`` w.r.t. the needed float/complex argument leaves, from the output
        leaves' cotangents that are not symbolic zeros."""
        wrt = tuple(i for i, x in enumerate(entry.ins)
                    if differentiable(x.dtype) and (needed is None or needed[i]))
        seeded = tuple(i for i, (c, o) in enumerate(zip(cts, entry.outs)) if c is not None and differentiable(o.dtype))
        result = [None] * len(entry.ins)
        if not wrt or not seeded:
            return result
        forward, pullback = self._split_vjp(wrt, seeded)
        residuals = forward(list(entry.ins))  # (reads no cotangent: module_ad.split_vjp puts it in the forward)
        grads = pullback(residuals, [cts[i] for i in seeded])
        for i, g in zip(wrt, grads):
            result[i] = g
        return result

    def custom_jvp(self, entry, tangents) -> list:
        """jax.jvp of ``fn`` w.r.t. the float/complex argument leaves that have tangents."""
        wrt = tuple(i for i, (x, t) in enumerate(zip(entry.ins, tangents)) if t is not None and differentiable(x.dtype))
        carried = tuple(i for i, o in enumerate(entry.outs) if differentiable(o.dtype))
        result = [None] * len(entry.outs)
        if not wrt or not carried:
            return result
        outs = self._derivative("jvp", wrt, carried)(list(entry.ins), [tangents[i] for i in wrt])
        for i, t in zip(carried, outs):
            result[i] = t
        return result

    def custom_batch(self, entry, size, ins, dims) -> tuple:
        """hf.vmap of the call: the from_jax function of ``jax.vmap(fn)`` at these batch
        dimensions (so jax's batching rules, and its derivatives of the batched function, hold);
        every output batched at dimension 0."""
        key = ("vmap", tuple(dims))
        with self._lock:
            wrapper = self._derivatives.get(key)
            if wrapper is None:
                batched = jax.vmap(functools.partial(_all_leaves, self.fn, self.tree), in_axes=tuple(dims))
                wrapper = self._derivatives[key] = from_jax(batched, name=f"vmap({self.label})")
        outs = list(wrapper(*ins))
        return outs, [0] * len(outs)

    def _split_vjp(self, wrt, seeded) -> tuple:
        """jax.vjp of ``fn`` in two from_jax functions: the forward, primals -> the pullback's residuals
        (the leaves of jax's vjp function), and the pullback, (residuals, cotangents) -> cotangents, so
        that the cotangents do not recompute ``fn`` (issue 51)."""
        key = ("split vjp", wrt, seeded)
        with self._lock:
            pair = self._derivatives.get(key)
            if pair is None:
                saved = _SavedPullback()
                pair = self._derivatives[key] = (
                    from_jax(functools.partial(_jax_vjp_forward, self.fn, self.tree, wrt, saved),
                             name=f"vjp_forward({self.label})"),
                    from_jax(functools.partial(_jax_vjp_pullback, saved, seeded), name=f"vjp_pullback({self.label})"))
        return pair

    def _derivative(self, kind, wrt, selected):
        """The from_jax function of jax's ``kind`` ("jvp") derivative (its own rules give higher orders)."""
        key = (kind, wrt, selected)
        with self._lock:
            wrapper = self._derivatives.get(key)
            if wrapper is None:
                wrapper = self._derivatives[key] = from_jax(
                    functools.partial(_jax_jvp, self.fn, self.tree, wrt, selected), name=f"{kind}({self.label})")
        return wrapper


def _flat_fn(fn, tree, primals, wrt):
    """``fn`` as a function of the argument leaves ``wrt`` (the others fixed at ``primals``),
    returning its output leaves."""
    def flat(*diff):
        leaves = list(primals)
        for i, d in zip(wrt, diff):
            leaves[i] = d
        args, kwargs = tree_util.tree_unflatten(tree, leaves)
        return tree_util.tree_leaves(fn(*args, **kwargs))
    return flat


def _all_leaves(fn, tree, *leaves):
    """``fn`` over its argument leaves, returning its output leaves."""
    args, kwargs = tree_util.tree_unflatten(tree, leaves)
    return tree_util.tree_leaves(fn(*args, **kwargs))


def _zero_cotangent(out):
    if jnp.issubdtype(out.dtype, jnp.inexact):
        return jnp.zeros(out.shape, out.dtype)
    return np.zeros(out.shape, jax.dtypes.float0)


class _SavedPullback:
    """What ``_jax_vjp_forward``'s lowering leaves for ``_jax_vjp_pullback``'s: the pytree structure of jax's
    vjp function (a ``Partial`` whose leaves are the residuals) and the outputs' shapes and dtypes."""
    tree = None
    outs = None


def _jax_vjp_forward(fn, tree, wrt, saved, primals):
    """The residuals of jax.vjp of ``fn`` w.r.t. the argument leaves ``wrt``."""
    outs, pullback = jax.vjp(_flat_fn(fn, tree, primals, wrt), *[primals[i] for i in wrt])
    residuals, saved.tree = tree_util.tree_flatten(pullback)
    saved.outs = [jax.ShapeDtypeStruct(o.shape, o.dtype) for o in outs]
    return residuals


def _jax_vjp_pullback(saved, seeded, residuals, cts):
    """The cotangents of ``_jax_vjp_forward``'s arguments from its residuals and the cotangents of the
    output leaves ``seeded`` (others zero)."""
    pullback = tree_util.tree_unflatten(saved.tree, residuals)
    given = dict(zip(seeded, cts))
    return list(pullback([given[i] if i in given else _zero_cotangent(o) for i, o in enumerate(saved.outs)]))


def _jax_jvp(fn, tree, wrt, carried, primals, tangents):
    """The tangents of output leaves ``carried`` from those of argument leaves ``wrt`` (others zero)."""
    _, out_tangents = jax.jvp(_flat_fn(fn, tree, primals, wrt), tuple(primals[i] for i in wrt), tuple(tangents))
    return [out_tangents[i] for i in carried]


__all__ = ["from_jax"]
