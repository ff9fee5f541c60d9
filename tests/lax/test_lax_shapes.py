"""hloforge.lax's shape, slicing, creation and structural functions against jax.lax on the same
inputs (one hf.jit and one jax.jit), the static shape helpers against jax's values, and every
error message."""
from __future__ import annotations

import jax
import numpy as np
import pytest

import hloforge as hf
from hloforge import lax

from lax_helpers import both, refuses

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7.5
M = np.arange(12, dtype=np.int32).reshape(3, 4)


def _shapes(L, x, m, i):
    out = [L.reshape(x, (6, 4)), L.reshape(x, (4, 3, 2), (2, 1, 0)), L.reshape(m, (12,)),
           L.broadcast(m, (2,)), L.broadcast_in_dim(m[0], (3, 2, 4), (2,)), L.broadcast_in_dim(x[:, :1], (2, 5, 4), (0, 1, 2)),
           L.broadcast_like(m[0], x), L.broadcast_to_rank(m[0], 3), L.broadcast_to_rank(x, 2),
           L.expand_dims(m, (0, -1)), L.squeeze(x[:1, :, :1], (0, -1)), L.collapse(x, 1), L.collapse(x, -2, None),
           L.transpose(x, (2, 0, 1)), L.rev(x, (0, 2)), L.rev(m, ()),
           L.pad(m, np.int32(-1), [(1, 2, 0), (0, -1, 1)]), L.pad(x, np.float32(0), [(0, 0, 1), (-1, 1, 0), (2, 0, 0)]),
           L.concatenate([m, m * 2, m[:1]], 0), L.concatenate([x], 2), *L.split(x, (1, 0, 3), 2), *L.split(m, (2, 1), -2),
           L.stack([m, m + 1], -1), L.stack([m[0]], 0), *L.unstack(m, 1), L.tile(m, (2, 1)), L.tile(x, (1, 0, 2)),
           L.full((2, 3), 1.5), L.full((2,), 7, np.int8), L.full((), True), L.full((3,), 2.7, np.int32),
           L.full((2,), i), L.full_like(m, 3), L.full_like(x, 0.5, np.float16, (2,)), L.full_like(1.0, 2),
           L.empty((3,), np.int16), L.stage(2.0), L.stage(np.arange(3, dtype=np.int32)),
           # slicing
           L.slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 3)), L.slice_in_dim(m, -2, None, 1, 0),
           L.slice_in_dim(m, 1, -1, 2, 1), L.index_in_dim(x, -1, 2), L.index_in_dim(m, 1, 1, False),
           L.dynamic_update_slice_in_dim(m, m[:1] * 0, i, 0), L.dynamic_update_slice_in_dim(m, m[:, :2] * 0, -1, 1),
           L.dynamic_update_index_in_dim(m, m[0] * 0 - 1, i, 0), L.dynamic_update_index_in_dim(x, x[:, :, :1], 2, 2),
           L.index_take(x, (np.array([0, 1, -1], np.int32), np.array([2, 5, 0], np.int32)), (0, 1)),
           L.optimization_barrier((m, x))[0]]
    return out


def test_shape_functions_match_jax():
    both(_shapes, X, M, np.int32(1), exact=True)


def _scatters(L, x, idx, upd):
    dn = L.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    return [L.scatter_sub(x, idx, upd, dn), L.scatter_sub(x, idx, upd, dn, mode="clip"),
            L.scatter_apply(x, idx, L.neg, dn, update_shape=upd.shape),
            L.scatter_apply(x, idx, lambda v: L.mul(v, np.float32(10)), dn, update_shape=upd.shape, mode="clip"),
            L.sort_key_val(x[0], x[1]), L.sort_key_val(x, -x, 0, False)]


def test_scatter_sub_apply_and_sort_key_val_match_jax():
    x = np.array([[3.0, -1.0, 2.0, 0.5], [1.0, 4.0, -2.0, 2.0], [0.0, 1.0, 1.0, 1.0]], np.float32)
    both(_scatters, x, np.array([[0], [2], [0], [5]], np.int32), np.ones((4, 4), np.float32) * 1.5, exact=True)


