"""Compiling modules that call back into Python (hloforge.debug.print/callback, hloforge.pure_callback).

``frontend/callbacks.py`` emits each callback as a call of a private function holding one
``stablehlo.custom_call @hloforge.python_callback`` tagged with its key (``hloforge.callback``).
Here, on a copy of the module's text:

1. every such call is replaced by its custom call (so a module compiled without ``optimize()``
   has them where the calls were, and the ordered ones of a block can be chained);
2. the target becomes jaxlib's FFI callback for the device (the Target's ``callback_target``:
   ``xla_ffi_python_cpu_callback``, or ``xla_ffi_python_gpu_callback`` on a GPU; none on a TPU), and its
   ``mhlo.backend_config = {index = i : ui64}`` the position of its Python function in the list
   handed to PJRT with the module (``compile_and_load(..., host_callbacks=...)``, which keeps them
   alive as long as the executable): what jax 0.10.2's ``emit_python_callback`` emits;
3. the ordered calls (``hloforge.callback_order``) of each block are put in program order, and one
   token per function is threaded through them as jax does: the first takes
   ``stablehlo.after_all``'s, each returns the one the next takes, and a while/if/case holding
   ordered calls carries it in and out (jax passes its token through ``@main``; inside one program
   the chain is the same).

The executable waits for each run to end (``pjrt.WithHostCallbacks``: on the run's token), so the
callbacks of a call have run when it returns and successive calls never overlap, and it never
takes jax's C++ dispatch loop (jax does not either for programs with host callbacks). It is neither cached
nor written to the disk cache: its Python functions are not part of the module text.
"""
from __future__ import annotations

import time

import numpy as np

from hloforge.frontend.callback_registry import CALLBACK_ATTR, HOST_CALLBACKS, ORDER_ATTR, TARGET
import hloforge.frontend.ops  # noqa: F401  (registers every op, for names())
from hloforge.frontend.context import ir, make_context, token_type
from hloforge.frontend.registry import names
from hloforge.runtime import pjrt
from hloforge.runtime.executable import Executable
from hloforge.runtime.unsupported import python_callback

_FOREIGN = ("xla_ffi_python", "xla_python", "xla_ffi_partitioned_python", "xla_buffer_python")


def has_callbacks(code: str) -> bool:
    """Whether module text calls hloforge's Python callbacks."""
    return CALLBACK_ATTR in code


def compile_with_callbacks(code: str, target, name: str, in_specs, out_specs, partial_dfts: bool = False) -> Executable:
    """Compile ``code`` (module text for XLA, entry @main) whose callbacks are hloforge's, for the
    Target ``target`` (one device) with its XLA options (``partial_dfts``: the module holds DFT contractions)."""
    if target.callback_target is None:
        raise pjrt.UnsupportedCompile(
            f"{name}: host callbacks (hloforge.debug.print/callback, hloforge.pure_callback) are not supported on "
            f"{target.kind.upper()} devices yet (jax calls back from a TPU through send/recv host transfers, which "
            f"hloforge does not emit); compile this function for the CPU (device='cpu')")
    device = target.device
    ctx = make_context()
    with ctx:
        module = ir.Module.parse(code)
        hosts = _prepare(module, target.callback_target, name)
    start = time.perf_counter()
    try:
        loaded = pjrt.compile(module, (device,), pjrt.compile_options((device,), None, target.options(partial_dfts)),
                              host_callbacks=hosts)
    except pjrt.CompileError as e:
        raise pjrt.CompileError(f"{name}: XLA could not compile the module: {e}") from None
    return Executable(loaded, in_specs, out_specs, device, name, time.perf_counter() - start)


def _ops(region_holder):
    """Every op nested in ``region_holder`` (an Operation), with its block: [(op, block)]."""
    out, stack = [], [region_holder]
    while stack:
        op = stack.pop()
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    child = child.operation
                    out.append((child, block))
                    stack.append(child)
    return out


def _string(op, name):
    return ir.StringAttr(op.attributes[name]).value


def _wrapped_call(callee):
    """The callback custom call that is the whole body of ``callee`` (a private func.func), or None."""
    blocks = list(callee.regions[0].blocks) if callee.regions else []
    visibility = callee.attributes["sym_visibility"] if "sym_visibility" in callee.attributes else None
    if len(blocks) != 1 or visibility is None or ir.StringAttr(visibility).value != "private":
        return None
    body = [op.operation for op in blocks[0].operations]
    if len(body) == 2 and body[0].name == "stablehlo.custom_call" and CALLBACK_ATTR in body[0].attributes:
        return body[0]
    return None


def _attributes(op) -> dict:
    return {a.name: a.attr for a in (op.attributes[i] for i in range(len(op.attributes)))}


def _replace(old, operands, results, attributes, at):
    """A new custom call in place of ``old`` (its results replace ``old``'s last ones)."""
    new = ir.Operation.create("stablehlo.custom_call", results=results, operands=operands, attributes=attributes,
                              loc=old.location, ip=ir.InsertionPoint(at))
    extra = len(new.results) - len(old.results)
    for r, n in zip(old.results, list(new.results)[extra:]):
        r.replace_all_uses_with(n)
    old.erase()
    return new


