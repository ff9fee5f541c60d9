"""hloforge.ops, fft family (frontend/ops/fft.py): a single ops.fft against numpy.fft, and its
validation message (hloforge.numpy.fft and more ops.fft cases: tests/test_numpy_fft.py)."""
import numpy as np
import pytest

import hloforge as hf
from hloforge import ops
from helpers import assert_close, random, run
from ops_helpers import F32


def test_fft_single_op():
    x = random((3, 8), np.float32, seed=15)
    y = run(lambda x: ops.fft(x, "RFFT", (8,)), x)
    assert_close(y, np.fft.rfft(x).astype(np.complex64))


# ---------------------------------------------------------------- validation messages

@pytest.mark.parametrize("fn,exc,match", [
    (lambda x: ops.fft(x, "DFT", (3,)), ValueError, "fft: fft_type 'DFT' is not one of FFT, IFFT, RFFT, IRFFT"),
])
def test_validation_messages(fn, exc, match):
    with pytest.raises(exc, match=match):
        hf.trace(fn, F32)
