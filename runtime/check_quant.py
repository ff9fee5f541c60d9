"""Uniform quantized programs as integer and float math, before MLIR parses them.

jaxlib 0.10.2's MLIR has no quant dialect, so ``!quant.uniform`` types do not parse. StableHLO's
interpreter runs quantized programs by lowering them first (``stablehlo-legalize-quant-to-math``);
``lower_quantized`` does that lowering on the text, op for op as that pass does, for per-tensor
and per-axis types with f32 expressed types:

- ``uniform_quantize`` of f32: ``round_nearest_even(clamp(min, x / scale + zp, max))`` converted to
  the storage type; of a quantized value (requantize): ``x * (s1 / s2) + (z2 - z1 * s1 / s2)`` in
  f32, clamped below 32 bits, rounded, converted;
- ``uniform_dequantize``: ``(convert(q, i32) - zp) * scale`` in f32;
- ``add`` of three quantized types: both operands requantized to the result's type in i32, summed,
  less the zero point, clamped below 32 bits;
- the ops the pass dequantizes, computes in f32 and quantizes again (abs, cbrt, ceil, cosine,
  divide, exponential, floor, log, multiply, negate, sign, sine, sqrt, subtract, tanh, ...);
- data movement (gather, reshape, transpose, concatenate, slice, ...): the same op on the storage type.

Anything else that meets a quantized type (dot_general and convolution, which the pass computes in
integer arithmetic with zero-point corrections, not done here; per-axis add, max and min) raises
``QuantizedUnsupported`` with one line.
"""
from __future__ import annotations

import itertools
import re

import numpy as np

_QUANT = re.compile(r"!quant\.uniform<(?P<storage>[iu]\d+)(?:<(?P<min>-?\d+):(?P<max>-?\d+)>)?:(?P<expressed>\w+)"
                    r"(?P<axis>:\d+)?,\s*(?P<params>\{[^{}]*\}|[^<>{}]*?)>")
_TENSOR = re.compile(r"tensor<(?P<shape>(?:[\d?]+x)*)(?P<element>!quant\.uniform<[^<>]*(?:<[^<>]*>[^<>]*)?>)>")
_OP_LINE = re.compile(r"^(?P<indent>\s*)(?P<result>%[\w$.\-]+) = (?P<op>\"?[\w.]+\"?)(?P<rest>.*)$")
_SSA = re.compile(r"%[\w$.\-#]+")

# ops stablehlo-legalize-quant-to-math computes as dequantize, the f32 op, quantize (its QDQ fallback)
_QDQ = frozenset(f"stablehlo.{n}" for n in (
    "abs", "add", "atan2", "cbrt", "ceil", "clamp", "compare", "cosine", "divide", "exponential_minus_one",
    "exponential", "floor", "log_plus_one", "logistic", "log", "maximum", "minimum", "multiply", "negate",
    "power", "reduce_precision", "remainder", "round_nearest_afz", "round_nearest_even", "rsqrt", "sign",
    "sine", "sqrt", "subtract", "tanh", "tan"))
# ops it runs on the storage type as they are (its ConvertGenericOp)
_STORAGE = frozenset(f"stablehlo.{n}" for n in (
    "bitcast_convert", "broadcast_in_dim", "concatenate", "dynamic_reshape", "dynamic_slice", "gather",
    "pad", "reshape", "select", "slice", "transpose", "get_dimension_size", "dynamic_broadcast_in_dim"))
_INTEGER_KERNELS = frozenset({"stablehlo.dot_general", "stablehlo.dot", "stablehlo.convolution"})


class QuantizedUnsupported(ValueError):
    """A quantized construct lower_quantized does not lower (one line)."""


class Quant:
    """One ``!quant.uniform`` type: storage (MLIR name) and its range, scales and zero points (one
    each per tensor, or one per slice along ``axis``)."""

    def __init__(self, found: re.Match):
        text = found.group(0)
        if found.group("expressed") != "f32":
            raise QuantizedUnsupported(f"{text} expresses {found.group('expressed')}: only f32 is lowered")
        storage = found.group("storage")
        bits = int(storage[1:])
        self.storage = storage if storage[0] == "i" else f"ui{bits}"
        low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if storage[0] == "i" else (0, (1 << bits) - 1)
        self.min = int(found.group("min")) if found.group("min") else low
        self.max = int(found.group("max")) if found.group("max") else high
        self.bits = bits
        self.axis = int(found.group("axis")[1:]) if found.group("axis") else None
        params = found.group("params").strip()
        entries = params.strip("{}").split(",") if self.axis is not None else [params]
        pairs = [entry.strip().partition(":") for entry in entries]
        self.scales = tuple(float(scale) for scale, _, _ in pairs)
        self.zeros = tuple(int(zero or 0) for _, _, zero in pairs)
        self.key = (self.storage, self.min, self.max, self.axis, self.scales, self.zeros)

    @property
    def scale(self) -> float:
        return self.scales[0]

    @property
    def zero(self) -> int:
        return self.zeros[0]

    def __eq__(self, other):
        return isinstance(other, Quant) and self.key == other.key

    def __hash__(self):
        return hash(self.key)


