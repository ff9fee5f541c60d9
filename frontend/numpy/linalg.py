"""``hloforge.numpy.linalg``: numpy.linalg over traced Tensors.

Factorizations and solvers emit the LAPACK (CPU) and cuSOLVER (GPU) custom calls jax emits
(``hloforge.lax.linalg``); batched over leading dimensions; errors as numpy raises them.
"""
from hloforge.frontend.numpy import _creation_more, _products
from hloforge.frontend.numpy._contractions import matmul
from hloforge.frontend.numpy._linalg import (
    LinAlgError, EigResult, eig, eigvals, EighResult, QRResult, SlogdetResult, SVDResult, cholesky,
    qr, eigh, eigvalsh, svd, svdvals, solve, inv, det, slogdet, matrix_power, vector_norm,
    matrix_norm, norm, matrix_rank, pinv, lstsq, cond, multi_dot, tensorsolve, tensorinv)
from hloforge.frontend.numpy._manipulation import matrix_transpose, outer
from hloforge.frontend.numpy._products import tensordot, vecdot


def diagonal(x, /, *, offset=0):
    """The array API's ``linalg.diagonal``: the diagonals of the last two axes."""
    return _creation_more.diagonal(x, offset, -2, -1)


def trace(x, /, *, offset=0, dtype=None):
    """The array API's ``linalg.trace``: the sums of the diagonals of the last two axes."""
    return _creation_more.trace(x, offset, -2, -1, dtype)


def cross(x1, x2, /, *, axis=-1):
    """The array API's ``linalg.cross``: 3-vector cross products along ``axis``."""
    return _products.cross(x1, x2, axis=axis)


__all__ = [
    "LinAlgError", "EigResult", "eig", "eigvals", "EighResult", "QRResult", "SlogdetResult",
    "SVDResult", "cholesky", "qr", "eigh", "eigvalsh", "svd", "svdvals", "solve", "inv", "det",
    "slogdet", "matrix_power", "vector_norm", "matrix_norm", "norm", "matrix_rank", "pinv",
    "lstsq", "cond", "multi_dot", "tensorsolve", "tensorinv", "matmul", "matrix_transpose",
    "outer", "tensordot", "vecdot", "diagonal", "trace", "cross",
]

from hloforge.frontend.numpy import _dtype_mode  # noqa: E402
_dtype_mode.wrap_namespace(globals(), __all__)  # (hf.config.dtypes = "jax": 32-bit in, 32-bit out)
from hloforge.frontend import eager as _eager  # noqa: E402
_eager.wrap_namespace(globals(), __all__)  # (callable eagerly: frontend/eager.py)
from hloforge.frontend.naming import name_missing_attributes as _public_errors  # noqa: E402
_public_errors(globals())  # (AttributeErrors name hloforge.<module>)
