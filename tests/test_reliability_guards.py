"""Crash causes of a hostile-input sweep that now never kill the process: integer divisions whose
divisor XLA simplifies to 0 (SIGFPE in XLA:CPU's constant folder), jax's Python callbacks in a
parsed module (SIGSEGV when run), and concatenates with an empty operand (SIGABRT)."""
import json
import re
import os
import subprocess
import sys

import jax
import numpy as np
import pytest
from jax.experimental import io_callback

import hloforge as hf
from hloforge import numpy as hnp
from hloforge import ops
from hloforge.passes import guards
from hloforge.runtime.unsupported import python_callback

ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1")
CLI = [sys.executable, "-m", "hloforge.runtime.cli.main"]


def _subprocess(code, timeout=240):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=ENV)
    assert out.returncode == 0, (out.returncode, out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def _cli(*args):
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, timeout=180, env=ENV)


# ---------------------------------------------------------------- A1: divisors XLA simplifies to 0

_DIVISION_CRASHES = r"""
import json
import re
import jax, jax.numpy as jnp, numpy as np
from jax import lax
import hloforge as hf
from hloforge import ops
out = {}
x = np.array([5, -3, 7], np.int32)
c = np.array([7, 8, 9], np.int32)
out["issue"] = np.asarray(hf.jit(lambda x: ops.remainder(ops.constant(c), ops.multiply(
    x, ops.constant(np.zeros(3, np.int32)))))(x)).tolist()
out["x_minus_x"] = np.asarray(hf.jit(lambda x: ops.divide(ops.constant(c), ops.subtract(x, x)),
                                     optimize=False)(x)).tolist()
out["x_ne_x"] = np.asarray(hf.jit(lambda x: ops.divide(ops.constant(c), ops.convert(ops.compare(x, x, "NE"),
                                                                                   np.int32)))(x)).tolist()
for name, f in {"div": lambda x: lax.div(jnp.asarray(c), x * 0), "rem": lambda x: lax.rem(jnp.asarray(c), x - x)}.items():
    text = jax.jit(f).lower(x).as_text()
    m = hf.Module.parse(text)
    m.optimize()
    out["jax_" + name] = np.asarray(m.compile()(x)).tolist()
    out["jax_" + name + "_unoptimized"] = np.asarray(hf.Module.parse(text).compile()(x)).tolist()
print(json.dumps(out))
"""


def test_divisors_xla_simplifies_to_zero_never_crash():
    out = _subprocess(_DIVISION_CRASHES)
    assert out["issue"] == [7, 8, 9]  # (x % 0 = x)
    assert out["x_minus_x"] == [-1, -1, -1] and out["x_ne_x"] == [-1, -1, -1]
    assert out["jax_div"] == out["jax_div_unoptimized"] == [-1, -1, -1]
    assert out["jax_rem"] == out["jax_rem_unoptimized"] == [7, 8, 9]


def test_cli_run_random_inputs_of_a_divisor_xla_simplifies_to_zero(tmp_path):
    t = "tensor<3xi32>"
    path = tmp_path / "div_x0.mlir"
    path.write_text(f"func.func @main(%a: {t}) -> {t} {{\n %z = stablehlo.constant dense<0> : {t}\n"
                    f" %d = stablehlo.multiply %a, %z : {t}\n %c = stablehlo.constant dense<[7, 8, 9]> : {t}\n"
                    f" %0 = stablehlo.divide %c, %d : {t}\n return %0 : {t}\n}}")
    out = _cli("run", path, "--random-inputs")
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert "int32[3] [-1, -1, -1]" in out.stdout, out.stdout


INT_ELEMENTS = [("i8", np.int8), ("i32", np.int32), ("i64", np.int64), ("ui8", np.uint8), ("ui32", np.uint32)]


def _edge_operands(dtype):
    """Dividends and divisors pairing every edge value: 0, +-1, MIN, MAX (and MIN / -1)."""
    info = np.iinfo(dtype)
    values = sorted({0, 1, 2, 7, info.max, info.min, info.max - 1, info.min + 1}
                    | ({-1, -2, -7} if info.min < 0 else set()))
    x, d = np.meshgrid(np.array(values, dtype), np.array(values, dtype))
    return x.ravel(), d.ravel()


