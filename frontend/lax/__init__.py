"""``hloforge.lax``: a jax.lax-compatible layer over :mod:`hloforge.ops`.

Same names, signatures, semantics and errors as ``jax.lax``, emitting StableHLO: control flow,
indexing, convolution, windows, linear algebra and special functions, each family in its own
module of this package.
"""
from hloforge.frontend.lax.autodiff import stop_gradient
from hloforge.frontend.lax.control_flow import cond, fori_loop, map, scan, switch, while_loop
from hloforge.frontend.lax.convolution import (
    ConvDimensionNumbers, conv, conv_dimension_numbers, conv_general_dilated, conv_general_permutations,
    conv_transpose, conv_with_general_padding, padtype_to_pads)
from hloforge.frontend.lax.ordering import (
    argmax, argmin, broadcasted_iota, cummax, cummin, cumprod, cumsum, iota, sort, top_k)
from hloforge.frontend.lax.products import batch_matmul, dot_general
from hloforge.frontend.lax.slicing import (
    GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers, dynamic_index_in_dim,
    dynamic_slice, dynamic_slice_in_dim, dynamic_update_slice, gather, scatter, scatter_add, scatter_max,
    scatter_min, scatter_mul, select)
from hloforge.frontend.lax.special import digamma, erf_inv, igamma, igammac, lgamma
from hloforge.frontend.lax.windows import (
    bitcast_convert_type, clz, population_count, reduce_precision, reduce_window)

__all__ = [
    "cond", "switch", "while_loop", "fori_loop", "scan", "map",
    "select", "dynamic_slice", "dynamic_slice_in_dim", "dynamic_update_slice", "dynamic_index_in_dim",
    "gather", "scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max",
    "GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode",
    "sort", "top_k", "cumsum", "cumprod", "cummax", "cummin", "argmax", "argmin", "iota", "broadcasted_iota",
    "ConvDimensionNumbers", "conv", "conv_dimension_numbers", "conv_general_dilated",
    "conv_general_permutations", "conv_transpose", "conv_with_general_padding", "padtype_to_pads",
    "batch_matmul", "dot_general", "digamma", "erf_inv", "igamma", "igammac", "lgamma",
    "bitcast_convert_type", "clz", "population_count", "reduce_precision", "reduce_window", "stop_gradient",
]
from hloforge.frontend.lax import linalg  # noqa: E402,F401
