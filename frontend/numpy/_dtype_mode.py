"""``hf.config.dtypes = "jax"`` at hloforge.numpy's public boundary, as jax.numpy without x64 has it.

Every public function of hloforge.numpy (and of its fft and linalg namespaces, and the Tensor
methods that take a ``dtype``) is wrapped once here. In "numpy" mode the wrapper only calls the
function. In "jax" mode it narrows to 32 bits what jax narrows: numpy arrays passed in (float64 ->
float32, int64 -> int32, uint64 -> uint32, complex128 -> complex64), a ``dtype`` argument
(``dtype=float`` is float32) and 64-bit results, which numpy's rules give narrower operands in the
functions whose internals follow numpy (``nonzero``'s indices, ``median`` of integers, ``fft`` of
integers, ...), so no result of a public function is 64-bit, as none of jax's is. The common cases
(defaults of creation functions, index results, accumulators, promotion) are 32-bit at their source
(``dtypes.default_float``, ``dtypes.narrow``); this catches the rest.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np
from jax import tree_util

from hloforge.frontend import dtypes
from hloforge.frontend.numpy._base import astype
from hloforge.frontend.tracing import Tensor


def boundary(fn):
    """``fn`` with "jax" mode's narrowing of its array arguments, ``dtype`` and results (see the
    module docstring); ``fn`` itself is called in "numpy" mode. Non-functions are returned as they are.

    Example:
      >>> total = boundary(_reductions.sum)  # (jax mode: sum of int8 is int32, dtype=np.int64 too)
    """
    if not inspect.isfunction(fn):
        return fn
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    p = params.get("dtype")
    position = list(params).index("dtype") if p is not None and p.kind in (
        p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) else None

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if dtypes.MODE[0] == "numpy":
            return fn(*args, **kwargs)
        return _jax_call(fn, position, args, kwargs)

    return call


def wrap_namespace(names: dict, public) -> None:
    """Replace the public functions among ``names`` (a module's globals) with ``boundary`` ones
    (aliases stay one object)."""
    done = {}
    for name in public:
        value = names.get(name)
        if inspect.isfunction(value):
            if id(value) not in done:
                done[id(value)] = boundary(value)
            names[name] = done[id(value)]


def _jax_call(fn, position, args, kwargs):
    args = [_narrow_argument(a) for a in args]
    kwargs = {k: _narrow_argument(v) for k, v in kwargs.items()}
    if position is not None and position < len(args):
        args[position] = _narrow_dtype(args[position])
    if "dtype" in kwargs:
        kwargs["dtype"] = _narrow_dtype(kwargs["dtype"])
    return tree_util.tree_map(_narrow_result, fn(*args, **kwargs))


def _narrow_array(x):
    if isinstance(x, (np.ndarray, np.generic)):
        narrow = dtypes.X32.get(x.dtype)
        if narrow is not None:
            return np.asarray(x).astype(narrow)
    return x


def _narrow_argument(x):
    """numpy arrays (and those in a list or tuple of arguments) with 64-bit dtypes as 32-bit ones."""
    if type(x) in (list, tuple):
        return type(x)(_narrow_array(e) for e in x)
    return _narrow_array(x)


def _narrow_dtype(d):
    if d is None:
        return d
    try:
        return dtypes.canonicalize(d)
    except TypeError:  # (not a dtype hloforge has: the function explains)
        return d


def _narrow_result(x):
    if isinstance(x, Tensor):
        narrow = dtypes.X32.get(x.dtype)
        if narrow is not None:
            return astype(x, narrow)
    return x
