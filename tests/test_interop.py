"""Module artifacts (text, bytecode, portable), summary, graph, and StableHLO test files."""
import glob
import os
import shutil

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
from hloforge import numpy as hnp
from hloforge.runtime.checkfile import _ulp_distance, compare, Check, run_check_file
from helpers import assert_close, random

DATA = os.path.join(os.path.dirname(__file__), "data", "check")


def _module():
    return hf.trace(lambda x: hnp.fft.irfft(hnp.pad(hnp.fft.rfft(x), ((0, 0), (0, 1))), n=8) * 2.0,
                    hf.ShapeDtype((3, 8), np.float32))


def _run(m, x):
    return np.asarray(m.compile()(x))


def test_text_bytecode_portable_round_trip():
    m = _module()
    x = random((3, 8), np.float32)
    want = _run(m, x)
    text = hf.Module.parse(m.text)
    bytecode = hf.Module.parse(text.to_bytecode())
    portable = hf.Module.parse(bytecode.to_portable("week12"))
    back = hf.Module.parse(portable.text)
    for mod in (text, bytecode, portable, back):
        assert_close(_run(mod, x), want)
    assert m.to_portable("current")[:4] == b"ML\xefR"
    assert m.to_portable("1.0.0")[:4] == b"ML\xefR"


def test_portable_target_errors():
    with pytest.raises(ValueError, match="portable target 'week99' must be 'current', 'week4', 'week12'"):
        _module().to_portable("week99")


def test_save_and_load_by_extension(tmp_path):
    m = _module()
    x = random((3, 8), np.float32)
    for name in ("m.mlir", "m.mlirbc"):
        m.save(tmp_path / name)
        assert_close(_run(hf.Module.load(tmp_path / name), x), _run(m, x))
    m.save(tmp_path / "p.bin", portable="week4")  # content decides when loading
    assert_close(_run(hf.Module.load(tmp_path / "p.bin"), x), _run(m, x))
    with pytest.raises(ValueError, match="unknown extension '.txt'"):
        m.save(tmp_path / "m.txt")
    with pytest.raises(FileNotFoundError, match="cannot read"):
        hf.Module.load(tmp_path / "missing.mlir")
    (tmp_path / "junk.mlir").write_bytes(b"\xff\xfe\x00junk")
    with pytest.raises(ValueError, match="neither MLIR text nor MLIR bytecode"):
        hf.Module.load(tmp_path / "junk.mlir")


def test_jax_export_serialized_module_runs():
    from jax import export
    exported = export.export(jax.jit(lambda x: jnp.sin(x) * 3))(jax.ShapeDtypeStruct((5,), jnp.float32))
    m = hf.Module.parse(exported.mlir_module_serialized)
    x = random((5,), np.float32)
    assert_close(_run(m, x), np.sin(x) * 3)


def test_signature_summary_and_graph(tmp_path):
    m = hf.trace(lambda x, w: hnp.tanh(x @ w), hf.ShapeDtype((4, 8), np.float32), hf.ShapeDtype((8, 3), np.float32))
    ins, outs = m.signature
    assert [tuple(i) for i in ins] == [((4, 8), np.float32), ((8, 3), np.float32)]
    s = m.summary()
    assert "@main(float32[4, 8], float32[8, 3]) -> (float32[4, 3])" in s
    assert "stablehlo.tanh" in s
    dot = m.graph()
    assert dot.startswith('digraph "main"') and "dot_general" in dot and "arg0 -> op0" in dot
    m.save_graph(tmp_path / "g.dot")
    assert (tmp_path / "g.dot").read_text().startswith("digraph")
    if shutil.which("dot"):
        m.save_graph(tmp_path / "g.svg")
        assert (tmp_path / "g.svg").read_text().lstrip().startswith("<")
    else:
        with pytest.raises(RuntimeError, match="needs Graphviz's `dot` program"):
            m.save_graph(tmp_path / "g.svg")
    with pytest.raises(ValueError, match="unknown extension '.pdf'"):
        m.save_graph(tmp_path / "g.pdf")


