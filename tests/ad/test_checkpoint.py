"""hf.checkpoint (hf.remat), hf.checkpoint_policies, hf.checkpoint_name: jax.checkpoint's gradients,
and fewer values crossing from the forward to the backward pass, as the policy says."""
import re

import jax
import jax.ad_checkpoint
import jax.numpy as jnp
import numpy as np
import pytest

from ad_helpers import close
import hloforge as hf
import hloforge.lax as hlax
import hloforge.numpy as hnp

rng = np.random.default_rng(0)
W1 = (rng.standard_normal((4, 8)) * 0.5).astype(np.float32)
W2 = (rng.standard_normal((8, 3)) * 0.5).astype(np.float32)
X = rng.standard_normal((5, 4)).astype(np.float32)
XS = rng.standard_normal((6, 4)).astype(np.float32)
W = (rng.standard_normal((4, 4)) * 0.5).astype(np.float32)

CP, JCP = hf.checkpoint_policies, jax.checkpoint_policies
# name -> (hloforge's policy, jax's)
POLICIES = {
    "default": (None, None),
    "everything": (CP.everything_saveable, JCP.everything_saveable),
    "nothing": (CP.nothing_saveable, JCP.nothing_saveable),
    "dots": (CP.dots_saveable, JCP.dots_saveable),
    "dots_no_batch": (CP.dots_with_no_batch_dims_saveable, JCP.dots_with_no_batch_dims_saveable),
    "only_a": (CP.save_only_these_names("a"), JCP.save_only_these_names("a")),
    "names_but_a": (CP.save_any_names_but_these("a"), JCP.save_any_names_but_these("a")),
    "both": (CP.save_from_both_policies(CP.dots_saveable, CP.save_only_these_names("b")), JCP.everything_saveable),
}


def mlp(xp, checkpoint, name, policy, prevent_cse=True):
    def layer(w, h):
        a = name(h @ w, "a")
        return xp.tanh(name(xp.sin(a) + a, "b"))

    if checkpoint is not None:
        layer = checkpoint(layer, policy=policy, prevent_cse=prevent_cse)
    return lambda w1, w2, x: xp.sum(layer(w2, layer(w1, x)) ** 2)


def hf_mlp(policy, prevent_cse=True):
    return mlp(hnp, hf.checkpoint, hf.checkpoint_name, policy, prevent_cse)


def jax_mlp(policy):
    return mlp(jnp, jax.checkpoint, jax.ad_checkpoint.checkpoint_name, policy)


def test_mlp_gradients_equal_jax_checkpoint_for_every_policy():
    # (one program each side: the gradients of all policies together)
    def together(make, grad, side):
        return lambda *a: [grad(make(p[side]), argnums=(0, 1, 2))(*a) for p in POLICIES.values()]
    got = hf.jit(together(hf_mlp, hf.grad, 0))(W1, W2, X)
    want = jax.jit(together(jax_mlp, jax.grad, 1))(W1, W2, X)
    plain = jax.jit(jax.grad(mlp(jnp, None, lambda v, n: v, None), argnums=(0, 1, 2)))(W1, W2, X)
    for g, w in zip(got, want):
        close(g, w)
        close(g, plain)


def _residuals(text) -> int:
    """Values the checkpointed calls save beyond their outputs (each layer has one output)."""
    counts = [int(n or 1) for n in re.findall(r"%\w+(?::(\d+))? = call @hloforge_checkpoint_", text)]
    return sum(counts) - len(counts)


def _pinned(text) -> int:
    """Forward values the backward sweeps read (the operands of their optimization barriers)."""
    return sum(len(m.split(",")) for m in re.findall(r"stablehlo\.optimization_barrier (.*?) :", text))


def _optimized(fn):
    m = hf.trace(hf.grad(fn, argnums=(0, 1)), W1, W2, X)
    text = m.text
    m.optimize()
    return text, m.text


@pytest.fixture(scope="module")
def plain_counts():
    _, text = _optimized(mlp(hnp, None, lambda v, n: v, None))
    return {op: text.count(f"stablehlo.{op} ") for op in ("dot_general", "tanh", "sine")}


