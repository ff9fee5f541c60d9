"""``hloforge.lax``: a jax.lax-compatible layer over :mod:`hloforge.ops`.

Same names, signatures, semantics and errors as ``jax.lax``, emitting StableHLO: control flow,
indexing, convolution, windows, linear algebra and special functions, each family in its own
module of this package.
"""
from hloforge.frontend.lax.convolution import (
    ConvDimensionNumbers, conv, conv_dimension_numbers, conv_general_dilated, conv_general_permutations,
    conv_transpose, conv_with_general_padding, padtype_to_pads)
from hloforge.frontend.lax.products import batch_matmul, dot_general
from hloforge.frontend.lax.special import digamma, erf_inv, igamma, igammac, lgamma
from hloforge.frontend.lax.windows import (
    bitcast_convert_type, clz, population_count, reduce_precision, reduce_window)

__all__ = ["ConvDimensionNumbers", "conv", "conv_dimension_numbers", "conv_general_dilated",
           "conv_general_permutations", "conv_transpose", "conv_with_general_padding", "padtype_to_pads",
           "batch_matmul", "dot_general", "digamma", "erf_inv", "igamma", "igammac", "lgamma",
           "bitcast_convert_type", "clz", "population_count", "reduce_precision", "reduce_window"]
