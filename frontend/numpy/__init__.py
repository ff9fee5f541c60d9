"""``hloforge.numpy``: numpy's API over traced Tensors, emitting StableHLO.

Functions follow numpy 2 semantics (broadcasting, NEP 50 promotion with weak
Python scalars, floor division and modulo). ``hloforge.numpy.fft`` and
``hloforge.numpy.pad`` carry the FFT and padding families.
"""
from hloforge.frontend.numpy._base import asarray, astype, broadcast_to
from hloforge.frontend.numpy.creation import (
    arange, full, full_like, ones, ones_like, zeros, zeros_like)
from hloforge.frontend.numpy.indexing import put_along_axis, take, take_along_axis
from hloforge.frontend.numpy.linalg import dot, einsum, matmul
from hloforge.frontend.numpy.math import (
    abs, absolute, add, arctan2, around, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, cbrt,
    ceil, clip, conj, conjugate, cos, divide, equal, exp, expm1, floor, floor_divide, greater,
    greater_equal, imag, invert, less, less_equal, log, log1p, logical_and, logical_not,
    logical_or, logical_xor, maximum, minimum, mod, multiply, negative, not_equal, positive, power,
    real, reciprocal, remainder, rint, round, sign, sin, sqrt, square, subtract, tan, tanh,
    true_divide, where)
from hloforge.frontend.numpy.ordering import argmax, argmin, argsort, cumprod, cumsum, sort
from hloforge.frontend.numpy.reductions import all, amax, amin, any, max, mean, min, prod, sum
from hloforge.frontend.numpy.shape import (
    concatenate, expand_dims, flip, moveaxis, ravel, reshape, squeeze, stack, swapaxes, transpose)

pi = 3.141592653589793
e = 2.718281828459045
inf = float("inf")
nan = float("nan")
newaxis = None
from hloforge.frontend.numpy import fft  # noqa: E402
from hloforge.frontend.numpy.pad import pad  # noqa: E402
from hloforge.frontend.numpy import tensor_methods as _tensor_methods  # noqa: F401,E402
