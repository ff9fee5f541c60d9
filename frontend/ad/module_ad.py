"""Module.vjp and Module.jvp: differentiate any Module's entry function, parsed ones included."""
from __future__ import annotations

import contextlib
import sys
import threading

from hloforge.frontend.ad import core
from hloforge.frontend.ad._util import differentiable, latest, zeros_like
from hloforge.frontend.ad.split import split_module
from hloforge.frontend.calls import MAX_INLINED_CALLS, CallGraph, check_no_recursion, inline_calls
from hloforge.frontend.module import Module
from hloforge.frontend.parsing import MAX_NESTING
from hloforge.frontend.trace_function import trace
from hloforge.frontend.tracing import current_builder, splat

# Re-emission recurses through calls and regions: calls nested deeper than this are inlined first
# (on a copy), and each nested region takes Python frames (about 8; room for twice that is made).
MAX_CALL_DEPTH = 32
FRAMES_PER_LEVEL = 16


def _entry(module, what):
    """(entry function, symbols, the module they live in, how deep regions and calls nest)."""
    module = _without_deep_calls(module, what)
    depth = CallGraph(module.mlir).depth(module.entry, calls_only=True)
    if depth > MAX_NESTING:
        raise ValueError(f"{what}: regions and calls nest {depth} deep in @{module.entry}; hloforge's AD takes "
                         f"at most {MAX_NESTING} levels")
    return module.entry_function(), core.symbols_of(module.mlir), module, depth


def _without_deep_calls(module, what):
    """``module``, or a copy with its calls inlined (those of custom rules excepted) when they nest
    deeper than MAX_CALL_DEPTH; ValueError for recursion."""
    graph = CallGraph(module.mlir)
    check_no_recursion(graph, [module.entry], what)
    if graph.call_depth(module.entry) <= MAX_CALL_DEPTH:
        return module
    copy = module.clone()
    with copy.context:
        done = inline_calls(copy.mlir, [copy.entry], lambda call, _: core.CUSTOM_ATTR not in call.attributes)
    if done.too_large:
        raise ValueError(f"{what}: calls nest deeper than {MAX_CALL_DEPTH} levels in @{module.entry}, and inlining "
                         f"them would copy function bodies {done.too_large[0][1]} times (more than "
                         f"{MAX_INLINED_CALLS})")
    return copy


_room_lock = threading.Lock()
_room_users = [0, None]  # differentiations running, the recursion limit before the first one


@contextlib.contextmanager
def _recursion_room(levels: int):
    """Python's recursion limit raised, while the block runs, enough for ``levels`` nested regions
    (at most MAX_NESTING: a bounded amount of stack); restored when the last such block ends."""
    frames, frame = 0, sys._getframe()
    while frame is not None:
        frames, frame = frames + 1, frame.f_back
    need = frames + 200 + FRAMES_PER_LEVEL * levels
    with _room_lock:
        if _room_users[0] == 0:
            _room_users[1] = sys.getrecursionlimit()
        _room_users[0] += 1
        if sys.getrecursionlimit() < need:
            sys.setrecursionlimit(need)
    try:
        yield
    finally:
        with _room_lock:
            _room_users[0] -= 1
            if _room_users[0] == 0:
                sys.setrecursionlimit(_room_users[1])


def module_vjp(self, name: str = "main") -> Module:
    """A new Module whose ``@name`` takes (primals..., output cotangents...) and returns
    (outputs..., input cotangents...) of this module's entry function.

    Integer and bool inputs get zero cotangents of their own dtype; cotangents of integer and bool
    outputs are ignored. Complex cotangents follow JAX (conj(df/dz) for a real loss). Calls are
    differentiated through (deep chains are inlined first); recursive calls raise ValueError.
    Example:
      >>> m = hf.Module.parse(jax.jit(f).lower(x).as_text()); g = m.vjp()
    """
    return _vjp(self, name, "Module.vjp", with_outputs=True)


def cotangent_module(module: Module, linear_from: int | None = None, name: str = "main") -> Module:
    """Module.vjp without the outputs: (primals..., output cotangents...) -> input cotangents.

    With ``linear_from=k``, for a module linear in its inputs ``k..``: its transpose in them, a
    Module from (the first k inputs..., output cotangents...) to the cotangents of the others (at
    zero, where they do not matter)."""
    return _vjp(module, name, "hf.to_jax", with_outputs=False, linear_from=linear_from)


