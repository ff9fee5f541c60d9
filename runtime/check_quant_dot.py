"""Quantized ``dot_general``, ``dot`` and ``convolution`` as stablehlo-legalize-quant-to-math lowers them.

The pass (StableHLO's ``StablehloLegalizeQuantToMath.cpp``) sorts a dot-like op by its types:

- hybrid (float lhs, quantized rhs, float result): the rhs, behind an ``optimization_barrier``, is
  dequantized in f32 (``(convert(q) - zp) * scale``, the subtraction only for non-zero zero points)
  and the op runs on floats with its own attributes;
- integer (per-tensor lhs; rhs and result both per-tensor or both per-axis): the op runs on the
  storage values with an i32 result, ``dot(l - zl, r - zr) = dot(l, r) - zr * sum(l) - zl * sum(r) +
  K * zl * zr`` (sums over the contracting and spatial dims, K their size), the result and the
  offset scaled by ``s_l * s_r / s_res`` in f32 and truncated back to i32 only when that is more than
  0.001 from 1, plus the result's zero point, converted to its storage type. A convolution needs a
  zero rhs zero point, no lhs dilation and one of NHWC, NCHW, NDHWC, NCDHW; its padding becomes a
  ``pad`` of the lhs with the lhs zero point. ``dot`` is a ``dot_general`` over ``[1] x [0]``;
- anything else, and a convolution the integer kernel declines: the pass's fallback, dequantize,
  the f32 op, quantize (``lower_dot_like`` returns None and check_quant does it).

Where the pass computes something else than the op's value without refusing (a per-axis rhs or
result with non-zero zero points, result scales not proportional to the rhs's, a per-axis slice
that is not an output channel, batching dimensions out of order under a zero-point correction) this
raises ``QuantizedUnsupported`` with one line instead.
"""
from __future__ import annotations

import math
import re

from hloforge.frontend.context import ir, make_context, stablehlo
from hloforge.runtime.check_quant_emit import Emitter, Quant, QuantizedUnsupported, f32_text, float_types, \
    quant_of, shape_of, storage_types

DOT_LIKE = frozenset({"stablehlo.dot_general", "stablehlo.dot", "stablehlo.convolution"})

# (batch, feature, spatial) of the input, (spatial, input feature, output feature) of the kernel for the
# four layouts the pass's integer convolution takes; the output's layout is the input's
_CONV_LAYOUTS = {
    ((0, 3, (1, 2)), ((0, 1), 2, 3)), ((0, 1, (2, 3)), ((2, 3), 1, 0)),
    ((0, 4, (1, 2, 3)), ((0, 1, 2), 3, 4)), ((0, 1, (2, 3, 4)), ((2, 3, 4), 1, 0)),
}


class _Kernel:
    """What the lowering reads of the op: its attributes (name: text) and, parsed, a dot_general's
    dimension numbers or a convolution's layout, padding and lhs dilation."""

    def __init__(self, attributes: dict, dot_dims=None, conv=None):
        self.attributes, self.dot_dims, self.conv = attributes, dot_dims, conv


class _Dims:
    """Batching, spatial and contracting dims of both operands (the pass's DotLikeDimensionNumbers)."""

    def __init__(self, lhs_batching=(), lhs_spatial=(), lhs_contracting=(), rhs_batching=(), rhs_spatial=(),
                 rhs_contracting=()):
        self.lhs_batching, self.lhs_spatial, self.lhs_contracting = lhs_batching, lhs_spatial, lhs_contracting
        self.rhs_batching, self.rhs_spatial, self.rhs_contracting = rhs_batching, rhs_spatial, rhs_contracting


