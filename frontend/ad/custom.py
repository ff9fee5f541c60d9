"""hf.custom_vjp and hf.custom_jvp (JAX's defvjp / defjvp).

Inside a trace, a call emits ``func.call`` of a private function holding the primal (for
custom_vjp: fwd's outputs and residuals) with an ``hloforge.custom_rule`` attribute naming the
Python rule in ``core.CUSTOM_RULES``; the AD walkers differentiate that call with the rule instead
of the callee's ops. Module.optimize's inliner removes the call afterwards. The rules exist in
this process only: a module saved to text and parsed again is differentiated through its ops.
"""
from __future__ import annotations

import functools

import numpy as np
from jax import tree_util

from hloforge.frontend import dtypes
from hloforge.frontend.ad import core
from hloforge.frontend.ad._util import add_any, differentiable, instantiate, zeros_like
from hloforge.frontend.context import func, ir
from hloforge.frontend.registry import names
from hloforge.frontend.jit import jit
from hloforge.frontend.lax._trace import splice, trace_body
from hloforge.frontend.tracing import Tensor, _Scope, _type_str, as_tensor, current_builder, is_tracing


def _symbolic(args) -> bool:
    return any(isinstance(l, Tensor) for l in tree_util.tree_leaves(args))


def _define(b, key, args, body) -> list:
    """Trace ``body`` (flat Tensors -> flat Tensors) into a private function ``key`` taking ``args``'
    types; the (shape, dtype) of its results."""
    types = [a.value.type for a in args]
    with b.ctx, ir.Location.unknown():
        f = func.FuncOp(key, ir.FunctionType.get(types, []), ip=ir.InsertionPoint(b.module.body))
        f.attributes["sym_visibility"] = ir.StringAttr.get("private")
        block = f.add_entry_block()
        with b.at(block, _Scope(f"the body of {key}"), isolated=True):
            params = [b.tensor(v) for v in block.arguments]
            outs = [as_tensor(o, what=f"{key}: output") for o in body(params)]
            b.emit("func.return", outs, [])
        f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(types, [o.value.type for o in outs]))
    return [(o.shape, o.dtype) for o in outs]


def emit_rule_call(body, args, key):
    """Trace ``body`` (flat Tensors -> flat Tensors) into a private function; emit a call to it."""
    b = current_builder("custom_vjp")
    specs = _define(b, key, args, body)
    with b.ctx:
        attrs = {"callee": ir.FlatSymbolRefAttr.get(key), core.CUSTOM_ATTR: ir.StringAttr.get(key)}
    op = b.emit("func.call", args, specs, attrs)
    return [b.tensor(r) for r in op.results]


def closure_convert(fun, *example_args):
    """``fun`` with the traced values it closes over made explicit arguments (jax.closure_convert).

    Traces ``fun(*example_args)`` once into a private ``func.func``; a call of the returned
    function emits ``func.call`` of it. Use it to hand a closure to ``hf.custom_vjp`` or
    ``hf.custom_jvp`` (whose functions may not close over traced values), so that derivatives
    with respect to the closed-over values flow through the explicit arguments.

    Args:
      fun: a function of arguments shaped like ``example_args`` (pytrees of arrays or Tensors).
      example_args: the arguments' shapes and dtypes, as values.
    Returns:
      ``(converted, consts)``: ``converted(*args, *consts)`` equals ``fun(*args)`` for arguments of the
      example's structure and types; ``consts`` is the list of Tensors ``fun`` closes over (empty
      outside a trace, where nothing is traced).
    Example:
      >>> f, consts = hf.closure_convert(lambda x: x * w, x)   # (w: a Tensor of the trace)
      >>> y = f(x, *consts)
    """
    what = f"closure_convert({getattr(fun, '__name__', 'fun')})"
    if not callable(fun):
        raise TypeError(f"hloforge.closure_convert: fun must be callable, got {fun!r}")
    if not is_tracing():
        return (lambda *args: fun(*args)), []
    b = current_builder(what)
    flat, in_tree = _flat_args(example_args, what)
    traced = trace_body(lambda tree: fun(*tree), [(t.shape, t.dtype) for t in flat], in_tree, what)
    try:
        consts = [b.tensor(v) for v in traced.captures]
        key = core.custom_key("closure", getattr(fun, "__name__", "fun"))
        n = len(flat)
        specs = _define(b, key, flat + consts,
                        lambda params: splice(traced, params[:n], traced.captures, params[n:]))
    finally:
        traced.discard()
    out_tree, n_args, n_consts = traced.out_tree, len(example_args), len(consts)

    def converted(*args):
        if current_builder(what) is not b:
            raise ValueError(f"{what}: the converted function belongs to the trace it was made in; call "
                             "hloforge.closure_convert again in this one")
        if len(args) != n_args + n_consts:
            raise TypeError(f"{what}: the converted function takes the example's {n_args} argument(s) and then "
                            f"{n_consts} constant(s), got {len(args)} argument(s)")
        leaves, tree = _flat_args(args[:len(args) - n_consts], what)
        if tree != in_tree:
            raise TypeError(f"{what}: the converted function takes arguments of the example's structure {in_tree}, "
                            f"got {tree}")
        operands = leaves + [as_tensor(c, what=f"{what}: constant {i}")
                             for i, c in enumerate(args[len(args) - n_consts:])]
        for i, (t, (shape, dtype)) in enumerate(zip(operands, [(a.shape, a.dtype) for a in flat + consts])):
            if t.shape != shape or t.dtype != dtype:
                raise TypeError(f"{what}: argument leaf {i} has type {_type(t)}, but the example's is "
                                f"{_type_str(shape, dtype)}")
        with b.ctx:
            op = b.emit("func.call", operands, specs, {"callee": ir.FlatSymbolRefAttr.get(key)})
        return tree_util.tree_unflatten(out_tree, [b.tensor(r) for r in op.results])

    converted.__name__ = f"closure_converted_{getattr(fun, '__name__', 'fun')}"
    return converted, consts


