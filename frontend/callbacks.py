"""Host callbacks: hloforge.debug.print, hloforge.debug.callback, hloforge.pure_callback and
hloforge.io_callback.

Inside a trace each call emits ``func.call`` of a private function holding one
``stablehlo.custom_call @hloforge.python_callback`` (api_version 1, ``mhlo.backend_config =
{index = 0 : ui64}``, row-major layouts: jax's form of its FFI callbacks), tagged with

- ``hloforge.callback = "<key>"``: the Python function to run, found in ``callback_registry.HOST_CALLBACKS``;
- ``hloforge.callback_order = N``: for ``ordered=True``, the program order (a counter of this
  process, so copies made by AD or vmap keep the order of the call they copy).

The call carries ``hloforge.custom_rule`` (``ad.core.CUSTOM_RULES``), so hf.grad, hf.jvp and
hf.vmap use the rules of ``CallbackRule``: a debug callback has no tangents and prints the primal
values; under vmap it runs once per example (jax's unrolled debug batching), and pure_callback
follows its ``vmap_method``, on the host; an io_callback is not differentiable and runs once per
example (unordered only), as in jax. Debug and io calls also carry ``hloforge.effect``, so vmap's
clean-up of its per-example trace keeps them (``batching/core.erase_dead``).

What runs is chosen when the module is compiled (``runtime/callbacks.py``): the target becomes
jaxlib's ``xla_ffi_python_{cpu,gpu}_callback`` for the device, ``index`` the callback's position in
the list handed to PJRT with the module, and the ordered calls of one block are chained by
tokens. The keys name functions of this process only: a module saved and parsed in another
process cannot run its callbacks (its compile is refused).
"""
from __future__ import annotations

import itertools
import string
import sys

import numpy as np
from jax import tree_util

from hloforge.frontend import dtypes, eager, ops
from hloforge.frontend.ad import core
from hloforge.frontend.batching._util import moveaxis
from hloforge.frontend.batching.core import EFFECT as EFFECT_ATTR
from hloforge.frontend.callback_registry import CALLBACK_ATTR, ORDER_ATTR, TARGET, HostCallback, register
from hloforge.frontend.context import func, ir
from hloforge.frontend.tracing import Tensor, _Scope, _type_str, current_builder, is_tracing

_order = itertools.count()  # (ordered calls: program order)

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all", "legacy_vectorized", None)


# ---------------------------------------------------------------- arguments


def _split(args, kwargs):
    """(tree, dynamic Tensors, {leaf index: static value}) of a callback's arguments: Tensors are
    run-time values; every other leaf (Python scalars, strings, numpy arrays) is passed as it is."""
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    dynamic = [l for l in leaves if isinstance(l, Tensor)]
    static = {i: l for i, l in enumerate(leaves) if not isinstance(l, Tensor)}
    return tree, dynamic, static


def _merge(tree, static, arrays):
    arrays = iter(arrays)
    n = tree.num_leaves
    return tree_util.tree_unflatten(tree, [static[i] if i in static else next(arrays) for i in range(n)])


def _host_leaves(args, kwargs):
    """Eager calls: jax arrays as numpy arrays (what a compiled program's callback receives)."""
    def host(leaf):
        return np.asarray(leaf) if hasattr(leaf, "__array__") and not isinstance(leaf, np.ndarray) else leaf
    return tree_util.tree_map(host, (args, kwargs))


# ---------------------------------------------------------------- emission


def _layouts(shapes) -> str:
    """Row-major ``operand_layouts``/``result_layouts`` text (a token's: empty)."""
    items = []
    for s in shapes:
        r = len(s)
        items.append(f"dense<[{', '.join(str(d) for d in range(r - 1, -1, -1))}]> : tensor<{r}xindex>" if r
                     else "dense<> : tensor<0xindex>")
    return "[" + ", ".join(items) + "]"


