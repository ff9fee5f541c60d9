"""Integer division by zero: numpy's 0 in hloforge.numpy, XLA's run-time values for StableHLO
divides, and never a crash (XLA's constant folder kills the process with SIGFPE on x / 0)."""
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import hloforge as hf
from hloforge import numpy as hnp
from hloforge import ops
from hloforge.passes import guards

INT_DTYPES = [np.int8, np.int32, np.int64, np.uint8, np.uint32]


def _numpy(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def _operands(dtype):
    info = np.iinfo(dtype)
    a = np.array([5, info.max, 0, 7, info.min, 9], dtype)
    b = np.array([0, 0, 0, 2, 1 if info.min == 0 else -1, 4], dtype)
    return a, b


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("name, fn", [("floor_divide", lambda x, y: x // y), ("remainder", lambda x, y: x % y)])
def test_numpy_integer_division_by_runtime_zero_is_zero(dtype, name, fn):
    a, b = _operands(dtype)
    out = hf.jit(fn)(a, b)
    np.testing.assert_array_equal(np.asarray(out), _numpy(fn, a, b))
    assert np.asarray(out).dtype == dtype


@pytest.mark.parametrize("dtype", [np.int32, np.uint8])
@pytest.mark.parametrize("optimize", [True, False])
def test_numpy_integer_division_by_folded_zero(dtype, optimize):
    a, b = _operands(dtype)
    out = hf.jit(lambda: (hnp.asarray(a) // hnp.asarray(b), hnp.asarray(a) % hnp.asarray(b),
                          hnp.asarray(a) // (hnp.asarray(a) * 0)), optimize=optimize)()
    np.testing.assert_array_equal(np.asarray(out[0]), _numpy(np.floor_divide, a, b))
    np.testing.assert_array_equal(np.asarray(out[1]), _numpy(np.remainder, a, b))
    np.testing.assert_array_equal(np.asarray(out[2]), np.zeros_like(a))


T = "tensor<4xi32>"


def _module(body, args=""):
    return hf.Module.parse(f"func.func @main({args}) -> {T} {{\n{body}\n return %0 : {T}\n}}")


CONST_DIVIDEND = f" %x = stablehlo.constant dense<[5, -5, 7, 9]> : {T}\n"


def test_divide_by_constant_zero_fires_and_keeps_xla_runtime_values():
    m = _module(f" %c = stablehlo.constant dense<[1, 0, 2, 0]> : {T}\n"
                f" %0 = stablehlo.divide %a, %c : {T}", f"%a: {T}")
    report = m.optimize("pattern:divide_by_constant_zero")
    assert report.fired["divide_by_constant_zero"] == 1
    assert "dense<[1, 1, 2, 1]>" in m.text and m.op_counts()["stablehlo.select"] == 1
    a = np.int32([5, -5, 7, 9])
    np.testing.assert_array_equal(m.compile()(a), [5, -1, 3, -1])


def test_remainder_by_constant_zero_fires_and_keeps_xla_runtime_values():
    m = _module(f" %c = stablehlo.constant dense<[1, 0, 2, 0]> : {T}\n"
                f" %0 = stablehlo.remainder %a, %c : {T}", f"%a: {T}")
    assert m.optimize("pattern:remainder_by_constant_zero").fired["remainder_by_constant_zero"] == 1
    np.testing.assert_array_equal(m.compile()(np.int32([5, -5, 7, 9])), [0, -5, 1, 9])


def test_splat_zero_divisor_becomes_xla_runtime_constant():
    m = _module(f" %c = stablehlo.constant dense<0> : {T}\n %0 = stablehlo.divide %a, %c : {T}", f"%a: {T}")
    m.optimize("division-guard")
    assert "stablehlo.divide" not in m.text
    np.testing.assert_array_equal(m.compile()(np.int32([5, -5, 7, 9])), [-1] * 4)


def test_division_guard_does_not_fire_on_zero_free_or_runtime_divisors():
    m = _module(f" %c = stablehlo.constant dense<[1, 3, 2, -1]> : {T}\n %d = stablehlo.divide %a, %c : {T}\n"
                f" %0 = stablehlo.remainder %d, %b : {T}", f"%a: {T}, %b: {T}")
    before = m.text
    assert not m.optimize("division-guard").fired
    assert m.text == before
    f = hf.Module.parse("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                        " %c = stablehlo.constant dense<0.0> : tensor<2xf32>\n"
                        " %0 = stablehlo.divide %a, %c : tensor<2xf32>\n return %0 : tensor<2xf32>\n}")
    assert not f.optimize("division-guard").fired


def test_division_by_folded_divisor_fires_once():
    m = _module(CONST_DIVIDEND + f" %z = stablehlo.constant dense<0> : {T}\n"
                f" %m = stablehlo.multiply %x, %z : {T}\n %0 = stablehlo.divide %x, %m : {T}")
    report = m.optimize("pattern:division_by_folded_divisor")
    assert report.fired["division_by_folded_divisor"] == 1
    assert guards.MARKER in m.text
    np.testing.assert_array_equal(m.compile()(), [-1] * 4)


def test_the_guards_say_why_in_words():
    m = _module(f" %c = stablehlo.constant dense<[1, 3, 2, -1]> : {T}\n %0 = stablehlo.divide %a, %c : {T}", f"%a: {T}")
    text = m.optimize("pattern:divide_by_constant_zero", debug=True).explain()
    assert "divide_by_constant_zero: declined 1 time: the constant divisor holds no 0 [1]" in text
    m = _module(f" %0 = stablehlo.remainder %a, %b : {T}", f"%a: {T}, %b: {T}")
    text = m.optimize("pattern:division_by_folded_divisor", debug=True).explain()
    assert ("division_by_folded_divisor: declined 1 time: the divisor is an argument of @main, which XLA cannot "
            "fold [1]") in text


def test_guard_divisions_leaves_safe_modules_alone():
    m = _module(f" %0 = stablehlo.divide %a, %a : {T}", f"%a: {T}")
    assert guards.guard_divisions(m) is m


def test_ops_divide_by_folded_zero_keeps_stablehlo_semantics():
    a = np.int32([5, -5, 7, 9])
    out = hf.jit(lambda: (ops.divide(hnp.asarray(a), hnp.asarray(a) * 0),
                          ops.remainder(hnp.asarray(a), hnp.asarray(a) * 0)))()
    np.testing.assert_array_equal(np.asarray(out[0]), [-1] * 4)
    np.testing.assert_array_equal(np.asarray(out[1]), a)


_CRASHES = r"""
import json, sys
import numpy as np
import hloforge as hf
from hloforge import numpy as hnp, ops
T = "tensor<4xi32>"
results = {}
a = np.array([5, -5], np.int32)
results["hnp_folded"] = np.asarray(hf.jit(lambda: hnp.asarray(a) // (hnp.asarray(a) * 0))()).tolist()
results["hnp_folded_unoptimized"] = np.asarray(
    hf.jit(lambda: hnp.asarray(a) % (hnp.asarray(a) * 0), optimize=False)()).tolist()
results["ops_folded"] = np.asarray(
    hf.jit(lambda: ops.divide(hnp.asarray(a), hnp.asarray(a) * 0), optimize=False)()).tolist()
for op in ("divide", "remainder"):
    for divisor in ("dense<0>", "dense<[1, 0, 2, 0]>"):
        text = (f"func.func @main() -> {T} {{\n %x = stablehlo.constant dense<[5, -5, 7, 9]> : {T}\n"
                f" %c = stablehlo.constant {divisor} : {T}\n %0 = stablehlo.{op} %x, %c : {T}\n"
                f" return %0 : {T}\n}}")
        results[f"{op} {divisor}"] = np.asarray(hf.Module.parse(text).compile()()).tolist()
print(json.dumps(results))
"""


def test_folded_zero_divisors_never_crash_the_process(tmp_path):
    out = subprocess.run([sys.executable, "-c", _CRASHES], capture_output=True, text=True, timeout=180,
                         env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1"))
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    results = json.loads(out.stdout.strip().splitlines()[-1])
    assert results["hnp_folded"] == [0, 0]
    assert results["hnp_folded_unoptimized"] == [0, 0]
    assert results["ops_folded"] == [-1, -1]
    assert results["divide dense<0>"] == [-1] * 4
    assert results["divide dense<[1, 0, 2, 0]>"] == [5, -1, 3, -1]
    assert results["remainder dense<0>"] == [5, -5, 7, 9]
    assert results["remainder dense<[1, 0, 2, 0]>"] == [0, -5, 1, 9]


def test_cli_run_of_a_module_dividing_by_constant_zero(tmp_path):
    path = tmp_path / "div0.mlir"
    path.write_text(f"func.func @main() -> {T} {{\n %x = stablehlo.constant dense<[5, -5, 7, 9]> : {T}\n"
                    f" %c = stablehlo.constant dense<0> : {T}\n %0 = stablehlo.divide %x, %c : {T}\n"
                    f" return %0 : {T}\n}}")
    out = subprocess.run([sys.executable, "-m", "hloforge.runtime.cli.main", "run", str(path)],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1"))
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert "-1" in out.stdout, out.stdout


@pytest.mark.parametrize("element, dtype", [("ui8", np.uint8), ("ui32", np.uint32), ("i8", np.int8),
                                            ("i64", np.int64)])
@pytest.mark.parametrize("op", ["divide", "remainder"])
def test_guarded_results_are_xla_runtime_results(element, dtype, op):
    t = f"tensor<4x{element}>"
    guarded = hf.Module.parse(
        f"func.func @main(%a: {t}) -> ({t}, {t}) {{\n %x = stablehlo.constant dense<[5, 6, 7, 9]> : {t}\n"
        f" %c = stablehlo.constant dense<[1, 0, 2, 0]> : {t}\n %0 = stablehlo.{op} %x, %c : {t}\n"
        f" %1 = stablehlo.{op} %a, %c : {t}\n return %0, %1 : {t}, {t}\n}}")
    runtime = hf.Module.parse(f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n %0 = stablehlo.{op} %a, %b : {t}\n"
                              f" return %0 : {t}\n}}")
    x, c = np.array([5, 6, 7, 9], dtype), np.array([1, 0, 2, 0], dtype)
    want = np.asarray(runtime.compile()(x, c))
    for got in guarded.compile()(x):
        np.testing.assert_array_equal(np.asarray(got), want)
    guarded.optimize()
    assert "dense<[1, 0, 2, 0]>" not in guarded.text
    for got in guarded.compile()(x):
        np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_reciprocal_of_zero_follows_numpy(dtype):
    x = np.array([0, 1, 2, 3], dtype)
    want = _numpy(np.reciprocal, x)
    np.testing.assert_array_equal(np.asarray(hf.jit(hnp.reciprocal)(x)), want)
    np.testing.assert_array_equal(np.asarray(hf.jit(lambda: hnp.reciprocal(x))()), want)  # (a constant 0)


# ---------------------------------------------------------------- convert of complex to real

_COMPLEX_SPLATS = """
import json
import numpy as np
import hloforge as hf
from hloforge import ops

results = {}
for name, make in [("splat", lambda: ops.constant(np.full(3, 1.5 + 2j, np.complex64))),
                   ("0-d", lambda: ops.constant(np.array(-2.5 + 1j, np.complex128))),
                   ("broadcast", lambda: ops.broadcast_in_dim(ops.constant(np.array(3 - 1j, np.complex64)), (2,), ()))]:
    for dtype in ["float32", "float16", "int32", "bool"]:
        m = hf.trace(lambda: ops.convert(make(), np.dtype(dtype)))
        results[f"{name} {dtype}"] = np.asarray(m.compile()()).tolist()
print(json.dumps(results))
"""


def test_convert_of_a_complex_splat_to_real_never_crashes():
    # (XLA:CPU segfaults compiling these unguarded: a literal splat, a 0-d one, and one XLA folds)
    out = subprocess.run([sys.executable, "-c", _COMPLEX_SPLATS], capture_output=True, text=True, timeout=180,
                         env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1"))
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    results = json.loads(out.stdout.strip().splitlines()[-1])
    assert results["splat float32"] == results["splat float16"] == [1.5] * 3
    assert results["splat int32"] == [1] * 3 and results["splat bool"] == [True] * 3
    assert results["0-d float32"] == -2.5 and results["0-d int32"] == -2 and results["0-d bool"] is True
    assert results["broadcast float16"] == [3.0, 3.0] and results["broadcast bool"] == [True, True]


COMPLEX_VALUES = np.array([1 + 2j, 1j, 0, -0.0 + 0j, np.nan + 0j, complex(0, np.nan), 2.7 - 3j, -1.5 + 1j],
                          np.complex64)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int32, np.uint8, np.bool_])
def test_convert_of_complex_keeps_xla_runtime_values(dtype):
    runtime = hf.trace(lambda x: ops.convert(x, dtype), hf.ShapeDtype((8,), np.complex64))
    want = np.asarray(runtime.compile()(COMPLEX_VALUES))
    assert guards.guard_for_xla(runtime) is not runtime  # (rewritten wherever the operand comes from)
    folded = hf.trace(lambda: ops.convert(ops.constant(COMPLEX_VALUES), dtype))
    guarded = guards.guard_for_xla(folded)
    assert "stablehlo.real" in guarded.text and "stablehlo.real" not in folded.text
    np.testing.assert_array_equal(np.asarray(folded.compile()()), want)
    if np.dtype(dtype).kind in "fb":  # (numpy's NaN or negative -> unsigned is undefined; XLA's saturates)
        np.testing.assert_array_equal(want, COMPLEX_VALUES.real.astype(dtype))


def test_convert_guard_leaves_real_and_complex_results_alone():
    for fn, spec in [(lambda x: ops.convert(x, np.complex128), hf.ShapeDtype((3,), np.complex64)),
                     (lambda x: ops.convert(x, np.complex64), hf.ShapeDtype((3,), np.float32)),
                     (lambda x: ops.convert(x, np.int32), hf.ShapeDtype((3,), np.float32))]:
        m = hf.trace(fn, spec)
        assert guards.guard_for_xla(m) is m
