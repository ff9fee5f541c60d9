"""hloforge check's lowering of quantized programs (runtime/check_quant.py, check_quant_dot.py):
StableHLO's stablehlo-legalize-quant-to-math op for op, against numpy and jax, and one clear line for
what it leaves out."""
from __future__ import annotations

import numpy as np
import pytest

import hloforge as hf
from hloforge.runtime import checkfile
from hloforge.runtime.check_quant import QuantizedUnsupported, lower_quantized
from helpers import assert_close

Q1 = "!quant.uniform<i8:f32, 0.0039215482917486456:-128>"
Q2 = "!quant.uniform<i8:f32, 0.0029866351800806384:-128>"
Q3 = "!quant.uniform<i8:f32, 0.05:3>"
PER_AXIS = "!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>"
X = np.array([-1.7, -0.51, -0.0, 0.2, 0.49803925, 0.5, 0.99, 1.3], np.float32)


def quantize(x, scale, zero, low=-128, high=127):
    """The pass's quantize: round_nearest_even(clamp(x / scale + zp)) in f32."""
    value = np.clip(x / np.float32(scale) + np.float32(zero), np.float32(low), np.float32(high))
    return np.round(value).astype(np.int8)  # (numpy rounds half to even)


def dequantize(q, scale, zero):
    return ((q.astype(np.int32) - np.int32(zero)).astype(np.float32) * np.float32(scale)).astype(np.float32)


def run(text: str, *args):
    m = hf.Module.parse(lower_quantized(text))
    return [np.asarray(o) for o in m.compile().call_flat(list(args))]


def _program(body: str, result: str = "tensor<8xf32>") -> str:
    return f"func.func @main(%x: tensor<8xf32>) -> {result} {{\n{body}\n}}"


def test_quantize_dequantize_round_trip():
    text = _program(f"""  %0 = stablehlo.uniform_quantize %x : (tensor<8xf32>) -> tensor<8x{Q1}>
  %1 = stablehlo.uniform_dequantize %0 : (tensor<8x{Q1}>) -> tensor<8xf32>
  return %1 : tensor<8xf32>""")
    got, = run(text, X)
    want = dequantize(quantize(X, 0.0039215482917486456, -128), 0.0039215482917486456, -128)
    np.testing.assert_array_equal(got, want)


def test_an_elementwise_op_is_dequantized_computed_and_quantized():
    text = _program(f"""  %0 = stablehlo.uniform_quantize %x : (tensor<8xf32>) -> tensor<8x{Q1}>
  %1 = stablehlo.tanh %0 : (tensor<8x{Q1}>) -> tensor<8x{Q2}>
  %2 = stablehlo.uniform_dequantize %1 : (tensor<8x{Q2}>) -> tensor<8xf32>
  return %2 : tensor<8xf32>""")
    got, = run(text, X)
    s1, s2 = 0.0039215482917486456, 0.0029866351800806384
    want = dequantize(quantize(np.tanh(dequantize(quantize(X, s1, -128), s1, -128)), s2, -128), s2, -128)
    np.testing.assert_allclose(got, want, atol=1e-6)  # (XLA's tanh may round an ulp apart from numpy's)


def test_an_operand_used_twice_is_dequantized_once():
    text = _program(f"""  %0 = stablehlo.uniform_quantize %x : (tensor<8xf32>) -> tensor<8x{Q3}>
  %1 = stablehlo.multiply %0, %0 : (tensor<8x{Q3}>, tensor<8x{Q3}>) -> tensor<8x{Q3}>
  %2 = stablehlo.uniform_dequantize %1 : (tensor<8x{Q3}>) -> tensor<8xf32>
  return %2 : tensor<8xf32>""")
    assert lower_quantized(text).count("stablehlo.convert %0 :") == 1
    got, = run(text, X)
    d = dequantize(quantize(X, 0.05, 3), 0.05, 3)
    np.testing.assert_array_equal(got, dequantize(quantize(d * d, 0.05, 3), 0.05, 3))


