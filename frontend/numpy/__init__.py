"""``hloforge.numpy``: numpy's API over traced Tensors, emitting StableHLO.

Functions follow numpy 2 semantics (broadcasting, NEP 50 promotion with weak
Python scalars, floor division and modulo). ``hloforge.numpy.fft`` and
``hloforge.numpy.pad`` carry the FFT and padding families.

``hloforge.numpy.fft`` and ``hloforge.numpy.linalg`` load with it, as jax.numpy's do (a program's first
call would otherwise import them while it is timed).
"""
import functools as _functools

from hloforge.frontend.numpy._base import asarray, astype, broadcast_to
from hloforge.frontend.numpy._creation import (
    arange, full, full_like, ones, ones_like, zeros, zeros_like)
from hloforge.frontend.numpy._indexing import put_along_axis, take, take_along_axis
from hloforge.frontend.numpy._contractions import dot, einsum, matmul
from hloforge.frontend.numpy._math import (
    abs, absolute, add, arctan2, around, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, cbrt,
    ceil, clip, conj, conjugate, cos, divide, equal, exp, expm1, floor, floor_divide, greater,
    greater_equal, imag, invert, less, less_equal, log, log1p, logical_and, logical_not,
    logical_or, logical_xor, maximum, minimum, mod, multiply, negative, not_equal, positive, power,
    real, reciprocal, remainder, rint, round, sign, sin, sqrt, square, subtract, tan, tanh,
    true_divide, where)
from hloforge.frontend.numpy._ordering import (
    argmax, argmin, argpartition, argsort, cumprod, cumsum, lexsort, nanargmax, nanargmin, nancumprod, nancumsum,
    partition, sort, sort_complex)
from hloforge.frontend.numpy._reductions import all, amax, amin, any, max, mean, min, prod, sum
from hloforge.frontend.numpy._shape import (
    concatenate, expand_dims, flip, moveaxis, ravel, reshape, squeeze, stack, swapaxes, transpose)

pi = 3.141592653589793
e = 2.718281828459045
inf = float("inf")
nan = float("nan")
newaxis = None
from hloforge.frontend.numpy._pad import pad  # noqa: E402
from hloforge.frontend.numpy import _tensor_methods  # noqa: F401,E402
from hloforge.frontend.numpy._ufuncs import (  # noqa: E402
    acos, acosh, angle, arccos, arccosh, arcsin, arcsinh, arctan, arctanh, asin, asinh, atan, atan2, atanh,
    bitwise_count, bitwise_invert, bitwise_left_shift, bitwise_right_shift, copysign, cosh, deg2rad, degrees,
    divmod, exp2, fabs, fix, float_power, fmax, fmin, fmod, frexp, gcd, heaviside, hypot, iscomplex, isfinite,
    isinf, isnan, isneginf, isposinf, isreal, lcm, ldexp, left_shift, log10, log2, logaddexp, logaddexp2, modf,
    nan_to_num, nextafter, rad2deg, radians, right_shift, signbit, sinc, sinh, spacing, trunc)
from hloforge.frontend.numpy._manipulation import (  # noqa: E402
    append, array_split, atleast_1d, atleast_2d, atleast_3d, block, broadcast_arrays, broadcast_shapes,
    column_stack, concat, delete, diff, dsplit, dstack, ediff1d, fliplr, flipud, hsplit, hstack, insert, kron,
    matrix_transpose, outer, permute_dims, repeat, resize, roll, rollaxis, rot90, split, tile, unstack, vsplit,
    vstack)
from hloforge.frontend.numpy._creation_more import (  # noqa: E402
    array, bartlett, blackman, copy, diag, diag_indices, diag_indices_from, diagflat, diagonal, empty, empty_like,
    eye, fromfunction, geomspace, hamming, hanning, identity, indices, ix_, kaiser, linspace, logspace,
    mask_indices, meshgrid, trace, tri, tril, tril_indices, tril_indices_from, triu, triu_indices,
    triu_indices_from, vander)
from hloforge.frontend.numpy._statistics import (  # noqa: E402
    average, corrcoef, count_nonzero, cov, median, nanmax, nanmean, nanmedian, nanmin, nanpercentile, nanprod,
    nanquantile, nanstd, nansum, nanvar, percentile, ptp, quantile, std, var)
from hloforge.frontend.numpy._sequences import (  # noqa: E402
    bincount, convolve, correlate, digitize, histogram, histogram2d, histogram_bin_edges, histogramdd, interp,
    searchsorted)