def lower_quantized(text: str) -> str:
    """``text`` with its per-tensor quantized types and ops lowered to integer and float math
    (itself when it has none); QuantizedUnsupported for what is not lowered."""
    if "!quant." not in text:
        return text
    names = (f"%hfq{n}" for n in itertools.count())
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if "!quant." not in line:
            out.append(line)
            continue
        try:
            out.extend(_lower_line(line, names))
        except QuantizedUnsupported as e:
            raise QuantizedUnsupported(f"line {number}: {e}") from None
    return "\n".join(out) + "\n"


def _lower_line(line: str, names) -> list:
    found = _OP_LINE.match(line)
    if found is None:  # (func.func signatures, returns, calls: storage types)
        return [_storage_types(line)]
    op = found.group("op").strip('"')
    if op in _STORAGE or op in ("func.return", "func.call", "stablehlo.return", "stablehlo.constant"):
        if op == "stablehlo.constant":
            raise QuantizedUnsupported("a quantized stablehlo.constant is not lowered")
        return [_storage_types(line)]
    operands, operand_types, result_type = _signature(found)
    indent, result = found.group("indent"), found.group("result")
    if op in ("stablehlo.maximum", "stablehlo.minimum") and _same_quant(operand_types + [result_type]):
        if _quant_of(result_type).axis is not None:
            raise QuantizedUnsupported(f"{op} of per-axis quantized values is not lowered")
        return [_storage_types(line)]  # (the pass's ConvertGenericOp; other parameters go through f32)
    emit = _Emitter(indent, names)
    if op == "stablehlo.uniform_quantize":
        source, target = _quant_of(operand_types[0]), _quant_of(result_type)
        if source is None:
            emit.quantize(operands[0], operand_types[0], target, _shape(result_type), result)
        else:
            emit.requantize(operands[0], source, target, _shape(result_type), target.storage, result)
        return emit.lines
    if op == "stablehlo.uniform_dequantize":
        emit.dequantize(operands[0], _quant_of(operand_types[0]), _shape(operand_types[0]), result)
        return emit.lines
    if op == "stablehlo.add" and all(_quant_of(t) for t in operand_types + [result_type]):
        emit.quantized_add(operands, [_quant_of(t) for t in operand_types], _quant_of(result_type),
                           _shape(result_type), result)
        return emit.lines
    if op in _INTEGER_KERNELS:
        raise QuantizedUnsupported(f"{op} of quantized values is not lowered (StableHLO computes it in integer "
                                   f"arithmetic with zero-point corrections)")
    if op not in _QDQ:
        raise QuantizedUnsupported(f"{op} of quantized values is not lowered")
    return _dequantize_op_quantize(found, op, operands, operand_types, result_type, emit)


def _same_quant(types) -> bool:
    quants = [_quant_of(t) for t in types]
    return quants[0] is not None and all(q == quants[0] for q in quants)


def _dequantize_op_quantize(found, op, operands, operand_types, result_type, emit) -> list:
    body, done = found.group("rest"), set()
    for name, t in zip(operands, operand_types):
        q = _quant_of(t)
        if q is not None and name not in done:
            done.add(name)
            dequantized = emit.dequantize(name, q, _shape(t))
            body = re.sub(re.escape(name) + r"(?![\w$.\-#])", dequantized, body)
    q = _quant_of(result_type)
    computed = next(emit.names) if q is not None else found.group("result")
    emit.lines.append(f"{found.group('indent')}{computed} = {found.group('op')}{_float_types(body)}")
    if q is not None:
        emit.quantize(computed, _float_types(result_type), q, _shape(result_type), found.group("result"))
    return emit.lines