def test_fft_rng_and_dot_match_jax():
    key = np.array([1, 2, 3, 4], np.uint32)
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8)

    def fn(L, key, x):
        k1, bits = L.rng_bit_generator(key, (3, 2))
        k2, bytes_ = L.rng_bit_generator(k1, (5,), np.uint8, L.RandomAlgorithm.RNG_THREE_FRY)
        c = L.fft(x, L.FftType.FFT, (8,))
        return [k1, bits, k2, bytes_, L.fft(x, "rfft", (2, 8)), c, L.fft(c, "IFFT", (8,)),
                L.fft(L.fft(x, L.FftType.RFFT, (8,)), L.FftType.IRFFT, (8,)), L.fft(x, "fft", ()),
                L.dot(x, x[0]), L.dot(x.T, x, precision=L.Precision.HIGHEST), L.dot(x[0], x[1]),
                L.dot(x, x, dimension_numbers=(((1,), (1,)), ((0,), (0,))), preferred_element_type=np.float32)]
    both(fn, key, x, rtol=1e-5)


def test_ragged_dot_matches_jax_in_its_three_modes():
    rng = np.random.default_rng(0)
    lhs, rhs = rng.normal(size=(7, 4)).astype(np.float32), rng.normal(size=(3, 4, 5)).astype(np.float32)
    b3, r3 = rng.normal(size=(2, 7, 4)).astype(np.float32), rng.normal(size=(2, 4, 5)).astype(np.float32)
    r33 = rng.normal(size=(2, 3, 4, 5)).astype(np.float32)

    def fn(L, lhs, rhs, b3, r3, r33):
        R = L.RaggedDotDimensionNumbers
        sizes = np.array([2, 0, 4], np.int32)  # (the last row is in no group: zeros)
        return [L.ragged_dot(lhs, rhs, sizes), L.ragged_dot(lhs, rhs, np.array([3, 3, 3], np.int32)),
                L.ragged_dot_general(b3, r3, np.array([1, 3], np.int32), R((([2], [1]), ([0], [0])), [2], [])),
                L.ragged_dot_general(b3, r3, np.array([1, 1], np.int32), R((([2], [1]), ([0], [0])), [0], [])),
                L.ragged_dot_general(b3, r33, sizes, R((([2], [2]), ([0], [0])), [1], [1]))]
    both(fn, lhs, rhs, b3, r3, r33, rtol=1e-5)


def test_conv_patches_and_local_match_jax():
    x = np.linspace(-1, 1, 2 * 5 * 6 * 3, dtype=np.float32).reshape(2, 5, 6, 3)
    dn = ("NHWC", "HWIO", "NHWC")
    w = np.linspace(-0.5, 1, 3 * 4 * 27 * 2, dtype=np.float32).reshape(3, 4, 27, 2)

    def fn(L, x, w):
        return [L.conv_general_dilated_patches(x, (3, 3), (1, 1), "SAME", dimension_numbers=dn),
                L.conv_general_dilated_patches(np.moveaxis(x, -1, 1), (2, 3), (2, 1), "VALID", rhs_dilation=(1, 2)),
                L.conv_general_dilated_local(x, w, (1, 1), "VALID", (3, 3), dimension_numbers=dn)]
    both(fn, x, w, rtol=1e-5)


