"""Uniform quantized programs as integer and float math, before MLIR parses them.

jaxlib 0.10.2's MLIR has no quant dialect, so ``!quant.uniform`` types do not parse. StableHLO's
interpreter runs quantized programs by lowering them first (``stablehlo-legalize-quant-to-math``);
``lower_quantized`` does that lowering on the text, op for op as that pass does, for per-tensor
and per-axis types with f32 expressed types:

- ``uniform_quantize`` of f32: ``round_nearest_even(clamp(min, x / scale + zp, max))`` converted to
  the storage type; of a quantized value (requantize): ``x * (s1 / s2) + (z2 - z1 * s1 / s2)`` in
  f32, clamped below 32 bits, rounded, converted;
- ``uniform_dequantize``: ``(convert(q, i32) - zp) * scale`` in f32;
- ``add`` of three per-tensor quantized types: both operands requantized to the result's type in
  i32, summed, less the zero point, clamped below 32 bits; of three equal per-axis types stored in
  i32: the i32 sum less the zero points along the axis;
- ``dot_general``, ``dot`` and ``convolution``: the pass's integer kernel with zero-point
  corrections, or its hybrid form (float by quantized: the weights dequantized, a float op), in
  ``check_quant_dot.py``;
- the ops the pass dequantizes, computes in f32 and quantizes again (its fallback: abs, cbrt, ceil,
  cosine, divide, exponential, floor, log, multiply, negate, sign, sine, sqrt, subtract, tanh, ...;
  add, maximum, minimum, dot_general, dot and convolution where its own patterns decline);
- data movement (gather, reshape, transpose, concatenate, slice, ...) and maximum/minimum of one
  type: the same op on the storage type.

Anything else that meets a quantized type (quantized constants, expressed types other than f32,
what the pass itself refuses) raises ``QuantizedUnsupported`` with one line.
"""
from __future__ import annotations

import itertools
import re

from hloforge.runtime.check_quant_dot import DOT_LIKE, lower_dot_like
from hloforge.runtime.check_quant_emit import (OP_LINE, Emitter, Quant, QuantizedUnsupported, float_types, quant_of,
                                               shape_of, signature, storage_types)

__all__ = ["Quant", "QuantizedUnsupported", "lower_quantized"]

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
# lines that start a statement without naming a result; ``%0:2 = `` names several
_STATEMENTS = ("return", "func.return", "stablehlo.return", '"stablehlo.return"', "^", "module", "//")
_MULTIPLE_RESULTS = re.compile(r"^\s*%[\w$.\-]+:\d+ = ")


def lower_quantized(text: str) -> str:
    """``text`` with its quantized types and ops lowered to integer and float math (itself when it
    has none); QuantizedUnsupported for what is not lowered."""
    if "!quant." not in text:
        return text
    names = (f"%hfq{n}" for n in itertools.count())
    out, statement = [], None
    for number, line in enumerate(text.splitlines(), 1):
        statement = _statement_of(line) or statement
        if "!quant." not in line:
            out.append(line)
            continue
        try:
            if _statement_of(line) is None and statement != "func":  # (an op's types on a line of their own)
                raise QuantizedUnsupported("a quantized op written over several lines is not lowered")
            out.extend(_lower_line(line, names))
        except QuantizedUnsupported as e:
            raise QuantizedUnsupported(f"line {number}: {e}") from None
    return "\n".join(out) + "\n"


def _statement_of(line: str):
    """"func" for a line that starts a function, "other" for one that starts another statement
    (an op, a return, a block), None for the continuation of a statement."""
    stripped = line.strip()
    if stripped.startswith("func.func"):
        return "func"
    if OP_LINE.match(line) or _MULTIPLE_RESULTS.match(line) or stripped.startswith(_STATEMENTS) or not stripped:
        return "other"
    return None


def _lower_line(line: str, names) -> list:
    found = OP_LINE.match(line)
    if _MULTIPLE_RESULTS.match(line):
        raise QuantizedUnsupported("a quantized op with several results is not lowered")
    if found is None:  # (func.func signatures, returns, block arguments: storage types)
        return [storage_types(line)]
    op = found.group("op").strip('"')
    if op in _STORAGE or op in ("func.return", "func.call", "stablehlo.return", "stablehlo.constant"):
        if op == "stablehlo.constant":
            raise QuantizedUnsupported("a quantized stablehlo.constant is not lowered")
        return [storage_types(line)]
    operands, operand_types, result_type = signature(found)
    indent, result = found.group("indent"), found.group("result")
    quants = [quant_of(t) for t in operand_types + [result_type]]
    if op in ("stablehlo.maximum", "stablehlo.minimum") and quants[0] is not None and len(set(quants)) == 1:
        # (the pass's ConvertGenericOp; exact, as dequantizing is increasing, slice by slice; other
        # parameters go through f32)
        return [storage_types(line)]
    emit = Emitter(indent, names)
    if op == "stablehlo.uniform_quantize":
        source, target = quants
        if source is None:
            emit.quantize(operands[0], operand_types[0], target, shape_of(result_type), result)
        else:
            emit.requantize(operands[0], source, target, shape_of(result_type), target.storage, result)
        return emit.lines
    if op == "stablehlo.uniform_dequantize":
        emit.dequantize(operands[0], quants[0], shape_of(operand_types[0]), result)
        return emit.lines
    if op == "stablehlo.add" and all(quants):
        if all(q.axis is None for q in quants):
            emit.quantized_add(operands, quants[:2], quants[2], shape_of(result_type), result)
            return emit.lines
        if len(set(quants)) == 1 and quants[0].storage == "i32":
            emit.per_axis_add(operands, quants[0], shape_of(result_type), result)
            return emit.lines
        # (other per-axis adds: the pass's fallback below)
    if op in DOT_LIKE:
        lines = lower_dot_like(found, op, operands, operand_types, result_type, emit)
        if lines is not None:
            return lines
    elif op not in _QDQ:
        raise QuantizedUnsupported(f"{op} of quantized values is not lowered")
    return _dequantize_op_quantize(found, operands, operand_types, result_type, emit)


def _dequantize_op_quantize(found, operands, operand_types, result_type, emit) -> list:
    body, done = found.group("rest"), set()
    for name, t in zip(operands, operand_types):
        q = quant_of(t)
        if q is not None and name not in done:
            done.add(name)
            dequantized = emit.dequantize(name, q, shape_of(t))
            body = re.sub(re.escape(name) + r"(?![\w$.\-#])", dequantized, body)
    q = quant_of(result_type)
    computed = next(emit.names) if q is not None else found.group("result")
    emit.lines.append(f"{found.group('indent')}{computed} = {found.group('op')}{float_types(body)}")
    if q is not None:
        emit.quantize(computed, float_types(result_type), q, shape_of(result_type), found.group("result"))
    return emit.lines
