"""Contractions and reductions: dot_general and reduce."""
from __future__ import annotations

import functools
import math
import string

import numpy as np

from hloforge.frontend import attributes as attr
from hloforge.frontend import dtypes
from hloforge.frontend.context import shape_dtype_of
from hloforge.frontend.ops import _evaluate as ev
from hloforge.frontend.ops._common import COMPLEX, FLOAT, INT, category, check_axes, int_tuple, operand
from hloforge.frontend.registry import OPS, Region, bind, body_of, register
from hloforge.frontend.tracing import Tensor

PRECISIONS = ("DEFAULT", "HIGH", "HIGHEST")
_DOT_DIMS = ("lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions",
             "rhs_contracting_dimensions")


# operand category -> the result categories a contraction may accumulate into (jax's pairs)
_ACCUMULATORS = {**{c: (*INT, FLOAT) for c in INT}, FLOAT: (FLOAT,), COMPLEX: (COMPLEX,)}


def preferred_dtype(op: str, preferred_element_type):
    """A contraction's ``preferred_element_type`` parameter: None or a canonical dtype."""
    if preferred_element_type is None:
        return None
    try:
        return dtypes.canonical(preferred_element_type)
    except TypeError as e:
        raise TypeError(f"{op}: preferred_element_type {preferred_element_type!r}: {e}") from None


def result_dtype(op: str, dtype, preferred_element_type):
    """The result element type of a contraction (dot_general, convolution) of ``dtype`` operands:
    ``preferred_element_type`` when given (integers into integers or floats, floats into floats,
    complex into complex), else ``dtype``."""
    if preferred_element_type is None or preferred_element_type == dtype:
        return dtype
    if category(preferred_element_type) not in _ACCUMULATORS.get(category(dtype), ()):
        raise TypeError(f"{op}: preferred_element_type {preferred_element_type} does not hold a contraction of "
                        f"{dtype} operands (integers into integers or floats, floats into floats, "
                        "complex into complex)")
    return preferred_element_type


def decode_preferred(op) -> dict:
    """``preferred_element_type`` read back from a contraction ``op``: its result element type
    where it is not its operands' (the result type is where StableHLO keeps it), else None."""
    result, operand_type = shape_dtype_of(op.results[0].type)[1], shape_dtype_of(op.operands[0].type)[1]
    return {"preferred_element_type": None if result == operand_type else result}


def evaluated_dtype(lhs: np.ndarray, preferred_element_type):
    """The result dtype a contraction's evaluate computes: its operands' or, of the same category
    (integers: not narrower), ``preferred_element_type``; None where the backend's conversions
    into the accumulator would decide the result (integers summed as floats, narrowed integers,
    a change of signedness)."""
    out = lhs.dtype if preferred_element_type is None else np.dtype(preferred_element_type)
    narrowed = out.kind in "iu" and out.itemsize < lhs.dtype.itemsize
    if out != lhs.dtype and (category(out) != category(lhs.dtype) or narrowed):
        return None
    return out


def _dot_params(lhs_batching_dimensions=(), rhs_batching_dimensions=(), lhs_contracting_dimensions=(),
                rhs_contracting_dimensions=(), precision=None, preferred_element_type=None):
    dims = {name: int_tuple("dot_general", name, value) for name, value in zip(_DOT_DIMS, (
        lhs_batching_dimensions, rhs_batching_dimensions, lhs_contracting_dimensions, rhs_contracting_dimensions))}
    pair = (precision, precision) if precision is None or isinstance(precision, str) else tuple(precision)
    if len(pair) != 2 or any(p is not None and p not in PRECISIONS for p in pair) or (None in pair and pair[0] != pair[1]):
        raise ValueError(f"dot_general: precision {precision!r} is not one of {', '.join(PRECISIONS)}, "
                         "an (lhs, rhs) pair of them, or None")
    return {**dims, "precision": pair[0] if pair[0] == pair[1] else pair,
            "preferred_element_type": preferred_dtype("dot_general", preferred_element_type)}