def emit(rule: "CallbackRule", args) -> list:
    """A call of a new private function holding the callback's custom call, over ``args``
    (Tensors of ``rule.arg_specs``); returns the result Tensors."""
    b = current_builder(rule.what)
    for i, (a, (shape, dtype)) in enumerate(zip(args, rule.arg_specs)):
        if not isinstance(a, Tensor) or a.shape != tuple(shape) or a.dtype != dtype:
            raise TypeError(f"{rule.what}: operand {i} must be a Tensor of type {_type_str(shape, dtype)}, got {a!r}")
        if None in a.shape:
            raise ValueError(f"{rule.what}: operand {i} has a dynamic shape {a.shape}; callbacks need static shapes")
    name = core.custom_key("callback", rule.name)
    extra = {"mhlo.backend_config": "{index = 0 : ui64}",
             "operand_layouts": _layouts([s for s, _ in rule.arg_specs]),
             "result_layouts": _layouts([s for s, _ in rule.result_specs]),
             CALLBACK_ATTR: f'"{rule.key}"'}
    if rule.ordered:
        extra[ORDER_ATTR] = f"{rule.order} : i64"
    types = [a.value.type for a in args]
    with b.ctx, ir.Location.unknown():
        f = func.FuncOp(name, ir.FunctionType.get(types, []), ip=ir.InsertionPoint(b.module.body))
        f.attributes["sym_visibility"] = ir.StringAttr.get("private")
        block = f.add_entry_block()
    with b.at(block, _Scope(f"the body of {name}"), isolated=True):
        params = [b.tensor(v) for v in block.arguments]
        outs = ops.custom_call(params, TARGET, list(rule.result_specs), has_side_effect=rule.side_effect,
                               extra_attributes=extra)
        b.emit("func.return", outs, [])
    with b.ctx:
        f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(types, [o.value.type for o in outs]))
        attrs = {"callee": ir.FlatSymbolRefAttr.get(name), core.CUSTOM_ATTR: ir.StringAttr.get(name)}
        if rule.side_effect:
            attrs[EFFECT_ATTR] = ir.UnitAttr.get()
    op = b.emit("func.call", args, list(rule.result_specs), attrs)
    core.CUSTOM_RULES[name] = rule
    return [b.tensor(r) for r in op.results]


# ---------------------------------------------------------------- transformation rules


