"""hloforge.lax.custom_root and custom_linear_solve against jax.lax's on the same programs: values,
derivatives with respect to what the functions close over (implicit differentiation, never
through the solver), vmap in every order with grad, has_aux, pytrees, eager calls and errors."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
import hloforge.lax as hl
import hloforge.numpy as hnp

RNG = np.random.default_rng(0)
A = RNG.normal(size=(4, 4)).astype(np.float32)
SPD = (A @ A.T + 4 * np.eye(4)).astype(np.float32)
B = RNG.normal(size=4).astype(np.float32)
TOL = dict(rtol=2e-5, atol=2e-5)


def close(got, want, **tol):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert np.all(np.isfinite(np.asarray(w))), w
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), **{**TOL, **tol})


def cg(np_, lax_, iterations=4):
    """Conjugate gradients in a while loop: a solver reverse mode could not differentiate."""
    def solve(matvec, b):
        def body(state):
            x, r, p, k = state
            ap = matvec(p)
            alpha = np_.dot(r, r) / np_.dot(p, ap)
            x, r_new = x + alpha * p, r - alpha * ap
            return x, r_new, r_new + np_.dot(r_new, r_new) / np_.dot(r, r) * p, k + 1
        x, *_ = lax_.while_loop(lambda s: s[3] < iterations, body, (np_.zeros_like(b), b, b, 0))
        return x
    return solve


def linear_programs(np_, lax_):
    def symmetric(a, b):
        return lax_.custom_linear_solve(lambda x: a @ x, b, cg(np_, lax_), symmetric=True)

    def general(a, b):
        return lax_.custom_linear_solve(lambda x: a @ x, b, lambda mv, v: np_.linalg.solve(a, v),
                                        lambda vm, v: np_.linalg.solve(a.T, v))

    def tree(a, b):  # b a dict; the map is a 2x2 block matrix of a and its transpose
        mv = lambda x: {"u": a @ x["u"] + x["v"], "v": x["u"] + a.T @ x["v"]}  # noqa: E731
        dense = np_.concatenate([np_.concatenate([a, np_.eye(4, dtype=a.dtype)], 1),
                                 np_.concatenate([np_.eye(4, dtype=a.dtype), a.T], 1)], 0)

        def solve(matvec, rhs):
            x = np_.linalg.solve(dense, np_.concatenate([rhs["u"], rhs["v"]]))
            return {"u": x[:4], "v": x[4:]}
        out = lax_.custom_linear_solve(mv, {"u": b, "v": 2 * b}, solve, symmetric=True)
        return out["u"] * out["v"]
    return {"symmetric": symmetric, "general": general, "tree": tree}


HF_LINEAR, JAX_LINEAR = linear_programs(hnp, hl), linear_programs(jnp, jax.lax)
MATRIX = {"symmetric": SPD, "general": A + 4 * np.eye(4, dtype=np.float32), "tree": SPD}


@pytest.mark.parametrize("name", sorted(HF_LINEAR))
def test_custom_linear_solve_values_and_derivatives_match_jax(name):
    a, f, g = MATRIX[name], HF_LINEAR[name], JAX_LINEAR[name]
    close(hf.jit(f)(a, B), jax.jit(g)(a, B))
    loss_h = lambda a, b: hnp.sum(hnp.sin(f(a, b)))  # noqa: E731
    loss_j = lambda a, b: jnp.sum(jnp.sin(g(a, b)))  # noqa: E731
    close(hf.grad(loss_h, argnums=(0, 1))(a, B), jax.grad(loss_j, argnums=(0, 1))(a, B))
    ta, tb = np.ones_like(a), np.ones_like(B)
    close(hf.jvp(f, (a, B), (ta, tb))[1], jax.jvp(g, (a, B), (ta, tb))[1])


def test_custom_linear_solve_never_differentiates_the_solver():
    """The CG solve is a while loop; its gradient is the implicit one, A⁻ᵀ(ct), so it equals the
    gradient of the exact solve."""
    f = HF_LINEAR["symmetric"]
    got = hf.grad(lambda b: hnp.sum(f(SPD, b) ** 2))(B)
    x = np.linalg.solve(SPD.astype(np.float64), B)
    close(got, np.linalg.solve(SPD.T.astype(np.float64), 2 * x), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("in_axes", [(None, 0), (0, None), (0, 0)])
def test_custom_linear_solve_under_vmap_and_grad_in_both_orders(in_axes):
    f, g = HF_LINEAR["general"], JAX_LINEAR["general"]
    a = MATRIX["general"]
    args = tuple(np.stack([x, 1.5 * x + (0.1 * np.eye(4, dtype=np.float32) if x.ndim == 2 else 0)])
                 if ax == 0 else x for x, ax in zip((a, B), in_axes))
    close(hf.vmap(f, in_axes=in_axes)(*args), jax.vmap(g, in_axes=in_axes)(*args))
    per_example_h = hf.vmap(hf.grad(lambda a, b: hnp.sum(f(a, b) ** 2), argnums=(0, 1)), in_axes=in_axes)
    per_example_j = jax.vmap(jax.grad(lambda a, b: jnp.sum(g(a, b) ** 2), argnums=(0, 1)), in_axes=in_axes)
    close(per_example_h(*args), per_example_j(*args))
    total_h = hf.grad(lambda *xs: hnp.sum(hf.vmap(f, in_axes=in_axes)(*xs) ** 2), argnums=(0, 1))
    total_j = jax.grad(lambda *xs: jnp.sum(jax.vmap(g, in_axes=in_axes)(*xs) ** 2), argnums=(0, 1))
    close(total_h(*args), total_j(*args))


def test_custom_linear_solve_second_derivatives_match_jax():
    f, g = HF_LINEAR["general"], JAX_LINEAR["general"]
    a = MATRIX["general"]
    got = hf.hessian(lambda b: hnp.sum(hnp.sin(f(a, b))))(B)
    want = jax.hessian(lambda b: jnp.sum(jnp.sin(g(a, b))))(B)
    close(got, want, rtol=1e-4, atol=1e-4)


def test_custom_linear_solve_has_aux_and_eager_calls():
    def f(np_, lax_, a, b):
        solve = lambda mv, v: (np_.linalg.solve(a, v), np_.sum(v))  # noqa: E731
        return lax_.custom_linear_solve(lambda x: a @ x, b, solve, symmetric=True, has_aux=True)
    x, aux = f(hnp, hl, SPD, B)  # (eager: outside any trace)
    assert isinstance(x, jax.Array)
    want_x, want_aux = f(jnp, jax.lax, SPD, B)
    close((x, aux), (want_x, want_aux))
    close(hf.grad(lambda b: hnp.sum(f(hnp, hl, SPD, b)[0] ** 2))(B),
          jax.grad(lambda b: jnp.sum(f(jnp, jax.lax, SPD, b)[0] ** 2))(B))


def root_programs(np_, lax_):
    def sqrt(a):  # Newton's method in a while loop; tangent_solve for a scalar map
        def newton(f, x0):
            return lax_.while_loop(lambda s: s[1] < 30, lambda s: (s[0] - f(s[0]) / (2 * s[0]), s[1] + 1), (x0, 0))[0]
        return lax_.custom_root(lambda x: x * x - a, np_.ones_like(a), newton, lambda g, y: y / g(np_.ones_like(y)))

    def vector(w):  # x = tanh(w x) + 1 by fixed-point iteration; tangent_solve with the Jacobian
        f = lambda x: x - np_.tanh(w @ x) - 1.0  # noqa: E731

        def fixed_point(f, x0):
            return lax_.fori_loop(0, 60, lambda i, x: x - f(x), x0)

        def tangent_solve(g, y):
            return np_.linalg.solve(jax_or_hf_jacobian(np_)(g)(y), y)
        return lax_.custom_root(f, np_.zeros(4, np.float32), fixed_point, tangent_solve)
    return {"sqrt": sqrt, "vector": vector}


def jax_or_hf_jacobian(np_):
    return hf.jacfwd if np_ is hnp else jax.jacfwd


HF_ROOT, JAX_ROOT = root_programs(hnp, hl), root_programs(jnp, jax.lax)
ROOT_ARG = {"sqrt": np.float32([2.0, 3.0, 0.5]), "vector": (0.1 * A).astype(np.float32)}


@pytest.mark.parametrize("name", sorted(HF_ROOT))
def test_custom_root_values_and_derivatives_match_jax(name):
    x, f, g = ROOT_ARG[name], HF_ROOT[name], JAX_ROOT[name]
    close(hf.jit(f)(x), jax.jit(g)(x))
    close(hf.grad(lambda v: hnp.sum(hnp.cos(f(v))))(x), jax.grad(lambda v: jnp.sum(jnp.cos(g(v))))(x))
    t = np.ones_like(x)
    close(hf.jvp(f, (x,), (t,))[1], jax.jvp(g, (x,), (t,))[1])
    close(hf.hessian(lambda v: hnp.sum(hnp.cos(f(v))))(x), jax.hessian(lambda v: jnp.sum(jnp.cos(g(v))))(x),
          rtol=1e-4, atol=1e-5)


def test_custom_root_under_vmap_and_has_aux():
    f, g = HF_ROOT["sqrt"], JAX_ROOT["sqrt"]
    xs = np.stack([ROOT_ARG["sqrt"], 2 * ROOT_ARG["sqrt"]])
    close(hf.vmap(f)(xs), jax.vmap(g)(xs))
    close(hf.vmap(hf.grad(lambda v: hnp.sum(f(v))))(xs), jax.vmap(jax.grad(lambda v: jnp.sum(g(v))))(xs))

    def with_aux(np_, lax_, a):
        def solve(f, x0):  # (a float aux: jax 0.10.2's custom_root refuses an int one under grad)
            x = lax_.fori_loop(0, 30, lambda i, x: x - f(x) / (2 * x), x0)
            return x, np_.max(np_.abs(f(x)))
        return lax_.custom_root(lambda x: x * x - a, np_.ones_like(a), solve, lambda g, y: y / g(np_.ones_like(y)),
                                has_aux=True)
    a = ROOT_ARG["sqrt"]
    close(hf.jit(lambda a: with_aux(hnp, hl, a))(a), jax.jit(lambda a: with_aux(jnp, jax.lax, a))(a))
    close(hf.grad(lambda a: hnp.sum(with_aux(hnp, hl, a)[0]))(a),
          jax.grad(lambda a: jnp.sum(with_aux(jnp, jax.lax, a)[0]))(a))


@pytest.mark.parametrize("call,exc,match", [
    (lambda: hl.custom_linear_solve(3, B, lambda mv, b: b), TypeError, r"matvec must be callable, got 3"),
    (lambda: hl.custom_linear_solve(lambda x: x, B, lambda mv, b: b, transpose_solve="no"), TypeError,
     r"transpose_solve must be callable, got 'no'"),
    (lambda: hl.custom_linear_solve(lambda x: (x, x), B, lambda mv, b: b), TypeError,
     r"custom_linear_solve: matvec\(\) output pytree structure must match b"),
    (lambda: hl.custom_linear_solve(lambda x: x[:2], B, lambda mv, b: b), ValueError,
     r"matvec\(\) output shapes must match b, got \[\(2,\)\] and \[\(4,\)\]"),
    (lambda: hl.custom_linear_solve(lambda x: x, B, lambda mv, b: b, has_aux=True), TypeError,
     r"with has_aux=True, solve\(\) must return a pair"),
    (lambda: hf.grad(lambda b: hnp.sum(hl.custom_linear_solve(lambda x: 2 * x, b, lambda mv, v: v / 2)))(B),
     TypeError, r"transpose_solve required for backwards mode"),
    (lambda: hl.custom_root(lambda x: x, 1.0, None, lambda g, y: y), TypeError, r"solve must be callable, got None"),
    (lambda: hl.custom_root(lambda x: (x, x), np.float32(1.0), lambda f, x: x, lambda g, y: y), TypeError,
     r"custom_root: f\(\) output pytree structure must match initial_guess"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
