"""Reverse mode of loops that stack a value per step (lax.scan's ys, fori_loop's dynamic_update_slice
at its index), issue 51: the backward loop reads each step's cotangent row in place, never rewriting
a carried [n, ...] buffer that it also reads (XLA would copy the buffer twice per iteration: a
gradient quadratic in the number of steps)."""
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ad_helpers import close, jax_run
import hloforge as hf
import hloforge.numpy as hnp
from hloforge import lax

N = 6
X = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)


def scan_fn(L, xp, reverse=False):
    return lambda x: L.scan(lambda c, _: (xp.sin(c) * .99,) * 2, x, None, length=N, reverse=reverse)[1]


def fori_fn(L, xp):
    def f(x):
        def body(i, cb):
            c = xp.sin(cb[0]) * .99
            return c, L.dynamic_update_slice(cb[1], c[None], (i, 0, 0))
        return L.fori_loop(0, N, body, (x, xp.zeros((N, *x.shape), x.dtype)))[1]
    return f


def of_jax(fn):
    return hf.Module.parse(jax.jit(fn).lower(X).as_text())


def of_hloforge(fn):
    return hf.trace(fn, hf.ShapeDtype(X.shape, X.dtype))


CASES = {
    "jax scan": (lambda: of_jax(scan_fn(jax.lax, jnp)), scan_fn(jax.lax, jnp)),
    "jax reverse scan": (lambda: of_jax(scan_fn(jax.lax, jnp, True)), scan_fn(jax.lax, jnp, True)),
    "jax fori_loop": (lambda: of_jax(fori_fn(jax.lax, jnp)), fori_fn(jax.lax, jnp)),
    "hloforge scan": (lambda: of_hloforge(scan_fn(lax, hnp)), scan_fn(jax.lax, jnp)),
    "hloforge reverse scan": (lambda: of_hloforge(scan_fn(lax, hnp, True)), scan_fn(jax.lax, jnp, True)),
    "hloforge fori_loop": (lambda: of_hloforge(fori_fn(lax, hnp)), fori_fn(jax.lax, jnp)),
}


def rewritten_buffers_read_in_loops(module) -> list:
    """The carries of while bodies that are read by a dynamic_slice and returned rewritten: XLA
    keeps such a buffer alive across the update and copies it per iteration."""
    found = []
    for op in module.walk():
        if op.name != "stablehlo.while":
            continue
        body = op.regions[1].blocks[0]
        returned = list(body.operations)[-1].operands
        for j, arg in enumerate(body.arguments):
            sliced = any(u.owner.name == "stablehlo.dynamic_slice" and u.operand_number == 0 for u in arg.uses)
            if sliced and returned[j] != arg:
                found.append(str(arg.type))
    return found


@pytest.mark.parametrize("name", list(CASES))
def test_backward_loop_reads_stacked_cotangents_in_place(name):
    make, jax_fn = CASES[name]
    ct = np.random.default_rng(1).standard_normal((N, *X.shape)).astype(np.float32)
    want = jax_run(lambda x, ct: jax.vjp(jax_fn, x)[1](ct)[0], X, ct)
    for optimize_first in (False, True):
        module = make()
        if optimize_first:
            module.optimize()
        vjp = module.vjp()
        assert rewritten_buffers_read_in_loops(vjp) == [], (name, vjp.text)
        close(vjp.compile()(X, ct)[1], np.asarray(want))
        vjp.optimize()
        assert rewritten_buffers_read_in_loops(vjp) == [], (name, vjp.text)


def test_stacked_cotangent_keeps_zeroing_where_the_initial_buffer_needs_one():
    """The initial stacked buffer is an input: its cotangent is the incoming one with every written row
    zeroed, so the backward loop still rewrites the buffer (values against jax)."""
    def f(L, x, buf):
        def body(i, cb):
            c = jnp.sin(cb[0]) * .99
            return c, L.dynamic_update_slice(cb[1], c[None], (i, 0, 0))
        return L.fori_loop(0, N - 2, body, (x, buf))[1]
    buf = np.random.default_rng(2).standard_normal((N, *X.shape)).astype(np.float32)
    module = hf.Module.parse(jax.jit(lambda x, b: f(jax.lax, x, b)).lower(X, buf).as_text())
    ct = np.random.default_rng(3).standard_normal(buf.shape).astype(np.float32)
    want = jax_run(lambda x, b, ct: jax.vjp(lambda x, b: f(jax.lax, x, b), x, b)[1](ct), X, buf, ct)
    got = module.vjp().compile()(X, buf, ct)
    close(got[1:], [np.asarray(w) for w in want])


def _best_time(fn, x, repeats=7):
    fn(x).block_until_ready()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn(x).block_until_ready()
        best = min(best, time.perf_counter() - start)
    return best


def test_scan_gradient_through_optimize_grows_linearly():
    """Eight times the steps: about eight times the time (a quadratic gradient took 30-60 times as
    long, issue 51). The bound is loose, for a loaded 2-core machine."""
    x = jnp.ones((8, 256), jnp.float32)

    def grad_time(n):
        roll = lambda x: jax.lax.scan(lambda c, _: (jnp.sin(c) * .99,) * 2, x, None, length=n)[1]  # noqa: E731
        return _best_time(jax.jit(jax.grad(lambda x: jnp.sum(hf.optimize(roll)(x) ** 2))), x)

    short, long = grad_time(100), grad_time(800)
    assert long / short < 20, (short, long)


