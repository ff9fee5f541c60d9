"""Inlining changes no result bit: a constant that reached an op through a call keeps reaching it
through a call (a call boundary), unless XLA computes the same bits for the literal; unary_of_pad
moves only exact functions onto a padding value without finite math."""
from __future__ import annotations

import numpy as np
import pytest

import hloforge as hf
from hloforge import ops
from hloforge.frontend.calls import inline_calls
from hloforge.passes import fold

T = "tensor<4x5xf32>"
INPUTS = np.linspace(-3.7, 5.3, 20, dtype=np.float32).reshape(4, 5)


def _hex(array) -> str:
    return "0x" + np.ascontiguousarray(array).tobytes().hex().upper()


def _testdata_style(op: str) -> str:
    """StableHLO's testdata layout: @main applies ``op`` to what @inputs returns."""
    return f"""
    func.func public @main() -> {T} {{
      %0 = call @inputs() : () -> {T}
      %1 = stablehlo.{op} %0 : {T}
      return %1 : {T}
    }}
    func.func private @inputs() -> {T} {{
      %c = stablehlo.constant dense<"{_hex(INPUTS)}"> : {T}
      return %c : {T}
    }}"""


def bits(module, *args) -> list:
    return [np.ascontiguousarray(np.asarray(o)).tobytes() for o in module.compile().call_flat(list(args))]


def boundaries(module) -> int:
    return module.text.count("{hloforge.call_boundary}")


def inlined_copy(module):
    """A copy of ``module`` after the inline pass alone."""
    copy = module.clone()
    copy.optimize("inline")
    return copy


@pytest.mark.parametrize("op", ["tanh", "sine", "cosine", "tan", "logistic"])
def test_library_functions_of_a_constant_behind_a_call_keep_their_bits(op):
    # (XLA folds tanh of a literal with its import folders, and of a constant behind a call with its
    # HLO evaluator once it has inlined the call: they round these inputs differently)
    m = hf.Module.parse(_testdata_style(op))
    raw = bits(m)
    plain = m.clone()
    inline_calls(plain.mlir, ["main"])  # (inlining without call boundaries)
    assert bits(plain) != raw
    inlined = inlined_copy(m)
    assert bits(inlined) == raw and boundaries(inlined) == 1
    report = m.optimize()
    assert report.fired["call_of_function"] == 1 and report.fired["call_boundary_of_constant"] == 0
    assert bits(m) == raw and boundaries(m) == 1
    assert m.op_counts()["func.func"] == 2  # (@main and the identity of the boundary)


PAD_CALL = """
func.func public @main(%x: tensor<4xf32>) -> tensor<6xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0 = call @_pad(%x, %c) : (tensor<4xf32>, tensor<i32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}
func.func private @_pad(%a: tensor<4xf32>, %v: tensor<i32>) -> tensor<6xf32> {
  %0 = stablehlo.convert %v : (tensor<i32>) -> tensor<f32>
  %1 = stablehlo.pad %a, %0, low = [1], high = [1], interior = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<6xf32>
  return %1 : tensor<6xf32>
}
"""


def test_boundary_of_a_padding_value_goes_at_once():
    """jax's _pad takes its padding value through a call: convert folds exactly and pad moves data."""
    m = hf.Module.parse(PAD_CALL)
    x = np.arange(4, dtype=np.float32)
    raw = bits(m, x)
    m.optimize("inline,symbol-dce")
    assert boundaries(m) == 0 and "func.call" not in m.op_counts() and m.op_counts()["func.func"] == 1
    assert bits(m, x) == raw


def test_boundaries_that_meet_go_together():
    """pad(a, v1) + pad(b, v2) with v1, v2 through calls: binary_of_pads adds v1 + v2, which XLA
    folds exactly once both are literals (not while one is still behind a call)."""
    text = PAD_CALL.replace(
        "%0 = call @_pad(%x, %c) : (tensor<4xf32>, tensor<i32>) -> tensor<6xf32>\n  return %0",
        "%0 = call @_pad(%x, %c) : (tensor<4xf32>, tensor<i32>) -> tensor<6xf32>\n"
        "  %1 = stablehlo.sine %x : tensor<4xf32>\n"
        "  %2 = call @_pad(%1, %c) : (tensor<4xf32>, tensor<i32>) -> tensor<6xf32>\n"
        "  %3 = stablehlo.add %0, %2 : tensor<6xf32>\n  return %3")
    m = hf.Module.parse(text)
    x = np.arange(4, dtype=np.float32)
    raw = bits(m, x)
    inlined = inlined_copy(m)
    assert boundaries(inlined) == 0
    report = m.optimize()
    assert report.fired["binary_of_pads"] == 1 and boundaries(m) == 0 and m.op_counts()["func.func"] == 1
    assert bits(m, x) == raw


