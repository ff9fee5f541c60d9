"""Sorting: the stablehlo.sort op with a comparator region."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import attributes as attr
from hloforge.frontend import dtypes
from hloforge.frontend.ops import _evaluate as ev
from hloforge.frontend.ops._common import check_axes, int_tuple, operand
from hloforge.frontend.ops.compare import compare
from hloforge.frontend.ops.elementwise import and_, imag, or_, real
from hloforge.frontend.registry import Region, bind, body_of, register
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


def _sort_params(dimension, comparator="LT", is_stable=False):
    if isinstance(comparator, str):
        if comparator not in DIRECTIONS:
            raise ValueError(f"sort: comparator {comparator!r} is not one of {', '.join(DIRECTIONS)} "
                             "or a callable")
    elif not callable(comparator):
        raise TypeError(f"sort: comparator must be 'LT', 'GT' or a callable, got {type(comparator).__name__}")
    return {"dimension": int_tuple("sort", "dimension", (dimension,))[0], "comparator": comparator,
            "is_stable": bool(is_stable)}


def _sort_rule(*xs, dimension, comparator, is_stable):
    if not xs:
        raise ValueError("sort: needs at least one operand")
    for i, x in enumerate(xs):
        if x.shape != xs[0].shape:
            raise ValueError(f"sort: operand {i} shape {x.shape} differs from operand 0 shape {xs[0].shape}")
    if xs[0].ndim == 0:
        raise ValueError("sort: operands must have rank >= 1, got a 0-d tensor")
    check_axes("sort", "dimension", (dimension,), xs[0].ndim)
    return [(x.shape, x.dtype) for x in xs]


def _direction_body(direction):
    def body(lhs, rhs, *others):
        return _numpy_less(lhs, rhs) if direction == "LT" else _numpy_less(rhs, lhs)
    return body


def _sort_regions(xs, dimension, comparator, is_stable):
    fn = _direction_body(comparator) if isinstance(comparator, str) else comparator
    arguments = [((), x.dtype) for x in xs for _ in (0, 1)]
    return [Region(arguments, fn, [((), np.dtype(bool))], "sort: comparator", describe="a 0-d bool Tensor")]


def _sort_decode(op):
    return {"dimension": attr.read_int(op, "dimension"), "comparator": body_of(op.regions[0]),
            "is_stable": attr.read_bool(op, "is_stable")}


def _sort_evaluate(*xs, dimension, comparator, is_stable):
    """Named comparators on real keys; ties (equal keys, -0 and +0 included) only when stable or
    with a single operand without zeros (the order of equal elements is the backend's choice); no
    NaN key (a comparator that is not a strict weak order leaves the result to the algorithm)."""
    key = xs[0]
    if not isinstance(comparator, str) or ev.kind(key) == "c" or not ev.safe_inputs(xs, exact_complex=True):
        return None
    if ev.has_nan(key):
        return None
    if not is_stable and (len(xs) > 1 or (ev.kind(key) == "f" and (key == 0).any())):
        return None
    moved = np.moveaxis(ev.wide(key), dimension, -1)
    if comparator == "LT":
        order = np.argsort(moved, axis=-1, kind="stable")
    else:  # descending, NaN first, equal keys in their original order
        n = moved.shape[-1]
        order = n - 1 - np.flip(np.argsort(np.flip(moved, -1), axis=-1, kind="stable"), -1)
    return [np.moveaxis(np.take_along_axis(np.moveaxis(x, dimension, -1), order, -1), -1, dimension)
            for x in xs]


@register("stablehlo.sort", rule=_sort_rule, params=_sort_params,
          attributes=lambda dimension, comparator, is_stable: {"dimension": attr.i64(dimension),
                                                               "is_stable": attr.boolean(is_stable)},
          regions=_sort_regions, decode=_sort_decode, evaluate=_sort_evaluate,
          arrange=lambda operands: (list(operands),), traits={"variadic"})
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
    out = bind("stablehlo.sort", xs, dimension=dimension, comparator=comparator, is_stable=is_stable, loc=loc)
    return out[0] if single else tuple(out)


__all__ = ["sort"]