class CallbackRule:
    """The AD and batching rules of one callback call (``ad.core.CUSTOM_RULES``).

    ``kind``: "debug" (no results, a side effect), "pure" (results, no side effect) or "io"
    (results and a side effect); ``user``: for "pure" and "io", the flat function the host check
    wraps (numpy arrays -> the callback's result pytree)."""

    def __init__(self, kind, what, host, arg_specs, result_specs, *, ordered=False, order=None, user=None,
                 out_tree=None, vmap_method=None):
        self.kind, self.what, self.host = kind, what, host
        self.arg_specs = tuple((tuple(s), np.dtype(d)) for s, d in arg_specs)
        self.result_specs = tuple((tuple(s), np.dtype(d)) for s, d in result_specs)
        self.ordered = ordered
        self.order = next(_order) if ordered and order is None else order
        self.user, self.out_tree, self.vmap_method = user, out_tree, vmap_method
        self.key = register(host)
        self.name = {"hloforge.debug.print": "print", "hloforge.debug.callback": "debug_callback",
                     "hloforge.io_callback": "io_callback"}.get(what, "pure")

    @property
    def side_effect(self) -> bool:
        return self.kind in ("debug", "io")

    # (re-emission: AD copies of a tape, loop bodies)
    def call(self, ins):
        return emit(self, list(ins))

    def custom_jvp(self, entry, tangents):
        if self.kind == "debug":
            return []  # (no results: the call runs on the primal values, as jax's debug callbacks do)
        if self.kind == "io":
            raise ValueError(f"{self.what}: IO callbacks do not support JVP (hf.jvp, hf.jacfwd), as in jax")
        raise ValueError(f"{self.what}: pure callbacks do not support JVP (hf.jvp, hf.jacfwd); wrap the function "
                         "that calls it in hf.custom_jvp to use callbacks while taking gradients")

    def custom_vjp(self, entry, cts, needed=None):
        if self.kind == "debug":
            return [None] * len(entry.ins)
        if self.kind == "io":
            raise ValueError(f"{self.what}: IO callbacks do not support differentiation (hf.grad, hf.vjp, hf.jacrev), "
                             "as in jax")
        raise ValueError(f"{self.what}: pure callbacks do not support differentiation (hf.grad, hf.vjp, "
                         "hf.jacrev); wrap the function that calls it in hf.custom_vjp or hf.custom_jvp to use "
                         "callbacks while taking gradients")

    def custom_batch(self, entry, size, ins, dims):
        xs = [x if d is None else moveaxis(x, d, 0) for x, d in zip(ins, dims)]
        batched = [d is not None for d in dims]
        if self.kind == "io" and self.ordered:
            raise ValueError(f"{self.what}: cannot vmap an ordered IO callback (as in jax); pass ordered=False to "
                             "run it once per example")
        if self.kind in ("debug", "io") or self.vmap_method in ("sequential", "sequential_unrolled"):
            rule = self._sequential(size, xs, batched)
        elif self.vmap_method in ("expand_dims", "broadcast_all", "legacy_vectorized"):
            if self.vmap_method != "legacy_vectorized":
                xs = [x if b else _leading(x, size if self.vmap_method == "broadcast_all" else 1)
                      for x, b in zip(xs, batched)]
            rule = pure_rule(self.user, self.out_tree, [(x.shape, x.dtype) for x in xs],
                             [((size, *s), d) for s, d in self.result_specs], self.what, self.vmap_method)
        else:
            raise NotImplementedError(
                f"{self.what}: vmap is only supported when vmap_method is one of 'sequential', "
                f"'sequential_unrolled', 'expand_dims', 'broadcast_all' or 'legacy_vectorized', got "
                f"vmap_method={self.vmap_method!r}")
        outs = emit(rule, xs)
        self._replaced(entry)
        return outs, [0] * len(outs)

    def _replaced(self, entry) -> None:
        """Let vmap erase the per-example call ``entry`` stands for: ``entry.op`` itself, or the copy
        of it a loop body's batching re-emitted over ``entry.ins`` (a call of this rule reading them)."""
        candidates = [entry.op] + [use.owner for x in entry.ins for use in x.value.uses]
        for op in candidates:
            op = getattr(op, "operation", op)
            if op.name != "func.call" or EFFECT_ATTR not in op.attributes or core.CUSTOM_ATTR not in op.attributes:
                continue
            if core.CUSTOM_RULES.get(ir.StringAttr(op.attributes[core.CUSTOM_ATTR]).value) is self:
                del op.attributes[EFFECT_ATTR]

    def _sequential(self, size, xs, batched) -> "CallbackRule":
        """The call once per example, on the host (jax unrolls debug callbacks and loops
        sequential pure callbacks the same way): results stacked along a new leading dimension."""
        inner, specs = self.host, self.result_specs

        def run(*arrays):
            per = [inner(*[a[i] if b else a for a, b in zip(arrays, batched)]) for i in range(size)]
            return tuple(np.stack([p[k] for p in per]) if size else np.zeros((0, *s), d)
                         for k, (s, d) in enumerate(specs))

        out_specs = [((size, *s), d) for s, d in specs]
        return CallbackRule(self.kind, self.what, HostCallback(run, out_specs, self.what),
                            [(x.shape, x.dtype) for x in xs], out_specs, ordered=self.ordered, order=self.order,
                            user=None, out_tree=self.out_tree, vmap_method=self.vmap_method)


def _leading(x, n):
    """``x`` with a new leading dimension of size ``n`` (1: expand_dims; the batch: broadcast_all)."""
    return ops.broadcast_in_dim(x, (n, *x.shape), tuple(range(1, x.ndim + 1)))


# ---------------------------------------------------------------- debug.callback / debug.print


def _debug_host(fn, tree, static, what):
    def run(*arrays):
        args, kwargs = _merge(tree, static, arrays)
        fn(*args, **kwargs)
        return ()
    return HostCallback(run, (), what)


def _debug(fn, args, kwargs, ordered, what):
    tree, dynamic, static = _split(args, kwargs)
    rule = CallbackRule("debug", what, _debug_host(fn, tree, static, what), [(t.shape, t.dtype) for t in dynamic],
                        (), ordered=bool(ordered))
    emit(rule, dynamic)


