"""hloforge.ops, compare family (frontend/ops/compare.py): ops.compare in every direction against
numpy, and its complex operands."""
import numpy as np
import pytest

import hloforge as hf
from hloforge import ops
from helpers import assert_close, random, run


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
