"""Arguments of the distribution samplers: dtypes, parameters, shapes, jax's promotion of them.

jax.random's samplers are jitted functions whose parameters are run-time arguments: a Python
scalar becomes a weakly typed float32 (float64 with x64) and takes the dtype of the arrays it
meets, an array keeps its own. The public functions here resolve that before the eager call
(``frontend/random/_eager.py``): Python scalars become 0-d arrays of the dtype jax computes them
in (float32, or float64 when the sample dtype is 64-bit, jax with x64 on), with a ``weak`` flag the
sampler reads where jax's result dtype depends on it; arrays and Tensors keep their dtype.
"""
from __future__ import annotations

import numpy as np

from hloforge.frontend import dtypes, jax_api, ops
from hloforge.frontend.numpy._base import astype, broadcast_to, splat
from hloforge.frontend.random._keys import check_key, no_sharding, shape_tuple  # noqa: F401  (re-exported)
from hloforge.frontend.random._samplers import FLOATS, F32, I32, check_shape
from hloforge.frontend.tracing import Tensor, as_tensor

F64 = np.dtype(np.float64)
PREFIX = "hloforge.random."


def public(name: str) -> str:
    """The public name errors print: ``hloforge.random.<name>``."""
    return PREFIX + name


def float_dtype(name: str, dtype, allow_complex=False) -> np.dtype:
    """The sample dtype: float32 for None (jax's with x64 off), else a float (or complex) dtype."""
    d = F32 if dtype is None else dtypes.canonical(dtype)
    if d in FLOATS or (allow_complex and dtypes.is_complex(d)):
        return d
    kinds = "a float or complex" if allow_complex else "a float"
    raise ValueError(f"{name}: dtype must be {kinds} dtype, got {d}")


def int_dtype(name: str, dtype) -> np.dtype:
    """An integer sample dtype: int32 for None (jax's with x64 off)."""
    d = I32 if dtype is None else dtypes.canonical(dtype)
    if not dtypes.is_integer(d):
        raise ValueError(f"{name}: dtype must be an integer dtype, got {d}")
    return d


def weak_dtype(dtype) -> np.dtype:
    """The dtype jax computes a Python scalar parameter in: float32 (x64 off), float64 when the
    sample dtype is 64-bit (jax with x64 on)."""
    return F64 if np.dtype(dtype).itemsize == 8 else F32


def param(name: str, what: str, x, dtype, allow_complex=False):
    """A real-valued parameter ready for the eager call: ``(value, weak)``. Tensors and arrays keep
    their dtype (``weak`` False); Python scalars (and the weak Tensors of hf.jit's Python scalar
    arguments) become 0-d values of ``weak_dtype(dtype)``, Python
    lists arrays of jax's default dtypes (float32 or int32; 64-bit for a 64-bit sample dtype)."""
    if isinstance(x, Tensor) and x.weak and (dtypes.is_float(x.dtype) or dtypes.is_integer(x.dtype)
                                            or dtypes.is_bool(x.dtype)):
        return ops.convert(x, weak_dtype(dtype)), True  # (hf.jit's Python scalar arguments: as Python scalars)
    if isinstance(x, Tensor):
        value, d = x, x.dtype
    elif dtypes.weak_type(x) in (bool, int, float) or (allow_complex and dtypes.weak_type(x) is complex):
        weak = weak_dtype(dtype) if dtypes.weak_type(x) is not complex else dtypes.complex_dtype(weak_dtype(dtype))
        return np.asarray(x, weak), True
    else:
        try:
            value = x if hasattr(x, "dtype") and hasattr(x, "shape") else np.asarray(x)
            d = np.dtype(value.dtype)
        except (TypeError, ValueError):
            d = np.dtype(object)
        if isinstance(x, (list, tuple)) and d.kind in "iuf":  # (jax's asarray: its default dtypes)
            wide = weak_dtype(dtype) == F64
            d = weak_dtype(dtype) if d.kind == "f" else np.dtype(np.int64 if wide else np.int32)
            value = value.astype(d)
    real = dtypes.is_float(d) or dtypes.is_integer(d) or dtypes.is_bool(d)
    if not (real or (allow_complex and dtypes.is_complex(d))):
        raise TypeError(f"{name}: {what} must be a real number or array, got {type(x).__name__} {x!r}")
    return value, False


def inexact_dtype(x, weak: bool, sample_dtype) -> np.dtype:
    """jax's ``promote_dtypes_inexact`` of one parameter: a float array keeps its dtype; Python
    scalars, integers and bools take the default float (float32; float64 for a 64-bit sample
    dtype, jax with x64)."""
    d = weak_dtype(sample_dtype) if weak else dtype_of(x)
    return d if dtypes.is_float(d) else weak_dtype(sample_dtype)