@pytest.mark.parametrize("policy, residuals, recomputed", [
    ("nothing", 0, {"dot_general": 2, "tanh": 2, "sine": 2}),
    ("default", 0, {"dot_general": 2, "tanh": 2, "sine": 2}),
    ("dots", 2, {"dot_general": 0, "tanh": 2, "sine": 2}),
    ("dots_no_batch", 2, {"dot_general": 0, "tanh": 2, "sine": 2}),
    ("only_a", 2, {"dot_general": 0, "tanh": 2, "sine": 2}),
    ("both", 4, {"dot_general": 0, "tanh": 2, "sine": 0}),
    ("everything", None, {"dot_general": 0, "tanh": 0, "sine": 0}),
])
def test_the_policy_decides_what_is_saved_and_what_is_recomputed(plain_counts, policy, residuals, recomputed):
    text, optimized = _optimized(hf_mlp(POLICIES[policy][0]))
    if residuals is not None:
        assert _residuals(text) == residuals
    else:  # (every op of each layer: dot_general, sine, the checkpoint_name markers, add, tanh)
        assert _residuals(text) >= 10
    for op, extra in recomputed.items():  # (the optimized gradient: each layer's recomputed ops once more)
        assert optimized.count(f"stablehlo.{op} ") == plain_counts[op] + extra, op
    assert optimized.count("stablehlo.optimization_barrier") == 2


def test_fewer_values_cross_from_forward_to_backward():
    crossing = {p: _pinned(_optimized(hf_mlp(POLICIES[p][0]))[0]) for p in ("nothing", "dots", "everything")}
    # nothing: the layers' inputs (w2, h1; w1 is not needed for layer 1: x and h1's cotangent are)
    assert crossing["nothing"] < crossing["dots"] <= crossing["everything"], crossing
    no_barrier, _ = _optimized(hf_mlp(CP.nothing_saveable, prevent_cse=False))
    assert "optimization_barrier" not in no_barrier and _residuals(no_barrier) == 0


def test_jax_policies_are_translated():
    for name in ("everything", "nothing", "dots", "dots_no_batch", "only_a", "names_but_a"):
        ours = _residuals(_optimized(hf_mlp(POLICIES[name][0]))[0])
        theirs = _residuals(_optimized(hf_mlp(POLICIES[name][1]))[0])
        assert ours == theirs, name


def _scan_loss(xp, lax, checkpoint, **options):
    def loss(w, xs):
        body = checkpoint(lambda c, x: (xp.tanh(c @ w + x), xp.sum(xp.sin(c))), **options)
        c, ys = lax.scan(body, xp.zeros(4, np.float32), xs)
        return xp.sum(c ** 2) + xp.sum(ys)
    return loss


def test_scan_body_gradients_equal_jax_checkpoint():
    def both(xp, lax, checkpoint, grad, policies):
        return lambda w, xs: [grad(_scan_loss(xp, lax, checkpoint, policy=p, prevent_cse=cse), argnums=(0, 1))(w, xs)
                              for p, cse in zip(policies, (True, False))]
    got = hf.jit(both(hnp, hlax, hf.checkpoint, hf.grad, (None, CP.dots_saveable)))(W, XS)
    want = jax.jit(both(jnp, jax.lax, jax.checkpoint, jax.grad, (None, JCP.dots_saveable)))(W, XS)
    close(got, want)


def _f(xp, checkpoint, policy):
    inner = checkpoint(lambda y: (xp.sin(y) * y, y, xp.argmax(y), 2.0), policy=policy)  # (an input, an int, a constant)
    outer = checkpoint(lambda y: inner(xp.cos(y)))  # (nested)

    def f(y):
        a, b, _, c = outer(y)
        return xp.sum(a * b) * c
    return f


def test_forward_mode_second_order_vmap_and_nesting():
    def all_of(xp, checkpoint, policy, grad, jvp, hessian, vmap):
        f = _f(xp, checkpoint, policy)
        return lambda x, xs: (jvp(f, (x,), (xp.ones_like(x),))[1], hessian(f)(x), vmap(grad(f))(xs),
                              grad(lambda v: xp.sum(vmap(f)(v)))(xs))
    got = hf.jit(all_of(hnp, hf.checkpoint, CP.everything_saveable, hf.grad, hf.jvp, hf.hessian, hf.vmap))(XS[0], XS)
    want = jax.jit(all_of(jnp, jax.checkpoint, JCP.everything_saveable, jax.grad, jax.jvp, jax.hessian, jax.vmap))(
        XS[0], XS)
    close(got, want)


def test_module_vjp_of_a_traced_module_and_closures():
    def f(w, x):  # (the checkpointed body closes over w, a Tensor of the trace)
        return hnp.sum(hf.checkpoint(lambda h: hnp.tanh(h @ w), policy=CP.dots_saveable)(x))

    m = hf.trace(f, W, XS)
    out = m.vjp().compile()(W, XS, np.float32(1))
    want = jax.jit(jax.value_and_grad(lambda w, x: jnp.sum(jnp.tanh(x @ w)), argnums=(0, 1)))(W, XS)
    close((out[0], out[1], out[2]), (want[0], *want[1]))
    assert "call @hloforge_checkpoint_" in m.vjp().text  # (the copy is a checkpointed call again)


