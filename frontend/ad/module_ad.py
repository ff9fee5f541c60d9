"""Module.vjp and Module.jvp: differentiate any Module's entry function, parsed ones included."""
from __future__ import annotations

import contextlib
import sys
import threading

from hloforge.frontend.ad import core
from hloforge.frontend.ad._util import differentiable, full, latest, zeros_like
from hloforge.frontend.calls import MAX_INLINED_CALLS, CallGraph, check_no_recursion, inline_calls
from hloforge.frontend.context import func, ir, shape_dtype_of
from hloforge.frontend.module import Module, ShapeDtype
from hloforge.frontend.parsing import MAX_NESTING
from hloforge.frontend.trace_function import trace
from hloforge.frontend.tracing import current_builder

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


def _vjp(self, name, what, with_outputs, linear_from=None):
    ins, outs = self.signature
    func_op, symbols, source, depth = _entry(self, what)  # (source: keeps an inlined copy alive)
    given = len(ins) if linear_from is None else linear_from

    def body(*args):
        primals = list(args[:given]) + [full(0, tuple(s.shape), s.dtype) for s in ins[given:]]
        cts = args[given:]
        results, tape = core.reemit_function(func_op, primals, symbols)
        seeds = {}
        for r, c in zip(results, cts):
            if differentiable(r.dtype):
                seeds[r.value] = c if r.value not in seeds else core.add_any(seeds[r.value], c)
        differentiated = primals[linear_from or 0:]
        # (only what depends on the inputs gets a cotangent: a while loop's constant initial
        # values then need none, which its rule uses, control_flow._unzeroed)
        grads = core.backward(tape, seeds, core.active_values(tape, differentiated))
        cotangents = tuple(zeros_like(x) if grads.get(x.value) is None else grads[x.value]
                           for x in differentiated)
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


def tangent_module(module: Module, name: str = "main") -> Module:
    """Module.jvp without the outputs: (primals..., tangents...) -> output tangents, linear in the
    tangents."""
    return _jvp(module, name, "hf.to_jax", with_outputs=False)


def _jvp(self, name, what, with_outputs):
    ins, outs = self.signature
    func_op, symbols, source, depth = _entry(self, what)  # (source: keeps an inlined copy alive)
    n = len(ins)

    def body(*args):
        primals, tangents = args[:n], args[n:]
        results, tape = core.reemit_function(func_op, primals, symbols)
        seeds = {x.value: t for x, t in zip(primals, tangents) if differentiable(x.dtype)}
        tans = core.forward(tape, seeds)
        out_tangents = tuple(zeros_like(r) if tans.get(r.value) is None else tans[r.value] for r in results)
        return tuple(results) + out_tangents if with_outputs else out_tangents

    with _recursion_room(depth):
        return trace(body, *ins, *ins, name=name)


Module.vjp = module_vjp
Module.jvp = module_jvp


def vjp_split(module: Module, name: str = "main", prepare=None) -> tuple:
    """Module.vjp cut where the output cotangents enter, as jax's linearize splits a function:
    (forward, backward, residual ShapeDtypes). ``forward`` takes the primals and returns the
    outputs, then the residuals (the values the derivative reads); ``backward`` takes the output
    cotangents, then the residuals, and returns the input cotangents. A caller that keeps the
    residuals of the forward call runs the forward computation once, not again for the gradient
    (hf.to_jax's jvp, issue 51). Constants the derivative reads are copied, not passed.
    ``prepare``: applied to the whole vjp module before the cut (hf.to_jax optimizes it there,
    once for both parts)."""
    ins, outs = module.signature
    whole = _vjp(module, name, "hf.to_jax", with_outputs=True)
    if prepare is not None:
        whole = prepare(whole)
    with whole.context:
        forward, backward = whole.clone(), whole.clone()
        late = _reading_cotangents(whole.entry_function(), len(ins))
        residuals = _cut_forward(forward.entry_function(), late, len(ins), len(outs))
        _cut_backward(backward.entry_function(), late, residuals, len(ins), len(outs))
    try:
        specs = [ShapeDtype(*shape_dtype_of(t)) for t in _types_at(whole, residuals)]
    except TypeError as e:  # (a token or tuple the derivative reads)
        raise NotImplementedError(f"vjp_split: a residual is not a tensor: {e}") from None
    return forward, backward, specs