def debug_callback(callback=None, *args, ordered: bool = False, partitioned: bool = False, **kwargs):
    """Call a Python function with the run-time values of its arguments (jax.debug.callback).

    Inside a trace it emits ``stablehlo.custom_call @hloforge.python_callback`` (has_side_effect,
    no results), which the compiled program calls on the host: Tensor arguments arrive as numpy
    arrays holding their values, every other argument as it was passed. Outside a trace it calls
    ``callback`` at once (jax arrays as numpy arrays). Under hf.grad/hf.jvp it sees the primal
    values; under hf.vmap it runs once per example.

    Args:
      callback: a Python callable; its return value is ignored. Omitted: the two-call form,
        ``hf.debug.callback(ordered=True)(callback, *args)``.
      *args, **kwargs: its arguments (pytrees of Tensors and other values).
      ordered: keep program order with the other ordered callbacks (tokens chain them).
      partitioned: accepted for jax's signature (programs here run on one device).
    Returns:
      None (the two-call form: the function that takes ``callback, *args, **kwargs``).
    Example:
      >>> hf.debug.callback(lambda v: seen.append(v.copy()), x)
    """
    def call(callback, *c_args, **c_kwargs):
        if not callable(callback):
            raise TypeError("hloforge.debug.callback: the first argument must be callable, but got an object of "
                            f"type {type(callback).__name__}: {callback!r}")
        if not is_tracing():
            a, k = _host_leaves(c_args, c_kwargs)
            callback(*a, **k)
            return None
        _debug(callback, c_args, c_kwargs, ordered, "hloforge.debug.callback")
        return None

    if callback is not None:
        return call(callback, *args, **kwargs)
    if args or kwargs:
        raise TypeError(f"hloforge.debug.callback received unexpected arguments in the two-call form: "
                        f"args={args!r} kwargs={kwargs!r}")
    return call


