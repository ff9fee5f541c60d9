"""hloforge in one page: trace, print, optimize, run, inspect.
Run: python examples/quickstart.py
"""
import sys

import numpy as np

import hloforge as hf
from hloforge import numpy as hnp
from hloforge import target

# float32 agrees with numpy to ~1e-6; a TPU computes float32 dots at default precision in one bfloat16 pass
TOLERANCE = 2e-2 if target.default_kind() == "tpu" else 1e-4


@hf.jit
def spectral_smooth(x, w):
    """Low-pass a batch of signals in Fourier space, then mix channels."""
    spectrum = hnp.fft.rfft(x, axis=-1)
    spectrum = spectrum * (hnp.arange(spectrum.shape[-1]) < 8)    # keep 8 modes
    y = hnp.fft.irfft(spectrum, n=x.shape[-1], axis=-1)
    return hnp.tanh(y @ w)


def main() -> int:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 32)).astype(np.float32)
    w = rng.standard_normal((32, 16)).astype(np.float32)

    module = spectral_smooth.lower(x, w)              # trace only
    print(module.text)                                 # StableHLO
    print(module.summary())                            # functions, op counts, fft details
    print(module.clone().optimize())                   # what the default pipeline does

    y = np.asarray(spectral_smooth(x, w))              # trace + optimize + compile + run
    spectrum = np.fft.rfft(x, axis=-1)
    spectrum[:, 8:] = 0
    expected = np.tanh(np.fft.irfft(spectrum, n=32, axis=-1) @ w)
    error = float(np.max(np.abs(y - expected)))
    print(f"max abs error vs numpy: {error:.2e} (tolerance {TOLERANCE:g})")

    executable = module.compile()
    print(f"XLA compiled in {executable.compile_seconds:.3f} s; flops {executable.cost_analysis().get('flops')}")
    return 0 if error < TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