def lower_dot_like(found, op, operands, operand_types, result_type, emit: Emitter):
    """The lines of one quantized dot_general, dot or convolution, or None where the pass falls back
    to dequantize, the f32 op, quantize."""
    if len(operands) != 2:
        raise QuantizedUnsupported(f"cannot read the two operands of {op}")
    lhs_q, rhs_q, res_q = (quant_of(t) for t in (*operand_types, result_type))
    if lhs_q is None and rhs_q is not None and res_q is None:
        return _hybrid(found, operands[1], operand_types[1], rhs_q, emit)
    if lhs_q is None or lhs_q.axis is not None or rhs_q is None or res_q is None \
            or (rhs_q.axis is None) != (res_q.axis is None):
        return None
    shapes = [_dims_of(op, t) for t in (*operand_types, result_type)]
    kernel = _probe(found, op, operands, operand_types, result_type)
    if op == "stablehlo.convolution":
        dims = _conv_dims(kernel, rhs_q, res_q, len(shapes[1]))
        if dims is None:
            return None
    elif op == "stablehlo.dot":
        if len(shapes[0]) != 2 or len(shapes[1]) != 2:
            raise QuantizedUnsupported(f"{op} of quantized vectors is not lowered (the pass takes a dot as a "
                                       f"dot_general over [1] x [0] of matrices)")
        dims = _Dims(lhs_contracting=(1,), rhs_contracting=(0,))
    else:
        dims = _Dims(*kernel.dot_dims)
    if rhs_q.axis is not None:
        _check_per_axis(op, rhs_q, res_q, dims, shapes, kernel)
    return _integer(found, op, operands, (lhs_q, rhs_q, res_q), shapes, dims, kernel, emit)


def _hybrid(found, rhs: str, rhs_type: str, q: Quant, emit: Emitter) -> list:
    shape = shape_of(rhs_type)
    f = f"tensor<{shape}f32>"
    barrier = emit.op(f"stablehlo.optimization_barrier {rhs} : tensor<{shape}{q.storage}>")
    value = emit.op(f"stablehlo.convert {barrier} : (tensor<{shape}{q.storage}>) -> {f}")
    if any(q.zeros):
        zeros = emit.params([f32_text(v) for v in q.zeros], "f32", shape, q.axis)
        value = emit.op(f"stablehlo.subtract {value}, {zeros} : {f}")
    scales = emit.params([f32_text(v) for v in q.scales], "f32", shape, q.axis)
    value = emit.op(f"stablehlo.multiply {value}, {scales} : {f}")
    body = re.sub(re.escape(rhs) + r"(?![\w$.\-#])", value, found.group("rest"))
    emit.lines.append(f"{found.group('indent')}{found.group('result')} = {found.group('op')}{float_types(body)}")
    return emit.lines


def _dims_of(op: str, t: str) -> tuple:
    shape = shape_of(t)
    if "?" in shape:
        raise QuantizedUnsupported(f"{op} of dynamically shaped quantized values is not lowered")
    return tuple(int(d) for d in shape.split("x")[:-1])


def _probe(found, op, operands, operand_types, result_type) -> _Kernel:
    """The op's _Kernel, read from it parsed on its storage types (which verifies it) in a context
    of its own."""
    names = {}
    for name in operands:
        names.setdefault(name, f"%arg{len(names)}")
    rest = re.sub(r"%[\w$.\-#]+", lambda m: names.get(m.group(0), m.group(0)), found.group("rest"))
    arguments = ", ".join(dict.fromkeys(f"{names[n]}: {storage_types(t)}" for n, t in zip(operands, operand_types)))
    result = storage_types(result_type)
    text = f"func.func @probe({arguments}) -> {result} {{\n  %0 = {found.group('op')}{storage_types(rest)}\n" \
           f"  return %0 : {result}\n}}"
    with make_context():
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as e:
            messages = "; ".join(d.message for d in e.error_diagnostics) or str(e)
            raise QuantizedUnsupported(f"{op} does not verify on its storage types: {messages}") from None
        probe = module.body.operations[0].regions[0].blocks[0].operations[0]
        attributes = {name: str(probe.attributes[name]) for name in probe.attributes}
        return _Kernel(attributes, _dot_dims(probe) if op == "stablehlo.dot_general" else None,
                       _conv_fields(probe) if op == "stablehlo.convolution" else None)


def _dot_dims(probe) -> tuple:
    d = stablehlo.DotDimensionNumbers(probe.attributes["dot_dimension_numbers"])
    return (tuple(d.lhs_batching_dimensions), (), tuple(d.lhs_contracting_dimensions),
            tuple(d.rhs_batching_dimensions), (), tuple(d.rhs_contracting_dimensions))


