"""hf.from_jax: jax functions (optax, jax.nn, jnp) inside hloforge programs."""
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import hloforge as hf
from hloforge import numpy as hnp

from helpers import assert_close, random


def test_inside_a_program_with_pytrees():
    f = hf.from_jax(lambda x, d: {"y": jnp.sin(x) * d["s"], "n": jnp.linalg.norm(x)})
    x = random((5,), np.float32)

    @hf.jit
    def g(x):
        out = f(hnp.exp(x), {"s": np.float32(3)})
        return out["y"] + out["n"]

    want = jnp.sin(jnp.exp(x)) * 3 + jnp.linalg.norm(jnp.exp(x))
    assert_close(np.asarray(g(x)), np.asarray(want))
    module = g.lower(x)
    assert module.op_counts()["func.call"] == 1  # (a call hloforge's AD differentiates with jax's rules)
    module.optimize()
    assert "stablehlo.sine" in module.op_counts()  # jax's ops are inlined into one function
    assert "func.call" not in module.op_counts() and module.op_counts()["func.func"] == 1


def test_outside_a_trace_and_float64_exact():
    double = hf.from_jax(lambda x: x * 2 + jnp.float64(0.1))
    x = np.array([1 / 3, 1e-300], np.float64)
    out = np.asarray(double(x))
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, x * 2 + 0.1)


def test_optax_adam_inside_jit_matches_optax():
    opt = optax.adam(1e-2)
    params = {"w": random((3, 2), np.float32), "b": random((2,), np.float32, seed=1)}
    state = opt.init(params)
    update, apply = hf.from_jax(opt.update), hf.from_jax(optax.apply_updates)

    @hf.jit
    def step(p, s):
        grads = {k: v * 2.0 for k, v in p.items()}
        u, s = update(grads, s, p)
        return apply(p, u), s

    p_hf, s_hf = params, state
    p_jax, s_jax = params, state
    for _ in range(3):
        p_hf, s_hf = step(p_hf, s_hf)
        u, s_jax = opt.update({k: v * 2.0 for k, v in p_jax.items()}, s_jax, p_jax)
        p_jax = optax.apply_updates(p_jax, u)
    for k in params:
        assert_close(np.asarray(p_hf[k]), np.asarray(p_jax[k]))
    assert int(s_hf[0].count) == 3


def test_lowered_once_per_signature():
    calls = []

    def fn(x):
        calls.append(x.shape)
        return jax.nn.relu(x)

    f = hf.from_jax(fn)
    g = hf.jit(lambda x: f(x) + f(x + 1))
    g(np.ones(3, np.float32))
    g(np.ones(4, np.float32))
    assert calls == [(3,), (4,)]


def test_errors_name_the_function_and_quote_jax():
    with pytest.raises(TypeError, match=r"from_jax\(<lambda>\): jax could not lower it for argument leaves "
                                        r"\(float32\[5\]\): TypeError: cannot reshape"):
        hf.from_jax(lambda x: x.reshape(7))(np.ones(5, np.float32))
    # (a string leaf is static, as in eqx.filter_jit: it reaches the function as it is; an unhashable one is refused)
    np.testing.assert_array_equal(hf.from_jax(lambda x, s: x * len(s))(np.ones(2), "text"), np.full(2, 4.0))
    with pytest.raises(TypeError, match=r"from_jax\(ident\): argument leaf 1 \(set\) is neither an array nor hashable"):
        hf.from_jax(lambda x, s: x, name="ident")(np.ones(2), {"text"})


# jax functions whose lowering calls private functions that inline leaves behind call boundaries (constants
# crossing a call): refused with "keeps N call(s) hloforge cannot inline" before issue 47
_KEY = jax.random.PRNGKey(0)
BOUNDARY_FUNCTIONS = {
    "var": (jnp.var, np.array([3.0, 1.0, 2.0, 7.0], np.float32)),
    "std": (jnp.std, np.array([3.0, 1.0, 2.0, 7.0], np.float32)),
    "median": (jnp.median, np.array([3.0, 1.0, 2.0, 7.0], np.float32)),
    "percentile": (lambda v: jnp.percentile(v, 30.0), np.array([3.0, 1.0, 2.0, 7.0], np.float32)),
    "interp": (lambda v: jnp.sum(jnp.interp(v, jnp.arange(8.0), jnp.arange(8.0) ** 2)),
               np.array([0.5, 2.25, 6.0], np.float32)),
    "layer_norm": (lambda v: jnp.sum(((v - v.mean(-1, keepdims=True)) / jnp.sqrt(v.var(-1, keepdims=True) + 1e-5))
                                     * jnp.arange(3.0)), np.arange(6.0, dtype=np.float32).reshape(2, 3)),
    "normal": (lambda k: jax.random.normal(k, (3,)), _KEY),
    "gamma": (lambda k: jax.random.gamma(k, 2.0, (3,)), _KEY),
    "choice": (lambda k: jax.random.choice(k, 5, (2,)), _KEY),
}


@pytest.mark.parametrize("name", sorted(BOUNDARY_FUNCTIONS))
def test_jax_functions_with_call_boundaries_cross(name):
    fn, x = BOUNDARY_FUNCTIONS[name]
    want = np.asarray(jax.jit(fn)(x))
    np.testing.assert_array_equal(np.asarray(hf.jit(hf.from_jax(fn))(x)), want)
    np.testing.assert_array_equal(np.asarray(jax.jit(hf.optimize(fn))(x)), want)
    if want.shape == () and np.asarray(x).dtype == np.float32:
        np.testing.assert_allclose(jax.grad(hf.optimize(fn))(x), jax.grad(fn)(x), rtol=1e-6, atol=1e-6)


def test_typed_keys_cross_as_their_key_data():
    """jax.random.key(1) (typed key) arguments: 'Cannot interpret key<fry> as a data type' before issue 47."""
    key = jax.random.key(1)
    sampler = lambda k: jax.random.normal(k, (3,))  # noqa: E731
    want = np.asarray(sampler(key))
    for f in (hf.optimize(sampler), jax.jit(hf.optimize(sampler)), hf.from_jax(sampler)):
        np.testing.assert_array_equal(np.asarray(f(key)), want)
    with pytest.raises(TypeError, match="a typed PRNG key of the 'rbg' implementation cannot cross into hloforge"):
        hf.optimize(sampler)(jax.random.key(1, impl="rbg"))
