"""Control flow: stablehlo.while, stablehlo.if and stablehlo.case.

Their regions are not isolated from above: a body may use Tensors of the enclosing trace
(StableHLO allows it). hloforge.lax passes the values a while body captures as extra loop
operands instead, as XLA wants them (see docs/lax.md).
"""
from __future__ import annotations

import numpy as np

from hloforge.frontend import dtypes
from hloforge.frontend.context import shape_dtype_of
from hloforge.frontend.ops._common import operand
from hloforge.frontend.registry import Region, Spec, bind, register, reemit_block
from hloforge.frontend.tracing import Tensor

_BOOL = np.dtype(np.bool_)


def open_body(region):
    """Like ``registry.body_of``, for regions that may use values defined outside them: those come
    from the enclosing block being re-emitted (``Builder.reemitted``), or are re-used as they are
    (re-emitting into the module that holds them)."""
    block = region.blocks[0]

    def body(*args):
        return tuple(reemit_block(block, args))

    return body


def _callable(op, name, fn):
    if not callable(fn):
        raise TypeError(f"{op}: {name} must be a callable, got {type(fn).__name__}")
    return fn


def _result_types(op, result_types):
    try:
        return tuple(Spec.of(r) for r in result_types)
    except (TypeError, ValueError):
        raise TypeError(f"{op}: result_types must be a sequence of (shape, dtype) pairs, "
                        f"got {result_types!r}") from None


# ---------------------------------------------------------------- while

def _while_params(cond, body):
    return {"cond": _callable("while", "cond", cond), "body": _callable("while", "body", body)}


def _while_regions(operands, cond, body):
    specs = [tuple(o) for o in operands]
    return [Region(specs, cond, [((), _BOOL)], "while: cond", isolated=False, describe="a 0-d bool Tensor"),
            Region(specs, body, specs, "while: body", isolated=False)]


@register("stablehlo.while", rule=lambda *xs, cond, body: [(x.shape, x.dtype) for x in xs],
          params=_while_params, regions=_while_regions,
          decode=lambda op: {"cond": open_body(op.regions[0]), "body": open_body(op.regions[1])},
          arrange=lambda operands: (list(operands),), traits={"variadic", "control_flow"})
def while_(operands, cond, body, *, loc=None) -> list:
    """Loop while ``cond`` holds; emits ``stablehlo.while``.

    Args:
      operands: a sequence of Tensors, the initial loop values.
      cond: takes one Tensor per operand (the current values) and returns a 0-d bool Tensor.
      body: takes the current values and returns the next ones, of the same types.
      Both may use Tensors of the enclosing trace (see hloforge.lax.while_loop, which passes
      them as operands instead).
    Returns:
      A list of Tensors, the final values.
    Example:
      >>> i, = ops.while_([ops.constant(np.int32(0))], lambda i: ops.compare(i, 10, "LT"),
      ...                 lambda i: ops.add(i, 1))
    """
    xs = [operand("while", x) for x in operands]
    return bind("stablehlo.while", xs, cond=cond, body=body, loc=loc)


# ---------------------------------------------------------------- if and case

def _if_params(true_branch, false_branch, result_types):
    return {"true_branch": _callable("if", "true_branch", true_branch),
            "false_branch": _callable("if", "false_branch", false_branch),
            "result_types": _result_types("if", result_types)}


def _if_rule(pred, true_branch, false_branch, result_types):
    if pred.shape != () or pred.dtype != _BOOL:
        raise TypeError(f"if: pred must be a 0-d bool tensor, got {pred}")
    return list(result_types)


def _branch_region(op, i, fn, result_types):
    return Region([], fn, list(result_types), f"{op}: branch {i}", isolated=False)


def _results_of(op):
    return tuple(Spec.of(shape_dtype_of(r.type)) for r in op.results)


@register("stablehlo.if", rule=_if_rule, params=_if_params,
          regions=lambda operands, true_branch, false_branch, result_types: [
              _branch_region("if", "true", true_branch, result_types),
              _branch_region("if", "false", false_branch, result_types)],
          decode=lambda op: {"true_branch": open_body(op.regions[0]), "false_branch": open_body(op.regions[1]),
                             "result_types": _results_of(op)},
          traits={"variadic", "control_flow"})
def if_(pred, true_branch, false_branch, result_types, *, loc=None) -> list:
    """Run one of two branches; emits ``stablehlo.if``.

    Args:
      pred: a 0-d bool Tensor.
      true_branch, false_branch: callables without arguments that return Tensors of
        ``result_types`` (they may use Tensors of the enclosing trace).
      result_types: a sequence of (shape, dtype) pairs (or ShapeDtypes).
    Returns:
      A list of Tensors.
    Example:
      >>> y, = ops.if_(p, lambda: ops.exp(x), lambda: x, [(x.shape, x.dtype)])
    """
    pred = operand("if", pred, "pred")
    return bind("stablehlo.if", [pred], true_branch=true_branch, false_branch=false_branch,
                result_types=result_types, loc=loc)


def _case_params(branches, result_types):
    if not isinstance(branches, (list, tuple)) or not branches:
        raise ValueError(f"case: branches must be a non-empty sequence of callables, got {branches!r}")
    return {"branches": tuple(_callable("case", f"branch {i}", f) for i, f in enumerate(branches)),
            "result_types": _result_types("case", result_types)}


def _case_rule(index, branches, result_types):
    if index.shape != () or index.dtype != np.dtype(np.int32):
        raise TypeError(f"case: index must be a 0-d int32 tensor, got {index}")
    return list(result_types)


@register("stablehlo.case", rule=_case_rule, params=_case_params,
          regions=lambda operands, branches, result_types: [
              _branch_region("case", i, f, result_types) for i, f in enumerate(branches)],
          decode=lambda op: {"branches": [open_body(r) for r in op.regions], "result_types": _results_of(op)},
          traits={"variadic", "control_flow"})
def case(index, branches, result_types, *, loc=None) -> list:
    """Run branch ``index`` (the last one when ``index`` is out of [0, len(branches)));
    emits ``stablehlo.case``.

    Args:
      index: a 0-d int32 Tensor.
      branches: callables without arguments returning Tensors of ``result_types``.
      result_types: a sequence of (shape, dtype) pairs.
    Returns:
      A list of Tensors.
    Example:
      >>> y, = ops.case(i, [lambda: a, lambda: b], [(a.shape, a.dtype)])
    """
    if not isinstance(index, Tensor) and dtypes.weak_type(index) is not None:
        index = np.int32(index)
    index = operand("case", index, "index")
    return bind("stablehlo.case", [index], branches=branches, result_types=result_types, loc=loc)


__all__ = ["while_", "if_", "case", "open_body"]
