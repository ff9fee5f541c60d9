"""jax.export's shape polymorphism: shape assertions checked during refinement, then removed."""
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export

import hloforge as hf


def _exported(fn, *shapes):
    return export.export(jax.jit(fn))(*shapes).mlir_module()


@pytest.fixture(scope="module")
def matmul_text():
    a, b = export.symbolic_shape("a, b")
    return _exported(lambda x, y: jnp.sin(x) @ y, jax.ShapeDtypeStruct((a, 4), jnp.float32),
                     jax.ShapeDtypeStruct((4, b), jnp.float32))


def test_exported_module_runs_at_several_shapes(matmul_text):
    assert "@shape_assertion" in matmul_text
    exe = hf.Module.parse(matmul_text).compile()
    for rows, cols in ((3, 5), (1, 2), (7, 1)):
        x = np.linspace(-1, 1, rows * 4, dtype=np.float32).reshape(rows, 4)
        y = np.ones((4, cols), np.float32)
        np.testing.assert_allclose(np.asarray(exe(x, y)), np.sin(x) @ y, rtol=1e-6, atol=1e-6)


def test_refine_removes_the_assertions(matmul_text):
    refined = hf.Module.parse(matmul_text).refine([((3, 4), np.float32), ((4, 5), np.float32)])
    assert "shape_assertion" not in refined.text
    assert refined.signature[1][0].shape == (3, 5)


def test_a_failed_assertion_names_the_dimension_variable(matmul_text):
    exe = hf.Module.parse(matmul_text).compile()
    with pytest.raises(ValueError, match=r"fail a jax.export shape assertion: .*dimension variable 'a'.*'a' = 0"):
        exe(np.ones((0, 4), np.float32), np.ones((4, 5), np.float32))


def test_an_inconsistent_dimension_is_refused():
    (a,) = export.symbolic_shape("a")
    text = _exported(lambda x: x[: x.shape[0] // 2] * 2.0, jax.ShapeDtypeStruct((2 * a,), jnp.float32))
    exe = hf.Module.parse(text).compile()
    np.testing.assert_array_equal(np.asarray(exe(np.arange(6, dtype=np.float32))), [0.0, 2.0, 4.0])
    with pytest.raises(ValueError, match=r"fail a jax.export shape assertion: .*Division had remainder 1 "
                                         r"when computing the value of .a."):
        exe(np.arange(5, dtype=np.float32))


def test_static_module_with_assertions_compiles(matmul_text):
    # static argument types with the assertions still in place (as another tool may save them)
    kept = matmul_text.replace("tensor<?x4xf32>", "tensor<2x4xf32>").replace("tensor<4x?xf32>", "tensor<4x3xf32>")
    out = hf.Module.parse(kept).compile()(np.ones((2, 4), np.float32), np.ones((4, 3), np.float32))
    np.testing.assert_allclose(np.asarray(out), np.full((2, 3), 4 * np.sin(1.0)), rtol=1e-6)


def test_hloforge_run_takes_an_exported_module(tmp_path, matmul_text):
    path = tmp_path / "poly.mlir"
    path.write_text(matmul_text)
    np.save(tmp_path / "x.npy", np.ones((3, 4), np.float32))
    np.save(tmp_path / "y.npy", np.ones((4, 2), np.float32))
    result = subprocess.run([sys.executable, "-m", "hloforge.runtime.cli", "run", str(path),
                             "--arg", str(tmp_path / "x.npy"), "--arg", str(tmp_path / "y.npy")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("output 0: float32[3, 2]")