def test_requantize_and_quantized_add_use_integer_math():
    text = _program(f"""  %0 = stablehlo.uniform_quantize %x : (tensor<8xf32>) -> tensor<8x{Q1}>
  %1 = stablehlo.uniform_quantize %0 : (tensor<8x{Q1}>) -> tensor<8x{Q3}>
  %2 = stablehlo.add %0, %1 : (tensor<8x{Q1}>, tensor<8x{Q3}>) -> tensor<8x{Q3}>
  %3 = stablehlo.uniform_dequantize %2 : (tensor<8x{Q3}>) -> tensor<8xf32>
  return %3 : tensor<8xf32>""")
    got, = run(text, X)
    s1, z1, s3, z3 = 0.0039215482917486456, -128, 0.05, 3
    merged = s1 / s3
    q0 = quantize(X, s1, z1)

    def requantize(q, low=-128, high=127):  # (the pass: q * (s1 / s3) + (z3 - z1 * s1 / s3) in f32, rounded)
        value = q.astype(np.float32) * np.float32(merged) + np.float32(z3 - z1 * merged)
        return np.round(np.clip(value, low, high) if high < 2 ** 31 - 1 else value).astype(np.int32)
    q1 = requantize(q0).astype(np.int8)
    total = np.clip(requantize(q0, -2 ** 31, 2 ** 31 - 1) + q1.astype(np.int32) - z3, -128, 127)
    np.testing.assert_array_equal(got, dequantize(total.astype(np.int8), s3, z3))


def test_data_movement_runs_on_the_storage_type():
    text = f"""func.func @main(%x: tensor<2x4xf32>) -> tensor<4x2xf32> {{
  %0 = stablehlo.uniform_quantize %x : (tensor<2x4xf32>) -> tensor<2x4x{Q1}>
  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<2x4x{Q1}>) -> tensor<4x2x{Q1}>
  %2 = stablehlo.uniform_dequantize %1 : (tensor<4x2x{Q1}>) -> tensor<4x2xf32>
  return %2 : tensor<4x2xf32>
}}"""
    lowered = lower_quantized(text)
    assert "stablehlo.transpose %0, dims = [1, 0] : (tensor<2x4xi8>) -> tensor<4x2xi8>" in lowered
    got, = run(text, X.reshape(2, 4))
    s = 0.0039215482917486456
    np.testing.assert_array_equal(got, dequantize(quantize(X.reshape(2, 4), s, -128), s, -128).T)


def test_per_axis_types_quantize_and_requantize_slice_by_slice():
    """StableHLO's interpreter tests (quantized_ops.mlir): scales and zero points along axis 0."""
    text = f"""func.func @main(%x: tensor<2xf32>) -> (tensor<2xi8>, tensor<2xi8>, tensor<2xf32>) {{
  %0 = "stablehlo.uniform_quantize"(%x) : (tensor<2xf32>) -> tensor<2x{PER_AXIS}>
  %1 = "stablehlo.bitcast_convert"(%0) : (tensor<2x{PER_AXIS}>) -> tensor<2xi8>
  %2 = "stablehlo.uniform_quantize"(%0) : (tensor<2x{PER_AXIS}>) -> tensor<2x!quant.uniform<i8:f32:0, {{0.1:-20,0.2:-30}}>>
  %3 = "stablehlo.bitcast_convert"(%2) : (tensor<2x!quant.uniform<i8:f32:0, {{0.1:-20,0.2:-30}}>>) -> tensor<2xi8>
  %4 = "stablehlo.uniform_dequantize"(%0) : (tensor<2x{PER_AXIS}>) -> tensor<2xf32>
  return %1, %3, %4 : tensor<2xi8>, tensor<2xi8>, tensor<2xf32>
}}"""
    quantized, requantized, dequantized = run(text, np.array([4.0, 15.0], np.float32))
    np.testing.assert_array_equal(quantized, [10, 10])
    np.testing.assert_array_equal(requantized, [20, 45])
    np.testing.assert_allclose(dequantized, [4.0, 15.0], rtol=1e-6)


def test_text_without_quantized_types_is_left_alone():
    text = _program("  return %x : tensor<8xf32>")
    assert lower_quantized(text) is text


