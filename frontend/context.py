"""The one adapter between hloforge and jaxlib's MLIR Python bindings.

Everything that depends on the exact jaxlib version (module paths, dialect
registration, the rewrite API, the func-call inliner) lives here, so that a
jaxlib upgrade touches this file and ``runtime/pjrt.py`` only.
"""
from __future__ import annotations

import functools
import io
import math
import threading

import ml_dtypes
import numpy as np

# (jaxlib's runtime before its MLIR bindings: the other order makes XLA print INFO lines on stderr)
import jax  # noqa: F401
from jaxlib.mlir import ir
from jaxlib.mlir import passmanager
from jaxlib.mlir.dialects import chlo, func, sdy, stablehlo
from jaxlib.mlir._mlir_libs import _jax_mlir_ext
from jax._src.lib import _jax  # (jaxlib's refine_polymorphic_shapes, the refinement jax runs)
from jaxlib.mlir._mlir_libs._mlir import rewrite

__all__ = [
    "ir", "func", "stablehlo", "chlo", "rewrite", "passmanager",
    "make_context", "inline_call", "dense_elements", "i64_array", "parse_attr",
    "tensor_type", "element_type", "diagnostics", "refine_shapes", "token_type", "tuple_type",
    "is_token_type", "tuple_element_types", "check_tensor_size", "tensor_size_error",
]

_registry_lock = threading.Lock()
_registry: ir.DialectRegistry | None = None


def _dialect_registry() -> ir.DialectRegistry:
    global _registry
    with _registry_lock:
        if _registry is None:
            _registry = ir.DialectRegistry()
            # Registers func, stablehlo, chlo, mhlo, sdy, arith, ... and their
            # interfaces, the same set jax uses for its lowerings.
            _jax_mlir_ext.register_dialects(_registry)
        return _registry


def make_context() -> ir.Context:
    """A fresh MLIR context that knows builtin, func, stablehlo, chlo and sdy (mhlo's attributes
    are plain discardable attributes). The other dialects of jax's registry (arith, shape, ...)
    load on demand when a parsed module uses them: loading all of them up front cost 2 ms a trace."""
    ctx = ir.Context()
    ctx.append_dialect_registry(_dialect_registry())
    stablehlo.register_dialect(ctx)
    chlo.register_dialect(ctx)
    sdy.register_dialect(ctx)  # (Shardy: sdy.mesh and #sdy.sharding annotations)
    ctx.dialects["func"]  # loads it
    return ctx


def inline_call(callee, args) -> list:
    """Clone the single-block ``callee`` (a func.FuncOp or its Operation) at the current insertion
    point and location; returns its results."""
    return list(_jax_mlir_ext.inlined_func_call(getattr(callee, "operation", callee), list(args)))


def diagnostics(error) -> str:
    """The messages of an ``ir.MLIRError`` with their locations, on one line."""
    diags = getattr(error, "error_diagnostics", None)
    if diags:
        return "; ".join(f"{d.location}: {d.message}" for d in diags)
    return str(error)


# ---- types and attributes (need an active context) ----

_ELEMENT_NAMES = {
    "bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "ui8", "uint16": "ui16", "uint32": "ui32", "uint64": "ui64",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "complex64": "complex<f32>", "complex128": "complex<f64>",
}


def _signless(bits):
    return lambda: ir.IntegerType.get_signless(bits)


def _unsigned(bits):
    return lambda: ir.IntegerType.get_unsigned(bits)


# (the typed getters cost a tenth of parsing the name)
_ELEMENT_GETTERS = {
    "bool": _signless(1), "int8": _signless(8), "int16": _signless(16), "int32": _signless(32),
    "int64": _signless(64), "uint8": _unsigned(8), "uint16": _unsigned(16), "uint32": _unsigned(32),
    "uint64": _unsigned(64), "float16": lambda: ir.F16Type.get(), "bfloat16": lambda: ir.BF16Type.get(),
    "float32": lambda: ir.F32Type.get(), "float64": lambda: ir.F64Type.get(),
    "complex64": lambda: ir.ComplexType.get(ir.F32Type.get()),
    "complex128": lambda: ir.ComplexType.get(ir.F64Type.get()),
}


_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
# keyed by dtype: numpy computes ``dtype.name`` in Python, a microsecond a call
_GETTER_OF_DTYPE = {(_BFLOAT16 if name == "bfloat16" else np.dtype(name)): getter
                    for name, getter in _ELEMENT_GETTERS.items()}


def element_type(dtype: np.dtype) -> ir.Type:
    getter = _GETTER_OF_DTYPE.get(dtype)
    return getter() if getter is not None else _ELEMENT_GETTERS[np.dtype(dtype).name]()


# The largest tensor XLA takes: it counts a shape's elements and bytes in int64 and aborts the process
# beyond (``overflow in static extent product``; measured on XLA:CPU in jaxlib 0.10.2, where one more
# element of a 1-byte type past 2**62 aborts with ``std::bad_alloc``).
MAX_ELEMENTS = 2**62
MAX_BYTES = 2**63 - 1


