"""hloforge.ops, pad family (frontend/ops/pad.py): a single ops.pad (negative and interior padding)
against numpy, and its validation messages (hloforge.numpy.pad and more ops.pad cases:
tests/test_numpy_pad.py)."""
import numpy as np
import pytest

import hloforge as hf
from hloforge import ops
from helpers import assert_close, random, run
from ops_helpers import F32


def test_pad_single_op():
    x = random((3, 8), np.float32, seed=15)
    p = run(lambda x: ops.pad(x, 0.0, (1, -1), (0, 2), (0, 1)), x)
    # interior 1 on dim 1, then low (1, -1), high (0, 2)
    spread = np.zeros((3, 15), np.float32)
    spread[:, ::2] = x
    ref = np.pad(spread, ((1, 0), (0, 2)))[:, 1:]
    assert_close(p, ref)


# ---------------------------------------------------------------- validation messages

@pytest.mark.parametrize("fn,exc,match", [
    (lambda x: ops.pad(x, 0.0, (0, 0), (0, -4)), ValueError, r"pad: result shape \(2, -1\) has a negative dimension"),
    (lambda x: ops.pad(x, 0.0, (0, 0), (0, 0), (0, -1)), ValueError, r"pad: interior_padding \[0, -1\] must be >= 0"),
])
def test_validation_messages(fn, exc, match):
    with pytest.raises(exc, match=match):
        hf.trace(fn, F32)
