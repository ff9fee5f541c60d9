"""jax.lax.reduce_window (and reduce_window_shape_tuple) and the bit-level functions:
reduce_precision, bitcast_convert_type, population_count, clz."""
from __future__ import annotations

import operator

from jax import tree_util

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax._common import lax_operand
from hloforge.frontend.lax.convolution import padtype_to_pads
from hloforge.frontend.lax.reductions import init_values_of, reducer, tree_body
from hloforge.frontend.ops._common import int_tuple


def _ints(what, values, n):
    return int_tuple("reduce_window", what, values, n, per="operand dimension")


def reduce_window(operand, init_value, computation, window_dimensions, window_strides, padding,
                  base_dilation=None, window_dilation=None):
    """jax.lax.reduce_window; emits one ``stablehlo.reduce_window``.

    Args:
      operand: an array or a pytree of arrays of one shape.
      init_value: the matching pytree of scalars.
      computation: hloforge.lax's (or jax.lax's, or hloforge.ops') add/mul/max/min/bitwise_and/
        bitwise_or, or a callable ``(accumulators, values) -> accumulators`` over pytrees of 0-d
        arrays of the operand's structure, built with hloforge.lax / hloforge.ops.
      window_dimensions, window_strides: per dimension.
      padding: 'SAME', 'SAME_LOWER', 'VALID' or (low, high) pairs.
      base_dilation, window_dilation: per dimension (None: 1).
    Returns:
      The reduced array(s), as the operand's pytree.
    Example:
      >>> y = hf.lax.reduce_window(x, -np.inf, hf.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    """
    leaves, tree = tree_util.tree_flatten(operand)
    init_leaves, init_tree = tree_util.tree_flatten(init_value)
    if tree != init_tree:
        raise TypeError(f"hloforge.lax.reduce_window: operand tree {tree} and init_value tree {init_tree} differ")
    xs = [lax_operand(x, "hloforge.lax.reduce_window operand") for x in leaves]
    rank = xs[0].ndim
    window_dimensions = _ints("window_dimensions", window_dimensions, rank)
    window_strides = _ints("window_strides", window_strides, rank)
    base = (1,) * rank if base_dilation is None else _ints("base_dilation", base_dilation, rank)
    wdil = (1,) * rank if window_dilation is None else _ints("window_dilation", window_dilation, rank)
    if isinstance(padding, str):
        dilated = [0 if w == 0 else (w - 1) * d + 1 for w, d in zip(window_dimensions, wdil)]
        padding = padtype_to_pads(xs[0].shape, dilated, window_strides, padding)
    body = reducer(computation, xs)
    if not isinstance(body, str):
        body = tree_body(body, tree, len(xs), "reduce_window")
    inits = init_values_of("reduce_window", init_leaves, xs)
    out = ops.reduce_window(xs, inits, window_dimensions, window_strides=window_strides,
                            base_dilations=base, window_dilations=wdil, padding=[tuple(p) for p in padding],
                            body=body)
    return tree_util.tree_unflatten(tree, list(out))


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding, base_dilation=None,
                              window_dilation=None):
    """jax.lax.reduce_window_shape_tuple: the result shape of a reduce_window (no IR).

    Args:
      operand_shape, window_dimensions, window_strides: per dimension.
      padding: one (low, high) pair per dimension.
      base_dilation, window_dilation: per dimension (None: 1).
    Returns:
      A tuple of ints.
    Example:
      >>> hf.lax.reduce_window_shape_tuple((4, 5), (2, 2), (1, 2), [(0, 0), (0, 0)])   # (3, 2)
    """
    def dilate(shape, dilation):
        return [0 if n == 0 else 1 + d * (n - 1) for n, d in zip(shape, dilation)]
    shape = [operator.index(n) for n in operand_shape]
    window = [operator.index(n) for n in window_dimensions]
    if base_dilation is not None:
        shape = dilate(shape, base_dilation)
    if window_dilation is not None:
        window = dilate(window, window_dilation)
    if not len(shape) == len(window) == len(window_strides) == len(padding):
        raise ValueError(f"hloforge.lax.reduce_window_shape_tuple: operand_shape {tuple(operand_shape)}, "
                         f"window_dimensions, window_strides and padding {list(padding)} need one entry per "
                         "dimension")
    padded = [n + lo + hi for n, (lo, hi) in zip(shape, padding)]
    return tuple(max(n - w + s, 0) // s for n, w, s in zip(padded, window, window_strides))


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
    """jax.lax.reduce_precision; emits ``stablehlo.reduce_precision``."""
    return ops.reduce_precision(lax_operand(operand, "hloforge.lax.reduce_precision operand"), exponent_bits,
                                mantissa_bits)


def bitcast_convert_type(operand, new_dtype):
    """jax.lax.bitcast_convert_type: a wider source gains a trailing dimension, a narrower one
    loses it; emits ``stablehlo.bitcast_convert``."""
    x = lax_operand(operand, "hloforge.lax.bitcast_convert_type operand")
    new_dtype = dtypes.canonical(new_dtype)
    return x if x.dtype == new_dtype else ops.bitcast_convert(x, new_dtype)


def population_count(x):
    """jax.lax.population_count; emits ``stablehlo.popcnt``."""
    return ops.popcnt(lax_operand(x, "hloforge.lax.population_count operand"))


def clz(x):
    """jax.lax.clz; emits ``stablehlo.count_leading_zeros``."""
    return ops.count_leading_zeros(lax_operand(x, "hloforge.lax.clz operand"))


__all__ = ["reduce_window", "reduce_window_shape_tuple", "reduce_precision", "bitcast_convert_type", "population_count", "clz"]
