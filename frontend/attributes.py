"""Reading and building op attributes with jaxlib's typed StableHLO bindings.

One helper for the op builders, their ``decode`` functions, the passes and inspection, so that
no code parses printed attribute text. Builders need an active MLIR context.
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from hloforge.frontend.context import dense_elements, ir, shape_dtype_of, stablehlo

_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)

# ---------------------------------------------------------------- building


def i64(value) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))


def i64s(values) -> ir.DenseI64ArrayAttr:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def boolean(value) -> ir.BoolAttr:
    return ir.BoolAttr.get(bool(value))


def fft_type(kind: str):
    return stablehlo.FftTypeAttr.get(kind)


def comparison_direction(direction: str):
    return stablehlo.ComparisonDirectionAttr.get(direction)


def comparison_type(kind: str):
    return stablehlo.ComparisonTypeAttr.get(kind)


def dot_dimensions(lhs_batch, rhs_batch, lhs_contract, rhs_contract):
    return stablehlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=list(lhs_batch), rhs_batching_dimensions=list(rhs_batch),
        lhs_contracting_dimensions=list(lhs_contract), rhs_contracting_dimensions=list(rhs_contract))


def precision_config(precisions) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([stablehlo.PrecisionAttr.get(p) for p in precisions])


# ---------------------------------------------------------------- reading


def has(op, name: str) -> bool:
    return name in op.attributes


def read_ints(op, name: str) -> tuple:
    """A DenseI64ArrayAttr attribute as a tuple of Python ints (() when absent)."""
    if name not in op.attributes:
        return ()
    a = ir.DenseI64ArrayAttr(op.attributes[name])
    return tuple(map(a.__getitem__, range(len(a))))  # (indexing: three times faster than its iterator)


def read_int(op, name: str) -> int:
    return ir.IntegerAttr(op.attributes[name]).value


def read_bool(op, name: str, default=False) -> bool:
    return ir.BoolAttr(op.attributes[name]).value if name in op.attributes else default


def read_fft_type(op) -> str:
    """"FFT", "IFFT", "RFFT" or "IRFFT"."""
    return stablehlo.FftTypeAttr(op.attributes["fft_type"]).value


def read_comparison_direction(op) -> str:
    return stablehlo.ComparisonDirectionAttr(op.attributes["comparison_direction"]).value


def read_comparison_type(op):
    """"FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED" or None when the attribute is absent."""
    if "compare_type" not in op.attributes:
        return None
    return stablehlo.ComparisonTypeAttr(op.attributes["compare_type"]).value


def read_dot_dimensions(op) -> tuple:
    """(lhs_batching, rhs_batching, lhs_contracting, rhs_contracting) as tuples of ints."""
    d = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    return tuple(tuple(x) for x in (d.lhs_batching_dimensions, d.rhs_batching_dimensions,
                                    d.lhs_contracting_dimensions, d.rhs_contracting_dimensions))


def read_precision(op):
    """None, one precision name for both operands, or an (lhs, rhs) pair when they differ."""
    if "precision_config" not in op.attributes:
        return None
    names = tuple(stablehlo.PrecisionAttr(a).value for a in ir.ArrayAttr(op.attributes["precision_config"]))
    if not names:
        return None
    return names[0] if len(set(names)) == 1 else names


# ---------------------------------------------------------------- constants


def constant_array(op, limit: int | None = None, shape_dtype=None):
    """The value of a ``stablehlo.constant`` op as (numpy array, is_splat), else None.

    ``limit``: the largest non-splat size to read. A splat comes back as a 0-d array. Complex and
    bfloat16 elements cannot be read through the Python API; their text is parsed.
    ``shape_dtype``: the result's (shape, dtype) when the caller has it already.
    """
    shape, dtype = shape_dtype if shape_dtype is not None else shape_dtype_of(op.results[0].type)
    size = math.prod(shape)
    if size == 0:
        return np.zeros(shape, dtype), False
    if dtype.kind == "c" or dtype == _BFLOAT16:
        return parse_constant(constant_text(op, size, limit), shape, dtype, size, limit)
    attr = op.attributes["value"]
    if not isinstance(attr, ir.DenseElementsAttr):
        return None
    if attr.is_splat:
        return _scalar(attr.get_splat_value().value, dtype), True
    if size == 1:
        return np.asarray(np.array(attr), dtype).reshape(()), True
    if limit is not None and size > limit:
        return None
    return np.array(attr).astype(dtype, copy=False).reshape(shape), False


def _scalar(v, dtype) -> np.ndarray:
    if dtype.kind in "iu":
        bits = dtype.itemsize * 8
        v = int(v) % (1 << bits)
        if dtype.kind == "i" and v >= 1 << (bits - 1):
            v -= 1 << bits
    return np.asarray(v, dtype=dtype)


def constant_text(op, size: int, limit: int | None) -> str:
    """The printed form of constant ``op`` (of ``size`` elements) that ``parse_constant`` reads:
    splats are never elided; a non-splat larger than ``limit`` prints elided, so a splat check
    of a big constant prints one token instead of all its elements."""
    detached = op.operation.clone(ip=False)  # printing an op in place numbers its whole function
    text = detached.get_asm(large_elements_limit=size if limit is None else max(limit, 1), assume_verified=True)
    detached.erase()
    return text


def parse_constant(text: str, shape, dtype, size: int, limit: int | None):
    """``constant_array`` of a constant printed by ``constant_text``."""
    start = text.find("dense<")
    if start < 0:
        return None
    body = text[start + 6:text.index(">", start)]
    part = _PART.get(dtype, dtype)
    if body.startswith('"0x'):
        flat = np.frombuffer(bytes.fromhex(body[3:-1]), dtype=dtype)
    elif body[0] == "(" and body.count(",") == 1:  # (a complex splat: the common case, parsed directly)
        pair = np.empty(2, part)
        pair[0], pair[1] = (_token(t.strip(), part) for t in body[1:-1].split(","))
        flat = pair.view(dtype)  # ((re, im) is complex's memory layout: the bits stay exact)
    else:
        tokens = body.replace("[", "").replace("]", "").replace("(", "").replace(")", "").split(",")
        flat = np.array([_token(t.strip(), part) for t in tokens], dtype=part)
        if dtype.kind == "c":
            flat = _pairs(flat, dtype)
    if flat.size == 1:
        return flat.reshape(()).copy(), True
    if (limit is not None and size > limit) or flat.size != size:
        return None
    return flat.reshape(shape).copy(), False


_PART = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.float64)}


def _pairs(flat: np.ndarray, dtype) -> np.ndarray:
    out = np.empty(flat.size // 2, dtype)
    out.real, out.imag = flat[0::2], flat[1::2]
    return out


_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _token(token: str, part: np.dtype):
    if token.startswith("0x"):  # a bit pattern (NaN, Inf, or a value decimal would not round-trip)
        return np.array(int(token, 16), _UINT[part.itemsize]).view(part)
    return np.asarray(float(token)).astype(part)


def dense(array: np.ndarray, shape) -> ir.DenseElementsAttr:
    """A DenseElementsAttr for ``array`` over ``shape``; elements with identical bits become a splat."""
    array = np.asarray(array)
    if array.size > 1 and not any(array.strides):  # (one element broadcast, as a decoded splat: not copied out)
        return dense_elements(np.ascontiguousarray(array[(0,) * array.ndim]).reshape(1), shape=shape)
    flat = np.ascontiguousarray(array).reshape(-1)
    if flat.size > 1 and _same_bits(flat):
        flat = flat[:1]
    return dense_elements(flat if flat.size == 1 else flat.reshape(shape), shape=shape)


_WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _same_bits(flat: np.ndarray) -> bool:
    word = _WORDS.get(flat.itemsize)
    raw = flat.view(word).reshape(flat.size, 1) if word else flat.view(np.uint64).reshape(flat.size, -1)
    # (most non-splats differ at one of ~64 elements spread over the array, so the full comparison is
    # skipped: a DFT matrix's first row is all ones, and comparing one of a few MB took 3-7 ms)
    if (raw[::max(1, flat.size // 64)] != raw[0]).any():
        return False
    return bool((raw == raw[0]).all())


# ---------------------------------------------------------------- model ops (convolution, windows, collectives)


def bools(values) -> ir.DenseBoolArrayAttr:
    return ir.DenseBoolArrayAttr.get([bool(v) for v in values])


def read_bools(op, name: str):
    """A DenseBoolArrayAttr attribute as a tuple of bools (None when absent)."""
    return tuple(ir.DenseBoolArrayAttr(op.attributes[name])) if name in op.attributes else None


def i64_matrix(rows, columns: int = 2) -> ir.DenseIntElementsAttr:
    """A tensor<Nxcolumns x i64> attribute (convolution/reduce_window padding, replica groups)."""
    array = np.asarray([[int(v) for v in row] for row in rows], dtype=np.int64).reshape(-1, columns)
    return ir.DenseIntElementsAttr.get(array, type=ir.IntegerType.get_signless(64), shape=list(array.shape))


def read_i64_matrix(op, name: str):
    """A 2-d integer elements attribute as a tuple of tuples (None when absent)."""
    if name not in op.attributes:
        return None
    a = ir.DenseIntElementsAttr(op.attributes[name])
    shape = ir.ShapedType(a.type).shape
    flat = [int(v) for v in a] if a.is_splat is False else [int(a.get_splat_value().value)] * int(np.prod(shape))
    return tuple(tuple(flat[i * shape[1]:(i + 1) * shape[1]]) for i in range(shape[0]))


def conv_dimensions(d):
    """A ConvDimensionNumbers attribute from the nine fields of ``ops.ConvDimensions``."""
    return stablehlo.ConvDimensionNumbers.get(
        input_batch_dimension=d[0], input_feature_dimension=d[1], input_spatial_dimensions=list(d[2]),
        kernel_input_feature_dimension=d[3], kernel_output_feature_dimension=d[4],
        kernel_spatial_dimensions=list(d[5]), output_batch_dimension=d[6], output_feature_dimension=d[7],
        output_spatial_dimensions=list(d[8]))


def read_conv_dimensions(op) -> tuple:
    """The nine fields of a convolution's dimension_numbers (ints and tuples of ints)."""
    d = stablehlo.ConvDimensionNumbers(op.attributes["dimension_numbers"])
    return (d.input_batch_dimension, d.input_feature_dimension, tuple(d.input_spatial_dimensions),
            d.kernel_input_feature_dimension, d.kernel_output_feature_dimension,
            tuple(d.kernel_spatial_dimensions), d.output_batch_dimension, d.output_feature_dimension,
            tuple(d.output_spatial_dimensions))

