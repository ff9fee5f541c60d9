"""The exact one-op FFT builder. numpy's FFT API lives in hloforge.numpy.fft."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import attributes as attr
from hloforge.frontend import dtypes
from hloforge.frontend.ops import _evaluate as ev
from hloforge.frontend.ops._common import int_tuple, operand
from hloforge.frontend.registry import bind, register
from hloforge.frontend.tracing import Tensor

FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")


def _fft_params(fft_type, fft_length):
    if isinstance(fft_type, str):
        fft_type = fft_type.upper()
    if fft_type not in FFT_TYPES:
        raise ValueError(f"fft: fft_type {fft_type!r} is not one of {', '.join(FFT_TYPES)}")
    return {"fft_type": fft_type, "fft_length": int_tuple("fft", "fft_length", fft_length)}


def _fft_rule(x, fft_type, fft_length):
    lengths = fft_length
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


_NUMPY_FFT = {"FFT": np.fft.fftn, "IFFT": np.fft.ifftn, "RFFT": np.fft.rfftn, "IRFFT": np.fft.irfftn}


def _fft_evaluate(x, fft_type, fft_length):
    """Transforms of length 1 (a copy, exact), by numpy over the trailing ``len(fft_length)``
    dims; None for longer ones (the backend's FFT library rounds its own way and XLA never folds
    an FFT) and for non-finite or subnormal inputs."""
    if any(n != 1 for n in fft_length):
        return None
    if not ev.safe_inputs([x]) or (ev.kind(x) == "f" and not np.isfinite(x).all()):
        return None
    axes = tuple(range(x.ndim - len(fft_length), x.ndim))
    result = _fft_rule(x, fft_type, fft_length)[1]
    wide = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
    with np.errstate(all="ignore"):
        return ev.finish(_NUMPY_FFT[fft_type](wide, s=list(fft_length), axes=axes), result)


@register("stablehlo.fft", rule=_fft_rule, params=_fft_params,
          attributes=lambda fft_type, fft_length: {"fft_type": attr.fft_type(fft_type),
                                                   "fft_length": attr.i64s(fft_length)},
          decode=lambda op: {"fft_type": attr.read_fft_type(op), "fft_length": attr.read_ints(op, "fft_length")},
          evaluate=_fft_evaluate)
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
    return bind("stablehlo.fft", [operand("fft", x)], fft_type=fft_type, fft_length=fft_length, loc=loc)