def test_static_helpers_match_jax():
    dn = ("NHWC", "HWIO", "NHWC")
    cases = [
        ("broadcast_shapes", ((2, 1), (3,)), {}), ("broadcast_shapes", ((1, 4), (5, 1, 1), ()), {}),
        ("reduce_window_shape_tuple", ((4, 5), (2, 2), (1, 2), [(1, 0), (0, 1)], (2, 1), (1, 2)), {}),
        ("reduce_window_shape_tuple", ((7,), (3,), (2,), [(0, 0)]), {}),
        ("conv_shape_tuple", ((1, 2, 5, 5), (3, 2, 3, 3), (1, 2), "SAME"), {}),
        ("conv_shape_tuple", ((4, 2, 5, 6), (4, 2, 3, 3), (2, 1), [(1, 1), (0, 2)], 2), {}),
        ("conv_general_shape_tuple", ((1, 5, 6, 2), (3, 2, 2, 4), (2, 1), "VALID", dn), {}),
        ("conv_transpose_shape_tuple", ((1, 5, 5, 2), (3, 3, 2, 4), (2, 2), "SAME", dn), {}),
        ("conv_transpose_shape_tuple", ((1, 5, 5, 2), (3, 3, 2, 4), (2, 1), [(1, 1), (2, 0)], dn), {}),
    ]
    for name, args, kwargs in cases:
        assert getattr(lax, name)(*args, **kwargs) == tuple(int(n) for n in getattr(jax.lax, name)(*args, **kwargs)), name
    for value in (1.0, 2, True, 1j, np.float16(1), np.ones(2, np.int8), "float16", np.uint16):
        assert lax.dtype(value) == jax.lax.dtype(value), value
    for shape in ((2, 3), (5,), ()):
        want = np.asarray(jax.lax.shape_as_value(shape))
        got = lax.shape_as_value(shape)
        assert got.dtype == want.dtype and got.tolist() == want.tolist()
    assert lax.shape_as_value((2 ** 33,)).dtype == np.int64


def test_tokens_composite_platform_and_dce_sink():
    def fn(x):
        t = lax.after_all(lax.create_token(), lax.create_token())
        assert t.is_token
        tan = lax.composite(lambda v, scale: lax.mul(lax.div(lax.sin(v), lax.cos(v)), np.float32(scale)), "my.tan")
        y = tan(x, scale=2.0)
        lax.dce_sink(y * 3)
        lax.dce_sink((y, x), prevent_mlir_dce=True)
        z = lax.platform_dependent(x, cpu=lambda v: v + 1, cuda=lambda v: v + 2, default=lambda v: v + 3)
        return y, z, lax.platform_dependent(x, tpu=lambda v: v, default=lambda v: v * 0)
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    m = hf.trace(fn, x)
    assert 'stablehlo.composite "my.tan"' in m.text and "scale = 2.0" in m.text
    assert m.text.count("@dce_sink") == 2 and m.text.count("after_all") == 3
    y, z, w = (np.asarray(v) for v in hf.jit(fn)(x))
    np.testing.assert_allclose(y, 2 * np.tan(x), rtol=1e-6)
    np.testing.assert_array_equal(z, x + (2 if hf.config.device == "gpu" else 1))
    np.testing.assert_array_equal(w, 0 * x)


