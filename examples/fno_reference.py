"""A plain-numpy FNO with the same parameters as hloforge.nn.FNO: the reference the examples check against."""
import itertools

import numpy as np


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * (x * x * x))))  # (x * x * x: x ** 3 is pow)


def pointwise(x, w, b):
    return np.einsum("bi...,io->bo...", x, w, optimize=True) + b.reshape((1, -1) + (1,) * (x.ndim - 2))


def spectral_conv(x, weights, modes):
    nd = len(modes)
    grid = x.shape[2:]
    axes = tuple(range(2, 2 + nd))
    spectrum = np.fft.rfftn(x, axes=axes)
    out = np.zeros((x.shape[0], weights.shape[2]) + spectrum.shape[2:], np.complex128)
    for k, signs in enumerate(itertools.product((0, 1), repeat=nd - 1)):
        index = (slice(None), slice(None)) + tuple(
            slice(0, m) if s == 0 else slice(n - m, n) for s, n, m in zip(signs, grid, modes)) + (slice(0, modes[-1]),)
        out[index] = np.einsum("bi...,io...->bo...", spectrum[index], weights[k])
    return np.fft.irfftn(out, s=grid, axes=axes)


def fno(x, params, modes, padding=0):
    x = x.astype(np.float64)
    h = pointwise(x, *params["lift"])
    nd = len(modes)
    if padding:
        h = np.pad(h, [(0, 0), (0, 0)] + [(0, padding)] * nd)
    layers = params["layers"]
    for i, layer in enumerate(layers):
        h = spectral_conv(h, layer["spectral"], modes) + pointwise(h, *layer["skip"])
        if i < len(layers) - 1:
            h = gelu(h)
    if padding:
        h = h[(slice(None), slice(None)) + (slice(0, -padding),) * nd]
    return pointwise(gelu(pointwise(h, *params["proj1"])), *params["proj2"])


def run_and_check(model, x, params, modes, padding) -> int:
    """Optimize, compile and run ``model`` with hloforge, print the pass report, timing and the error
    against :func:`fno`; returns the exit code (0 when the relative error is below 1e-4; 2e-2 on a TPU,
    whose float32 dots at default precision are one bfloat16 pass, in jax as in hloforge)."""
    import time

    import hloforge as hf
    from hloforge import target

    f = hf.jit(model)
    print(f.lower(x, params).optimize())
    start = time.perf_counter()
    y = np.asarray(f(x, params))
    print(f"traced, compiled and ran in {time.perf_counter() - start:.2f} s; output {y.dtype}{list(y.shape)}")
    ref = fno(x, params, modes, padding)
    error = float(np.max(np.abs(y - ref)))
    relative = error / float(np.max(np.abs(ref)))
    print(f"max abs error vs numpy: {error:.3e} (relative {relative:.3e})")
    return 0 if relative < (2e-2 if target.default_kind() == "tpu" else 1e-4) else 1
