"""Batching rules of cholesky and triangular_solve (frontend/batching/factorization.py) against a
loop over the examples and against jax.vmap."""
import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hloforge as hf
from hloforge import ops
from batching_helpers import assert_same, check_vmap

B = 3
RNG = np.random.default_rng(10)


def _spd(*shape):
    m = RNG.standard_normal(shape + (shape[-1],))
    return (m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(np.float32)


def _triangular(*shape):
    return (np.tril(RNG.standard_normal(shape + (shape[-1],))) + 3 * np.eye(shape[-1])).astype(np.float32)


A = _spd(B, 2, 4)            # examples of (2, 4, 4)
L = _triangular(B, 2, 4)     # examples of (2, 4, 4)
RHS = RNG.standard_normal((B, 2, 4, 3)).astype(np.float32)
LHS = RNG.standard_normal((B, 2, 3, 4)).astype(np.float32)


def batched(x, axis):
    return x[0] if axis is None else np.moveaxis(x, 0, axis)


@pytest.mark.parametrize("axis", [0, 1, 2, 3])
def test_cholesky_at_every_batch_axis(axis):
    check_vmap(lambda a: (ops.cholesky(a), ops.cholesky(a, lower=False)), batched(A, axis), in_axes=axis,
               exact=False)


def solves(l, b, c):
    """l: (2, 4, 4) lower triangular; b: (2, 4, 3); c: (2, 3, 4)."""
    return (ops.triangular_solve(l, b), ops.triangular_solve(l, b, transpose_a="TRANSPOSE", unit_diagonal=True),
            ops.triangular_solve(l, c, left_side=False),
            ops.triangular_solve(l, c, left_side=False, transpose_a="ADJOINT"))


@pytest.mark.parametrize("axes", [(0, 0, 0), (None, 0, 3), (None, 3, 2), (2, None, None), (1, 3, 0), (None, 1, 1)])
def test_triangular_solve_batched_and_unbatched_mixes(axes):
    args = [batched(x, a) for x, a in zip((L, RHS, LHS), axes)]
    check_vmap(solves, *args, in_axes=axes, exact=False)


def test_unbatched_matrix_folds_the_batch_into_one_solve():
    fn = lambda l, b: ops.triangular_solve(l, b)  # noqa: E731
    text = hf.jit(hf.vmap(fn, in_axes=(None, 3), out_axes=3)).lower(L[0], batched(RHS, 3)).text
    assert text.count("stablehlo.triangular_solve") == 1 and "stablehlo.transpose" not in text


def test_against_jax_vmap():
    def hf_fn(a, l, b):
        return ops.cholesky(a), ops.triangular_solve(l, b)

    def jax_fn(a, l, b):
        return (jax.lax.linalg.cholesky(a, symmetrize_input=False),
                jax.lax.linalg.triangular_solve(l, b, left_side=True, lower=True))
    for axes in [(1, None, 2), (0, 0, 0)]:
        args = [batched(x, a) for x, a in zip((A, L, RHS), axes)]
        got, want = hf.vmap(hf_fn, in_axes=axes)(*args), jax.jit(jax.vmap(jax_fn, in_axes=axes))(*args)
        assert_same(np.tril(np.asarray(got[0])), np.tril(np.asarray(want[0])), exact=False)
        assert_same(got[1], want[1], exact=False)


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 4), k=st.integers(1, 3), left=st.booleans(), data=st.data())
def test_hypothesis_shapes_sides_and_axes(n, k, left, data):
    l_axis = data.draw(st.sampled_from([None, 0, 1, 2]))
    b_axis = data.draw(st.sampled_from([0, 1, 2] if l_axis is None else [None, 0, 1, 2]))
    l = _triangular(2, n)
    b = RNG.standard_normal((2, n, k) if left else (2, k, n)).astype(np.float32)
    check_vmap(lambda l, b: ops.triangular_solve(l, b, left_side=left), batched(l, l_axis), batched(b, b_axis),
               in_axes=(l_axis, b_axis), exact=False)


@settings(max_examples=8, deadline=None)
@given(lead=st.lists(st.integers(1, 2), max_size=2), n=st.integers(1, 4), lower=st.booleans(), data=st.data())
def test_hypothesis_cholesky_shapes_and_axes(lead, n, lower, data):
    axis = data.draw(st.integers(0, len(lead) + 2))
    check_vmap(lambda a: ops.cholesky(a, lower=lower), batched(_spd(B, *lead, n), axis), in_axes=axis, exact=False)
