"""jax.lax.fft and jax's FftType enum (plain Python data, re-exported)."""
from __future__ import annotations

import operator

import jax
import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax._common import lax_operand
from hloforge.frontend.lax.elementwise import convert_element_type

FftType = jax.lax.FftType
_NAMES = {"fft": FftType.FFT, "ifft": FftType.IFFT, "rfft": FftType.RFFT, "irfft": FftType.IRFFT}


def fft(x, fft_type, fft_lengths):
    """jax.lax.fft: a Fourier transform over the trailing ``len(fft_lengths)`` dimensions (forward
    unnormalized, inverse 1/N); emits ``stablehlo.fft`` (after a ``convert`` to the complex, or for
    RFFT the inexact, dtype, as jax does).

    Args:
      x: an array.
      fft_type: a FftType or one of "fft", "ifft", "rfft", "irfft" (either case).
      fft_lengths: 0 to 3 lengths (none: x converted, untransformed).
    Returns:
      The transform: complex, or real for IRFFT.
    Example:
      >>> y = hf.lax.fft(x, hf.lax.FftType.RFFT, (64,))
    """
    if isinstance(fft_type, str):
        if fft_type.lower() not in _NAMES or fft_type not in (fft_type.lower(), fft_type.upper()):
            raise ValueError(f"hloforge.lax.fft: unknown FFT type '{fft_type}'")
        kind = _NAMES[fft_type.lower()]
    elif isinstance(fft_type, FftType):
        kind = fft_type
    else:
        raise TypeError(f"hloforge.lax.fft: unknown FFT type value '{fft_type}'")
    t = lax_operand(x, "hloforge.lax.fft operand")
    if kind == FftType.RFFT:
        if dtypes.is_complex(t.dtype):
            raise ValueError("hloforge.lax.fft: only real valued inputs supported for rfft")
        target = t.dtype if dtypes.is_float(t.dtype) else np.dtype(np.float32)
    else:
        target = t.dtype if dtypes.is_complex(t.dtype) else (
            np.dtype(np.complex128) if t.dtype == np.float64 else np.dtype(np.complex64))
    t = convert_element_type(t, target)
    lengths = tuple(operator.index(n) for n in fft_lengths)
    if not lengths:
        return t
    if len(lengths) > t.ndim:
        raise ValueError(f"hloforge.lax.fft: FFT input shape {t.shape} must have at least as many input dimensions "
                         f"as fft_lengths {lengths}.")
    return ops.fft(t, kind.name, lengths)


__all__ = ["FftType", "fft"]
