"""hloforge check on StableHLO's test conventions (runtime/checkfile.py): pieces, test functions, the
check and interpreter ops' syntax, assertion semantics, narrow element types, run_parallel, and
--optimize's bit-for-bit comparison. The files are hloforge's own (tests/data/check, or written here)."""
import collections
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import hloforge as hf
from hloforge.frontend.context import ir
from hloforge.passes.report import PassReport
from hloforge.runtime import checkfile
from hloforge.runtime.check_syntax import generic_check_ops, split_pieces
from hloforge.runtime.check_values import Check, _ulp_distance, compare

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "check")
PIECES = os.path.join(DATA, "interpreter_style_pieces.mlir")


def _file(tmp_path, text, name="t.mlir"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _reasons(path, **options):
    return {r.function: r.reason for r in checkfile.check_file(path, **options)}


def _cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "hloforge.runtime.cli", "check", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)

# ---------------------------------------------------------------- pieces and test functions


def test_every_public_test_function_of_every_piece_runs():
    results = checkfile.check_file(PIECES, optimize=True)
    assert [r.function for r in results] == ["sum_is_exact", "halves_within_tolerance", "complex_square",
                                            "one_ulp_apart", "probed_and_printed", "narrow_element_types"]
    assert all(r.ok for r in results), [str(r) for r in results if not r.ok]
    assert str(results[0]) == f"PASS {PIECES}:1::sum_is_exact"  # (a file of several pieces: each piece's line)
    assert len({r.name for r in results}) == len(results)


def test_pieces_keep_the_file_line_numbers(tmp_path):
    text = ("// header only: an empty piece\n// -----\nfunc.func @a() {\n  func.return\n}\n// -----\n"
            "func.func @b() {\n  %0 = stablehlo.constant dense<1> : tensor<i32>\n"
            "  check.expect_eq_const %0, dense<2> : tensor<i32>\n  func.return\n}\n")
    pieces = split_pieces(text)
    assert [p.line for p in pieces] == [1, 3, 7] and pieces[0].is_empty
    assert pieces[2].text.startswith("\n" * 6 + "func.func @b")
    reasons = _reasons(_file(tmp_path, text))
    assert reasons == {"a": "no check.* assertions found",
                       "b": "check 0 (check.expect_eq_const, line 9): eq: 1 of 1 elements differ; at index []: "
                            "actual 1, expected 2"}


def test_main_is_the_only_test_of_its_piece(tmp_path):
    path = _file(tmp_path, """func.func @other() {
  func.return
}
func.func @main() {
  %0 = stablehlo.constant dense<1.5> : tensor<f32>
  check.expect_eq %0, %0 : tensor<f32>
  func.return
}""")
    assert [str(r) for r in checkfile.check_file(path)] == [f"PASS {path}::main"]


def test_a_piece_that_does_not_parse_fails_its_functions(tmp_path):
    path = _file(tmp_path, """func.func @bad_one() {
  %0 = stablehlo.no_such_op : tensor<f32>
  func.return
}
func.func @bad_two() {
  func.return
}
// -----
// only a comment and an op outside any function: no test function
// -----
func.func private @hidden() {
  func.return
}""")
    results = checkfile.check_file(path)
    assert [(r.function, r.line) for r in results] == [("bad_one", None), ("bad_two", None), (None, 11)]
    assert "stablehlo.no_such_op" in results[0].reason
    assert str(results[2]) == f"FAIL {path}:11: no test function (@main, or a public function without arguments)"

# ---------------------------------------------------------------- the check dialect's syntax


