"""hf.checkpoint (hf.remat), hf.checkpoint_policies and hf.checkpoint_name (jax.checkpoint's API).

A checkpointed call emits ``func.call`` of a private function tagged with a rule of
``core.CUSTOM_RULES`` (as hf.custom_vjp does). The function returns the outputs and, after them,
the *residuals*: the results of the body's top-level ops the policy calls saveable. Nothing else
of the body is visible outside the call. The rule's reverse sweep re-emits the callee's body over
the call's operands, with the saved ops' results taken from the call's residual results instead
of recomputed, and sweeps that copy backwards; so the backward pass reads only the call's
operands and residuals, and everything else it needs is computed again. With ``prevent_cse``
the operands and residuals pass through one ``stablehlo.optimization_barrier`` first (jax's
lowering of a differentiated remat), so neither hloforge's passes nor XLA merge the recomputation
with the forward ops. Forward mode and hf.vmap go through the same body (``custom_jvp``,
``custom_batch``). The values the body closes over (Tensors of the enclosing trace) become
operands of the call, like its arguments.

Policies take ``(op, *operands, **params)``: the StableHLO op name ("stablehlo.dot_general"),
an ``hf.ShapeDtype`` per operand and the op's canonical parameters (``OpInfo.decode``:
``lhs_batching_dimensions``, ..., for a composite its ``name`` and ``attributes``), and return a
bool. ``jax.checkpoint_policies``' own objects are translated to these.
"""
from __future__ import annotations

import dataclasses
import functools
import types

import numpy as np
from jax import tree_util

from hloforge.frontend import dtypes, ops
from hloforge.frontend.ad import core
from hloforge.frontend.ad._util import add_any, carries_tangent
from hloforge.frontend.ad.custom import emit_rule_call
from hloforge.frontend.ad.structure import COMPOSITE_RULES
from hloforge.frontend.context import has_uses, ir
from hloforge.frontend.jit import jit
from hloforge.frontend.lax._trace import splice, trace_body
from hloforge.frontend.module import ShapeDtype
from hloforge.frontend.registry import OPS, reemit_block
from hloforge.frontend.tracing import Tensor, as_tensor, current_builder, is_tracing

CHECKPOINT_NAME = "hloforge.checkpoint_name"

# ---------------------------------------------------------------- checkpoint_name


def checkpoint_name(x, name: str):
    """``x`` unchanged, its Tensor leaves named ``name`` for the policies
    ``save_only_these_names``/``save_any_names_but_these`` (jax.ad_checkpoint.checkpoint_name).

    Emits one ``stablehlo.composite "hloforge.checkpoint_name"`` per Tensor leaf (attribute
    ``name``), whose decomposition returns its operand; its derivative is the identity.

    Args:
      x: a pytree; non-Tensor leaves (and every leaf outside a trace) come back as they are.
      name: a str.
    Returns:
      A pytree of ``x``'s structure.
    Example:
      >>> h = hf.checkpoint_name(hnp.tanh(x @ w), "hidden")
    """
    if not isinstance(name, str):
        raise TypeError(f"hloforge.checkpoint_name: name must be a str, got {name!r} of type {type(name).__name__}")
    leaves, tree = tree_util.tree_flatten(x)
    if not is_tracing():
        return x
    out = [ops.composite([leaf], CHECKPOINT_NAME, lambda v: v, attributes={"name": name})[0]
           if isinstance(leaf, Tensor) else leaf for leaf in leaves]
    return tree_util.tree_unflatten(tree, out)


COMPOSITE_RULES[CHECKPOINT_NAME] = (lambda ins, outs, ts, **attributes: list(ts),
                                    lambda ins, outs, cts, **attributes: list(cts))


def _named(op, params):
    """The name of a checkpoint_name marker, or None for other ops."""
    if op == "stablehlo.composite" and params.get("name") == CHECKPOINT_NAME:
        return (params.get("attributes") or {}).get("name")
    return None

# ---------------------------------------------------------------- policies (jax.checkpoint_policies)


def everything_saveable(*_, **__) -> bool:
    """Save every value (as if there were no checkpoint)."""
    return True


def nothing_saveable(*_, **__) -> bool:
    """Save nothing: recompute everything from the arguments (the default policy)."""
    return False


