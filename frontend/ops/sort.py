"""Sorting: the stablehlo.sort op with a comparator region."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import dtypes
from hloforge.frontend.context import ir
from hloforge.frontend.ops._common import builder, check_axes, operand
from hloforge.frontend.ops.elementwise import and_, compare, imag, or_, real
from hloforge.frontend.registry import register
from hloforge.frontend.tracing import Tensor

DIRECTIONS = ("LT", "GT")


def _numpy_less(a: Tensor, b: Tensor) -> Tensor:
    """``a`` sorts before ``b`` in numpy's order: NaN last, complex lexicographic (0-d or same shape)."""
    if dtypes.is_complex(a.dtype):
        ar, br = real(a), real(b)
        same_real = or_(compare(ar, br, "EQ"), and_(compare(ar, ar, "NE"), compare(br, br, "NE")))
        return or_(_numpy_less(ar, br), and_(same_real, _numpy_less(imag(a), imag(b))))
    if dtypes.is_float(a.dtype):
        b_nan_a_not = and_(compare(b, b, "NE"), compare(a, a, "EQ"))
        return or_(compare(a, b, "LT"), b_nan_a_not)
    return compare(a, b, "LT")


def _sort_rule(xs, dimension, comparator):
    if not xs:
        raise ValueError("sort: needs at least one operand")
    for i, x in enumerate(xs):
        if x.shape != xs[0].shape:
            raise ValueError(f"sort: operand {i} shape {x.shape} differs from operand 0 shape {xs[0].shape}")
    if xs[0].ndim == 0:
        raise ValueError("sort: operands must have rank >= 1, got a 0-d tensor")
    check_axes("sort", "dimension", (dimension,), xs[0].ndim)
    if isinstance(comparator, str):
        if comparator not in DIRECTIONS:
            raise ValueError(f"sort: comparator {comparator!r} is not one of {', '.join(DIRECTIONS)} "
                             "or a callable")
    elif not callable(comparator):
        raise TypeError(f"sort: comparator must be 'LT', 'GT' or a callable, got {type(comparator).__name__}")
    return [(x.shape, x.dtype) for x in xs]


@register("stablehlo.sort", _sort_rule)
def sort(operands, dimension: int, comparator="LT", *, is_stable: bool = False, loc=None):
    """Sort along ``dimension``; emits one ``stablehlo.sort`` with a comparator region.

    Several operands are permuted together, ordered by the comparator (e.g. values and indices).

    Args:
      operands: a Tensor, or a sequence of Tensors of one shape (any dtypes).
      dimension: the dimension to sort along, 0 <= dimension < rank.
      comparator: "LT" (ascending by the first operand in numpy's order: NaN last, complex
        lexicographic), "GT" (the reverse of that order), or a callable that takes
        ``2 * len(operands)`` 0-d Tensors ``(lhs_0, rhs_0, lhs_1, rhs_1, ...)`` and returns a 0-d
        bool Tensor, true when lhs sorts before rhs, built with hloforge.ops.
      is_stable: keep the order of elements that compare equal.
    Returns:
      A Tensor (one operand) or a tuple of Tensors.
    Example:
      >>> values, indices = ops.sort([x, ops.iota(x.shape, np.int32, 1)], 1)
    """
    single = isinstance(operands, Tensor) or not isinstance(operands, (list, tuple))
    xs = [operand("sort", x) for x in ([operands] if single else operands)]
    results = _sort_rule(xs, dimension, comparator)
    b = builder()
    i64 = ir.IntegerType.get_signless(64, context=b.ctx)
    attrs = {"dimension": ir.IntegerAttr.get(i64, int(dimension)),
             "is_stable": ir.BoolAttr.get(bool(is_stable), context=b.ctx)}
    op = b.emit("stablehlo.sort", xs, results, attrs, loc=loc, regions=1)
    scalar_types = [t for x in xs for t in (b.type((), x.dtype),) * 2]
    block = op.regions[0].blocks.append(*scalar_types)
    args = [Tensor(a, (), x.dtype, b) for a, x in zip(block.arguments, [x for x in xs for _ in (0, 1)])]
    with b.at(block):
        if isinstance(comparator, str):
            lhs, rhs = args[:2]
            out = _numpy_less(lhs, rhs) if comparator == "LT" else _numpy_less(rhs, lhs)
        else:
            out = comparator(*args)
            if not isinstance(out, Tensor) or out.shape != () or out.dtype != np.bool_:
                raise TypeError(f"sort: comparator must return a 0-d bool Tensor, got {out!r}")
        b.emit("stablehlo.return", [out], [], loc=loc)
    tensors = [Tensor(op.results[i], s, d, b) for i, (s, d) in enumerate(results)]
    return tensors[0] if single else tuple(tensors)


__all__ = ["sort"]
