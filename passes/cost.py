"""The estimated run time of a module under a cost model (``target.CostModel``): what ``hf.optimize``
compares before it hands back its rewrite of a jax program, so that what the passes cannot improve
comes back no slower than jax's own program (issue 47).

Only the work the passes trade is counted: FFTs (``CostModel.fft_cost``) and ``dot_general``s
(``CostModel.dft_cost`` of their flops, four real products per complex one). A private function
counts once per call, so inlining it changes nothing; a loop's body counts once (a rewrite keeps
its trip count). Elementwise and data-movement ops are left out: the exact passes only remove them.
"""
from __future__ import annotations

import math

import numpy as np

from hloforge.frontend.calls import callee_name, function_name
from hloforge.frontend.context import ir
from hloforge.passes._ir import dtype_of, params_of, shape_of


def estimate(module, model) -> float:
    """Estimated ns of one run of ``module``'s entry function: its FFTs and dot_generals, and those of
    the functions it calls, each as often as called (loop bodies once).

    Example:
      >>> estimate(hf.trace(f, x), hloforge.target.CPU)
      1843.2
    """
    functions = {function_name(f): f for f in module.functions()}
    memo: dict = {}

    def cost_of(name: str, calling: tuple) -> float:
        if name in memo:
            return memo[name]
        if name in calling or name not in functions:  # (recursion is not StableHLO; an external: unknown)
            return 0.0
        total = 0.0

        def visit(op):
            nonlocal total
            op = op.operation
            if op.name == "func.call":
                total += cost_of(callee_name(op), calling + (name,))
            elif op.name == "stablehlo.fft":
                total += _fft_cost(op, model)
            elif op.name == "stablehlo.dot_general":
                total += model.dft_cost(_dot_flops(op))
            return ir.WalkResult.ADVANCE

        with module.context:
            functions[name].operation.walk(visit, ir.WalkOrder.PRE_ORDER)
        memo[name] = total
        return total

    return cost_of(module.entry, ())


def _fft_cost(op, model) -> float:
    params = params_of(op)
    lengths = params["fft_length"]
    shape = shape_of(op.results[0])
    if any(d is None for d in shape):
        return 0.0
    return model.fft_cost(params["fft_type"], math.prod(shape[:len(shape) - len(lengths)]), lengths)


def _dot_flops(op) -> int:
    params = params_of(op)
    lhs, result = shape_of(op.operands[0]), shape_of(op.results[0])
    if any(d is None for d in lhs + result):
        return 0
    contracted = math.prod(lhs[d] for d in params["lhs_contracting_dimensions"])
    complex_factor = 4 if dtype_of(op.results[0]).kind == "c" else 1
    return 2 * int(np.prod(result, dtype=np.int64)) * contracted * complex_factor
