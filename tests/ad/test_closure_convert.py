"""hf.closure_convert against jax.closure_convert: the traced values a function closes over become
explicit arguments, so an hf.custom_vjp can differentiate with respect to them."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
import hloforge.numpy as hnp

X = np.linspace(-1, 1, 5).astype(np.float32)
W = np.float32(0.7) + np.zeros(5, np.float32)


def test_converted_function_takes_the_closed_over_values():
    seen = {}

    def outer(x, w):
        f, consts = hf.closure_convert(lambda v: hnp.sin(v * w) + hnp.sum(x), x)
        seen["consts"] = [(c.shape, c.dtype) for c in consts]
        return f(2 * x, *consts), f(x, *[2 * c for c in consts])

    got = hf.jit(outer)(X, W)
    assert seen["consts"] == [((5,), np.float32)] * 2
    np.testing.assert_allclose(got[0], np.sin(2 * X * W) + X.sum(), rtol=1e-6)
    np.testing.assert_allclose(got[1], np.sin(X * 2 * W) + 2 * X.sum(), rtol=1e-6)


def _clipped(np_, custom_vjp, closure_convert):
    """A custom_vjp whose function closes over w, converted so that w's cotangent is computed (the
    pattern jax's documentation gives for closure_convert)."""
    @custom_vjp
    def apply(f, x, *consts):
        return f(x, *consts)

    def fwd(f, x, *consts):
        return f(x, *consts), (x, consts)

    def bwd(f, res, g):
        x, consts = res
        _, pullback = (jax.vjp if np_ is jnp else hf.vjp)(f, x, *consts)
        return tuple(np_.clip(c, -0.5, 0.5) for c in pullback(g))

    apply.defvjp(fwd, bwd)

    def loss(x, w):
        f, consts = closure_convert(lambda v: np_.tanh(v * w) * 3.0, x)
        return np_.sum(apply(f, x, *consts) ** 2)
    return loss


def test_gradients_reach_the_closed_over_values_as_in_jax():
    def hf_custom_vjp(fun):
        return hf.custom_vjp(fun, nondiff_argnums=(0,))

    def jax_custom_vjp(fun):
        return jax.custom_vjp(fun, nondiff_argnums=(0,))
    got = hf.grad(_clipped(hnp, hf_custom_vjp, hf.closure_convert), argnums=(0, 1))(X, W)
    want = jax.grad(_clipped(jnp, jax_custom_vjp, jax.closure_convert), argnums=(0, 1))(X, W)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-7)


def test_outside_a_trace_nothing_is_hoisted():
    f, consts = hf.closure_convert(lambda v: v + 1, X)
    assert consts == []
    np.testing.assert_array_equal(f(X), X + 1)


@pytest.mark.parametrize("call,exc,match", [
    (lambda x: hf.closure_convert(3, x), TypeError, r"closure_convert: fun must be callable, got 3"),
    (lambda x: hf.closure_convert(lambda v: v * x, x)[0](x), TypeError,
     r"takes the example's 1 argument\(s\) and then 1 constant\(s\), got 1 argument"),
    (lambda x: hf.closure_convert(lambda v: v * x, x)[0](x[:2], x), TypeError,
     r"argument leaf 0 has type float32\[2\], but the example's is float32\[5\]"),
    (lambda x: hf.closure_convert(lambda v: v[0], (x, x))[0]([x, x]), TypeError, r"of the example's structure"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        hf.jit(call)(X)


def test_a_converted_function_stays_in_its_trace():
    kept = {}
    hf.jit(lambda x: kept.setdefault("f", hf.closure_convert(lambda v: v * x, x)[0]) and x)(X)
    with pytest.raises(ValueError, match=r"belongs to the trace it was made in"):
        hf.jit(lambda x: kept["f"](x, x))(X)


def test_reverse_mode_of_a_rule_calling_a_function_of_a_primal_and_a_tangent():
    """Only the call's operands that depend on the tangents are active inside it (the primal ``x``
    squared there once made the tangent map look nonlinear)."""
    @hf.custom_jvp
    def cube(x):
        return x ** 3

    @cube.defjvp
    def cube_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        slope, consts = hf.closure_convert(lambda a, v: 3 * a * a * v, x, t)
        return x ** 3, slope(x, t, *consts)

    np.testing.assert_allclose(hf.grad(lambda x: hnp.sum(cube(x)))(X), 3 * X * X, rtol=1e-6)
