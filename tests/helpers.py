"""Shared test utilities: per-dtype tolerances, running traced functions and comparing their results."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np

import hloforge as hf
from hloforge import target
from hloforge.frontend import dtypes

# relative tolerances per result dtype (DEVELOPERS.md: f32/c64 ~1e-5, f64/c128 ~1e-12)
RTOL = {
    np.dtype(np.float16): 2e-3, dtypes.bfloat16: 2e-2,
    np.dtype(np.float32): 1e-5, np.dtype(np.complex64): 1e-5,
    np.dtype(np.float64): 1e-12, np.dtype(np.complex128): 1e-12,
}

# The platform the tests run on (benchmarks/device_check.py sets HLOFORGE_DEVICE; CI: the CPU). A TPU
# computes float32 dots at jax's default precision in one bfloat16 pass and its transcendental functions
# to a few ulps of its own: its float tolerances are those of bfloat16 products (docs/limits.md, "On a TPU").
PLATFORM = target.default_kind()
if PLATFORM == "tpu":
    RTOL.update({np.dtype(np.float32): 5e-3, np.dtype(np.complex64): 5e-3})


def platform_rtol(rtol: float, dtype=np.float32) -> float:
    """``rtol`` on the CPU; elsewhere the wider of it and the platform's tolerance for ``dtype`` (a check
    written against XLA:CPU's float32 also holds on a TPU, whose float32 dots are bfloat16 passes)."""
    return rtol if PLATFORM == "cpu" else max(rtol, RTOL[np.dtype(dtype)])


ALL_DTYPES = [np.dtype(d) for d in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                    np.uint16, np.uint32, np.uint64, np.float16)] + [
    dtypes.bfloat16] + [np.dtype(d) for d in (np.float32, np.float64, np.complex64, np.complex128)]
FLOAT_DTYPES = [np.dtype(np.float32), np.dtype(np.float64)]
COMPLEX_DTYPES = [np.dtype(np.complex64), np.dtype(np.complex128)]
INEXACT_DTYPES = FLOAT_DTYPES + COMPLEX_DTYPES


def random(shape, dtype, seed=0, low=-3, high=3):
    """Random array of ``dtype`` (ints in [low, high), bools 50/50, complex with both parts)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind == "u":
        return rng.integers(0, max(high, 1), shape).astype(dtype)
    if dtype.kind == "i":
        return rng.integers(low, high, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.uniform(low, high, shape) + 1j * rng.uniform(low, high, shape)).astype(dtype)
    return rng.uniform(low, high, shape).astype(dtype)


def run(fn, *args, optimize=False):
    """Trace ``fn`` for ``args``, compile it on CPU, run it; numpy results (pytree kept)."""
    from jax import tree_util
    out = hf.jit(fn, optimize=optimize)(*args)
    return tree_util.tree_map(np.asarray, out)


def assert_close(actual, expected, dtype=None, rtol=None, atol=None):
    """Compare with numpy's result: same shape and dtype, values within the dtype's tolerance."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    if dtype is None:
        dtype = expected.dtype
    assert actual.dtype == np.dtype(dtype), f"dtype {actual.dtype} != {np.dtype(dtype)}"
    if dtype in RTOL or rtol is not None:
        rtol = RTOL.get(np.dtype(dtype), 0) if rtol is None else rtol
        magnitudes = np.abs(expected.astype(np.complex128))
        scale = np.max(magnitudes[np.isfinite(magnitudes)], initial=0.0)  # NaN/Inf must not widen it
        atol = rtol * max(scale, 1.0) if atol is None else atol
        np.testing.assert_allclose(actual.astype(np.complex128 if actual.dtype.kind == "c" else np.float64),
                                   expected.astype(np.complex128 if expected.dtype.kind == "c" else np.float64),
                                   rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(actual, expected)


def check_all(got, expected, labels, atol=None):
    """assert_close on each pair of ``got`` and ``expected``; a failure names its entry of ``labels``."""
    for g, e, label in zip(got, expected, labels):
        try:
            assert_close(g, e, atol=atol)
        except AssertionError as err:
            raise AssertionError(f"{label}: {err}") from None


def assert_close_tree(got, want, rtol=None):
    """assert_close leaf by leaf over (nested) tuples and lists; integer and bool leaves exactly."""
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want), (len(got), len(want))
        for g, w in zip(got, want):
            assert_close_tree(g, w, rtol)
        return
    want = np.asarray(want)
    assert_close(got, want, rtol=rtol if want.dtype.kind in "fc" else None)


def run_on_eight_devices(script: str) -> dict:
    """Run ``script`` (a file of checks that prints their results as one JSON line, last) in a child
    process with 8 CPU host devices; the results by check name."""
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-4000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def trace_chains(build: dict, chains, max_elements: int):
    """hf.trace of random programs: each chain ``(shape, dtype, [(step, seed), ...])`` is one argument that
    runs through ``build[step](x, rng)`` in turn (stopping past rank 4 or ``max_elements`` elements), each
    chain's end one result (tests/passes/test_fuzz.py, benchmarks/optimize_sweep.py)."""
    def fn(*xs):
        outs = []
        for x, (_, _, steps) in zip(xs, chains):
            for kind, seed in steps:
                if x.ndim > 4 or math.prod(x.shape) > max_elements:
                    break
                x = build[kind](x, np.random.default_rng(seed))
            outs.append(x)
        return tuple(outs)
    return hf.trace(fn, *(hf.ShapeDtype(shape, dtype) for shape, dtype, _ in chains))
