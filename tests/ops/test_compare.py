"""hloforge.ops, compare family (frontend/ops/compare.py): ops.compare in every direction against
numpy, and its complex operands; select and clamp."""
import numpy as np
import pytest

import hloforge as hf
from hloforge import ops
from helpers import assert_close, random, run
from ops_helpers import F32


@pytest.mark.parametrize("dtype", [np.dtype(d) for d in (np.int32, np.uint8, np.float32, np.bool_)], ids=str)
def test_compare_all_directions(dtype):
    a, b = random((6,), dtype, seed=4), random((6,), dtype, seed=5)
    a[:2] = b[:2]
    dirs = {"EQ": np.equal, "NE": np.not_equal, "GE": np.greater_equal, "GT": np.greater,
            "LE": np.less_equal, "LT": np.less}
    outs = run(lambda a, b: {d: ops.compare(a, b, d) for d in dirs}, a, b)
    for d, f in dirs.items():
        assert_close(outs[d], f(a, b))


def test_compare_complex_eq_only():
    z = random((3,), np.complex64)
    assert_close(run(lambda z: ops.compare(z, z, "EQ"), z), np.ones(3, bool))
    with pytest.raises(TypeError, match="complex operands support only EQ and NE, got LT"):
        hf.trace(lambda z: ops.compare(z, z, "LT"), z)
    with pytest.raises(ValueError, match="direction 'XX' is not one of"):
        hf.trace(lambda z: ops.compare(z, z, "XX"), z)


def test_select_and_clamp():
    x = random((2, 3), np.float32, seed=6)
    y = random((2, 3), np.float32, seed=7)

    def f(x, y):
        return {"select": ops.select(ops.compare(x, y, "GT"), x, y),
                "select0d": ops.select(ops.compare(ops.constant(np.float32(1)), ops.constant(np.float32(0)),
                                                   "GT"), x, y),
                "clamp": ops.clamp(-0.5, x, 0.5),
                "clamp_t": ops.clamp(ops.minimum(x, y), x, ops.maximum(x, y))}
    out = run(f, x, y)
    assert_close(out["select"], np.where(x > y, x, y))
    assert_close(out["select0d"], x)
    assert_close(out["clamp"], np.clip(x, -0.5, 0.5))
    assert_close(out["clamp_t"], x)


@pytest.mark.parametrize("fn,match", [
    (lambda x: ops.select(x, x, x), "select: pred dtype must be bool, got float32"),
    (lambda x: ops.clamp(ops.convert(x, np.float64), x, x), "clamp: min dtype float64 differs"),
])
def test_validation_messages(fn, match):
    with pytest.raises(TypeError, match=match):
        hf.trace(fn, F32)