def tensor_size_error(shape, itemsize: int) -> str | None:
    """Why XLA cannot take a static ``shape`` of ``itemsize``-byte elements (its element or byte count
    is beyond what it counts in int64: ``MAX_ELEMENTS``, ``MAX_BYTES``), or None. Dynamic dimensions
    (None or negative) count as 1, and a shape with a zero dimension is empty whatever its other
    dimensions (XLA takes those)."""
    count = 1
    for d in shape:
        if d is not None and d > 1:
            count *= d
        elif d == 0:
            return None
    if count <= MAX_ELEMENTS // 16:  # (every element type is at most 16 bytes)
        return None
    size = count * itemsize
    if count <= MAX_ELEMENTS and size <= MAX_BYTES:
        return None
    return (f"has {count} elements ({size} bytes); XLA counts both in int64 and takes at most 2**62 "
            f"elements and 2**63 - 1 bytes")


def check_tensor_size(shape, dtype) -> None:
    """ValueError for a shape XLA cannot take (``tensor_size_error``), before MLIR or XLA sees it."""
    dtype = np.dtype(dtype)
    error = tensor_size_error(shape, dtype.itemsize)
    if error:
        raise ValueError(f"hloforge: a tensor of shape {tuple(shape)} and dtype {dtype.name} {error}")


def tensor_type(shape, dtype) -> ir.RankedTensorType:
    """``tensor<shape x dtype>``; ValueError for shapes beyond XLA's int64 counts (``check_tensor_size``)."""
    check_tensor_size(shape, dtype)
    return ir.RankedTensorType.get(list(shape), element_type(dtype))


def token_type() -> ir.Type:
    """``!stablehlo.token``."""
    return stablehlo.TokenType.get()


def tuple_type(element_types) -> ir.Type:
    """``tuple<...>`` of ``element_types`` (ir.Types)."""
    return ir.TupleType.get_tuple(list(element_types))


def is_token_type(t: ir.Type) -> bool:
    return stablehlo.TokenType.isinstance(t)


def tuple_element_types(t: ir.Type):
    """The element types of a ``tuple<...>`` type, None for any other type."""
    if t.typeid != ir.TupleType.static_typeid:  # (asking is cheaper than the cast's ValueError)
        return None
    tt = ir.TupleType(t)
    return [tt.get_type(i) for i in range(tt.num_types)]


def dense_elements(array: np.ndarray, shape=None) -> ir.DenseElementsAttr:
    """A DenseElementsAttr holding ``array`` (or a splat of its single element over ``shape``)."""
    array = np.asarray(array, order="C")  # (ascontiguousarray would make 0-d arrays 1-d)
    shape = array.shape if shape is None else tuple(shape)
    if array.size == math.prod(shape):
        array = array.reshape(shape)  # (an empty shape list would mean "the array's own shape")
    etype = element_type(array.dtype)
    if array.dtype == _BFLOAT16:
        array = array.view(np.uint16)
    return ir.DenseElementsAttr.get(array, type=etype, shape=list(shape) or None)


def i64_array(values) -> ir.DenseI64ArrayAttr:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def parse_attr(text: str) -> ir.Attribute:
    return ir.Attribute.parse(text)


_DTYPE_OF_ELEMENT = {v: k for k, v in _ELEMENT_NAMES.items()}


def shape_dtype_of(t: ir.Type):
    """(shape, numpy dtype) of a ranked tensor type, None for each dynamic dimension (``?``);
    raises TypeError for anything else."""
    try:
        rt = ir.RankedTensorType(t)
    except ValueError:
        raise TypeError(f"unsupported type {t}: only ranked tensors are supported") from None
    name = _DTYPE_OF_ELEMENT.get(str(rt.element_type))
    if name is None:
        raise TypeError(f"unsupported element type {rt.element_type} (in {t})")
    dynamic = _dynamic_size()
    shape = tuple(None if d == dynamic else d for d in rt.shape)
    return shape, _NUMPY_DTYPE[name]


_NUMPY_DTYPE = {name: np.dtype(name) if name != "bfloat16" else np.dtype(ml_dtypes.bfloat16)
                for name in _DTYPE_OF_ELEMENT.values()}


@functools.lru_cache(maxsize=1)
def _dynamic_size() -> int:
    return ir.ShapedType.get_dynamic_size()


# ---- shape refinement (StableHLO's passes, which resolve dynamic dimensions from static ones) ----

_passes_registered = []


def _register_stablehlo_passes() -> None:
    with _registry_lock:
        if not _passes_registered:
            stablehlo.register_stablehlo_passes()
            _passes_registered.append(True)


def _run_passes(module: ir.Module, passes: list) -> None:
    with module.context:
        pm = passmanager.PassManager.parse(f"builtin.module({','.join(passes)})")
        try:
            pm.run(module.operation)
        except ir.MLIRError as e:
            diags = "; ".join(str(d.message) for d in getattr(e, "error_diagnostics", [])) or str(e)
            raise ValueError(f"shape refinement failed: {diags}") from None