@dataclasses.dataclass(frozen=True)
class DotsSaveable:
    """Save the results of ``stablehlo.dot_general`` (and of ``stablehlo.convolution``); with
    ``only_if_no_batch_dims``, only of dot_generals without batching dimensions."""
    only_if_no_batch_dims: bool

    def __call__(self, op, *operands, **params) -> bool:
        if self.only_if_no_batch_dims:
            return (op == "stablehlo.dot_general" and not params.get("lhs_batching_dimensions")
                    and not params.get("rhs_batching_dimensions"))
        return op in ("stablehlo.dot_general", "stablehlo.convolution")


checkpoint_dots = dots_saveable = DotsSaveable(False)
checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable = DotsSaveable(True)


@dataclasses.dataclass(frozen=True)
class SaveOnlyTheseNames:
    """Save only the values named (hf.checkpoint_name) with one of ``saveable_names``."""
    saveable_names: frozenset

    def __call__(self, op, *operands, **params) -> bool:
        named = _named(op, params)
        return named is not None and named in self.saveable_names


@dataclasses.dataclass(frozen=True)
class SaveAnyNamesButThese:
    """Save only named values (hf.checkpoint_name), except those named one of ``names``."""
    names: frozenset

    def __call__(self, op, *operands, **params) -> bool:
        named = _named(op, params)
        return named is not None and named not in self.names


@dataclasses.dataclass(frozen=True)
class SaveAnythingExceptTheseNames:
    """Save every value except the markers named one of ``names``. As in jax, the op that
    produced a named value is still saved, so this saves about as much as everything_saveable."""
    names: frozenset

    def __call__(self, op, *operands, **params) -> bool:
        return _named(op, params) not in self.names


def _names(names, what):
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"hloforge.checkpoint_policies.{what}: names must be str, got {n!r}")
    return frozenset(names)


def save_only_these_names(*names):
    """A policy saving only the values hf.checkpoint_name gave one of ``names``."""
    return SaveOnlyTheseNames(_names(names, "save_only_these_names"))


def save_any_names_but_these(*names):
    """A policy saving only named values (hf.checkpoint_name), except those named one of ``names``."""
    return SaveAnyNamesButThese(_names(names, "save_any_names_but_these"))


def save_anything_except_these_names(*names):
    """A policy saving everything except the values hf.checkpoint_name gave one of ``names``."""
    return SaveAnythingExceptTheseNames(_names(names, "save_anything_except_these_names"))


def save_from_both_policies(policy_1, policy_2):
    """A value is saved if either policy saves it (their logical or; both must return bools)."""
    def policy(op, *operands, **params):
        out1, out2 = policy_1(op, *operands, **params), policy_2(op, *operands, **params)
        if not (isinstance(out1, (bool, np.bool_)) and isinstance(out2, (bool, np.bool_))):
            raise ValueError(f"hloforge.checkpoint_policies.save_from_both_policies: the policies must return bools, "
                             f"got {out1!r} and {out2!r}; write a policy function of your own instead")
        return bool(out1 or out2)
    return policy


def _no_offload(name, where="hloforge.checkpoint_policies"):
    raise NotImplementedError(
        f"{where}.{name}: hloforge does not offload residuals to host memory (it has no memory "
        "kinds); use dots_with_no_batch_dims_saveable or save_only_these_names to keep them on the device instead")


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    """Not supported: raises NotImplementedError (hloforge has no host offloading)."""
    _no_offload("offload_dot_with_no_batch_dims")


def save_and_offload_only_these_names(*, names_which_can_be_saved, names_which_can_be_offloaded, offload_src,
                                      offload_dst):
    """Not supported: raises NotImplementedError (hloforge has no host offloading)."""
    _no_offload("save_and_offload_only_these_names")


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable, nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable, checkpoint_dots=checkpoint_dots,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=checkpoint_dots_with_no_batch_dims,
    save_anything_except_these_names=save_anything_except_these_names,
    save_any_names_but_these=save_any_names_but_these, save_only_these_names=save_only_these_names,
    save_from_both_policies=save_from_both_policies, offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    save_and_offload_only_these_names=save_and_offload_only_these_names,
    SaveOnlyTheseNames=SaveOnlyTheseNames, SaveAnyNamesButThese=SaveAnyNamesButThese, DotsSaveable=DotsSaveable)


def _policy(policy):
    """``policy`` as a hloforge policy: None -> nothing_saveable, jax's own policies translated."""
    if policy is None:
        return nothing_saveable
    if not callable(policy):
        raise TypeError(f"hloforge.checkpoint: policy must be None or a callable (one of hf.checkpoint_policies), "
                        f"got {policy!r}")
    if str(getattr(policy, "__module__", "")).startswith("jax."):
        from hloforge.frontend.jax_api import remat_policy
        known = remat_policy(policy)
        if known is not None:
            kind, arg = known
            if kind == "offload":
                _no_offload(arg, "hloforge.checkpoint: jax.checkpoint_policies")
            return {"everything": lambda: everything_saveable, "nothing": lambda: nothing_saveable,
                    "dots": lambda: DotsSaveable(arg), "only_names": lambda: SaveOnlyTheseNames(arg),
                    "names_but": lambda: SaveAnyNamesButThese(arg)}[kind]()
    return policy