def _signature(found) -> tuple:
    """(operand names, operand types, result type) of one op line."""
    rest = found.group("rest")
    split = _last_top_level(rest, " : ")
    if split < 0:
        raise QuantizedUnsupported(f"cannot read the types of {found.group('op')}")
    operands = _SSA.findall(rest[:split])
    signature = rest[split + 3:].strip()
    if signature.startswith("("):
        close = _matching(signature, 0)
        inputs = _split_top_level(signature[1:close])
        result = signature[close + 1:].strip()
        if not result.startswith("->"):
            raise QuantizedUnsupported(f"cannot read the types of {found.group('op')}")
        result = result[2:].strip()
    else:
        inputs, result = [signature] * len(operands), signature
    if len(inputs) != len(operands) or result.startswith("("):
        raise QuantizedUnsupported(f"{found.group('op')} with several results or unnamed operands is not lowered")
    return operands, inputs, result


def _last_top_level(text: str, token: str) -> int:
    depth, found = 0, -1
    for i, ch in enumerate(text):
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}" and not (ch == ">" and text[i - 1] == "-"):
            depth -= 1
        elif depth == 0 and text.startswith(token, i):
            found = i
    return found


def _matching(text: str, start: int) -> int:
    depth = 0
    for i in range(start, len(text)):
        if text[i] in "<([{":
            depth += 1
        elif text[i] in ">)]}" and not (text[i] == ">" and text[i - 1] == "-"):
            depth -= 1
            if depth == 0:
                return i
    raise QuantizedUnsupported("unbalanced brackets")


def _split_top_level(text: str) -> list:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _quant_of(t: str):
    found = _QUANT.search(t)
    return Quant(found) if found else None


def _shape(t: str) -> str:
    """The dims of a tensor type as MLIR prints them before the element type: ``20x20x``, or ``""``."""
    found = re.match(r"tensor<((?:[\d?]+x)*)", t.strip())
    if found is None:
        raise QuantizedUnsupported(f"{t} is not a ranked tensor")
    return found.group(1)


def _storage_types(text: str) -> str:
    return _TENSOR.sub(lambda m: f"tensor<{m.group('shape')}{Quant(_QUANT.search(m.group(0))).storage}>", text)


def _float_types(text: str) -> str:
    return _TENSOR.sub(lambda m: f"tensor<{m.group('shape')}f32>", text)


def _per_channel(q: Quant, channels: int) -> tuple:
    """(scales, zero points) of ``q``, one per channel (a per-tensor type's repeated)."""
    if q.axis is None:
        return [q.scale] * channels, [q.zero] * channels
    return list(q.scales), list(q.zeros)


def _f32(value: float) -> str:
    return repr(float(np.float32(value)))  # (the shortest text that parses back to this f32)


