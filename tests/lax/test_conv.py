"""ops.convolution and hloforge.lax's convolutions against jax.lax on grids of layouts, strides,
dilations, paddings, groups and dtypes (many cases per traced module: compiles dominate)."""
from __future__ import annotations

import jax
import numpy as np
import pytest
from jax import lax

import hloforge as hf
from hloforge import ops
from hloforge.frontend.ops.convolution import ConvDimensions, conv_evaluate

from ad_helpers import CHEAP_COMPILE
from helpers import RTOL, assert_close, random

# name, lhs shape, rhs shape, conv_general_dilated keyword arguments
CASES = [
    ("2d_same", (2, 3, 8, 7), (4, 3, 3, 3), dict(window_strides=(1, 1), padding="SAME")),
    ("2d_valid_stride", (2, 3, 9, 8), (5, 3, 3, 2), dict(window_strides=(2, 3), padding="VALID")),
    ("2d_same_lower", (1, 2, 7, 6), (3, 2, 4, 2), dict(window_strides=(2, 1), padding="SAME_LOWER")),
    ("2d_explicit_negative", (2, 3, 8, 8), (4, 3, 3, 3), dict(window_strides=(1, 2), padding=((2, -1), (0, 3)))),
    ("2d_dilations", (1, 2, 9, 9), (2, 2, 3, 2),
     dict(window_strides=(1, 1), padding=((1, 1), (2, 0)), lhs_dilation=(2, 1), rhs_dilation=(1, 3))),
    ("2d_rhs_dilation_same", (2, 4, 10, 10), (4, 4, 3, 3), dict(window_strides=(2, 2), padding="SAME", rhs_dilation=(2, 2))),
    ("2d_groups", (2, 6, 7, 7), (9, 2, 3, 3), dict(window_strides=(1, 1), padding="SAME", feature_group_count=3)),
    ("2d_depthwise", (1, 4, 6, 6), (8, 1, 3, 3), dict(window_strides=(1, 1), padding="VALID", feature_group_count=4)),
    ("2d_batch_groups", (4, 3, 6, 5), (6, 3, 2, 2), dict(window_strides=(1, 1), padding="VALID", batch_group_count=2)),
    ("nhwc_hwio", (2, 7, 6, 3), (3, 3, 3, 5),
     dict(window_strides=(2, 2), padding="SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    ("nhwc_to_nchw", (2, 7, 6, 3), (3, 2, 3, 4),
     dict(window_strides=(1, 1), padding="VALID", dimension_numbers=("NHWC", "HWIO", "NCHW"))),
    ("permuted_spatial", (2, 6, 3, 7), (4, 3, 3, 2),
     dict(window_strides=(1, 2), padding="SAME", dimension_numbers=("NWCH", "OHIW", "NHWC"))),
    ("1d", (3, 2, 11), (4, 2, 3), dict(window_strides=(2,), padding="SAME")),
    ("1d_nwc", (3, 11, 2), (3, 2, 4), dict(window_strides=(1,), padding=((1, 2),), dimension_numbers=("NWC", "WIO", "NWC"))),
    ("3d", (1, 2, 5, 4, 6), (3, 2, 2, 3, 2), dict(window_strides=(1, 2, 1), padding="SAME")),
    ("0_spatial", (3, 4), (5, 4), dict(window_strides=(), padding=())),
    ("zero_batch", (0, 3, 5, 5), (2, 3, 3, 3), dict(window_strides=(1, 1), padding="SAME")),
    ("zero_features", (2, 0, 5, 5), (2, 0, 3, 3), dict(window_strides=(1, 1), padding="VALID")),
    ("window_larger_than_input", (1, 1, 2, 2), (1, 1, 3, 3), dict(window_strides=(1, 1), padding="VALID")),
    ("1x1", (2, 8, 4, 4), (16, 8, 1, 1), dict(window_strides=(1, 1), padding="VALID")),
]


def _inputs(dtype):
    return [(random(l, dtype, seed=i), random(r, dtype, seed=100 + i)) for i, (_, l, r, _) in enumerate(CASES)]


def _every_case(arrays):
    return [lax.conv_general_dilated(x, w, precision="highest", **kw) for (x, w), (_, _, _, kw) in zip(arrays, CASES)]


_EVERY_CASE = {}  # wide dtype -> compiled: float16 and bfloat16 reuse float32's


def _jax_reference(arrays, dtype):
    """Every case in one jax program, compiled without LLVM's optimizations (integer results are exact
    either way; float ones are compared with a tolerance)."""
    wide = np.float32 if np.dtype(dtype).itemsize <= 2 else dtype
    with jax.enable_x64(np.dtype(dtype).itemsize == 8 or np.dtype(dtype).kind == "c" and np.dtype(dtype).itemsize == 16):
        wide_arrays = [(x.astype(wide), w.astype(wide)) for x, w in arrays]
        key = np.dtype(wide)
        if key not in _EVERY_CASE:
            _EVERY_CASE[key] = jax.jit(_every_case).lower(wide_arrays).compile(compiler_options=CHEAP_COMPILE)
        return [np.asarray(y) for y in _EVERY_CASE[key](wide_arrays)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, hf.bfloat16, np.complex64, np.int32],
                         ids=lambda d: np.dtype(d).name)
