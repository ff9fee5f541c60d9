"""``hloforge.numpy.fft``: numpy's FFT API over traced Tensors (see ``_fft`` for the lowering).
"""
from hloforge.frontend.numpy._fft import (
    fft, ifft, rfft, irfft, hfft, ihfft, fft2, ifft2, rfft2, irfft2, fftn, ifftn, rfftn, irfftn,
    fftfreq, rfftfreq, fftshift, ifftshift)

__all__ = [
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn",
    "ifftn", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]

from hloforge.frontend.numpy import _dtype_mode  # noqa: E402
_dtype_mode.wrap_namespace(globals(), __all__)  # (hf.config.dtypes = "jax": 32-bit in, 32-bit out)
from hloforge.frontend import eager as _eager  # noqa: E402
_eager.wrap_namespace(globals(), __all__)  # (callable eagerly: frontend/eager.py)
from hloforge.frontend.naming import name_missing_attributes as _public_errors  # noqa: E402
_public_errors(globals())  # (AttributeErrors name hloforge.<module>)
