"""jax.lax.reduce_window and the bit-level functions: reduce_precision, bitcast_convert_type,
population_count, clz."""
from __future__ import annotations


import jax
from jax import tree_util

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax.convolution import padtype_to_pads
from hloforge.frontend.numpy._base import asarray
from hloforge.frontend.ops._common import int_tuple

# jax.lax and hloforge.ops functions that are a named reduce_window body
_NAMED = {jax.lax.add: "add", jax.lax.mul: "mul", jax.lax.max: "max", jax.lax.min: "min",
          jax.lax.bitwise_and: "and", jax.lax.bitwise_or: "or", ops.add: "add", ops.multiply: "mul",
          ops.maximum: "max", ops.minimum: "min", ops.and_: "and", ops.or_: "or"}


def _ints(what, values, n):
    return int_tuple("reduce_window", what, values, n, per="operand dimension")


def reduce_window(operand, init_value, computation, window_dimensions, window_strides, padding,
                  base_dilation=None, window_dilation=None):
    """jax.lax.reduce_window; emits one ``stablehlo.reduce_window``.

    Args:
      operand: an array or a pytree of arrays of one shape.
      init_value: the matching pytree of scalars.
      computation: jax.lax.add/mul/max/min/bitwise_and/bitwise_or (or the hloforge.ops ones), or
        a callable built with hloforge ops taking (accumulators..., values...).
      window_dimensions, window_strides: per dimension.
      padding: 'SAME', 'SAME_LOWER', 'VALID' or (low, high) pairs.
      base_dilation, window_dilation: per dimension (None: 1).
    Returns:
      The reduced array(s), as the operand's pytree.
    Example:
      >>> y = hf.lax.reduce_window(x, -np.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    """
    leaves, tree = tree_util.tree_flatten(operand)
    init_leaves, init_tree = tree_util.tree_flatten(init_value)
    if tree != init_tree:
        raise TypeError(f"reduce_window: operand tree {tree} and init_value tree {init_tree} differ")
    xs = [asarray(x) for x in leaves]
    rank = xs[0].ndim
    window_dimensions = _ints("window_dimensions", window_dimensions, rank)
    window_strides = _ints("window_strides", window_strides, rank)
    base = (1,) * rank if base_dilation is None else _ints("base_dilation", base_dilation, rank)
    wdil = (1,) * rank if window_dilation is None else _ints("window_dilation", window_dilation, rank)
    if isinstance(padding, str):
        dilated = [0 if w == 0 else (w - 1) * d + 1 for w, d in zip(window_dimensions, wdil)]
        padding = padtype_to_pads(xs[0].shape, dilated, window_strides, padding)
    body = _NAMED.get(computation, computation) if len(xs) == 1 else computation
    inits = [v if hasattr(v, "dtype") and not isinstance(v, (int, float)) else asarray(v, x.dtype)
             for v, x in zip(init_leaves, xs)]
    out = ops.reduce_window(xs, list(inits), window_dimensions, window_strides=window_strides,
                            base_dilations=base, window_dilations=wdil, padding=[tuple(p) for p in padding],
                            body=body)
    return tree_util.tree_unflatten(tree, list(out))


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
    """jax.lax.reduce_precision; emits ``stablehlo.reduce_precision``."""
    return ops.reduce_precision(asarray(operand), exponent_bits, mantissa_bits)


def bitcast_convert_type(operand, new_dtype):
    """jax.lax.bitcast_convert_type: a wider source gains a trailing dimension, a narrower one
    loses it; emits ``stablehlo.bitcast_convert``."""
    x = asarray(operand)
    new_dtype = dtypes.canonical(new_dtype)
    return x if x.dtype == new_dtype else ops.bitcast_convert(x, new_dtype)


def population_count(x):
    """jax.lax.population_count; emits ``stablehlo.popcnt``."""
    return ops.popcnt(asarray(x))


def clz(x):
    """jax.lax.clz; emits ``stablehlo.count_leading_zeros``."""
    return ops.count_leading_zeros(asarray(x))


__all__ = ["reduce_window", "reduce_precision", "bitcast_convert_type", "population_count", "clz"]