def _inline_wrappers(module) -> None:
    functions = {_string(op.operation, "sym_name"): op.operation for op in module.body.operations
                 if op.operation.name == "func.func"}
    wrappers = {n: _wrapped_call(f) for n, f in functions.items()}
    wrappers = {n: c for n, c in wrappers.items() if c is not None}
    for op, _ in _ops(module.operation):
        if op.name != "func.call":
            continue
        inner = wrappers.get(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
        if inner is not None:
            _replace(op, list(op.operands), [r.type for r in op.results], _attributes(inner), op)
    for n in wrappers:
        functions[n].erase()


def _prepare(module, callback_target: str, name: str) -> list:
    """Rewrite ``module``'s callbacks into custom calls of ``callback_target`` (see the module
    docstring); returns the Python functions, in index order."""
    _inline_wrappers(module)
    target = ir.StringAttr.get(callback_target)
    u64 = ir.IntegerType.get_unsigned(64)
    hosts, ordered = [], {}
    for op, block in _ops(module.operation):
        if op.name != "stablehlo.custom_call":
            continue
        callee = _string(op, "call_target_name")
        if CALLBACK_ATTR not in op.attributes:
            if callee == TARGET or callee.startswith(_FOREIGN):
                why = python_callback(f'call_target_name = "{callee}"') or (
                    f"stablehlo.custom_call @{callee} has no {CALLBACK_ATTR} attribute naming its Python function")
                raise pjrt.CompileError(f"{name}: {why}")
            continue
        key = _string(op, CALLBACK_ATTR)
        host = HOST_CALLBACKS.get(key)
        if host is None:
            raise pjrt.CompileError(
                f"{name}: stablehlo.custom_call @{callee} calls the Python callback {key!r}, which this process "
                f"never made (a module saved by another process): its function cannot be called; trace the "
                f"function again here")
        op.attributes["call_target_name"] = target
        if ORDER_ATTR in op.attributes:
            ordered.setdefault(block, []).append(op)
        else:
            _set_index(op, len(hosts), u64)
            hosts.append(host)
    for calls in ordered.values():
        _in_program_order(calls)
    if ordered:
        chain = _Chain(hosts, u64)
        for f in module.body.operations:
            if f.operation.name == "func.func" and f.operation.regions[0].blocks:
                chain.thread(f.operation.regions[0].blocks[0], None)
    return hosts


def _set_index(op, index, u64) -> None:
    op.attributes["mhlo.backend_config"] = ir.DictAttr.get({"index": ir.IntegerAttr.get(u64, index)})


def _order(op) -> int:
    return ir.IntegerAttr(op.attributes[ORDER_ATTR]).value


def _in_program_order(calls) -> list:
    """``calls`` (ops of one block, no results) sorted by their order, each moved after the one
    before it where it stood earlier (vmap emits batched calls after the ones it left alone).
    Moving a call without results later is safe: its operands are defined before it already."""
    calls.sort(key=_order)
    for before, op in zip(calls, calls[1:]):
        if op.is_before_in_block(before):
            op.move_after(before)
    return calls


_CONTROL = names("control_flow")


def _has_ordered(op) -> bool:
    return any(o.name == "stablehlo.custom_call" and ORDER_ATTR in o.attributes for o, _ in _ops(op))


class _Chain:
    """Threads one token through the ordered calls of a function in program order, as jax does:
    each call takes the token and returns the next; a while/if/case holding some carries it in and
    out (an extra loop carry, block argument and result; a branch reads it from outside)."""

    def __init__(self, hosts, u64):
        self.hosts, self.u64 = hosts, u64
        self.token_type = token_type()
        self.empty = ir.DenseIntElementsAttr.get(np.zeros((0,), np.int64), type=ir.IndexType.get())  # (its layout)

    def thread(self, block, token):
        """Thread ``token`` (None: made where first needed) through ``block``; returns the last one."""
        for op in list(block.operations):
            op = op.operation
            ordered = op.name == "stablehlo.custom_call" and ORDER_ATTR in op.attributes
            if not ordered and not (op.name in _CONTROL and _has_ordered(op)):
                continue
            if token is None:
                token = ir.Operation.create("stablehlo.after_all", results=[self.token_type], operands=[],
                                            loc=op.location, ip=ir.InsertionPoint(op)).result
            token = self._call(op, token) if ordered else self._control(op, token)
        return token

    def _call(self, op, token):
        attributes = _attributes(op)
        for layouts in ("operand_layouts", "result_layouts"):
            attributes[layouts] = ir.ArrayAttr.get([self.empty, *ir.ArrayAttr(attributes[layouts])])
        attributes["mhlo.backend_config"] = ir.DictAttr.get({"index": ir.IntegerAttr.get(self.u64, len(self.hosts))})
        self.hosts.append(_with_token(HOST_CALLBACKS[_string(op, CALLBACK_ATTR)]))
        new = _replace(op, [token, *op.operands], [self.token_type, *[r.type for r in op.results]], attributes, op)
        return new.results[0]

    def _control(self, op, token):
        """``op`` rebuilt with the token as one more operand (while) and result, its regions moved over."""
        is_while = op.name == "stablehlo.while"
        operands = [*op.operands, token] if is_while else list(op.operands)
        new = ir.Operation.create(op.name, results=[*[r.type for r in op.results], self.token_type],
                                  operands=operands, attributes=_attributes(op), regions=len(op.regions),
                                  loc=op.location, ip=ir.InsertionPoint(op))
        for i, region in enumerate(op.regions):
            block = region.blocks[0]
            block.append_to(new.regions[i])
            inner = block.add_argument(self.token_type, op.location) if is_while else token
            out = self.thread(block, inner)
            if is_while and i == 0:
                continue  # (the condition returns only the predicate: its calls chain among themselves)
            end = list(block.operations)[-1].operation
            ir.Operation.create(end.name, results=[], operands=[*end.operands, out], loc=end.location,
                                ip=ir.InsertionPoint(end))
            end.erase()
        for r, n in zip(op.results, new.results):
            r.replace_all_uses_with(n)
        op.erase()
        return new.results[len(new.results) - 1]


def _with_token(host):
    def run(token, *arrays):
        return (token, *host(*arrays))
    return run


__all__ = ["has_callbacks", "compile_with_callbacks"]
