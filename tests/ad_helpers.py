"""Shared checks of the AD tests: hloforge's vjp/jvp against jax's, and central differences."""
from __future__ import annotations

import jax
import numpy as np
from jax import tree_util

import hloforge as hf
from helpers import PLATFORM

RTOL = {np.dtype(np.float32): 2e-4, np.dtype(np.complex64): 2e-4,
        np.dtype(np.float64): 1e-9, np.dtype(np.complex128): 1e-9}
if PLATFORM == "tpu":  # XLA:TPU emulates float64 with float32 pairs: 1e-8 relative measured on a v5e
    RTOL[np.dtype(np.float64)] = 1e-7

# jax's float64 references run on the CPU wherever hloforge's side runs: XLA:TPU has no float64 FFT
# and no complex128 (benchmarks/device_check.py runs these tests on a TPU)
REFERENCE_DEVICE = jax.devices("cpu")[0]


def close(actual, expected, rtol=None):
    for a, e in zip(tree_util.tree_leaves(actual), tree_util.tree_leaves(expected)):
        a, e = np.asarray(a), np.asarray(e)
        if e.dtype == jax.dtypes.float0:  # jax's cotangent of an integer input; hloforge gives zeros
            assert not np.any(a), a
            continue
        assert a.shape == e.shape, (a.shape, e.shape)
        assert a.dtype == e.dtype, (a.dtype, e.dtype)
        tol = rtol if rtol is not None else RTOL.get(e.dtype, 1e-6)
        scale = max(np.max(np.abs(e), initial=0.0), 1.0)
        np.testing.assert_allclose(a, e, rtol=tol, atol=tol * scale)


def random_like(tree, seed=1):
    """Random values of the shapes and dtypes of ``tree``'s leaves (arrays or jax.ShapeDtypeStruct)."""
    rng = np.random.default_rng(seed)

    def one(x):
        shape, dtype = (x.shape, np.dtype(x.dtype)) if hasattr(x, "dtype") else (np.shape(x), np.asarray(x).dtype)
        if dtype.kind == "c":
            return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
        if dtype.kind == "f":
            return rng.standard_normal(shape).astype(dtype)
        return np.zeros(shape, dtype)
    return tree_util.tree_map(one, tree)


def jax_reference(jax_fn, primals, cts, tangents, cheap=False):
    """(output, vjp of cts, jvp of tangents) of ``jax_fn`` in f64, in one jax.jit: jax's eager
    dispatch compiles every primitive of the backward pass on its own, which cost most of the AD
    tests' time. ``cheap``: compiled with CHEAP_COMPILE (tolerance-based comparisons only)."""
    jax_tangents = tuple(t if np.asarray(t).dtype.kind in "fc" else np.zeros(np.shape(t), jax.dtypes.float0)
                         for t in tangents)

    def both(primals, cts, tangents):
        out, pullback = jax.vjp(jax_fn, *primals)
        return out, pullback(cts), jax.jvp(jax_fn, primals, tangents)[1]
    with jax.enable_x64(True), jax.default_device(REFERENCE_DEVICE):
        if cheap:
            return jax_run(both, primals, cts, jax_tangents)
        return jax.jit(both)(primals, cts, jax_tangents)


def check_against_jax(hf_fn, jax_fn, *primals, rtol=None, seed=1):
    """hf.vjp and hf.jvp of hf_fn against jax.vjp and jax.jvp of jax_fn, random (co)tangents."""
    with jax.enable_x64(True):
        cts = random_like(jax.eval_shape(jax_fn, *primals), seed)
    tangents = random_like(primals, seed + 1)
    want_out, want_ct, want_t = jax_reference(jax_fn, primals, cts, tangents)

    def derivatives(primals, cts, tangents):  # (one compile; test_ad_api checks the eager API)
        out, pullback = hf.vjp(hf_fn, *primals)
        return out, pullback(cts), hf.jvp(hf_fn, primals, tangents)[1]
    got_out, got_ct, got_t = hf.jit(derivatives)(tuple(primals), cts, tuple(tangents))
    close(got_out, want_out, rtol)
    close(got_ct, want_ct, rtol)
    close(got_t, want_t, rtol)


def pairing(a, b):
    """sum Re(a * b) over all leaves: the bilinear pairing JAX's complex cotangents use."""
    return sum(float(np.sum(np.real(np.asarray(x) * np.asarray(y))))
               for x, y in zip(tree_util.tree_leaves(a), tree_util.tree_leaves(b)))


def check_finite_differences(hf_fn, *primals, eps=1e-6, rtol=1e-6, seed=3):
    """f64: the jvp equals central differences, and <ct, J t> = <J^T ct, t> (vjp is its transpose)."""
    f = hf.jit(hf_fn)
    t = random_like(primals, seed)
    plus = f(*tree_util.tree_map(lambda x, d: x + eps * d, primals, t))
    minus = f(*tree_util.tree_map(lambda x, d: x - eps * d, primals, t))
    fd = tree_util.tree_map(lambda p, m: (np.asarray(p) - np.asarray(m)) / (2 * eps), plus, minus)
    out, jt = hf.jvp(hf_fn, primals, t)
    close(jt, fd, rtol)
    ct = random_like(out, seed + 1)
    _, f_vjp = hf.vjp(hf_fn, *primals)
    lhs, rhs = pairing(ct, jt), pairing(f_vjp(ct), t)
    assert abs(lhs - rhs) <= 1e-9 * max(1.0, abs(lhs)), (lhs, rhs)