def small_roll(n):
    return lambda x: jax.lax.scan(lambda c, _: (jnp.tanh(c) * .99,) * 2, x, None, length=n)[1]


def test_gradient_through_optimize_runs_the_loop_forwards_once():
    """jax.grad through hf.optimize keeps the forward call's residuals for the backward call, as jax's
    linearize does (module_ad.split_vjp): two loops compiled, as for jax.grad itself, not three."""
    roll = small_roll(N)
    grad = jax.jit(jax.grad(lambda x: jnp.sum(hf.optimize(roll)(x) ** 2)))
    assert grad.lower(X).compile().as_text().count(" while(") == 2
    close(grad(X), jax.grad(lambda x: jnp.sum(roll(x) ** 2))(X))


def test_split_program_composes_with_jvp_hessian_and_vmap():
    roll = small_roll(3)
    x = X[:2, :3]
    loss = lambda f: lambda x: jnp.sum(f(x) ** 2)  # noqa: E731
    t = np.ones_like(x)
    for transform in (lambda f: jax.jvp(f, (x,), (t,)), lambda f: jax.hessian(loss(f))(x),
                      lambda f: jax.vmap(jax.grad(loss(f)))(np.stack([x, 2 * x])),
                      lambda f: jax.grad(lambda x: jnp.sum(jax.jvp(f, (x,), (t,))[1]))(x)):
        close(transform(hf.optimize(roll)), transform(roll))


def test_split_vjp_cuts_where_the_cotangents_enter():
    def f(x, w):
        ys = jax.lax.scan(lambda c, _: (jnp.tanh(c @ w),) * 2, x, None, length=4)[1]
        return ys, jnp.sum(jnp.sin(x) * w[0])
    from hloforge.frontend.ad.module_ad import split_vjp
    w = np.random.default_rng(4).standard_normal((8, 8)).astype(np.float32)
    module = hf.Module.parse(jax.jit(f).lower(X, w).as_text())
    forward, backward, n_residuals = split_vjp(module, (0, 1))
    assert len(forward.signature[1]) == 2 + n_residuals
    assert len(backward.signature[0]) == 2 + n_residuals + 2
    outs = forward.compile()(X, w)
    cts = (np.ones((4, *X.shape), np.float32), np.float32(2))
    got = backward.compile()(X, w, *outs[2:], *cts)
    want_outs, pullback = jax.vjp(f, X, w)
    close(outs[:2], want_outs)
    close(got, pullback(cts))


def test_products_of_stored_residuals_are_recomputed_not_stored():
    """``c * c * c``'s derivative reads c and c * c: the backward loop recomputes c * c from the stored
    c (control_flow._remade_residuals), one [n, ...] buffer as jax's integer_pow stores."""
    from hloforge.frontend.ad.module_ad import split_vjp
    cube = lambda x: jax.lax.scan(lambda c, _: (c - 0.01 * c * c * c,) * 2, x, None, length=N)[1]  # noqa: E731
    module = hf.Module.parse(jax.jit(cube).lower(X).as_text())
    module.optimize()
    forward, backward, n_residuals = split_vjp(module, (0,))
    assert [tuple(s.shape) for s in forward.signature[1][1:]] == [(N, *X.shape)]
    ct = np.random.default_rng(5).standard_normal((N, *X.shape)).astype(np.float32)
    outs = forward.compile()(X)
    close(backward.compile()(X, *outs[1:], ct), jax.vjp(cube, X)[1](ct)[0])


def test_vjp_of_a_module_that_uses_the_loop_results_runs_one_forward_loop():
    """The forward loop takes the re-emitted loop's place (control_flow._loop_here), so a loss computed
    from the scan inside the module reads it: Module.vjp keeps two loops, not the original beside it."""
    loss = lambda x: jnp.sum(small_roll(N)(x) ** 2)  # noqa: E731
    module = hf.Module.parse(jax.jit(loss).lower(X).as_text())
    vjp = module.vjp()
    vjp.optimize()
    assert vjp.text.count("stablehlo.while") == 2
    value, grad = vjp.compile()(X, np.float32(1))
    close((value, grad), jax.value_and_grad(loss)(X))


def test_a_nested_loop_that_is_the_outer_step_runs_once_forwards():
    """The inner loop's result is the outer body's result: the outer forward loop returns the inner
    forward loop's results (_util.latest), so no copy of the inner loop runs beside it (4 loops:
    forward and backward, outer and inner)."""
    def f(x):
        return jnp.sum(jax.lax.fori_loop(0, 4, lambda i, v: jax.lax.fori_loop(0, 3, lambda j, u: jnp.sin(u) * .9, v),
                                         x) ** 2)
    vjp = hf.Module.parse(jax.jit(f).lower(X).as_text()).vjp()
    vjp.optimize()
    assert vjp.text.count("stablehlo.while") == 4
    close(vjp.compile()(X, np.float32(1)), jax.value_and_grad(f)(X))
