"""Batching rules of the batch norm ops (frontend/batching/normalization.py) against a loop over
the examples: batched operand and/or batched scale, offset, mean and variance, at every axis. (jax
has no lax op for these: no jax.vmap comparison.)"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hloforge as hf
from hloforge import ops
from batching_helpers import check_vmap

B = 3
RNG = np.random.default_rng(11)
X = RNG.standard_normal((B, 4, 3, 5)).astype(np.float32)      # features: dim 1 (3 of them)
DY = RNG.standard_normal((B, 4, 3, 5)).astype(np.float32)
VECTORS = [RNG.standard_normal((B, 3)).astype(np.float32) for _ in range(2)]
MEAN = RNG.standard_normal((B, 3)).astype(np.float32)
VAR = RNG.uniform(0.5, 2, (B, 3)).astype(np.float32)


def batched(x, axis):
    return x[0] if axis is None else np.moveaxis(x, 0, axis)


def norms(x, scale, offset, mean, var, dy):
    """x, dy: (4, 3, 5), features at 1; the vectors: (3,)."""
    inference = ops.batch_norm_inference(x, scale, offset, mean, var, 1e-3, 1)
    training = ops.batch_norm_training(x, scale, offset, 1e-3, 1)
    grad = ops.batch_norm_grad(x, scale, mean, var, dy, 1e-3, 1)
    return (inference, *training, *grad)


@pytest.mark.parametrize("axes", [(0,) * 6, (2, None, None, None, None, 2), (None, 0, 1, 0, 1, None),
                                  (3, 1, None, 0, None, 0), (1, 0, 0, None, None, 1)])
def test_batch_norm_ops_batched_and_unbatched_mixes(axes):
    args = [batched(v, a) for v, a in zip((X, *VECTORS, MEAN, VAR, DY), axes)]
    check_vmap(norms, *args, in_axes=axes, exact=False)


@pytest.mark.parametrize("axes", [(0,) * 6, (2, None, None, None, None, 2), (None, 0, 1, 0, 1, None)])
def test_a_batch_of_size_zero(axes):
    """Empty results of a nonempty batch's shapes and dtypes (the features were a folded length
    divided by the batch size)."""
    full = hf.vmap(norms, in_axes=axes)(*[batched(v, a) for v, a in zip((X, *VECTORS, MEAN, VAR, DY), axes)])
    args = [batched(v[:0], a) if a is not None else v[0] for v, a in zip((X, *VECTORS, MEAN, VAR, DY), axes)]
    got = hf.vmap(norms, in_axes=axes)(*args)
    assert [(g.shape, g.dtype) for g in got] == [((0, *f.shape[1:]), f.dtype) for f in full]


def test_feature_index_last_and_first():
    x = RNG.standard_normal((B, 3, 2, 4)).astype(np.float32)
    scale, offset = RNG.standard_normal((B, 4)).astype(np.float32), RNG.standard_normal(4).astype(np.float32)

    def fn(x, scale, offset):
        return (ops.batch_norm_training(x, scale, offset, 1e-5, 2),
                ops.batch_norm_training(ops.transpose(x, (2, 0, 1)), scale, offset, 1e-5, 0))
    check_vmap(fn, batched(x, 3), scale, offset, in_axes=(3, 0, None), exact=False)


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3), data=st.data())
def test_hypothesis_shapes_feature_and_axes(shape, data):
    f = data.draw(st.integers(0, len(shape) - 1))
    axis = data.draw(st.integers(0, len(shape)))
    x = RNG.standard_normal([2, *shape]).astype(np.float32)
    scale = RNG.standard_normal((2, shape[f])).astype(np.float32)
    offset = RNG.standard_normal(shape[f]).astype(np.float32)
    check_vmap(lambda x, s, o: ops.batch_norm_training(x, s, o, 1e-3, f), batched(x, axis), scale, offset,
               in_axes=(axis, 0, None), exact=False)


@settings(max_examples=8, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3), data=st.data())
def test_hypothesis_inference_and_grad_shapes_feature_and_axes(shape, data):
    f = data.draw(st.integers(0, len(shape) - 1))
    x_axis = data.draw(st.sampled_from([None] + list(range(len(shape) + 1))))
    v_axes = [data.draw(st.sampled_from([None, 0, 1])) for _ in range(4)]
    dy_axis = data.draw(st.sampled_from([None] + list(range(len(shape) + 1))))
    if x_axis is None and dy_axis is None and all(a is None for a in v_axes):
        x_axis = 0
    x, dy = (RNG.standard_normal([2, *shape]).astype(np.float32) for _ in range(2))
    scale, offset, mean = (RNG.standard_normal((2, shape[f])).astype(np.float32) for _ in range(3))
    var = RNG.uniform(0.5, 2, (2, shape[f])).astype(np.float32)
    vectors = [v[0] if a is None else (v if a == 0 else v.T.copy()) for v, a in zip((scale, offset, mean, var), v_axes)]

    def fn(x, scale, offset, mean, var, dy):
        return (ops.batch_norm_inference(x, scale, offset, mean, var, 1e-3, f),
                *ops.batch_norm_grad(x, scale, mean, var, dy, 1e-3, f))
    check_vmap(fn, batched(x, x_axis), *vectors, batched(dy, dy_axis), in_axes=(x_axis, *v_axes, dy_axis),
               exact=False)