def _flat_args(args, what):
    leaves, tree = tree_util.tree_flatten(args)
    return [as_tensor(l, what=f"{what}: argument leaf {i}") for i, l in enumerate(leaves)], tree


def _type(t) -> str:
    return _type_str(t.shape, t.dtype)


def _rule_leaf(v, like, what) -> Tensor:
    """A leaf a rule returned as a Tensor: Python scalars take ``like``'s dtype (they are weakly
    typed, as in jax); arrays and Tensors keep theirs, so a wrong dtype is caught, not cast."""
    if isinstance(v, Tensor) or dtypes.weak_type(v) is None:
        return as_tensor(v, what=what)
    return as_tensor(v, like.dtype, what=what)


def _is_float0(v) -> bool:
    return getattr(v, "dtype", None) is not None and np.dtype(v.dtype).name == "float0"


class custom_vjp:
    """A function with a hand-written reverse-mode rule (jax.custom_vjp).

    Example:
      >>> @hf.custom_vjp
      ... def f(x): return hnp.sin(x)
      >>> f.defvjp(lambda x: (hnp.sin(x), hnp.cos(x)), lambda cos_x, g: (g * cos_x,))
    """

    def __init__(self, fun, nondiff_argnums=()):
        self.fun = fun
        self.fwd = self.bwd = None
        self.nondiff_argnums = tuple(nondiff_argnums)
        functools.update_wrapper(self, fun)

    def defvjp(self, fwd, bwd):
        """``fwd(*args) -> (out, residuals)``; ``bwd(*nondiff_args, residuals, out_cotangent) -> a
        tuple with one cotangent per differentiable argument, of the arguments' structure``.
        ``nondiff_argnums`` arguments are static (Python values), as in JAX."""
        self.fwd, self.bwd = fwd, bwd
        return self

    def __call__(self, *args):
        if self.fwd is None:
            raise TypeError(f"custom_vjp({self.__name__}): call defvjp(fwd, bwd) before calling it")
        if not _symbolic(args):
            return jit(lambda *a: self(*a))(*args)
        what = f"custom_vjp({self.__name__})"
        for i in self.nondiff_argnums:
            if not -len(args) <= i < len(args):
                raise ValueError(f"{what}: nondiff_argnums {self.nondiff_argnums} out of range for "
                                 f"{len(args)} argument(s)")
        static = {i % len(args): args[i] for i in self.nondiff_argnums}
        diff = tuple(a for i, a in enumerate(args) if i not in static)
        flat, in_tree = _flat_args(diff, what)
        key = core.custom_key("custom_vjp", self.__name__)
        rule = _VjpRule(self, in_tree, what, static, len(args))
        outs = emit_rule_call(rule.forward_flat, flat, key)
        core.CUSTOM_RULES[key] = rule
        return tree_util.tree_unflatten(rule.out_tree, outs[:rule.n_out])