def _dot_rule(lhs, rhs, lhs_batching_dimensions, rhs_batching_dimensions, lhs_contracting_dimensions,
              rhs_contracting_dimensions, precision, preferred_element_type):
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"dot_general: operand dtypes {lhs.dtype} and {rhs.dtype} differ; convert one first")
    out_dtype = result_dtype("dot_general", lhs.dtype, preferred_element_type)
    lb = check_axes("dot_general", "lhs_batching_dimensions", lhs_batching_dimensions, lhs.ndim)
    rb = check_axes("dot_general", "rhs_batching_dimensions", rhs_batching_dimensions, rhs.ndim)
    lc = check_axes("dot_general", "lhs_contracting_dimensions", lhs_contracting_dimensions, lhs.ndim)
    rc = check_axes("dot_general", "rhs_contracting_dimensions", rhs_contracting_dimensions, rhs.ndim)
    if len(lb) != len(rb) or len(lc) != len(rc):
        raise ValueError(f"dot_general: batching {list(lb)}/{list(rb)} or contracting {list(lc)}/{list(rc)} "
                         "dimension lists differ in length")
    if set(lb) & set(lc) or set(rb) & set(rc):
        raise ValueError("dot_general: a dimension is both batching and contracting")
    for kind, ls, rs in (("batching", lb, rb), ("contracting", lc, rc)):
        for a, b in zip(ls, rs):
            if lhs.shape[a] != rhs.shape[b]:
                raise ValueError(f"dot_general: {kind} dims lhs {a} (size {lhs.shape[a]}) and rhs {b} "
                                 f"(size {rhs.shape[b]}) differ; shapes {lhs.shape} and {rhs.shape}")
    lfree = [d for d in range(lhs.ndim) if d not in lb and d not in lc]
    rfree = [d for d in range(rhs.ndim) if d not in rb and d not in rc]
    shape = (tuple(lhs.shape[d] for d in lb) + tuple(lhs.shape[d] for d in lfree)
             + tuple(rhs.shape[d] for d in rfree))
    return shape, out_dtype


def _dot_attributes(precision, preferred_element_type, **dims):
    out = {"dot_dimension_numbers": attr.dot_dimensions(*(dims[n] for n in _DOT_DIMS))}
    if precision is not None:
        out["precision_config"] = attr.precision_config(
            (precision, precision) if isinstance(precision, str) else precision)
    return out


def _dot_decode(op):
    return {**dict(zip(_DOT_DIMS, attr.read_dot_dimensions(op))), "precision": attr.read_precision(op),
            **decode_preferred(op)}


def _dot_evaluate(lhs, rhs, lhs_batching_dimensions, rhs_batching_dimensions, lhs_contracting_dimensions,
                  rhs_contracting_dimensions, precision=None, preferred_element_type=None):
    """numpy's einsum: on integers (wrapping sums, exact in any order); on floats where every
    product and partial sum is exact whatever the order (the order and precision of a float sum are
    the backend's) and no result is zero (which zero depends on the order); complex only without
    contracted elements. A ``preferred_element_type`` of another kind is left to the backend."""
    out_dtype = evaluated_dtype(lhs, preferred_element_type)
    if out_dtype is None or not ev.safe_inputs([lhs, rhs]):
        return None
    # (a product into another float type too: exact in both or left to the backend)
    float_sum = ev.kind(lhs) in "fc" and (math.prod(lhs.shape[d] for d in lhs_contracting_dimensions) > 0
                                          or out_dtype != lhs.dtype)
    if float_sum and ev.kind(lhs) == "c":
        return None
    letters = iter(string.ascii_letters)
    lsub, rsub = [None] * lhs.ndim, [None] * rhs.ndim
    for a, b in zip(lhs_batching_dimensions, rhs_batching_dimensions):
        lsub[a] = rsub[b] = next(letters)
    for a, b in zip(lhs_contracting_dimensions, rhs_contracting_dimensions):
        lsub[a] = rsub[b] = next(letters)
    lsub = [s or next(letters) for s in lsub]
    rsub = [s or next(letters) for s in rsub]
    batch = [lsub[a] for a in lhs_batching_dimensions]
    free = ([s for d, s in enumerate(lsub) if d not in lhs_batching_dimensions + lhs_contracting_dimensions]
            + [s for d, s in enumerate(rsub) if d not in rhs_batching_dimensions + rhs_contracting_dimensions])
    spec = f"{''.join(lsub)},{''.join(rsub)}->{''.join(batch + free)}"
    if float_sum:
        a, b = lhs.astype(np.float64), rhs.astype(np.float64)
        # (exact in both the operand and the result dtype: whichever the backend sums in)
        if not all(_dot_is_exact(spec, a, b, d) for d in {lhs.dtype, out_dtype}):
            return None
        out = ev.finish(np.einsum(spec, a, b), out_dtype)
        return None if out is None or (out == 0).any() else out
    with np.errstate(all="ignore"):
        return ev.finish(np.einsum(spec, *(ev.wide(x.astype(out_dtype)) for x in (lhs, rhs))), out_dtype)