@pytest.mark.parametrize("body, match", [
    (f"%0 = stablehlo.constant dense<1> : tensor<8x{Q1}>", r"line 2: a quantized stablehlo\.constant is not lowered"),
    (f"%0 = stablehlo.uniform_quantize %x : (tensor<8xf32>) -> tensor<8x{Q1}>\n"
     f"  %1 = stablehlo.sort %0 : (tensor<8x{Q1}>) -> tensor<8x{Q1}>",
     r"line 3: stablehlo\.sort of quantized values is not lowered"),
    ("%0 = stablehlo.uniform_quantize %x : (tensor<8xf32>) -> tensor<8x!quant.uniform<i8:bf16, 0.5>>",
     r"expresses bf16: only f32 is lowered"),
    (f"%0 = stablehlo.uniform_quantize %x : (tensor<8xf32>)\n      -> tensor<8x{Q1}>",
     r"line 3: a quantized op written over several lines is not lowered"),
    (f"%0:2 = stablehlo.optimization_barrier %x, %x : tensor<8x{Q1}>, tensor<8x{Q1}>",
     r"line 2: a quantized op with several results is not lowered"),
    (f"%0 = stablehlo.uniform_quantize %y : (tensor<?xf32>) -> tensor<?x{Q1}>",
     r"line 2: dynamically shaped quantized values are not lowered"),
])
def test_what_is_not_lowered_is_one_line(body, match):
    with pytest.raises(QuantizedUnsupported, match=match):
        lower_quantized(_program("  " + body + "\n  return %x : tensor<8xf32>"))


def test_a_signature_over_several_lines_takes_storage_types():
    text = f"""func.func @main(%a: tensor<2x{Q3}>,
                %b: tensor<2x{Q3}>) -> tensor<2x{Q3}> {{
  %0 = stablehlo.maximum %a, %b : tensor<2x{Q3}>
  return %0 : tensor<2x{Q3}>
}}"""
    assert "%b: tensor<2xi8>) -> tensor<2xi8> {" in lower_quantized(text)


TESTDATA = f"""// RUN: stablehlo-translate --interpret -split-input-file %s

module {{
  func.func @main() -> tensor<4xf32> {{
    %cst = stablehlo.constant dense<[-0.5, 0.25, 0.75, 1.0]> : tensor<4xf32>
    %cst_0 = stablehlo.constant dense<[{', '.join(repr(float(v)) for v in dequantize(
        quantize(-np.array([-0.5, 0.25, 0.75, 1.0], np.float32), 0.05, 3), 0.05, 3))}]> : tensor<4xf32>
    %0 = stablehlo.uniform_quantize %cst : (tensor<4xf32>) -> tensor<4x{Q3}>
    %1 = stablehlo.negate %0 : (tensor<4x{Q3}>) -> tensor<4x{Q3}>
    %2 = stablehlo.uniform_dequantize %1 : (tensor<4x{Q3}>) -> tensor<4xf32>
    %3 = stablehlo.custom_call @check.eq(%cst_0, %2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<i1>
    return %2 : tensor<4xf32>
  }}
}}
"""


@pytest.mark.parametrize("optimize", [False, True])
def test_hloforge_check_runs_a_quantized_testdata_file(tmp_path, optimize):
    path = tmp_path / "negate_qi8.mlir"
    path.write_text(TESTDATA)
    results = checkfile.check_file(path, optimize=optimize)
    assert [(r.ok, r.function) for r in results] == [(True, "main")], results


def test_hloforge_check_names_what_it_does_not_lower(tmp_path):
    path = tmp_path / "dot_qi8.mlir"
    path.write_text(TESTDATA.replace(
        f"%1 = stablehlo.negate %0 : (tensor<4x{Q3}>) -> tensor<4x{Q3}>",
        f"%1 = stablehlo.dot %0, %0 : (tensor<4x{Q3}>, tensor<4x{Q3}>) -> tensor<!quant.uniform<i32:f32, 0.0025>>"))
    result, = checkfile.check_file(path)
    assert not result.ok and result.function == "main"
    assert result.reason.startswith("quantized program not lowered: line 8: stablehlo.dot of quantized vectors")


# ---------------------------------------------------------------- dot_general, dot, convolution

def _function(arguments: dict, body: str, results: dict) -> str:
    """``@main`` over ``arguments`` (name: type) returning ``results`` (name: type)."""
    args = ", ".join(f"%{n}: {t}" for n, t in arguments.items())
    names, types = ", ".join(f"%{n}" for n in results), ", ".join(results.values())
    return f"func.func @main({args}) -> ({types}) {{\n{body}\n  return {names} : {types}\n}}"


def _quantized_ints(shape, seed, low=-9, high=9):
    return np.random.default_rng(seed).integers(low, high, shape).astype(np.int8)


