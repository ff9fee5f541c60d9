"""Batching rules of gather, scatter and dynamic_update_slice (frontend/batching/slicing.py) against a
loop over the examples and against jax.vmap of the same jax.lax op."""
import functools

import jax
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import hloforge as hf
from hloforge import ops
from batching_helpers import assert_same, check_vmap

RNG = np.random.default_rng(0)
B = 3


def _batched(x, axis):
    """``B`` examples like ``x`` stacked at ``axis`` (None: ``x`` itself)."""
    if axis is None:
        return x
    xs = np.stack([x + i if x.dtype.kind == "f" else (x + i) % 7 for i in range(B)], axis)
    return xs.astype(x.dtype)


# (name, operand shape, indices, gather kwargs); some indices lie outside the operand (gather clamps)
GATHERS = {
    "rows": ((5, 3), np.array([[0], [4], [2], [9]], np.int32),
             dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,), index_vector_dim=1,
                  slice_sizes=(1, 3))),
    "points": ((5, 6), np.array([[0, 1], [4, 5], [2, 2], [-1, 3]], np.int32),
               dict(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1), index_vector_dim=1,
                    slice_sizes=(1, 1))),
    "windows": ((5, 6), np.array([[0, 3, 1, 4], [1, 2, 5, 0]], np.int64),
                dict(offset_dims=(0, 2), collapsed_slice_dims=(), start_index_map=(0, 1), index_vector_dim=0,
                     slice_sizes=(2, 3))),
    "scalar_indices": ((5, 3), np.array([3, 0, 1, 6], np.int32),
                       dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,), index_vector_dim=1,
                            slice_sizes=(1, 3))),
    "own_batching": ((3, 5, 2), np.array([[[1], [4]], [[0], [2]], [[3], [3]]], np.int32),
                     dict(offset_dims=(2,), collapsed_slice_dims=(1,), start_index_map=(1,), index_vector_dim=2,
                          slice_sizes=(1, 1, 2), operand_batching_dims=(0,), start_indices_batching_dims=(0,))),
}
MIXES = [(0, None), (None, 0), ("last", None), (None, "last"), (1, "last"), ("last", 1)]


def _axis(a, ndim):
    return ndim if a == "last" else a


@pytest.mark.parametrize("mix", MIXES, ids=str)
def test_gather(mix):
    args, axes, fns = [], [], []
    for shape, idx, kw in GATHERS.values():
        x = RNG.standard_normal(shape).astype(np.float32)
        ax, ai = _axis(mix[0], x.ndim), _axis(mix[1], idx.ndim)
        args += [_batched(x, ax), _batched(idx, ai)]
        axes += [ax, ai]
        fns.append(functools.partial(ops.gather, **kw))

    def fn(*a):
        return [f(a[2 * k], a[2 * k + 1]) for k, f in enumerate(fns)]
    check_vmap(fn, *args, in_axes=tuple(axes))


def _jax_gather(kw):
    dn = jax.lax.GatherDimensionNumbers(
        offset_dims=kw["offset_dims"], collapsed_slice_dims=kw["collapsed_slice_dims"],
        start_index_map=kw["start_index_map"], operand_batching_dims=kw.get("operand_batching_dims", ()),
        start_indices_batching_dims=kw.get("start_indices_batching_dims", ()))
    assert kw["index_vector_dim"] == 1 or kw["index_vector_dim"] == 2  # (jax: the last indices dim)
    return lambda x, i: jax.lax.gather(x, i, dn, kw["slice_sizes"], mode="clip")


@pytest.mark.parametrize("mix", [(0, None), (None, 1), (2, 0)], ids=str)
def test_gather_against_jax(mix):
    shape, idx, kw = GATHERS["own_batching"]
    x = RNG.standard_normal(shape).astype(np.float32)
    args = (_batched(x, mix[0]), _batched(idx, mix[1]))
    got = hf.vmap(functools.partial(ops.gather, **kw), in_axes=mix)(*args)
    want = jax.jit(jax.vmap(_jax_gather(kw), in_axes=mix))(*args)
    assert_same(got, np.asarray(want))


# (operand shape, indices, updates shape, scatter kwargs); some windows lie outside (scatter skips them)
SCATTERS = {
    "rows_add": ((5, 3), np.array([[0], [4], [2], [0], [7]], np.int32), (5, 3),
                 dict(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
                      index_vector_dim=1, computation="add")),
    "points_set": ((5, 6), np.array([[0, 1], [4, 5], [2, 2]], np.int32), (3,),
                   dict(update_window_dims=(), inserted_window_dims=(0, 1), scatter_dims_to_operand_dims=(0, 1),
                        index_vector_dim=1, computation="set", unique_indices=True)),
    "windows_max": ((5, 6), np.array([[0, 3], [1, 2]], np.int64), (2, 3, 2),
                    dict(update_window_dims=(0, 1), inserted_window_dims=(), scatter_dims_to_operand_dims=(0, 1),
                         index_vector_dim=0, computation="max")),
    "own_batching": ((3, 5, 2), np.array([[[1], [4]], [[0], [2]], [[3], [3]]], np.int32), (3, 2, 2),
                     dict(update_window_dims=(2,), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
                          index_vector_dim=2, computation="add", input_batching_dims=(0,),
                          scatter_indices_batching_dims=(0,))),
    "region": ((4, 3), np.array([[1], [3], [1]], np.int32), (3, 3),
               dict(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
                    index_vector_dim=1, computation=lambda old, new: ops.add(old, ops.multiply(new, new)))),
}
SCATTER_MIXES = [(0, None, 0), (None, None, 0), (0, None, None), (None, 0, None), ("last", None, "last"),
                 (None, "last", 1), (1, 0, "last")]


