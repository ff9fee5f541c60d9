"""Tokens and tuples: after_all, tuple, get_tuple_element (their values are ``tracing.Value``s)."""
from __future__ import annotations

import builtins
import operator

from hloforge.frontend import attributes as attr
from hloforge.frontend.context import ir
from hloforge.frontend.registry import TOKEN, TupleSpec, bind, register
from hloforge.frontend.tracing import Value, as_value

# (no folding: passes/fold.py skips "non_tensor" ops, whose results no constant can hold)
_TRAITS = {"non_tensor"}

# ---------------------------------------------------------------- after_all


def _after_all_rule(*tokens):
    for i, t in enumerate(tokens):
        if t is not TOKEN:
            raise TypeError(f"after_all: operand {i} must be a Token, got {t!r}")
    return TOKEN


@register("stablehlo.after_all", rule=_after_all_rule, evaluate=lambda *tokens: None, traits=_TRAITS)
def after_all(*tokens, loc=None) -> Value:
    """A token that comes after every token in ``tokens``; emits ``stablehlo.after_all``.

    Args:
      *tokens: Token Values (none: a fresh token).
    Returns:
      A Token Value.
    Example:
      >>> t = ops.after_all(ops.after_all(), ops.after_all())
    """
    ts = [as_value(t, what=f"after_all operand {i}") for i, t in enumerate(tokens)]
    return bind("stablehlo.after_all", ts, loc=loc)


# ---------------------------------------------------------------- tuple, get_tuple_element

@register("stablehlo.tuple", rule=lambda *values: TupleSpec(builtins.tuple(values)),
          evaluate=lambda *arrays: builtins.tuple(arrays), traits=_TRAITS)
def tuple(*values, loc=None) -> Value:
    """A tuple of ``values``; emits ``stablehlo.tuple``.

    Args:
      *values: Tensors, tokens or tuples (array-likes become constants); none: the empty tuple.
    Returns:
      A tuple Value (``len()`` gives its size; read elements with ``ops.get_tuple_element``).
    Example:
      >>> t = ops.tuple(x, ops.tuple(y, ops.after_all()))
    """
    vs = [as_value(v, what=f"tuple operand {i}") for i, v in enumerate(values)]
    return bind("stablehlo.tuple", vs, loc=loc)


def _gte_params(index):
    try:
        return {"index": operator.index(index)}
    except TypeError:
        raise TypeError(f"get_tuple_element: index must be an int, got {index!r}") from None


def _gte_rule(t, index):
    if not isinstance(t, TupleSpec):
        raise TypeError(f"get_tuple_element: operand must be a tuple, got {t!r}")
    if not 0 <= index < len(t.elements):
        raise ValueError(f"get_tuple_element: index {index} out of range for {t!r} of "
                         f"{len(t.elements)} element(s)")
    return t.elements[index]


@register("stablehlo.get_tuple_element", rule=_gte_rule, params=_gte_params,
          attributes=lambda index: {"index": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), index)},
          decode=lambda op: {"index": attr.read_int(op, "index")},
          evaluate=lambda t, index: t[index], traits=_TRAITS)
def get_tuple_element(t, index: int, *, loc=None):
    """Element ``index`` of the tuple ``t``; emits ``stablehlo.get_tuple_element``.

    Args:
      t: a tuple Value.
      index: which element, in [0, len(t)).
    Returns:
      A Tensor, or a Value for a token or tuple element.
    Example:
      >>> y = ops.get_tuple_element(ops.tuple(x, y), 1)
    """
    return bind("stablehlo.get_tuple_element", [as_value(t, what="get_tuple_element operand")], index=index,
                loc=loc)


__all__ = ["after_all", "tuple", "get_tuple_element"]
