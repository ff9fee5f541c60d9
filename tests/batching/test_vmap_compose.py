"""hf.vmap composed with the other transformations, each against jax on the same program: vmap of
grad/value_and_grad/vjp/jvp/jacfwd/jacrev/hessian and each of them of vmap, jit of vmap, vmap of jit, vmap of
vmap, custom_vjp/custom_jvp and from_jax under vmap, hloforge.lax control flow, hloforge.random
over split keys (bit for bit)."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
import hloforge.lax as hlax
import hloforge.numpy as hnp
import hloforge.random as hrandom
from batching_helpers import assert_same

rng = np.random.default_rng(1)
B, D, H = 4, 3, 5
W1 = rng.standard_normal((D, H)).astype(np.float32)
B1 = rng.standard_normal(H).astype(np.float32)
XS = rng.standard_normal((B, D)).astype(np.float32)
YS = rng.standard_normal(B).astype(np.float32)
PARAMS = {"w": W1, "b": B1}

# Tests whose batched ops include while/if/case with batched operands or predicates, which need
# frontend/batching/control_flow.py's rules (another part of issue #25).
def needs_control_flow(test):
    """Marks (for the reader) a test that waits on the control-flow batch rules."""
    return test


def close(got, want):
    assert_same(jax.tree_util.tree_map(np.asarray, got), jax.tree_util.tree_map(np.asarray, want), exact=False)


def loss(np_, p, x, y):
    h = np_.tanh(x @ p["w"] + p["b"])
    return (h.sum() - y) ** 2


L_HF, L_JAX = functools.partial(loss, hnp), functools.partial(loss, jnp)


# ---------------------------------------------------------------- vmap of AD

def test_vmap_of_grad_is_per_example_gradients():
    got = hf.vmap(hf.grad(L_HF), in_axes=(None, 0, 0))(PARAMS, XS, YS)
    close(got, jax.jit(jax.vmap(jax.grad(L_JAX), in_axes=(None, 0, 0)))(PARAMS, XS, YS))


def test_vmap_of_value_and_grad_with_argnums():
    got = hf.vmap(hf.value_and_grad(L_HF, argnums=(0, 1)), in_axes=(None, 0, 0))(PARAMS, XS, YS)
    close(got, jax.jit(jax.vmap(jax.value_and_grad(L_JAX, argnums=(0, 1)), in_axes=(None, 0, 0)))(PARAMS, XS, YS))


def test_vmap_of_vjp_and_jvp():
    def via_vjp(ad, np_):
        def f(x, ct):
            y, pull = ad.vjp(lambda v: np_.sin(v) * v, x)
            return y, pull(ct)[0]
        return f

    def via_jvp(ad, np_):
        return lambda x, t: ad.jvp(lambda v: np_.sin(v) * v, (x,), (t,))

    cts = rng.standard_normal((B, D)).astype(np.float32)
    close(hf.vmap(via_vjp(hf, hnp))(XS, cts), jax.jit(jax.vmap(via_vjp(jax, jnp)))(XS, cts))
    close(hf.vmap(via_jvp(hf, hnp), in_axes=(0, None))(XS, cts[0]),
          jax.jit(jax.vmap(via_jvp(jax, jnp), in_axes=(0, None)))(XS, cts[0]))


@pytest.mark.parametrize("jac", ["jacfwd", "jacrev", "hessian"])
def test_vmap_of_jacobians(jac):
    def f(np_):
        return lambda x: np_.sin(x) * x.sum() + x ** 2

    close(hf.vmap(getattr(hf, jac)(f(hnp)))(XS), jax.jit(jax.vmap(getattr(jax, jac)(f(jnp))))(XS))


def test_grad_of_vmap():
    def total(np_, vmap):
        return lambda p: vmap(functools.partial(loss, np_), in_axes=(None, 0, 0))(p, XS, YS).mean()
    close(hf.grad(total(hnp, hf.vmap))(PARAMS), jax.jit(jax.grad(total(jnp, jax.vmap)))(PARAMS))


@pytest.mark.parametrize("ad", ["jvp", "vjp", "jacfwd", "jacrev", "hessian"])
def test_forward_and_reverse_mode_of_vmap(ad):
    def f(np_):
        return lambda x: np_.sin(x) * x.sum() + x ** 2
    t = rng.standard_normal((B, D)).astype(np.float32)

    def run(lib, np_):
        batched = lib.vmap(f(np_))
        if ad == "jvp":
            return lib.jvp(batched, (XS,), (t,))
        if ad == "vjp":
            return lib.vjp(batched, XS)[1](t)
        return getattr(lib, ad)(lambda x: batched(x).sum(0))(XS)
    close(run(hf, hnp), run(jax, jnp))


def test_vmap_of_grad_of_vmap():
    def inner(np_, vmap):
        return lambda p, x: vmap(lambda xi: np_.tanh(xi @ p["w"]).sum())(x).sum()
    xs = rng.standard_normal((2, B, D)).astype(np.float32)
    close(hf.vmap(hf.grad(inner(hnp, hf.vmap)), in_axes=(None, 0))(PARAMS, xs),
          jax.jit(jax.vmap(jax.grad(inner(jnp, jax.vmap)), in_axes=(None, 0)))(PARAMS, xs))


# ---------------------------------------------------------------- jit, vmap of vmap

def test_jit_of_vmap_and_vmap_of_jit():
    step_hf = hf.jit(lambda x, w: hnp.tanh(x @ w))  # (called inside vmap's trace: a call, inlined)
    close(hf.jit(hf.vmap(step_hf, in_axes=(0, None)))(XS, W1), jax.jit(jax.vmap(lambda x, w: jnp.tanh(x @ w),
                                                                       in_axes=(0, None)))(XS, W1))
    close(hf.vmap(lambda x: step_hf(x, W1) * 2.0)(XS), jnp.tanh(XS @ W1) * 2.0)


def test_vmap_of_vmap_with_in_axes_on_both_levels():
    a = rng.standard_normal((D, B, 2)).astype(np.float32)  # batched on 1 (outer) then 1 (inner)
    b = rng.standard_normal((2, D)).astype(np.float32)  # shared by the outer level, batched on 0 inside

    def make(np_, vmap):
        inner = vmap(lambda x, y: np_.sin(x) * y, in_axes=(1, 0), out_axes=1)
        return vmap(lambda x, y: inner(x, y).sum(0), in_axes=(1, None), out_axes=-1)
    close(make(hnp, hf.vmap)(a, b), make(jnp, jax.vmap)(a, b))


# ---------------------------------------------------------------- custom rules under vmap

def _custom_vjp(lib, ad_lib):
    @ad_lib.custom_vjp
    def f(x, y):
        return lib.sin(x) * y

    def fwd(x, y):  # (hf.custom_vjp's fwd cannot call f itself yet: it recurses)
        return lib.sin(x) * y, (lib.cos(x), y, lib.sin(x))

    def bwd(res, g):  # (deliberately not the true derivative: the rule must be the one used)
        cos_x, y, sin_x = res
        return (2.0 * g * cos_x * y, 3.0 * g * sin_x)
    f.defvjp(fwd, bwd)
    return f


def _custom_jvp(lib, ad_lib):
    @ad_lib.custom_jvp
    def f(x):
        return lib.log1p(lib.exp(x))

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), 2.0 * t * lib.tanh(x)
    return f


def test_custom_vjp_under_vmap_keeps_its_rule():
    f_hf, f_jax = _custom_vjp(hnp, hf), _custom_vjp(jnp, jax)
    ys = rng.standard_normal(D).astype(np.float32)
    close(hf.vmap(f_hf, in_axes=(0, None))(XS, ys), jax.jit(jax.vmap(f_jax, in_axes=(0, None)))(XS, ys))

    def total(f, vmap, np_):  # an unbatched argument's cotangent is summed over the batch
        return lambda x, y: vmap(f, in_axes=(0, None))(x, y).sum()
    close(hf.grad(total(f_hf, hf.vmap, hnp), argnums=(0, 1))(XS, ys),
          jax.jit(jax.grad(total(f_jax, jax.vmap, jnp), argnums=(0, 1)))(XS, ys))
    close(hf.vmap(hf.grad(lambda x, y: f_hf(x, y).sum(), argnums=(0, 1)), in_axes=(0, None))(XS, ys),
          jax.jit(jax.vmap(jax.grad(lambda x, y: f_jax(x, y).sum(), argnums=(0, 1)), in_axes=(0, None)))(XS, ys))


def test_the_batched_call_of_a_custom_rule_is_a_custom_rule_call():
    text = hf.trace(hf.vmap(_custom_vjp(hnp, hf), in_axes=(0, None)), XS, XS[0]).text
    assert "hloforge.custom_rule" in text and "vmap_f" in text


def test_custom_jvp_under_vmap_keeps_its_rule():
    f_hf, f_jax = _custom_jvp(hnp, hf), _custom_jvp(jnp, jax)
    close(hf.vmap(f_hf)(XS), jax.jit(jax.vmap(f_jax))(XS))
    close(hf.grad(lambda x: hf.vmap(f_hf)(x).sum())(XS), jax.jit(jax.grad(lambda x: jax.vmap(f_jax)(x).sum()))(XS))
    t = np.ones((B, D), np.float32)
    close(hf.jvp(hf.vmap(f_hf), (XS,), (t,)), jax.jvp(jax.vmap(f_jax), (XS,), (t,)))
    close(hf.vmap(hf.grad(lambda x: f_hf(x).sum()))(XS), jax.jit(jax.vmap(jax.grad(lambda x: f_jax(x).sum())))(XS))


def test_from_jax_under_vmap():
    def relu_dot(x, w):
        return jax.nn.relu(x @ w)
    f = hf.from_jax(relu_dot)
    close(hf.vmap(f, in_axes=(0, None))(XS, W1), jax.jit(jax.vmap(relu_dot, in_axes=(0, None)))(XS, W1))
    close(hf.grad(lambda w: hf.vmap(f, in_axes=(0, None))(XS, w).sum())(W1),
          jax.jit(jax.grad(lambda w: jax.vmap(relu_dot, in_axes=(0, None))(XS, w).sum()))(W1))
    close(hf.vmap(hf.grad(lambda x, w: f(x, w).sum()), in_axes=(0, None))(XS, W1),
          jax.jit(jax.vmap(jax.grad(lambda x, w: relu_dot(x, w).sum()), in_axes=(0, None)))(XS, W1))


# ---------------------------------------------------------------- hloforge.lax control flow

def _fori(lax_, np_):
    return lambda x: lax_.fori_loop(0, 3, lambda i, c: c * 0.5 + np_.sin(c), x)


def _while(lax_, np_):  # batched predicate: each example stops on its own
    return lambda x: lax_.while_loop(lambda c: c[0] < 4.0, lambda c: (c[0] + np_.abs(c[1]).sum() + 0.5,
                                                                        c[1] * 1.5), (x.sum(), x))


def _cond(lax_, np_):  # batched predicate
    return lambda x: lax_.cond(x.sum() > 0, lambda v: np_.sin(v), lambda v: np_.cos(v) * 2.0, x)


def _switch(lax_, np_):  # batched index
    return lambda x, i: lax_.switch(i, [lambda v: v + 1.0, lambda v: v * v, lambda v: -v], x)


def _scan(lax_, np_):
    return lambda x: lax_.scan(lambda c, xi: (c + xi, c * xi), np_.zeros((), np.float32), x)


@needs_control_flow
@pytest.mark.parametrize("make", [_fori, _while, _cond, _scan], ids=["fori_loop", "while_loop", "cond", "scan"])
def test_control_flow_under_vmap(make):
    close(hf.vmap(make(hlax, hnp))(XS), jax.jit(jax.vmap(make(jax.lax, jnp)))(XS))


@needs_control_flow
def test_switch_with_a_batched_index_and_grad():
    idx = np.array([0, 1, 2, 1], np.int32)
    close(hf.vmap(_switch(hlax, hnp))(XS, idx), jax.jit(jax.vmap(_switch(jax.lax, jnp)))(XS, idx))
    close(hf.vmap(hf.grad(lambda x, i: _switch(hlax, hnp)(x, i).sum()))(XS, idx),
          jax.jit(jax.vmap(jax.grad(lambda x, i: _switch(jax.lax, jnp)(x, i).sum())))(XS, idx))


@needs_control_flow
def test_cond_with_an_unbatched_predicate_and_fori_loop_with_a_batched_carry_under_grad():
    def f(lax_, np_):
        return lambda x, flag: lax_.cond(flag, lambda v: _fori(lax_, np_)(v).sum(), lambda v: v.sum(), x)
    close(hf.vmap(hf.grad(f(hlax, hnp)), in_axes=(0, None))(XS, True),
          jax.jit(jax.vmap(jax.grad(f(jax.lax, jnp)), in_axes=(0, None)))(XS, True))


# ---------------------------------------------------------------- hloforge.random over split keys

SAMPLERS = {
    "uniform": lambda r: lambda k: r.uniform(k, (3,)),
    "normal": lambda r: lambda k: r.normal(k, (2, 2)),
    "bernoulli": lambda r: lambda k: r.bernoulli(k, 0.3, (5,)),
    "randint": lambda r: lambda k: r.randint(k, (4,), 0, 10),
    "bits": lambda r: lambda k: r.bits(k, (3,)),
    "split_then_normal": lambda r: lambda k: r.normal(r.split(k)[1], (3,)),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_random_over_split_keys_gives_jax_streams_bit_for_bit(name):
    keys = np.asarray(jax.random.split(jax.random.PRNGKey(7), B))
    got = np.asarray(hf.vmap(SAMPLERS[name](hrandom))(keys))
    want = np.asarray(jax.vmap(SAMPLERS[name](jax.random))(keys))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_random_keys_folded_inside_vmap_and_batched_parameters():
    keys = np.asarray(jax.random.split(jax.random.PRNGKey(3), B))
    offsets = np.arange(B, dtype=np.int32)

    def sample(r):
        return lambda k, m: r.randint(r.fold_in(k, 5), (3,), 0, 10) + m
    np.testing.assert_array_equal(np.asarray(hf.vmap(sample(hrandom))(keys, offsets)),
                                  np.asarray(jax.vmap(sample(jax.random))(keys, offsets)))

    def shifted(r):  # (normal's floats are within an ulp of jax's, docs/random.md)
        return lambda k, m: r.normal(k, (3,)) + m
    means = offsets.astype(np.float32)
    np.testing.assert_allclose(np.asarray(hf.vmap(shifted(hrandom))(keys, means)),
                               np.asarray(jax.vmap(shifted(jax.random))(keys, means)), rtol=3e-7, atol=0)