@pytest.mark.parametrize("rhs_type, scales, zeros", [
    ("!quant.uniform<i8:f32, 0.25:3>", [0.25], [3]),
    ("!quant.uniform<i8<-127:127>:f32:1, {0.1:-2,0.5:4}>", [0.1, 0.5], [-2, 4]),
])
def test_hybrid_dot_general_dequantizes_the_weights_behind_a_barrier(rhs_type, scales, zeros):
    """Float lhs by quantized rhs: the rhs dequantized in f32 (per axis along its dim 1), a float dot."""
    text = _function({"x": "tensor<3x4xf32>", "w": f"tensor<4x2x{rhs_type}>"},
                     f"  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<3x4xf32>, "
                     f"tensor<4x2x{rhs_type}>) -> tensor<3x2xf32>", {"0": "tensor<3x2xf32>"})
    assert "stablehlo.optimization_barrier %w : tensor<4x2xi8>" in lower_quantized(text)
    x, w = np.random.default_rng(0).uniform(-2, 2, (3, 4)).astype(np.float32), _quantized_ints((4, 2), 1)
    got, = run(text, x, w)
    weights = (w.astype(np.float32) - np.float32(zeros)) * np.float32(scales)
    assert_close(got, x @ weights, np.float32)


LHS_Q, RHS_Q = "!quant.uniform<i8:f32, 0.5:-3>", "!quant.uniform<i8:f32, 0.25:5>"


@pytest.mark.parametrize("result_scale, result_zero", [(0.125, 7), (0.4, -2)])
def test_integer_dot_general_corrects_for_both_zero_points(result_scale, result_zero):
    """Both operands quantized: an i32 dot of the storage values, less zr * sum(l) + zl * sum(r) -
    K * zl * zr; scaled by s_l * s_r / s_res (and truncated) only when that is not 1."""
    res_q = f"!quant.uniform<i32:f32, {result_scale}:{result_zero}>"
    lhs_t, rhs_t, res_t = f"tensor<2x5x3x4x{LHS_Q}>", f"tensor<2x4x3x6x{RHS_Q}>", f"tensor<2x5x6x{res_q}>"
    text = _function({"l": lhs_t, "r": rhs_t},
                     f"  %0 = stablehlo.dot_general %l, %r, batching_dims = [0] x [0], contracting_dims = [3, 2] x "
                     f"[1, 2] : ({lhs_t}, {rhs_t}) -> {res_t}", {"0": res_t})
    lhs, rhs = _quantized_ints((2, 5, 3, 4), 2), _quantized_ints((2, 4, 3, 6), 3)
    got, = run(text, lhs, rhs)
    l, r = lhs.astype(np.int64), rhs.astype(np.int64)
    combined = 0.5 * 0.25 / result_scale
    if combined == 1:  # (then the result is the exact dot of the centered values)
        want = np.einsum("bmjk,bkjn->bmn", l + 3, r - 5) + result_zero
    else:  # (the pass truncates the scaled dot and the scaled zero-point offset each)
        offset = 5 * l.sum((2, 3))[:, :, None] - 3 * r.sum((1, 2))[:, None, :] - 12 * -3 * 5
        dot = np.einsum("bmjk,bkjn->bmn", l, r)
        c = np.float32(combined)
        want = np.trunc(dot.astype(np.float32) * c) - np.trunc(offset.astype(np.float32) * c) + result_zero
    np.testing.assert_array_equal(got, want.astype(np.int32))


def test_integer_dot_of_a_per_axis_rhs():
    """``dot`` as a dot_general over [1] x [0]; a per-axis rhs (zero points 0) and result whose
    scales keep one ratio: (l - zl) @ r, the combined scale being 1."""
    rhs_q, res_q = "!quant.uniform<i8:f32:1, {0.1,0.2}>", "!quant.uniform<i32:f32:1, {0.05,0.1}>"
    lhs_t, rhs_t, res_t = "tensor<3x4x!quant.uniform<i8:f32, 0.5:2>>", f"tensor<4x2x{rhs_q}>", f"tensor<3x2x{res_q}>"
    text = _function({"l": lhs_t, "r": rhs_t}, f'  %0 = "stablehlo.dot"(%l, %r) : ({lhs_t}, {rhs_t}) -> {res_t}',
                     {"0": res_t})
    lhs, rhs = _quantized_ints((3, 4), 4), _quantized_ints((4, 2), 5)
    got, = run(text, lhs, rhs)
    np.testing.assert_array_equal(got, (lhs.astype(np.int32) - 2) @ rhs.astype(np.int32))