def _dense(a):
    return "dense<[" + ", ".join(str(int(v)) for v in a) + "]>"


@pytest.mark.parametrize("element, dtype", INT_ELEMENTS)
@pytest.mark.parametrize("op", ["divide", "remainder"])
@pytest.mark.parametrize("optimize", [False, True])
def test_divisors_xla_folds_give_xla_runtime_results(element, dtype, op, optimize):
    """Divisor (and dividend) constants behind ``a * 0 + c``, which XLA folds to c: the guarded results are
    bit for bit those of the same op with both operands passed as arguments."""
    x, d = _edge_operands(dtype)
    t = f"tensor<{x.size}x{element}>"
    folded = hf.Module.parse(
        f"func.func @main(%a: {t}) -> ({t}, {t}) {{\n %z = stablehlo.constant dense<0> : {t}\n"
        f" %p = stablehlo.multiply %a, %z : {t}\n %x = stablehlo.constant {_dense(x)} : {t}\n"
        f" %c = stablehlo.constant {_dense(d)} : {t}\n %d = stablehlo.add %p, %c : {t}\n"
        f" %xa = stablehlo.add %p, %x : {t}\n"
        f" %0 = stablehlo.{op} %x, %d : {t}\n %1 = stablehlo.{op} %xa, %d : {t}\n return %0, %1 : {t}, {t}\n}}")
    runtime = hf.Module.parse(f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n %0 = stablehlo.{op} %a, %b : {t}\n"
                              f" return %0 : {t}\n}}")
    assert guards.guard_for_xla(runtime) is runtime  # (arguments of @main: XLA cannot fold them)
    want = np.asarray(runtime.compile()(x, d))
    if optimize:
        folded.optimize()
    got = folded.compile()(np.ones(x.size, dtype))
    for g in got:
        assert np.asarray(g).dtype == dtype
        np.testing.assert_array_equal(np.asarray(g), want)


@pytest.mark.parametrize("element, dtype", INT_ELEMENTS)
def test_divisors_xla_folds_to_zero_whole(element, dtype):
    """``x - x`` and ``convert(x != x)`` divisors: all bits set for x / 0, x for x % 0."""
    t = f"tensor<4x{element}>"
    i1 = "tensor<4xi1>"
    m = hf.Module.parse(
        f"func.func @main(%a: {t}) -> ({t}, {t}, {t}) {{\n %c = stablehlo.constant dense<[0, 1, 5, 100]> : {t}\n"
        f" %d = stablehlo.subtract %a, %a : {t}\n %ne = stablehlo.compare NE, %a, %a : ({t}, {t}) -> {i1}\n"
        f" %e = stablehlo.convert %ne : ({i1}) -> {t}\n %0 = stablehlo.divide %c, %d : {t}\n"
        f" %1 = stablehlo.remainder %c, %e : {t}\n %2 = stablehlo.divide %a, %e : {t}\n"
        f" return %0, %1, %2 : {t}, {t}, {t}\n}}")
    q, r, qa = (np.asarray(v) for v in m.compile()(np.array([3, 1, 2, 9], dtype)))
    np.testing.assert_array_equal(q, np.full(4, -1).astype(dtype))
    np.testing.assert_array_equal(r, np.array([0, 1, 5, 100], dtype))
    np.testing.assert_array_equal(qa, np.full(4, -1).astype(dtype))


T = "tensor<3xi32>"


def _one_op(body, args=f"%a: {T}"):
    return hf.Module.parse(f"func.func @main({args}) -> {T} {{\n{body}\n return %0 : {T}\n}}")


def test_division_by_argument_dependent_divisor_is_guarded_once():
    m = _one_op(f" %z = stablehlo.constant dense<0> : {T}\n %d = stablehlo.multiply %a, %z : {T}\n"
                f" %c = stablehlo.constant dense<[7, 8, 9]> : {T}\n %0 = stablehlo.remainder %c, %d : {T}")
    assert m.optimize("pattern:division_by_folded_divisor").fired["division_by_folded_divisor"] == 1
    assert guards.MARKER in m.text and m.op_counts()["stablehlo.select"] == 2
    before = m.text
    assert not m.optimize("division-guard").fired  # (the marker: never guarded twice)
    assert m.text == before and guards.guard_for_xla(m) is m
    np.testing.assert_array_equal(m.compile()(np.int32([1, 2, 3])), [7, 8, 9])