def _dot_is_exact(spec: str, a: np.ndarray, b: np.ndarray, dtype) -> bool:
    """Every product and every partial sum of the float contraction ``spec`` of ``a`` and ``b``
    (float64 values of ``dtype``) is exact and normal in ``dtype``, in any order."""
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return False
    a_nonzero, b_nonzero = a[a != 0], b[b != 0]
    if not a_nonzero.size or not b_nonzero.size:
        return True  # (every product is zero: the zero results decline)
    (a_low, a_bits), (b_low, b_bits) = ev.significands(a_nonzero), ev.significands(b_nonzero)
    bits, largest = ev.FLOAT_FORMATS[dtype.name]
    with np.errstate(over="ignore"):
        grain = np.exp2(float(a_low.min() + b_low.min()))  # every product is a multiple of grain
        bound = float(np.einsum(spec, np.abs(a), np.abs(b)).max()) * (1 + 2.0 ** -40)
        largest_product = np.abs(a_nonzero).max() * np.abs(b_nonzero).max()
    return bool(a_bits.max() + b_bits.max() <= bits and grain >= ev.smallest_normal(dtype)
                and largest_product <= largest
                and bound <= min(grain * 2.0 ** bits, largest))


@register("stablehlo.dot_general", rule=_dot_rule, params=_dot_params, attributes=_dot_attributes,
          decode=_dot_decode, evaluate=_dot_evaluate, traits={"bilinear"})
def dot_general(lhs, rhs, lhs_batching_dimensions=(), rhs_batching_dimensions=(),
                lhs_contracting_dimensions=(), rhs_contracting_dimensions=(), *,
                precision=None, preferred_element_type=None, loc=None) -> Tensor:
    """General tensor contraction; emits ``stablehlo.dot_general``.

    The result dims are: batch dims, then lhs free dims, then rhs free dims.

    Args:
      lhs, rhs: Tensors of one dtype.
      lhs_batching_dimensions, rhs_batching_dimensions: paired batch dims.
      lhs_contracting_dimensions, rhs_contracting_dimensions: paired summed dims.
      precision: None, "DEFAULT", "HIGH" or "HIGHEST" (both operands), or an (lhs, rhs) pair.
      preferred_element_type: the result dtype (jax's name): None for the operands' dtype, or a
        wider accumulator (bf16 x bf16 -> float32, int8 x int8 -> int32); integers may go to floats.
    Returns:
      The contracted Tensor.
    Example:
      >>> y = ops.dot_general(a, b, (), (), (1,), (0,))   # a @ b for matrices
    """
    lhs, rhs = operand("dot_general", lhs, "lhs"), operand("dot_general", rhs, "rhs")
    return bind("stablehlo.dot_general", [lhs, rhs], lhs_batching_dimensions=lhs_batching_dimensions,
                rhs_batching_dimensions=rhs_batching_dimensions,
                lhs_contracting_dimensions=lhs_contracting_dimensions,
                rhs_contracting_dimensions=rhs_contracting_dimensions, precision=precision,
                preferred_element_type=preferred_element_type, loc=loc)


# ---------------------------------------------------------------- reduce

REDUCERS = {"add": "stablehlo.add", "mul": "stablehlo.multiply", "max": "stablehlo.maximum",
            "min": "stablehlo.minimum", "and": "stablehlo.and", "or": "stablehlo.or"}
_REDUCER_NAMES = {v: k for k, v in REDUCERS.items()}


def _reduce_params(dimensions, body="add"):
    if isinstance(body, str):
        if body not in REDUCERS:
            raise ValueError(f"reduce: body {body!r} is not one of {', '.join(REDUCERS)} or a callable")
    elif not callable(body):
        raise TypeError(f"reduce: body must be a name or a callable, got {type(body).__name__}")
    return {"dimensions": int_tuple("reduce", "dimensions", dimensions), "body": body}