class _FormatChecker(string.Formatter):
    """jax.debug.print's check of a format string: every argument used, no field missing."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused = [a for i, a in enumerate(args) if i not in used_args]
        if unused:
            raise ValueError(f"Unused positional arguments to `hloforge.debug.print`: {unused}")
        unused_kw = [k for k in kwargs if k not in used_args]
        if unused_kw:
            raise ValueError(f"Unused keyword arguments to `hloforge.debug.print`: {unused_kw}. You may be passing "
                             "an f-string (i.e, `f\"{x}\"`) into `hloforge.debug.print` and instead should pass in "
                             "a regular string.")


_checker = _FormatChecker()


def _print_callback(fmt, printoptions, has_placeholders):
    def write(*args, **kwargs):
        if has_placeholders:
            with np.printoptions(**printoptions):
                msg = fmt.format(*args, **kwargs)
        else:
            msg = " ".join((fmt, *(str(a) for a in args)))
        sys.stdout.write(msg + "\n")
    return write


def debug_print(fmt=None, *args, ordered: bool = False, partitioned: bool = False, skip_format_check: bool = False,
                **kwargs):
    """Print run-time values with ``str.format`` (jax.debug.print).

    Inside a trace it emits a host callback (``stablehlo.custom_call @hloforge.python_callback``,
    has_side_effect) that formats ``fmt`` with the arguments' values (numpy arrays, under the
    numpy print options of the call) and writes the line to ``sys.stdout`` each time the program
    runs; outside a trace it prints at once. ``fmt`` is checked when called, as jax does: an
    f-string or an unused argument raises ValueError.

    Args:
      fmt: a format string, e.g. ``"x = {x}"`` (not an f-string). Omitted: the two-call form,
        ``hf.debug.print(ordered=True)("x = {}", x)``.
      *args, **kwargs: the values to format (pytrees of Tensors and other values).
      ordered: keep program order with the other ordered callbacks (tokens chain them).
      partitioned: accepted for jax's signature (programs here run on one device).
      skip_format_check: do not check ``fmt`` (then without placeholders the arguments are
        appended, separated by spaces).
    Returns:
      None (the two-call form: the function that takes ``fmt, *args, **kwargs``).
    Example:
      >>> hf.debug.print("x = {x}, sum = {}", hnp.sum(x), x=x)
    """
    def call(fmt, *c_args, **c_kwargs):
        if not isinstance(fmt, str):
            raise TypeError(f"hloforge.debug.print: fmt must be a str, got {type(fmt).__name__}: {fmt!r}")
        if not skip_format_check:
            _checker.format(fmt, *c_args, **c_kwargs)
        has_placeholders = bool(fmt) and next(iter(string.Formatter().parse(fmt)))[1] is not None
        write = _print_callback(fmt, dict(np.get_printoptions()), has_placeholders)
        if not is_tracing():
            a, k = _host_leaves(c_args, c_kwargs)
            write(*a, **k)
            return None
        _debug(write, c_args, c_kwargs, ordered, "hloforge.debug.print")
        return None

    if fmt is not None:
        return call(fmt, *args, **kwargs)
    if args or kwargs:
        raise TypeError(f"hloforge.debug.print received unexpected arguments in the two-call form: "
                        f"args={args!r} kwargs={kwargs!r}")
    return call


# ---------------------------------------------------------------- pure_callback


def _checked_results(what, out, out_tree, specs):
    """The callback's results as a tuple of C-ordered numpy arrays of ``specs``; RuntimeError (jax's
    wording) for a wrong structure, shape or dtype. Python scalars take the declared dtype."""
    leaves, tree = tree_util.tree_flatten(out)
    if tree != out_tree:
        raise RuntimeError(f"{what}: the callback must return values of the structure of result_shape_dtypes "
                           f"({out_tree}), got {tree}: {out!r}")
    arrays = []
    for i, (leaf, (shape, dtype)) in enumerate(zip(leaves, specs)):
        a = np.asarray(leaf, dtype) if type(leaf) in (bool, int, float, complex) else np.asarray(leaf)
        if a.shape != tuple(shape):
            raise RuntimeError(f"{what}: incorrect output shape for return value #{i}: expected {tuple(shape)}, "
                               f"got {a.shape}")
        if a.dtype != dtype:
            raise RuntimeError(f"{what}: incorrect output dtype for return value #{i}: expected {np.dtype(dtype)}, "
                               f"got {a.dtype}")
        arrays.append(a if a.flags.c_contiguous else a.copy(order="C"))  # (ascontiguousarray makes 0-d 1-d)
    return tuple(arrays)


def pure_rule(user, out_tree, arg_specs, result_specs, what, vmap_method, *, kind="pure",
              ordered=False) -> CallbackRule:
    def run(*arrays):
        return _checked_results(what, user(*arrays), out_tree, result_specs)
    return CallbackRule(kind, what, HostCallback(run, result_specs, what), arg_specs, result_specs, user=user,
                        out_tree=out_tree, vmap_method=vmap_method, ordered=ordered)


def _result_specs(result_shape_dtypes, what="hloforge.pure_callback"):
    leaves, tree = tree_util.tree_flatten(result_shape_dtypes)
    specs = []
    for i, leaf in enumerate(leaves):
        if not (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
            raise TypeError(f"{what}: result_shape_dtypes leaf {i} must have a shape and a dtype "
                            f"(e.g. hf.ShapeDtypeStruct), got {leaf!r}")
        shape = tuple(leaf.shape)
        if any(not isinstance(d, (int, np.integer)) or d < 0 for d in shape):
            raise ValueError(f"{what}: result_shape_dtypes leaf {i} has shape {shape}; callbacks "
                             "need static nonnegative dimensions")
        specs.append((tuple(int(d) for d in shape), dtypes.canonical(leaf.dtype)))
    return specs, tree


class _Specs:
    """result_shape_dtypes as a hashable static value for an eager call's cache (no shape/dtype
    attributes, so hloforge's eager layer does not take it for an array argument)."""
    __slots__ = ("specs", "tree")

    def __init__(self, specs, tree):
        self.specs, self.tree = tuple(specs), tree

    def __eq__(self, other):
        return isinstance(other, _Specs) and (self.specs, self.tree) == (other.specs, other.tree)

    def __hash__(self):
        return hash((self.specs, self.tree))


def _traced_callback(kind, callback, specs, vmap_method, ordered, *args, **kwargs):
    what = f"hloforge.{kind}_callback"
    current_builder(what)  # (outside a trace: hloforge's eager layer compiles the call)
    tree, dynamic, static = _split(args, kwargs)

    def user(*arrays):
        a, k = _merge(tree, static, arrays)
        return callback(*a, **k)

    rule = pure_rule(user, specs.tree, [(t.shape, t.dtype) for t in dynamic], specs.specs, what, vmap_method,
                     kind=kind, ordered=ordered)
    outs = emit(rule, dynamic)
    return tree_util.tree_unflatten(specs.tree, outs)


_eager_callback = []  # (the eager-wrapped _traced_callback, made on first use)


