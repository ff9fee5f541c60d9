"""The exact one-op FFT builder. numpy's FFT API lives in hloforge.numpy.fft."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import dtypes
from hloforge.frontend.context import i64_array, parse_attr
from hloforge.frontend.ops._common import builder, int_tuple, operand
from hloforge.frontend.registry import register
from hloforge.frontend.tracing import Tensor

FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")


def _fft_rule(x, fft_type, fft_length):
    if fft_type not in FFT_TYPES:
        raise ValueError(f"fft: fft_type {fft_type!r} is not one of {', '.join(FFT_TYPES)}")
    lengths = int_tuple("fft", "fft_length", fft_length)
    if not 1 <= len(lengths) <= 3:
        raise ValueError(f"fft: fft_length {list(lengths)} must have 1 to 3 entries")
    if any(n <= 0 for n in lengths):
        raise ValueError(f"fft: fft_length {list(lengths)} must be positive")
    if len(lengths) > x.ndim:
        raise ValueError(f"fft: fft_length {list(lengths)} has more entries than operand rank {x.ndim}")
    k = len(lengths)
    batch, trailing = x.shape[:x.ndim - k], x.shape[x.ndim - k:]
    if fft_type == "RFFT":
        if x.dtype not in (np.float32, np.float64):
            raise TypeError(f"fft: RFFT needs a float32 or float64 operand, got {x.dtype}")
        expect = lengths
        out = batch + lengths[:-1] + (lengths[-1] // 2 + 1,)
        out_dtype = dtypes.complex_dtype(x.dtype)
    else:
        if x.dtype not in (np.complex64, np.complex128):
            raise TypeError(f"fft: {fft_type} needs a complex64 or complex128 operand, got {x.dtype}")
        if fft_type == "IRFFT":
            expect = lengths[:-1] + (lengths[-1] // 2 + 1,)
            out = batch + lengths
            out_dtype = dtypes.real_dtype(x.dtype)
        else:
            expect = lengths
            out = x.shape
            out_dtype = x.dtype
    if tuple(trailing) != tuple(expect):
        raise ValueError(f"fft: {fft_type} with fft_length {list(lengths)} needs trailing operand dims "
                         f"{list(expect)}, got {list(trailing)} (operand shape {x.shape})")
    return out, out_dtype


@register("stablehlo.fft", _fft_rule)
def fft(x, fft_type: str, fft_length, *, loc=None) -> Tensor:
    """Fourier transform over the trailing ``len(fft_length)`` dims; emits one ``stablehlo.fft``.

    Unnormalized forward transforms, 1/N-normalized inverses (as numpy's "backward").
    XLA:CPU accepts zero-size batch dims but cuFFT cannot plan them; hloforge.numpy.fft
    emits a constant for empty results instead of this op.

    Args:
      x: complex Tensor for "FFT"/"IFFT"/"IRFFT", float32/float64 for "RFFT".
      fft_type: "FFT", "IFFT", "RFFT" or "IRFFT".
      fft_length: 1 to 3 positive lengths. For "IRFFT" the operand's last dim
        must be ``fft_length[-1] // 2 + 1``.
    Returns:
      complex Tensor (FFT, IFFT, RFFT; RFFT halves the last dim) or real (IRFFT).
    Example:
      >>> y = ops.fft(x, "RFFT", (64,))
    """
    x = operand("fft", x)
    if isinstance(fft_type, str):
        fft_type = fft_type.upper()
    shape, dtype = _fft_rule(x, fft_type, fft_length)
    attrs = {"fft_type": parse_attr(f"#stablehlo<fft_type {fft_type}>"),
             "fft_length": i64_array(int_tuple("fft", "fft_length", fft_length))}
    b = builder()
    op = b.emit("stablehlo.fft", [x], [(shape, dtype)], attrs, loc=loc)
    return Tensor(op.result, shape, dtype, b)