def _constant_into(body: str, value: str, dtype: str = "f32") -> str:
    """@main(%x) calls @f(%x, constant ``value``); @f's ``body`` uses %a (x) and %c (the constant)."""
    t = f"tensor<4x{dtype}>"
    return f"""
    func.func public @main(%x: {t}) -> {t} {{
      %c = stablehlo.constant dense<{value}> : {t}
      %0 = call @f(%x, %c) : ({t}, {t}) -> {t}
      return %0 : {t}
    }}
    func.func private @f(%a: {t}, %c: {t}) -> {t} {{
      %0 = {body} : {t}
      return %0 : {t}
    }}"""


# (XLA's import folders fold ops of literals only; an op with an operand XLA computes at run time
# compiles the same whether its constant is a literal or comes through a call: measured for float
# add, subtract, multiply, divide, power, atan2, remainder, max and min of ±0, ±1, 2, 0.5, 3, ±inf,
# NaNs and subnormals on either side, f64/f16/bf16/c64 arithmetic, broadcasts, reduce inits and dots)
@pytest.mark.parametrize("body, value, dtype, dropped", [
    ("stablehlo.divide %a, %c", "3.0", "f32", True),
    ("stablehlo.add %a, %c", "-0.0", "f32", True),
    ("stablehlo.remainder %a, %c", "3.0", "f32", True),
    ("stablehlo.maximum %a, %c", "0.0", "f32", True),
    ("stablehlo.tanh %c", "0.5", "f32", False),  # (a library function of constants only)
    ("stablehlo.negate %c", "0.5", "f32", True),  # (exact: XLA folds it to the same bits)
    ("stablehlo.multiply %a, %c", "3", "i32", True),
    ("stablehlo.select %p, %a, %c", "2.5", "f32", True),
    ("stablehlo.compare LT, %a, %c", "2.5", "f32", True),
])
def test_boundary_goes_only_where_xla_computes_the_same_bits(body, value, dtype, dropped):
    if "%p" in body:
        body = body.replace("%p", "%b")
        text = _constant_into(body, value, dtype).replace(
            "    func.func private @f(%a: tensor<4xf32>, %c: tensor<4xf32>) -> tensor<4xf32> {\n",
            "    func.func private @f(%a: tensor<4xf32>, %c: tensor<4xf32>) -> tensor<4xf32> {\n"
            "      %z = stablehlo.constant dense<0.0> : tensor<4xf32>\n"
            "      %b = stablehlo.compare GT, %a, %z : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n")
        text = text.replace(f"%0 = {body} : tensor<4xf32>", f"%0 = {body} : tensor<4xi1>, tensor<4xf32>")
    elif body.startswith("stablehlo.compare"):
        text = _constant_into(body, value, dtype).replace(
            f"%0 = {body} : tensor<4xf32>\n      return %0 : tensor<4xf32>",
            f"%1 = {body} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n"
            "      %0 = stablehlo.select %1, %a, %a : tensor<4xi1>, tensor<4xf32>\n      return %0 : tensor<4xf32>")
    else:
        text = _constant_into(body, value, dtype)
    m = hf.Module.parse(text)
    x = np.array([-0.0, 1.5, -2.5, 7.0]).astype(np.dtype(dtype.replace("f", "float").replace("i", "int")))
    raw = bits(m, x)
    m.optimize("inline")
    assert boundaries(m) == (0 if dropped else 1), m.text
    report = m.optimize(finite_math=False)
    assert report.fired["call_boundary_of_constant"] == 0  # (decided at inlining; nothing new since)
    assert bits(m, x) == raw


def test_fold_drops_a_boundary_once_its_constant_is_a_literal():
    """@inputs returns convert(c): not a literal at inlining; constant folding makes it one, then the
    boundary goes (its constant only feeds a pad)."""
    text = PAD_CALL.replace("%c = stablehlo.constant dense<0> : tensor<i32>\n  %0 = call @_pad(%x, %c)",
                            "%i = stablehlo.constant dense<0.0> : tensor<f32>\n"
                            "  %c = stablehlo.convert %i : (tensor<f32>) -> tensor<i32>\n  %0 = call @_pad(%x, %c)")
    m = hf.Module.parse(text)
    x = np.arange(4, dtype=np.float32)
    raw = bits(m, x)
    inlined = inlined_copy(m)
    assert boundaries(inlined) == 1
    report = m.optimize()
    assert report.fired["call_boundary_of_constant"] == 1
    assert boundaries(m) == 0 and m.op_counts()["func.func"] == 1 and bits(m, x) == raw