@pytest.mark.parametrize("custom,generic", [
    ("check.expect_eq %a, %b : tensor<2xi32>", '"check.expect_eq"(%a, %b) : (tensor<2xi32>, tensor<2xi32>) -> ()'),
    ("check.expect_almost_eq %a, %b, tolerance = 0.001 : f64 : tensor<2xf32>",
     '"check.expect_almost_eq"(%a, %b) {tolerance = 0.001 : f64} : (tensor<2xf32>, tensor<2xf32>) -> ()'),
    ("check.expect_close %a, %b, max_ulp_difference = 3, min_ulp_difference = 1 : tensor<f16>, tensor<f16>",
     '"check.expect_close"(%a, %b) {max_ulp_difference = 3, min_ulp_difference = 1} : '
     '(tensor<f16>, tensor<f16>) -> ()'),
    ('check.expect_serialized_eq %r#1,\n    probe_id = "p",\n    iter = 2 : tensor<i64>',
     '"check.expect_serialized_eq"(%r#1) {probe_id = "p", iteration = 2} : (tensor<i64>) -> ()\n\n'),
    ('%p = interpreter.probe %a, probe_id = "x/0" : tensor<3xi1>',
     '%p = "interpreter.probe"(%a) {probe_id = "x/0"} : (tensor<3xi1>) -> tensor<3xi1>'),
    ("check.expect_almost_eq_const %a, dense<[(1.0, 2.0),\n  (0x7FC00000, 1.0)]> : tensor<2xcomplex<f32>> // c\n",
     '%check.expected.0 = "stablehlo.constant"() {value = dense<[(1.0, 2.0),   (0x7FC00000, 1.0)]> : '
     'tensor<2xcomplex<f32>>} : () -> tensor<2xcomplex<f32>> "check.expect_almost_eq_const"(%a, %check.expected.0) '
     ': (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> ()\n\n'),
    ('"check.expect_eq_const"(%a) <{value = dense<[1, 2]> : tensor<2xi4>}> {note} : (tensor<2xi4>) -> ()',
     '%check.expected.0 = "stablehlo.constant"() {value = dense<[1, 2]> : tensor<2xi4>} : () -> tensor<2xi4> '
     '"check.expect_eq_const"(%a, %check.expected.0) {note} : (tensor<2xi4>, tensor<2xi4>) -> ()'),
])
def test_custom_syntax_becomes_the_generic_form(custom, generic):
    assert generic_check_ops("  " + custom) == "  " + generic


def test_custom_syntax_that_cannot_be_read_names_its_line():
    with pytest.raises(ValueError, match=r"line 2: cannot read check.expect_eq: 2 operand\(s\) but 0 type\(s\)"):
        generic_check_ops("func.func @f() {\n  check.expect_eq %a, %b\n  func.return\n}")
    with pytest.raises(ValueError, match=r"line 1: cannot read check.expect_eq_const: the constant 'dense<1>' has "
                                         r"no type"):
        generic_check_ops("check.expect_eq_const %a, dense<1>\n")

# ---------------------------------------------------------------- what the assertions mean


_ONE = """func.func @{name}() {{
  %a = stablehlo.constant dense<{a}> : tensor<{t}>
  %b = stablehlo.constant dense<{b}> : tensor<{t}>
  {check}
  func.return
}}"""