def refine_shapes(module: ir.Module, arg_types=None) -> None:
    """Refine ``module``'s dynamic shapes in place: with ``arg_types`` (one static tensor type per
    argument of ``@main``) first give ``@main`` those argument types (stablehlo-refine-arguments),
    then propagate static shapes through every op and result (stablehlo-refine-shapes). Raises
    ValueError with MLIR's diagnostics when the argument types do not fit the module.

    MLIR's ``cse`` runs first: the refinement of a ``real_dynamic_slice`` whose limits are its starts
    plus a constant (a static size: jax's ``dynamic_slice`` of a polymorphic shape) reads the starts
    as one SSA value, and jax computes them twice."""
    _register_stablehlo_passes()
    passes = ["cse", "stablehlo-refine-shapes"]
    if arg_types is not None:
        types = ",".join(str(t) for t in arg_types)
        passes.insert(0, f"stablehlo-refine-arguments{{types={types}}}")
    _run_passes(module, passes)


def static_ops(module: ir.Module) -> None:
    """Turn dynamic ops whose shape operands are constants (after refinement) into their static
    forms in place (stablehlo-canonicalize-dynamism: dynamic_broadcast_in_dim -> broadcast_in_dim,
    dynamic_reshape -> reshape, ...)."""
    _register_stablehlo_passes()
    _run_passes(module, ["func.func(stablehlo-canonicalize-dynamism)"])


def has_uses(value: ir.Value) -> bool:
    """Whether any op reads ``value``."""
    return next(iter(value.uses), None) is not None


def clone_module(module: ir.Module) -> ir.Module:
    """A copy of ``module`` in its context, op by op (its attributes and every op's location kept): the
    same as printing and parsing it, at a hundredth of the time (0.07 ms against 7 ms for an FNO-2D)."""
    with module.context:
        copy = ir.Module.create(loc=module.operation.location)
        attributes = module.operation.attributes
        for i in range(len(attributes)):
            copy.operation.attributes[attributes[i].name] = attributes[i].attr
        where = ir.InsertionPoint(copy.body)
        for op in module.body.operations:
            op.operation.clone(ip=where)
    return copy


def refine_polymorphic(module: ir.Module, arg_types=None) -> ir.Module:
    """A refined copy of a jax.export module by jaxlib's own refinement (the one jax runs before
    compiling an exported module): it inlines calls first, so a function that jax calls with
    different dimension arguments refines, and it checks jax's shape assertions (ValueError with
    jax's message) and removes them. ``arg_types`` as in ``refine_shapes``."""
    _register_stablehlo_passes()
    copy = clone_module(module)
    if arg_types is not None:
        _run_passes(copy, [f"stablehlo-refine-arguments{{types={','.join(str(t) for t in arg_types)}}}"])
    try:
        refined = _jax.mlir.refine_polymorphic_shapes(write_bytecode(copy), enable_shape_assertions=True,
                                                      validate_static_shapes=False, enable_shardy=False)
    except Exception as e:  # (jaxlib raises its runtime error type with the diagnostics inside)
        message = str(e).split("error: ", 1)[-1].split("\n", 1)[0]
        assertion = 'loc("shape_assertion"): '
        if message.startswith(assertion):
            raise ValueError(f"the argument shapes fail a jax.export shape assertion: "
                             f"{message[len(assertion):]}") from None
        raise ValueError(f"shape refinement failed: {message}") from None
    with module.context:
        return ir.Module.parse(refined, context=module.context)


# ---- portable artifacts (versioned StableHLO, VHLO inside bytecode) ----

_COMPAT = {"week4": "WEEK_4", "week12": "WEEK_12"}


def portable_target(target: str) -> str:
    """"current", "week4", "week12" or a version "1.x.y" -> a concrete StableHLO version string."""
    if target == "current":
        return stablehlo.get_current_version()
    if target in _COMPAT:
        req = getattr(stablehlo.StablehloCompatibilityRequirement, _COMPAT[target])
        return stablehlo.get_version_from_compatibility_requirement(req)
    parts = target.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise ValueError(f"portable target {target!r} must be 'current', 'week4', 'week12' or a version "
                         f"like '1.0.0' (supported {stablehlo.get_minimum_version()} to "
                         f"{stablehlo.get_current_version()})")
    return target


def serialize_portable(module: ir.Module, target: str) -> bytes:
    """A StableHLO portable artifact of (a copy of) ``module`` for ``target``, as jax.export writes one:
    jaxlib's serializer turns CHLO ops into ``stablehlo.composite`` ops with their decompositions (VHLO
    has no CHLO; stablehlo's own serializer refuses them: "failed to legalize unresolved materialization")."""
    bytecode = module.operation.get_asm(enable_debug_info=True, binary=True)
    return _jax.mlir.serialize_portable_artifact(bytecode, portable_target(target), False)


def deserialize_portable(ctx: ir.Context, data: bytes) -> ir.Module:
    return stablehlo.deserialize_portable_artifact(ctx, data)


def write_bytecode(module: ir.Module) -> bytes:
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    return buffer.getvalue()