# ---------------------------------------------------------------- checkpoint


def checkpoint(fun, *, prevent_cse: bool = True, policy=None, static_argnums=()):
    """``fun`` rematerialized in reverse mode (jax.checkpoint, also ``hf.remat``): its gradient is
    the same, but only the arguments and the values ``policy`` saves cross from the forward to the
    backward pass; the rest of ``fun`` is computed again in the backward pass.

    Emits a tagged ``func.call`` of a private function returning the outputs and the saved
    values; the backward pass re-emits the body (behind a ``stablehlo.optimization_barrier`` with
    ``prevent_cse``). Module.optimize inlines the call, so the forward program is unchanged.

    Args:
      fun: a function of pytrees of Tensors (it may close over Tensors of the enclosing trace).
      prevent_cse: keep XLA from merging the recomputation with the forward pass (True, as in
        jax; False is fine inside loops, whose bodies XLA does not merge across iterations).
      policy: which values may be saved: None (nothing: recompute everything), one of
        ``hf.checkpoint_policies`` (or of ``jax.checkpoint_policies``), or a function
        ``(op_name, *operand_ShapeDtypes, **op_params) -> bool``.
      static_argnums: int or tuple of ints: positional arguments that are Python values (the body
        is traced for their values).
    Returns:
      A function with ``fun``'s inputs and outputs.
    Example:
      >>> layer = hf.checkpoint(lambda w, x: hnp.tanh(x @ w), policy=hf.checkpoint_policies.dots_saveable)
      >>> g = hf.grad(lambda w, x: hnp.sum(layer(w, layer(w, x))))(w, x)
    """
    if not callable(fun):
        raise TypeError(f"hloforge.checkpoint: fun must be callable, got {fun!r} of type {type(fun).__name__}")
    if not isinstance(prevent_cse, (bool, np.bool_)):
        raise TypeError(f"hloforge.checkpoint: prevent_cse must be a bool, got {prevent_cse!r} (hloforge takes no "
                        "per-argument tuple)")
    if type(static_argnums) is int:
        static_argnums = (static_argnums,)
    elif not (type(static_argnums) in (tuple, list) and all(type(d) is int for d in static_argnums)):
        raise TypeError(f"hloforge.checkpoint: static_argnums must be an int or a tuple of ints, got "
                        f"{static_argnums!r}")
    return _Checkpointed(fun, bool(prevent_cse), _policy(policy), tuple(static_argnums))


remat = checkpoint


class _Checkpointed:
    def __init__(self, fun, prevent_cse, policy, static_argnums):
        self.fun, self.prevent_cse, self.policy, self.static_argnums = fun, prevent_cse, policy, static_argnums
        self._eager: dict = {}  # static positions -> hf.jit of the call
        functools.update_wrapper(self, fun)
        self.name = getattr(fun, "__name__", None) or type(fun).__name__
        self.what = f"hloforge.checkpoint({self.name})"

    def _static(self, n_args) -> tuple:
        if not all(-n_args <= d < n_args for d in self.static_argnums):
            raise ValueError(f"{self.what}: static_argnums {self.static_argnums} must lie in [-len(args), len(args)), "
                             f"but the call has {n_args} positional argument(s)")
        return tuple(sorted({d % n_args for d in self.static_argnums}))

    def __call__(self, *args, **kwargs):
        static = self._static(len(args))
        if is_tracing():
            return self._trace(static, args, kwargs)
        fn = self._eager.get(static)
        if fn is None:
            fn = self._eager[static] = jit(lambda *a, **k: self._trace(static, a, k), static_argnums=static)
        return fn(*args, **kwargs)

    def _operand(self, leaf, i) -> Tensor:
        if not isinstance(leaf, Tensor) and np.asarray(leaf).dtype.kind in "OUSV":
            raise TypeError(f"{self.what}: argument leaf {i} is {leaf!r} of type {type(leaf).__name__}, not an array; "
                            "pass Python values through static_argnums")
        return as_tensor(leaf, what=f"{self.what}: argument leaf {i}")

    def _trace(self, static, args, kwargs):
        fixed = {i: args[i] for i in static}
        dynamic = tuple(a for i, a in enumerate(args) if i not in fixed)
        leaves, in_tree = tree_util.tree_flatten((dynamic, kwargs))
        flat = [self._operand(leaf, i) for i, leaf in enumerate(leaves)]
        n = len(args)

        def body(tree):
            dyn, kw = tree
            rest = iter(dyn)
            return self.fun(*[fixed[i] if i in fixed else next(rest) for i in range(n)], **kw)

        outs, out_tree = emit(body, flat, in_tree, self.name, self.policy, self.prevent_cse)
        return tree_util.tree_unflatten(out_tree, outs)