def test_division_guard_skips_zero_free_constants_arguments_and_guarded_divisors():
    m = _one_op(f" %c = stablehlo.constant dense<[1, -1, 3]> : {T}\n %q = stablehlo.divide %a, %c : {T}\n"
                f" %0 = stablehlo.remainder %q, %b : {T}", f"%a: {T}, %b: {T}")
    assert guards.guard_for_xla(m) is m
    assert not m.optimize("division-guard").fired
    floor = hf.trace(lambda a, b: (a // b, a % b), hf.ShapeDtype((3,), np.int32), hf.ShapeDtype((3,), np.int32))
    assert guards.guard_for_xla(floor) is floor  # (hloforge.numpy's own select(b == 0, 1, b))


def test_division_inside_a_private_function_is_guarded():
    """Arguments of functions other than @main become whatever XLA inlines into them."""
    m = hf.Module.parse(
        f"func.func @main(%a: {T}) -> {T} {{\n %z = stablehlo.constant dense<0> : {T}\n"
        f" %d = stablehlo.multiply %a, %z : {T}\n %c = stablehlo.constant dense<[7, 8, 9]> : {T}\n"
        f" %0 = func.call @div(%c, %d) : ({T}, {T}) -> {T}\n return %0 : {T}\n}}\n"
        f"func.func private @div(%x: {T}, %y: {T}) -> {T} {{\n %0 = stablehlo.divide %x, %y : {T}\n"
        f" return %0 : {T}\n}}")
    assert guards.guard_for_xla(m) is not m
    np.testing.assert_array_equal(m.compile()(np.int32([1, 2, 3])), [-1, -1, -1])


# ---------------------------------------------------------------- A2: jax's Python callbacks

X3 = np.ones(3, np.float32)
_CALLBACKS = {
    "pure_callback": lambda x: jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x),
    "debug_print": lambda x: (jax.debug.print("x={x}", x=x), x * 2)[1],
    "debug_callback": lambda x: (jax.debug.callback(print, x), x)[1],
    "io_callback_ordered": lambda x: io_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x, ordered=True),
}
_REFUSAL = (r"main: stablehlo.custom_call @xla_ffi_python_cpu_callback is a jax Python callback .*lives in the "
            r"jax process that lowered the module and cannot run from a parsed module")


@pytest.mark.parametrize("name", sorted(_CALLBACKS))
def test_jax_python_callbacks_are_refused_at_compile_time(name):
    m = hf.Module.parse(jax.jit(_CALLBACKS[name]).lower(X3).as_text())
    with pytest.raises(hf.CompileError, match=_REFUSAL):
        m.compile()
    with pytest.raises(hf.CompileError, match=_REFUSAL):
        m.optimize()
        m.compile()


@pytest.mark.parametrize("target", ["xla_ffi_python_gpu_callback", "xla_ffi_partitioned_python_cpu_callback",
                                    "xla_ffi_partitioned_python_gpu_callback", "xla_buffer_python_cpu_callback",
                                    "xla_buffer_python_gpu_callback_cmd_buffer", "xla_python_cpu_callback"])
def test_every_jax_callback_target_is_named(target):
    text = jax.jit(_CALLBACKS["pure_callback"]).lower(X3).as_text().replace("xla_ffi_python_cpu_callback", target)
    assert python_callback(text).startswith(f"stablehlo.custom_call @{target} is a jax Python callback")
    generic = f'%0 = "stablehlo.custom_call"(%a) {{call_target_name = "{target}"}} : (tensor<3xf32>) -> tensor<3xf32>'
    assert f"@{target}" in python_callback(generic)


