"""hloforge's AD through hf.from_jax uses jax's own derivatives; hf.stop_gradient."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import tree_util

import hloforge as hf
from hloforge import numpy as hnp

from helpers import assert_close, random


def _clipped(a):
    return a


_clip_gradient = jax.custom_vjp(_clipped)
_clip_gradient.defvjp(lambda a: (a, None), lambda _, g: (jnp.clip(g, -0.1, 0.1),))


@jax.custom_jvp
def _double_tangent(a):
    return jnp.sin(a)


_double_tangent.defjvp(lambda p, t: (jnp.sin(p[0]), 2 * t[0]))


def _close_trees(actual, expected):
    for a, e in zip(tree_util.tree_leaves(actual), tree_util.tree_leaves(expected)):
        assert_close(np.asarray(a), np.asarray(e))


# ---------------------------------------------------------------- jax's AD-level constructs


@pytest.mark.parametrize("fn", [
    lambda a: jnp.sum(jax.lax.stop_gradient(a) * a),
    lambda a: jnp.sum(_clip_gradient(a) * 5),
    lambda a: jnp.sum(jax.nn.relu(a)),
    lambda a: jnp.sum(_double_tangent(a) ** 2),
], ids=["stop_gradient", "custom_vjp", "relu_at_0", "custom_jvp"])
def test_grad_is_jax_grad(fn):
    x = np.array([1.5, -2.0, 0.0, 3.0], np.float32)
    np.testing.assert_array_equal(np.asarray(hf.grad(hf.from_jax(fn))(x)), np.asarray(jax.grad(fn)(x)))


def test_jvp_is_jax_jvp():
    x = np.array([1.5, -2.0, 0.0, 3.0], np.float32)
    t = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    for fn in (jax.nn.relu, _double_tangent, lambda a: jax.lax.stop_gradient(a) * a):
        got = hf.jvp(hf.from_jax(fn), (x,), (t,))
        want = jax.jvp(fn, (x,), (t,))
        np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(want[0]))
        np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(want[1]))


# ---------------------------------------------------------------- higher order, Jacobians


def _cubic(a):
    return jnp.sum(jnp.sin(a) ** 3 * jax.lax.stop_gradient(a))


def test_hessian_and_grad_of_grad_are_jax():
    x = random((4,), np.float64)
    f = hf.from_jax(_cubic)
    inner = lambda g: lambda a: g(a).sum()  # noqa: E731
    got = [hf.hessian(f)(x), hf.grad(inner(hf.grad(f)))(x), hf.grad(inner(hf.grad(inner(hf.grad(f)))))(x)]
    with jax.enable_x64(True):  # (scoped to this thread, as from_jax's own lowering of float64)
        want = [jax.hessian(_cubic)(x), jax.grad(inner(jax.grad(_cubic)))(x),
                jax.grad(inner(jax.grad(inner(jax.grad(_cubic)))))(x)]
    for a, b in zip(got, want):
        assert_close(np.asarray(a), np.asarray(b))


def test_jacfwd_and_jacrev_are_jax():
    x = random((3,), np.float32)
    fn = lambda a: jax.nn.relu(a) * jnp.exp(a[::-1])  # noqa: E731
    f = hf.from_jax(fn)
    assert_close(np.asarray(hf.jacfwd(f)(x)), np.asarray(jax.jacfwd(fn)(x)))
    assert_close(np.asarray(hf.jacrev(f)(x)), np.asarray(jax.jacrev(fn)(x)))


# ---------------------------------------------------------------- complex, pytrees, closures


def test_complex_inputs_follow_jax():
    z = random((3,), np.complex64)
    loss = lambda z: jnp.sum(jnp.abs(jnp.sin(z) * jax.lax.stop_gradient(z)) ** 2)  # noqa: E731
    assert_close(np.asarray(hf.grad(hf.from_jax(loss))(z)), np.asarray(jax.grad(loss)(z)))
    t = random((3,), np.complex64, seed=1)
    got = hf.jvp(hf.from_jax(jnp.sin), (z,), (t,))
    assert_close(np.asarray(got[1]), np.asarray(jax.jvp(jnp.sin, (z,), (t,))[1]))
    c = random((3,), np.complex64, seed=2)
    (dz,) = hf.vjp(hf.from_jax(lambda z: jnp.exp(z) * 1j), z)[1](c)
    assert_close(np.asarray(dz), np.asarray(jax.vjp(lambda z: jnp.exp(z) * 1j, z)[1](c)[0]))


def _model(params, x, *, shift, scale):
    h = x
    for _ in range(2):
        h = jax.nn.relu(h @ params["w"] + params["b"] + shift)
    return {"loss": jnp.sum(h ** 2) * scale, "count": jnp.sum(h > 0).astype(jnp.int32)}


def test_pytrees_kwargs_and_integer_leaves():
    params = {"w": random((3, 3), np.float32), "b": random((3,), np.float32, seed=1)}
    x = random((2, 3), np.float32, seed=2)
    f = hf.from_jax(_model)

    def loss(p, x):
        out = f(p, x, shift=np.int32(1), scale=np.float32(0.5))
        return out["loss"] + hnp.astype(out["count"], np.float32)

    def jloss(p, x):
        out = _model(p, x, shift=np.int32(1), scale=np.float32(0.5))
        return out["loss"] + out["count"].astype(jnp.float32)

    _close_trees(hf.grad(loss, argnums=(0, 1))(params, x), jax.grad(jloss, argnums=(0, 1))(params, x))


def test_closures_over_constants():
    table = random((4,), np.float32, seed=3)
    shift = jnp.arange(4.0, dtype=jnp.float32)
    fn = lambda a: jnp.sum(jnp.tanh(a * table + shift) * jax.lax.stop_gradient(shift))  # noqa: E731
    x = random((4,), np.float32)
    assert_close(np.asarray(hf.grad(hf.from_jax(fn))(x)), np.asarray(jax.grad(fn)(x)))


def test_inside_a_scan_body_under_grad():
    relu = hf.from_jax(jax.nn.relu)
    x = np.array([1.0, -2.0, 0.0, 3.0], np.float32)

    def loss(w, relu=relu, scan=hf.lax.scan, total=hnp.sum):
        out, _ = scan(lambda c, _: (relu(c * w) + c, None), w, None, length=3)
        return total(out)

    want = jax.grad(lambda w: loss(w, jax.nn.relu, jax.lax.scan, jnp.sum))(x)
    np.testing.assert_array_equal(np.asarray(hf.grad(loss)(x)), np.asarray(want))


# ---------------------------------------------------------------- the forward program, Module.vjp


def _net(x, w):
    h = jnp.tanh(x @ w) * jnp.exp(-x[:, :4] ** 2) + jnp.log1p(jnp.abs(x[:, 4:]))
    return jax.nn.softmax(h, axis=-1), jnp.sum(jax.nn.gelu(h))


def test_forward_is_bit_identical_to_jax():
    x, w = random((16, 8), np.float32), random((8, 4), np.float32, seed=1)
    want = jax.jit(_net)(x, w)
    for got in (hf.jit(hf.from_jax(_net))(x, w), hf.jit(lambda x, w: hf.from_jax(_net)(x, w))(x, w)):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    g = hf.jit(hf.value_and_grad(lambda x, w: hf.from_jax(_net)(x, w)[1], argnums=1))(x, w)
    np.testing.assert_array_equal(np.asarray(g[0]), np.asarray(want[1]))


def test_the_call_is_one_private_function_per_signature_that_optimize_inlines():
    f = hf.from_jax(jnp.sin)
    module = hf.trace(lambda a, b: f(a) + f(b) * f(a[::-1]), np.ones(3, np.float32), np.ones(3, np.float32))
    counts = module.op_counts()
    assert counts["func.call"] == 3 and counts["func.func"] == 2
    module.optimize()
    counts = module.op_counts()
    assert "func.call" not in counts and counts["func.func"] == 1 and counts["stablehlo.sine"] == 3


def test_module_vjp_and_jvp_of_a_traced_module_use_jax_rules():
    x = np.array([1.5, -2.0, 0.0, 3.0], np.float32)
    fn = lambda a: jax.lax.stop_gradient(a) * jax.nn.relu(a)  # noqa: E731
    module = hf.trace(hf.from_jax(fn), x)
    ones = np.ones_like(x)
    _, ct = module.vjp().compile()(x, ones)
    np.testing.assert_array_equal(np.asarray(ct), np.asarray(jax.vjp(fn, x)[1](ones)[0]))
    tangent = module.jvp().compile()(x, ones)[1]
    np.testing.assert_array_equal(np.asarray(tangent), np.asarray(jax.jvp(fn, (x,), (ones,))[1]))


def test_a_call_whose_rule_this_process_never_made_is_differentiated_through_its_ops():
    x = np.array([1.5, -2.0, 3.0], np.float32)
    module = hf.trace(hf.from_jax(lambda a: jnp.sum(jax.lax.stop_gradient(a) * a)), x)
    key = next(op.attributes["hloforge.custom_rule"] for op in module.walk() if op.name == "func.call")
    key = str(key).strip('"')
    parsed = hf.Module.parse(module.text.replace(f'"{key}"', '"hloforge_from_jax_elsewhere_0_f"'))
    ct = parsed.vjp().compile()(x, np.float32(1))[1]
    np.testing.assert_array_equal(np.asarray(ct), 2 * x)  # (jax's stop_gradient is not in the ops)


# ---------------------------------------------------------------- errors


def test_host_callbacks_cannot_be_embedded():
    def noisy(a):
        jax.debug.print("a = {}", a)
        return a * 2

    with pytest.raises(TypeError, match=r"from_jax\(noisy\): jax's lowering calls the host callback "
                                        r"xla_ffi_python_cpu_callback .*jax host callbacks cannot be embedded"):
        hf.from_jax(noisy)(np.ones(3, np.float32))


def test_a_closure_over_a_jax_tracer_is_refused():
    x = np.ones(3, np.float32)
    with pytest.raises(TypeError, match=r"from_jax\(<lambda>\): the function closes over 1 jax tracer\(s\).*"
                                        r"the function must take it as an argument"):
        jax.jit(lambda y: hf.from_jax(lambda a: a + y)(x))(x)
    with pytest.raises(TypeError, match=r"closes over 1 jax tracer"):
        jax.grad(lambda y: hf.from_jax(lambda a: jnp.sum(a * y))(x))(1.0)


def test_a_derivative_jax_cannot_take_names_it():
    def loop(a):
        return jax.lax.while_loop(lambda c: c[1] < 3, lambda c: (c[0] * a, c[1] + 1), (a, 0))[0].sum()

    x = np.ones(3, np.float32)
    assert_close(np.asarray(hf.jvp(hf.from_jax(loop), (x,), (x,))[1]), np.asarray(jax.jvp(loop, (x,), (x,))[1]))
    with pytest.raises(TypeError, match=r"from_jax\(vjp_pullback\(loop\)\): jax could not lower it .*Reverse-mode"):
        hf.grad(hf.from_jax(loop))(x)


# ---------------------------------------------------------------- hf.stop_gradient


def test_stop_gradient_has_zero_derivatives():
    x = np.array([1.5, -2.0, 0.0, 3.0], np.float32)
    assert hf.lax.stop_gradient is hf.stop_gradient and "stop_gradient" in hf.__all__
    assert "stop_gradient" in hf.lax.__all__
    f = lambda a: hnp.sum(hf.stop_gradient(a) * a ** 3)  # noqa: E731
    jf = lambda a: jnp.sum(jax.lax.stop_gradient(a) * a ** 3)  # noqa: E731
    np.testing.assert_array_equal(np.asarray(hf.grad(f)(x)), np.asarray(jax.grad(jf)(x)))
    assert_close(np.asarray(hf.hessian(f)(x)), np.asarray(jax.hessian(jf)(x)))
    out, tangent = hf.jvp(hf.stop_gradient, (x,), (np.ones_like(x),))
    np.testing.assert_array_equal(np.asarray(out), x)
    np.testing.assert_array_equal(np.asarray(tangent), np.zeros_like(x))
    z = random((3,), np.complex64)
    assert_close(np.asarray(hf.grad(lambda z: hnp.sum(hnp.abs(hf.stop_gradient(z) * z) ** 2))(z)),
                 np.asarray(jax.grad(lambda z: jnp.sum(jnp.abs(jax.lax.stop_gradient(z) * z) ** 2))(z)))


def test_stop_gradient_of_pytrees_and_outside_a_trace():
    x = random((3,), np.float32)
    tree = {"a": x, "i": np.arange(3, dtype=np.int32), "n": None, "s": 2.0}
    out = hf.stop_gradient(tree)
    assert out["n"] is None and set(out) == set(tree)
    np.testing.assert_array_equal(np.asarray(out["a"]), x)
    np.testing.assert_array_equal(np.asarray(out["i"]), tree["i"])

    def loss(a, i):
        kept = hf.lax.stop_gradient({"a": a, "b": 2 * a, "i": i})
        return hnp.sum(kept["b"] * a + kept["a"] * hnp.astype(kept["i"], np.float32))

    np.testing.assert_array_equal(np.asarray(hf.grad(loss)(x, tree["i"])), 2 * x)
    module = hf.trace(loss, x, tree["i"])
    assert module.op_counts()["stablehlo.composite"] == 1  # (one composite over the float leaves)


def test_stop_gradient_survives_text_and_optimize():
    x = random((3,), np.float32)
    module = hf.trace(lambda a: hnp.sum(hf.stop_gradient(a) * a), x)
    assert 'stablehlo.composite "hloforge.stop_gradient"' in module.text
    module.optimize()
    parsed = hf.Module.parse(module.text)
    out, ct = parsed.vjp().compile()(x, np.float32(1))
    np.testing.assert_array_equal(np.asarray(ct), x)
    assert_close(np.asarray(out), np.asarray(np.sum(x * x)))
    tangent = parsed.jvp().compile()(x, np.ones_like(x))[1]
    assert_close(np.asarray(tangent), np.asarray(np.sum(x)))
