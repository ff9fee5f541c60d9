"""hf.jit's first call of a program that spectral truncation may rewrite (``hf.config.first_call``).

``fft-truncate`` makes an FFT program's steady state faster, but XLA:CPU compiles its partial DFTs more
slowly than the FFTs they replace (one LLVM kernel per distinct fusion; an FNO-2D gets four more, 100-270
ms), so the truncated program's first call is slower than jax's. In "fast" mode (the default) the first
call of a program with FFTs optimizes it with ``cost_model="keep-ffts"`` and compiles that (XLA builds
jax's kernels). The second call starts, in a background thread, the pass pipeline with the real cost
model and, when it truncated FFTs, the truncated program's compile (XLA compiles without the GIL); calls
run the FFT program until it is ready, then jax's C++ loop learns the new one. A program called once is
optimized and compiled once; one nothing truncates keeps its first executable (the second pipeline run
finds nothing to switch to). A later process loads the final program at once (hf.jit's pipeline entry in
the disk cache, docs/runtime.md). The two programs' results agree to a few ulps, not bit for bit.
"""
from __future__ import annotations

import math
import threading
import warnings

from hloforge import target
from hloforge.frontend.context import ir
from hloforge.runtime.settings import config


class Deferred:
    """A jit signature's second program, made from its second call on: ``compile(module)`` optimizes
    the traced module and gives the truncated executable (None: nothing was truncated), and
    ``install(executable or None)`` puts it in place (None: the first program stays)."""

    def __init__(self, module, compile, install):
        self.module, self.compile, self.install = module, compile, install
        self.calls = 0
        self.thread = None
        self.ready = threading.Event()
        self._lock = threading.Lock()  # (calls from several threads start one compile)

    def start(self) -> None:
        """Optimize and compile in a (non-daemon: the interpreter waits for it, and the disk cache
        gets the executable) thread. On failure the FFT program stays, with a warning."""
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


def plan(module, cost_model, dft_precision=None):
    """(the module to compile now, the traced module to optimize and compile from the second call,
    or None). ``module`` is optimized in place: with ``cost_model`` (and ``dft_precision``), or in
    "fast" mode, when it has FFTs, with "keep-ffts" (then a copy of the traced module comes second)."""
    keeps_ffts = math.isinf(target.resolve(cost_model).flop_ns)  # ("keep-ffts": partial DFTs never pay)
    later = None
    if config.first_call == "fast" and not keeps_ffts and _has_fft(module):
        later, cost_model = module.clone(), "keep-ffts"
    module.optimize(cost_model=cost_model, dft_precision=dft_precision)
    return module, later