def test_eager_calls_static_argnums_and_keywords():
    power = hf.checkpoint(lambda x, p, *, scale: scale * x ** p, static_argnums=(1,))
    close(power(np.float32(3), 2, scale=np.float32(2)), np.float32(18))
    close(power(np.float32(3), 3, scale=np.float32(1)), np.float32(27))
    close(hf.grad(lambda x: power(x, 3, scale=np.float32(1)))(np.float32(2)), np.float32(12))
    assert hf.remat is hf.checkpoint
    assert power.__name__ == "<lambda>"


def test_optimize_leaves_the_forward_program_unchanged():
    plain = hf.jit(mlp(hnp, None, lambda v, n: v, None)).lower(W1, W2, X)
    ck = hf.jit(hf_mlp(CP.everything_saveable)).lower(W1, W2, X)
    plain.optimize()
    ck.optimize()
    for op in ("dot_general", "tanh", "sine", "call", "optimization_barrier"):
        assert plain.text.count(op) == ck.text.count(op), op


def test_errors():
    with pytest.raises(TypeError, match="hloforge.checkpoint: fun must be callable, got 3"):
        hf.checkpoint(3)
    with pytest.raises(TypeError, match=r"policy must be None or a callable .* got 'dots'"):
        hf.checkpoint(hnp.sin, policy="dots")
    with pytest.raises(TypeError, match="static_argnums must be an int or a tuple of ints, got 'x'"):
        hf.checkpoint(hnp.sin, static_argnums="x")
    with pytest.raises(TypeError, match=r"prevent_cse must be a bool, got \(True,\)"):
        hf.checkpoint(hnp.sin, prevent_cse=(True,))
    with pytest.raises(ValueError, match=r"static_argnums \(2,\) must lie in .* has 1 positional argument"):
        hf.checkpoint(hnp.sin, static_argnums=2)(X)
    with pytest.raises(NotImplementedError, match="offload_dot_with_no_batch_dims: hloforge does not offload"):
        CP.offload_dot_with_no_batch_dims("device", "pinned_host")
    with pytest.raises(NotImplementedError, match="save_and_offload_only_these_names: hloforge does not offload"):
        CP.save_and_offload_only_these_names(names_which_can_be_saved=["a"], names_which_can_be_offloaded=["b"],
                                             offload_src="device", offload_dst="pinned_host")
    with pytest.raises(NotImplementedError, match="jax.checkpoint_policies.offload_dot_with_no_batch_dims"):
        hf.checkpoint(hnp.sin, policy=JCP.offload_dot_with_no_batch_dims("device", "pinned_host"))
    with pytest.raises(TypeError, match="returned 1 for stablehlo.sine; it must return a bool"):
        hf.trace(hf.checkpoint(hnp.sin, policy=lambda op, *a, **k: 1), X)
    with pytest.raises(TypeError, match=r"the policy .* failed on stablehlo.sine \(AttributeError"):
        hf.trace(hf.checkpoint(hnp.sin, policy=JCP.save_from_both_policies(JCP.dots_saveable, JCP.nothing_saveable)), X)
    with pytest.raises(ValueError, match="save_from_both_policies: the policies must return bools, got 1"):
        hf.trace(hf.checkpoint(hnp.sin, policy=CP.save_from_both_policies(lambda *a, **k: 1, CP.nothing_saveable)), X)
    with pytest.raises(TypeError, match="hloforge.checkpoint_name: name must be a str, got 3"):
        hf.checkpoint_name(X, 3)
    with pytest.raises(TypeError, match="save_only_these_names: names must be str, got 1"):
        CP.save_only_these_names(1)
    with pytest.raises(TypeError, match=r"hloforge.checkpoint\(sin\): argument leaf 0"):
        hf.trace(lambda x: hf.checkpoint(hnp.sin)("text"), X)


def test_dots_with_no_batch_dims_saves_only_unbatched_dots():
    def f(policy):
        layer = hf.checkpoint(lambda a, b: hnp.sum(hnp.tanh(hnp.einsum("bij,bjk->bik", a, b) @ b[0])), policy=policy)
        return hf.trace(hf.grad(layer), np.ones((2, 3, 3), np.float32), np.ones((2, 3, 3), np.float32)).text

    assert _residuals(f(CP.dots_saveable)) == 2  # (the batched dot and the plain one)
    assert _residuals(f(CP.dots_with_no_batch_dims_saveable)) == 1
    assert _residuals(f(JCP.dots_with_no_batch_dims_saveable)) == 1
