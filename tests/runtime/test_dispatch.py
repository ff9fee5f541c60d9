"""Dispatch: after a first call, jax arrays, numpy arrays and Python scalars run from jax's C++ loop
(no Python call_flat), 64-bit values arrive exact, argument errors keep their messages.
Speed is measured in benchmarks/run.py (dispatch rows), never here."""
import gc

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
from hloforge.runtime import dispatch, pjrt
from helpers import assert_close, random


@pytest.mark.parametrize("args,kind", [
    ((np.ones(2, np.float32), jnp.ones(2)), dispatch.PLAIN),
    ((np.float32(1), np.int8(2), np.ones(2, np.complex64)), dispatch.PLAIN),
    ((np.ones(2, np.float64),), dispatch.WIDE),
    ((np.ones(2, np.float32), 2.0), dispatch.WIDE),
    ((np.int64(3),), dispatch.WIDE),
    ((np.ones(2, ">f4"),), dispatch.PYTHON),
    (([1.0, 2.0],), dispatch.WIDE),  # containers take the wide loop: it sees each leaf's exact dtype (hf.jit's
    (({"w": jnp.ones(2)}, jnp.ones(2)), dispatch.WIDE),  # calls of jax arrays and their trees go plain first)
    ((np.ones(2, object),), dispatch.PYTHON),
])
def test_route(args, kind):
    assert dispatch.route(args) == kind


@pytest.mark.parametrize("make", [
    lambda: np.arange(3, dtype=np.float32),
    lambda: jnp.arange(3, dtype=jnp.float32),
    lambda: np.float32(1.5),
])
def test_jit_runs_later_calls_from_cpp(python_calls, make):
    f = hf.jit(lambda a, b: a * b + 1.0)
    a = make()
    assert_close(f(a, a), np.asarray(a) * np.asarray(a) + 1)
    assert len(python_calls) == 1
    for k in range(3):
        b = np.asarray(a) + np.float32(k)  # new values, same kind of argument
        b = jnp.asarray(b) if isinstance(a, jax.Array) else b if isinstance(a, np.ndarray) else np.float32(b)
        assert_close(f(a, b), np.asarray(a) * np.asarray(b) + 1)
    assert len(python_calls) == 1


@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.int64, np.uint64])
def test_64_bit_numpy_arguments_arrive_exact_on_the_fast_path(python_calls, dtype):
    f = hf.jit(lambda a: a + a - a)
    for seed in range(3):
        x = random((4,), dtype, seed=seed)
        if np.dtype(dtype).kind in "fc":
            x = x * (1 + 1e-13)  # digits float32 cannot hold
        out = f(x)
        assert out.dtype == dtype
        np.testing.assert_array_equal(np.asarray(out), x)
    assert len(python_calls) == 1
    assert not jax.config.jax_enable_x64


def test_python_scalars_are_float64_and_int64_and_fast(python_calls):
    f = hf.jit(lambda a, s, n: a * s + n)
    x = np.ones(2, np.float64)
    for k in range(3):
        s = 1.0 + 1e-13 * (k + 1)
        out = f(x, s, k)
        assert out.dtype == np.float64
        np.testing.assert_array_equal(np.asarray(out), x * s + k)
    assert len(python_calls) == 1
    # the scalars arrive as float64/int64 but stay weakly typed (NEP 50, as literals would be)
    assert f(np.ones(2, np.float32), 2.0, 1).dtype == np.float32


def test_parameter_trees_run_from_cpp_and_keep_numpy_dtypes(python_calls):
    f = hf.jit(lambda x, p: x * p["w"] + p["b"][0])
    x = jnp.ones(2, jnp.float32)
    params = {"w": jnp.full(2, 2.0, jnp.float32), "b": [jnp.ones(2, jnp.float32)]}
    for _ in range(3):
        assert_close(f(x, params), np.full(2, 3, np.float32))
    assert len(python_calls) == 1
    # numpy float32 leaves: the same executable
    assert_close(f(x, {"w": np.full(2, 3.0, np.float32), "b": [np.ones(2, np.float32)]}), np.full(2, 4, np.float32))
    assert f.cache_size() == 1
    # a float64 leaf is not silently made float32 (as jax's loop would without x64): a new executable
    w64 = np.full(2, 1 + 1e-13)
    for _ in range(2):
        out = f(np.ones(2), {"w": w64, "b": [np.zeros(2)]})
        assert out.dtype == np.float64
        np.testing.assert_array_equal(np.asarray(out), w64)
    assert f.cache_size() == 2
    assert not jax.config.jax_enable_x64