_CONVOLUTIONS = {  # layout: (lhs shape, rhs shape, dim_numbers, jax's dimension numbers)
    "nhwc": ((2, 6, 5, 2), (3, 2, 2, 3), "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]", ("NHWC", "HWIO", "NHWC")),
    "nchw": ((2, 2, 6, 5), (3, 2, 3, 2), "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]", ("NCHW", "OIHW", "NCHW")),
}


@pytest.mark.parametrize("layout, rhs_q, res_q", [
    ("nhwc", "!quant.uniform<i8:f32, 0.25>", "!quant.uniform<i32:f32, 0.125:4>"),
    ("nchw", "!quant.uniform<i8:f32, 0.25>", "!quant.uniform<i32:f32, 0.125:4>"),
    ("nhwc", "!quant.uniform<i8:f32:3, {0.25,0.5,0.75}>", "!quant.uniform<i32:f32:3, {0.125,0.25,0.375}>"),
])
def test_integer_convolution_pads_with_the_zero_point(layout, rhs_q, res_q):
    """The pass's integer convolution: the lhs padded with its zero point, an i32 convolution without
    padding, less zl * (the kernel summed per output channel), plus the result's zero point."""
    import jax
    lhs_shape, rhs_shape, dim_numbers, jax_dims = _CONVOLUTIONS[layout]
    lhs_t, rhs_t = f"tensor<{'x'.join(map(str, lhs_shape))}x{LHS_Q}>", f"tensor<{'x'.join(map(str, rhs_shape))}x{rhs_q}>"
    lhs, rhs = _quantized_ints(lhs_shape, 6), _quantized_ints(rhs_shape, 7)
    window = dict(window_strides=(2, 1), padding=((1, 2), (2, 0)), rhs_dilation=(1, 2))
    want = jax.lax.conv_general_dilated(lhs.astype(np.float32) + 3, rhs.astype(np.float32), **window,
                                        dimension_numbers=jax_dims)  # (small integers: exact in f32)
    res_t = f"tensor<{'x'.join(map(str, want.shape))}x{res_q}>"
    text = _function({"l": lhs_t, "r": rhs_t},
                     f"  %0 = stablehlo.convolution(%l, %r) dim_numbers = {dim_numbers}, window = {{stride = [2, 1], "
                     f"pad = [[1, 2], [2, 0]], rhs_dilate = [1, 2]}} {{batch_group_count = 1 : i64, "
                     f"feature_group_count = 1 : i64}} : ({lhs_t}, {rhs_t}) -> {res_t}", {"0": res_t})
    lowered = lower_quantized(text)
    assert "stablehlo.constant dense<-3> : tensor<i8>" in lowered and "xf32" not in lowered
    got, = run(text, lhs, rhs)
    zero = 0 if ":3," in res_q else 4
    np.testing.assert_array_equal(got, np.asarray(want).astype(np.int32) + zero)


def test_a_convolution_the_integer_kernel_declines_goes_through_f32():
    """A non-zero rhs zero point (as in StableHLO's testdata): the pass's fallback, dequantize, an f32
    convolution, quantize."""
    lhs_t, rhs_t, res_t = (f"tensor<1x4x4x1x{LHS_Q}>", f"tensor<2x2x1x1x{RHS_Q}>",
                           "tensor<1x3x3x1x!quant.uniform<i32:f32, 0.125>>")
    text = _function({"l": lhs_t, "r": rhs_t},
                     f"  %0 = stablehlo.convolution(%l, %r) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
                     f"window = {{}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : "
                     f"({lhs_t}, {rhs_t}) -> {res_t}", {"0": res_t})
    assert "(tensor<1x4x4x1xf32>, tensor<2x2x1x1xf32>) -> tensor<1x3x3x1xf32>" in lower_quantized(text)
    lhs, rhs = _quantized_ints((1, 4, 4, 1), 8), _quantized_ints((2, 2, 1, 1), 9)
    got, = run(text, lhs, rhs)
    l, r = dequantize(lhs, 0.5, -3).reshape(4, 4), dequantize(rhs, 0.25, 5).reshape(2, 2)
    windows = np.lib.stride_tricks.sliding_window_view(l, (2, 2))
    want = np.round(np.einsum("ijkl,kl->ij", windows, r) / np.float32(0.125)).astype(np.int32)
    np.testing.assert_array_equal(got.reshape(3, 3), want)


P32 = "!quant.uniform<i32:f32:1, {0.5:3,0.25:-2,1.0:0}>"
P8 = "!quant.uniform<i8:f32:1, {0.5:3,0.25:-2,1.0:0}>"


