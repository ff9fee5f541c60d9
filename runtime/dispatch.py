"""Per-call dispatch through jax's C++ loop, for jax arrays, numpy arrays and Python scalars.

Two loops per callable: ``plain`` for arguments whose dtypes need no 64-bit care (jax's loop
canonicalizes dtypes as jax does without x64, which is the identity for them), and ``wide``,
entered inside jax's thread-local ``enable_x64`` scope, for float64/complex128/int64/uint64
arrays and Python scalars (float64/int64/complex128/bool in hloforge, as in numpy), which
then arrive exact; containers (parameter pytrees) take ``wide`` too. Anything else (kwargs,
big-endian arrays, unsupported dtypes, traced Tensors) takes the Python path, which checks and
explains.

A loop runs an executable from C++ only after the Python path returned, for that C++
signature, ``fastpath_data`` that matches it exactly; otherwise every call takes Python.
"""
from __future__ import annotations

import re

import numpy as np
from jax import tree_util
from jax.core import Tracer

from hloforge.frontend import dtypes
from hloforge.runtime import pjrt

WIDE_DTYPES = frozenset(np.dtype(d) for d in (np.float64, np.complex128, np.int64, np.uint64))
PLAIN_DTYPES = frozenset(d for d in dtypes.SUPPORTED if d not in WIDE_DTYPES)
NUMPY_TYPES = frozenset([np.ndarray] + [type(np.zeros((), d)[()]) for d in dtypes.SUPPORTED])
PYTHON_SCALARS = frozenset((bool, int, float, complex))
# the dtype jax's loop gives a Python scalar inside enable_x64 (hloforge's, too)
_X64_SCALAR_DTYPE = {bool: np.dtype(bool), int: np.dtype(np.int64), float: np.dtype(np.float64),
                     complex: np.dtype(np.complex128)}
DEVICE_ARRAY = pjrt.DEVICE_ARRAY_TYPE

PLAIN, WIDE, PYTHON = 0, 1, 2


def route(args) -> int:
    """Which loop ``args`` (a tuple of positional arguments, no kwargs) can take."""
    kind = PLAIN
    for a in args:
        t = type(a)
        if t is DEVICE_ARRAY:
            continue
        if t in NUMPY_TYPES:
            d = a.dtype
            if d in PLAIN_DTYPES:
                continue
            if d in WIDE_DTYPES:
                kind = WIDE
                continue
            return PYTHON
        if t in PYTHON_SCALARS:
            kind = WIDE
            continue
        if t in CONTAINERS:
            # A model's parameters: the wide loop sees every leaf's exact dtype (a numpy float64
            # leaf misses an executable built for float32 ones and takes Python), and leaves it
            # cannot take (Tensors, strings, ...) send the call to Python's cache miss, so the
            # leaves need no walk here (a tree walk was ~10 us a call for ResNet-18's 100 leaves).
            kind = WIDE
            continue
        return PYTHON
    return kind


CONTAINERS = frozenset((dict, list, tuple))


def containers_on_device(args) -> bool:
    """Whether every leaf inside the containers among ``args`` is a jax array."""
    return all(type(leaf) is DEVICE_ARRAY for a in args if type(a) in CONTAINERS
               for leaf in tree_util.tree_leaves(a))


def cpp_dtype(arg):
    """The dtype jax's loop sees for ``arg`` (``wide`` loop), or None if it is not one it takes."""
    t = type(arg)
    if t in PYTHON_SCALARS:
        return _X64_SCALAR_DTYPE[t]
    if t is DEVICE_ARRAY or t in NUMPY_TYPES:
        return arg.dtype
    return None


class Loops:
    """The ``plain`` and ``wide`` C++ loops around ``cache_miss(*args) -> (result, fastpath_data
    or None, False)``.

    ``containers_plain``: the plain loop also takes containers of parameters (a model's weights
    are jax arrays: no x64 scope per call). It learns such a call only when every leaf inside the
    containers is a jax array, whose dtype it keys exactly; a numpy array or Python scalar in a
    container would be keyed by its 32-bit canonical dtype (float64 meeting a float32 program),
    so those calls go on to the wide loop."""

    def __init__(self, name: str, fn, cache_miss, containers_plain: bool = False):
        self.wide = wide = pjrt.fast_dispatcher(name, fn, cache_miss)
        plain_miss = cache_miss
        if containers_plain:
            def plain_miss(*args, **kwargs):
                if kwargs or containers_on_device(args):
                    return cache_miss(*args, **kwargs)
                return pjrt.call_x64(wide, args), None, False
        self.plain = pjrt.fast_dispatcher(name, fn, plain_miss)

    def call_wide(self, args):
        return pjrt.call_x64(self.wide, args)


def fastpath_ok(args, in_specs, sharding) -> bool:
    """Whether the C++ loop may rerun, for ``args``' C++ signature, the executable that just ran
    them: every argument as jax's loop sees it has exactly the parameter's dtype, and jax arrays
    already live where the executable wants them."""
    for a, (_, dtype) in zip(args, in_specs):
        if cpp_dtype(a) != dtype:
            return False
        if type(a) is DEVICE_ARRAY and a.sharding != sharding:
            return False
    return True


# jax's C++ loop raises a failed execution's XLA status as a ValueError (or JaxRuntimeError)
# whose message starts with the status code; hloforge's own errors never do.
_XLA_STATUS = re.compile(r"(CANCELLED|UNKNOWN|INVALID_ARGUMENT|DEADLINE_EXCEEDED|NOT_FOUND|ALREADY_EXISTS|"
                         r"PERMISSION_DENIED|RESOURCE_EXHAUSTED|FAILED_PRECONDITION|ABORTED|OUT_OF_RANGE|"
                         r"UNIMPLEMENTED|INTERNAL|UNAVAILABLE|DATA_LOSS|UNAUTHENTICATED): ")


def execution_error(name: str, error: Exception):
    """``hf.ExecutionError`` for an execution failure raised by jax's C++ loop (out of memory, ...),
    or None when ``error`` is anything else."""
    if not isinstance(error, (ValueError, pjrt.RuntimeFailure)) or not _XLA_STATUS.match(str(error)):
        return None
    return pjrt.ExecutionError(f"{name}: execution failed: {error}")


def tracer_error(what: str, value) -> TypeError | None:
    """The error for a jax tracer met where a concrete array must be (``jax.jit``/``jax.grad``/
    ``jax.vmap`` of an hloforge function), or None when ``value`` is not one."""
    if not isinstance(value, Tracer):
        return None
    return TypeError(f"{what} is a jax tracer ({type(value).__name__}): hf.jit functions and hloforge executables "
                     f"take concrete arrays and cannot be traced by jax transformations (jax.jit, jax.grad, "
                     f"jax.vmap, ...); that is not supported yet: call them outside the transformation")


def refuse_tracers(name: str, leaves) -> None:
    """Raises ``tracer_error`` for the first jax tracer among the flat arguments ``leaves``."""
    for i, leaf in enumerate(leaves):
        error = tracer_error(f"{name}: argument leaf {i}", leaf)
        if error is not None:
            raise error