def _body_ops(func_op) -> list:
    return [op.operation for op in func_op.regions[0].blocks[0].operations]


def _reading_cotangents(func_op, n_in) -> set:
    """Positions of the entry's ops that depend on the cotangent arguments (past ``n_in``)."""
    block = func_op.regions[0].blocks[0]
    late, found = set(list(block.arguments)[n_in:]), set()
    for k, op in enumerate(_body_ops(func_op)[:-1]):
        reads = list(op.operands) + (core.captured_values(op) if len(op.regions) else [])
        if any(v in late for v in reads):
            late.update(op.results)
            found.add(k)
    return found


def _copied(op) -> bool:
    """Whether the backward part makes its own copy of forward op ``op`` rather than take its result."""
    return not len(op.operands) and not len(op.regions)


def _residual_keys(func_op, late, n_in, n_out) -> list:
    """The forward values the backward part reads, as ("arg", i) or (op position, result index)."""
    body = _body_ops(func_op)
    block = func_op.regions[0].blocks[0]
    key_of = {a: ("arg", i) for i, a in enumerate(list(block.arguments)[:n_in])}
    for k, op in enumerate(body[:-1]):
        if k not in late and not _copied(op):
            key_of.update({r: (k, j) for j, r in enumerate(op.results)})
    keys = {}
    reads = [v for k in sorted(late) for v in list(body[k].operands) + core.captured_values(body[k])]
    for v in reads + list(body[-1].operands)[n_out:]:
        if v in key_of:
            keys[key_of[v]] = None
    return list(keys)


def _value_at(func_op, key):
    if key[0] == "arg":
        return func_op.regions[0].blocks[0].arguments[key[1]]
    return _body_ops(func_op)[key[0]].results[key[1]]


def _types_at(module, keys) -> list:
    return [_value_at(module.entry_function(), key).type for key in keys]


def _set_results(func_op, values) -> None:
    """Replace the entry's return (and its type) with one of ``values``."""
    block = func_op.regions[0].blocks[0]
    ret = _body_ops(func_op)[-1]
    with ir.InsertionPoint.at_block_terminator(block), ret.location:
        func.ReturnOp(values)
    ret.erase()
    _retype(func_op)


def _retype(func_op) -> None:
    block = func_op.regions[0].blocks[0]
    ret = _body_ops(func_op)[-1]
    func_op.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        [a.type for a in block.arguments], [v.type for v in ret.operands]))
    for attr in ("arg_attrs", "res_attrs"):
        if attr in func_op.attributes:
            del func_op.attributes[attr]


def _cut_forward(func_op, late, n_in, n_out) -> list:
    """Leave the forward part in ``func_op``: primals -> outputs, residuals. Returns the residual keys."""
    keys = _residual_keys(func_op, late, n_in, n_out)
    body = _body_ops(func_op)
    _set_results(func_op, list(body[-1].operands)[:n_out] + [_value_at(func_op, key) for key in keys])
    for k in sorted(late, reverse=True):
        body[k].erase()
    block = func_op.regions[0].blocks[0]
    for i in reversed(range(n_in, len(block.arguments))):
        block.erase_argument(i)
    _retype(func_op)
    return keys


def _cut_backward(func_op, late, keys, n_in, n_out) -> None:
    """Leave the backward part in ``func_op``: (output cotangents, residuals) -> input cotangents."""
    block = func_op.regions[0].blocks[0]
    body = _body_ops(func_op)
    _set_results(func_op, list(body[-1].operands)[n_out:])
    for key in keys:
        value = _value_at(func_op, key)
        value.replace_all_uses_with(block.add_argument(value.type, func_op.location))
    for k in reversed(range(len(body) - 1)):
        if k not in late and not (_copied(body[k]) and any(len(list(r.uses)) for r in body[k].results)):
            body[k].erase()
    for i in reversed(range(n_in)):
        block.erase_argument(i)
    _retype(func_op)