def test_conv_general_dilated_matches_jax(dtype):
    arrays = _inputs(dtype)

    def fn(*flat):
        return [hf.lax.conv_general_dilated(flat[2 * i], flat[2 * i + 1], precision="highest", **kw)
                for i, (_, _, _, kw) in enumerate(CASES)]

    got = hf.jit(fn)(*[a for pair in arrays for a in pair])
    for (name, *_), g, want in zip(CASES, got, _jax_reference(arrays, dtype)):
        g = np.asarray(g)
        assert g.dtype == np.dtype(dtype), name
        if np.dtype(dtype).kind in "iu":
            np.testing.assert_array_equal(g, want, err_msg=name)
        else:
            rtol = {np.dtype(np.float16): 1e-2, hf.bfloat16: 5e-2}.get(np.dtype(dtype), 1e-5)
            assert_close(g.astype(want.dtype), want, rtol=rtol, atol=rtol * max(1.0, float(np.abs(want).max(initial=0))) * 4)


def test_conv_evaluate_agrees_with_xla():
    """The numpy evaluate on every case (float64 and int32), dimension numbers as ops reads them."""
    for dtype in (np.float64, np.int32):
        arrays = _inputs(dtype)
        modules = []
        for (x, w), (name, _, _, kw) in zip(arrays, CASES):
            m = hf.trace(lambda a, b, kw=kw: hf.lax.conv_general_dilated(a, b, **kw), x, w)
            (op,) = [o for o in m.walk() if o.name == "stablehlo.convolution"]
            from hloforge.frontend.registry import OPS
            params = OPS["stablehlo.convolution"].decode(op)
            modules.append((name, x, w, params))
        got = hf.jit(lambda *flat: [ops.convolution(flat[2 * i], flat[2 * i + 1], **p)
                                    for i, (_, _, _, p) in enumerate(modules)])(*[a for _, x, w, _ in modules for a in (x, w)])
        for (name, x, w, p), g in zip(modules, got):
            want = conv_evaluate(x, w, **p)
            if dtype == np.int32:  # (exact: always evaluated)
                assert want is not None, name
                np.testing.assert_array_equal(np.asarray(g), want, err_msg=name)
            elif want is not None:  # (float sums whose partial results round are left to XLA)
                np.testing.assert_array_equal(np.asarray(g), want, err_msg=name)


def test_window_reversal_flips_the_kernel_and_precision_pairs():
    x, w = random((2, 3, 6, 5), np.float32, 1), random((4, 3, 3, 2), np.float32, 2)
    fn = hf.jit(lambda x, w: (ops.convolution(x, w, window_reversal=(True, False), precision=("HIGHEST", "HIGH")),
                              ops.convolution(x, w, window_reversal=(True, True), padding=((1, 1), (0, 1)))))
    a, b = fn(x, w)
    want_a, want_b = jax.jit(lambda x, w: (
        lax.conv_general_dilated(x, jax.numpy.flip(w, 2), (1, 1), "VALID", precision="highest"),
        lax.conv_general_dilated(x, jax.numpy.flip(w, (2, 3)), (1, 1), ((1, 1), (0, 1)), precision="highest")))(x, w)
    assert_close(a, np.asarray(want_a))
    assert_close(b, np.asarray(want_b))
    text = hf.trace(lambda x, w: ops.convolution(x, w, precision=("HIGHEST", "HIGH")), x, w).text
    assert "precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGH>]" in text
    assert "window = {}" in text  # (no window attributes given: none emitted)