def test_other_custom_calls_are_not_callbacks():
    text = jax.jit(lambda a: jax.numpy.linalg.cholesky(a)).lower(np.eye(3, dtype=np.float32)).as_text()
    assert "custom_call" in text and python_callback(text) is None


_CALLBACK_RUN = r"""
import json, jax, numpy as np
import hloforge as hf
x = np.ones(3, np.float32)
m = hf.Module.parse(jax.jit(lambda x: jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x)).lower(x).as_text())
try:
    print(m.compile()(x))
    print(json.dumps("ran"))
except hf.CompileError as e:
    print(json.dumps(str(e)))
"""


def test_the_callback_reproducer_does_not_crash(tmp_path):
    message = _subprocess(_CALLBACK_RUN)
    assert "xla_ffi_python_cpu_callback" in message and "hloforge.pure_callback do the same" in message
    path = tmp_path / "debug_print.mlir"
    path.write_text(jax.jit(_CALLBACKS["debug_print"]).lower(X3).as_text())
    run = _cli("run", path, "--random-inputs")
    assert run.returncode == 2, (run.returncode, run.stderr[-2000:])
    assert "@xla_ffi_python_cpu_callback is a jax Python callback" in run.stderr
    check = _cli("check", path)
    assert check.returncode == 1, (check.returncode, check.stderr[-2000:])
    assert "FAIL" in check.stdout and "@xla_ffi_python_cpu_callback is a jax Python callback" in check.stdout


# ---------------------------------------------------------------- A5: empty concatenate operands

_CONCAT_CRASHES = r"""
import json, numpy as np
import hloforge as hf
from hloforge import numpy as hnp
out = {}
x2, x4, e = np.arange(2, dtype=np.float32), np.arange(4, dtype=np.float32), np.zeros(0, np.float32)
for opt in (False, True):
    out[f"end {opt}"] = np.asarray(hf.jit(lambda x, e: hnp.concatenate([x, e])[2:], optimize=opt)(x2, e)).tolist()
    out[f"past {opt}"] = np.asarray(hf.jit(lambda x, e: hnp.concatenate([x, e])[4:], optimize=opt)(x4, e)).tolist()
    out[f"append {opt}"] = np.asarray(hf.jit(lambda x, e: hnp.append(x, e)[2:], optimize=opt)(x2, e)).tolist()
text = '''func.func @main(%a: tensor<2xf32>, %e: tensor<0xf32>) -> tensor<0xf32> {
 %0 = stablehlo.concatenate %a, %e, dim = 0 : (tensor<2xf32>, tensor<0xf32>) -> tensor<2xf32>
 %1 = stablehlo.slice %0 [2:2] : (tensor<2xf32>) -> tensor<0xf32>
 return %1 : tensor<0xf32>
}'''
out["parsed"] = np.asarray(hf.Module.parse(text).compile()(x2, e)).tolist()
print(json.dumps(out))
"""


def test_slices_into_empty_concatenate_operands_never_crash():
    out = _subprocess(_CONCAT_CRASHES)
    assert out == {"end False": [], "end True": [], "past False": [], "past True": [],
                   "append False": [], "append True": [], "parsed": []}


F = hf.ShapeDtype


def test_numpy_concatenate_drops_empty_operands():
    m = hf.trace(lambda x, e, y: hnp.concatenate([e, x, e, y, e]), F((2, 3), np.float32), F((0, 3), np.float32),
                 F((1, 3), np.float32))
    (concatenate,) = [op for op in m.walk() if op.name == "stablehlo.concatenate"]
    assert len(concatenate.operands) == 2
    one = hf.trace(lambda x, e: (hnp.concatenate([x, e]), hnp.hstack([e, x]), hnp.append(x, e), hnp.stack([x, x])),
                   F((2,), np.float32), F((0,), np.float32))
    assert one.op_counts().get("stablehlo.concatenate") == 1  # (stack's)
    x, e = np.arange(6, dtype=np.float32).reshape(2, 3), np.zeros((0, 3), np.float32)
    np.testing.assert_array_equal(np.asarray(hf.jit(lambda x, e: hnp.concatenate([e, x, e, x]))(x, e)),
                                  np.concatenate([e, x, e, x]))
    np.testing.assert_array_equal(np.asarray(hf.jit(lambda x, e: hnp.vstack([e, x]))(x, e)), x)