def _split(operands):
    n = len(operands) // 2
    return list(operands[:n]), list(operands[n:])


def _reduce_rule(*operands, dimensions, body):
    xs, inits = _split(operands)
    if not xs or len(operands) % 2:
        raise ValueError(f"reduce: needs as many init values as operands, got {len(operands)} tensors")
    for i, (x, init) in enumerate(zip(xs, inits)):
        if x.shape != xs[0].shape:
            raise ValueError(f"reduce: operand {i} shape {x.shape} differs from {xs[0].shape}")
        if init.shape != () or init.dtype != x.dtype:
            raise TypeError(f"reduce: init value {i} must be a 0-d {x.dtype} tensor, got {init}")
    dims = check_axes("reduce", "dimensions", dimensions, xs[0].ndim)
    if isinstance(body, str):
        if len(xs) != 1:
            raise ValueError("reduce: a named body reduces one operand; pass a callable for several")
        cat = category(xs[0].dtype)
        if body in ("and", "or") and cat in ("float", COMPLEX):
            raise TypeError(f"reduce: body {body!r} needs bool or integer operands, got {xs[0].dtype}")
        if body in ("max", "min") and cat == COMPLEX:
            raise TypeError(f"reduce: body {body!r} does not order complex operands")
    shape = tuple(s for d, s in enumerate(xs[0].shape) if d not in dims)
    return [(shape, x.dtype) for x in xs]


@functools.lru_cache(maxsize=None)
def _named_body(name):
    def body(acc, elem):
        return bind(REDUCERS[name], [acc, elem])
    # (Builder.region emits such a body without tracing it, after the op's rule checked the specs)
    body.reducer = (REDUCERS[name], lambda spec: OPS[REDUCERS[name]].abstract(spec, spec))
    return body


def _reduce_regions(operands, dimensions, body):
    xs, _ = _split(operands)
    scalars = [((), x.dtype) for x in xs]
    fn = _named_body(body) if isinstance(body, str) else body
    return [Region(scalars + scalars, fn, scalars, "reduce: body")]


def _reduce_decode(op):
    return {"dimensions": attr.read_ints(op, "dimensions"), "body": reducer_name(op) or body_of(op.regions[0])}


def reducer_name(op):
    """"add", "mul", ... when ``op``'s body is ``return f(arg0, arg1)`` for a named reducer f, else None."""
    block = op.regions[0].blocks[0]
    ops = list(block.operations)
    if len(ops) != 2 or ops[1].name != "stablehlo.return" or ops[0].name not in _REDUCER_NAMES:
        return None
    if list(ops[0].operands) != list(block.arguments) or ops[1].operands[0] != ops[0].result:
        return None
    return _REDUCER_NAMES[ops[0].name]


_UFUNCS = {"add": (np.add, None), "mul": (np.multiply, np.logical_and), "max": (np.maximum, np.logical_or),
           "min": (np.minimum, np.logical_and), "and": (np.bitwise_and, np.logical_and),
           "or": (np.bitwise_or, np.logical_or)}


def named_reduction(operands, body):
    """(x, init, numpy kind of x) when a reduction's evaluate can compute it: one operand, a named
    body that numpy has for x's kind, and inputs evaluate is safe on; else None."""
    if len(operands) != 2 or not isinstance(body, str):
        return None
    x, init = operands
    k = ev.kind(x)
    if k not in "biuf" + ("c" if body in ("add", "mul") else "") or not ev.safe_inputs([x, init]):
        return None
    return x, init, k


def is_identity(body, init) -> bool:
    """``init`` is the identity of the named ``body`` (XLA may apply a reduction's init value any
    number of times, none included: a reduce of one element is that element)."""
    v = init.item()
    if init.dtype == np.bool_:
        return v == (body in ("mul", "and", "min"))
    lo, hi = (-np.inf, np.inf) if init.dtype.kind in "fc" or init.dtype.name == "bfloat16" else (
        np.iinfo(init.dtype).min, np.iinfo(init.dtype).max)
    return v == {"add": 0, "mul": 1, "max": lo, "min": hi, "and": -1 if init.dtype.kind == "i" else hi, "or": 0}[body]