def test_conv_and_conv_transpose_match_jax():
    x = random((2, 3, 7, 6), np.float32, 3)
    w = random((4, 3, 3, 3), np.float32, 4)
    xt = random((2, 5, 6, 3), np.float32, 5)
    wt = random((3, 3, 3, 4), np.float32, 6)
    wt2 = random((3, 3, 4, 3), np.float32, 9)  # (transpose_kernel: I and O swap)
    cases = [("SAME", None, False), ("VALID", None, False), ("SAME", (2, 1), True), (((1, 2), (0, 1)), None, False)]

    def fn(x, w, xt, wt, wt2):
        out = [hf.lax.conv(x, w, (1, 2), "SAME"), hf.lax.conv_with_general_padding(x, w, (1, 1), ((1, 0), (2, 1)), (2, 1), (1, 2))]
        out += [hf.lax.conv_transpose(xt, wt if not t else wt2, (2, 2), p, rhs_dilation=d, transpose_kernel=t)
                for p, d, t in cases]
        out.append(hf.lax.conv_transpose(xt, wt, (2, 3), ((1, 1), (2, 0)), use_consistent_padding=True))
        return out

    got = hf.jit(fn)(x, w, xt, wt, wt2)

    def jax_fn(x, w, xt, wt, wt2):  # (one jax.jit: eager jax compiles every primitive on its own)
        want = [lax.conv(x, w, (1, 2), "SAME"),
                lax.conv_with_general_padding(x, w, (1, 1), ((1, 0), (2, 1)), (2, 1), (1, 2))]
        want += [lax.conv_transpose(xt, wt if not t else wt2, (2, 2), p, rhs_dilation=d, transpose_kernel=t)
                 for p, d, t in cases]
        want.append(lax.conv_transpose(xt, wt, (2, 3), ((1, 1), (2, 0)), use_consistent_padding=True))
        return want
    want = jax.jit(jax_fn)(x, w, xt, wt, wt2)
    for g, w_ in zip(got, want):
        assert_close(g, np.asarray(w_), rtol=1e-5)


def test_dimension_numbers_forms():
    dn = hf.lax.conv_dimension_numbers((2, 7, 6, 3), (3, 3, 3, 5), ("NHWC", "HWIO", "NHWC"))
    assert dn == hf.lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert tuple(dn) == tuple(lax.conv_dimension_numbers((2, 7, 6, 3), (3, 3, 3, 5), ("NHWC", "HWIO", "NHWC")))
    jdn = lax.conv_dimension_numbers((2, 7, 6, 3), (3, 3, 3, 5), ("NHWC", "HWIO", "NHWC"))
    x, w = random((2, 7, 6, 3), np.float32, 7), random((3, 3, 3, 5), np.float32, 8)
    a, b = hf.jit(lambda x, w: (hf.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=jdn),
                                hf.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn)))(x, w)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert ConvDimensions.default(4) == ConvDimensions(0, 1, (2, 3), 1, 0, (2, 3), 0, 1, (2, 3))


X, W = hf.ShapeDtype((2, 4, 6, 6), np.float32), hf.ShapeDtype((6, 2, 3, 3), np.float32)


