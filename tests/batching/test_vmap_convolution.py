"""Batching rule of convolution (frontend/batching/convolution.py) against a loop over the examples
and against jax.vmap: batched lhs, rhs or both, with feature groups, batch groups, other layouts,
strides, padding and dilation."""
import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hloforge as hf
from hloforge import ops
from batching_helpers import assert_same, check_vmap

B = 3
RNG = np.random.default_rng(6)
NHWC = ops.ConvDimensions(0, 3, (1, 2), 2, 3, (0, 1), 0, 3, (1, 2))


def _data(*shape):
    return RNG.integers(-3, 4, (B, *shape)).astype(np.float32)  # (small integers: every sum is exact)


# (lhs, rhs) per-example shapes and the convolution of each case
CASES = [
    ((2, 4, 5, 5), (6, 4, 3, 3), lambda l, r: ops.convolution(l, r, padding=((1, 0), (0, 2)), window_strides=(2, 1))),
    ((2, 4, 5, 5), (6, 2, 3, 3), lambda l, r: ops.convolution(l, r, feature_group_count=2, rhs_dilation=(1, 2))),
    ((4, 3, 5, 5), (6, 3, 3, 3), lambda l, r: ops.convolution(l, r, batch_group_count=2, lhs_dilation=(2, 1))),
    ((2, 5, 5, 4), (3, 3, 4, 6), lambda l, r: ops.convolution(l, r, NHWC, window_reversal=(True, False))),
    ((2, 5, 5, 4), (3, 3, 1, 8), lambda l, r: ops.convolution(l, r, NHWC, feature_group_count=4)),
]
ARGS = [_data(*s) for case in CASES for s in case[:2]]


def convolutions(*args):
    return tuple(case[2](args[2 * i], args[2 * i + 1]) for i, case in enumerate(CASES))


def batched(x, axis):
    return x[0] if axis is None else np.moveaxis(x, 0, axis)


@pytest.mark.parametrize("axes", [(0, None), (2, None), (None, 0), (None, 4), (0, 0), (4, 2)])
def test_convolution_batched_lhs_rhs_or_both(axes):
    in_axes = axes * len(CASES)
    args = [batched(a, ax) for a, ax in zip(ARGS, in_axes)]
    check_vmap(convolutions, *args, in_axes=in_axes)


@pytest.mark.parametrize("axes", [(0, None), (None, 0), (0, 0), (4, 2)])
def test_a_batch_of_size_zero(axes):
    """Empty results of a nonempty batch's shapes and dtypes (a batch folded into the feature groups
    made 0 groups, and split out of the result divided by 0)."""
    in_axes = axes * len(CASES)
    full = hf.vmap(convolutions, in_axes=in_axes)(*[batched(a, ax) for a, ax in zip(ARGS, in_axes)])
    empty = [a[0] if ax is None else np.moveaxis(a[:0], 0, ax) for a, ax in zip(ARGS, in_axes)]
    got = hf.vmap(convolutions, in_axes=in_axes)(*empty)
    assert [(g.shape, g.dtype) for g in got] == [((0, *f.shape[1:]), f.dtype) for f in full]


def test_against_jax_vmap():
    lhs, rhs = _data(2, 4, 5, 5), _data(6, 2, 3, 3)

    def hf_fn(l, r):
        return ops.convolution(l, r, feature_group_count=2, padding=((1, 1), (0, 1)))

    def jax_fn(l, r):
        return jax.lax.conv_general_dilated(l, r, (1, 1), ((1, 1), (0, 1)), feature_group_count=2)
    for axes in [(0, None), (None, 1), (1, 0)]:
        args = (batched(lhs, axes[0]), batched(rhs, axes[1]))
        assert_same(hf.vmap(hf_fn, in_axes=axes)(*args), jax.jit(jax.vmap(jax_fn, in_axes=axes))(*args), exact=False)


@settings(max_examples=10, deadline=None)
@given(groups=st.sampled_from([(1, 1), (2, 1), (1, 2)]), width=st.integers(2, 5), data=st.data())
def test_hypothesis_groups_shapes_and_axes(groups, width, data):
    fgc, bgc = groups
    l_axis = data.draw(st.sampled_from([None, 0, 1, 3]))
    r_axis = data.draw(st.sampled_from([0, 2, 3] if l_axis is None else [None, 0, 2, 3]))
    lhs = RNG.integers(-3, 4, (2, 2 * bgc, 2 * fgc, width)).astype(np.float32)
    rhs = RNG.integers(-3, 4, (2, 2 * fgc * bgc, 2, 2)).astype(np.float32)
    fn = lambda l, r: ops.convolution(l, r, feature_group_count=fgc, batch_group_count=bgc)  # noqa: E731
    check_vmap(fn, batched(lhs, l_axis), batched(rhs, r_axis), in_axes=(l_axis, r_axis))
