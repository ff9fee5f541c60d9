"""Calling the samplers outside a trace: compile them with hf.jit, once per static signature.

Inside a trace (hf.jit / hf.trace) the samplers emit IR into the trace. Outside one they behave
like jax.random's: the call is traced and compiled (cached per static arguments: shape, dtype,
mode, ...; keys, arrays and scalar parameters are run-time arguments) and run on hf.config's
device; the result is an array.
"""
from __future__ import annotations

import collections
import functools
import inspect
import threading

import jax
import numpy as np

from hloforge.frontend.eager import hashable, is_array
from hloforge.frontend.jit import jit
from hloforge.frontend.tracing import Tensor, is_tracing

_CACHE_SIZE = 256
_cache: collections.OrderedDict = collections.OrderedDict()  # least recently used first
_lock = threading.Lock()


def jax_typed_key_data(key):
    """The uint32 data of a jax typed key array (``jax.random.key``), else None."""
    if not isinstance(key, jax.Array):
        return None
    if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        return np.asarray(jax.random.key_data(key))
    return None


def _typed_key_to_data(value):
    data = jax_typed_key_data(value)
    return value if data is None else data


def bound_array(value):
    """A Python float or int64-sized int as a 0-d float64/int64 array; anything else unchanged
    (the sampler converts bounds to its dtype, so the value is what counts)."""
    if type(value) is float:
        return np.asarray(value, np.float64)
    if type(value) is int and -2 ** 63 <= value < 2 ** 63:
        return np.asarray(value, np.int64)
    return value


def float32_array(value):
    """A Python float as a 0-d float32 array (the dtype jax gives it with x64 off)."""
    return np.asarray(value, np.float32) if type(value) is float else value


def uint32_array(value):
    """A Python int in uint32's range as a 0-d uint32 array (others stay, to raise in the trace)."""
    return np.asarray(value, np.uint32) if type(value) is int and 0 <= value < 2 ** 32 else value


def eager(static=(), dynamic=None):
    """Decorator: run ``fn`` directly inside a trace, under a cached hf.jit outside one.

    ``static``: arguments always baked into the trace (shapes, dtypes, modes). ``dynamic``: a dict
    argument name -> converter that turns a Python scalar into the array passed at run time (as
    jax.random's inner jit does: one compilation for every value, and XLA cannot constant-fold
    e.g. erf of it with its differently rounded evaluator). Other arrays are run-time arguments,
    other Python values static.
    """
    converters = dict(dynamic or {})

    def wrap(fn):
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def call(*args, **kwargs):
            if is_tracing():
                return fn(*args, **kwargs)
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as e:
                raise TypeError(f"{fn.__name__}: {e}") from None
            bound.apply_defaults()
            names, dynamic, statics = [], [], []
            for name, value in bound.arguments.items():
                value = _typed_key_to_data(value)
                if name in converters:
                    value = converters[name](value)
                if isinstance(value, Tensor):
                    raise ValueError(f"{fn.__name__}: argument {name} is a Tensor of a finished trace "
                                     "(a leaked tracer)")
                if name not in static and is_array(value):
                    names.append(name)
                    dynamic.append(value)
                else:
                    statics.append((name, value))
            try:
                cache_key = (fn, tuple((n, hashable(v)) for n, v in statics), tuple(names))
            except TypeError:
                cache_key = None
            return _cached(cache_key, fn, names, statics)(*dynamic)
        return call
    return wrap


def _cached(cache_key, fn, names, statics):
    """The hf.jit function for this static signature, compiled on its first call."""
    if cache_key is None:
        return _jitted(fn, names, dict(statics))
    with _lock:
        jitted = _cache.get(cache_key)
        if jitted is None:
            jitted = _cache[cache_key] = _jitted(fn, names, dict(statics))
            if len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
        else:
            _cache.move_to_end(cache_key)
    return jitted


def _jitted(fn, names, statics):
    def run(*dynamic):
        return fn(**statics, **dict(zip(names, dynamic)))
    run.__name__ = fn.__name__
    return jit(run)