def split_vjp(module: Module, wrt, prepare=None) -> tuple:
    """Module.vjp in two parts (split.py), so that the cotangents do not recompute the outputs:
    (forward, backward, number of residuals), where forward is (primals...) -> (outputs...,
    residuals...) and backward (primals..., residuals..., output cotangents...) -> the cotangents of
    the inputs ``wrt`` (their indices, in order); the other inputs are constants (no cotangent is
    computed through them). ``prepare``: applied to the whole vjp module before the split (hf.to_jax
    optimizes it there, once for both parts)."""
    ins, outs = module.signature
    whole = _vjp(module, "main", "hf.to_jax", with_outputs=True, wrt=tuple(wrt))
    if prepare is not None:
        whole = prepare(whole)
    return split_module(whole, len(ins), len(outs))


def _vjp(self, name, what, with_outputs, linear_from=None, wrt=None):
    ins, outs = self.signature
    func_op, symbols, source, depth = _entry(self, what)  # (source: keeps an inlined copy alive)
    given = len(ins) if linear_from is None else linear_from

    def body(*args):
        # (one constant per linear input: a shared one would give them all the sum of their cotangents)
        primals = list(args[:given]) + [splat(0, s.dtype, tuple(s.shape), what=what) for s in ins[given:]]
        cts = args[given:]
        results, tape = core.reemit_function(func_op, primals, symbols)
        seeds = {}
        for r, c in zip(results, cts):
            if differentiable(r.dtype):
                seeds[r.value] = c if r.value not in seeds else core.add_any(seeds[r.value], c)
        chosen = primals[linear_from or 0:] if wrt is None else [primals[i] for i in wrt]
        # (only what depends on the inputs gets a cotangent: a while loop's constant initial
        # values then need none, which its rule uses, control_flow._unzeroed)
        grads = core.backward(tape, seeds, core.active_values(tape, chosen))
        cotangents = tuple(zeros_like(x) if grads.get(x.value) is None else grads[x.value] for x in chosen)
        return tuple(_surviving(results)) + cotangents if with_outputs else cotangents

    with _recursion_room(depth):
        return trace(body, *ins[:given], *outs, name=name)


def _surviving(results) -> list:
    """``results`` with the values that took their uses during the backward sweep (a while loop's
    forward loop, control_flow._fission), so that the replaced loop is left dead, not run twice."""
    b = current_builder("hloforge AD")
    return [r if latest(r.value) == r.value else b.tensor(latest(r.value)) for r in results]


def module_jvp(self, name: str = "main") -> Module:
    """A new Module whose ``@name`` takes (primals..., tangents...) and returns (outputs...,
    output tangents...) of this module's entry function."""
    return _jvp(self, name, "Module.jvp", with_outputs=True)


def tangent_module(module: Module, name: str = "main", wrt=None, unused=()) -> Module:
    """Module.jvp without the outputs: (primals..., tangents...) -> output tangents, linear in the
    tangents. With ``wrt`` (input indices), tangents of those inputs only (the others are zero); with
    ``unused`` (ShapeDtypes), arguments of those types between the primals and the tangents, which
    it does not read."""
    return _jvp(module, name, "hf.to_jax", with_outputs=False, wrt=wrt, unused=tuple(unused))


def _jvp(self, name, what, with_outputs, wrt=None, unused=()):
    ins, outs = self.signature
    func_op, symbols, source, depth = _entry(self, what)  # (source: keeps an inlined copy alive)
    n = len(ins)
    wrt = tuple(range(n)) if wrt is None else tuple(wrt)

    def body(*args):
        primals, tangents = args[:n], args[n + len(unused):]
        results, tape = core.reemit_function(func_op, primals, symbols)
        seeds = {primals[i].value: t for i, t in zip(wrt, tangents) if differentiable(primals[i].dtype)}
        tans = core.forward(tape, seeds)
        out_tangents = tuple(zeros_like(r) if tans.get(r.value) is None else tans[r.value] for r in results)
        return tuple(results) + out_tangents if with_outputs else out_tangents

    with _recursion_room(depth):
        return trace(body, *ins, *unused, *[ins[i] for i in wrt], name=name)


Module.vjp = module_vjp
Module.jvp = module_jvp
