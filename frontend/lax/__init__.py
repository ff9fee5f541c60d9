"""``hloforge.lax``: a jax.lax-compatible layer over :mod:`hloforge.ops`.

Same names, signatures, semantics and errors as ``jax.lax``, emitting StableHLO: elementwise
functions, shapes, reductions, control flow, indexing, ordering, products, convolution, windows,
fft, random bits, tokens, linear algebra and special functions, each family in its own module of
this package (docs/lax.md).

The functions load with their family module on first use (PEP 562), so importing one family (as
``hloforge.numpy`` does) does not import the others or the linear-algebra tables.
"""
import importlib as _importlib

from hloforge.frontend import eager as _eager  # (functions callable outside a trace: frontend/eager.py)

_FAMILIES = {
    "autodiff": ("stop_gradient",),
    "control_flow": ("cond", "fori_loop", "map", "scan", "switch", "while_loop"),
    "convolution": ("ConvDimensionNumbers", "conv", "conv_dimension_numbers", "conv_general_dilated", "conv_general_permutations", "conv_transpose", "conv_with_general_padding", "padtype_to_pads",
                    "ConvGeneralDilatedDimensionNumbers", "conv_general_dilated_local", "conv_general_dilated_patches",
                    "conv_general_shape_tuple", "conv_shape_tuple", "conv_transpose_shape_tuple"),
    "parallel": ("all_gather", "all_to_all", "axis_index", "axis_size", "pbroadcast", "pmax", "pmean", "pmin",
                 "ppermute", "pshuffle", "psum", "psum_scatter", "pswapaxes"),
    "ordering": ("argmax", "argmin", "broadcasted_iota", "cummax", "cummin", "cumprod", "cumsum", "iota", "sort", "top_k",
                 "approx_max_k", "approx_min_k", "associative_scan", "cumlogsumexp", "sort_key_val"),
    "products": ("batch_matmul", "dot_general", "DotDimensionNumbers", "Precision", "PrecisionLike", "dot",
                 "RaggedDotDimensionNumbers", "ragged_dot", "ragged_dot_general"),
    "slicing": ("GatherDimensionNumbers", "GatherScatterMode", "ScatterDimensionNumbers", "dynamic_index_in_dim", "dynamic_slice", "dynamic_slice_in_dim", "dynamic_update_slice", "gather", "scatter", "scatter_add", "scatter_max", "scatter_min", "scatter_mul", "select",
                "dynamic_update_index_in_dim", "dynamic_update_slice_in_dim", "index_in_dim", "index_take",
                "scatter_apply", "scatter_sub", "slice", "slice_in_dim"),
    "special": ("digamma", "erf_inv", "igamma", "igammac", "lgamma", "bessel_i0e", "bessel_i1e", "betainc", "erfc",
                "igamma_grad_a", "polygamma", "random_gamma_grad", "zeta"),
    "windows": ("bitcast_convert_type", "clz", "population_count", "reduce_precision", "reduce_window",
                "reduce_window_shape_tuple"),
    "elementwise": ("RoundingMethod", "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh",
                    "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "cbrt", "ceil", "clamp", "complex",
                    "conj", "convert_element_type", "cos", "cosh", "div", "eq", "erf", "exp", "exp2", "expm1",
                    "floor", "ge", "gt", "imag", "integer_pow", "is_finite", "le", "log", "log1p", "logistic", "lt",
                    "max", "min", "mul", "mulhi", "ne", "neg", "nextafter", "pow", "real", "reciprocal", "rem",
                    "round", "rsqrt", "select_n", "shift_left", "shift_right_arithmetic", "shift_right_logical",
                    "sign", "sin", "sinh", "sqrt", "square", "sub", "tan", "tanh"),
    "shapes": ("broadcast", "broadcast_in_dim", "broadcast_like", "broadcast_shapes", "broadcast_to_rank", "collapse",
               "concatenate", "dtype", "empty", "expand_dims", "full", "full_like", "pad", "reshape", "rev",
               "shape_as_value", "split", "squeeze", "stack", "tile", "transpose", "unstack"),
    "reductions": ("reduce", "reduce_and", "reduce_max", "reduce_min", "reduce_or", "reduce_prod", "reduce_sum",
                   "reduce_xor"),
    "fourier": ("FftType", "fft"),
    "rng": ("RandomAlgorithm", "rng_bit_generator"),
    "solves": ("custom_linear_solve", "custom_root"),
    "structure": ("after_all", "composite", "create_token", "dce_sink", "optimization_barrier", "platform_dependent",
                  "stage"),
}
# families added after the first ones: listed in __all__ from the table
_NEWER = ("elementwise", "shapes", "reductions", "fourier", "rng", "solves", "structure")
_NAMES = {name: family for family, names in _FAMILIES.items() for name in names}
_SUBMODULES = ("linalg",)


def __getattr__(name):
    if name in _NAMES:
        value = _eager.wrap(getattr(_importlib.import_module(f"{__name__}.{_NAMES[name]}"), name))
    elif name in _SUBMODULES:
        value = _importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module 'hloforge.lax' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__) | set(_SUBMODULES))


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
    "psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "axis_size",
    "reduce_window_shape_tuple",
    "ConvGeneralDilatedDimensionNumbers", "conv_general_dilated_local", "conv_general_dilated_patches",
    "conv_general_shape_tuple", "conv_shape_tuple", "conv_transpose_shape_tuple",
    "approx_max_k", "approx_min_k", "associative_scan", "cumlogsumexp", "sort_key_val",
    "DotDimensionNumbers", "Precision", "PrecisionLike", "dot", "RaggedDotDimensionNumbers", "ragged_dot",
    "ragged_dot_general",
    "dynamic_update_index_in_dim", "dynamic_update_slice_in_dim", "index_in_dim", "index_take", "scatter_apply",
    "scatter_sub", "slice", "slice_in_dim",
    "bessel_i0e", "bessel_i1e", "betainc", "erfc", "igamma_grad_a", "polygamma", "random_gamma_grad", "zeta",
    *(name for family in _NEWER for name in _FAMILIES[family]),
]
