"""inline: recursive private functions (self or mutual) are left as calls; the pass ends."""
import numpy as np
import pytest

import hloforge as hf

T = "tensor<4xf32>"


def _f(name, body, private=True):
    vis = "private " if private else ""
    return f"func.func {vis}@{name}(%a: {T}) -> {T} {{\n{body}\n}}\n"


def _call(callee, arg="%a", out="%0"):
    return f"  {out} = call @{callee}({arg}) : ({T}) -> {T}"


RET = "  return %0 : tensor<4xf32>"
SELF = _f("main", _call("f") + "\n" + RET, False) + _f("f", _call("f") + "\n" + RET)
MUTUAL = _f("main", _call("f") + "\n" + RET, False) + _f("f", _call("g") + "\n" + RET) + _f("g", _call("f") + "\n" + RET)
BACK_TO_MAIN = _f("main", _call("f") + "\n" + RET, False) + _f("f", _call("main") + "\n" + RET)
MIXED = (_f("main", _call("f") + "\n" + _call("h", "%0", "%1") + "\n  return %1 : tensor<4xf32>", False)
         + _f("f", _call("g") + "\n" + RET) + _f("g", _call("f") + "\n" + RET)
         + _f("h", f"  %0 = stablehlo.add %a, %a : {T}\n" + RET))
CHAIN = (_f("main", _call("f") + "\n" + RET, False) + _f("f", _call("g") + "\n" + RET)
         + _f("g", f"  %0 = stablehlo.multiply %a, %a : {T}\n" + RET))


@pytest.mark.parametrize("text", [SELF, MUTUAL, BACK_TO_MAIN], ids=["self", "mutual", "back-to-main"])
def test_recursive_calls_are_not_inlined_and_the_pass_ends(text):
    m = hf.Module.parse(text)
    calls = m.op_counts()["func.call"]
    report = m.optimize("inline")
    assert report.fired["call_of_function"] == 0
    assert m.op_counts()["func.call"] == calls
    m.optimize()  # the default pipeline ends too (XLA cannot compile recursion: IR check only)


def test_non_recursive_callees_next_to_recursive_ones_are_inlined():
    m = hf.Module.parse(MIXED)
    report = m.optimize("inline")
    assert report.fired["call_of_function"] == 1, "only @h"
    assert "call @h" not in m.text and "call @f" in m.text


def test_call_chains_are_inlined_and_keep_their_values():
    m = hf.Module.parse(CHAIN)
    x = np.float32([1, 2, 3, -4])
    before = np.asarray(m.compile()(x))
    m.optimize("inline,symbol-dce")
    assert "func.call" not in m.op_counts() and m.op_counts()["func.func"] == 1
    np.testing.assert_array_equal(np.asarray(m.compile()(x)), before)