@pytest.mark.parametrize("name,t,a,b,check,reason", [
    ("absolute_tolerance", "f32", "1000.0", "1000.01", "check.expect_almost_eq %a, %b : tensor<f32>",
     "almost_eq: 1 of 1 elements differ; at index []: actual 1000.0, expected 1000.01 (tolerance 0.0001)"),
    ("given_tolerance", "f32", "1000.0", "1000.01", "check.expect_almost_eq %a, %b, tolerance = 0.1 : tensor<f32>", ""),
    ("close_default_one_ulp", "f32", "1.0", "1.0000002", "check.expect_close %a, %b, max_ulp_difference = 1 : "
     "tensor<f32>, tensor<f32>", "close: 1 of 1 elements differ; at index []: actual 1.0, expected 1.0000002, "
     "ULP difference 2 (allowed 0 to 1)"),
    ("close_at_least", "f32", "1.0", "1.0", "check.expect_close %a, %b, max_ulp_difference = 3, min_ulp_difference "
     "= 1 : tensor<f32>, tensor<f32>", "ULP difference 0 (allowed 1 to 3)"),
    ("close_of_infinity", "f32", "0x7F800000", "3.0", "check.expect_close %a, %b, max_ulp_difference = 100 : "
     "tensor<f32>, tensor<f32>", "actual inf, expected 3.0, ULP difference infinite"),
    ("nan_equals_nan", "f32", "0x7FC00000", "0xFFC00001", "check.expect_eq %a, %b : tensor<f32>", ""),
    ("minus_zero_equals_zero", "bf16", "-0.0", "0.0", "check.expect_eq %a, %b : tensor<bf16>", ""),
    ("complex_parts", "2xcomplex<f64>", "[(1.0, 2.0), (3.0, 4.0)]", "[(1.0, 2.0), (3.0, 4.5)]",
     "check.expect_almost_eq %a, %b : tensor<2xcomplex<f64>>",
     "almost_eq: 1 of 2 elements differ; at index [1]: actual (3+4j), expected (3+4.5j) (tolerance 0.0001)"),
    ("int4", "2xi4", "[-8, 7]", "[-8, 6]", "check.expect_eq %a, %b : tensor<2xi4>",
     "eq: 1 of 2 elements differ; at index [1]: actual 7, expected 6"),
    ("f8_one_ulp", "f8E5M2", "1.0", "1.25", "check.expect_close %a, %b, max_ulp_difference = 1 : tensor<f8E5M2>, "
     "tensor<f8E5M2>", ""),
    ("f8_two_ulps", "f8E5M2", "1.0", "1.5", "check.expect_close %a, %b, max_ulp_difference = 1 : tensor<f8E5M2>, "
     "tensor<f8E5M2>", "actual 1, expected 1.5, ULP difference 2 (allowed 0 to 1)"),
    ("testdata_almost_eq", "f32", "1.0", "1.0005", 'stablehlo.custom_call @check.expect_almost_eq(%a, %b) '
     '{has_side_effect = true} : (tensor<f32>, tensor<f32>) -> ()', ""),
    ("testdata_almost_eq_is_absolute", "f32", "308502.97", "308503.0", "stablehlo.custom_call "
     "@check.expect_almost_eq(%a, %b) {has_side_effect = true} : (tensor<f32>, tensor<f32>) -> ()",
     "actual 308502.97, expected 308503.0 (tolerance 0.001)"),  # (one ULP apart: StableHLO's CheckOps.cpp)
    ("testdata_close", "f32", "1.0", "1.0000004", "stablehlo.custom_call @check.expect_close(%a, %b) : "
     "(tensor<f32>, tensor<f32>) -> ()", ""),
    ("testdata_eq_of_ints", "i32", "1", "2", "%r = stablehlo.custom_call @check.eq(%a, %b) : (tensor<i32>, "
     "tensor<i32>) -> tensor<i1>", "almost_eq: 1 of 1 elements differ; at index []: actual 1, expected 2"),
])
def test_assertions_mean_what_the_interpreter_means(tmp_path, name, t, a, b, check, reason):
    got = _reasons(_file(tmp_path, _ONE.format(name=name, t=t, a=a, b=b, check=check)))[name]
    assert (reason in got) if reason else got == "", got


def test_compare_counts_ulps_as_the_interpreter():
    f32 = np.float32
    assert list(_ulp_distance(f32([1.0, -0.0, np.nan, np.inf]), f32([1.0, 0.0, -np.nan, np.inf]))) == [0, 0, 0, 0]
    tiny = np.float32(1e-45)  # (one ULP above 0: opposite signs add their distances to zero)
    assert list(_ulp_distance(f32([tiny]), f32([-tiny]))) == [2]
    assert compare(Check("close", max_ulp=0), f32([np.inf]), f32([-np.inf])).endswith("ULP difference infinite "
                                                                                     "(allowed 0 to 0)")
    assert compare(Check("eq"), np.int32([1]), np.int64([1])) == "type mismatch: int32[1] vs int64[1]"

# ---------------------------------------------------------------- what is refused, in one line