def test_per_axis_add_maximum_and_minimum():
    """Per-axis add of one i32 type: the sum less the zero points along the axis; of i8 types: through
    f32 (the pass's fallback); maximum/minimum of one type: on the storage values."""
    t32, t8 = f"tensor<2x3x{P32}>", f"tensor<2x3x{P8}>"
    text = _function({"a": t32, "b": t32, "c": t8, "d": t8},
                     f"  %0 = stablehlo.add %a, %b : {t32}\n  %1 = stablehlo.add %c, %d : {t8}\n"
                     f"  %2 = stablehlo.maximum %c, %d : {t8}\n  %3 = stablehlo.minimum %c, %d : {t8}",
                     {"0": t32, "1": t8, "2": t8, "3": t8})
    a, b = (_quantized_ints((2, 3), s).astype(np.int32) * 1000 for s in (10, 11))
    c, d = _quantized_ints((2, 3), 12), _quantized_ints((2, 3), 13)
    added32, added8, largest, smallest = run(text, a, b, c, d)
    scales, zeros = np.float32([0.5, 0.25, 1.0]), np.int32([3, -2, 0])
    np.testing.assert_array_equal(added32, a + b - zeros)
    real = ((c.astype(np.int32) - zeros) * scales) + ((d.astype(np.int32) - zeros) * scales)
    np.testing.assert_array_equal(added8, np.round(np.clip(real / scales + zeros, -128, 127)).astype(np.int8))
    np.testing.assert_array_equal(largest, np.maximum(c, d))
    np.testing.assert_array_equal(smallest, np.minimum(c, d))


_PER_AXIS_RHS = "tensor<4x2x!quant.uniform<i8:f32:1, {0.1:1,0.2:0}>>"


@pytest.mark.parametrize("arguments, line, match", [
    ({"l": f"tensor<3x4x{LHS_Q}>", "r": _PER_AXIS_RHS},
     f"%0 = stablehlo.dot_general %l, %r, contracting_dims = [1] x [0] : (tensor<3x4x{LHS_Q}>, {_PER_AXIS_RHS}) -> "
     f"tensor<3x2x!quant.uniform<i32:f32:1, {{0.05,0.1}}>>",
     r"line 2: stablehlo\.dot_general of a per-axis rhs or result with non-zero zero points is not lowered"),
    ({"l": f"tensor<3x4x{LHS_Q}>", "r": "tensor<4x2x!quant.uniform<i8:f32:1, {0.1,0.2}>>"},
     f"%0 = stablehlo.dot_general %l, %r, contracting_dims = [1] x [0] : (tensor<3x4x{LHS_Q}>, "
     f"tensor<4x2x!quant.uniform<i8:f32:1, {{0.1,0.2}}>>) -> tensor<3x2x!quant.uniform<i32:f32:1, {{0.05,0.3}}>>",
     r"per-axis result scales are not proportional to the rhs's"),
    ({"l": f"tensor<2x3x4x{LHS_Q}>", "r": f"tensor<3x2x4x{RHS_Q}>"},
     f"%0 = stablehlo.dot_general %l, %r, batching_dims = [0, 1] x [1, 0], contracting_dims = [2] x [2] : "
     f"(tensor<2x3x4x{LHS_Q}>, tensor<3x2x4x{RHS_Q}>) -> tensor<2x3x!quant.uniform<i32:f32, 0.125>>",
     r"batching dims \[1, 0\] out of order and a zero-point correction is not lowered"),
    ({"l": "tensor<1x4x4x1x!quant.uniform<u8:f32, 0.5:3>>", "r": "tensor<2x2x1x1x!quant.uniform<u8:f32, 0.25>>"},
     "%0 = stablehlo.convolution(%l, %r) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = "
     "{pad = [[1, 0], [0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1x!"
     "quant.uniform<u8:f32, 0.5:3>>, tensor<2x2x1x1x!quant.uniform<u8:f32, 0.25>>) -> tensor<1x4x3x1x!quant.uniform<"
     "i32:f32, 0.125>>",
     r"a padded stablehlo\.convolution of ui8 values is not lowered \(the pass pads with an i8 zero point\)"),
])
def test_what_the_pass_would_compute_wrongly_is_refused(arguments, line, match):
    with pytest.raises(QuantizedUnsupported, match=match):
        lower_quantized(_function(arguments, "  " + line, {}))