class _VjpRule:
    def __init__(self, cv, in_tree, what, static=None, n_args=0):
        self.cv, self.in_tree, self.what = cv, in_tree, what
        self.static, self.n_args = static or {}, n_args
        self.out_tree = self.res_tree = None
        self.n_out = 0

    def _all_args(self, diff):
        diff = iter(diff)
        return [self.static[i] if i in self.static else next(diff) for i in range(self.n_args)]

    def forward_flat(self, flat):
        out = self.cv.fwd(*self._all_args(tree_util.tree_unflatten(self.in_tree, flat)))
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"{self.what}: fwd must return a pair (output, residuals), got {out!r}")
        o_leaves, self.out_tree = tree_util.tree_flatten(out[0])
        r_leaves, self.res_tree = tree_util.tree_flatten(out[1])
        self.n_out = len(o_leaves)
        return list(o_leaves) + list(r_leaves)

    def call(self, ins):
        return [as_tensor(o) for o in self.forward_flat(ins)]

    def custom_vjp(self, entry, cts, needed=None):
        outs, res = entry.outs[:self.n_out], entry.outs[self.n_out:]
        ct = [instantiate(c, o) for c, o in zip(cts[:self.n_out], outs)]
        static = [self.static[i] for i in sorted(self.static)]
        grads = self.cv.bwd(*static, tree_util.tree_unflatten(self.res_tree, res),
                            tree_util.tree_unflatten(self.out_tree, ct))
        args = tree_util.treedef_children(self.in_tree)
        if not isinstance(grads, (tuple, list)) or len(grads) != len(args):
            raise TypeError(f"{self.what}: bwd must return a tuple with one cotangent per argument "
                            f"({len(args)}), got {grads!r}")
        leaves = []
        for j, (g, arg_tree) in enumerate(zip(grads, args)):
            if g is None:  # (a zero cotangent for the whole argument, as jax allows)
                leaves.extend([None] * arg_tree.num_leaves)
                continue
            got = tree_util.tree_structure(g)
            if got != arg_tree:
                raise TypeError(f"{self.what}: bwd must return cotangents of the arguments' structure: "
                                f"cotangent {j} has the structure {got}, but argument {j} has {arg_tree} "
                                f"({g!r})")
            leaves.extend(tree_util.tree_leaves(g))
        return [None if g is None else self._cotangent(i, g, x) for i, (g, x) in enumerate(zip(leaves, entry.ins))]

    def _cotangent(self, i, g, x) -> Tensor:
        g = _rule_leaf(g, x, f"{self.what}: bwd output leaf {i}")
        if g.shape != x.shape or g.dtype != x.dtype:
            diff = "shapes" if g.shape != x.shape else "dtypes"
            raise ValueError(f"{self.what}: bwd must produce cotangents of the arguments' types, but its output "
                             f"leaf {i} is {_type(g)} for an argument of type {_type(x)}, so the {diff} do not "
                             "match")
        return g

    def custom_jvp(self, entry, tangents):
        raise TypeError(f"{self.what}: forward-mode differentiation (jvp, jacfwd) of a custom_vjp function "
                        "is not defined; use custom_jvp")


class _Call:
    """The parts of a tape entry a custom rule reads: per-example arguments and results."""

    def __init__(self, ins, outs):
        self.ins, self.outs = list(ins), list(outs)


class custom_jvp:
    """A function with a hand-written forward-mode rule (jax.custom_jvp). Reverse mode transposes
    the rule's tangent output, which must be linear in the tangents.

    Example:
      >>> @hf.custom_jvp
      ... def f(x): return hnp.log1p(hnp.exp(x))
      >>> f.defjvp(lambda primals, tangents: (f(*primals), tangents[0] * hnp.tanh(primals[0])))
    """

    def __init__(self, fun):
        self.fun = fun
        self.rule = None
        functools.update_wrapper(self, fun)

    def defjvp(self, jvp):
        """``jvp(primals, tangents) -> (primal_out, tangent_out)``, primals and tangents tuples."""
        self.rule = jvp
        return jvp

    def __call__(self, *args):
        if self.rule is None:
            raise TypeError(f"custom_jvp({self.__name__}): call defjvp(jvp) before calling it")
        if not _symbolic(args):
            return jit(lambda *a: self(*a))(*args)
        what = f"custom_jvp({self.__name__})"
        flat, in_tree = _flat_args(args, what)
        key = core.custom_key("custom_jvp", self.__name__)
        rule = _JvpRule(self, in_tree, what)
        outs = emit_rule_call(rule.primal_flat, flat, key)
        core.CUSTOM_RULES[key] = rule
        return tree_util.tree_unflatten(rule.out_tree, outs)