@pytest.mark.parametrize("body,reason", [
    ("""  %a = stablehlo.constant dense<1> : tensor<i64>
  check.expect_foo %a, %a : tensor<i64>""",
     "unsupported assertion check.expect_foo (supported: check.expect_almost_eq, "),
    ("""  %a = stablehlo.constant dense<1> : tensor<i64>
  check.expect_serialized_eq %a, probe_id = "nowhere" : tensor<i64>""",
     "check.expect_serialized_eq, line 3: no interpreter.probe with probe_id 'nowhere' in this function"),
    ("""  %a = stablehlo.constant dense<1> : tensor<i64>
  %p = interpreter.probe %a, probe_id = "once" : tensor<i64>
  check.expect_serialized_eq %p, probe_id = "once", iter = 1 : tensor<i64>""",
     "check.expect_serialized_eq, line 4: iteration 1 of the probe 'once', which runs once"),
    ("""  %a = stablehlo.constant dense<1> : tensor<i64>
  %r = stablehlo.while(%x = %a) : tensor<i64>
  cond {
    %c = stablehlo.compare LT, %x, %a : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %p = interpreter.probe %x, probe_id = "loop" : tensor<i64>
    stablehlo.return %p : tensor<i64>
  }
  check.expect_serialized_eq %r, probe_id = "loop" : tensor<i64>""",
     "the probe 'loop' is inside stablehlo.while: hloforge compares only probes of the function's body"),
    ("""  %a = stablehlo.constant dense<1> : tensor<i64>
  %r = stablehlo.while(%x = %a) : tensor<i64>
  cond {
    %c = stablehlo.compare LT, %x, %a : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    check.expect_eq %x, %x : tensor<i64>
    stablehlo.return %x : tensor<i64>
  }""", "check.expect_eq (line 8) inside stablehlo.while is not supported"),
    ("""  %t = stablehlo.after_all : !stablehlo.token
  %x, %t2 = "stablehlo.infeed"(%t) : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)
  check.expect_eq %x, %x : tensor<2xi64>""", "stablehlo.infeed (line 3) talks to the host"),
    ("""  %a = stablehlo.constant dense<1> : tensor<i64>
  check.expect_eq %a, %a : tensor<i64>
  %r:2 = "interpreter.run_parallel"(%a, %a) {programs = [[@p], [@q]]}
    : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)""",
     "interpreter.run_parallel runs different programs (@p, @q) on different processes: hloforge runs one program"),
    ("""  %a = stablehlo.constant dense<1> : tensor<i64>
  check.expect_eq %a, %a : tensor<i64>
  %r = "interpreter.run_parallel"(%a) {programs = [[@p]], infeed = [@p]} : (tensor<i64>) -> tensor<i64>""",
     "interpreter.run_parallel with infeed queues: hloforge cannot fill XLA's infeed queue"),
    ("""  %a = stablehlo.constant dense<1> : tensor<i64>
  check.expect_eq %a, %a : tensor<i64>
  %r:64 = "interpreter.run_parallel"() {programs = [[@p, @p, @p, @p, @p, @p, @p, @p], [@p, @p, @p, @p, @p, @p, @p, @p],
    [@p, @p, @p, @p, @p, @p, @p, @p], [@p, @p, @p, @p, @p, @p, @p, @p], [@p, @p, @p, @p, @p, @p, @p, @p],
    [@p, @p, @p, @p, @p, @p, @p, @p], [@p, @p, @p, @p, @p, @p, @p, @p], [@p, @p, @p, @p, @p, @p, @p, @p]]}
    : () -> (tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>,
             tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>,
             tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>,
             tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>,
             tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>,
             tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>,
             tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>,
             tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>)""",
     "interpreter.run_parallel needs 64 cpu devices, "),
])
def test_refusals_are_one_line_naming_the_op(tmp_path, body, reason):
    text = ("func.func private @p() -> tensor<i64> {\n  %c = stablehlo.constant dense<0> : tensor<i64>\n"
            "  func.return %c : tensor<i64>\n}\nfunc.func private @q() -> tensor<i64> {\n"
            "  %c = stablehlo.constant dense<0> : tensor<i64>\n  func.return %c : tensor<i64>\n}\n")
    path = _file(tmp_path, "func.func @main() {\n" + body + "\n  func.return\n}\n" + text)
    got = _reasons(path)["main"]
    assert reason in got and "\n" not in got, got


def test_run_parallel_without_devices_says_how_to_get_them(tmp_path):
    if len(hf.devices("cpu")) >= 2:
        pytest.skip("this process has several CPU devices")
    path = _file(tmp_path, _PARALLEL)
    assert re.search(r"interpreter.run_parallel needs 2 cpu devices, 1 here: run with "
                     r"XLA_FLAGS=--xla_force_host_platform_device_count=2", _reasons(path)["main"])

