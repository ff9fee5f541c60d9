"""A module with dynamic argument dimensions (``tensor<?x4xf32>``): one executable per concrete
signature, each compiled from the module refined against the arguments' shapes."""
from __future__ import annotations

import threading

import numpy as np

from hloforge.frontend import dtypes
from hloforge.runtime.executable import Executable, _describe


def _shape_of(arg) -> tuple | None:
    if dtypes.weak_type(arg) is not None:
        return ()
    shape = getattr(arg, "shape", None)
    if shape is None:
        try:
            shape = np.shape(arg)
        except Exception:
            return None
    return tuple(shape)


class DynamicExecutable:
    """Compiles on call, once per concrete argument shapes (``compile_for(shapes)`` returns an
    :class:`Executable`); calls with known shapes run that executable directly."""

    def __init__(self, in_specs, out_specs, device, name, compile_for, dynamic_message: str):
        self.in_specs = tuple(in_specs)   # ((shape with None for "?", dtype), ...)
        self.out_specs = tuple(out_specs)
        self.device = device
        self.name = name
        self._compile_for = compile_for
        self._dynamic_message = dynamic_message
        self._executables: dict = {}
        self._lock = threading.Lock()

    @property
    def devices(self) -> tuple:
        return (self.device,)

    @property
    def executables(self) -> dict:
        """Concrete argument shapes -> the Executable compiled for them (so far)."""
        return dict(self._executables)

    def __repr__(self):
        ins = ", ".join(_describe(*s) for s in self.in_specs)
        outs = ", ".join(_describe(*s) for s in self.out_specs)
        return (f"DynamicExecutable({self.name}: ({ins}) -> ({outs}) on {self.device}; "
                f"{len(self._executables)} signature(s) compiled)")

    def _concrete_shapes(self, args) -> tuple:
        if len(args) != len(self.in_specs):
            raise TypeError(f"{self.name}: expected {len(self.in_specs)} arguments, got {len(args)}")
        shapes = []
        for i, (arg, (shape, dtype)) in enumerate(zip(args, self.in_specs)):
            got = _shape_of(arg)
            if got is None or len(got) != len(shape) or any(
                    want is not None and want != g for want, g in zip(shape, got)):
                got_text = "a value without a shape" if got is None else _describe(
                    got, getattr(arg, "dtype", None) or np.asarray(arg).dtype)
                raise ValueError(f"{self.name}: argument {i}: expected {_describe(shape, dtype)}, got {got_text}")
            shapes.append(got)
        return tuple(shapes)

    def specialize(self, shapes) -> Executable:
        """The executable for concrete argument ``shapes`` (one tuple per argument), compiled once."""
        shapes = tuple(tuple(s) for s in shapes)
        exe = self._executables.get(shapes)
        if exe is None:
            with self._lock:
                exe = self._executables.get(shapes)
                if exe is None:
                    specs = [(shape, dtype) for shape, (_, dtype) in zip(shapes, self.in_specs)]
                    exe = self._executables[shapes] = self._compile_for(specs)
        return exe

    def call_flat(self, args) -> list:
        return self.specialize(self._concrete_shapes(args)).call_flat(args)

    def __call__(self, *args):
        return self.specialize(self._concrete_shapes(args))(*args)

    def _needs_a_signature(self, what):
        raise ValueError(f"{self._dynamic_message}: {what} needs concrete shapes; call the executable "
                         f"or use .specialize(shapes) first")

    @property
    def hlo_text(self) -> str:
        return self._needs_a_signature("hlo_text")

    def cost_analysis(self) -> dict:
        return self._needs_a_signature("cost_analysis")

    def memory_stats(self):
        return self._needs_a_signature("memory_stats")
