"""hloforge.ops, convert family (frontend/ops/convert.py): ops.convert between dtypes, bfloat16, and
its validation message."""
import numpy as np
import pytest

import hloforge as hf
from hloforge import ops
from hloforge.frontend import dtypes
from helpers import assert_close, random, run
from ops_helpers import F32


@pytest.mark.parametrize("src,dst", [(np.float32, np.int32), (np.int32, np.float64), (np.float64, np.float16),
                                     (np.int64, np.uint8), (np.bool_, np.float32), (np.complex64, np.complex128),
                                     (np.float32, np.complex64), (np.uint16, np.int8)])
def test_convert(src, dst):
    x = random((7,), src, seed=8, low=-100, high=100)
    out = run(lambda x: ops.convert(x, dst), x)
    ref = x.astype(dst) if not (np.dtype(src).kind == "i" and np.dtype(dst).kind == "u") else x.astype(dst)
    assert_close(out, ref)


def test_bfloat16_roundtrip_and_math():
    x = random((5,), np.float32).astype(dtypes.bfloat16)
    out = run(lambda x: (ops.add(x, x), ops.exp(ops.convert(x, np.float32))), x)
    assert out[0].dtype == dtypes.bfloat16
    assert_close(out[0].astype(np.float32), (x.astype(np.float32) * 2), dtype=np.float32, rtol=1e-2)
    assert_close(out[1], np.exp(x.astype(np.float32)))


# ---------------------------------------------------------------- validation messages

@pytest.mark.parametrize("fn,exc,match", [
    (lambda x: ops.convert(x, object), TypeError, "unsupported dtype"),
])
def test_validation_messages(fn, exc, match):
    with pytest.raises(exc, match=match):
        hf.trace(fn, F32)