# ---------------------------------------------------------------- run_parallel on several CPU devices


_PARALLEL = """module @two_replicas {
  func.func @sum(%x: tensor<2xi64>) -> (tensor<2xi64>, tensor<ui32>) {
    %s = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<i64>, %b: tensor<i64>):
        %0 = stablehlo.add %a, %b : tensor<i64>
        stablehlo.return %0 : tensor<i64>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi64>) -> tensor<2xi64>
    %r = stablehlo.replica_id : tensor<ui32>
    func.return %s, %r : tensor<2xi64>, tensor<ui32>
  }
  func.func @main() {
    %x0 = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
    %x1 = stablehlo.constant dense<[10, 20]> : tensor<2xi64>
    %r:4 = "interpreter.run_parallel"(%x0, %x1) {programs = [[@sum], [@sum]]}
      : (tensor<2xi64>, tensor<2xi64>) -> (tensor<2xi64>, tensor<ui32>, tensor<2xi64>, tensor<ui32>)
    check.expect_eq_const %r#0, dense<[11, 22]> : tensor<2xi64>
    check.expect_eq_const %r#1, dense<0> : tensor<ui32>
    check.expect_eq_const %r#2, dense<[11, 22]> : tensor<2xi64>
    check.expect_eq_const %r#3, dense<1> : tensor<ui32>
    func.return
  }
}
// -----
module @two_partitions {
  func.func @swap(%x: tensor<2xi64>) -> (tensor<2xi64>, tensor<ui32>) {
    %s = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>} : (tensor<2xi64>) -> tensor<2xi64>
    %p = stablehlo.partition_id : tensor<ui32>
    func.return %s, %p : tensor<2xi64>, tensor<ui32>
  }
  func.func @main() {
    %x0 = stablehlo.constant dense<[5, 6]> : tensor<2xi64>
    %x1 = stablehlo.constant dense<[7, 8]> : tensor<2xi64>
    %r:4 = "interpreter.run_parallel"(%x0, %x1) {programs = [[@swap, @swap]]}
      : (tensor<2xi64>, tensor<2xi64>) -> (tensor<2xi64>, tensor<ui32>, tensor<2xi64>, tensor<ui32>)
    %both = stablehlo.concatenate %r#0, %r#2, dim = 0 : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
    check.expect_eq_const %both, dense<[7, 8, 5, 6]> : tensor<4xi64>
    check.expect_eq_const %r#3, dense<2> : tensor<ui32>
    func.return
  }
}
"""

_HANGS = """func.func @main() {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %r = stablehlo.while(%x = %zero) : tensor<i64>
  cond {
    %c = stablehlo.compare GE, %x, %zero : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %y = stablehlo.add %x, %one : tensor<i64>
    %z = stablehlo.subtract %y, %one : tensor<i64>
    stablehlo.return %z : tensor<i64>
  }
  check.expect_eq_const %r, dense<0> : tensor<i64>
  func.return
}
"""


def test_cli_runs_processes_on_cpu_devices_one_line_per_function(tmp_path):
    """The worker gets 8 CPU devices; the second partition's partition_id is 1, not 2: that check fails.
    A file that never ends fails on its own after --timeout."""
    parallel, hangs = _file(tmp_path, _PARALLEL, "parallel.mlir"), _file(tmp_path, _HANGS, "hangs.mlir")
    result = _cli(parallel, PIECES, "--timeout", "120")
    lines = result.stdout.splitlines()
    assert result.returncode == 1, result.stdout + result.stderr
    assert re.fullmatch(rf"PASS {re.escape(str(parallel))}:1::main", lines[0])
    assert re.match(rf"FAIL {re.escape(str(parallel))}:\d+::main: check 1 \(check.expect_eq_const, line ", lines[1])
    assert lines[0].split("::")[0] != lines[1].split("::")[0]  # (the two pieces' @main are told apart)
    assert lines[1].endswith("eq: 1 of 1 elements differ; at index []: actual 1, expected 2")
    assert lines[2:-1] == [f"PASS {r.name}" for r in checkfile.check_file(PIECES)]
    assert lines[-1] == f"{len(lines) - 2} passed, 1 failed"
    # (a short timeout of its own: the 8-device file above needs a long one on a loaded machine)
    stopped = _cli(hangs, "--timeout", "3")
    assert stopped.returncode == 1, stopped.stdout + stopped.stderr
    assert stopped.stdout.splitlines()[0] == f"FAIL {hangs}: timed out after 3 s (the process running this file was stopped)"