# ---------------------------------------------------------------- cheaper checks: fewer and cheaper compiles

# XLA:CPU without LLVM's optimizations compiles jax's references 2-3x faster; the same math, so the
# same values up to rounding (for the tolerance-based comparisons here, never for bit-exact ones).
CHEAP_COMPILE = {"xla_backend_optimization_level": 0}


def jax_run(jax_fn, *args):
    """``jax.jit(jax_fn)(*args)`` compiled with CHEAP_COMPILE for the CPU (the caller picks x64)."""
    with jax.default_device(REFERENCE_DEVICE):
        return jax.jit(jax_fn).lower(*args).compile(compiler_options=CHEAP_COMPILE)(*args)


def jax_reference_cheap(jax_fn, primals, cts, tangents):
    """jax_reference compiled with CHEAP_COMPILE."""
    return jax_reference(jax_fn, primals, cts, tangents, cheap=True)


def _output_specs(hf_fn, primals):
    """hf_fn's outputs as a pytree of jax.ShapeDtypeStruct (traced, not compiled)."""
    module = hf.jit(hf_fn).lower(*primals)
    leaves = [jax.ShapeDtypeStruct(tuple(s.shape), np.dtype(s.dtype)) for s in module.signature[1]]
    return tree_util.tree_unflatten(module.out_tree, leaves)


def _finite_difference_case(hf_fn, primals, eps, seed):
    """check_finite_differences' inputs, the same random values: (t, plus, minus, ct)."""
    t = random_like(primals, seed)
    plus = tree_util.tree_map(lambda x, d: x + eps * d, primals, t)
    minus = tree_util.tree_map(lambda x, d: x - eps * d, primals, t)
    return t, plus, minus, random_like(_output_specs(hf_fn, primals), seed + 1)


def _check_finite_difference_results(case, results, eps, rtol):
    t, _, _, ct = case
    plus, minus, jt, back = results
    fd = tree_util.tree_map(lambda p, m: (np.asarray(p) - np.asarray(m)) / (2 * eps), plus, minus)
    close(jt, fd, rtol)
    lhs, rhs = pairing(ct, jt), pairing(back, t)
    assert abs(lhs - rhs) <= 1e-9 * max(1.0, abs(lhs)), (lhs, rhs)


def _hf_checks(hf_fn, primals, jax_case, fd_fn, fd_primals, fd_case):
    """One hf.jit, compiled with CHEAP_COMPILE (every comparison of its results has a tolerance):
    (out, vjp, jvp) of hf_fn at jax_case's (cts, tangents), and (f(plus), f(minus), jvp, vjp) of fd_fn
    at fd_case's; either case may be None."""
    def checks(primals, jax_case, fd_primals, fd_case):
        against = fd = None
        if jax_case is not None:
            cts, tangents = jax_case
            out, pullback = hf.vjp(hf_fn, *primals)
            against = out, pullback(cts), hf.jvp(hf_fn, primals, tangents)[1]
        if fd_case is not None:
            t, plus, minus, ct = fd_case
            _, pullback = hf.vjp(fd_fn, *fd_primals)
            fd = fd_fn(*plus), fd_fn(*minus), hf.jvp(fd_fn, fd_primals, t)[1], pullback(ct)
        return against, fd
    return hf.jit(checks, compiler_options=CHEAP_COMPILE)(tuple(primals), jax_case, tuple(fd_primals), fd_case)


def check_finite_differences_once(hf_fn, *primals, eps=1e-6, rtol=1e-6, seed=3):
    """check_finite_differences (the same inputs and assertions) as one compiled program."""
    case = _finite_difference_case(hf_fn, tuple(primals), eps, seed)
    _, fd = _hf_checks(None, (), None, hf_fn, primals, case)
    _check_finite_difference_results(case, fd, eps, rtol)


def check_against_jax_and_fd(hf_fn, jax_fn, *primals, rtol=None, seed=1, fd=True, fd_eps=1e-6, fd_rtol=1e-6,
                             fd_seed=3):
    """check_against_jax(hf_fn, jax_fn, *primals, rtol, seed) and, with ``fd``, check_finite_differences
    (fd_eps, fd_rtol, fd_seed) of hf_fn at primals (fd=True) or of ``fd = (fn, primals)``: one
    hf.jit for both, jax's reference compiled with CHEAP_COMPILE."""
    with jax.enable_x64(True):
        cts = random_like(jax.eval_shape(jax_fn, *primals), seed)
    tangents = random_like(primals, seed + 1)
    want_out, want_ct, want_t = jax_reference_cheap(jax_fn, primals, cts, tangents)
    fd_fn, fd_primals = (hf_fn, tuple(primals)) if fd is True else fd if fd else (None, ())
    fd_case = _finite_difference_case(fd_fn, tuple(fd_primals), fd_eps, fd_seed) if fd else None
    (got_out, got_ct, got_t), fd_results = _hf_checks(hf_fn, primals, (cts, tuple(tangents)), fd_fn, fd_primals,
                                                      fd_case)
    close(got_out, want_out, rtol)
    close(got_ct, want_ct, rtol)
    close(got_t, want_t, rtol)
    if fd_case is not None:
        _check_finite_difference_results(fd_case, fd_results, fd_eps, fd_rtol)


def check_against_jax_cheap(hf_fn, jax_fn, *primals, rtol=None, seed=1):
    """check_against_jax with jax's reference compiled with CHEAP_COMPILE."""
    check_against_jax_and_fd(hf_fn, jax_fn, *primals, rtol=rtol, seed=seed, fd=False)
