"""``hloforge.lax``: a jax.lax-compatible layer over :mod:`hloforge.ops`.

Same names, signatures, semantics and errors as ``jax.lax``, emitting StableHLO: control flow,
indexing, convolution, windows, linear algebra and special functions, each family in its own
module of this package.

The functions load with their family module on first use (PEP 562), so importing one family (as
``hloforge.numpy`` does) does not import the others or the linear-algebra tables.
"""
import importlib as _importlib

_FAMILIES = {
    "autodiff": ("stop_gradient",),
    "control_flow": ("cond", "fori_loop", "map", "scan", "switch", "while_loop"),
    "convolution": ("ConvDimensionNumbers", "conv", "conv_dimension_numbers", "conv_general_dilated", "conv_general_permutations", "conv_transpose", "conv_with_general_padding", "padtype_to_pads"),
    "parallel": ("all_gather", "axis_index", "axis_size", "pmax", "pmean", "pmin", "psum"),
    "ordering": ("argmax", "argmin", "broadcasted_iota", "cummax", "cummin", "cumprod", "cumsum", "iota", "sort", "top_k"),
    "products": ("batch_matmul", "dot_general"),
    "slicing": ("GatherDimensionNumbers", "GatherScatterMode", "ScatterDimensionNumbers", "dynamic_index_in_dim", "dynamic_slice", "dynamic_slice_in_dim", "dynamic_update_slice", "gather", "scatter", "scatter_add", "scatter_max", "scatter_min", "scatter_mul", "select"),
    "special": ("digamma", "erf_inv", "igamma", "igammac", "lgamma"),
    "windows": ("bitcast_convert_type", "clz", "population_count", "reduce_precision", "reduce_window"),
}
_NAMES = {name: family for family, names in _FAMILIES.items() for name in names}
_SUBMODULES = ("linalg",)


def __getattr__(name):
    if name in _NAMES:
        value = getattr(_importlib.import_module(f"{__name__}.{_NAMES[name]}"), name)
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
]