def _conv_fields(probe) -> dict:
    d = stablehlo.ConvDimensionNumbers(probe.attributes["dimension_numbers"])
    fields = {"layout": ((d.input_batch_dimension, d.input_feature_dimension, tuple(d.input_spatial_dimensions)),
                         (tuple(d.kernel_spatial_dimensions), d.kernel_input_feature_dimension,
                          d.kernel_output_feature_dimension)),
              "output": (d.output_batch_dimension, d.output_feature_dimension, tuple(d.output_spatial_dimensions)),
              "lhs_dilation": (), "padding": ()}
    if "lhs_dilation" in probe.attributes:
        a = ir.DenseI64ArrayAttr(probe.attributes["lhs_dilation"])
        fields["lhs_dilation"] = tuple(a[i] for i in range(len(a)))
    if "padding" in probe.attributes:
        a = ir.DenseIntElementsAttr(probe.attributes["padding"])
        rows = ir.ShapedType(a.type).shape[0]
        flat = [int(a.get_splat_value().value)] * (2 * rows) if a.is_splat else [int(v) for v in a]
        fields["padding"] = tuple(zip(flat[0::2], flat[1::2]))
    return fields


def _conv_dims(kernel: _Kernel, rhs_q: Quant, res_q: Quant, rhs_rank: int):
    """The pass's verifyAndConstructDims: the dims of a convolution its integer kernel takes, else
    None (its fallback)."""
    conv = kernel.conv
    if any(rhs_q.zeros) or (rhs_q.axis is not None and any(res_q.zeros)):
        return None  # (the rhs, and a per-axis result, must have zero zero points)
    if rhs_q.axis is not None:
        if rhs_q.axis != rhs_rank - 1:
            return None
        ratios = [r / s for r, s in zip(res_q.scales, rhs_q.scales)]
        if len(res_q.scales) != len(rhs_q.scales) or any(abs((r - ratios[0]) / ratios[0]) > 0.001 for r in ratios):
            return None
    if any(d != 1 for d in conv["lhs_dilation"]):
        return None
    (batch, feature, spatial), (kernel_spatial, kernel_in, _) = layout = conv["layout"]
    if layout not in _CONV_LAYOUTS or conv["output"] != (batch, feature, spatial):
        return None
    return _Dims((batch,), spatial, (feature,), (), kernel_spatial, (kernel_in,))


def _check_per_axis(op, rhs_q: Quant, res_q: Quant, dims: _Dims, shapes, kernel: _Kernel) -> None:
    """Refuses a per-axis dot-like op whose value the pass's kernel would not compute: it takes the
    zero points of a per-axis rhs and result as 0 and one scale ratio for every slice."""
    if any(rhs_q.zeros) or any(res_q.zeros):
        raise QuantizedUnsupported(f"{op} of a per-axis rhs or result with non-zero zero points is not lowered "
                                   f"(the pass takes them as 0)")
    ratios = [r / s for r, s in zip(res_q.scales, rhs_q.scales)]
    if len(res_q.scales) != len(rhs_q.scales) or any(abs((r - ratios[0]) / ratios[0]) > 0.001 for r in ratios):
        raise QuantizedUnsupported(f"{op} whose per-axis result scales are not proportional to the rhs's is not "
                                   f"lowered (the pass uses the first ratio for every slice)")
    if op == "stablehlo.convolution":
        channel, out_channel = kernel.conv["layout"][1][2], kernel.conv["output"][1]
    else:
        free = [d for d in range(len(shapes[1])) if d not in dims.rhs_batching + dims.rhs_contracting]
        channel = rhs_q.axis if rhs_q.axis in free else None
        lhs_free = len(shapes[0]) - len(dims.lhs_batching) - len(dims.lhs_contracting)
        out_channel = None if channel is None else len(dims.rhs_batching) + lhs_free + free.index(channel)
    if rhs_q.axis != channel or res_q.axis != out_channel:
        raise QuantizedUnsupported(f"{op} quantized per axis along dims {rhs_q.axis} (rhs) and {res_q.axis} "
                                   f"(result) is not lowered (the pass's kernel needs the rhs's output channels)")


