"""Batching rules of ``frontend/ops/control_flow.py``: while, if, case (jax's semantics).

A region is batched by re-emitting its per-example block inside the new op's region (over the
first example of each batched argument or capture: a slice the sweep maps to the batched value,
zeros of its shape when the batch is empty) and running the same sweep (``core.batch_tape``) over
that copy; the per-example copy is then erased. Which results of a region come out batched is decided before the op is built, by a
dependence walk over its block (``_batched_results``: a value is batched when an op that
computes it reads a batched value, directly or in its own regions) — an over-approximation of
what the rules give, so a result the rules leave unbatched is broadcast.

- while: carries are batched when their initial value is or when the body makes them so (a
  fixpoint over the body, as jax's ``_while_loop_batching_rule``). A batched predicate makes
  every carry the body changes batched: the loop runs while any example's predicate holds, and
  each step keeps the carries of the examples whose predicate is false (``select(pred_b, new,
  old)``; a carry the body returns unchanged needs none and stays unbatched).
- if/case with an unbatched predicate or index: one op whose branches are batched, each output
  at dimension 0 in every branch. With a batched one: every branch runs (inline, no region)
  and each example's result is selected, as jax does (so a branch's side effects happen for
  every example; case sends out-of-range indices to the last branch, as stablehlo.case does).
"""
from __future__ import annotations

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.ad.core import captured_values, reemit_block
from hloforge.frontend.batching._regions import Tidy, placeholder
from hloforge.frontend.batching._util import bdim_at
from hloforge.frontend.batching.core import WHAT, batch_tape
from hloforge.frontend.context import shape_dtype_of
from hloforge.frontend.registry import def_rule


def _batched_results(block, batched) -> list:
    """For each operand of ``block``'s terminator: whether it depends on a value of ``batched``."""
    batched = set(batched)
    for op in block.operations:
        op = op.operation
        if op.name in ("stablehlo.return", "func.return"):
            return [v in batched for v in op.operands]
        reads = list(op.operands) + (captured_values(op) if len(op.regions) else [])
        if any(v in batched for v in reads):
            batched.update(op.results)
    raise ValueError(f"{WHAT}: a region block has no terminator")


def _emit_batched(region, args, arg_dims, captured, caps, cap_dims, size) -> list:
    """Re-emit ``region``'s block here over batched ``args`` and captures and batch it:
    [(Tensor, batch dimension or None)] per output. The per-example copy is left for a ``Tidy``."""
    env, inner, outer = {}, [], {}
    for x, d in zip(args, arg_dims):
        inner.append(placeholder(x, d, env))
    for v, c, d in zip(captured, caps, cap_dims):
        outer[v] = placeholder(c, d, env)
    outs, tape = reemit_block(region.blocks[0], inner, None, outer)
    batch_tape(tape, env, size)
    return [env.get(o.value, (o, None)) for o in outs]


def _split(ins, dims, captured):
    n = len(ins) - len(captured)
    return ins[:n], dims[:n], ins[n:], dims[n:]


# ---------------------------------------------------------------- while

def _batched_carries(region_op, carry_dims, captured, cap_dims) -> tuple:
    """(batched flag per carry, whether the predicate is batched): the body's fixpoint, then the
    predicate (a batched predicate batches every carry the body changes)."""
    cond, body = (r.blocks[0] for r in region_op.regions)
    outside = {v for v, d in zip(captured, cap_dims) if d is not None}
    flags = [d is not None for d in carry_dims]
    while True:
        args = {a for a, f in zip(body.arguments, flags) if f}
        grown = [f or g for f, g in zip(flags, _batched_results(body, outside | args))]
        if grown == flags:
            break
        flags = grown
    pred = _batched_results(cond, outside | {a for a, f in zip(cond.arguments, flags) if f})[0]
    if pred:  # (a carry the body returns unchanged stays as it is: select(p, x, x) is x)
        ret = list(body.operations)[-1].operation.operands
        flags = [f or ret[j] != a for j, (a, f) in enumerate(zip(body.arguments, flags))]
    return flags, pred