def order_free(x: np.ndarray, axes, body: str) -> bool:
    """A float or complex sum or product of ``x`` along ``axes`` has one result in any order and
    grouping: every partial result is exact (complex products: one factor, no zero part)."""
    if not np.isfinite(x).all():
        return False
    if ev.kind(x) == "c":
        if body == "mul":
            return math.prod(x.shape[d] for d in axes) <= 1 and (x.real != 0).all() and (x.imag != 0).all()
        real = dtypes.real_dtype(x.dtype)
        return all(ev.sum_is_exact(part.astype(np.float64), axes, real) for part in (x.real, x.imag))
    exact = ev.sum_is_exact if body == "add" else ev.product_is_exact
    return exact(x.astype(np.float64), axes, x.dtype)


def has_zero(x: np.ndarray) -> bool:
    """A zero element (a zero part of a complex one)."""
    return bool((x.real == 0).any() or (x.imag == 0).any()) if ev.kind(x) == "c" else bool((x == 0).any())


def _reduce_evaluate(*operands, dimensions, body):
    """One operand, a named body and its identity as the init value (XLA may apply the init any
    number of times, none included). Float and complex sums and products only where every partial
    result is exact whatever the order (the order of a float sum is the backend's choice) and no
    sum is zero (+0 + -0 is +0: which zero comes out depends on the order)."""
    named = named_reduction(operands, body)
    if named is None or not is_identity(body, named[1]):
        return None
    x, init, k = named
    axes = tuple(dimensions)
    shape = [n for d, n in enumerate(x.shape) if d not in dimensions]
    if math.prod(x.shape[d] for d in axes) == 0:  # (nothing to combine: the init, an identity, as it is)
        return [np.broadcast_to(init, shape).copy()]
    inexact = k in "fc" and body in ("add", "mul")
    if inexact and not order_free(x, axes, body):
        return None
    if body in ("max", "min") and k == "f" and (x == 0).any():
        return None  # which zero max(-0, +0) keeps is not pinned down
    ufunc = _UFUNCS[body][1 if x.dtype == np.bool_ else 0]
    if ufunc is None:
        return None  # bool add: logical or in the spec, xor in XLA:CPU
    with np.errstate(all="ignore"):
        if inexact:  # (exact in float64 or complex128; the init, an identity, changes nothing)
            out = ev.finish(ufunc.reduce(x.astype(np.complex128 if k == "c" else np.float64), axis=axes), x.dtype)
        else:
            out = ev.finish(ufunc(ev.wide(init), ufunc.reduce(ev.wide(x), axis=axes)), x.dtype)
    if out is None or (body == "add" and inexact and has_zero(out)):
        return None
    return [out]


@register("stablehlo.reduce", rule=_reduce_rule, params=_reduce_params,
          attributes=lambda dimensions, body: {"dimensions": attr.i64s(dimensions)},
          regions=_reduce_regions, decode=_reduce_decode, evaluate=_reduce_evaluate,
          arrange=lambda operands: tuple(_split(operands)), traits={"variadic"})
def reduce(operands, init_values, dimensions, body="add", *, loc=None):
    """Reduce ``dimensions`` away with ``body``; emits ``stablehlo.reduce``.

    Args:
      operands: a Tensor, or a sequence of Tensors of one shape (variadic reduce).
      init_values: the identity per operand (0-d, same dtype; Python scalars are cast).
      dimensions: dims to reduce.
      body: "add", "mul", "max", "min", "and", "or", or a callable that takes
        ``2 * len(operands)`` 0-d Tensors (accumulators, then elements) and returns
        ``len(operands)`` 0-d Tensors, built with hloforge.ops; it may not use Tensors from
        outside the body.
    Returns:
      A Tensor (one operand) or a tuple of Tensors.
    Example:
      >>> s = ops.reduce(x, 0.0, (1,), "add")
    """
    single = isinstance(operands, Tensor) or not isinstance(operands, (list, tuple))
    xs = [operand("reduce", x) for x in ([operands] if single else operands)]
    inits = init_values if isinstance(init_values, (list, tuple)) else [init_values]
    if len(inits) != len(xs):
        raise ValueError(f"reduce: needs as many init values as operands, got {len(xs)} and {len(inits)}")
    inits = [operand("reduce", v, "init value", dtype=x.dtype) for v, x in zip(inits, xs)]
    out = bind("stablehlo.reduce", [*xs, *inits], dimensions=dimensions, body=body, loc=loc)
    return out[0] if single else tuple(out)