ERRORS = [
    (lambda x: lax.reshape(x, (5, 5)), TypeError, r"hloforge\.lax\.reshape: total size must be unchanged, got new_sizes "
                                                  r"\(5, 5\) \(of total size 25\) for shape \(2, 3, 4\)"),
    (lambda x: lax.reshape(x, (-1,)), TypeError, r"hloforge\.lax\.reshape: new_sizes must all be positive, got \(-1,\)"),
    (lambda x: lax.reshape(x, (24,), (0, 1)), TypeError, r"transpose: permutation isn't a permutation"),
    (lambda x: lax.reshape(x, (24,), out_sharding=1), ValueError, r"reshape: out_sharding=1 is not supported"),
    (lambda x: lax.broadcast_in_dim(x, (2, 4, 3), (0, 1, 2)), TypeError,
     r"broadcast_in_dim: operand dimension sizes must either be 1, or be equal"),
    (lambda x: lax.broadcast_in_dim(x, (2, 3), (0, 1)), TypeError, r"broadcast_dimensions must have length equal to "
                                                                    r"operand ndim; got broadcast_dimensions \(0, 1\)"),
    (lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (0, 0, 2)), TypeError, r"must be distinct dimensions of the output"),
    (lambda x: lax.broadcast_like(x, np.ones((3, 4))), ValueError, r"broadcast_like: incompatible types for "
                                                                   r"broadcasting: input type float32\[2, 3, 4\]"),
    (lambda x: lax.expand_dims(x, (0, 0)), ValueError, r"expand_dims: repeated axis: \[0, 0\]"),
    (lambda x: lax.expand_dims(x, (0, -5)), ValueError, r"expand_dims: repeated axis: \[0, 0\]"),
    (lambda x: lax.squeeze(x, (1,)), ValueError, r"squeeze: cannot select an axis to squeeze out which has size not "
                                                 r"equal to one, got shape=\(2, 3, 4\) and dimensions=\(1,\)"),
    (lambda x: lax.squeeze(x, (3,)), ValueError, r"squeeze: axis 3 is out of bounds for array of dimension 3"),
    (lambda x: lax.collapse(x, 2, 1), ValueError, r"collapse: invalid dimension range"),
    (lambda x: lax.transpose(x, (0, 1)), TypeError, r"permutation isn't a permutation of operand dimensions, got "
                                                    r"permutation \(0, 1\) for operand shape \(2, 3, 4\)"),
    (lambda x: lax.rev(x, (-1,)), TypeError, r"rev: dimensions must be in \[0, 3\), got \(-1,\)"),
    (lambda x: lax.rev(x, (1, 1)), TypeError, r"rev: dimensions must be unique, got \(1, 1\)"),
    (lambda x: lax.pad(x, np.float16(0), [(0, 0, 0)] * 3), TypeError,
     r"pad: operand and padding_value must be same dtype: got float32 and float16"),
    (lambda x: lax.pad(x, np.float32(0), [(0, 0, 0)] * 2), ValueError, r"pad: padding_config must hold one"),
    (lambda x: lax.pad(x, np.float32(0), [(0, 0, -1)] * 3), ValueError, r"interior padding in padding_config must be "
                                                                         r"nonnegative"),
    (lambda x: lax.pad(x, np.float32(0), [(-3, 0, 0)] * 3), ValueError, r"dimension size after padding is not at "
                                                                         r"least 0"),
    (lambda x: lax.pad(x, np.zeros(2, np.float32), [(0, 0, 0)] * 3), ValueError, r"padding_value must be a scalar"),
    (lambda x: lax.concatenate([], 0), ValueError, r"concatenate requires a non-empty sequence"),
    (lambda x: lax.concatenate([x, x], -1), TypeError, r"concatenate: dimension out of bounds: dimension -1"),
    (lambda x: lax.concatenate([x, x[0]], 0), TypeError, r"cannot concatenate arrays with different numbers of "
                                                         r"dimensions: got \(2, 3, 4\), \(3, 4\)"),
    (lambda x: lax.concatenate([x, x[:, :1]], 0), TypeError, r"shapes that differ in dimensions other than the one"),
    (lambda x: lax.concatenate([x, lax.convert_element_type(x, np.int32)], 0), TypeError,
     r"concatenate requires arguments to have the same dtypes, got float32, int32"),
    (lambda x: lax.split(x, (1, 1), 1), ValueError, r"split: sum of sizes 2 must be equal to dimension 1 of the operand "
                                                    r"shape \[2, 3, 4\]"),
    (lambda x: lax.split(x, (4, -1), 1), ValueError, r"sizes passed to split must be nonnegative, got \[4, -1\]"),
    (lambda x: lax.stack([]), ValueError, r"stack expects at least one operand, got 0"),
    (lambda x: lax.stack([x, x[0]]), ValueError, r"stack: all input arrays must have the same shape\. Got \(2, 3, 4\), "
                                                 r"\(3, 4\)"),
    (lambda x: lax.unstack(x[0, 0, 0]), ValueError, r"unstack requires arrays with rank > 0"),
    (lambda x: lax.tile(x, (2,)), TypeError, r"tile: reps length must be equal to the ndim of x, got len\(reps\)=1"),
    (lambda x: lax.full((2,), np.ones(2)), TypeError, r"full must be called with scalar fill_value, got "
                                                      r"fill_value\.shape \(2,\)"),
    (lambda x: lax.full((-1,), 0.0), TypeError, r"full: shape \(-1,\) has a negative dimension"),
    (lambda x: lax.full((2,), 0.0, sharding=1), ValueError, r"full: sharding=1 is not supported"),
    (lambda x: lax.slice(x, (0, 0, 0), (2, 3, 5)), TypeError, r"slice: need 0 <= start_indices <= limit_indices <= "
                                                              r"operand shape, got start_indices \(0, 0, 0\)"),
    (lambda x: lax.slice(x, (0, 0), (2, 3)), TypeError, r"slice: start_indices \(0, 0\), limit_indices \(2, 3\) and "
                                                        r"strides \(1, 1, 1\) need one entry per dimension"),
    (lambda x: lax.index_in_dim(x, 3, 1), IndexError, r"index_in_dim: index 3 is out of bounds for axis 1 with size 3"),
    (lambda x: lax.index_take(x, (np.array([0.5]),), (0,)), TypeError, r"index_take: the indices must be 1-d integer"),
    (lambda x: lax.scatter_apply(x, np.zeros((1, 1), np.int32), 3, None), TypeError, r"scatter_apply: func must be "
                                                                                     r"callable, got int"),
    (lambda x: lax.sort_key_val(x, x[0]), ValueError, r"sort: operand 1 shape \(3, 4\) differs from operand 0 shape \(2, 3, 4\)"),
    (lambda x: lax.fft(x, "Fft", (4,)), ValueError, r"fft: unknown FFT type 'Fft'"),
    (lambda x: lax.fft(x, 2, (4,)), TypeError, r"fft: unknown FFT type value '2'"),
    (lambda x: lax.fft(lax.complex(x, x), "rfft", (4,)), ValueError, r"only real valued inputs supported for rfft"),
    (lambda x: lax.fft(x, "fft", (2, 3, 4, 5)), ValueError, r"must have at least as many input dimensions as "
                                                            r"fft_lengths \(2, 3, 4, 5\)"),
    (lambda x: lax.rng_bit_generator(np.zeros(3, np.uint32), (2,)), TypeError, r"rng_bit_generator: key must be a "
                                                                               r"uint32\[4\] or uint64\[2\] array"),
    (lambda x: lax.rng_bit_generator(np.zeros(4, np.uint32), (2,), np.int32), TypeError,
     r"rng_bit_generator: unsupported dtype int32"),
    (lambda x: lax.dot(x, x), ValueError, r"dot: dimension_numbers must be specified when not performing simple "
                                          r"un-batched .* got lhs_shape=\(2, 3, 4\) rhs_shape=\(2, 3, 4\)"),
    (lambda x: lax.ragged_dot(x[0], x, np.array([1, 1, 1], np.int32)), TypeError,
     r"ragged_dot_general: rhs group dimension 0 of rhs shape \(2, 3, 4\) must have the 3 groups"),
    (lambda x: lax.ragged_dot(x[0], x, np.array([[1, 1]], np.int32)), TypeError,
     r"group_sizes must be a 1-d integer array"),
    (lambda x: lax.ragged_dot(x[0], x, np.array([1, 1], np.int32), group_offset=np.zeros(1, np.int32)), ValueError,
     r"ragged_dot_general: group_offset=.* is not supported"),
    (lambda x: lax.ragged_dot_general(x, x, np.array([1], np.int32), (((2,), (2,)), ((), ()))), TypeError,
     r"ragged_dot_dimension_numbers must be a RaggedDotDimensionNumbers, got tuple"),
    (lambda x: lax.dot_general(x, x, (((2,), (2,)), ((), ())), out_sharding=1), ValueError,
     r"dot_general: out_sharding=1 is not supported"),
    (lambda x: lax.after_all(x), TypeError, r"after_all: operand 0 must be a token"),
    (lambda x: lax.composite(3, "c"), TypeError, r"composite: decomposition must be callable, got int"),
    (lambda x: lax.composite(lambda v: v + x, "c")(x), ValueError, r"not visible here"),
    (lambda x: lax.platform_dependent(x, gpu=lambda v: v), ValueError, r"platform_dependent: use 'cuda' or 'rocm'"),
    (lambda x: lax.platform_dependent(x, tpu=lambda v: v), ValueError, r"platform_dependent: no branch for platform"),
    (lambda x: lax.platform_dependent(x, cpu=3), TypeError, r"platform_dependent: the 'cpu' branch must be a callable"),
]


@pytest.mark.parametrize("fn,exc,match", ERRORS)
def test_errors(fn, exc, match):
    refuses(fn, X, exc=exc, match=match)