def _integer(found, op, operands, quants, shapes, dims: _Dims, kernel: _Kernel, emit: Emitter) -> list:
    """The pass's matchAndRewriteDotLikeOp: the i32 kernel, the zero-point offset, the combined
    scale, the result's zero point, the result's storage type."""
    lhs_q, rhs_q, res_q = quants
    lhs_shape, rhs_shape, res_shape = shapes
    lhs, rhs = operands
    out = _text_shape(res_shape)
    i32 = f"tensor<{out}i32>"
    attributes = dict(kernel.attributes)
    if op == "stablehlo.convolution" and any(low or high for low, high in kernel.conv["padding"]):
        lhs, lhs_shape = _pad_with_zero_point(emit, op, lhs, lhs_q, lhs_shape, dims, kernel.conv["padding"])
        attributes["padding"] = f"dense<0> : tensor<{len(dims.lhs_spatial)}x2xi64>"
    if op == "stablehlo.dot":
        attributes["dot_dimension_numbers"] = \
            "#stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>"
    name = "stablehlo.convolution" if op == "stablehlo.convolution" else "stablehlo.dot_general"
    text = ", ".join(f"{k} = {v}" for k, v in attributes.items())
    result = emit.op(f'"{name}"({lhs}, {rhs}) {{{text}}} : (tensor<{_text_shape(lhs_shape)}{lhs_q.storage}>, '
                     f'tensor<{_text_shape(rhs_shape)}{rhs_q.storage}>) -> {i32}')
    rhs_zero = rhs_q.zero if rhs_q.axis is None else 0
    offset = _zero_point_offset(emit, op, (lhs, lhs_q, lhs_shape), (rhs, rhs_q, rhs_shape), rhs_zero, res_shape,
                                dims)
    combined = lhs_q.scale * rhs_q.scales[0] / res_q.scales[0]  # (s_l * s_r / s_res; per axis, the first slice's)
    if abs(combined - 1.0) > 0.001:
        scale = emit.op(f"stablehlo.constant dense<{f32_text(combined)}> : tensor<f32>")
        result = _scaled(emit, result, scale, out)
        if offset is not None:
            offset = _scaled(emit, offset, scale, out)
    zero = emit.splat(str(res_q.zero if res_q.axis is None else 0), "i32", out)
    if offset is not None:
        zero = emit.op(f"stablehlo.subtract {zero}, {offset} : {i32}")
    total = emit.op(f"stablehlo.add {result}, {zero} : {i32}")
    return emit.lines + [f"{found.group('indent')}{found.group('result')} = stablehlo.convert {total} : ({i32}) -> "
                         f"tensor<{out}{res_q.storage}>"]


def _text_shape(shape) -> str:
    return "".join(f"{d}x" for d in shape)


def _scaled(emit: Emitter, value: str, scale: str, out: str) -> str:
    """``convert(convert(value, f32) * scale, i32)`` (the conversion back truncates)."""
    f32, i32 = f"tensor<{out}f32>", f"tensor<{out}i32>"
    wide = emit.op(f"stablehlo.convert {value} : ({i32}) -> {f32}")
    scales = emit.op(f"stablehlo.broadcast_in_dim {scale}, dims = [] : (tensor<f32>) -> {f32}") if out else scale
    product = emit.op(f"stablehlo.multiply {wide}, {scales} : {f32}")
    return emit.op(f"stablehlo.convert {product} : ({f32}) -> {i32}")


def _pad_with_zero_point(emit: Emitter, op, lhs, q: Quant, shape, dims: _Dims, padding):
    if q.storage != "i8":
        raise QuantizedUnsupported(f"a padded {op} of {q.storage} values is not lowered (the pass pads with an i8 "
                                   f"zero point)")
    low, high = [0] * len(shape), [0] * len(shape)
    for d, (lo, hi) in zip(dims.lhs_spatial, padding):
        low[d], high[d] = lo, hi
    padded = tuple(n + lo + hi for n, lo, hi in zip(shape, low, high))
    zero = emit.op(f"stablehlo.constant dense<{(q.zero + 128) % 256 - 128}> : tensor<i8>")  # (static_cast<int8_t>)
    value = emit.op(f"stablehlo.pad {lhs}, {zero}, low = {low}, high = {high}, interior = {[0] * len(shape)} : "
                    f"(tensor<{_text_shape(shape)}i8>, tensor<i8>) -> tensor<{_text_shape(padded)}i8>")
    return value, padded


