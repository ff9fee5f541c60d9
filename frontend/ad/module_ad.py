"""Module.vjp and Module.jvp: differentiate any Module's entry function, parsed ones included."""
from __future__ import annotations

from hloforge.frontend.ad import core
from hloforge.frontend.ad._util import differentiable, zeros_like
from hloforge.frontend.jit import trace
from hloforge.frontend.module import Module


def _entry(module):
    return module.entry_function(), core.symbols_of(module.mlir)


def module_vjp(self, name: str = "main") -> Module:
    """A new Module whose ``@name`` takes (primals..., output cotangents...) and returns
    (outputs..., input cotangents...) of this module's entry function.

    Integer and bool inputs get zero cotangents of their own dtype; cotangents of integer and bool
    outputs are ignored. Complex cotangents follow JAX (conj(df/dz) for a real loss).
    Example:
      >>> m = hf.Module.parse(jax.jit(f).lower(x).as_text()); g = m.vjp()
    """
    ins, outs = self.signature
    func_op, symbols = _entry(self)
    n = len(ins)

    def body(*args):
        primals, cts = args[:n], args[n:]
        results, tape = core.reemit_function(func_op, primals, symbols)
        seeds = {}
        for r, c in zip(results, cts):
            if differentiable(r.dtype):
                seeds[r.value] = c if r.value not in seeds else core.add_any(seeds[r.value], c)
        grads = core.backward(tape, seeds)
        return tuple(results) + tuple(zeros_like(x) if grads.get(x.value) is None else grads[x.value]
                                      for x in primals)

    return trace(body, *ins, *outs, name=name)


def module_jvp(self, name: str = "main") -> Module:
    """A new Module whose ``@name`` takes (primals..., tangents...) and returns (outputs...,
    output tangents...) of this module's entry function."""
    ins, outs = self.signature
    func_op, symbols = _entry(self)
    n = len(ins)

    def body(*args):
        primals, tangents = args[:n], args[n:]
        results, tape = core.reemit_function(func_op, primals, symbols)
        seeds = {x.value: t for x, t in zip(primals, tangents) if differentiable(x.dtype)}
        tans = core.forward(tape, seeds)
        return tuple(results) + tuple(zeros_like(r) if tans.get(r.value) is None else tans[r.value]
                                      for r in results)

    return trace(body, *ins, *ins, name=name)


Module.vjp = module_vjp
Module.jvp = module_jvp
