"""Eager calls: hloforge.numpy / lax / nn / ops functions on concrete values, outside a trace.

``wrap(fn)`` returns a function that inside a trace is ``fn`` itself, and outside one calls ``fn``
directly when it builds no IR (``hnp.shape``, ``hnp.result_type``, ...) and otherwise compiles it
with ``hf.jit`` once per static signature and runs it, returning jax Arrays, as jax.numpy does.
Array leaves of the arguments (numpy and jax arrays, numpy scalars) are the compiled function's
arguments; every other leaf (Python scalars, shapes, axes, dtypes, strings, callables) is static:
part of the cache key, baked into the trace, so Python scalars stay weakly typed (``x_f32 * 2.0``
is float32) and each distinct value compiles once. The cache keeps the 512 most recent signatures.
"""
from __future__ import annotations

import collections
import functools
import inspect
import struct
import threading

import numpy as np
from jax import tree_util

from hloforge.frontend.tracing import NoTraceError, Tensor, is_tracing

CACHE_SIZE = 512
_cache: collections.OrderedDict = collections.OrderedDict()  # least recently used first
_lock = threading.Lock()
_traced: set = set()  # functions seen to build IR: called under hf.jit from then on
_ARRAY_TYPES = [np.ndarray]  # (and jax's array type, from use_jit)
_compiler = []  # hf.jit, registered by frontend/jit.py (which imports this module: no cycle)
_state = threading.local()  # .attempting: an eager function is being tried directly
_with_fixed: dict = {}  # (fn, static values) -> the eager function with them bound


def is_array(value) -> bool:
    """Whether an argument leaf is an array (a run-time argument) rather than a static value."""
    if isinstance(value, np.generic):
        return True
    if type(value) in (bool, int, float, complex, str, tuple, list) or value is None:
        return False
    return hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, type)


def hashable(value):
    """A hashable stand-in for a static value (lists as tuples), typed so 1 and 1.0 and True differ."""
    if isinstance(value, list):
        return ("list", tuple(hashable(v) for v in value))
    if isinstance(value, tuple):
        return ("tuple", tuple(hashable(v) for v in value))
    hash(value)
    if type(value) is float:  # (the bits: -0.0 and 0.0, -nan and nan are different keys)
        return (float, struct.pack("<d", value))
    if type(value) is complex:
        return (complex, struct.pack("<dd", value.real, value.imag))
    return (type(value), value)


def use_jit(jit, array_type) -> None:
    """Called by frontend/jit.py: eager calls compile with ``jit``; ``array_type`` is jax's array."""
    _compiler[:] = [jit]
    _ARRAY_TYPES.append(array_type)


def jit(fn):
    if not _compiler:
        raise RuntimeError(f"{fn.__name__} was called outside a trace before hloforge's runtime was loaded: "
                           "import hloforge (or call it inside hloforge.jit)")
    return _compiler[0](fn)


def wrap(fn, static=()):
    """``fn`` callable on concrete values outside a trace (see the module docstring); ``static``:
    names of parameters whose values are always baked in, arrays included (``ops.constant``'s)."""
    if not inspect.isfunction(fn) or getattr(fn, "__hloforge_eager__", False):
        return fn
    plain = {}  # number of arguments -> the jitted function, when every argument is an array
    signature = inspect.signature(fn) if static else None

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if is_tracing() or getattr(_state, "attempting", False):
            return fn(*args, **kwargs)  # (inside a trace, or inside another eager function's direct try)
        if fn not in _traced:
            _state.attempting = True
            try:
                return fn(*args, **kwargs)
            except NoTraceError:
                _traced.add(fn)
            finally:
                _state.attempting = False
        if signature is not None:
            return _run_with_static(fn, signature, static, args, kwargs)
        if not kwargs:  # (the common case, without flattening or hashing: jax's C++ dispatch at once)
            for a in args:
                if type(a) not in _ARRAY_TYPES:  # noqa: E721
                    break
            else:
                jitted = plain.get(len(args))
                if jitted is None:
                    jitted = plain[len(args)] = jit(fn)
                return jitted(*args)
        return _run(fn, args, kwargs)

    call.__hloforge_eager__ = True
    return call


def wrap_namespace(names: dict, public, static=None) -> None:
    """Replace the public functions among ``names`` (a module's globals) with eager ones;
    ``static``: function name -> its always-static parameter names."""
    static = static or {}
    for name in public:
        value = names.get(name)
        if inspect.isfunction(value):
            names[name] = wrap(value, static.get(name, ()))


def _run_with_static(fn, signature, static, args, kwargs):
    bound = signature.bind(*args, **kwargs)
    fixed = {k: v for k, v in bound.arguments.items() if k in static}
    rest = {k: v for k, v in bound.arguments.items() if k not in static}
    try:
        key = (fn, tuple((k, hashable(v)) for k, v in fixed.items()))
    except TypeError:
        key = None  # (an array: baked into a compile of its own)
    bound_fn = _with_fixed.get(key) if key is not None else None
    if bound_fn is None:
        bound_fn = wrap(_bind(fn, signature, fixed))
        if key is not None:
            _with_fixed[key] = bound_fn
            if len(_with_fixed) > CACHE_SIZE:
                _with_fixed.pop(next(iter(_with_fixed)))
    return bound_fn(**rest)


def _bind(fn, signature, fixed):
    """``fn`` with the parameters ``fixed`` bound, called by keyword for the rest (positional-only
    and variadic parameters are passed as ``signature`` says)."""
    def bound(**rest):
        merged = {**rest, **fixed}
        arguments = {name: merged[name] for name in signature.parameters if name in merged}
        call = inspect.BoundArguments(signature, arguments)
        return fn(*call.args, **call.kwargs)
    bound.__name__ = fn.__name__
    return bound


def _run(fn, args, kwargs):
    leaves, tree = tree_util.tree_flatten((args, kwargs), is_leaf=lambda x: x is None)
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, Tensor):
            raise ValueError(f"{fn.__module__}.{fn.__name__}: argument leaf {i} is a Tensor of a finished trace "
                             "(a leaked tracer)")
    positions = tuple(i for i, leaf in enumerate(leaves) if is_array(leaf))
    statics = [(i, leaf) for i, leaf in enumerate(leaves) if i not in set(positions)]
    try:
        key = (fn, tree, positions, tuple((i, hashable(v)) for i, v in statics))
    except TypeError:
        key = None
    return _compiled(key, fn, tree, len(leaves), positions, statics)(*[leaves[i] for i in positions])


def _compiled(key, fn, tree, n, positions, statics):
    if key is None:
        return _jitted(fn, tree, n, positions, statics)
    with _lock:
        jitted = _cache.get(key)
        if jitted is None:
            jitted = _cache[key] = _jitted(fn, tree, n, positions, statics)
            if len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
        else:
            _cache.move_to_end(key)
    return jitted


def _jitted(fn, tree, n, positions, statics):
    fixed = dict(statics)

    def run(*arrays):
        given = dict(zip(positions, arrays))
        leaves = [given[i] if i in given else fixed[i] for i in range(n)]
        args, kwargs = tree_util.tree_unflatten(tree, leaves)
        return fn(*args, **kwargs)

    run.__name__ = fn.__name__
    return jit(run)
