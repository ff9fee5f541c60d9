"""Tracing: pytrees in and out, closed-over constants, jit caching, lower, locations."""
import numpy as np
import pytest

import hloforge as hf
from hloforge import numpy as hnp
from helpers import assert_close, random


def test_pytrees_in_and_out():
    @hf.jit
    def f(params, x, *, scale):
        w, b = params["w"], params["b"]
        y = x @ w + b
        return {"y": y * scale, "stats": (hnp.mean(y), [hnp.max(y), 3.0])}

    params = {"w": random((4, 2), np.float32, seed=1), "b": random((2,), np.float32, seed=2)}
    x = random((3, 4), np.float32, seed=3)
    out = f(params, x, scale=np.float32(2))
    y = x @ params["w"] + params["b"]
    assert set(out) == {"y", "stats"}
    assert_close(out["y"], y * 2)
    assert_close(out["stats"][0], np.mean(y))
    assert isinstance(out["stats"][1], list)
    assert_close(out["stats"][1][0], np.max(y))
    assert_close(out["stats"][1][1], np.array(3.0))


def test_closed_over_arrays_become_constants():
    table = np.arange(6, dtype=np.float32).reshape(2, 3)
    m = hf.trace(lambda x: x + table, hf.ShapeDtype((2, 3), np.float32))
    assert m.op_counts()["stablehlo.constant"] == 1
    assert_close(m.compile()(np.ones((2, 3), np.float32)), table + 1)


def test_scalar_arguments_are_0d_with_numpy_default_dtypes():
    m = hf.trace(lambda a, b, c: (a, b, c), 1.5, 2, True)
    ins, outs = m.signature
    assert [i.dtype for i in ins] == [np.float64, np.int64, np.bool_]
    assert all(i.shape == () for i in ins)


def test_jit_caches_one_executable_per_signature():
    calls = []

    @hf.jit
    def f(x):
        calls.append(x.shape)
        return x * 2

    f(np.ones(3, np.float32))
    f(np.zeros(3, np.float32))
    assert len(calls) == 1
    f(np.ones(4, np.float32))
    f(np.ones(3, np.float64))
    assert len(calls) == 3 and f.cache_size() == 3


def test_lower_returns_module_without_compiling():
    f = hf.jit(lambda x, w: hnp.tanh(x @ w))
    m = f.lower(np.ones((4, 8), np.float32), np.ones((8, 3), np.float32))
    assert isinstance(m, hf.Module)
    assert m.op_counts()["stablehlo.tanh"] == 1
    assert "func.func @main" in m.text
    assert f.cache_size() == 0
    ins, outs = m.signature
    assert ins == [hf.ShapeDtype((4, 8), np.float32), hf.ShapeDtype((8, 3), np.float32)]
    assert outs == [hf.ShapeDtype((4, 3), np.float32)]


def test_trace_with_name_and_multiple_results():
    m = hf.trace(lambda x: (x + 1, x * 2), hf.ShapeDtype((2,), np.int32), name="pair")
    assert "func.func @pair" in m.text
    a, b = m.compile()(np.array([1, 2], np.int32))
    assert_close(a, np.array([2, 3], np.int32))
    assert_close(b, np.array([2, 4], np.int32))


def test_every_op_has_a_user_location():
    m = hf.trace(lambda x: hnp.sum(hnp.exp(x) * 2.0), hf.ShapeDtype((3,), np.float32))
    text = m.to_text(debug_info=True)
    assert "test_tracing.py" in text
    assert "frontend" not in text  # no hloforge-internal frames
    assert "loc(" not in m.text


def test_trace_errors():
    with pytest.raises(TypeError, match="argument leaf 0 of type object is not an array"):
        hf.trace(lambda x: x, object())
    with pytest.raises(TypeError, match="argument leaf 0: unsupported dtype"):
        hf.trace(lambda x: x, np.array(["a"]))
    with pytest.raises(ValueError, match=r"ShapeDtype: shape \(-1,\) has a negative dimension"):
        hf.ShapeDtype((-1,), np.float32)
    with pytest.raises(TypeError, match="output 0: cannot convert"):
        hf.trace(lambda x: object(), hf.ShapeDtype((1,), np.float32))


def test_tensor_attributes():
    seen = {}

    def f(x):
        seen.update(shape=x.shape, dtype=x.dtype, ndim=x.ndim, size=x.size, len=len(x), repr=repr(x))
        return x
    hf.trace(f, hf.ShapeDtype((4, 2), np.float16))
    assert seen == {"shape": (4, 2), "dtype": np.float16, "ndim": 2, "size": 8, "len": 4,
                    "repr": "Tensor(shape=(4, 2), dtype=float16)"}


def test_iterating_a_tensor_unstacks_it():
    x = random((3, 2), np.float32)
    out = hf.jit(lambda x: [r * 2 for r in x])(x)
    assert len(out) == 3
    assert_close(out[2], x[2] * 2)