def test_numpy_concatenate_of_only_empty_arrays_has_numpy_shape():
    a, b = np.zeros((2, 0), np.int32), np.zeros((3, 0), np.int32)
    out = hf.jit(lambda a, b: hnp.concatenate([a, b]))(a, b)
    assert out.shape == (5, 0) and out.dtype == np.int32
    e = np.zeros((0, 3), np.float32)
    assert hf.jit(lambda a, b: hnp.concatenate([a, b], axis=0))(e, e).shape == (0, 3)
    assert hf.jit(lambda a: hnp.concatenate([a, a], axis=1))(a).shape == (2, 0)


def test_numpy_concatenate_still_checks_empty_operands():
    x, e = np.zeros((2, 3), np.float32), np.zeros((0, 4), np.float32)
    with pytest.raises(ValueError, match=r"concatenate: all the input array dimensions except for the "
                                         r"concatenation axis must match exactly, but along dimension 1, the "
                                         r"array at index 0 has size 3 and the array at index 1 has size 4"):
        hf.jit(lambda x, e: hnp.concatenate([x, e]))(x, e)
    with pytest.raises(ValueError, match="array 0 has 2 and array 1 has 1"):
        hf.jit(lambda x, e: hnp.concatenate([x, e]))(x, np.zeros(0, np.float32))


C = "tensor<2x3xf32>"


def _concatenate_module(*operands):
    """@main(%a: 2x3, %b: 1x3, %e: 0x3) concatenating ``operands`` (names of those) along 0."""
    types = {"a": C, "b": "tensor<1x3xf32>", "e": "tensor<0x3xf32>"}
    rows = {"a": 2, "b": 1, "e": 0}
    out = f"tensor<{sum(rows[o] for o in operands)}x3xf32>"
    return hf.Module.parse(
        f"func.func @main(%a: {C}, %b: tensor<1x3xf32>, %e: tensor<0x3xf32>) -> {out} {{\n"
        f" %0 = stablehlo.concatenate {', '.join('%' + o for o in operands)}, dim = 0 : "
        f"({', '.join(types[o] for o in operands)}) -> {out}\n return %0 : {out}\n}}")


_ARGS = (np.arange(6, dtype=np.float32).reshape(2, 3), np.float32([[7, 8, 9]]), np.zeros((0, 3), np.float32))


def test_empty_concatenate_operands_fires_and_keeps_values():
    m = _concatenate_module("e", "a", "e", "b", "e")
    want = np.asarray(m.compile()(*_ARGS))
    np.testing.assert_array_equal(want, np.concatenate([_ARGS[0], _ARGS[1]]))
    assert m.optimize("pattern:empty_concatenate_operands").fired["empty_concatenate_operands"] == 1
    (concatenate,) = [op for op in m.walk() if op.name == "stablehlo.concatenate"]
    assert len(concatenate.operands) == 2
    np.testing.assert_array_equal(np.asarray(m.compile()(*_ARGS)), want)
    single = _concatenate_module("a", "e")
    assert single.optimize().fired["empty_concatenate_operands"] == 1  # (in the default pipeline)
    assert "stablehlo.concatenate" not in single.text
    np.testing.assert_array_equal(np.asarray(single.compile()(*_ARGS)), _ARGS[0])


def test_empty_concatenate_operands_does_not_fire_without_empty_operands():
    m = _concatenate_module("a", "b", "a")
    assert "empty_concatenate_operands" not in m.optimize("pattern:empty_concatenate_operands").fired
    assert guards.guard_for_xla(m) is m


