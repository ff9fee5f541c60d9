"""Batching rules of dot_general and reduce (frontend/batching/linalg.py) against a loop over the
examples and against jax.vmap."""
import jax
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import hloforge as hf
from hloforge import ops
from batching_helpers import assert_same, check_vmap

B = 4
RNG = np.random.default_rng(1)


def batched(x, axis):
    return x[0] if axis is None else np.moveaxis(x, 0, axis)


def _ints(*shape):
    return RNG.integers(-4, 5, size=shape).astype(np.int32)


def contractions(a, b):
    """a: (2, 3, 4), b: (2, 4, 5): a matmul with a batch dim, a plain contraction, an outer product."""
    return (ops.dot_general(a, b, (0,), (0,), (2,), (1,)), ops.dot_general(a, b, (), (), (2,), (1,)),
            ops.dot_general(a, b, (), (), (), ()))


@pytest.mark.parametrize("axes", [(0, 0), (1, 3), (3, 0), (0, None), (None, 2), (2, None), (None, 0)])
def test_dot_general_batched_unbatched_mixes(axes):
    a, b = _ints(B, 2, 3, 4), _ints(B, 2, 4, 5)
    check_vmap(contractions, batched(a, axes[0]), batched(b, axes[1]), in_axes=axes)


def test_dot_general_float_and_no_operand_transpose():
    a, b = RNG.standard_normal((B, 3, 4)).astype(np.float32), RNG.standard_normal((4, 5)).astype(np.float32)
    fn = lambda a, b: ops.dot_general(a, b, (), (), (1,), (0,))  # noqa: E731
    check_vmap(fn, np.moveaxis(a, 0, 1), b, in_axes=(1, None), exact=False)
    text = hf.jit(hf.vmap(fn, in_axes=(1, None), out_axes=1)).lower(np.moveaxis(a, 0, 1), b).text
    assert "stablehlo.transpose" not in text


def reductions(x):
    """x: (2, 3, 4)."""
    return (ops.reduce(x, 0, (1,), "add"), ops.reduce(x, np.iinfo(np.int32).min, (0, 2), "max"),
            ops.reduce(x, 0, (), "add"),
            ops.reduce([x, x], [0, 1], (2,), lambda a, m, x, y: (ops.add(a, x), ops.multiply(m, y))))


@pytest.mark.parametrize("axis", [0, 1, 3])
def test_reduce_at_every_batch_axis(axis):
    check_vmap(reductions, batched(_ints(B, 2, 3, 4), axis), in_axes=axis)


def test_reduce_batched_init_values():
    x, init = _ints(B, 2, 3), _ints(B)

    def fn(x, v):
        return (ops.reduce(x, v, (1,), "add"), ops.reduce(x, v, (0, 1), "min"), ops.reduce(x, v, (), "max"),
                ops.reduce(x, v, (0,), lambda a, b: ops.maximum(a, b)),
                ops.reduce([x, x], [v, v], (1,), lambda a, b, c, d: (ops.add(a, c), ops.subtract(b, d))))
    for axes in [(0, 0), (None, 0), (2, 0)]:
        check_vmap(fn, batched(x, axes[0]), batched(init, axes[1]), in_axes=axes)


def test_reduce_batched_init_joins_once_over_several_reduced_dims():
    """A sum or product over several dims counts a batched init once (a slab of inits along one
    reduced dim counted it once per element of the others)."""
    x, init = _ints(B, 2, 3, 2), _ints(B)

    def fn(x, v):
        return ops.reduce(x, v, (0, 1), "add"), ops.reduce(x, v, (0, 2), "mul"), ops.reduce(x, v, (0, 1, 2), "add")
    for axes in [(0, 0), (None, 0), (2, 0)]:
        check_vmap(fn, batched(x, axes[0]), batched(init, axes[1]), in_axes=axes)


def test_reduce_float_sum_batched_init():
    x, init = RNG.standard_normal((B, 3, 5)).astype(np.float32), RNG.standard_normal(B).astype(np.float32)
    check_vmap(lambda x, v: ops.reduce(x, v, (1,), "add"), x, init, exact=False)


def test_against_jax_vmap():
    a, b = RNG.standard_normal((B, 3, 4)).astype(np.float32), RNG.standard_normal((4, B, 5)).astype(np.float32)
    dims = (((1,), (0,)), ((), ()))

    def hf_fn(a, b):
        return ops.dot_general(a, b, (), (), (1,), (0,)), ops.reduce(a, 0.0, (1,), "add")

    def jax_fn(a, b):
        return (jax.lax.dot_general(a, b, dims),
                jax.lax.reduce(a, np.float32(0), jax.lax.add, (1,)))
    for axes in [(0, 1), (None, 1), (0, None)]:
        args = [a if axes[0] is not None else a[0], b if axes[1] is not None else b[:, 0]]
        assert_same(hf.vmap(hf_fn, in_axes=axes)(*args), jax.jit(jax.vmap(jax_fn, in_axes=axes))(*args), exact=False)


@settings(max_examples=10, deadline=None)
@given(m=st.integers(1, 3), k=st.integers(1, 3), n=st.integers(1, 3), data=st.data())
def test_hypothesis_matmul_and_sum_axes(m, k, n, data):
    a_axis = data.draw(st.sampled_from([None, 0, 1, 2]))
    b_axis = data.draw(st.sampled_from([0, 1, 2]) if a_axis is None else st.sampled_from([None, 0, 1, 2]))
    a, b = _ints(3, m, k), _ints(3, k, n)

    def fn(a, b):
        return ops.dot_general(a, b, (), (), (1,), (0,)), ops.reduce(b, 0, (0,), "add")
    check_vmap(fn, batched(a, a_axis), batched(b, b_axis), in_axes=(a_axis, b_axis))


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3), body=st.sampled_from(["add", "mul", "max", "min"]),
       callable_body=st.booleans(), seed=st.integers(0, 2 ** 16), data=st.data())
def test_hypothesis_reduce_bodies_dims_inits_and_axes(shape, body, callable_body, seed, data):
    rank = len(shape)
    dims = sorted(data.draw(st.sets(st.integers(0, rank - 1))))
    x_axis = data.draw(st.sampled_from([None] + list(range(rank + 1))))
    v_axis = data.draw(st.sampled_from([0] if x_axis is None else [None, 0]))
    # (XLA drops an init over reduced dims of one element in all (a reshape: it takes the init for
    # an identity); a batched init is one more reduced element, so it counts there: docs/vmap.md)
    assume(v_axis is None or not dims or np.prod([shape[d] for d in dims]) > 1)
    rng = np.random.default_rng(seed)
    x, init = rng.integers(-4, 5, (3, *shape)).astype(np.int32), rng.integers(-4, 5, 3).astype(np.int32)
    names = {"add": ops.add, "mul": ops.multiply, "max": ops.maximum, "min": ops.minimum}
    fn = lambda x, v: ops.reduce(x, v, dims, names[body] if callable_body else body)  # noqa: E731
    check_vmap(fn, batched(x, x_axis), batched(init, v_axis), in_axes=(x_axis, v_axis))
