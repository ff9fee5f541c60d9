"""Tensor's numpy-style operators and methods, defined here to keep tracing.py free of the
numpy layer (which imports it)."""
from __future__ import annotations

from hloforge.frontend.numpy import _indexing as indexing, _contractions as linalg, _math as math, _ordering as ordering, _reductions as reductions, _shape as shape
from hloforge.frontend.numpy._base import astype
from hloforge.frontend.numpy._dtype_mode import boundary
from hloforge.frontend.tracing import Tensor


def _swap(f):
    return lambda self, other: f(other, self)


_OPERATORS = {
    "__add__": math.add, "__sub__": math.subtract, "__mul__": math.multiply,
    "__truediv__": math.divide, "__floordiv__": math.floor_divide, "__mod__": math.remainder,
    "__pow__": math.power, "__matmul__": linalg.matmul,
    "__and__": math.bitwise_and, "__or__": math.bitwise_or, "__xor__": math.bitwise_xor,
    "__lt__": math.less, "__le__": math.less_equal, "__gt__": math.greater,
    "__ge__": math.greater_equal, "__eq__": math.equal, "__ne__": math.not_equal,
}
for _name, _fn in _OPERATORS.items():
    setattr(Tensor, _name, _fn)
for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor"):
    setattr(Tensor, f"__r{_name}__", _swap(_OPERATORS[f"__{_name}__"]))

Tensor.__neg__ = math.negative
Tensor.__pos__ = math.positive
Tensor.__abs__ = math.absolute
Tensor.__invert__ = math.invert
Tensor.__getitem__ = indexing.getitem
Tensor.at = property(indexing.at)
Tensor.T = property(lambda self: shape.transpose(self))
Tensor.real = property(math.real)
Tensor.imag = property(math.imag)
Tensor.conj = math.conj
Tensor.astype = boundary(astype)  # (hf.config.dtypes = "jax": x.astype(np.float64) is float32, as in jax)
Tensor.transpose = lambda self, *axes: shape.transpose(  # (np.transpose(t) calls t.transpose(None))
    self, axes[0] if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))) else (axes or None))
Tensor.reshape = lambda self, *s, order="C": shape.reshape(
    self, s[0] if len(s) == 1 and not isinstance(s[0], int) else s, order=order)
Tensor.flatten = shape.ravel
Tensor.ravel = shape.ravel
Tensor.squeeze = shape.squeeze
Tensor.swapaxes = shape.swapaxes


def _no_out(name, out, extra):
    """numpy's functions call these methods with ``out=None`` (``np.sum(t)`` is ``t.sum(axis=None,
    dtype=None, out=None)``): accept that, refuse anything else clearly."""
    if out is not None:
        raise TypeError(f"{name}: out={out!r} is not supported: traced Tensors are immutable values, "
                        "use the returned Tensor")
    if extra:
        raise TypeError(f"{name}: unsupported argument(s) {', '.join(f'{k}={v!r}' for k, v in extra.items())}")


def _reduction(name, fn, has_dtype):
    if has_dtype:
        def method(self, axis=None, dtype=None, out=None, keepdims=False, **extra):
            _no_out(name, out, extra)
            return fn(self, axis=axis, dtype=dtype, keepdims=keepdims)
    else:
        def method(self, axis=None, out=None, keepdims=False, **extra):
            _no_out(name, out, extra)
            return fn(self, axis=axis, keepdims=keepdims)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = fn.__doc__
    return method


for _name, _fn, _has_dtype in (("sum", reductions.sum, True), ("prod", reductions.prod, True),
                               ("mean", reductions.mean, True), ("max", reductions.max, False),
                               ("min", reductions.min, False), ("any", reductions.any, False),
                               ("all", reductions.all, False)):
    setattr(Tensor, _name, _reduction(_name, boundary(_fn), _has_dtype))


def _clip(self, a_min=None, a_max=None, out=None, **extra):
    _no_out("clip", out, extra)
    return math.clip(self, a_min, a_max)


def _round(self, decimals=0, out=None):
    _no_out("round", out, {})
    return math.round(self, decimals)


Tensor.clip = _clip
Tensor.round = _round
Tensor.argmax = ordering.argmax
Tensor.argmin = ordering.argmin
Tensor.argsort = ordering.argsort
Tensor.cumsum = boundary(ordering.cumsum)
Tensor.cumprod = boundary(ordering.cumprod)
Tensor.take = indexing.take