from hloforge.frontend.numpy._logic import (  # noqa: E402
    allclose, array_equal, array_equiv, can_cast, choose, iscomplexobj, isclose, isdtype, isin, isrealobj,
    isscalar, issubdtype, iterable, ndim, piecewise, promote_types, result_type, select, shape, size)
from hloforge.frontend.numpy._products import (  # noqa: E402
    apply_along_axis, apply_over_axes, cross, gradient, inner, matvec, packbits, ravel_multi_index, tensordot,
    trapezoid, unpackbits, unravel_index, unwrap, vdot, vecdot, vecmat)
from hloforge.frontend.numpy._vectorize import vectorize  # noqa: E402
from hloforge.frontend.numpy._polynomial import (  # noqa: E402
    poly, polyadd, polyder, polydiv, polyfit, polyint, polymul, polysub, polyval, roots, trim_zeros)
pow = power  # noqa: E305 (the array API name)
from numpy import (  # noqa: E402  (numpy's scalar types, as jax.numpy re-exports them)
    bool_, complex64, complex128, float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32,
    uint64)
from hloforge.frontend.dtypes import bfloat16  # noqa: E402
from hloforge.frontend.numpy._extras import (  # noqa: E402
    einsum_path, fill_diagonal, from_dlpack, frombuffer, fromfile, fromiter, fromstring, get_printoptions, i0,
    load, place, printoptions, put, set_printoptions)
from hloforge.frontend.numpy._setops import (  # noqa: E402
    argwhere, compress, extract, flatnonzero, intersect1d, nonzero, setdiff1d, setxor1d, union1d, unique,
    unique_all, unique_counts, unique_inverse, unique_values)
from hloforge.frontend.numpy._array_api import (  # noqa: E402
    __array_api_version__, __array_namespace_info__, cumulative_prod, cumulative_sum, finfo, iinfo)
bool = bool_  # noqa: E305,A001 (the array API's name of the boolean dtype)

from hloforge.frontend.numpy import _dtype_mode  # noqa: E402
_dtype_mode.wrap_namespace(globals(), [n for n in list(globals()) if not n.startswith("_")])  # (hf.config.dtypes = "jax": 32-bit in, 32-bit out)
from hloforge.frontend import eager as _eager  # noqa: E402
# Functions whose result shape depends on their inputs' values: called eagerly, those inputs are
# baked into the program (as jax.numpy reads concrete values), so no size= is needed outside a trace
_VALUE_SHAPED = {**{name: ("a",) for name in ("flatnonzero", "nonzero", "argwhere")},
                 "extract": ("condition", "arr"), "unique": ("ar",),
                 **{name: ("x",) for name in ("unique_values", "unique_counts", "unique_inverse", "unique_all")},
                 **{name: ("ar1", "ar2") for name in ("union1d", "intersect1d", "setdiff1d", "setxor1d")}}
_eager.wrap_namespace(globals(), [n for n in list(globals()) if not n.startswith("_")],  # (callable eagerly)
                      static=_VALUE_SHAPED)
from hloforge.frontend.numpy._ufunc import make_ufuncs as _make_ufuncs, ufunc  # noqa: E402
_make_ufuncs(globals())  # (add, multiply, ...: jax.numpy's 14 ufuncs, with reduce/accumulate/at/reduceat/outer)
_select = where


def _where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """numpy.where: with ``x`` and ``y``, theirs where ``condition`` holds and where it does not
    (broadcast, promoted; emits stablehlo.select); with neither, ``nonzero(condition)`` (``size``
    and ``fill_value`` as jax.numpy's, needed for a traced condition). Defined on the eager
    functions, so each form keeps its own eager behaviour."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("hloforge.numpy.where: either both or neither of x and y should be given")
    if size is not None or fill_value is not None:
        raise ValueError("hloforge.numpy.where: size and fill_value are for the one-argument form (nonzero)")
    return _select(condition, x, y)


@_functools.wraps(_where)
def where(*args, **kwargs):  # (an eager function as the others are: __wrapped__ is what it runs)
    return _where(*args, **kwargs)


where.__hloforge_eager__ = True  # noqa: E305

from hloforge.frontend.numpy import fft, linalg  # noqa: E402  (jax.numpy.fft, jax.numpy.linalg)
from hloforge.frontend.naming import name_missing_attributes as _public_errors  # noqa: E402
_public_errors(globals())