def test_fft_and_pad_details_in_summary():
    m = hf.trace(lambda x: hf.ops.fft(hf.ops.pad(x, 0.0, (0, 1), (0, 1)), "RFFT", (10,)),
                 hf.ShapeDtype((2, 8), np.float32))
    s = m.summary()
    assert "fft_type=RFFT fft_length=[10]  float32[2, 10] -> complex64[2, 6]" in s
    assert "low=[0, 1] high=[0, 1] interior=[0, 0]" in s


# (spec_collective_broadcast.mlir needs 4 CPU devices: tests/passes/test_spec_semantics.py runs it through the
# hloforge check CLI, which sets them up)
ONE_DEVICE_FILES = [p for p in sorted(glob.glob(os.path.join(DATA, "*.mlir")))
                    if os.path.basename(p) != "spec_collective_broadcast.mlir"]


@pytest.mark.parametrize("path", ONE_DEVICE_FILES, ids=os.path.basename)
def test_stablehlo_test_files(path):
    result = run_check_file(path)
    if "wrong" in path:
        assert not result.ok
        assert "eq: 1 of 3 elements differ; at index [2]" in result.reason
        assert str(result).startswith("FAIL ")
    else:
        assert result.ok, result.reason
        assert str(result) == f"PASS {path}"


def test_check_file_errors(tmp_path):
    p = tmp_path / "noassert.mlir"
    p.write_text("func.func @main() -> tensor<f32> {\n %0 = stablehlo.constant dense<1.0> : tensor<f32>\n"
                 " return %0 : tensor<f32>\n}")
    assert run_check_file(p).reason == "no check.* assertions found"
    q = tmp_path / "args.mlir"
    q.write_text("func.func @main(%a: tensor<f32>) -> tensor<f32> {\n return %a : tensor<f32>\n}")
    assert run_check_file(q).ok  # (no check ops: a round-trip module, run on seeded inputs)
    q.write_text("func.func @main(%a: tensor<f32>) -> tensor<f32> {\n check.expect_eq %a, %a : tensor<f32>\n"
                 " return %a : tensor<f32>\n}")
    assert "@main takes arguments; check files build their inputs from constants" in run_check_file(q).reason
    assert "cannot read" in run_check_file(tmp_path / "missing.mlir").reason


def test_check_dialect_const_ops(tmp_path):
    p = tmp_path / "dialect.mlir"
    p.write_text("""
func.func @main() -> tensor<2xf32> {
  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = stablehlo.add %0, %0 : tensor<2xf32>
  check.expect_almost_eq_const %1, dense<[2.00001, 4.0]> : tensor<2xf32>
  check.expect_eq_const %1, dense<[2.0, 4.0]> : tensor<2xf32>
  check.expect_close %1, %1, max_ulp_difference = 1 : tensor<2xf32>, tensor<2xf32>
  check.expect_eq %0, %0 : tensor<2xf32>
  return %1 : tensor<2xf32>
}""")
    result = run_check_file(p)
    assert result.ok, result.reason


def test_comparisons():
    a = np.array([1.0, 2.0, np.nan], np.float32)
    assert compare(Check("eq"), a, a.copy()) is None
    assert compare(Check("close"), a, np.nextafter(a, np.float32(9))) is None
    assert "close" in compare(Check("close", max_ulp=0), a, np.nextafter(a, np.float32(9)))
    assert compare(Check("almost_eq"), a, a + 1e-5) is None
    assert "type mismatch" in compare(Check("eq"), a, a.astype(np.float64))
    np.testing.assert_array_equal(_ulp_distance(np.float32([0.0]), np.float32([-0.0])), [0])


def test_pass_dumps_and_printing(tmp_path, capsys):
    m = hf.trace(lambda x: hnp.fft.irfft(hnp.fft.rfft(x), n=8) * 1.0, hf.ShapeDtype((3, 8), np.float32))
    m.optimize(dump_dir=tmp_path, print_ir_after_change=True)
    dumps = sorted(p.name for p in tmp_path.iterdir())
    assert dumps and all(name[:2].isdigit() and name.endswith(".mlir") for name in dumps)
    assert any("inverse-fft-elimination" in name for name in dumps)
    assert "stablehlo.fft" not in (tmp_path / dumps[-1]).read_text()
    headers = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("// ----- IR after ")]
    assert any("inverse-fft-elimination" in h for h in headers), headers  # (in the fixpoint group's name)