@pytest.mark.parametrize("mix", SCATTER_MIXES, ids=str)
def test_scatter(mix):
    args, axes, fns = [], [], []
    for shape, idx, ushape, kw in SCATTERS.values():
        x = RNG.standard_normal(shape).astype(np.float32)
        u = RNG.standard_normal(ushape).astype(np.float32)
        for v, a in zip((x, idx, u), mix):
            a = _axis(a, v.ndim)
            args.append(_batched(v, a))
            axes.append(a)
        fns.append(functools.partial(ops.scatter, **kw))

    def fn(*a):
        return [f(*a[3 * k: 3 * k + 3]) for k, f in enumerate(fns)]
    check_vmap(fn, *args, in_axes=tuple(axes))


@pytest.mark.parametrize("mix", [(0, None, 0), (None, 0, 1), (1, 1, None)], ids=str)
def test_scatter_against_jax(mix):
    x = RNG.standard_normal((5, 3)).astype(np.float32)
    idx = np.array([[0], [4], [2], [0]], np.int32)
    u = RNG.standard_normal((4, 3)).astype(np.float32)
    kw = dict(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
              index_vector_dim=1, computation="add")
    args = [_batched(v, a) for v, a in zip((x, idx, u), mix)]
    got = hf.vmap(functools.partial(ops.scatter, **kw), in_axes=mix)(*args)
    dn = jax.lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                         scatter_dims_to_operand_dims=(0,))
    want = jax.jit(jax.vmap(lambda x, i, u: jax.lax.scatter_add(x, i, u, dn), in_axes=mix))(*args)
    assert_same(got, np.asarray(want), exact=False)


DUS_MIXES = [(0, 0, None), (None, 0, None), (0, None, None), (1, "last", None), (0, 0, 0), (None, None, 0),
             ("last", None, 0), (None, 1, 0)]


@pytest.mark.parametrize("mix", DUS_MIXES, ids=str)
def test_dynamic_update_slice(mix):
    x = RNG.standard_normal((5, 6)).astype(np.float32)
    u = RNG.standard_normal((2, 3)).astype(np.float32)
    ax, au = _axis(mix[0], 2), _axis(mix[1], 2)
    starts = [np.int32(1), np.int32(4)]
    if mix[2] is not None:  # (batched starts, one out of range: dynamic_update_slice clamps)
        starts = [np.array([0, 3, 9], np.int32), np.array([4, -2, 1], np.int32)]
    args = [_batched(x, ax), _batched(u, au), *starts]
    axes = (ax, au, mix[2], mix[2])

    def fn(x, u, s0, s1):
        return ops.dynamic_update_slice(x, u, (s0, s1))
    check_vmap(fn, *args, in_axes=axes)
    if mix[2] is not None:  # (jax wraps negative starts around; StableHLO clamps them)
        args[2:] = [np.maximum(s, 0) for s in args[2:]]
        want = jax.jit(jax.vmap(lambda x, u, s0, s1: jax.lax.dynamic_update_slice(x, u, (s0, s1)), in_axes=axes))(*args)
        assert_same(hf.vmap(fn, in_axes=axes)(*args), np.asarray(want))


def test_dynamic_update_slice_mixed_starts():
    x = RNG.standard_normal((4, 5, 6)).astype(np.float32)
    u = RNG.standard_normal((B, 2, 2, 3)).astype(np.float32)
    s1 = np.array([0, 7, 2], np.int32)

    def fn(x, u, s0, s1, s2):
        return ops.dynamic_update_slice(x, u, (s0, s1, s2))
    check_vmap(fn, x, u, np.int32(1), s1, np.int32(-3), in_axes=(None, 0, None, 0, None))


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 5), m=st.integers(1, 4), k=st.integers(1, 4), ax=st.sampled_from([None, 0, 1, 2]),
       ai=st.sampled_from([None, 0, 1, 2]), seed=st.integers(0, 2**16))
def test_gather_scatter_hypothesis(n, m, k, ax, ai, seed):
    if ax is None and ai is None:
        ax = 0
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, m)).astype(np.float32)
    idx = rng.integers(-1, n + 1, (k, 1)).astype(np.int32)
    ax, ai = None if ax is None else min(ax, 2), None if ai is None else min(ai, 2)

    def fn(x, i):
        rows = ops.gather(x, i, (1,), (0,), (0,), 1, (1, m))
        return rows, ops.scatter(x, i, rows, (1,), (0,), (0,), 1, "add")
    check_vmap(fn, _batched(x, ax), _batched(idx, ai), in_axes=(ax, ai))


def test_batch_dims_stay_in_place():
    """The batch dimensions become dimension numbers where they are: no transpose is emitted."""
    def fn(x, i, u, s):
        rows = ops.gather(x, i, (1,), (0,), (0,), 1, (1, 3))
        return ops.scatter(x, i, rows, (1,), (0,), (0,), 1, "add"), ops.dynamic_update_slice(x, u, (s, 0))
    f = hf.vmap(fn, in_axes=(2, 1, 2, 0), out_axes=2)
    text = hf.trace(f, hf.ShapeDtype((5, 3, 4), np.float32), hf.ShapeDtype((6, 4, 1), np.int32),
                    hf.ShapeDtype((2, 3, 4), np.float32), hf.ShapeDtype((4,), np.int32)).text
    assert "stablehlo.transpose" not in text and text.count("\"stablehlo.scatter\"(") == 2, text
