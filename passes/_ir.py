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

import hloforge.frontend.ops  # noqa: F401  (registers every op)
from hloforge.frontend.attributes import constant_array, constant_text, dense, parse_constant
from hloforge.frontend.context import ir, shape_dtype_of, tensor_type
from hloforge.frontend.registry import OPS, Spec, lookup

NO_MATCH = True  # a pattern callback returns a truthy value when it did not rewrite
MAX_FOLD = 1024  # largest non-splat result a folding pattern materializes

_options = threading.local()
_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)


def needs_operand(*names: str):
    """Decorator: the pattern matches only ops with an operand produced by one of ``names``.

    The pipeline reads the operands' producers once per visit and skips the patterns whose
    requirement fails, so the many elementwise ops that meet neither a constant nor a pad cost
    one look at their operands instead of one per pattern.
    """
    def mark(fn):
        fn.operand_producers = frozenset(names)
        return fn
    return mark


def finite_math() -> bool:
    """Whether the running pipeline may assume finite values (``optimize(finite_math=...)``)."""
    return getattr(_options, "finite_math", True)


@contextlib.contextmanager
def _scoped(name: str, value, default):
    """Set the running pipeline's option ``name`` to ``value`` for the ``with`` block."""
    saved = getattr(_options, name, default)
    setattr(_options, name, value)
    try:
        yield
    finally:
        setattr(_options, name, saved)


def assume_finite(value: bool):
    return _scoped("finite_math", bool(value), True)


class Unsupported(Exception):
    """Raised inside a pattern for IR it does not handle (dynamic shapes, unranked tensors,
    element types numpy lacks); the registry turns it into "no match"."""


def ints(op, name: str) -> list:
    """The integer-tuple parameter ``name`` of ``op`` (its builder's keyword, from ``params_of``) as a list."""
    return list(params_of(op)[name])


def slice_params(op) -> tuple:
    """(start, limit, strides) of the slice ``op``, each a list."""
    p = params_of(op)
    return list(p["start_indices"]), list(p["limit_indices"]), list(p["strides"])


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


@contextlib.contextmanager
def run_cache():
    """Remember each type's shape and dtype, and each readable constant's value, for the duration
    (a pipeline run: types and attributes live as long as their context, so the caches cannot go
    stale; patterns ask for them thousands of times)."""
    keys = ("types", "built", "constants", "visit")
    saved = [getattr(_options, k, None) for k in keys]
    for k in keys:
        setattr(_options, k, {})
    try:
        yield
    finally:
        for k, v in zip(keys, saved):
            setattr(_options, k, v)


def begin_visit() -> None:
    """A pattern callback starts: forget the constants the last one read by value (values are
    compared by address, which a later op may reuse once the rewriter has erased one)."""
    memo = getattr(_options, "visit", None)
    if memo:
        memo.clear()


def _info(t: ir.Type) -> tuple:
    """(static shape, numpy dtype or None) of a ranked tensor type; Unsupported otherwise."""
    cache = getattr(_options, "types", None)
    info = cache.get(t) if cache is not None else None
    if info is None:
        rt = _ranked(t)
        try:
            dtype = shape_dtype_of(rt)[1]
        except TypeError:
            dtype = None
        info = (tuple(rt.shape), dtype)
        if cache is not None:
            cache[t] = info
    return info


def shape_of(value) -> tuple:
    """The static shape of a Value (or of a type); Unsupported for dynamic shapes."""
    return _info(getattr(value, "type", value))[0]


def dtype_of(value) -> np.dtype:
    """The numpy dtype of a Value's (or a type's) elements; Unsupported if numpy has none."""
    dtype = _info(getattr(value, "type", value))[1]
    if dtype is None:
        raise Unsupported(f"element type of {value}")
    return dtype


def element_type(value: ir.Value) -> ir.Type:
    return _ranked(value.type).element_type


def tensor(shape, element: ir.Type) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), element)


def has_one_use(value: ir.Value) -> bool:
    uses = iter(value.uses)
    return next(uses, None) is not None and next(uses, None) is None


def build(name: str, operands, *, loc, **params):
    """Create op ``name`` (one without regions) over ``operands`` (Values) at the rewriter's insertion
    point, through its registry entry: ``params`` are its builder's keyword arguments (normalized and validated by the
    entry), its rule computes the result types and the entry encodes the attributes. Returns the
    result Value (a list for several results). A rule that refuses the operands raises its own
    TypeError/ValueError here, in the pattern, rather than at verification after the pass.

    Example:
      >>> with rewriter.ip:
      ...     y = build("stablehlo.slice", [x], start_indices=(0,), limit_indices=(4,), strides=(1,), loc=op.location)
    """
    info = OPS[name]
    params = info.params(**params)
    results = info.abstract(*[Spec(shape_of(v), dtype_of(v)) for v in operands], **params)
    op = _create(name, operands, [_type_of(r) for r in results], info.attributes(**params), loc)
    return op.result if len(results) == 1 and "variadic" not in info.traits else list(op.results)


def rebuild(op, operands, *, loc=None, **changes):
    """A copy of ``op`` over ``operands`` (its params, with ``changes``), through ``build``."""
    return build(op.name, operands, loc=op.location if loc is None else loc, **{**params_of(op), **changes})


def params_of(op) -> dict:
    """The canonical builder parameters of ``op`` (its registry entry's decode, normalized), read
    once per pattern callback (patterns ask about one producer several times)."""
    memo = getattr(_options, "visit", None)
    key = ("params", op)
    found = memo.get(key) if memo is not None else None
    if found is None:
        info = OPS[op.name]
        found = info.params(**info.decode(op))
        if memo is not None:
            memo[key] = found
    return found


