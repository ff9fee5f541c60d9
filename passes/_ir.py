"""Small IR helpers shared by the pattern families: attributes, producers, constants, building.

Patterns run inside MLIR's greedy driver with the module's context active and the
rewriter's insertion point entered, so the builders here take no context argument.
"""
from __future__ import annotations

import contextlib
import math
import threading

import ml_dtypes
import numpy as np

from hloforge.frontend.context import dense_elements, i64_array, ir, shape_dtype_of

_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
NO_MATCH = True  # a pattern callback returns a truthy value when it did not rewrite
MAX_FOLD = 1024  # largest non-splat result a folding pattern materializes

_options = threading.local()


def finite_math() -> bool:
    """Whether the running pipeline may assume finite values (``optimize(finite_math=...)``)."""
    return getattr(_options, "finite_math", True)


@contextlib.contextmanager
def assume_finite(value: bool):
    saved, _options.finite_math = finite_math(), bool(value)
    try:
        yield
    finally:
        _options.finite_math = saved


class Unsupported(Exception):
    """Raised inside a pattern for IR it does not handle (dynamic shapes, unranked tensors,
    element types numpy lacks); the registry turns it into "no match"."""


def ints(op, name: str) -> list:
    """A DenseI64ArrayAttr attribute of ``op`` as a list of Python ints."""
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def producer(value: ir.Value, name: str | None = None):
    """The op defining ``value`` (None for block arguments, or when its name is not ``name``)."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    if name is not None and owner.name != name:
        return None
    return owner


def _ranked(t: ir.Type) -> ir.RankedTensorType:
    try:
        t = ir.RankedTensorType(t)
    except ValueError:
        raise Unsupported(f"{t} is not a ranked tensor") from None
    if not t.has_static_shape:
        raise Unsupported(f"{t} has a dynamic shape")
    return t


def shape_of(value) -> tuple:
    """The static shape of a Value (or of a type); Unsupported for dynamic shapes."""
    return tuple(_ranked(getattr(value, "type", value)).shape)


def dtype_of(value) -> np.dtype:
    """The numpy dtype of a Value's (or a type's) elements; Unsupported if numpy has none."""
    try:
        return shape_dtype_of(_ranked(getattr(value, "type", value)))[1]
    except TypeError:
        raise Unsupported(f"element type of {value}") from None


def element_type(value: ir.Value) -> ir.Type:
    return _ranked(value.type).element_type


def tensor(shape, element: ir.Type) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), element)


def has_one_use(value: ir.Value) -> bool:
    uses = iter(value.uses)
    return next(uses, None) is not None and next(uses, None) is None


def emit(name: str, operands, result_type: ir.Type, attributes=None, loc=None) -> ir.Value:
    """Create one single-result op at the rewriter's insertion point; returns its result."""
    op = ir.Operation.create(name, results=[result_type], operands=list(operands),
                             attributes=attributes, loc=loc)
    return op.result


def constant(array, result_type: ir.Type, loc) -> ir.Value:
    """A ``stablehlo.constant`` of ``result_type`` holding ``array`` (cast to its dtype; a 0-d
    array, or one whose elements all have the same bits, becomes a splat)."""
    shape, dtype = shape_dtype_of(result_type)
    flat = np.ascontiguousarray(np.asarray(array).astype(dtype, copy=False)).reshape(-1)
    if flat.size > 1 and _same_bits(flat):
        flat = flat[:1]
    attr = dense_elements(flat if flat.size == 1 else flat.reshape(shape), shape=shape)
    return emit("stablehlo.constant", [], result_type, {"value": attr}, loc)


def _same_bits(flat: np.ndarray) -> bool:
    raw = flat.view(np.uint8).reshape(flat.size, -1)
    return bool((raw == raw[0]).all())


def broadcast_scalar(scalar: ir.Value, result_type: ir.Type, loc) -> ir.Value:
    """``stablehlo.broadcast_in_dim`` of a 0-d value to ``result_type``."""
    return emit("stablehlo.broadcast_in_dim", [scalar], result_type,
                {"broadcast_dimensions": i64_array([])}, loc)


# ---------------------------------------------------------------- reading constants

def splat_value(value: ir.Value):
    """The single value (a 0-d numpy array) of a splat or one-element constant, else None."""
    c = _constant_of(value, splat_only=True)
    return None if c is None else c[0]


def constant_value(value: ir.Value, limit: int = MAX_FOLD):
    """The numpy value of a ``stablehlo.constant`` result (splats of any size; others up to
    ``limit`` elements), else None. Splats come back as read-only broadcast views."""
    c = _constant_of(value, splat_only=False, limit=limit)
    if c is None:
        return None
    array, splat, shape = c
    return np.broadcast_to(array, shape) if splat else array


