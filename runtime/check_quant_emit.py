"""The pieces check_quant.py and check_quant_dot.py share: ``!quant.uniform`` types, reading an op
line's operands and types, and ``Emitter``, which writes the integer and float ops of
stablehlo-legalize-quant-to-math's lowerings (quantize, dequantize, requantize, add) as text."""
from __future__ import annotations

import re

import numpy as np

QUANT = re.compile(r"!quant\.uniform<(?P<storage>[iu]\d+)(?:<(?P<min>-?\d+):(?P<max>-?\d+)>)?:(?P<expressed>\w+)"
                   r"(?P<axis>:\d+)?,\s*(?P<params>\{[^{}]*\}|[^<>{}]*?)>")
_TENSOR = re.compile(r"tensor<(?P<shape>(?:[\d?]+x)*)(?P<element>!quant\.uniform<[^<>]*(?:<[^<>]*>[^<>]*)?>)>")
OP_LINE = re.compile(r"^(?P<indent>\s*)(?P<result>%[\w$.\-]+) = (?P<op>\"?[\w.]+\"?)(?P<rest>.*)$")
SSA = re.compile(r"%[\w$.\-#]+")


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


def signature(found) -> tuple:
    """(operand names, operand types, result type) of one op line."""
    rest = found.group("rest")
    split = last_top_level(rest, " : ")
    if split < 0:
        raise QuantizedUnsupported(f"cannot read the types of {found.group('op')}")
    operands = SSA.findall(rest[:split])
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


def last_top_level(text: str, token: str) -> int:
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


def quant_of(t: str):
    found = QUANT.search(t)
    return Quant(found) if found else None


def shape_of(t: str) -> str:
    """The dims of a tensor type as MLIR prints them before the element type: ``20x20x``, or ``""``."""
    found = re.match(r"tensor<((?:[\d?]+x)*)", t.strip())
    if found is None:
        raise QuantizedUnsupported(f"{t} is not a ranked tensor")
    return found.group(1)


def storage_types(text: str) -> str:
    return _TENSOR.sub(lambda m: f"tensor<{m.group('shape')}{Quant(QUANT.search(m.group(0))).storage}>", text)


def float_types(text: str) -> str:
    return _TENSOR.sub(lambda m: f"tensor<{m.group('shape')}f32>", text)


def per_channel(q: Quant, channels: int) -> tuple:
    """(scales, zero points) of ``q``, one per channel (a per-tensor type's repeated)."""
    if q.axis is None:
        return [q.scale] * channels, [q.zero] * channels
    return list(q.scales), list(q.zeros)


def f32_text(value: float) -> str:
    return repr(float(np.float32(value)))  # (the shortest text that parses back to this f32)


class Emitter:
    """Lines of the lowered ops, with fresh value names."""

    def __init__(self, indent: str, names):
        self.indent, self.names, self.lines = indent, names, []

    def op(self, text: str, name: str | None = None) -> str:
        name = name or next(self.names)
        self.lines.append(f"{self.indent}{name} = {text}")
        return name

    def splat(self, value: str, element: str, shape: str) -> str:
        if "?" in shape:
            raise QuantizedUnsupported("dynamically shaped quantized values are not lowered")
        scalar = self.op(f"stablehlo.constant dense<{value}> : tensor<{element}>")
        if not shape:
            return scalar
        return self.op(f"stablehlo.broadcast_in_dim {scalar}, dims = [] : (tensor<{element}>) -> tensor<{shape}{element}>")

    def params(self, values, element: str, shape: str, axis) -> str:
        """``values`` (texts) as a tensor<{shape}{element}>: one value, or one per slice along ``axis``."""
        if axis is None or "?" in shape:
            return self.splat(values[0], element, shape)
        vector = f"tensor<{len(values)}x{element}>"
        constant = self.op(f"stablehlo.constant dense<[{', '.join(values)}]> : {vector}")
        return self.op(f"stablehlo.broadcast_in_dim {constant}, dims = [{axis}] : ({vector}) -> tensor<{shape}{element}>")

    def quantize(self, x: str, x_type: str, q: Quant, shape: str, name: str) -> str:
        if not re.fullmatch(r"tensor<(?:[\d?]+x)*f32>", x_type.strip()):
            raise QuantizedUnsupported(f"uniform_quantize of {x_type}: only f32 values are lowered")
        f = f"tensor<{shape}f32>"
        scales = self.params([f32_text(v) for v in q.scales], "f32", shape, q.axis)
        divided = self.op(f"stablehlo.divide {x}, {scales} : {f}")
        zeros = self.params([f32_text(v) for v in q.zeros], "f32", shape, q.axis)
        shifted = self.op(f"stablehlo.add {divided}, {zeros} : {f}")
        return self._round_into(shifted, q, shape, q.storage, name, clamp=True)

    def _round_into(self, value: str, q: Quant, shape: str, storage: str, name: str, clamp: bool) -> str:
        f = f"tensor<{shape}f32>"
        if clamp:
            low = self.op(f"stablehlo.constant dense<{f32_text(q.min)}> : tensor<f32>")
            high = self.op(f"stablehlo.constant dense<{f32_text(q.max)}> : tensor<f32>")
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
        scale_in, zero_in = per_channel(source, channels)
        scale_out, zero_out = per_channel(target, channels)
        merged = [a / b for a, b in zip(scale_in, scale_out)]
        shift = [zo - zi * m for zo, zi, m in zip(zero_out, zero_in, merged)]
        merged_scales = self.params([f32_text(v) for v in merged], "f32", shape, axis)
        value = self.op(f"stablehlo.multiply {value}, {merged_scales} : {f}")
        if any(v != 0 for v in shift):
            value = self.op(f"stablehlo.add {value}, {self.params([f32_text(v) for v in shift], 'f32', shape, axis)} : {f}")
        return self._round_into(value, target, shape, storage, name, clamp=int(storage.lstrip("ui")) < 32)

    def dequantize(self, q_value: str, q: Quant, shape: str, name: str | None = None) -> str:
        i32, f = f"tensor<{shape}i32>", f"tensor<{shape}f32>"
        wide = self.op(f"stablehlo.convert {q_value} : (tensor<{shape}{q.storage}>) -> {i32}")
        zeros = self.params([str(v) for v in q.zeros], "i32", shape, q.axis)
        centered = self.op(f"stablehlo.subtract {wide}, {zeros} : {i32}")
        values = self.op(f"stablehlo.convert {centered} : ({i32}) -> {f}")
        scales = self.params([f32_text(v) for v in q.scales], "f32", shape, q.axis)
        return self.op(f"stablehlo.multiply {values}, {scales} : {f}", name)

    def quantized_add(self, operands, quants, result: Quant, shape: str, name: str) -> str:
        """``add`` of three per-tensor types: both operands requantized to the result's in i32,
        summed, less its zero point, clamped below 32 bits."""
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

    def per_axis_add(self, operands, q: Quant, shape: str, name: str) -> str:
        """``add`` of three equal per-axis types stored in i32: the sum less the zero points (the
        pass's only per-axis add)."""
        i32 = f"tensor<{shape}i32>"
        total = self.op(f"stablehlo.add {operands[0]}, {operands[1]} : {i32}",
                        None if any(q.zeros) else name)
        if not any(q.zeros):
            return total
        return self.op(f"stablehlo.subtract {total}, {self.params([str(v) for v in q.zeros], 'i32', shape, q.axis)} "
                       f": {i32}", name)