def test_parameter_trees_of_jax_arrays_leave_numpy_and_scalar_leaves_exact(python_calls):
    # a tree of jax arrays runs from the loop without the x64 scope, which keys numpy leaves and
    # Python scalars by 32-bit dtypes: those calls must still arrive exact (and from C++)
    f = hf.jit(lambda x, p: x * p["w"])
    x = jnp.ones(2, jnp.float32)
    for _ in range(2):
        assert_close(f(x, {"w": jnp.full(2, 2.0, jnp.float32)}), np.full(2, 2, np.float32))
    w64 = np.full(2, 1 + 1e-13)
    for _ in range(3):
        out = f(x, {"w": w64})
        assert out.dtype == np.float64
        np.testing.assert_array_equal(np.asarray(out), w64)
        assert_close(f(x, {"w": 3}), np.full(2, 3, np.float32))
    assert len(python_calls) == 3
    assert f.cache_size() == 3


def test_parameter_trees_with_leaves_jax_cannot_take_keep_our_errors():
    f = hf.jit(lambda x, p: x * p["w"])
    f(jnp.ones(2), {"w": jnp.ones(2)})
    with pytest.raises(TypeError, match="argument leaf 1: unsupported dtype <U3"):
        f(jnp.ones(2), {"w": "two"})
    assert_close(f(jnp.ones(2), {"w": np.arange(2, dtype=">f4")}), np.arange(2, dtype=np.float32))


def test_executable_runs_later_calls_from_cpp(python_calls):
    exe = hf.trace(lambda x, y: x - y, hf.ShapeDtype((3,), np.float32), hf.ShapeDtype((3,), np.float32)).compile()
    x = random((3,), np.float32)
    for k in range(3):
        assert_close(exe(x, x + k), -np.full(3, k, np.float32))
    assert len(python_calls) == 1
    assert_close(exe(jnp.asarray(x), x), np.zeros(3, np.float32))


def test_executable_keeps_argument_errors_after_the_fast_path():
    exe = hf.trace(lambda x, s: x * s, hf.ShapeDtype((2, 3), np.float32), hf.ShapeDtype((), np.float32)).compile()
    x = np.ones((2, 3), np.float32)
    exe(x, np.float32(2)), exe(x, np.float32(2))
    with pytest.raises(TypeError, match=r"argument 0: expected float32\[2, 3\], got float64\[2, 3\]"):
        exe(np.ones((2, 3)), np.float32(2))
    with pytest.raises(ValueError, match=r"argument 1: expected float32\[\], got float32\[2\]"):
        exe(x, np.ones(2, np.float32))
    with pytest.raises(TypeError, match="main: expected 2 arguments, got 1"):
        exe(x)
    # a Python float for a float32 parameter is converted by the Python path, every time
    assert_close(exe(x, 3.0), x * 3)
    assert_close(exe(x, 4.0), x * 4)


def test_big_endian_arguments_are_converted():
    x = np.arange(4, dtype=">f4")
    assert_close(hf.jit(lambda a: a * 2.0)(x), np.arange(4, dtype=np.float32) * 2)
    exe = hf.trace(lambda a: a + 1.0, hf.ShapeDtype((4,), np.float32)).compile()
    assert_close(exe(x), np.arange(4, dtype=np.float32) + 1)
    assert_close(exe(np.arange(4, dtype=">f8").astype(">f4")), np.arange(4, dtype=np.float32) + 1)


def test_executables_with_fast_loops_are_freed():
    x = np.ones(3, np.float32)
    gc.collect()
    before = pjrt.live_counts()[0]
    for i in range(20):
        m = hf.trace(lambda a: a * 3.0 + float(i) + 0.5, hf.ShapeDtype((3,), np.float32))
        exe = m.compile()
        exe(x), exe(x)
        del exe, m
    hf.runtime.cache.clear()
    gc.collect()
    assert pjrt.live_counts()[0] <= before + 1
