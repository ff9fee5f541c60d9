"""hf.jit's first call of a program with FFTs (``hf.config.first_call``).

``fft-truncate`` makes an FFT program's steady state faster, but XLA:CPU compiles its partial DFTs more
slowly than the FFTs they replace (one LLVM kernel per distinct fusion; an FNO-2D gets four more, 100-270
ms), so the truncated program's first call is slower than jax's. In "fast" mode (the default) the first
call compiles the program with its FFTs (``cost_model="keep-ffts"``: XLA builds jax's kernels). The second
call starts, in a background thread, the pass pipeline with the real cost model and the compile of its
result (or its load from the executable caches), and calls run the FFT program until that is ready; then
jax's C++ loop learns the new one. A program called once is optimized and compiled once; one that nothing
truncates ends with the same code, found in the memory cache. The two programs' results agree to a few
ulps, not bit for bit.
"""
from __future__ import annotations

import threading
import warnings

from hloforge.frontend.context import ir
from hloforge.runtime.settings import config


class Deferred:
    """A jit signature's traced module, optimized and compiled from its second call on:
    ``compile(module)`` does both and gives the executable, ``install(executable or None)`` puts it
    in place (None: it failed)."""

    def __init__(self, module, compile, install):
        self.module, self.compile, self.install = module, compile, install
        self.calls = 0
        self.thread = None
        self.ready = threading.Event()

    def start(self) -> None:
        """Compile in a (non-daemon: the interpreter waits for it, and the disk cache gets the
        executable) thread. On failure the FFT program stays, with a warning."""
        if self.thread is not None:
            return

        def run():
            try:
                executable = self.compile(self.module)
            except Exception as e:  # (the program that runs is correct; say why the faster one is missing)
                warnings.warn(f"hf.jit: optimizing or compiling the program with the real cost model failed, "
                              f"so the program with FFTs keeps running: {e}", RuntimeWarning, stacklevel=1)
                executable = None
            try:
                self.install(executable)
            finally:
                self.module = None
                self.ready.set()

        self.thread = threading.Thread(target=run, name="hloforge-truncated-compile")
        self.thread.start()

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


def plan(module, cost_model):
    """(the module to compile now, the module to optimize and compile from the second call or
    None). ``module`` is optimized in place: with ``cost_model``, or, in "fast" mode when it has
    FFTs that the cost model might truncate, with "keep-ffts" (an unoptimized copy is kept)."""
    keeps_ffts = (cost_model if cost_model is not None else config.cost_model) == "keep-ffts"
    if config.first_call != "fast" or keeps_ffts or not _has_fft(module):
        module.optimize(cost_model=cost_model)
        return module, None
    later = module.clone()
    module.optimize(cost_model="keep-ffts")
    return module, later