def emit(fn, flat, in_tree, name, policy, prevent_cse) -> tuple:
    """Trace ``fn`` (a function of the pytree ``in_tree`` of ``flat``'s Tensors) into a
    checkpointed call: (its output Tensors, their tree). The values ``fn`` closes over become
    operands after ``flat``."""
    what = f"hloforge.checkpoint({name})"
    b = current_builder(what)
    traced = trace_body(fn, [(t.shape, t.dtype) for t in flat], in_tree, what)
    try:
        captures = [b.tensor(v) for v in traced.captures]
        n_in, n_out = len(flat), len(traced.outputs)

        def private(params):
            outs = splice(traced, params[:n_in], traced.captures, params[n_in:])
            return outs + _residuals(current_builder(what), policy, what)

        key = core.custom_key("checkpoint", name)
        results = emit_rule_call(private, list(flat) + captures, key)
    finally:
        traced.discard()
    core.CUSTOM_RULES[key] = _Rule(name, policy, prevent_cse, n_out)
    # (Python scalars the body returned come back as they are: weakly typed, as in jax)
    outs = [leaf if dtypes.weak_type(leaf) is not None else t for leaf, t in zip(traced.out_leaves, results)]
    return outs, traced.out_tree


def _residuals(b, policy, what) -> list:
    """The results of the ops of the block being built that ``policy`` saves (constants and the
    calls AD inlines are never saved)."""
    saved = []
    for op in b.ip.block.operations:
        op = op.operation
        if not len(op.results) or op.name == "stablehlo.constant":
            continue
        if op.name == "func.call" and core.CUSTOM_ATTR not in op.attributes:
            continue
        if _saveable(policy, op, b, what):
            saved.extend(b.tensor(r) for r in op.results)
    return saved


def _saveable(policy, op, b, what) -> bool:
    info = OPS.get(op.name)
    params = info.decode(op) if info is not None else {}
    operands = []
    for v in op.operands:
        t = b.tensor(v)
        operands.append(ShapeDtype(t.shape, t.dtype) if isinstance(t, Tensor) else t.spec)
    try:
        out = policy(op.name, *operands, **params)
    except Exception as e:
        if str(e).startswith("hloforge."):  # (one of hloforge's own policies said what is wrong)
            raise
        raise TypeError(f"{what}: the policy {policy!r} failed on {op.name} ({type(e).__name__}: {e}); a policy takes "
                        "(op_name, *operand_ShapeDtypes, **op_params) and returns a bool: use hf.checkpoint_policies "
                        "or jax.checkpoint_policies' own objects") from e
    if not isinstance(out, (bool, np.bool_)):
        raise TypeError(f"{what}: the policy {policy!r} returned {out!r} for {op.name}; it must return a bool "
                        "(offloading policies are not supported)")
    return bool(out)


def _callee(op, symbols=None):
    """The func.func ``op`` calls, from ``symbols`` or the module holding ``op``."""
    name = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
    if symbols is not None and name in symbols:
        return symbols[name]
    module = op
    while module.name != "builtin.module":
        module = module.parent.operation
    for f in module.regions[0].blocks[0].operations:
        if f.operation.name == "func.func" and ir.StringAttr(f.attributes["sym_name"]).value == name:
            return f
    raise RuntimeError(f"hloforge.checkpoint: the call's function @{name} is not in its module")