def _call_back(kind, callback, specs, vmap_method, ordered, args, kwargs):
    if is_tracing():
        return _traced_callback(kind, callback, specs, vmap_method, ordered, *args, **kwargs)
    if not _eager_callback:
        _eager_callback.append(eager.wrap(_traced_callback))
    return _eager_callback[0](kind, callback, specs, vmap_method, ordered, *args, **kwargs)


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None, **kwargs):
    """Call a pure Python function on the host and use its results (jax.pure_callback).

    Inside a trace it emits ``stablehlo.custom_call @hloforge.python_callback`` (no side effect:
    XLA may drop it when its results are unused, or merge equal calls) with the results declared
    by ``result_shape_dtypes``. The callback receives numpy arrays for the Tensor arguments (every
    other argument as passed) and must return arrays of exactly the declared shapes and dtypes
    (Python scalars take the declared dtype); anything else fails the run with an
    ``hf.ExecutionError`` naming the result. Outside a trace the call is compiled and run once.

    Args:
      callback: the Python function.
      result_shape_dtypes: a pytree of objects with ``shape`` and ``dtype`` (``hf.ShapeDtypeStruct``).
      *args, **kwargs: the callback's arguments (pytrees).
      sharding: only None (programs here call back on their one device).
      vmap_method: what hf.vmap does, as in jax: "sequential" / "sequential_unrolled" (the
        callback once per example), "expand_dims" (unbatched arguments get a leading axis of
        size 1, one call), "broadcast_all" (they are tiled to the batch), "legacy_vectorized"
        (one call, unbatched arguments unchanged); None: vmap raises NotImplementedError.
    Returns:
      Tensors (arrays outside a trace) of the structure of ``result_shape_dtypes``.
    Example:
      >>> y = hf.pure_callback(np.sin, hf.ShapeDtypeStruct(x.shape, x.dtype), x)
    """
    if not callable(callback):
        raise TypeError(f"hloforge.pure_callback: callback must be callable, got {type(callback).__name__}: "
                        f"{callback!r}")
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"hloforge.pure_callback: vmap_method must be one of {list(VMAP_METHODS)}, got "
                         f"{vmap_method!r}")
    if sharding is not None:
        raise NotImplementedError(f"hloforge.pure_callback: sharding={sharding!r} is not supported (programs with "
                                  "callbacks run on one device); pass sharding=None")
    specs = _Specs(*_result_specs(result_shape_dtypes))
    return _call_back("pure", callback, specs, vmap_method, False, args, kwargs)


# ---------------------------------------------------------------- io_callback


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered: bool = False, **kwargs):
    """Call a Python function with side effects on the host and use its results
    (jax.experimental.io_callback).

    Inside a trace it emits ``stablehlo.custom_call @hloforge.python_callback`` with
    ``has_side_effect`` (XLA keeps it even when its results are unused, and never merges two) and
    the results declared by ``result_shape_dtypes``, checked as pure_callback's are. As in jax it
    is not differentiable (ValueError), and under hf.vmap it runs once per example (ordered ones
    raise ValueError). Outside a trace the call is compiled and run once.

    Args:
      callback: the Python function.
      result_shape_dtypes: a pytree of objects with ``shape`` and ``dtype`` (``hf.ShapeDtypeStruct``).
      *args, **kwargs: the callback's arguments (pytrees).
      sharding: only None (programs here call back on their one device).
      ordered: keep program order with the other ordered callbacks (tokens chain them).
    Returns:
      Tensors (arrays outside a trace) of the structure of ``result_shape_dtypes``.
    Example:
      >>> n = hf.io_callback(log.append_and_count, hf.ShapeDtypeStruct((), np.int32), x, ordered=True)
    """
    if not callable(callback):
        raise TypeError(f"hloforge.io_callback: callback must be callable, got {type(callback).__name__}: "
                        f"{callback!r}")
    if sharding is not None:
        raise NotImplementedError(f"hloforge.io_callback: sharding={sharding!r} is not supported (programs with "
                                  "callbacks run on one device); pass sharding=None")
    specs = _Specs(*_result_specs(result_shape_dtypes, "hloforge.io_callback"))
    return _call_back("io", callback, specs, None, bool(ordered), args, kwargs)


__all__ = ["debug_print", "debug_callback", "pure_callback", "io_callback", "CallbackRule", "VMAP_METHODS"]
