"""jax.lax's reductions: ``reduce`` with a Python computation over pytrees of operands, and
reduce_sum / prod / max / min / and / or / xor.

A computation is traced once into the ``stablehlo.reduce`` body, over 0-d Tensors. jax.lax's,
hloforge.lax's and hloforge.ops' add, mul, max, min, bitwise_and and bitwise_or become the named
bodies of ``hloforge.ops.reduce`` (one op in the body) where they accept the operand's dtype.
"""
from __future__ import annotations

import operator

import jax
import numpy as np
from jax import tree_util

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax import elementwise as ew
from hloforge.frontend.lax._common import lax_operand
from hloforge.frontend.tracing import Tensor, _type_str

# computation -> (reducer name, the hloforge.lax function, the dtype classes it accepts)
_MONOIDS = {}
for _fns, _name, _lax, _accepted in (
        ((jax.lax.add, ew.add, ops.add), "add", ew.add, ew.NUM),
        ((jax.lax.mul, ew.mul, ops.multiply), "mul", ew.mul, ew.NUM),
        ((jax.lax.max, ew.max, ops.maximum), "max", ew.max, ew.ORDERED),
        ((jax.lax.min, ew.min, ops.minimum), "min", ew.min, ew.ORDERED),
        ((jax.lax.bitwise_and, ew.bitwise_and, ops.and_), "and", ew.bitwise_and, ew.BOOL_OR_INT),
        ((jax.lax.bitwise_or, ew.bitwise_or, ops.or_), "or", ew.bitwise_or, ew.BOOL_OR_INT),
        ((jax.lax.bitwise_xor, ew.bitwise_xor, ops.xor), None, ew.bitwise_xor, ew.BOOL_OR_INT),
        ((jax.lax.sub, ew.sub, ops.subtract), None, ew.sub, ew.NUM)):
    for _fn in _fns:
        _MONOIDS[_fn] = (_name, _lax, _accepted)


def _known(computation):
    """The computation's _MONOIDS entry, looking through wrappers (``__wrapped__``, e.g. eager ones)."""
    while _hashable(computation):
        if computation in _MONOIDS:
            return _MONOIDS[computation]
        if not hasattr(computation, "__wrapped__"):
            return None
        computation = computation.__wrapped__
    return None


def reducer(computation, xs):
    """What to give hloforge.ops.reduce / reduce_window as the body: a reducer name when the
    computation is a known function of one operand whose dtype it accepts, else a callable
    (jax.lax's functions replaced by hloforge.lax's, which take Tensors)."""
    known = _known(computation)
    if known is None:
        return computation
    name, lax_fn, accepted = known
    if name is not None and len(xs) == 1 and any(ew._CLASSES[c](xs[0].dtype) for c in accepted):
        return name
    return lax_fn


def _hashable(fn):
    try:
        hash(fn)
    except TypeError:
        return False
    return True


def tree_body(computation, tree, n, what):
    """The region body for ``2n`` 0-d Tensors: ``computation(accumulators, values)`` over pytrees
    of ``tree``'s structure, returning the same structure."""
    def body(*scalars):
        accs = tree_util.tree_unflatten(tree, list(scalars[:n]))
        values = tree_util.tree_unflatten(tree, list(scalars[n:]))
        out_leaves, out_tree = tree_util.tree_flatten(computation(accs, values))
        if out_tree != tree:
            raise TypeError(f"hloforge.lax.{what}: the computation must return the operands' structure {tree}, "
                            f"got {out_tree}")
        return [lax_operand(v, f"hloforge.lax.{what} computation output") for v in out_leaves]
    return body


def init_values_of(what, inits, xs):
    """Init values as 0-d Tensors of the operands' dtypes (a Python scalar takes its operand's dtype)."""
    out = []
    for i, (v, x) in enumerate(zip(inits, xs)):
        if not isinstance(v, Tensor) and dtypes.weak_type(v) is not None:
            with np.errstate(all="ignore"):
                v = np.asarray(v).astype(x.dtype)
        t = lax_operand(v, f"hloforge.lax.{what} init value")
        if t.shape != () or t.dtype != x.dtype:
            raise TypeError(f"hloforge.lax.{what}: operand dtypes should match corresponding initial value dtypes "
                            f"(0-d), got operand {i} {_type_str(x.shape, x.dtype)} and initial value "
                            f"{_type_str(t.shape, t.dtype)}")
        out.append(t)
    return out


