"""hloforge in one page: trace, print, optimize, compile, run, inspect.
Run: python examples/quickstart.py
"""
import sys

import numpy as np

import hloforge as hf
from hloforge import numpy as hnp
from hloforge import target

# float32 agrees with numpy to ~1e-6; a TPU computes float32 dots at default precision in one bfloat16 pass
TOLERANCE = 2e-2 if target.default_kind() == "tpu" else 1e-4
MODES = 8


@hf.jit
def spectral_smooth(x, w):
    """Low-pass a batch of signals in Fourier space (keep the lowest MODES modes), then mix channels."""
    n = x.shape[-1]
    low = hnp.fft.rfft(x, axis=-1)[:, :MODES]                       # the low modes of the spectrum
    spectrum = hnp.pad(low, [(0, 0), (0, n // 2 + 1 - MODES)])      # zeros for the others
    y = hnp.fft.irfft(spectrum, n=n, axis=-1)
    return hnp.tanh(y @ w)


def describe(executable) -> str:
    """Where an executable came from: XLA, or one of hloforge's executable caches."""
    if executable.source == "compiled":
        return f"XLA compiled in {executable.compile_seconds:.3f} s"
    return f"loaded from the {executable.source} cache (XLA did not compile)"


def main() -> int:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 64)).astype(np.float32)
    w = rng.standard_normal((64, 16)).astype(np.float32)

    module = spectral_smooth.lower(x, w)              # trace only
    print(module.text)                                 # StableHLO
    print(module.summary())                            # functions, op counts, fft details
    report = module.clone().optimize()                 # what the default pipeline does (on a copy)
    print(report)                                      # the patterns that fired, the ops they changed
    print("fired: " + (", ".join(sorted(report.fired)) or "nothing"))

    executable = module.compile()                      # the same pipeline, then XLA (or a cache)
    print(f"{describe(executable)}; flops {executable.cost_analysis().get('flops')}")
    again = module.compile()                           # the same module again: the memory cache
    print(f"the same module again: {describe(again)}")

    y = np.asarray(spectral_smooth(x, w))              # trace + optimize + compile (a cache hit here) + run
    spectrum = np.fft.rfft(x, axis=-1)
    spectrum[:, MODES:] = 0
    expected = np.tanh(np.fft.irfft(spectrum, n=x.shape[-1], axis=-1) @ w)
    error = float(np.max(np.abs(y - expected)))
    print(f"max abs error vs numpy: {error:.2e} (tolerance {TOLERANCE:g})")
    return 0 if error < TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