def _type_of(spec) -> ir.Type:
    cache = getattr(_options, "built", None)
    t = cache.get(spec) if cache is not None else None
    if t is None:
        if not isinstance(spec, Spec):
            raise Unsupported(f"result {spec} is not a tensor")
        t = tensor_type(*spec)
        if cache is not None:
            cache[spec] = t
    return t


def _create(name: str, operands, result_types: list, attributes, loc) -> ir.Operation:
    begin_visit()  # (the callback is rewriting: values read before may be erased ones)
    return ir.Operation.create(name, results=result_types, operands=list(operands), attributes=attributes, loc=loc)


def update_at(operand, update, start, loc) -> ir.Value:
    """``dynamic_update_slice(operand, update, start)`` with ``start`` as i64 constants (known
    offsets, so the update never clamps)."""
    i64 = ir.IntegerType.get_signless(64)
    offsets = [constant(np.int64(s), tensor([], i64), loc) for s in start]
    return build("stablehlo.dynamic_update_slice", [operand, update, *offsets], loc=loc)


def constant(array, result_type: ir.Type, loc) -> ir.Value:
    """A ``stablehlo.constant`` of ``result_type`` holding ``array`` (cast to its dtype; a 0-d
    array, or one whose elements all have the same bits, becomes a splat)."""
    shape, dtype = shape_of(result_type), dtype_of(result_type)
    array = np.asarray(array).astype(dtype, copy=False)
    cache = getattr(_options, "constants", None)
    if cache is None or array.size < 64:
        return _create("stablehlo.constant", [], [result_type], {"value": dense(array, shape)}, loc).result
    key = (result_type, array.tobytes())  # (DFT matrices recur: an FNO's layers share shapes)
    attr = cache.get(key)
    if attr is None:
        attr = cache[key] = dense(array, shape)
    return _create("stablehlo.constant", [], [result_type], {"value": attr}, loc).result


def broadcast_scalar(scalar: ir.Value, shape, loc) -> ir.Value:
    """``stablehlo.broadcast_in_dim`` of a 0-d value to ``shape``."""
    return build("stablehlo.broadcast_in_dim", [scalar], shape=tuple(shape), broadcast_dimensions=(), loc=loc)


def evaluate(name: str, *arrays, **params):
    """The registry's numpy semantics of op ``name`` (None where it declines)."""
    return lookup(name).evaluate(*arrays, **params)


# ---------------------------------------------------------------- reading constants

def splat_value(value: ir.Value):
    """The single value (a 0-d numpy array) of a splat or one-element constant, else None."""
    c = _constant_of(value, limit=0)
    return c[0] if c is not None and c[1] else None


def constant_value(value: ir.Value, limit: int = MAX_FOLD):
    """The numpy value of a ``stablehlo.constant`` result (splats of any size; others up to
    ``limit`` elements), else None. Splats come back as read-only broadcast views."""
    c = _constant_of(value, limit=limit)
    if c is None:
        return None
    array, splat = c
    return np.broadcast_to(array, shape_of(value)) if splat else array


def _constant_of(value: ir.Value, limit: int):
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "stablehlo.constant":
        return None
    shape, dtype = shape_of(value), dtype_of(value)
    if math.prod(shape) == 0:
        return None
    cache = getattr(_options, "constants", None)
    if cache is None:
        return constant_array(owner, limit=limit, shape_dtype=(shape, dtype))
    if dtype.kind == "c" or dtype == _BFLOAT16:  # (the bindings cannot return these attributes: key by text)
        memo = _options.visit
        found = memo.get((value, limit), memo)
        if found is memo:  # (printing is the cost: a pattern asks about one operand several times)
            text = constant_text(owner, math.prod(shape), limit)
            found = cache.get((text, limit), cache)
            if found is cache:
                found = cache[(text, limit)] = _read_only(parse_constant(text, shape, dtype, math.prod(shape), limit))
            memo[(value, limit)] = found
        return found
    key = (owner.attributes["value"], limit)
    found = cache.get(key, cache)
    if found is cache:
        found = cache[key] = _read_only(constant_array(owner, limit=limit, shape_dtype=(shape, dtype)))
    return found


def _read_only(c):
    if c is not None:
        c[0].flags.writeable = False  # (shared by every pattern that reads this constant in the run)
    return c


# ---------------------------------------------------------------- helpers of the newer families

def cost_model():
    """The CostModel of the running pipeline (``optimize(cost_model=...)``), or None outside one."""
    return getattr(_options, "cost_model", None)


def using_cost_model(model):
    return _scoped("cost_model", model, None)


def dft_precision() -> str:
    """StableHLO's name of the precision of the partial DFTs' contractions in the running pipeline
    (``optimize(dft_precision=...)``): "HIGHEST", "HIGH" or "DEFAULT"."""
    return getattr(_options, "dft_precision", "HIGHEST")


def using_dft_precision(precision: str):
    return _scoped("dft_precision", precision, "HIGHEST")


def is_zero(value: ir.Value) -> bool:
    """A splat constant 0 (of any type, -0.0 included), or a broadcast_in_dim of one."""
    b = producer(value, "stablehlo.broadcast_in_dim")
    if b is not None:
        value = b.operands[0]
    c = splat_value(value)
    return c is not None and bool(c == 0)


def dot_general(lhs, rhs, lhs_contracting, rhs_contracting, loc, precision="HIGHEST"):
    """``stablehlo.dot_general`` without batching dims: lhs's free dims, then rhs's."""
    return build("stablehlo.dot_general", [lhs, rhs], lhs_contracting_dimensions=tuple(lhs_contracting),
                 rhs_contracting_dimensions=tuple(rhs_contracting), precision=precision, loc=loc)
