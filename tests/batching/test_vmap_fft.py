"""Batching rule of fft (frontend/batching/fft.py) against a loop over the examples and against
jax.vmap: the batch dimension among the leading dimensions stays, among the transformed ones moves."""
import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hloforge as hf
from hloforge import ops
from batching_helpers import assert_same, check_vmap

B = 3
RNG = np.random.default_rng(5)
R = RNG.standard_normal((B, 2, 4, 6)).astype(np.float32)
C = (RNG.standard_normal((B, 2, 4, 6)) + 1j * RNG.standard_normal((B, 2, 4, 6))).astype(np.complex64)
H = C[..., :4]  # (half spectrum of length-6 transforms)


def transforms(r, c, h):
    """r: (2, 4, 6) real, c: (2, 4, 6) complex, h: (2, 4, 4) complex."""
    return (ops.fft(c, "FFT", (6,)), ops.fft(c, "IFFT", (4, 6)), ops.fft(r, "RFFT", (4, 6)),
            ops.fft(h, "IRFFT", (6,)), ops.fft(c, "FFT", (2, 4, 6)))


@pytest.mark.parametrize("axis", [0, 1, 2, 3])
def test_fft_at_every_batch_axis(axis):
    args = [np.moveaxis(a, 0, axis) for a in (R, C, H)]
    check_vmap(transforms, *args, in_axes=axis, exact=False)


def test_leading_batch_dim_is_not_moved():
    fn = lambda c: ops.fft(c, "FFT", (6,))  # noqa: E731
    text = hf.jit(hf.vmap(fn, in_axes=1, out_axes=1)).lower(np.moveaxis(C, 0, 1)).text
    assert "stablehlo.transpose" not in text


def test_against_jax_vmap():
    hf_fn = lambda c, r: (ops.fft(c, "FFT", (4, 6)), ops.fft(r, "RFFT", (6,)))  # noqa: E731
    jax_fn = lambda c, r: (jax.lax.fft(c, "FFT", (4, 6)), jax.lax.fft(r, "RFFT", (6,)))  # noqa: E731
    args, axes = (np.moveaxis(C, 0, 3), R[0]), (3, None)
    assert_same(hf.vmap(hf_fn, in_axes=axes)(*args), jax.jit(jax.vmap(jax_fn, in_axes=axes))(*args), exact=False)
    args, axes = (np.moveaxis(C, 0, 2), np.moveaxis(R, 0, 1)), (2, 1)
    assert_same(hf.vmap(hf_fn, in_axes=axes)(*args), jax.jit(jax.vmap(jax_fn, in_axes=axes))(*args), exact=False)


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_hypothesis_shapes_and_axes(shape, data):
    k = data.draw(st.integers(1, len(shape)))
    axis = data.draw(st.integers(0, len(shape)))
    x = RNG.standard_normal([2, *shape]).astype(np.complex64)
    check_vmap(lambda x: ops.fft(x, "FFT", shape[len(shape) - k:]), np.moveaxis(x, 0, axis), in_axes=axis,
               exact=False)


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), kind=st.sampled_from(["IFFT", "RFFT", "IRFFT"]),
       data=st.data())
def test_hypothesis_inverse_and_real_transforms(shape, kind, data):
    k = data.draw(st.integers(1, len(shape)))
    axis = data.draw(st.integers(0, len(shape)))
    lengths = list(shape[len(shape) - k:])
    if kind == "RFFT":
        x = RNG.standard_normal([2, *shape]).astype(np.float32)
    else:
        if kind == "IRFFT":  # (the half spectrum of the lengths' last transform)
            shape = shape[:-1] + [shape[-1] // 2 + 1]
        x = (RNG.standard_normal([2, *shape]) + 1j * RNG.standard_normal([2, *shape])).astype(np.complex64)
    check_vmap(lambda x: ops.fft(x, kind, lengths), np.moveaxis(x, 0, axis), in_axes=axis, exact=False)