def test_jitted_functions_are_freed():
    import gc
    import weakref

    import jax
    f = hf.jit(lambda x: x + 1)
    f(jax.numpy.ones(2))  # goes through the C++ dispatch loop
    ref = weakref.ref(f)
    del f
    gc.collect()
    assert ref() is None


def test_fast_path_keeps_64_bit_and_signatures_apart():
    import jax
    f = hf.jit(lambda x: x * 2)
    x64 = np.ones(3) * (1 + 1e-13)
    with jax.enable_x64(True):
        d64 = jax.device_put(x64)
    d32 = jax.device_put(np.ones(3, np.float32))
    for _ in range(2):  # the second round runs from jax's C++ loop
        assert f(d64).dtype == np.float64 and np.array_equal(np.asarray(f(d64)), 2 * x64)
        assert f(d32).dtype == np.float32
        assert f(x64).dtype == np.float64  # numpy never takes the C++ path
    assert f.cache_size() == 2


def test_locations_carry_the_column_of_the_call():
    def f(x):
        y = hf.ops.exp(x)
        return hf.ops.sin(y)

    text = hf.trace(f, hf.ShapeDtype((2,), np.float32)).to_text(debug_info=True)
    line = f.__code__.co_firstlineno
    assert f'test_tracing.py":{line + 1}:13)' in text  # `hf.ops.exp` starts at column 13
    assert f'test_tracing.py":{line + 2}:16)' in text


def test_public_submodule_imports():
    import importlib
    assert importlib.import_module("hloforge.numpy") is hf.numpy
    assert importlib.import_module("hloforge.numpy.fft") is hf.numpy.fft
    assert importlib.import_module("hloforge.ops") is hf.ops
    assert importlib.import_module("hloforge.nn") is hf.nn


def test_splat_is_one_constant_reused_only_when_asked():
    from hloforge.frontend.ops import add
    from hloforge.frontend.tracing import NoTraceError, splat

    def f(x):
        a, b = splat(1.5, np.float32, (2,)), splat(1.5, np.float32, (2,))
        c, d = splat(2, np.float32, (2,), reuse=True), splat(2.0, np.float32, (2,), reuse=True)
        assert c is d and a is not b
        return add(add(a, b), add(x, c)), splat(300, np.int8, ())  # (numpy's cast: 44)

    m = hf.trace(f, np.zeros(2, np.float32))
    assert m.text.count("stablehlo.constant") == 4 and "dense<44> : tensor<i8>" in m.text
    assert "dense<1.500000e+00> : tensor<2xf32>" in m.text
    with pytest.raises(NoTraceError, match="splat builds IR and needs an active trace"):
        splat(0, np.float32, ())


def _sin_of_a_tensor_in_jax(x):
    import jax.numpy as jnp
    return jnp.sin(x)  # the line the error names


@pytest.mark.parametrize("call", [
    _sin_of_a_tensor_in_jax,
    lambda x: __import__("jax").numpy.add(x, 1),  # (jax's "requires ndarray or scalar arguments")
    lambda x: __import__("jax").lax.sin(x),
    lambda x: __import__("jax").jit(lambda y: y * 2)(x),
    lambda x: __import__("jax").vmap(__import__("jax").numpy.sin)(x),
    lambda x: hf.lax.cond(True, lambda: __import__("jax").numpy.sin(x), lambda: x),  # (inside a region body)
], ids=["jnp.sin", "jnp.add", "lax.sin", "jax.jit", "jax.vmap", "in a cond"])
def test_jax_functions_refuse_tensors_and_point_at_from_jax(call):
    """Issue 49: jax code inside an hloforge trace said "Tensor(...) is not a valid JAX type"."""
    from hloforge.frontend.tracing import JaxGotTensorError
    with pytest.raises(TypeError, match=r"hloforge: (the traced Tensor\(shape=\(3,\), dtype=float32\)|a traced Tensor) "
                                        r"was passed to a jax function at .*test_tracing\.py:\d+.*; jax cannot compute "
                                        r"on hloforge Tensors\. Inside hf\.jit and hf\.trace use hloforge\.numpy.*"
                                        r"hf\.from_jax") as info:
        hf.jit(call)(np.ones(3, np.float32))
    assert isinstance(info.value, JaxGotTensorError)
    if call is _sin_of_a_tensor_in_jax:
        assert "`return jnp.sin(x)  # the line the error names`" in str(info.value)
    with pytest.raises(TypeError, match="was passed to a jax function"):
        hf.trace(call, hf.ShapeDtype((3,), np.float32))


def test_jax_arrays_still_combine_with_tensors():
    import jax.numpy as jnp
    f = hf.jit(lambda x: (jnp.ones(3, jnp.float32) + x, x * jnp.full(3, 2.0, jnp.float32),
                          hf.from_jax(jnp.sin)(x)))
    a, b, c = f(np.ones(3, np.float32))
    np.testing.assert_array_equal(np.asarray(a), [2, 2, 2])
    np.testing.assert_array_equal(np.asarray(b), [2, 2, 2])
    np.testing.assert_allclose(np.asarray(c), np.sin(np.ones(3, np.float32)), rtol=1e-6)