@def_rule("batch", "stablehlo.while")
def _while_batch(size, ins, dims, *, region_op, captured, cond=None, body=None):
    """Pattern: while(x[b]) -> while(x) with the body batched; carries the body batches are
    broadcast first (fixpoint); a batched predicate p[b] runs while any(p) and updates each carry
    as select(p, body(x), x)."""
    carries, carry_dims, caps, cap_dims = _split(ins, dims, captured)
    flags, batched_pred = _batched_carries(region_op, carry_dims, captured, cap_dims)
    out_dims = [(d if d is not None else 0) if f else None for d, f in zip(carry_dims, flags)]
    init = [bdim_at(x, d, size, o) if o is not None else x for x, d, o in zip(carries, carry_dims, out_dims)]
    cond_region, body_region = region_op.regions

    def run(region, args):
        return _emit_batched(region, args, out_dims, captured, caps, cap_dims, size)

    def predicate(args):
        (p, d), = run(cond_region, args)
        return p if d is None else bdim_at(p, d, size, 0)

    def cond_fn(*args):
        tidy = Tidy()
        p = predicate(args)
        if batched_pred:
            p = ops.reduce(p, np.bool_(False), (0,), "or") if p.ndim else p
        tidy([p])
        return p

    def body_fn(*args):
        tidy = Tidy()
        new = [_at(t, d, o, size) for (t, d), o in zip(run(body_region, args), out_dims)]
        if batched_pred:
            p = predicate(args)
            new = [y if y.value == x.value else _select(p, y, x, 0 if o is None else o)
                   for x, y, o in zip(args, new, out_dims)]
        tidy(new)
        return tuple(new)

    return ops.while_(init, cond_fn, body_fn), out_dims


def _at(t, d, o, size):
    """A region output (batch dimension ``d``) at the dimension ``o`` its op's result has."""
    if o is None:
        if d is not None:
            raise RuntimeError(f"{WHAT}: a region output the dependence walk found unbatched came out batched")
        return t
    return bdim_at(t, d, size, o)


# ---------------------------------------------------------------- if / case

def _batched_outputs(region_op, captured, cap_dims) -> list:
    outside = {v for v, d in zip(captured, cap_dims) if d is not None}
    flags = [False] * len(region_op.results)
    for region in region_op.regions:
        flags = [f or g for f, g in zip(flags, _batched_results(region.blocks[0], outside))]
    return flags


def _branches_batch(size, ins, dims, region_op, captured):
    (index,), (index_dim,), caps, cap_dims = _split(ins, dims, captured)
    regions = list(region_op.regions)
    if index_dim is not None:
        return _selected(size, index, index_dim, regions, captured, caps, cap_dims, region_op.name)
    out_dims = [0 if f else None for f in _batched_outputs(region_op, captured, cap_dims)]

    def branch(region):
        def body():
            tidy = Tidy()
            outs = [_at(t, d, o, size) for (t, d), o in zip(
                _emit_batched(region, [], [], captured, caps, cap_dims, size), out_dims)]
            tidy(outs)
            return tuple(outs)
        return body

    types = []
    for r, o in zip(region_op.results, out_dims):
        shape, dtype = shape_dtype_of(r.type)
        types.append((tuple(shape) if o is None else (size, *shape), dtype))
    bodies = [branch(r) for r in regions]
    if region_op.name == "stablehlo.if":
        outs = ops.if_(index, bodies[0], bodies[1], types)
    else:
        outs = ops.case(index, bodies, types)
    return list(outs), out_dims


def _selected(size, index, index_dim, regions, captured, caps, cap_dims, name):
    """Every branch run, each example's result selected by its predicate or index."""
    index = bdim_at(index, index_dim, size, 0)
    tidy = Tidy()
    results = [[bdim_at(t, d, size, 0) for t, d in _emit_batched(r, [], [], captured, caps, cap_dims, size)]
               for r in regions]
    if name == "stablehlo.if":  # (region 0 is the true branch)
        outs = [_select(index, t, f) for t, f in zip(results[0], results[1])]
    else:
        outs = results[-1]
        for k in range(len(regions) - 2, -1, -1):
            hit = ops.compare(index, ops.constant(np.full(index.shape, k, np.int32)), "EQ")
            outs = [_select(hit, a, b) for a, b in zip(results[k], outs)]
    tidy(outs)
    return outs, [0] * len(outs)


def _select(pred, on_true, on_false, d=0):
    """select(pred, on_true, on_false), ``pred`` (one per example, or 0-d) along dimension ``d``."""
    if pred.ndim and pred.shape != on_true.shape:
        pred = ops.broadcast_in_dim(pred, on_true.shape, (d,))
    return ops.select(pred, on_true, on_false)


@def_rule("batch", "stablehlo.if")
def _if_batch(size, ins, dims, *, region_op, captured, true_branch=None, false_branch=None,
              result_types=None):
    """Pattern: if(p, f, g) over batched captures -> if(p, batched f, batched g); if(p[b], f, g) ->
    select(p, f(), g()) with both branches batched and run."""
    return _branches_batch(size, ins, dims, region_op, captured)


@def_rule("batch", "stablehlo.case")
def _case_batch(size, ins, dims, *, region_op, captured, branches=None, result_types=None):
    """Pattern: case(i, fs) over batched captures -> case(i, batched fs); case(i[b], fs) -> every
    branch run, select(i == k, f_k(), ...) with the last branch for out-of-range indices."""
    return _branches_batch(size, ins, dims, region_op, captured)
