"""Contractions and reductions: dot_general and reduce."""
from __future__ import annotations


from hloforge.frontend.context import i64_array, parse_attr
from hloforge.frontend.ops._common import COMPLEX, builder, category, check_axes, int_tuple, operand
from hloforge.frontend.registry import register
from hloforge.frontend.tracing import Tensor

PRECISIONS = ("DEFAULT", "HIGH", "HIGHEST")


def _dot_rule(lhs, rhs, lb, rb, lc, rc):
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"dot_general: operand dtypes {lhs.dtype} and {rhs.dtype} differ; convert one first")
    lb = check_axes("dot_general", "lhs_batching_dimensions", lb, lhs.ndim)
    rb = check_axes("dot_general", "rhs_batching_dimensions", rb, rhs.ndim)
    lc = check_axes("dot_general", "lhs_contracting_dimensions", lc, lhs.ndim)
    rc = check_axes("dot_general", "rhs_contracting_dimensions", rc, rhs.ndim)
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
    return shape, lhs.dtype


@register("stablehlo.dot_general", _dot_rule)
def dot_general(lhs, rhs, lhs_batching_dimensions=(), rhs_batching_dimensions=(),
                lhs_contracting_dimensions=(), rhs_contracting_dimensions=(), *,
                precision=None, loc=None) -> Tensor:
    """General tensor contraction; emits ``stablehlo.dot_general``.

    The result dims are: batch dims, then lhs free dims, then rhs free dims.

    Args:
      lhs, rhs: Tensors of one dtype.
      lhs_batching_dimensions, rhs_batching_dimensions: paired batch dims.
      lhs_contracting_dimensions, rhs_contracting_dimensions: paired summed dims.
      precision: None, "DEFAULT", "HIGH" or "HIGHEST" (both operands).
    Returns:
      The contracted Tensor.
    Example:
      >>> y = ops.dot_general(a, b, (), (), (1,), (0,))   # a @ b for matrices
    """
    lhs, rhs = operand("dot_general", lhs, "lhs"), operand("dot_general", rhs, "rhs")
    shape, dtype = _dot_rule(lhs, rhs, lhs_batching_dimensions, rhs_batching_dimensions,
                             lhs_contracting_dimensions, rhs_contracting_dimensions)
    dims = parse_attr(
        "#stablehlo.dot<lhs_batching_dimensions = {}, rhs_batching_dimensions = {}, "
        "lhs_contracting_dimensions = {}, rhs_contracting_dimensions = {}>".format(
            *(list(int_tuple("dot_general", "dims", d)) for d in (
                lhs_batching_dimensions, rhs_batching_dimensions,
                lhs_contracting_dimensions, rhs_contracting_dimensions))))
    attrs = {"dot_dimension_numbers": dims}
    if precision is not None:
        if precision not in PRECISIONS:
            raise ValueError(f"dot_general: precision {precision!r} is not one of {', '.join(PRECISIONS)}")
        p = f"#stablehlo<precision {precision}>"
        attrs["precision_config"] = parse_attr(f"[{p}, {p}]")
    b = builder()
    op = b.emit("stablehlo.dot_general", [lhs, rhs], [(shape, dtype)], attrs, loc=loc)
    return Tensor(op.result, shape, dtype, b)


# ---------------------------------------------------------------- reduce

REDUCERS = {"add": "stablehlo.add", "mul": "stablehlo.multiply", "max": "stablehlo.maximum",
            "min": "stablehlo.minimum", "and": "stablehlo.and", "or": "stablehlo.or"}


def _reduce_rule(xs, inits, dimensions, body):
    if not xs or len(xs) != len(inits):
        raise ValueError(f"reduce: needs as many init values as operands, got {len(xs)} and {len(inits)}")
    for i, (x, init) in enumerate(zip(xs, inits)):
        if x.shape != xs[0].shape:
            raise ValueError(f"reduce: operand {i} shape {x.shape} differs from {xs[0].shape}")
        if init.shape != () or init.dtype != x.dtype:
            raise TypeError(f"reduce: init value {i} must be a 0-d {x.dtype} tensor, got {init}")
    dims = check_axes("reduce", "dimensions", dimensions, xs[0].ndim)
    if isinstance(body, str):
        if body not in REDUCERS:
            raise ValueError(f"reduce: body {body!r} is not one of {', '.join(REDUCERS)} or a callable")
        if len(xs) != 1:
            raise ValueError("reduce: a named body reduces one operand; pass a callable for several")
        cat = category(xs[0].dtype)
        if body in ("and", "or") and cat in ("float", COMPLEX):
            raise TypeError(f"reduce: body {body!r} needs bool or integer operands, got {xs[0].dtype}")
        if body in ("max", "min") and cat == COMPLEX:
            raise TypeError(f"reduce: body {body!r} does not order complex operands")
    elif not callable(body):
        raise TypeError(f"reduce: body must be a name or a callable, got {type(body).__name__}")
    shape = tuple(s for d, s in enumerate(xs[0].shape) if d not in dims)
    return [(shape, x.dtype) for x in xs]


@register("stablehlo.reduce", _reduce_rule)
def reduce(operands, init_values, dimensions, body="add", *, loc=None):
    """Reduce ``dimensions`` away with ``body``; emits ``stablehlo.reduce``.

    Args:
      operands: a Tensor, or a sequence of Tensors of one shape (variadic reduce).
      init_values: the identity per operand (0-d, same dtype; Python scalars are cast).
      dimensions: dims to reduce.
      body: "add", "mul", "max", "min", "and", "or", or a callable that takes
        ``2 * len(operands)`` 0-d Tensors (accumulators, then elements) and returns
        ``len(operands)`` 0-d Tensors, built with hloforge.ops.
    Returns:
      A Tensor (one operand) or a tuple of Tensors.
    Example:
      >>> s = ops.reduce(x, 0.0, (1,), "add")
    """
    single = isinstance(operands, Tensor) or not isinstance(operands, (list, tuple))
    xs = [operand("reduce", x) for x in ([operands] if single else operands)]
    inits = init_values if isinstance(init_values, (list, tuple)) else [init_values]
    inits = [operand("reduce", v, "init value", dtype=x.dtype) for v, x in zip(inits, xs)]
    results = _reduce_rule(xs, inits, dimensions, body)
    b = builder()
    op = b.emit("stablehlo.reduce", [*xs, *inits], results, {"dimensions": i64_array(dimensions)},
                loc=loc, regions=1)
    scalar_types = [b.type((), x.dtype) for x in xs]
    block = op.regions[0].blocks.append(*scalar_types, *scalar_types)
    args = [Tensor(a, (), x.dtype, b) for a, x in zip(block.arguments, xs + xs)]
    with b.at(block):
        if isinstance(body, str):
            acc, elem = args
            r = b.emit(REDUCERS[body], [acc, elem], [((), acc.dtype)], loc=loc)
            outs = [Tensor(r.result, (), acc.dtype, b)]
        else:
            outs = body(*args)
            outs = [outs] if isinstance(outs, Tensor) else list(outs)
            if len(outs) != len(xs) or any(not isinstance(o, Tensor) or o.shape != () or o.dtype != x.dtype
                                           for o, x in zip(outs, xs)):
                raise TypeError(f"reduce: body must return {len(xs)} 0-d tensor(s) of dtypes "
                                f"{[str(x.dtype) for x in xs]}, got {outs}")
        b.emit("stablehlo.return", outs, [], loc=loc)
    tensors = [Tensor(op.results[i], s, d, b) for i, (s, d) in enumerate(results)]
    return tensors[0] if single else tuple(tensors)


