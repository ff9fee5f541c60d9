"""hloforge.ops, fft family (frontend/ops/fft.py): ops.fft of each fft_type, over 1 to 3 dims,
against numpy.fft, and its validation messages (hloforge.numpy.fft: tests/numpy/test_numpy_fft.py)."""
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


@pytest.mark.parametrize("fft_type,shape,lengths", [
    ("FFT", (3, 8), (8,)), ("IFFT", (2, 4, 5), (4, 5)), ("FFT", (2, 3, 4, 5), (3, 4, 5)),
    ("RFFT", (3, 7), (7,)), ("RFFT", (2, 4, 6), (2, 4, 6)),
    ("IRFFT", (3, 5), (8,)), ("IRFFT", (3, 4), (7,)), ("IRFFT", (2, 3, 4), (2, 3, 6)),
])
def test_ops_fft(fft_type, shape, lengths):
    x = random(shape, np.float32 if fft_type == "RFFT" else np.complex64)
    axes = tuple(range(-len(lengths), 0))
    expected = {"FFT": np.fft.fftn, "IFFT": np.fft.ifftn, "RFFT": np.fft.rfftn, "IRFFT": np.fft.irfftn}[
        fft_type](x, s=lengths, axes=axes)
    expected = expected.astype(np.float32 if fft_type == "IRFFT" else np.complex64)
    assert_close(run(lambda a: ops.fft(a, fft_type.lower(), lengths), x), expected)


# ---------------------------------------------------------------- validation messages

@pytest.mark.parametrize("fn,exc,match", [
    (lambda x: ops.fft(x, "DFT", (3,)), ValueError, "fft: fft_type 'DFT' is not one of FFT, IFFT, RFFT, IRFFT"),
])
def test_validation_messages(fn, exc, match):
    with pytest.raises(exc, match=match):
        hf.trace(fn, F32)


C = hf.ShapeDtype((4, 8), np.complex64)
R = hf.ShapeDtype((4, 8), np.float32)


@pytest.mark.parametrize("arg,fft_type,lengths,exc,match", [
    (C, "DCT", (8,), ValueError, "fft: fft_type 'DCT' is not one of FFT, IFFT, RFFT, IRFFT"),
    (C, 3, (8,), ValueError, "fft: fft_type 3 is not one of"),
    (C, "FFT", (), ValueError, r"fft: fft_length \[\] must have 1 to 3 entries"),
    (hf.ShapeDtype((1, 1, 1, 1), np.complex64), "FFT", (1, 1, 1, 1), ValueError,
     r"fft: fft_length \[1, 1, 1, 1\] must have 1 to 3 entries"),
    (C, "FFT", (4, 0), ValueError, r"fft: fft_length \[4, 0\] must be positive"),
    (C, "FFT", 8, TypeError, "fft: fft_length must be a sequence of ints, got 8"),
    (hf.ShapeDtype((8,), np.complex64), "FFT", (2, 8), ValueError,
     r"fft: fft_length \[2, 8\] has more entries than operand rank 1"),
    (C, "FFT", (6,), ValueError,
     r"fft: FFT with fft_length \[6\] needs trailing operand dims \[6\], got \[8\]"),
    (C, "IFFT", (3, 8), ValueError, r"needs trailing operand dims \[3, 8\], got \[4, 8\]"),
    (C, "RFFT", (8,), TypeError, "fft: RFFT needs a float32 or float64 operand, got complex64"),
    (hf.ShapeDtype((4, 8), np.float16), "RFFT", (8,), TypeError, "RFFT needs a float32 or float64 operand, "
                                                                 "got float16"),
    (R, "RFFT", (6,), ValueError,
     r"fft: RFFT with fft_length \[6\] needs trailing operand dims \[6\], got \[8\]"),
    (R, "FFT", (8,), TypeError, "fft: FFT needs a complex64 or complex128 operand, got float32"),
    (R, "IRFFT", (14,), TypeError, "fft: IRFFT needs a complex64 or complex128 operand, got float32"),
    (C, "IRFFT", (8,), ValueError, r"fft: IRFFT with fft_length \[8\] needs trailing operand dims \[5\], "
                                   r"got \[8\] \(operand shape \(4, 8\)\)"),
    (C, "IRFFT", (4, 16), ValueError, r"needs trailing operand dims \[4, 9\], got \[4, 8\]"),
])
def test_ops_fft_errors(arg, fft_type, lengths, exc, match):
    with pytest.raises(exc, match=match):
        hf.trace(lambda a: ops.fft(a, fft_type, lengths), arg)