def test_empty_concatenate_of_empty_operands_becomes_an_empty_value():
    t0, t5 = "tensor<2x0xf32>", "tensor<5x0xf32>"
    m = hf.Module.parse(f"func.func @main(%a: {t0}, %b: tensor<3x0xf32>) -> {t5} {{\n"
                        f" %0 = stablehlo.concatenate %a, %b, dim = 0 : ({t0}, tensor<3x0xf32>) -> {t5}\n"
                        f" return %0 : {t5}\n}}")
    assert m.optimize("pattern:empty_concatenate_operands").fired["empty_concatenate_operands"] == 1
    assert "stablehlo.concatenate" not in m.text and "stablehlo.constant" in m.text
    assert m.compile()(np.zeros((2, 0), np.float32), np.zeros((3, 0), np.float32)).shape == (5, 0)
    same = _concatenate_module("e", "e")
    same.optimize("pattern:empty_concatenate_operands")
    assert "stablehlo.concatenate" not in same.text and "stablehlo.constant" not in same.text


# ---------------------------------------------------------------- shapes beyond XLA's int64 counts (issue 49)

_SHAPE_CRASHES = r"""
import json
import re
import numpy as np
import hloforge as hf
from hloforge import numpy as hnp
out = {}
def outcome(name, thunk):
    try:
        thunk()
        out[name] = "ok"
    except ValueError as e:
        out[name] = str(e)
outcome("zeros", lambda: hnp.zeros((2**62,), np.float32))
outcome("trace", lambda: hf.trace(lambda x: x, hf.ShapeDtype((2**62, 8), np.float32)).compile())
outcome("broadcast", lambda: hf.jit(lambda x: hnp.broadcast_to(x, (2**31, 2**31)))(np.float32(1)))
t = "tensor<2305843009213693952xf32>"
outcome("parsed", lambda: hf.Module.parse(
    f"func.func @main(%a: {t}) -> {t} {{\n %0 = stablehlo.add %a, %a : {t}\n return %0 : {t}\n}}").compile())
print(json.dumps(out))
"""


def test_shapes_beyond_int64_counts_are_refused_before_xla():
    out = _subprocess(_SHAPE_CRASHES)
    bytes64 = "XLA counts both in int64 and takes at most 2\\*\\*62 elements and 2\\*\\*63 - 1 bytes"
    assert out["zeros"].startswith("hloforge: a tensor of shape (4611686018427387904,) and dtype float32 has "
                                   "4611686018427387904 elements (18446744073709551616 bytes)")
    assert out["trace"].startswith("hloforge: a tensor of shape (4611686018427387904, 8) and dtype float32 has "
                                   "36893488147419103232 elements")
    assert out["broadcast"].startswith("hloforge: a tensor of shape (2147483648, 2147483648) and dtype float32")
    assert out["parsed"].startswith("compile: the type tensor<2305843009213693952xf32> has 2305843009213693952 "
                                    "elements (9223372036854775808 bytes)")
    assert all(re.search(bytes64, message) for message in out.values())


@pytest.mark.parametrize("shape, dtype, fits", [
    ((2**61 - 1,), np.float32, True), ((2**61,), np.float32, False),  # (bytes: 2**63 - 4, 2**63)
    ((2**62,), np.int8, True), ((2**62 + 1,), np.int8, False),  # (elements: XLA:CPU aborts past 2**62)
    ((2**59 - 1,), np.complex128, True), ((2**59,), np.complex128, False),
    ((2**31, 2**31), np.int8, True), ((2**31, 2**31), np.float32, False),
    ((0, 2**62, 2**62), np.float32, True),  # (empty: XLA takes it)
])
def test_tensor_types_stop_at_int64_counts(shape, dtype, fits):
    trace = lambda: hf.trace(lambda x: x, F(shape, dtype))  # noqa: E731
    element = {np.float32: "f32", np.int8: "i8", np.complex128: "complex<f64>"}[dtype]
    text = f"tensor<{'x'.join(map(str, shape))}x{element}>"
    module = hf.Module.parse(f"func.func @main(%a: {text}) -> {text} {{\n return %a : {text}\n}}")
    if fits:
        assert trace().signature[0][0].shape == shape
        assert module._code_for_compile()
    else:
        with pytest.raises(ValueError, match=rf"hloforge: a tensor of shape {re.escape(str(shape))} and dtype "
                                             rf"{np.dtype(dtype).name} has {np.prod(shape, dtype=object)} elements"):
            trace()
        with pytest.raises(ValueError, match=rf"compile: the type {re.escape(text)} has"):
            module._code_for_compile()