def reduce(operands, init_values, computation, dimensions, out_sharding=None):
    """jax.lax.reduce: reduce ``dimensions`` away with ``computation``; emits one (variadic)
    ``stablehlo.reduce`` whose body is the traced computation.

    Args:
      operands: an array or a pytree of arrays of one shape.
      init_values: the matching pytree of scalars (Python scalars take their operand's dtype).
      computation: ``(accumulators, values) -> accumulators`` over pytrees of 0-d arrays, built
        from hloforge.lax / hloforge.ops (jax.lax.add, max, ... are recognized too).
      dimensions: the dimensions to reduce.
      out_sharding: None.
    Returns:
      The reduced array(s), as the operands' pytree.
    Example:
      >>> s = hf.lax.reduce(x, 0.0, hf.lax.add, (0,))
      >>> m, i = hf.lax.reduce((x, idx), (-np.inf, 0), argmax_step, (0,))
    """
    if out_sharding is not None:
        raise ValueError(f"hloforge.lax.reduce: out_sharding={out_sharding!r} is not supported here; pass None")
    leaves, tree = tree_util.tree_flatten(operands)
    init_leaves, init_tree = tree_util.tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(f"hloforge.lax.reduce: operands must have the same tree structure as init_values: {tree} "
                         f"vs. {init_tree}")
    if not leaves:
        raise ValueError("hloforge.lax.reduce: needs at least one operand")
    xs = [ew.as_operand("reduce", x) for x in leaves]
    if any(x.shape != xs[0].shape for x in xs[1:]):
        raise ValueError(f"hloforge.lax.reduce: operands must have one shape, got {[x.shape for x in xs]}")
    dims = _axes("reduce", dimensions, xs[0])
    inits = init_values_of("reduce", init_leaves, xs)
    body = reducer(computation, xs)
    if not isinstance(body, str):
        if not callable(body):
            raise TypeError(f"hloforge.lax.reduce: computation must be callable, got {type(body).__name__}")
        body = tree_body(body, tree, len(xs), "reduce")
    out = ops.reduce(xs, inits, dims, body)
    return tree_util.tree_unflatten(tree, list(out))


def _axes(name, axes, x):
    axes = tuple(operator.index(a) for a in axes)
    if any(not 0 <= a < x.ndim for a in axes):
        raise ValueError(f"hloforge.lax.{name}: reduction axes {axes} contains out-of-bounds indices for "
                         f"{_type_str(x.shape, x.dtype)}.")
    if len(set(axes)) != len(axes):
        raise ValueError(f"hloforge.lax.{name}: duplicate value in 'axes' of reduction: {axes}")
    return axes


def identity(name, dtype):
    """The identity of a named reduction in ``dtype``."""
    if name in ("add", "or", "xor"):
        return np.zeros((), dtype)
    if name == "mul":
        return np.ones((), dtype)
    if name == "and":
        return np.asarray(True) if dtypes.is_bool(dtype) else np.asarray(-1).astype(dtype)
    if dtypes.is_bool(dtype):
        return np.asarray(name == "min")
    if dtypes.is_integer(dtype):
        info = np.iinfo(dtype)
        return np.asarray(info.min if name == "max" else info.max, dtype)
    return np.asarray(-np.inf if name == "max" else np.inf).astype(dtype)


def _reduction(fn_name, name, accepted, message):
    def reduction(operand, axes):
        x = ew.as_operand(fn_name, operand)
        if not any(ew._CLASSES[c](x.dtype) for c in accepted):
            raise TypeError(message.format(name=f"hloforge.lax.{fn_name}", dtype=x.dtype.name))
        dims = _axes(fn_name, axes, x)
        init = identity(name, x.dtype)
        body = {"xor": ops.xor, "max": ew.max, "min": ew.min}.get(name, name)
        if name in ("max", "min") and not dtypes.is_complex(x.dtype):
            body = name
        return ops.reduce(x, init, dims, body)

    if fn_name == "reduce_sum":
        def fn(operand, axes, *, out_sharding=None):
            if out_sharding is not None:
                raise ValueError(f"hloforge.lax.reduce_sum: out_sharding={out_sharding!r} is not supported here; "
                                 "pass None")
            return reduction(operand, axes)
    else:
        def fn(operand, axes):
            return reduction(operand, axes)
    fn.__name__ = fn.__qualname__ = fn_name
    body_op = {"add": "add", "mul": "multiply", "max": "maximum", "min": "minimum"}.get(name, name)
    sharding = "\n      out_sharding: None." if fn_name == "reduce_sum" else ""
    fn.__doc__ = f"""jax.lax.{fn_name}: the {name} of the elements along ``axes``; emits ``stablehlo.reduce``
    with a ``stablehlo.{body_op}`` body (complex max/min: jax's lexicographic select).

    Args:
      operand: an array of {', '.join(accepted)} dtype.
      axes: the dimensions to reduce, in ``[0, ndim)``.{sharding}
    Returns:
      The reduced array.
    Example:
      >>> y = hf.lax.{fn_name}(x, (0,))
    """
    return fn


_NUMBER = "{name} does not accept dtype {dtype}. Accepted dtypes are subtypes of number."
_LOGICAL = "{name}: logical reduction requires operand dtype bool or int, got {dtype}."
reduce_sum = _reduction("reduce_sum", "add", ew.NUM, _NUMBER)
reduce_prod = _reduction("reduce_prod", "mul", ew.NUM, _NUMBER)
reduce_max = _reduction("reduce_max", "max", ew.ANY, _NUMBER)
reduce_min = _reduction("reduce_min", "min", ew.ANY, _NUMBER)
reduce_and = _reduction("reduce_and", "and", ew.BOOL_OR_INT, _LOGICAL)
reduce_or = _reduction("reduce_or", "or", ew.BOOL_OR_INT, _LOGICAL)
reduce_xor = _reduction("reduce_xor", "xor", ew.BOOL_OR_INT, _LOGICAL)

__all__ = ["reduce", "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or",
           "reduce_xor"]
