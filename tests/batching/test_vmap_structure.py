"""Batching rules of custom_call, optimization_barrier, map and composite (frontend/batching/structure.py)
against a loop over the examples, and the linalg composites against jax.vmap of jax's functions."""
import jax
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import hloforge as hf
from hloforge import ops
from hloforge.lax import linalg
from batching_helpers import assert_same, check_vmap

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4, 4)).astype(np.float32)
SPD = A @ np.swapaxes(A, -1, -2) + 4 * np.eye(4, dtype=np.float32)
B = RNG.standard_normal((3, 4, 2)).astype(np.float32)


def _linalg_programs(a, spd, b):
    q, r = linalg.qr(a)
    w, v = linalg.eigh(spd)[1], linalg.eigh(spd)[0]
    lu, pivots, perm = linalg.lu(a)
    return (linalg.cholesky(spd), q, r, w, v, linalg.svd(a, compute_uv=False), lu, pivots, perm,
            linalg.solve(spd, b), linalg.det(spd),
            linalg.triangular_solve(linalg.cholesky(spd), b, left_side=True, lower=True))


@pytest.mark.parametrize("axes", [(0, 0, 0), (1, 2, None), (None, None, 2)], ids=str)
def test_linalg_composites(axes):
    """LAPACK calls get one more leading batch dim (the batched call loops in LAPACK): bit for bit the loop."""
    args = [x if a is None else np.moveaxis(x, 0, a) for x, a in zip((A, SPD, B), axes)]
    args = [x[0] if a is None else x for x, a in zip(args, axes)]
    check_vmap(_linalg_programs, *args, in_axes=axes)


def test_linalg_composites_stay_composites():
    f = hf.vmap(lambda x, b: (linalg.cholesky(x), linalg.solve(x, b)), in_axes=(2, None))
    text = hf.trace(f, hf.ShapeDtype((4, 4, 3), np.float32), hf.ShapeDtype((4, 2), np.float32)).text
    assert 'stablehlo.composite "hloforge.linalg.cholesky"' in text and "(tensor<3x4x4xf32>)" in text, text
    assert 'num_batch_dims = "1"' in text and 'stablehlo.composite "hloforge.linalg.solve"' in text, text


def test_linalg_against_jax():
    got = hf.vmap(lambda x: (linalg.cholesky(x), linalg.eigh(x)[1], linalg.det(x)))(SPD)
    want = jax.jit(jax.vmap(lambda x: (jax.lax.linalg.cholesky(x), jax.lax.linalg.eigh(x)[1],
                                       jax.numpy.linalg.det(x))))(SPD)
    assert_same(got, want, exact=False)


def _potrf(x):
    """A LAPACK Cholesky call without num_batch_dims: an opaque target, batched by a loop. (The
    target name from hloforge.lax.linalg, which loads LAPACK into jaxlib's kernels: without that,
    a process that has not run a linalg call yet crashes in the call.)"""
    layouts = "[dense<[0, 1]> : tensor<2xindex>]"
    out, info = ops.custom_call(
        [x], linalg._lapack_target("potrf_ffi", x.dtype), [(x.shape, x.dtype), ((), np.int32)],
        extra_attributes={"mhlo.backend_config": "{uplo = 76 : ui8}", "operand_layouts": layouts,
                          "result_layouts": "[dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]"})
    return out, info


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_opaque_custom_call_loops(axis):
    got = check_vmap(_potrf, np.moveaxis(SPD, 0, axis), in_axes=axis)
    text = hf.trace(hf.vmap(_potrf, in_axes=axis), hf.ShapeDtype(np.moveaxis(SPD, 0, axis).shape, np.float32)).text
    assert text.count("stablehlo.custom_call @lapack_spotrf_ffi") == 1 and "stablehlo.while" in text, text
    assert got[1].tolist() == [0, 0, 0]


def test_opaque_custom_call_of_an_empty_batch_calls_nothing():
    """A batch of 0 gives empty results and no loop (its body sliced example i of the empty batch)."""
    out, info = hf.vmap(_potrf, in_axes=1)(np.zeros((4, 0, 4), np.float32))
    assert (out.shape, out.dtype, info.shape, info.dtype) == ((0, 4, 4), np.float32, (0,), np.int32)
    text = hf.trace(hf.vmap(_potrf), hf.ShapeDtype((0, 4, 4), np.float32)).text
    assert "stablehlo.custom_call" not in text and "stablehlo.while" not in text, text


