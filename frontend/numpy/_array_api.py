"""The Python array API standard's namespace-level pieces of hloforge.numpy: ``__array_api_version__``,
``__array_namespace_info__``, ``finfo``/``iinfo`` (Python numbers, as the standard asks) and
``cumulative_sum``/``cumulative_prod`` (``include_initial``)."""
from __future__ import annotations

import numpy as np
import ml_dtypes

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy import _ordering
from hloforge.frontend.numpy._base import asarray, default_device as _device, normalize_axis

__array_api_version__ = "2024.12"

_KINDS = {
    "bool": lambda d: d == np.bool_,
    "signed integer": dtypes.is_signed_int,
    "unsigned integer": dtypes.is_unsigned_int,
    "integral": dtypes.is_integer,
    "real floating": lambda d: dtypes.is_float(d) and d != dtypes.bfloat16,
    "complex floating": dtypes.is_complex,
    "numeric": lambda d: d != np.bool_ and d != dtypes.bfloat16,
}
_STANDARD = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float32", "float64", "complex64", "complex128")  # (float16 and bfloat16 are not array API dtypes)


class ArrayNamespaceInfo:
    """What ``hloforge.numpy.__array_namespace_info__()`` returns: the array API's inspection object."""

    def capabilities(self):
        """The optional features: boolean indexing and data-dependent shapes need concrete values
        (as in jax.numpy); XLA arrays have at most 64 dimensions."""
        return {"boolean indexing": False, "data-dependent shapes": False, "max dimensions": 64}

    def default_device(self):
        """The device eager results live on (jax's first device)."""
        return _device()

    def devices(self):
        """The devices arrays can live on: jax's default device."""
        return [_device()]

    def default_dtypes(self, *, device=None):
        """numpy 2's defaults, as hloforge's weak Python scalars resolve them (float64, complex128, int64)."""
        integral = dtypes.result_type(0)
        return {"real floating": dtypes.result_type(0.0), "complex floating": dtypes.result_type(0j),
                "integral": integral, "indexing": integral}

    def dtypes(self, *, device=None, kind=None):
        """The array API dtypes hloforge supports, by name, of ``kind`` (a kind name, or a tuple of them;
        None: every numeric dtype and bool)."""
        all_ = [np.dtype(n) for n in _STANDARD]
        if kind is None:
            return {d.name: d for d in all_}
        kinds = kind if isinstance(kind, tuple) else (kind,)
        for k in kinds:
            if k not in _KINDS:
                raise ValueError(f"hloforge.numpy.__array_namespace_info__().dtypes: unknown kind {k!r}; "
                                 f"kinds: {', '.join(_KINDS)}")
        return {d.name: d for d in all_ if any(_KINDS[k](d) for k in kinds)}


def __array_namespace_info__():
    """The array API inspection namespace.

    Returns:
      an ``ArrayNamespaceInfo``: ``capabilities()``, ``default_device()``, ``devices()``,
      ``default_dtypes()``, ``dtypes(kind=...)``.

    Example:
      >>> hnp.__array_namespace_info__().default_dtypes()["real floating"]
      dtype('float64')
    """
    return ArrayNamespaceInfo()


def _dtype_of(x, what):
    d = getattr(x, "dtype", x) if not isinstance(x, (np.dtype, type, str)) else x
    try:
        return dtypes.canonical(d)
    except TypeError:
        raise TypeError(f"hloforge.numpy.{what}: expected a dtype or an array, got {x!r}") from None


class finfo_object:
    """Machine limits of a floating dtype, as Python floats (the array API's ``finfo`` object)."""

    def __init__(self, dtype):
        info = ml_dtypes.finfo(dtype) if dtype == dtypes.bfloat16 else np.finfo(dtype)
        self.dtype = np.dtype(info.dtype)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.smallest_normal = float(info.smallest_normal)
        self.tiny = self.smallest_normal
        self.resolution = float(info.resolution)
        self.precision = int(info.precision)

    def __repr__(self):
        return f"finfo(bits={self.bits}, eps={self.eps}, max={self.max}, min={self.min}, dtype={self.dtype})"


class iinfo_object:
    """Machine limits of an integer dtype, as Python ints (the array API's ``iinfo`` object)."""

    def __init__(self, dtype):
        info = np.iinfo(dtype)
        self.dtype = np.dtype(dtype)
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)

    def __repr__(self):
        return f"iinfo(bits={self.bits}, max={self.max}, min={self.min}, dtype={self.dtype})"


def finfo(type):  # noqa: A002 (the array API's parameter name)
    """Machine limits of a floating dtype (a complex dtype: its real part's).

    Args:
      type: a floating or complex dtype, or an array of one.
    Returns:
      an object with ``bits``, ``eps``, ``max``, ``min``, ``smallest_normal`` (Python numbers) and ``dtype``.

    Example:
      >>> hnp.finfo(hnp.float32).eps
      1.1920928955078125e-07
    """
    d = _dtype_of(type, "finfo")
    if not dtypes.is_inexact(d):
        raise ValueError(f"hloforge.numpy.finfo: {d} is not a floating or complex dtype")
    return finfo_object(dtypes.real_dtype(d))


def iinfo(type):  # noqa: A002
    """Machine limits of an integer dtype.

    Args:
      type: an integer dtype, or an array of one.
    Returns:
      an object with ``bits``, ``max``, ``min`` (Python ints) and ``dtype``.

    Example:
      >>> hnp.iinfo(hnp.int8).min
      -128
    """
    d = _dtype_of(type, "iinfo")
    if not dtypes.is_integer(d):
        raise ValueError(f"hloforge.numpy.iinfo: {d} is not an integer dtype")
    return iinfo_object(d)


def _cumulative(name, numpy_name, identity):
    cum = getattr(_ordering, numpy_name)

    def fn(x, /, *, axis=None, dtype=None, include_initial=False):
        x = asarray(x)
        if axis is None:
            if x.ndim > 1:
                raise ValueError(f"hloforge.numpy.{name}: axis is required for a {x.ndim}-d array "
                                 f"(shape {x.shape})")
            axis = 0
        if x.ndim == 0:
            raise ValueError(f"hloforge.numpy.{name}: x must have at least one dimension (got a 0-d array)")
        axis = normalize_axis(axis, x.ndim)
        out = cum(x, axis=axis, dtype=dtype)
        if include_initial:
            low = [0] * out.ndim
            low[axis] = 1
            out = ops.pad(out, identity, low, [0] * out.ndim)
        return out

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"""The array API's {name}: ``{numpy_name}`` along ``axis``, optionally starting with {identity}.

    Emits what ``hloforge.numpy.{numpy_name}`` emits, and ``stablehlo.pad`` for ``include_initial``.

    Args:
      x: an array of at least one dimension.
      axis: the axis (required when ``x`` has more than one dimension).
      dtype: the accumulator and result dtype (default: numpy's, as for ``{numpy_name}``).
      include_initial: prepend the empty {name[11:]} ({identity}), so the axis grows by one.
    Returns:
      the running {name[11:]}.

    Example:
      >>> hnp.{name}(hnp.asarray([1, 2, 3]), include_initial=True)
    """
    return fn


cumulative_sum = _cumulative("cumulative_sum", "cumsum", 0)
cumulative_prod = _cumulative("cumulative_prod", "cumprod", 1)

__all__ = ["__array_api_version__", "__array_namespace_info__", "finfo", "iinfo", "cumulative_sum",
           "cumulative_prod"]
