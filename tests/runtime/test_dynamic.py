"""Dynamic dimensions (tensor<?x4xf32>): shown as ? (never the sentinel integer), refined against
concrete argument shapes (StableHLO shape refinement), one executable per concrete signature."""
import json
import os

import numpy as np
import pytest

import hloforge as hf
from hloforge.runtime.cli.main import main
from helpers import assert_close

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "check")
SENTINEL = str(-9223372036854775808)

DYNAMIC = """
func.func @main(%a: tensor<?x4xf32>, %b: tensor<f32>) -> tensor<?x4xf32> {
  %0 = stablehlo.add %a, %a : tensor<?x4xf32>
  %1 = stablehlo.broadcast_in_dim %b, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %n = stablehlo.get_dimension_size %a, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %four = stablehlo.constant dense<4> : tensor<1xi32>
  %shape = stablehlo.concatenate %n1, %four, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %2 = stablehlo.dynamic_broadcast_in_dim %1, %shape, dims = [1] : (tensor<4xf32>, tensor<2xi32>) -> tensor<?x4xf32>
  %3 = stablehlo.multiply %0, %2 : tensor<?x4xf32>
  return %3 : tensor<?x4xf32>
}"""


def test_signature_and_summary_show_question_marks():
    m = hf.Module.parse(DYNAMIC)
    ins, outs = m.signature
    assert ins[0].shape == (None, 4) and not ins[0].is_static and ins[1].is_static
    assert str(ins[0]) == "float32[?, 4]" and repr(ins[0]) == "ShapeDtype((None, 4), float32)"
    assert "@main(float32[?, 4], float32[]) -> (float32[?, 4])" in m.summary()
    assert SENTINEL not in m.summary() + repr(m.signature)
    with pytest.raises(ValueError, match="negative dimension"):
        hf.ShapeDtype((-1, 4), np.float32)


def test_compile_refines_per_concrete_signature():
    exe = hf.Module.parse(DYNAMIC).compile()
    assert "float32[?, 4]" in repr(exe)
    for rows in (2, 5, 2):
        x = np.arange(rows * 4, dtype=np.float32).reshape(rows, 4)
        assert_close(exe(x, np.float32(3)), x * 6)
    assert sorted(exe.executables) == [((2, 4), ()), ((5, 4), ())]
    assert_close(exe.call_flat([np.ones((1, 4), np.float32), np.float32(1)])[0], np.full((1, 4), 2, np.float32))


def test_dynamic_argument_errors():
    exe = hf.Module.parse(DYNAMIC).compile()
    with pytest.raises(ValueError, match=r"main: argument 0: expected float32\[\?, 4\], got float32\[3, 5\]"):
        exe(np.ones((3, 5), np.float32), np.float32(1))
    with pytest.raises(TypeError, match=r"argument 0: expected float32\[3, 4\], got float64\[3, 4\]"):
        exe(np.ones((3, 4)), np.float32(1))
    with pytest.raises(ValueError, match=r"main: argument 0, dimension 0 is dynamic \(\?\): hlo_text needs concrete"):
        exe.hlo_text
    with pytest.raises(ValueError, match=r"main: argument 0, dimension 0 is dynamic \(\?\): give refine\(\) static"):
        hf.Module.parse(DYNAMIC).refine()
    mesh = hf.Mesh(np.array(hf.devices("cpu")[:1]), ("x",))
    with pytest.raises(ValueError, match=r"argument 0, dimension 0 is dynamic \(\?\): sharded compiles need static"):
        hf.Module.parse(DYNAMIC).compile(in_shardings=hf.P(), mesh=mesh)


def test_refine_gives_a_static_module():
    refined = hf.Module.parse(DYNAMIC).refine([((3, 4), np.float32), ((), np.float32)])
    assert "?" not in refined.text
    assert [tuple(s) for s in refined.signature[1]] == [((3, 4), np.dtype(np.float32))]


def test_a_result_dimension_that_cannot_be_refined_is_named():
    # the reshape's output size comes from an argument's *value*: refinement cannot know it
    m = hf.Module.parse("""
    func.func @main(%s: tensor<1xi64>) -> tensor<?xf32> {
      %c = stablehlo.constant dense<1.0> : tensor<f32>
      %0 = stablehlo.dynamic_broadcast_in_dim %c, %s, dims = [] : (tensor<f32>, tensor<1xi64>) -> tensor<?xf32>
      return %0 : tensor<?xf32>
    }""")
    with pytest.raises(ValueError, match=r"main: result 0, dimension 0 is dynamic \(\?\) after shape refinement"):
        m.compile()


def test_static_arguments_with_dynamic_values_inside_are_refined_at_compile():
    m = hf.Module.parse("""
    func.func @helper(%a: tensor<2x3xf32>) -> tensor<?x3xf32> {
      %0 = stablehlo.convert %a : (tensor<2x3xf32>) -> tensor<?x3xf32>
      %1 = stablehlo.negate %0 : tensor<?x3xf32>
      return %1 : tensor<?x3xf32>
    }""")
    exe = m.compile()
    assert exe.out_specs == (((2, 3), np.dtype(np.float32)),)
    assert_close(exe(np.ones((2, 3), np.float32)), -np.ones((2, 3), np.float32))


def test_check_runs_the_dynamic_test_modules(capsys):
    files = sorted(os.path.join(DATA, f) for f in os.listdir(DATA) if f.startswith("dynamic_"))
    assert len(files) == 5
    assert main(["check", *files]) == 0
    assert main(["check", "--optimize", *files]) == 0
    assert capsys.readouterr().out.count("PASS ") == 10


def test_check_binds_dimension_variables_of_modules_with_arguments(capsys):
    """StableHLO's dynamic testdata: round-trip modules whose @main takes a dimension variable and
    dynamic arrays run with the variable bound, so refinement resolves every shape."""
    path = os.path.join(DATA, "dynamic_dimension_variable_round_trip.mlir")
    assert main(["check", path]) == 0
    from hloforge.runtime import checkfile
    module = checkfile._bind_dimension_variables(hf.Module.load(path))
    assert [s.shape for s in module.signature[0]] == [(None, 4)]


def test_cli_run_and_inspect_dynamic(tmp_path, capsys):
    path = tmp_path / "dyn.mlir"
    path.write_text(DYNAMIC)
    np.save(tmp_path / "x.npy", np.ones((3, 4), np.float32))
    np.save(tmp_path / "s.npy", np.float32(2))
    assert main(["run", str(path), "--arg", str(tmp_path / "x.npy"), "--arg", str(tmp_path / "s.npy")]) == 0
    assert "output 0: float32[3, 4] [4., 4., 4., 4., 4., 4.] ..." in capsys.readouterr().out
    assert main(["run", str(path), "--random-inputs"]) == 2
    err = capsys.readouterr().err
    assert err == ("hloforge run: error: main: argument 0, dimension 0 is dynamic (?): --random-inputs needs "
                   "static shapes; pass --arg FILE.npy for each argument\n")
    assert main(["inspect", "--json", str(path)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["inputs"][0] == {"shape": [None, 4], "dtype": "float32"}
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "float32[?, 4]" in out and SENTINEL not in out


def test_tracing_needs_static_shapes():
    with pytest.raises(ValueError, match=r"trace: argument leaf 0 float32\[\?, 4\], dimension 0 is dynamic \(\?\)"):
        hf.trace(lambda x: x, hf.ShapeDtype((None, 4), np.float32))
