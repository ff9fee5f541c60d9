"""hloforge check's lowering of per-tensor quantized programs (runtime/check_quant.py): StableHLO's
stablehlo-legalize-quant-to-math op for op, against numpy, and one clear line for what it leaves out."""
from __future__ import annotations

import numpy as np
import pytest

import hloforge as hf
from hloforge.runtime import checkfile
from hloforge.runtime.check_quant import QuantizedUnsupported, lower_quantized

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
    (f"%0 = stablehlo.uniform_quantize %x : (tensor<8xf32>) -> tensor<8x{PER_AXIS}>\n"
     f"  %1 = stablehlo.add %0, %0 : (tensor<8x{PER_AXIS}>, tensor<8x{PER_AXIS}>) -> tensor<8x{PER_AXIS}>",
     r"line 3: stablehlo\.add of per-axis quantized values is not lowered"),
    (f"%0 = stablehlo.uniform_quantize %x : (tensor<8xf32>) -> tensor<8x{Q1}>\n"
     f"  %1 = stablehlo.dot_general %0, %0, contracting_dims = [0] x [0] : (tensor<8x{Q1}>, tensor<8x{Q1}>) -> "
     f"tensor<!quant.uniform<i32:f32, 1.5e-05>>",
     r"line 3: stablehlo\.dot_general of quantized values is not lowered \(StableHLO computes it in integer"),
    (f"%0 = stablehlo.constant dense<1> : tensor<8x{Q1}>", r"line 2: a quantized stablehlo\.constant is not lowered"),
    (f"%0 = stablehlo.uniform_quantize %x : (tensor<8xf32>) -> tensor<8x{Q1}>\n"
     f"  %1 = stablehlo.sort %0 : (tensor<8x{Q1}>) -> tensor<8x{Q1}>",
     r"line 3: stablehlo\.sort of quantized values is not lowered"),
    ("%0 = stablehlo.uniform_quantize %x : (tensor<8xf32>) -> tensor<8x!quant.uniform<i8:bf16, 0.5>>",
     r"expresses bf16: only f32 is lowered"),
])
def test_what_is_not_lowered_is_one_line(body, match):
    with pytest.raises(QuantizedUnsupported, match=match):
        lower_quantized(_program("  " + body + "\n  return %x : tensor<8xf32>"))


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
        f"%1 = stablehlo.dot_general %0, %0, contracting_dims = [] x [] : (tensor<4x{Q3}>, tensor<4x{Q3}>) -> "
        f"tensor<4x{Q3}>"))
    result, = checkfile.check_file(path)
    assert not result.ok and result.function == "main"
    assert result.reason.startswith("quantized program not lowered: line 8: stablehlo.dot_general of quantized")