ATAN2_OF_FOLDED = """
func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<1.5> : tensor<4xf32>
  %0 = call @f(%x, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @f(%a: tensor<4xf32>, %c: tensor<4xf32>) -> tensor<4xf32> {
  %l = stablehlo.constant dense<0.7> : tensor<4xf32>
  %k = stablehlo.cosine %l : tensor<4xf32>
  %0 = stablehlo.atan2 %k, %c : tensor<4xf32>
  %1 = stablehlo.add %0, %a : tensor<4xf32>
  return %1 : tensor<4xf32>
}
"""


def test_boundary_stays_next_to_a_value_xla_folds():
    """atan2(cos(0.7), c): hloforge leaves cos of a literal to XLA (a library function), which folds
    it, so with c a literal XLA would fold the atan2 too."""
    m = hf.Module.parse(ATAN2_OF_FOLDED)
    x = np.arange(4, dtype=np.float32)
    raw = bits(m, x)
    m.optimize()
    assert boundaries(m) == 1 and bits(m, x) == raw


def test_values_computed_from_arguments_cross_calls_as_they_are():
    m = hf.Module.parse(_constant_into("stablehlo.tanh %a", "1.0").replace(
        "%0 = call @f(%x, %c)", "%y = stablehlo.add %x, %c : tensor<4xf32>\n      %0 = call @f(%y, %y)"))
    m.optimize("inline")
    assert boundaries(m) == 0 and "func.call" not in m.op_counts()


def test_optimizing_twice_adds_no_boundary_and_keeps_bits():
    m = hf.Module.parse(_testdata_style("tanh"))
    raw = bits(m)
    m.optimize()
    m.optimize()
    assert boundaries(m) == 1 and bits(m) == raw


def test_modules_with_boundaries_differentiate():
    m = hf.Module.parse(ATAN2_OF_FOLDED)
    m.optimize()
    assert boundaries(m) == 1
    grads = m.vjp().compile()(np.arange(4, dtype=np.float32), np.ones(4, np.float32))
    np.testing.assert_array_equal(np.asarray(grads[-1] if isinstance(grads, (list, tuple)) else grads),
                                  np.ones(4, np.float32))


def test_boundary_functions_are_named_apart_from_the_modules_own():
    text = _testdata_style("tanh") + f"""
    func.func private @{fold.BOUNDARY_FUNCTION}() -> {T} {{
      %c = stablehlo.constant dense<1.0> : {T}
      return %c : {T}
    }}"""
    m = hf.Module.parse(text.replace("call @inputs()", f"call @{fold.BOUNDARY_FUNCTION}()"))
    raw = bits(m)
    m.optimize()
    assert bits(m) == raw and boundaries(m) == 1


# ---------------------------------------------------------------- unary_of_pad

def _unary_of_pad(fn, value):
    return hf.trace(lambda x: fn(ops.pad(x, np.float32(value), (1,), (2,), (0,))), hf.ShapeDtype((5,), np.float32))


@pytest.mark.parametrize("name, fn, exact", [
    ("tanh", ops.tanh, False), ("exp", ops.exp, False), ("abs", ops.abs, True), ("sqrt", ops.sqrt, True),
    ("convert", lambda x: ops.convert(x, np.int32), True)])
def test_unary_of_pad_without_finite_math_moves_only_exact_functions(name, fn, exact):
    x = np.linspace(-2, 2, 5).astype(np.float32)
    m = _unary_of_pad(fn, 0.3)
    raw = bits(m, x)
    report = m.optimize("pattern:unary_of_pad", finite_math=False)
    assert (report.fired["unary_of_pad"] == 1) == exact, name
    assert bits(m, x) == raw
    assert _unary_of_pad(fn, 0.3).optimize("pattern:unary_of_pad").fired["unary_of_pad"] == 1  # (finite math)


def test_unary_of_pad_of_tanh_would_change_bits():
    """Why tanh stays put without finite math: XLA folds tanh(0.3) to other bits than its kernel."""
    x = np.linspace(-2, 2, 5).astype(np.float32)
    m = _unary_of_pad(ops.tanh, 0.3)
    raw = bits(m, x)
    m.optimize("pattern:unary_of_pad")
    assert bits(m, x) != raw


def test_unary_of_shared_pad_without_finite_math_needs_exact_functions():
    spec = hf.ShapeDtype((5,), np.float32)
    for fn, fires in [(lambda p: (ops.tanh(p), ops.abs(p)), False), (lambda p: (ops.abs(p), ops.neg(p)), True)]:
        m = hf.trace(lambda x: fn(ops.pad(x, np.float32(0.3), (1,), (2,), (0,))), spec)
        x = np.linspace(-2, 2, 5).astype(np.float32)
        raw = bits(m, x)
        report = m.optimize("pattern:unary_of_shared_pad", finite_math=False)
        assert (report.fired["unary_of_shared_pad"] > 0) == fires
        assert bits(m, x) == raw
