"""hf.jit's first call of a program that spectral truncation rewrites (``hf.config.first_call``).

``fft-truncate`` makes an FFT program's steady state faster, but XLA:CPU compiles its partial DFTs more
slowly than the FFTs they replace (one LLVM kernel per distinct fusion; an FNO-2D gets four more, 100-270
ms), so the truncated program's first call is slower than jax's. In "fast" mode (the default), when the
pipeline truncated a program's FFTs and neither executable cache holds the result, the first call
compiles a copy optimized with ``cost_model="keep-ffts"`` (XLA builds jax's kernels). The second call
starts compiling the truncated program in a background thread (XLA compiles without the GIL); calls run
the FFT program until it is ready, then jax's C++ loop learns the new one. A program called once is
compiled once; a truncated program a cache holds (a script's second run) runs from the first call. The
two programs' results agree to a few ulps, not bit for bit.
"""
from __future__ import annotations

import threading
import warnings

from hloforge.frontend.context import ir
from hloforge.runtime.compiler import truncated_and_uncached
from hloforge.runtime.settings import config


class Deferred:
    """A jit signature's truncated module, compiled from its second call on: ``compile(module)``
    gives the executable, ``install(executable or None)`` puts it in place (None: it failed)."""

    def __init__(self, module, compile, install):
        self.module, self.compile, self.install = module, compile, install
        self.calls = 0
        self.thread = None
        self.ready = threading.Event()
        self._lock = threading.Lock()  # (calls from several threads start one compile)

    def start(self) -> None:
        """Compile in a (non-daemon: the interpreter waits for it, and the disk cache gets the
        executable) thread. On failure the FFT program stays, with a warning."""
        with self._lock:
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="hloforge-deferred-compile")
                self.thread.start()

    def _run(self):
        try:
            executable = self.compile(self.module)
        except Exception as e:  # (the program that runs is correct; say why the faster one is missing)
            warnings.warn(f"hf.jit: compiling the spectrally truncated program failed, so the program with "
                          f"FFTs keeps running: {e}", RuntimeWarning, stacklevel=1)
            executable = None
        try:
            self.install(executable)
        finally:
            self.module = None
            self.ready.set()

    def wait(self, timeout=None) -> bool:
        return self.ready.wait(timeout)


def _has_fft(module) -> bool:
    found = []

    def visit(op):
        if op.name == "stablehlo.fft":
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    for op in module.mlir.body.operations:
        op.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
        if found:
            return True
    return False


def plan(module, cost_model, device):
    """(the module to compile now, the module to compile from the second call or None).
    ``module`` is optimized in place with ``cost_model``; in "fast" mode, when that truncated FFTs
    and no cache holds its executable, a copy optimized with "keep-ffts" is compiled first."""
    keeps_ffts = (cost_model if cost_model is not None else config.cost_model) == "keep-ffts"
    fast = None
    if config.first_call == "fast" and not keeps_ffts and _has_fft(module):
        fast = module.clone()
    module.optimize(cost_model=cost_model)
    if fast is None or not truncated_and_uncached(module, device):
        return module, None
    fast.optimize(cost_model="keep-ffts")
    return fast, module