def test_optimization_barrier():
    def fn(x, y):
        a, b = ops.optimization_barrier([ops.multiply(x, x), y])
        return ops.add(a, a), b
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    check_vmap(fn, x, x[0], in_axes=(0, None))
    check_vmap(fn, x, x.T, in_axes=(1, 0))
    text = hf.trace(hf.vmap(fn, in_axes=(1, 0), out_axes=(1, 0)), hf.ShapeDtype((3, 4), np.float32),
                    hf.ShapeDtype((4, 3), np.float32)).text
    assert "stablehlo.transpose" not in text and "stablehlo.optimization_barrier" in text, text


@pytest.mark.parametrize("axes", [(0, 0), (1, None), (None, 2), (2, 1)], ids=str)
def test_map(axes):
    x = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    y = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    args = [v if a is None else np.moveaxis(v, 0, a) for v, a in zip((x, y), axes)]
    args = [v[0] if a is None else v for v, a in zip(args, axes)]

    def fn(x, y):
        return ops.map([x, y], lambda a, b: ops.add(ops.multiply(a, a), b)), ops.map(x, ops.exp, dtype=np.float32)
    # (not bit for bit: XLA:CPU compiles a map's scalar body into vector code for some layouts, whose
    # exp, and a * a + b contracted to a fused multiply-add, round differently from the scalar code)
    check_vmap(fn, *args, in_axes=axes, exact=False)


def test_other_composites_become_their_batched_decomposition():
    def fn(x, y):
        return ops.composite([x, y], "my.fma", lambda a, b: [ops.add(ops.multiply(a, b), a), b])
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    check_vmap(fn, x, x[0], in_axes=(0, None))
    check_vmap(fn, x, x.T, in_axes=(1, 0))
    text = hf.trace(hf.vmap(fn, in_axes=(0, None)), hf.ShapeDtype((3, 4), np.float32),
                    hf.ShapeDtype((4,), np.float32)).text
    assert '"my.fma"' not in text.split("func.func private")[0], text


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 4), b=st.integers(1, 3), axis=st.integers(0, 2), seed=st.integers(0, 2 ** 16))
def test_hypothesis_cholesky_and_map(n, b, axis, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((b, n, n)).astype(np.float32)
    spd = np.moveaxis(a @ np.swapaxes(a, -1, -2) + n * np.eye(n, dtype=np.float32), 0, axis)

    def fn(x):
        return linalg.cholesky(x), ops.map(x, lambda v: ops.multiply(v, v))
    check_vmap(fn, spd, in_axes=axis)


@settings(max_examples=8, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3), n=st.integers(1, 3), seed=st.integers(0, 2 ** 16),
       data=st.data())
def test_hypothesis_barrier_composite_and_opaque_call_shapes_and_axes(shape, n, seed, data):
    rank = len(shape)
    x_axis = data.draw(st.sampled_from([None] + list(range(rank + 1))))
    y_axis = data.draw(st.sampled_from(list(range(rank + 1)) + ([] if x_axis is None else [None])))
    s_axis = data.draw(st.integers(0, 2))
    rng = np.random.default_rng(seed)
    x, y = (rng.integers(-9, 10, (2, *shape)).astype(np.int32) for _ in range(2))
    a = rng.standard_normal((2, n, n)).astype(np.float32)
    spd = np.moveaxis(a @ np.swapaxes(a, -1, -2) + n * np.eye(n, dtype=np.float32), 0, s_axis)

    def fn(x, y, spd):
        b = ops.optimization_barrier([ops.multiply(x, x), y])
        c = ops.composite([x, y], "my.fma", lambda u, v: [ops.add(ops.multiply(u, v), u), v])
        return (*b, *c, *_potrf(spd))
    batched = [v[0] if ax is None else np.moveaxis(v, 0, ax) for v, ax in ((x, x_axis), (y, y_axis))]
    check_vmap(fn, *batched, spd, in_axes=(x_axis, y_axis, s_axis))