@pytest.mark.parametrize("fn,error,match", [
    (lambda x, w: ops.convolution(x, ops.convert(w, np.float64)), TypeError,
     r"convolution: lhs dtype float32 and rhs dtype float64 differ"),
    (lambda x, w: ops.convolution(x, w), ValueError,
     r"kernel input features 2 times feature_group_count 1 must equal the input features 4"),
    (lambda x, w: ops.convolution(x, w, feature_group_count=3), ValueError,
     r"input features 4 are not divisible by feature_group_count 3"),
    (lambda x, w: ops.convolution(x, w, feature_group_count=2, batch_group_count=2), ValueError,
     r"feature_group_count 2 and batch_group_count 2 cannot both be > 1"),
    (lambda x, w: ops.convolution(x, w, feature_group_count=2, window_strides=(0, 1)), ValueError,
     r"window_strides \[0, 1\] must be >= 1"),
    (lambda x, w: ops.convolution(x, w, feature_group_count=2, window_strides=(1,)), ValueError,
     r"window_strides \[1\] must have 2 entries, one per spatial dimension"),
    (lambda x, w: ops.convolution(x, w, feature_group_count=2, padding=((1, 2, 3), (0, 0))), ValueError,
     r"padding must be a sequence of \(low, high\) int pairs"),
    (lambda x, w: ops.convolution(x, w, feature_group_count=2, padding=((-7, 0), (0, 0))), ValueError,
     r"spatial dimension 0 is negative \(-1\) after padding \[-7, 0\]"),
    (lambda x, w: ops.convolution(x, w, ConvDimensions(0, 1, (2, 2), 1, 0, (2, 3), 0, 1, (2, 3)), feature_group_count=2),
     ValueError, r"input dimension numbers \[0, 1, 2, 2\] must be a permutation of range\(4\)"),
    (lambda x, w: ops.convolution(x, w, (0, 1), feature_group_count=2), TypeError,
     r"dimension_numbers must be an ops.ConvDimensions"),
    (lambda x, w: ops.convolution(x, w, feature_group_count=2, precision="FAST"), ValueError,
     r"precision 'FAST' is not one of DEFAULT, HIGH, HIGHEST"),
    (lambda x, w: ops.convolution(ops.compare(x, x, "EQ"), ops.compare(w, w, "EQ")), TypeError,
     r"convolution: operand dtype bool is not supported"),
    (lambda x, w: ops.convolution(x, w, preferred_element_type=np.complex64), TypeError,
     r"convolution: preferred_element_type complex64 does not hold a contraction of float32 operands"),
    (lambda x, w: ops.convolution(x, w, batch_group_count=4), ValueError,
     r"kernel input features 2 times feature_group_count 1 must equal"),
    (lambda x, w: ops.convolution(ops.reshape(x, (2, 4, 36)), w), ValueError,
     r"lhs \(2, 4, 36\) and rhs \(6, 2, 3, 3\) must have one rank >= 2"),
    (lambda x, w: hf.lax.conv_general_dilated(x, w, (1, 1), "SAME", lhs_dilation=(2, 1)), ValueError,
     r"String padding is not implemented for transposed convolution"),
    (lambda x, w: hf.lax.conv_general_dilated(x, w, (1, 1), "FULL"), RuntimeError,
     r"Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got FULL"),
    (lambda x, w: hf.lax.conv_general_dilated(x, w, (1, 1), [(1,), (2,)]), ValueError,
     r"padding argument to conv_general_dilated should be a string or a sequence of \(low, high\) pairs"),
    (lambda x, w: hf.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW")), TypeError,
     r"convolution dimension_numbers list/tuple must be length 3"),
    (lambda x, w: hf.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCH")), TypeError,
     r"convolution dimension_numbers\[2\] must have len equal to the ndim of lhs and rhs, got 3"),
    (lambda x, w: hf.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHX")), TypeError,
     r"convolution dimension_numbers elements must each have the same set of spatial characters"),
    (lambda x, w: hf.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHH", "OIHW", "NCHW")), TypeError,
     r"convolution dimension_numbers\[0\] cannot have duplicate characters, got NCHH"),
    (lambda x, w: hf.lax.conv_general_dilated(x, w, (1,), "SAME"), ValueError,
     r"conv_general_dilated: window_strides \[1\] must have 2 entries"),
    (lambda x, w: hf.lax.conv_general_dilated(x, ops.convert(w, np.float16), (1, 1), "SAME"), TypeError,
     r"conv_general_dilated requires arguments to have the same dtypes, got float32, float16"),
    (lambda x, w: hf.lax.conv_general_dilated(x, w, (1, 1), "SAME", precision="fastest-ever"), ValueError,
     r"precision 'fastest-ever' is not a jax.lax.Precision"),
])
def test_errors(fn, error, match):
    with pytest.raises(error, match=match):
        hf.trace(fn, X, W)


def test_preferred_element_type_accumulates_wider():
    x = np.full((1, 1, 4, 4), 100, np.int8)
    w = np.full((1, 1, 3, 3), 100, np.int8)
    y = hf.jit(lambda x, w: hf.lax.conv_general_dilated(x, w, (1, 1), "VALID", preferred_element_type=np.int32))(x, w)
    np.testing.assert_array_equal(np.asarray(y), np.full((1, 1, 2, 2), 90000, np.int32))
    assert RTOL  # (helpers' tolerances are what the float cases use)


@pytest.mark.parametrize("x_dtype, preferred, match", [
    (np.float32, np.int32, r"preferred_element_type int32 is incompatible with float32 operands"),
    (np.int8, np.uint16, r"preferred_element_type uint16 must have the signedness of the int8 operands"),
    (np.int32, np.int16, r"preferred_element_type int16 must not be narrower than the int32 operands"),
])
def test_conv_preferred_element_type_errors_as_jax(x_dtype, preferred, match):
    x, w = np.ones((1, 1, 4, 4), x_dtype), np.ones((1, 1, 3, 3), x_dtype)
    with pytest.raises(TypeError, match=match):
        hf.jit(lambda x, w: hf.lax.conv_general_dilated(x, w, (1, 1), "VALID", preferred_element_type=preferred))(x, w)
    with pytest.raises(TypeError):
        jax.lax.conv_general_dilated(x, w, (1, 1), "VALID", preferred_element_type=preferred)


def test_conv_preferred_element_type_keeps_the_operands_as_jax():
    import ml_dtypes
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 5)).astype(ml_dtypes.bfloat16)
    w = np.random.default_rng(1).standard_normal((3, 2, 3, 3)).astype(ml_dtypes.bfloat16)
    f = hf.jit(lambda x, w: hf.lax.conv_general_dilated(x, w, (1, 1), "VALID", preferred_element_type=np.float32))
    assert "stablehlo.convert" not in f.lower(x, w).text
    want = jax.jit(lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), "VALID",
                                                              preferred_element_type=np.float32))(x, w)
    got = np.asarray(f(x, w))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-6, atol=1e-6)
