"""hf.jit's static_argnums/static_argnames, donate_argnums/donate_argnames, and lower().compile()
running the call's pipeline (frontend/jit.py), against jax.jit's behaviour."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
from hloforge import numpy as hnp

X = np.arange(3, dtype=np.float32)


def scaled(x, n, *, mode="mul"):
    return x * n if mode == "mul" else x + n


@pytest.mark.parametrize("static", [dict(static_argnums=1), dict(static_argnames="n"), dict(static_argnums=-1)])
def test_static_arguments_retrace_per_value(static):
    f = hf.jit(lambda x, n: x * n if n > 2 else x - n, **static)
    np.testing.assert_array_equal(np.asarray(f(X, 3)), X * 3)
    np.testing.assert_array_equal(np.asarray(f(X, n=1)), X - 1)
    np.testing.assert_array_equal(np.asarray(f(X, 3)), X * 3)
    assert f.cache_size() == 2


def test_static_keyword_arguments_and_lower():
    f = hf.jit(scaled, static_argnums=1, static_argnames="mode")
    np.testing.assert_array_equal(np.asarray(f(X, 2, mode="add")), X + 2)
    np.testing.assert_array_equal(np.asarray(f(X, 2)), X * 2)
    assert "stablehlo.add" in f.lower(X, 2, mode="add").text
    assert f.cache_size() == 2


def test_static_errors_are_jax_errors():
    f = hf.jit(scaled, static_argnums=1)
    with pytest.raises(ValueError, match=r"Non-hashable static arguments are not supported\. .*<class 'list'>, "
                                         r"\[1, 2\]\. The error was:\nTypeError: unhashable type: 'list'"):
        f(X, [1, 2])
    with pytest.raises(ValueError, match=r"static_argnums=\(3,\), but only accepts 2 positional arguments"):
        hf.jit(scaled, static_argnums=3)
    with pytest.raises(ValueError, match=r"invalid argnames \{'z'\} in static_argnames"):
        hf.jit(scaled, static_argnames="z")
    with pytest.raises(ValueError, match=r"invalid argnames \{'z'\} in donate_argnames"):
        hf.jit(scaled, donate_argnames="z")
    with pytest.raises(ValueError, match=r"static arguments \[1\] cannot be donated"):
        hf.jit(scaled, static_argnums=1, donate_argnums=1)


def test_donated_positions_a_function_does_not_take_are_refused_as_jax_refuses_them():
    """Issue 49: hf.jit(f, donate_argnums=4) of a one-argument f was silently accepted."""
    for make in (lambda f, **k: hf.jit(f, **k), lambda f, **k: hf.jit(**k)(f), jax.jit):
        with pytest.raises(ValueError, match=r"Jitted function has donate_argnums=\(4,\), but only accepts 1 "
                                             r"positional arguments\."):
            make(lambda x: x, donate_argnums=4)
    with pytest.raises(ValueError, match=r"donate_argnums=\(0, 3\), but only accepts 2 positional arguments"):
        hf.jit(scaled, static_argnames="mode", donate_argnums=(0, 3))
    varargs = hf.jit(lambda *a: a[0] + 1.0, donate_argnums=4)  # (*args: any position may come, as in jax)
    np.testing.assert_array_equal(np.asarray(varargs(X)), X + 1.0)


def test_donated_jax_arrays_are_deleted_and_the_results_right():
    f = hf.jit(lambda x, y: (x * 2.0 + 1.0, y + x.sum()), donate_argnums=(0, 1))
    x, y = jnp.asarray(X), jnp.ones(4, jnp.float32)
    got = f(x, y)
    np.testing.assert_array_equal(np.asarray(got[0]), X * 2 + 1)
    np.testing.assert_array_equal(np.asarray(got[1]), np.full(4, 1 + X.sum()))
    assert x.is_deleted() and y.is_deleted()
    with pytest.raises(RuntimeError, match="delete"):
        np.asarray(x)
    x = jnp.asarray(X)
    f(x, jnp.ones(4, jnp.float32))  # (the second call, through jax's C++ dispatch)
    assert x.is_deleted()
    np.testing.assert_array_equal(np.asarray(f(X, np.ones(4, np.float32))[0]), X * 2 + 1)  # numpy: copied


def test_a_buffer_no_result_can_take_is_kept_with_jax_warning():
    f = hf.jit(lambda x, y: x + 1.0, donate_argnames=("x", "y"))
    x, y = jnp.asarray(X), jnp.ones(4, jnp.float32)
    with pytest.warns(UserWarning, match=r"Some donated buffers were not usable: float32\[4\]"):
        f(x, y)
    assert x.is_deleted() and not y.is_deleted()
    with pytest.warns(UserWarning, match="not usable"):
        assert "tf.aliasing_output = 0" in f.lower(X, np.ones(4, np.float32)).text


def test_static_and_donated_together():
    f = hf.jit(lambda x, n: x * n, static_argnums=1, donate_argnums=0)
    x = jnp.asarray(X)
    np.testing.assert_array_equal(np.asarray(f(x, 5)), X * 5)
    assert x.is_deleted()


def test_lower_compile_runs_the_calls_pipeline():
    f = hf.jit(lambda x: hnp.fft.irfft(hnp.fft.rfft(x), n=8) * 2.0)
    x = np.linspace(0, 1, 8, dtype=np.float32)
    lowered = f.lower(x)
    assert "stablehlo.fft" in lowered.as_text()  # (what was traced, before the passes)
    exe = lowered.compile()
    assert "fft" not in exe.hlo_text.lower()
    np.testing.assert_array_equal(np.asarray(exe(x)), np.asarray(f(x)))
    assert "stablehlo.fft" in lowered.as_text()  # (compile optimized a copy)
    raw = hf.jit(lambda x: hnp.fft.irfft(hnp.fft.rfft(x), n=8), optimize=False).lower(x).compile()
    assert "fft" in raw.hlo_text.lower()
    kept = f.lower(x)
    kept.optimize(pipeline="canonicalize")  # (an explicit pipeline replaces the call's)
    assert "fft" in kept.compile().hlo_text.lower()


def test_as_text_and_compiler_ir_answer_as_jax_lowered():
    m = hf.jit(lambda x: x + 1).lower(X)
    assert m.as_text() == m.text and m.compiler_ir("stablehlo") is m.mlir
    assert "loc(" in m.as_text(debug_info=True)
    with pytest.raises(ValueError, match=r"dialect must be None or 'stablehlo', got 'hlo'"):
        m.as_text("hlo")


def test_shape_deciding_arguments_must_be_concrete_and_static_argnums_makes_them_so():
    from hloforge import numpy as hnp
    with pytest.raises(TypeError, match=r"hloforge.numpy.arange: stop is a traced Tensor\(shape=\(\), dtype=int64.*"
                                        r"static_argnums"):
        hf.jit(lambda n: hnp.arange(n))(5)
    with pytest.raises(TypeError, match=r"hloforge.numpy: the shape \(2, Tensor\(shape=\(\).*holds a traced Tensor"):
        hf.jit(lambda n: hnp.zeros((2, n)))(3)
    assert np.asarray(hf.jit(lambda n: hnp.arange(n), static_argnums=0)(4)).tolist() == [0, 1, 2, 3]