def _constant_of(value: ir.Value, splat_only: bool, limit: int = MAX_FOLD):
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "stablehlo.constant":
        return None
    shape, dtype = shape_of(value), dtype_of(value)
    size = math.prod(shape)
    if dtype.kind == "c" or dtype == _BFLOAT16:
        return _parse_constant(owner, shape, dtype, size, splat_only, limit)
    attr = owner.attributes["value"]
    if not isinstance(attr, ir.DenseElementsAttr):
        return None
    if attr.is_splat or size == 1:
        if size == 0:
            return None
        if attr.is_splat:
            return _scalar(attr.get_splat_value().value, dtype), True, shape
        return np.asarray(np.array(attr), dtype).reshape(()), True, shape
    if splat_only or size > limit:
        return None
    return np.array(attr).astype(dtype, copy=False).reshape(shape), False, shape


def _scalar(v, dtype) -> np.ndarray:
    if dtype.kind in "iu":
        bits = dtype.itemsize * 8
        v = int(v) % (1 << bits)
        if dtype.kind == "i" and v >= 1 << (bits - 1):
            v -= 1 << bits
    return np.asarray(v, dtype=dtype)


def _parse_constant(op, shape, dtype, size, splat_only, limit):
    """Complex and bfloat16 DenseElementsAttrs cannot be read through the Python API: parse the text."""
    if size == 0:
        return None
    detached = op.operation.clone(ip=False)  # printing an op in place numbers its whole function
    text = detached.get_asm(large_elements_limit=1 if splat_only else max(limit, 1))  # (never elides splats)
    detached.erase()
    start = text.find("dense<")
    if start < 0:
        return None
    body = text[start + 6:text.index(">", start)]
    part = {"complex64": np.dtype(np.float32), "complex128": np.dtype(np.float64)}.get(dtype.name, dtype)
    if body.startswith('"0x'):
        raw = bytes.fromhex(body[3:-1])
        flat = np.frombuffer(raw, dtype=dtype)
    else:
        tokens = body.replace("[", "").replace("]", "").replace("(", "").replace(")", "").split(",")
        flat = np.array([_token(t.strip(), part) for t in tokens], dtype=part)
        if dtype.kind == "c":
            flat = _pairs(flat, dtype)
    if flat.size == 1:
        return flat.reshape(()).copy(), True, shape
    if splat_only or size > limit or flat.size != size:
        return None
    return flat.reshape(shape).copy(), False, shape


def _pairs(flat: np.ndarray, dtype) -> np.ndarray:
    out = np.empty(flat.size // 2, dtype)
    out.real, out.imag = flat[0::2], flat[1::2]
    return out


_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _token(token: str, part: np.dtype):
    if token.startswith("0x"):  # a bit pattern (NaN, Inf, or a value decimal would not round-trip)
        return np.array(int(token, 16), _UINT[part.itemsize]).view(part)
    return np.asarray(float(token)).astype(part)


# ---------------------------------------------------------------- helpers of the newer families

def cost_model():
    """The CostModel of the running pipeline (``optimize(cost_model=...)``), or None outside one."""
    return getattr(_options, "cost_model", None)


@contextlib.contextmanager
def using_cost_model(model):
    saved, _options.cost_model = cost_model(), model
    try:
        yield
    finally:
        _options.cost_model = saved


def is_zero(value: ir.Value) -> bool:
    """A splat constant 0 (of any type, -0.0 included), or a broadcast_in_dim of one."""
    b = producer(value, "stablehlo.broadcast_in_dim")
    if b is not None:
        value = b.operands[0]
    c = splat_value(value)
    return c is not None and bool(c == 0)


def dot_general(lhs, rhs, lhs_contracting, rhs_contracting, result_type, loc, precision="HIGHEST"):
    """``stablehlo.dot_general`` without batching dims: lhs's free dims, then rhs's."""
    dims = ir.Attribute.parse(f"#stablehlo.dot<lhs_contracting_dimensions = {list(lhs_contracting)}, "
                      f"rhs_contracting_dimensions = {list(rhs_contracting)}>")
    attrs = {"dot_dimension_numbers": dims}
    if precision is not None:
        p = f"#stablehlo<precision {precision}>"
        attrs["precision_config"] = ir.Attribute.parse(f"[{p}, {p}]")
    return emit("stablehlo.dot_general", [lhs, rhs], result_type, attrs, loc)