class _JvpRule:
    def __init__(self, cj, in_tree, what):
        self.cj, self.in_tree, self.what = cj, in_tree, what
        self.out_tree = None

    def primal_flat(self, flat):
        leaves, self.out_tree = tree_util.tree_flatten(self.cj.fun(*tree_util.tree_unflatten(self.in_tree, flat)))
        return leaves

    def call(self, ins):
        return [as_tensor(o) for o in self.primal_flat(ins)]

    def _tangent_out(self, primals, tangents, outs):
        """The jvp rule's tangent outputs (None for integer and bool outputs), checked against the
        function's own outputs ``outs``: its primal output must have their structure and types,
        its tangent output their structure and tangent types."""
        out = self.cj.rule(tuple(tree_util.tree_unflatten(self.in_tree, primals)),
                           tuple(tree_util.tree_unflatten(self.in_tree, tangents)))
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"{self.what}: the jvp rule must return a pair (primal_out, tangent_out), got {out!r}")
        p_leaves, p_tree = tree_util.tree_flatten(out[0])
        t_leaves, t_tree = tree_util.tree_flatten(out[1])
        if p_tree != t_tree:
            raise TypeError(f"{self.what}: the jvp rule must produce primal and tangent outputs with equal "
                            f"container (pytree) structures, but got {p_tree} and {t_tree} respectively")
        if p_tree != self.out_tree:
            raise TypeError(f"{self.what}: the jvp rule's primal output must equal the function's output, but it "
                            f"has the structure {p_tree} and the function's output {self.out_tree}")
        for i, (p, o) in enumerate(zip(p_leaves, outs)):
            p = _rule_leaf(p, o, f"{self.what}: the jvp rule's primal output leaf {i}")
            if p.shape != o.shape or p.dtype != o.dtype:
                raise TypeError(f"{self.what}: the jvp rule's primal output must equal the function's output, but "
                                f"its leaf {i} is {_type(p)} and the function's output leaf {i} is {_type(o)}")
        return [self._tangent(i, t, o) for i, (t, o) in enumerate(zip(t_leaves, outs))]

    def _tangent(self, i, t, o):
        if not differentiable(o.dtype):  # (jax wants float0 zeros here; a zero of the output's type passes too)
            shape = tuple(np.shape(t)) if not isinstance(t, Tensor) else t.shape
            if not (_is_float0(t) or shape == o.shape):
                raise TypeError(f"{self.what}: tangent output leaf {i} of the jvp rule has shape {shape}, but the "
                                f"output is {_type(o)}")
            return None
        t = _rule_leaf(t, o, f"{self.what}: the jvp rule's tangent output leaf {i}")
        if t.shape != o.shape or t.dtype != o.dtype:
            raise TypeError(f"{self.what}: the jvp rule must produce primal and tangent outputs with corresponding "
                            f"shapes and dtypes: expected {_type(o)} (tangent type of {_type(o)}) for tangent "
                            f"output leaf {i}, but got {_type(t)}")
        return t

    def custom_jvp(self, entry, tangents):
        return self._tangent_out(entry.ins, [instantiate(t, x) for t, x in zip(tangents, entry.ins)], entry.outs)

    def custom_vjp(self, entry, cts, needed=None):
        """The transpose of the rule's tangent map (traced at zero tangents, then swept backwards),
        which must be linear in the tangents."""
        from hloforge.frontend.ad.api import _trace_inline
        primals, outs = entry.ins, entry.outs
        ts, _, t_outs, tape = _trace_inline(lambda *t: self._tangent_out(primals, list(t), outs),
                                            tuple(zeros_like(x) for x in primals), self.what)
        active = core.active_values(tape, ts)
        _check_linear(tape, active, self.what)
        seeds = {}
        for t, c in zip(t_outs, cts):
            if t is not None and c is not None:
                seeds[t.value] = add_any(seeds.get(t.value), c)
        got = core.backward(tape, seeds, active)
        return [got.get(x.value) if differentiable(x.dtype) else None for x in ts]


# ---------------------------------------------------------------- linearity of a jvp rule's tangent map

_LINEAR = frozenset(names("linear"))
_BILINEAR = frozenset(names("bilinear"))


def _nonlinear_use(entry, active):
    """Why ``entry`` is not linear in its ``active`` operands, or None. Only what is certain counts:
    elementwise ops other than the linear ones, a product of two tangents, a division by one.
    Other ops (control flow, reductions, calls) are not judged."""
    act = [i for i, x in enumerate(entry.ins) if x.value in active]
    if not act or entry.info is None or hasattr(entry.info, "custom_vjp"):
        return None
    name = entry.name
    if name in _BILINEAR:
        return f"{name} multiplies two values that depend on the tangents" if len(act) > 1 else None
    if name == "stablehlo.divide":
        return f"{name} divides by a value that depends on the tangents" if 1 in act else None
    if name in _LINEAR or "elementwise" not in entry.info.traits:
        return None
    return f"it applies {name} to a value that depends on the tangents"


def _check_linear(tape, active, what):
    for e in tape:
        if e.sub is not None:
            _check_linear(e.sub[1], core.active_values(e.sub[1], [x for x in e.ins if x.value in active]), what)
            continue
        why = _nonlinear_use(e, active)
        if why is not None:
            raise TypeError(f"{what}: reverse-mode differentiation (hf.grad, hf.vjp, hf.jacrev) transposes the jvp "
                            f"rule's tangent output, which must be linear in the tangents, but {why} (jax cannot "
                            "transpose it either); make the tangent output linear in the tangents, or use "
                            "hf.custom_vjp")