class _Rule:
    """The rule of one checkpointed call (``core.CUSTOM_RULES``): the call's results are its
    ``n_out`` outputs, then the residuals."""

    def __init__(self, name, policy, prevent_cse, n_out):
        self.name, self.policy, self.prevent_cse, self.n_out = name, policy, prevent_cse, n_out
        self.what = f"hloforge.checkpoint({name})"

    def call_op(self, op, ins, symbols=None) -> list:
        """A copy of the call ``op`` over ``ins`` in the current trace (a module or region being
        re-emitted): a new tagged call of a copy of its function."""
        block = _callee(op, symbols).regions[0].blocks[0]
        key = core.custom_key("checkpoint", self.name)
        results = emit_rule_call(lambda params: core.reemit_block(block, params, symbols)[0], list(ins), key)
        core.CUSTOM_RULES[key] = self
        return results

    def _body(self, entry):
        block = _callee(entry.op).regions[0].blocks[0]
        ret = list(block.operations)[-1].operation
        return block, list(ret.operands)[self.n_out:]

    def custom_vjp(self, entry, cts, needed=None) -> list:
        """The backward sweep over a recomputation of the body from the call's operands and
        residuals. With prevent_cse the recomputation and sweep are traced first (into a scratch
        block), so that the barrier in front of them pins only the values they read."""
        block, residuals = self._body(entry)
        both = list(entry.ins) + list(entry.outs[self.n_out:])
        n_in = len(entry.ins)
        needed = [True] * n_in if needed is None else list(needed)

        def sweep(values):
            xs = values[:n_in]
            rets, tape = _recompute(block, xs, dict(zip(residuals, values[n_in:])))
            seeds = {}
            for r, c in zip(rets, cts):
                if c is not None and carries_tangent(r):
                    seeds[r.value] = add_any(seeds.get(r.value), c)
            wanted = [x for x, n in zip(xs, needed) if n and carries_tangent(x)]
            got = core.backward(tape, seeds, core.active_values(tape, wanted)) if seeds and wanted else {}
            return [got.get(x.value) if n else None for x, n in zip(xs, needed)]

        if not self.prevent_cse:
            return sweep(both)
        pinnable = [i for i, x in enumerate(both) if isinstance(x, Tensor)]

        def traced_sweep(leaves):
            values = list(both)
            for i, t in zip(pinnable, leaves):
                values[i] = t
            return sweep(values)

        traced = trace_body(traced_sweep, [(both[i].shape, both[i].dtype) for i in pinnable],
                            tree_util.tree_structure([0] * len(pinnable)), self.what)
        try:
            read = [k for k, arg in enumerate(traced.block.arguments) if has_uses(arg)]
            args = [both[i] for i in pinnable]
            if read:
                # (the cotangents pass the barrier too: the recomputation then reads them, so
                # module_ad.split_vjp keeps it in the backward program instead of saving its values)
                tied = [c for c in cts if isinstance(c, Tensor)]
                for k, t in zip(read, ops.optimization_barrier([args[k] for k in read] + tied)):
                    args[k] = t
            outs = splice(traced, args)
        finally:
            traced.discard()
        return tree_util.tree_unflatten(traced.out_tree, outs)

    def custom_jvp(self, entry, tangents) -> list:
        block, residuals = self._body(entry)
        rets, tape = _recompute(block, list(entry.ins), dict(zip(residuals, entry.outs[self.n_out:])))
        tans = core.forward(tape, {x.value: t for x, t in zip(entry.ins, tangents) if t is not None})
        return [tans.get(r.value) if carries_tangent(o) else None for r, o in zip(rets, entry.outs)]

    def custom_batch(self, entry, size, ins, dims) -> tuple:
        """hf.vmap of the call: a checkpointed call of the batched body (same policy), whose
        outputs are all of this call's results (outputs and residuals) batched at 0."""
        from hloforge.frontend.batching.api import vmap
        block, _ = self._body(entry)
        batched = vmap(lambda *flat: tuple(core.reemit_block(block, list(flat))[0]), in_axes=tuple(dims))
        outs, _ = emit(lambda flat: batched(*flat), list(ins), tree_util.tree_structure(tuple(ins)),
                       f"vmap({self.name})", self.policy, self.prevent_cse)
        return outs, [0] * len(outs)


def _recompute(block, args, saved) -> tuple:
    """Re-emit ``block`` over ``args`` like ``core.reemit_block``, except that an op whose
    results are all keys of ``saved`` (ir.Value -> Tensor) is not emitted: its tape entry has
    those Tensors as results. (the returned Tensors, tape)"""
    symbols, tape = None, []

    def take(op, ins, value_of):
        nonlocal symbols
        results = list(op.results)
        if results and all(r in saved for r in results):
            outs = [saved[r] for r in results]
            tape.append(core.entry_of(op, ins, outs, value_of))
            return outs
        if symbols is None:
            symbols = core._symbols_around(block)
        return core.reemit_op(op, ins, value_of, symbols, tape)

    return reemit_block(block, args, take=take), tape


__all__ = ["checkpoint", "remat", "checkpoint_policies", "checkpoint_name", "CHECKPOINT_NAME"]