class _Emitter:
    """Lines of the lowered ops, with fresh value names."""

    def __init__(self, indent: str, names):
        self.indent, self.names, self.lines = indent, names, []

    def op(self, text: str, name: str | None = None) -> str:
        name = name or next(self.names)
        self.lines.append(f"{self.indent}{name} = {text}")
        return name

    def splat(self, value: str, element: str, shape: str) -> str:
        scalar = self.op(f"stablehlo.constant dense<{value}> : tensor<{element}>")
        if not shape:
            return scalar
        return self.op(f"stablehlo.broadcast_in_dim {scalar}, dims = [] : (tensor<{element}>) -> tensor<{shape}{element}>")

    def params(self, values, element: str, shape: str, axis) -> str:
        """``values`` (texts) as a tensor<{shape}{element}>: one value, or one per slice along ``axis``."""
        if axis is None:
            return self.splat(values[0], element, shape)
        vector = f"tensor<{len(values)}x{element}>"
        constant = self.op(f"stablehlo.constant dense<[{', '.join(values)}]> : {vector}")
        return self.op(f"stablehlo.broadcast_in_dim {constant}, dims = [{axis}] : ({vector}) -> tensor<{shape}{element}>")

    def quantize(self, x: str, x_type: str, q: Quant, shape: str, name: str) -> str:
        if not re.fullmatch(r"tensor<(?:[\d?]+x)*f32>", x_type.strip()):
            raise QuantizedUnsupported(f"uniform_quantize of {x_type}: only f32 values are lowered")
        f = f"tensor<{shape}f32>"
        scales = self.params([_f32(v) for v in q.scales], "f32", shape, q.axis)
        divided = self.op(f"stablehlo.divide {x}, {scales} : {f}")
        shifted = self.op(f"stablehlo.add {divided}, {self.params([_f32(v) for v in q.zeros], 'f32', shape, q.axis)} : {f}")
        return self._round_into(shifted, q, shape, q.storage, name, clamp=True)

    def _round_into(self, value: str, q: Quant, shape: str, storage: str, name: str, clamp: bool) -> str:
        f = f"tensor<{shape}f32>"
        if clamp:
            low = self.op(f"stablehlo.constant dense<{_f32(q.min)}> : tensor<f32>")
            high = self.op(f"stablehlo.constant dense<{_f32(q.max)}> : tensor<f32>")
            value = self.op(f"stablehlo.clamp {low}, {value}, {high} : (tensor<f32>, {f}, tensor<f32>) -> {f}")
        rounded = self.op(f"stablehlo.round_nearest_even {value} : {f}")
        return self.op(f"stablehlo.convert {rounded} : ({f}) -> tensor<{shape}{storage}>", name)

    def requantize(self, x: str, source: Quant, target: Quant, shape: str, storage: str, name=None) -> str:
        """``x`` (``source``'s storage) in ``target``'s scale and zero point, as ``storage`` (the
        pass's requantize: clamped only below 32 bits)."""
        if source == target:
            return self.op(f"stablehlo.convert {x} : (tensor<{shape}{source.storage}>) -> tensor<{shape}{storage}>",
                           name)
        if source.axis is not None and target.axis is not None and source.axis != target.axis:
            raise QuantizedUnsupported("requantizing along another axis is not lowered (the pass refuses it too)")
        f = f"tensor<{shape}f32>"
        value = self.op(f"stablehlo.convert {x} : (tensor<{shape}{source.storage}>) -> {f}")
        axis = target.axis if target.axis is not None else source.axis
        channels = max(len(source.scales), len(target.scales))
        scale_in, zero_in = _per_channel(source, channels)
        scale_out, zero_out = _per_channel(target, channels)
        merged = [a / b for a, b in zip(scale_in, scale_out)]
        shift = [zo - zi * m for zo, zi, m in zip(zero_out, zero_in, merged)]
        value = self.op(f"stablehlo.multiply {value}, {self.params([_f32(v) for v in merged], 'f32', shape, axis)} : {f}")
        if any(v != 0 for v in shift):
            value = self.op(f"stablehlo.add {value}, {self.params([_f32(v) for v in shift], 'f32', shape, axis)} : {f}")
        return self._round_into(value, target, shape, storage, name, clamp=int(storage.lstrip("ui")) < 32)

    def dequantize(self, q_value: str, q: Quant, shape: str, name: str | None = None) -> str:
        i32, f = f"tensor<{shape}i32>", f"tensor<{shape}f32>"
        wide = self.op(f"stablehlo.convert {q_value} : (tensor<{shape}{q.storage}>) -> {i32}")
        zeros = self.params([str(v) for v in q.zeros], "i32", shape, q.axis)
        centered = self.op(f"stablehlo.subtract {wide}, {zeros} : {i32}")
        values = self.op(f"stablehlo.convert {centered} : ({i32}) -> {f}")
        scales = self.params([_f32(v) for v in q.scales], "f32", shape, q.axis)
        return self.op(f"stablehlo.multiply {values}, {scales} : {f}", name)

    def quantized_add(self, operands, quants, result: Quant, shape: str, name: str) -> str:
        if any(q.axis is not None for q in quants + [result]):
            raise QuantizedUnsupported("stablehlo.add of per-axis quantized values is not lowered")
        i32 = f"tensor<{shape}i32>"
        lhs, rhs = (self.requantize(x, q, result, shape, "i32") for x, q in zip(operands, quants))
        total = self.op(f"stablehlo.add {lhs}, {rhs} : {i32}")
        value = self.op(f"stablehlo.subtract {total}, {self.splat(str(result.zero), 'i32', shape)} : {i32}")
        if result.bits == 32:
            return self.op(f"stablehlo.convert {value} : ({i32}) -> {i32}", name)
        low = self.op(f"stablehlo.constant dense<{result.min}> : tensor<i32>")
        high = self.op(f"stablehlo.constant dense<{result.max}> : tensor<i32>")
        value = self.op(f"stablehlo.clamp {low}, {value}, {high} : (tensor<i32>, {i32}, tensor<i32>) -> {i32}")
        return self.op(f"stablehlo.convert {value} : ({i32}) -> tensor<{shape}{result.storage}>", name)
