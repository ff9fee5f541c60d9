"""AD of control flow (cond, switch, while_loop, fori_loop, scan), indexing (gather, scatter,
dynamic_update_slice), the structural ops and the collectives: against jax.vjp/jax.jvp and
central differences in f64. Cases are batched into one function each (compile time dominates); jax's
references run under one jax.jit compiled with CHEAP_COMPILE (every comparison has a tolerance)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ad_helpers import check_against_jax_and_fd, check_against_jax_cheap, close, jax_run
import hloforge as hf
import hloforge.numpy as hnp
from hloforge import lax, ops

rng = np.random.default_rng(0)
X = rng.standard_normal(5)
W = rng.standard_normal(5)


def branches_and_loops(L, xp):
    def f(x, w):
        a = L.cond(xp.sum(x) > 0, lambda v: xp.sin(v) * w, lambda v: -v ** 2, x)
        b = L.cond(xp.sum(x) < 0, lambda v: xp.sin(v) * w, lambda v: -v ** 2, x)
        c = L.switch(1, [lambda v: v, lambda v: xp.exp(v) * w[0], lambda v: v * 3], x)
        d = L.fori_loop(0, 4, lambda i, v: xp.sin(v) * w + v, x)
        carry, ys = L.scan(lambda c, xi: (c * xp.cos(xi) + w[0], c * xi), np.float64(0.5), x)
        carry2, ys2 = L.scan(lambda c, xi: (xp.sin(c) + xi, c ** 2), np.float64(0.1), x, reverse=True)

        def outer(i, v):  # a loop in a loop, a cond in a loop
            v = L.fori_loop(0, 2, lambda j, u: u * w + xp.sin(u), v)
            return L.cond(xp.sum(v) > 0, lambda q: q * 0.5, lambda q: q + w, v)
        e = L.fori_loop(0, 3, outer, x)
        return a, b, c, d, carry, ys, carry2, ys2, e
    return f


def test_control_flow_against_jax_and_finite_differences():
    check_against_jax_and_fd(branches_and_loops(lax, hnp), branches_and_loops(jax.lax, jnp), X, W)


def test_grad_through_fori_loop_and_scan():
    def loss(xp, L):
        def f(x):
            y = L.fori_loop(1, 7, lambda i, v: v * xp.tanh(v) + 0.1, x)  # (start 1, step 1)
            _, ys = L.scan(lambda c, r: (c + r, xp.sin(c * r)), np.float64(0.0), y, reverse=True)
            return xp.sum(ys ** 2)
        return f
    with jax.enable_x64(True):
        want = jax_run(jax.grad(loss(jnp, jax.lax)), X)
    close(hf.grad(loss(hnp, lax))(X), want)
    close(hf.jit(hf.grad(loss(hnp, lax)))(X), want)


def while_fn(L, xp):
    return lambda x: L.while_loop(lambda c: xp.sum(c[1] ** 2) < 50.0,
                                  lambda c: (c[0] + 1, xp.sin(c[1]) * 2 + c[1]), (0, x))[1]


def test_while_loop_jvp_and_the_reverse_mode_error():
    t = rng.standard_normal(5)
    with jax.enable_x64(True):
        want = jax_run(lambda x, t: jax.jvp(while_fn(jax.lax, jnp), (x,), (t,)), X, t)
    close(hf.jvp(while_fn(lax, hnp), (X,), (t,)), want)
    with pytest.raises(NotImplementedError, match=r"reverse-mode differentiation of stablehlo.while needs a loop "
                                                  r"with a static trip count: use hloforge.lax.fori_loop .* "
                                                  r"or hloforge.lax.scan"):
        hf.grad(lambda x: hnp.sum(while_fn(lax, hnp)(x)))(X)
    with pytest.raises(NotImplementedError, match="static trip count"):  # fori_loop with a traced bound
        hf.grad(lambda x, n: hnp.sum(lax.fori_loop(0, n, lambda i, v: v * 2, x)))(X, np.int32(3))
    x32, t32 = X.astype(np.float32), t.astype(np.float32)  # a parsed jax while_loop: jvp yes, vjp no
    m = hf.Module.parse(jax.jit(while_fn(jax.lax, jnp)).lower(x32).as_text())
    want32 = jax_run(lambda x, t: jax.jvp(while_fn(jax.lax, jnp), (x,), (t,))[1], x32, t32)
    close(m.jvp().compile()(x32, t32)[1], np.asarray(want32), rtol=1e-4)
    with pytest.raises(NotImplementedError, match="static trip count"):
        m.vjp()


def _hf_at(x, i, kind, u):
    return x.at[i].multiply(u, unique_indices=True) if kind == "mul" else getattr(x.at[i], kind)(u)


def _jax_at(x, i, kind, u):
    return x.at[i].mul(u, unique_indices=True) if kind == "mul" else getattr(x.at[i], kind)(u)


def indexing(xp, at, L):
    def f(x, u):
        i = np.array([0, 3, 3, 1])
        m = x.reshape(5, 1) * u.reshape(1, 5)
        return (x[i] ** 2, m[np.array([1, 4])], m[np.array([0, 2]), np.array([4, 1])],
                at(x, i, "set", u[:4]), at(x, i, "add", u[:4]),
                at(m, (np.array([1, 1]), np.array([2, 2])), "add", u[:2]),
                at(x, i, "max", u[:4]), at(x, i, "min", u[:4]), at(x, np.array([0, 2]), "mul", u[:2]),
                L.dynamic_update_slice(x, u[:2] * 3, (2,)) * x, L.dynamic_update_slice(m, m[:2, :2] * u[0], (4, 1)))
    return f


def test_gather_scatter_dynamic_update_slice():
    check_against_jax_and_fd(indexing(hnp, _hf_at, lax), indexing(jnp, _jax_at, jax.lax), X, W)


def test_scatter_ties_and_out_of_bounds():
    """max with ties between the operand and an update splits the cotangent as jax does; an update
    whose window falls outside is dropped and gets a zero cotangent."""
    x = np.array([1.0, 2.0, 3.0, 4.0])
    u = np.array([2.0, 5.0, 0.5])

    def f(at):
        return lambda x, u: at(x, np.array([1, 2, 9]), "max", u) * 1.5
    check_against_jax_cheap(f(_hf_at), f(lambda x, i, k, u: getattr(x.at[i], k)(u, mode="drop")), x, u)


@settings(max_examples=4, deadline=None)
@given(st.lists(st.integers(-2, 7), min_size=1, max_size=5), st.sampled_from(["set", "add", "max", "min"]))
def test_fuzz_gather_scatter_indices(index, kind):
    """Repeated, negative (numpy wrap-around) and out-of-range indices (dropped by scatter,
    clamped by x[i] as in jax)."""
    i = np.asarray(index)
    u = rng.standard_normal(len(index))

    def f(at):
        return lambda x, u: (at(x, i, kind, u) * x, x[np.clip(i, -5, 4)] * u)
    check_against_jax_cheap(f(_hf_at), f(lambda x, i, k, u: getattr(x.at[i], k)(u, mode="drop")), X, u)


def test_module_vjp_jvp_of_jax_control_flow_and_indexing():
    x = rng.standard_normal((4, 5)).astype(np.float32)

    def f(x):
        y = jax.lax.cond(x[0, 0] > 0, lambda v: jnp.sin(v) * x[1, 1], lambda v: v * 2, x)
        c, ys = jax.lax.scan(lambda c, r: (c * jnp.cos(r) + 1, c * r), jnp.ones(5, jnp.float32), y)
        z = jax.lax.fori_loop(0, 3, lambda i, v: v * 0.9 + jnp.sin(v), c)
        k = jax.lax.switch(jnp.argmax(x[:, 0]), [lambda v: v, lambda v: v * 3, jnp.cos], z)
        return (jnp.sum(ys ** 2) + jnp.sum(k) + jnp.sum(x[jnp.array([0, 2, 2])] ** 3)
                + jnp.sum(x.at[jnp.array([1, 1])].set(2.0) * x))
    m = hf.Module.parse(jax.jit(f).lower(x).as_text())
    t = rng.standard_normal((4, 5)).astype(np.float32)
    want_grad, want_jvp = jax_run(lambda x, t: (jax.grad(f)(x), jax.jvp(f, (x,), (t,))[1]), x, t)
    close(m.vjp().compile()(x, np.float32(1.0))[1], np.asarray(want_grad), rtol=1e-4)
    close(m.jvp().compile()(x, t)[1], np.asarray(want_jvp), rtol=1e-4)


def test_barrier_map_composite():
    def f(x, w):
        a, b = ops.optimization_barrier([hnp.sin(x), w])
        c = ops.map([x, w], lambda p, q: ops.multiply(ops.sin(p), ops.exp(q)))
        d, = ops.composite([x, w], "my.mul_tanh", lambda p, q: ops.tanh(ops.multiply(p, q)))
        return a * b, c, d

    def jf(x, w):
        return jnp.sin(x) * w, jnp.sin(x) * jnp.exp(w), jnp.tanh(x * w)
    check_against_jax_and_fd(f, jf, X, W)
    grad = hf.trace(lambda x, w: hf.grad(lambda x: hnp.sum(f(x, w)[0]))(x), X, W)
    assert grad.op_counts().get("stablehlo.optimization_barrier", 0) == 2  # the primal's and the cotangents'


def test_reemitting_a_loop_that_reads_a_value_of_its_function():
    """Module.vjp re-emits a composite's decomposition into a new module: a while body there that
    reads a value of the decomposition (not a loop operand) must read the re-emitted one."""
    def decomposition(x):
        c = ops.multiply(x, x)
        _, out = ops.while_([ops.constant(np.int32(0)), x], lambda i, v: ops.compare(i, ops.constant(np.int32(3)), "LT"),
                            lambda i, v: (ops.add(i, ops.constant(np.int32(1))), ops.add(v, c)))
        return out

    m = hf.trace(lambda x: ops.composite([x], "my.loop", decomposition)[0], X)
    for module in (m, hf.Module.parse(m.text)):
        out, ct = module.vjp().compile()(X, np.ones_like(X))
        close(out, X + 3 * X * X, 1e-12)
        close(ct, 1 + 6 * X, 1e-12)


def test_custom_call_names_its_target():
    def f(x):
        return ops.custom_call([x], "my_kernel", [((5,), np.float64)])[0]
    with pytest.raises(NotImplementedError, match=r"cannot differentiate stablehlo.custom_call @my_kernel: .*"
                                                  r"hf.custom_vjp"):
        hf.grad(lambda x: hnp.sum(f(x)))(X)
    with pytest.raises(NotImplementedError, match="custom_call @my_kernel: .* no jvp rule"):
        hf.jvp(f, (X,), (X,))


G = [list(range(8))]
CH = dict(channel_handle=(1, 1), use_global_device_ids=True)


def test_collective_rules_in_ir():
    """Transposes: all_reduce(add) -> all_reduce, all_gather <-> reduce_scatter, all_to_all -> the
    inverse all_to_all, collective_permute -> the inverse pairs; ids have no tangents."""
    pairs = [(i, (i + 1) % 8) for i in range(8)]

    def f(x):
        ids = ops.convert(ops.partition_id(), np.float32)
        return (ops.all_reduce(x, G, **CH), ops.all_gather(x, 1, G, **CH), ops.reduce_scatter(x, 0, G, **CH),
                ops.all_to_all(x, 0, 1, 8, G, channel_handle=(1, 1)),
                ops.collective_permute(x, pairs, channel_handle=(1, 1)),
                ops.collective_broadcast(x, [[2, 0, 1, 3, 4, 5, 6, 7]], channel_handle=(1, 1)),
                ops.multiply(x, ops.broadcast_in_dim(ids, x.shape, ())))

    x = hf.ShapeDtype((8, 2), np.float32)
    vjp = hf.trace(lambda x, *cts: hf.vjp(f, x)[1](cts), x, *[hf.ShapeDtype(s.shape, s.dtype) for s in
                                                                 hf.trace(f, x).signature[1]])
    counts = vjp.op_counts()
    text = vjp.text
    assert counts["stablehlo.all_reduce"] == 2 + 1  # primal, its transpose, collective_broadcast's
    assert counts["stablehlo.reduce_scatter"] == 2 and counts["stablehlo.all_gather"] == 2
    assert counts["stablehlo.all_to_all"] == 2 and "split_dimension = 1" in text and "concat_dimension = 0" in text
    assert "[1, 0], [2, 1], [3, 2], [4, 3], [5, 4], [6, 5], [7, 6], [0, 7]" in text.replace("\n", "")
    jvp = hf.trace(lambda x, t: hf.jvp(f, (x,), (t,))[1], x, x)
    assert jvp.op_counts()["stablehlo.collective_permute"] == 2


def test_second_order_through_loops_and_counted_down_while():
    """Forward-over-reverse and reverse-over-reverse (the backward loop counts down: it is a
    counted loop too), and a hand-written ``while i > 0: i -= 2`` loop."""
    def f(L, xp):
        def g(x):
            y = L.fori_loop(0, 3, lambda i, v: xp.sin(v) * v + 0.3 * v, x)
            _, ys = L.scan(lambda c, r: (c * r, c + r), np.float64(1.0), y)
            return xp.sum(ys ** 2) + xp.sum(y)
        return g
    x = X[:3]
    with jax.enable_x64(True):
        want, want2 = jax_run(lambda x: (jax.hessian(f(jax.lax, jnp))(x),
                                         jax.grad(lambda x: jnp.sum(jax.grad(f(jax.lax, jnp))(x) ** 2))(x)), x)
    got, got2 = hf.jit(lambda x: (hf.hessian(f(lax, hnp))(x),  # (one compile for both)
                                  hf.grad(lambda x: hnp.sum(hf.grad(f(lax, hnp))(x) ** 2))(x)))(x)
    close(got, want)
    close(got2, want2)

    def down(x):  # i = 7, 5, 3, 1: four iterations of x -> sin(x) * x
        _, y = ops.while_([ops.constant(np.int32(7)), x], lambda i, v: ops.compare(i, np.int32(0), "GT"),
                          lambda i, v: (ops.subtract(i, np.int32(2)), ops.multiply(ops.sin(v), v)))
        return y

    def jdown(x):
        for _ in range(4):
            x = jnp.sin(x) * x
        return x
    check_against_jax_cheap(down, jdown, x)
