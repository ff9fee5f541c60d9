"""hf.custom_vjp and hf.custom_jvp (JAX's defvjp / defjvp).

Inside a trace, a call emits ``func.call`` of a private function holding the primal (for
custom_vjp: fwd's outputs and residuals) with an ``hloforge.custom_rule`` attribute naming the
Python rule in ``core.CUSTOM_RULES``; the AD walkers differentiate that call with the rule instead
of the callee's ops. Module.optimize's inliner removes the call afterwards. The rules exist in
this process only: a module saved to text and parsed again is differentiated through its ops.
"""
from __future__ import annotations

import functools
import itertools

from jax import tree_util

from hloforge.frontend.ad import core
from hloforge.frontend.ad._util import instantiate
from hloforge.frontend.context import func, ir
from hloforge.frontend.jit import jit
from hloforge.frontend.tracing import Tensor, _Scope, as_tensor, current_builder

_counter = itertools.count()


def _symbolic(args) -> bool:
    return any(isinstance(l, Tensor) for l in tree_util.tree_leaves(args))


def _emit_call(body, args, key):
    """Trace ``body`` (flat Tensors -> flat Tensors) into a private function; emit a call to it."""
    b = current_builder("custom_vjp")
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
        attrs = {"callee": ir.FlatSymbolRefAttr.get(key), core.CUSTOM_ATTR: ir.StringAttr.get(key)}
    op = b.emit("func.call", args, [(o.shape, o.dtype) for o in outs], attrs)
    return [b.tensor(r) for r in op.results]


def _flat_args(args, what):
    leaves, tree = tree_util.tree_flatten(args)
    return [as_tensor(l, what=f"{what}: argument leaf {i}") for i, l in enumerate(leaves)], tree


def _check_structure(value, expected_tree, what, role):
    leaves, tree = tree_util.tree_flatten(value)
    if tree != expected_tree:
        raise TypeError(f"{what}: {role} must have the structure {expected_tree}, got {tree} ({value!r})")
    return leaves


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
        key = f"hloforge_custom_vjp_{next(_counter)}_{self.__name__}"
        rule = _VjpRule(self, in_tree, what, static, len(args))
        outs = _emit_call(rule.forward_flat, flat, key)
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
        if not isinstance(out, tuple) or len(out) != 2:
            raise TypeError(f"{self.what}: fwd must return a pair (output, residuals), got {out!r}")
        o_leaves, self.out_tree = tree_util.tree_flatten(out[0])
        r_leaves, self.res_tree = tree_util.tree_flatten(out[1])
        self.n_out = len(o_leaves)
        return list(o_leaves) + list(r_leaves)

    def call(self, ins):
        return [as_tensor(o) for o in self.forward_flat(ins)]

    def custom_vjp(self, entry, cts):
        outs, res = entry.outs[:self.n_out], entry.outs[self.n_out:]
        ct = [instantiate(c, o) for c, o in zip(cts[:self.n_out], outs)]
        static = [self.static[i] for i in sorted(self.static)]
        grads = self.cv.bwd(*static, tree_util.tree_unflatten(self.res_tree, res),
                            tree_util.tree_unflatten(self.out_tree, ct))
        n_args = len(tree_util.tree_unflatten(self.in_tree, [None] * self.in_tree.num_leaves))
        if not isinstance(grads, (tuple, list)) or len(grads) != n_args:
            raise TypeError(f"{self.what}: bwd must return a tuple with one cotangent per argument "
                            f"({n_args}), got {grads!r}")
        leaves = _check_structure(tuple(grads), self.in_tree, self.what, "bwd's output")
        out = []
        for i, (g, x) in enumerate(zip(leaves, entry.ins)):
            if g is None:
                out.append(None)
                continue
            g = as_tensor(g, x.dtype if not isinstance(g, Tensor) else None, what=f"{self.what}: bwd output {i}")
            if g.shape != x.shape or g.dtype != x.dtype:
                raise TypeError(f"{self.what}: bwd output leaf {i} is {g}, but the argument is {x}")
            out.append(g)
        return out

    def custom_jvp(self, entry, tangents):
        raise TypeError(f"{self.what}: forward-mode differentiation (jvp, jacfwd) of a custom_vjp function "
                        "is not defined; use custom_jvp")


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
        key = f"hloforge_custom_jvp_{next(_counter)}_{self.__name__}"
        rule = _JvpRule(self, in_tree, what)
        outs = _emit_call(rule.primal_flat, flat, key)
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

    def _tangent_out(self, primals, tangents):
        out = self.cj.rule(tuple(tree_util.tree_unflatten(self.in_tree, primals)),
                           tuple(tree_util.tree_unflatten(self.in_tree, tangents)))
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"{self.what}: the jvp rule must return (primal_out, tangent_out), got {out!r}")
        leaves = _check_structure(out[1], self.out_tree, self.what, "the jvp rule's tangent output")
        return [as_tensor(t, what=f"{self.what}: tangent output {i}") for i, t in enumerate(leaves)]

    def custom_jvp(self, entry, tangents):
        return self._tangent_out(entry.ins, [instantiate(t, x) for t, x in zip(tangents, entry.ins)])

    def custom_vjp(self, entry, cts):
        from hloforge.frontend.ad.api import _vjp_symbolic
        from hloforge.frontend.ad._util import zeros_like
        primals = entry.ins
        _, pullback, _ = _vjp_symbolic(lambda *ts: self._tangent_out(primals, list(ts)),
                                       tuple(zeros_like(x) for x in primals), False, self.what)
        return list(pullback([instantiate(c, o) for c, o in zip(cts, entry.outs)]))
