"""``hloforge.ops``: one function per StableHLO op, with exact StableHLO semantics.

Operands must agree in shape and dtype as the StableHLO spec requires; every
builder checks that in Python and raises ``TypeError``/``ValueError`` before MLIR
sees the op. For numpy-style broadcasting and promotion use ``hloforge.numpy``.
"""
from hloforge.frontend.ops.chlo_math import (
    acos, acosh, asin, asinh, atan, atanh, bessel_i1e, cosh, erfc, is_inf, is_neg_inf, is_pos_inf, next_after,
    polygamma, sinh, square, zeta)
from hloforge.frontend.ops.bits import bitcast_convert, reduce_precision, rng_bit_generator
from hloforge.frontend.ops.collective import (
    all_gather, all_reduce, all_to_all, collective_broadcast, collective_permute, partition_id, reduce_scatter,
    replica_id)
from hloforge.frontend.ops.compare import clamp, compare, select
from hloforge.frontend.ops.control_flow import case, if_, while_
from hloforge.frontend.ops.convert import convert
from hloforge.frontend.ops.convolution import ConvDimensions, convolution
from hloforge.frontend.ops.elementwise import (
    abs, add, and_, atan2, cbrt, ceil, complex, cos, count_leading_zeros, digamma, divide, erf, erf_inv,
    exp, expm1, floor, imag, is_finite, lgamma, log, log1p, logistic, maximum, minimum, multiply, neg,
    not_, or_, popcnt, power, real, remainder, round, round_nearest_afz, rsqrt, shift_left,
    shift_right_arithmetic, shift_right_logical, sign, sin, sqrt, subtract, tan, tanh, xor)
from hloforge.frontend.ops.factorization import cholesky, triangular_solve
from hloforge.frontend.ops.fft import fft
from hloforge.frontend.ops.linalg import dot_general, reduce
from hloforge.frontend.ops.normalization import batch_norm_grad, batch_norm_inference, batch_norm_training
from hloforge.frontend.ops.pad import pad
from hloforge.frontend.ops.shape import (
    broadcast_in_dim, concatenate, constant, dynamic_slice, iota, reshape, reverse, slice, transpose)
from hloforge.frontend.ops.slicing import dynamic_update_slice, gather, scatter
from hloforge.frontend.ops.sort import sort
from hloforge.frontend.ops.structure import composite, custom_call, map, optimization_barrier, sharding_constraint
from hloforge.frontend.ops.tuples import after_all, get_tuple_element, tuple
from hloforge.frontend.ops.top_k import top_k
from hloforge.frontend.ops.window import reduce_window, select_and_scatter

__all__ = [
    "after_all", "get_tuple_element", "tuple",
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "cholesky", "cosh", "is_inf", "is_neg_inf",
    "is_pos_inf", "next_after", "sinh", "triangular_solve", "square", "erfc", "polygamma", "zeta", "top_k",
    "bessel_i1e",
    "abs", "add", "all_gather", "all_reduce", "all_to_all", "and_", "atan2", "batch_norm_grad",
    "batch_norm_inference", "batch_norm_training", "bitcast_convert", "broadcast_in_dim", "case", "cbrt",
    "ceil", "clamp", "collective_broadcast", "collective_permute", "compare", "complex", "composite",
    "concatenate", "constant", "ConvDimensions", "convert", "convolution", "cos", "count_leading_zeros",
    "custom_call", "digamma", "divide", "dot_general", "dynamic_slice", "dynamic_update_slice", "erf",
    "erf_inv", "exp", "expm1", "fft", "floor", "gather", "if_", "imag", "iota", "is_finite", "lgamma",
    "log", "log1p", "logistic", "map", "maximum", "minimum", "multiply", "neg", "not_",
    "optimization_barrier", "or_", "pad", "partition_id", "popcnt", "power", "real", "reduce",
    "reduce_precision", "reduce_scatter", "reduce_window", "remainder", "replica_id", "reshape", "reverse",
    "rng_bit_generator", "round", "round_nearest_afz", "rsqrt", "scatter", "select", "select_and_scatter",
    "sharding_constraint",
    "shift_left", "shift_right_arithmetic", "shift_right_logical", "sign", "sin", "slice", "sort", "sqrt",
    "subtract", "tan", "tanh", "transpose", "while_", "xor",
]

from hloforge.frontend import eager as _eager  # noqa: E402
_eager.wrap_namespace(globals(), __all__, static={"constant": ("value",)})  # (callable eagerly: frontend/eager.py)
from hloforge.frontend.naming import name_missing_attributes as _public_errors  # noqa: E402
_public_errors(globals())  # (AttributeErrors name hloforge.<module>)
