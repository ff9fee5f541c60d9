"""Runtime: executables on CPU through PJRT, argument checking, precision, foreign modules."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
from hloforge import numpy as hnp
from helpers import assert_close, random


def _exe():
    return hf.trace(lambda x, s: x * s, hf.ShapeDtype((2, 3), np.float32),
                    hf.ShapeDtype((), np.float32)).compile()


def test_executable_accepts_numpy_scalars_and_jax_arrays():
    exe = _exe()
    x = random((2, 3), np.float32)
    assert_close(exe(x, 2.0), x * 2)
    assert_close(exe(x, 2), x * 2)
    assert_close(exe(jnp.asarray(x), np.float32(3)), x * 3)
    out = exe(x, 1.0)
    assert isinstance(out, jax.Array)
    assert_close(exe(out, np.array(2, np.float32)), x * 2)  # device-resident input


@pytest.mark.parametrize("args,exc,match", [
    ((np.ones((2, 3), np.float32),), TypeError, "main: expected 2 arguments, got 1"),
    ((np.ones((3, 2), np.float32), 1.0), ValueError, r"argument 0: expected float32\[2, 3\], got float32\[3, 2\]"),
    ((np.ones((2, 3), np.float64), 1.0), TypeError, r"argument 0: expected float32\[2, 3\], got float64\[2, 3\]"),
    ((np.ones((2, 3), np.float32), 1j), TypeError, r"argument 1: expected float32\[\], got Python complex"),
    ((np.ones((2, 3), np.float32), np.ones(2, np.float32)), ValueError, r"argument 1: expected float32\[\], got float32\[2\]"),
    ((jnp.ones((2, 2)), 1.0), ValueError, r"argument 0: expected float32\[2, 3\], got float32\[2, 2\]"),
])
def test_argument_errors_name_the_argument(args, exc, match):
    with pytest.raises(exc, match=match):
        _exe()(*args)


def test_int_scalar_overflow_is_rejected():
    exe = hf.trace(lambda x: x, hf.ShapeDtype((), np.int8)).compile()
    with pytest.raises(OverflowError, match="Python integer 1000 out of bounds for int8"):
        exe(1000)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.int64, np.uint64])
def test_64_bit_round_trip_without_touching_jax_x64(dtype):
    assert not jax.config.jax_enable_x64
    x = random((5,), dtype, seed=4)
    if np.dtype(dtype).kind in "fc":
        x = x * (1 + 1e-13)  # digits float32 cannot hold
    out = hf.jit(lambda x: x + x - x)(x)
    assert out.dtype == dtype
    np.testing.assert_array_equal(np.asarray(out), x)
    assert not jax.config.jax_enable_x64


def _jax_fn(x):
    y = jnp.fft.irfftn(jnp.fft.rfftn(x, norm="ortho"), s=x.shape, norm="ortho")
    return y + jax.nn.relu(jax.scipy.special.erf(x)) + jnp.linalg.norm(x), jnp.sum(x, axis=0)


def test_parse_and_run_jax_lowered_module():
    x = random((4, 6), np.float32, seed=5)
    text = jax.jit(_jax_fn).lower(x).as_text()
    m = hf.Module.parse(text)
    assert m.entry == "main"
    assert m.op_counts()["func.call"] >= 1
    got = m.compile()(x)
    want = jax.jit(_jax_fn)(x)
    for g, w in zip(got, want):
        assert_close(g, np.asarray(w))


def test_parse_bytecode_and_custom_entry():
    text = """
    func.func @helper(%a: tensor<3xf32>) -> tensor<3xf32> {
      %0 = stablehlo.add %a, %a : tensor<3xf32>
      return %0 : tensor<3xf32>
    }"""
    m = hf.Module.parse(text)
    assert m.entry == "helper"
    assert_close(m.compile()(np.ones(3, np.float32)), np.full(3, 2, np.float32))


def test_parse_errors():
    with pytest.raises(ValueError, match="Module.parse: invalid MLIR"):
        hf.Module.parse("func.func @main( {")
    with pytest.raises(ValueError, match="no public function"):
        hf.Module.parse("module {}")


_UNDECLARED = """func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %x, %y : tensor<2xf32>
  return %0 : tensor<2xf32>
}"""


def test_parsed_text_names_its_source_in_diagnostics_and_locations(tmp_path):
    with pytest.raises(ValueError, match=r'loc\("-":2:26\): use of undeclared SSA value name'):
        hf.Module.parse(_UNDECLARED)  # (MLIR's name for a buffer)
    with pytest.raises(ValueError, match=r'loc\("<stdin>":2:26\): use of undeclared SSA value name'):
        hf.Module.parse(_UNDECLARED, source_name="<stdin>")
    good = _UNDECLARED.replace("%y", "%x")
    text = hf.Module.parse(good, source_name="in/m.mlir").to_text(debug_info=True)
    assert 'loc("in/m.mlir":2:8)' in text and '%arg0: tensor<2xf32> loc("in/m.mlir":1:17)' in text
    assert '"-"' not in text
    (tmp_path / "m.mlir").write_text(good)
    assert f'loc("{tmp_path / "m.mlir"}":2:8)' in hf.Module.load(tmp_path / "m.mlir").to_text(debug_info=True)
    traced = 'loc("elsewhere.py":7:3)'
    kept = hf.Module.parse(good.replace(" : tensor<2xf32>\n  return", f" : tensor<2xf32> {traced}\n  return"),
                           source_name="m.mlir")
    assert traced in kept.to_text(debug_info=True)  # (a location the text gives is kept)
    with pytest.raises(TypeError, match="Module.parse: source_name must be a str or None, got int"):
        hf.Module.parse(good, source_name=3)


def test_module_repr_and_counts():
    m = hf.trace(lambda x: hnp.exp(x) + 1.0, hf.ShapeDtype((2,), np.float32))
    counts = m.op_counts()
    assert counts["stablehlo.exponential"] == 1 and counts["stablehlo.add"] == 1
    assert repr(m).startswith("<hloforge.Module @main:")
    assert str(m) == m.text
    assert "stablehlo.exponential" in m.to_text(generic=True) and '"stablehlo.exponential"' in m.to_text(generic=True)


def test_executable_introspection():
    exe = hf.trace(lambda a, b: a @ b, hf.ShapeDtype((8, 8), np.float32), hf.ShapeDtype((8, 8), np.float32)).compile()
    assert "dot" in exe.hlo_text
    assert exe.compile_seconds > 0
    assert exe.cost_analysis().get("flops", 0) >= 2 * 8 * 8 * 8 - 64
    stats = exe.memory_stats()
    assert stats.argument_size_in_bytes == 2 * 8 * 8 * 4 and stats.output_size_in_bytes == 8 * 8 * 4
    assert "Executable(main: (float32[8, 8], float32[8, 8]) -> (float32[8, 8]) on" in repr(exe)


def test_devices_and_missing_gpu_message():
    assert hf.devices("cpu")
    try:
        hf.devices("gpu")
    except hf.DeviceNotFoundError as e:
        assert "pip install 'hloforge[cuda12]'" in str(e)