def _zero_point_offset(emit: Emitter, op, lhs, rhs, rhs_zero: int, res_shape, dims: _Dims):
    """``zr * sum(l) + zl * sum(r) - K * zl * zr`` broadcast to the result (i32), or None when both
    zero points are 0 (the pass's calculateZeroPointOffset)."""
    (lhs, lhs_q, lhs_shape), (rhs, rhs_q, rhs_shape) = lhs, rhs
    out = _text_shape(res_shape)
    offset = None
    if rhs_zero != 0:
        reduced = dims.lhs_spatial + dims.lhs_contracting
        offset = _partial_offset(emit, op, lhs, lhs_q, lhs_shape, rhs_zero, reduced, dims.lhs_batching,
                                 len(dims.lhs_batching), out)
    if lhs_q.zero != 0:
        reduced = dims.rhs_spatial + dims.rhs_contracting
        start = len(lhs_shape) - len(dims.lhs_contracting)
        if dims.lhs_spatial and dims.rhs_spatial:  # (a convolution: its output channels sit at the lhs's feature dim)
            start = dims.lhs_contracting[0]
        part = _partial_offset(emit, op, rhs, rhs_q, rhs_shape, lhs_q.zero, reduced, dims.rhs_batching, start, out)
        offset = part if offset is None else emit.op(f"stablehlo.add {offset}, {part} : tensor<{out}i32>")
    if rhs_zero != 0 and lhs_q.zero != 0:
        size = math.prod(rhs_shape[d] for d in dims.rhs_spatial + dims.rhs_contracting)
        value = (lhs_q.zero * rhs_zero * size + 2 ** 31) % 2 ** 32 - 2 ** 31  # (the pass's int32 product)
        offset = emit.op(f"stablehlo.subtract {offset}, {emit.splat(str(value), 'i32', out)} : tensor<{out}i32>")
    return offset


def _partial_offset(emit: Emitter, op, value, q: Quant, shape, other_zero: int, reduced, batching, start: int,
                    out: str) -> str:
    """``other_zero * sum(value over reduced)`` broadcast into the result: its batching dims to the
    result's first dims, its other dims from ``start`` on (the pass's createZeroPointPartialOffset
    and broadcastZpContribution)."""
    if list(batching) != sorted(batching):
        raise QuantizedUnsupported(f"{op} with batching dims {list(batching)} out of order and a zero-point "
                                   f"correction is not lowered (the pass broadcasts the correction in dim order)")
    kept = [d for d in range(len(shape)) if d not in reduced]
    kept_shape = _text_shape([shape[d] for d in kept])
    wide = emit.op(f"stablehlo.convert {value} : (tensor<{_text_shape(shape)}{q.storage}>) -> "
                   f"tensor<{_text_shape(shape)}i32>")
    init = emit.op("stablehlo.constant dense<0> : tensor<i32>")
    total = emit.op(f"stablehlo.reduce({wide} init: {init}) applies stablehlo.add across dimensions = "
                    f"{list(reduced)} : (tensor<{_text_shape(shape)}i32>, tensor<i32>) -> tensor<{kept_shape}i32>")
    scaled = emit.op(f"stablehlo.multiply {total}, {emit.splat(str(other_zero), 'i32', kept_shape)} : "
                     f"tensor<{kept_shape}i32>")
    positions, batch, free = [], 0, start
    for d in kept:
        if d in batching:
            positions.append(batch)
            batch += 1
        else:
            positions.append(free)
            free += 1
    return emit.op(f"stablehlo.broadcast_in_dim {scaled}, dims = {positions} : (tensor<{kept_shape}i32>) -> "
                   f"tensor<{out}i32>")