def as_dtype(x, dtype):
    """A parameter (array or Tensor) in ``dtype``."""
    if dtype_of(x) == dtype:
        return x
    return ops.convert(x, dtype) if isinstance(x, Tensor) else np.asarray(x).astype(dtype)


def shape_of(x) -> tuple:
    return tuple(x.shape) if isinstance(x, Tensor) else tuple(np.shape(x))


def dtype_of(x) -> np.dtype:
    return x.dtype if isinstance(x, Tensor) else np.dtype(x.dtype)


def promote(a, b) -> np.dtype:
    """jax's lattice (jax.numpy.promote_types), a 64-bit result of 32-bit dtypes narrowed (x64 off)."""
    out = jax_api.promote_types(a, b)
    if out in dtypes.X32 and np.dtype(a) not in dtypes.X32 and np.dtype(b) not in dtypes.X32:
        return dtypes.X32[out]
    return out


def check_safe_cast(name: str, dtype, **values) -> None:
    """jax's ``_check_all_safe_to_cast``: an array parameter must promote to the sample dtype (weak
    Python scalars always do; 64-bit arrays count as the 32-bit dtypes jax without x64 reads them as
    when the sample dtype is not 64-bit)."""
    for what, (x, weak) in values.items():
        if weak:
            continue
        d = dtype_of(x)
        if np.dtype(dtype).itemsize < 8:
            d = dtypes.X32.get(d, d)
        if d != dtype and promote(d, dtype) != dtype:
            raise ValueError(f"{name}: cannot safely cast {what} of dtype {d} to the sample dtype "
                             f"{np.dtype(dtype).name}; pass {what} as {np.dtype(dtype).name} or a Python scalar")


def result_shape(name: str, shape, *params) -> tuple:
    """jax's ``_check_broadcast_shapes``: None is the parameters' broadcast shape; a given shape
    must be what the parameters broadcast to together with it."""
    shapes = [shape_of(p) for p in params]
    if shape is None:
        try:
            return tuple(np.broadcast_shapes(*shapes)) if shapes else ()
        except ValueError:
            raise ValueError(f"{name}: parameter shapes {', '.join(map(str, shapes))} cannot be broadcast "
                             "together") from None
    shape = shape_tuple(name, shape)
    check_shape(name, shape, *shapes)
    return shape


def key_arg(name: str, key):
    """Validates ``key`` before anything else (jax checks it first); returns it unchanged."""
    check_key(name, key)
    return key


# ---------------------------------------------------------------- inside the sampler

def tensor(x) -> Tensor:
    """A parameter (Tensor or array) as a Tensor of the current trace."""
    return as_tensor(x, what="random parameter")


def converted(x, dtype, shape=None) -> Tensor:
    """jax's ``lax.convert_element_type(x, dtype)``, broadcast to ``shape`` if given."""
    t = astype(tensor(x), dtype)
    return t if shape is None else broadcast_to(t, shape)


def jax_binary(op, x: Tensor, x_weak: bool, y: Tensor, y_weak: bool):
    """``op(x, y)`` after jax's promotion and broadcasting of the two: a weak operand takes the
    other's dtype (unless that is an integer and it a float), strong ones promote on jax's
    lattice. Returns (result, weak)."""
    if x_weak == y_weak:
        d = promote(x.dtype, y.dtype)
        weak = x_weak
    elif x_weak:
        d = y.dtype if not (dtypes.is_float(x.dtype) and not dtypes.is_inexact(y.dtype)) else x.dtype
        weak = d == x.dtype and d != y.dtype
    else:
        d = x.dtype if not (dtypes.is_float(y.dtype) and not dtypes.is_inexact(x.dtype)) else y.dtype
        weak = d == y.dtype and d != x.dtype
    shape = tuple(np.broadcast_shapes(x.shape, y.shape))
    x, y = (broadcast_to(astype(t, d), shape) for t in (x, y))
    return op(x, y), weak


def const(value, like: Tensor) -> Tensor:
    """A constant of ``like``'s dtype and shape (jax's ``lax._const`` / weak Python scalar)."""
    return splat(value, like.dtype, like.shape)


def any_true(x: Tensor) -> Tensor:
    """``jnp.any``: a 0-d bool, stablehlo.reduce with or."""
    return ops.reduce(x, False, tuple(range(x.ndim)), "or")


__all__: list = []


def with_params(name, key, dtype, out_sharding, shape, allow_complex=False, **params):
    """The checks of a sampler whose parameters jax converts to the sample dtype: (shape, dtype,
    the parameter values) in keyword order."""
    name = public(name)
    key_arg(name, key)
    d = float_dtype(name, dtype, allow_complex)
    values = {what: param(name, what, x, d, allow_complex) for what, x in params.items()}
    shape = result_shape(name, shape, *(v for v, _ in values.values()))
    no_sharding(name, out_sharding)
    check_safe_cast(name, d, **values)
    return shape, d, [v for v, _ in values.values()]