# ---------------------------------------------------------------- --optimize keeps every bit


def _nudging_optimize(self, pipeline="default", finite_math=True, **_):
    """Stands in for Module.optimize: a 'pattern' that changes 2.0 into the next float32 up."""
    text = self.to_text(debug_info=True).replace("dense<[1.000000e+00, 2.000000e+00]>",
                                                 "dense<[1.000000e+00, 2.00000024]>")
    self.mlir = ir.Module.parse(text, context=self.context)
    return PassReport(fired=collections.Counter({"nudge_constant": 1}))


_NUDGED = """func.func @main() {
  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  check.expect_almost_eq_const %a, dense<[1.0, 2.0]> : tensor<2xf32>
  func.return
}
"""


def test_optimize_must_keep_every_bit(tmp_path, monkeypatch):
    monkeypatch.setattr(hf.Module, "optimize", _nudging_optimize)
    path = _file(tmp_path, _NUDGED)
    assert _reasons(path)["main"] == ""
    assert _reasons(path, optimize=True)["main"] == (
        "--optimize changed the bits of the actual value of check 0 (check.expect_almost_eq_const, line 3): 1 of 2 "
        "elements; at index [1]: raw 2.0 (0x40000000), optimized 2.0000002 (0x40000001); patterns fired: "
        "nudge_constant x1")
    assert _reasons(path, optimize=True, finite_math=True)["main"] == ""  # (within the tolerance)


# ---------------------------------------------------------------- modules with arguments


# jax.export's dynamic_slice of a polymorphic shape (StableHLO's dynamic/dynamic_slice.mlir, cut down): the
# limits are the starts plus a constant, but computed from a second copy of the starts
_DYNAMIC_SLICE = """func.func public @main(%n: tensor<i64>, %x: tensor<?x4xf32>, %i: tensor<i32>) -> tensor<?x2xf32> {
  %one = stablehlo.constant dense<1> : tensor<1xi32>
  %0 = stablehlo.reshape %i : (tensor<i32>) -> tensor<1xi32>
  %start = stablehlo.concatenate %0, %one, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %1 = stablehlo.reshape %i : (tensor<i32>) -> tensor<1xi32>
  %again = stablehlo.concatenate %1, %one, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %2 = stablehlo.convert %n : (tensor<i64>) -> tensor<i32>
  %3 = stablehlo.reshape %2 : (tensor<i32>) -> tensor<1xi32>
  %c2 = stablehlo.constant dense<2> : tensor<1xi32>
  %size = stablehlo.concatenate %3, %c2, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %limit = stablehlo.add %again, %size : tensor<2xi32>
  %strides = stablehlo.constant dense<1> : tensor<2xi32>
  %r = stablehlo.real_dynamic_slice %x, %start, %limit, %strides
    : (tensor<?x4xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?x2xf32>
  func.return %r : tensor<?x2xf32>
}
"""


def test_a_slice_of_a_static_size_refines_when_its_starts_are_computed_twice(tmp_path):
    """Shape refinement reads limit = start + constant on one SSA value: refine runs cse first."""
    path = _file(tmp_path, _DYNAMIC_SLICE)
    assert _reasons(path, optimize=True) == {"main": ""}
    bound = checkfile._bind_dimension_variables(hf.Module.parse(_DYNAMIC_SLICE))
    refined = bound.refine([((checkfile.DYNAMIC_SIZE, 4), np.float32), ((), np.int32)])
    assert [s.shape for s in refined.signature[1]] == [(checkfile.DYNAMIC_SIZE, 2)]


def test_only_leading_scalar_integers_are_dimension_variables():
    """jax puts its dimension variables first; the 0-d i32 after the array is the slice's start."""
    module = checkfile._bind_dimension_variables(hf.Module.parse(_DYNAMIC_SLICE))
    assert [(s.shape, s.dtype) for s in module.signature[0]] == [((None, 4), np.float32), ((), np.int32)]
