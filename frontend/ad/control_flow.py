"""Derivative rules of control flow (frontend/ops/control_flow.py: while, if, case).

Control flow regions may use values of the enclosing trace: the walkers append those
(``Entry.captured``) to the op's operands, so a rule sees ``ins = operands + captures`` and gets
``region_op`` (the op whose regions it re-emits) and ``captured`` (the outside values they use).
Reverse mode through a while loop needs a static trip count (lax.fori_loop with static bounds,
lax.scan) and splits the body's linearization in two loops, as jax's scan partial evaluation
does: a forward loop (in the original's place) runs the body and stores per iteration what the
derivative reads (the residuals), a backward loop reads them back and runs only the derivative.
"""
from __future__ import annotations

import math

import numpy as np
from jax import tree_util

from hloforge.frontend import ops
from hloforge.frontend.ad import core
from hloforge.frontend.ad._util import (ad_state, add_any, differentiable, instantiate, latest, needs, splat,
                                        zeros_like)
from hloforge.frontend.attributes import constant_array
from hloforge.frontend.context import ir, shape_dtype_of
from hloforge.frontend.lax._trace import nested_ops, trace_body
from hloforge.frontend.registry import OPS, Spec, def_rule
from hloforge.frontend.tracing import current_builder

_I32 = np.dtype(np.int32)


def _split(ins, captured):
    n = len(ins) - len(captured)
    return ins[:n], ins[n:]


def _outer(captured, caps):
    return {v: t for v, t in zip(captured, caps)}


def _emit_region(region, args, outer):
    """Re-emit ``region``'s block here: (output Tensors, tape)."""
    return core.reemit_block(region.blocks[0], list(args), None, outer)


def _types(tensors):
    return [(t.shape, t.dtype) for t in tensors]


# ---------------------------------------------------------------- if / case

def _branch_ops(region_op, ins, captured):
    """(index operand, the regions, the outside-value mapping, the capture Tensors)."""
    operands, caps = _split(ins, captured)
    return operands[0], list(region_op.regions), _outer(captured, caps), caps


def _emit_select(name, index, bodies, types):
    if name == "stablehlo.if":
        return list(ops.if_(index, bodies[0], bodies[1], types))
    return list(ops.case(index, bodies, types))


@def_rule("jvp", "stablehlo.if", "stablehlo.case")
def _branch_jvp(ins, outs, ts, region_op, captured, **params):
    """Each branch returns its primal outputs and their tangents (forward sweep of its body)."""
    index, regions, outer, caps = _branch_ops(region_op, ins, captured)
    cap_ts = ts[len(ts) - len(caps):]
    wanted = [i for i, o in enumerate(outs) if differentiable(o.dtype)]
    if not wanted:
        return [None] * len(outs)

    def branch(region):
        def body():
            results, tape = _emit_region(region, [], outer)
            seeds = {c.value: t for c, t in zip(caps, cap_ts) if t is not None}
            tan = core.forward(tape, seeds)
            return (*results, *[instantiate(tan.get(results[i].value), results[i]) for i in wanted])
        return body

    got = _emit_select(region_op.name, index, [branch(r) for r in regions],
                       _types(outs) + [(outs[i].shape, outs[i].dtype) for i in wanted])
    tangents = [None] * len(outs)
    for i, t in zip(wanted, got[len(outs):]):
        tangents[i] = t
    return tangents


@def_rule("vjp", "stablehlo.if", "stablehlo.case")
def _branch_vjp(ins, outs, cts, region_op, captured, **params):
    """The transpose of each branch (its body re-emitted, then swept backwards), selected by the
    same predicate or index; the index gets no cotangent."""
    index, regions, outer, caps = _branch_ops(region_op, ins, captured)
    n = len(ins) - len(caps)
    wanted = [k for k, c in enumerate(caps) if differentiable(c.dtype) and needs(n + k)]
    result = [None] * len(ins)
    if not wanted:
        return result

    def branch(region):
        def body():
            results, tape = _emit_region(region, [], outer)
            seeds = {}
            for r, c in zip(results, cts):
                if c is not None and differentiable(r.dtype):
                    seeds[r.value] = add_any(seeds.get(r.value), c)
            got = core.backward(tape, seeds, core.active_values(tape, [caps[k] for k in wanted]))
            return tuple(instantiate(got.get(caps[k].value), caps[k]) for k in wanted)
        return body

    got = _emit_select(region_op.name, index, [branch(r) for r in regions], _types([caps[k] for k in wanted]))
    for k, g in zip(wanted, got):
        result[n + k] = g
    return result


# ---------------------------------------------------------------- while: jvp

@def_rule("jvp", "stablehlo.while")
def _while_jvp(ins, outs, ts, region_op, captured, cond=None, body=None):
    """Carry the tangents through the loop: the body's forward sweep gives the next ones."""
    operands, caps = _split(ins, captured)
    n = len(operands)
    diff = [i for i, x in enumerate(operands) if differentiable(x.dtype)]
    cap_diff = [k for k, c in enumerate(caps) if differentiable(c.dtype) and ts[n + k] is not None]
    if not any(ts[i] is not None for i in diff) and not cap_diff:
        return [None] * n
    outer = _outer(captured, caps)
    init = list(operands) + [instantiate(ts[i], operands[i]) for i in diff] + [ts[n + k] for k in cap_diff]
    cond_region, body_region = region_op.regions

    def cond_fn(*args):
        return _emit_region(cond_region, args[:n], outer)[0][0]

    def body_fn(*args):
        xs, txs, tcaps = args[:n], args[n:n + len(diff)], args[n + len(diff):]
        results, tape = _emit_region(body_region, xs, outer)
        seeds = {xs[i].value: t for i, t in zip(diff, txs)}
        seeds.update({caps[k].value: t for k, t in zip(cap_diff, tcaps)})
        tan = core.forward(tape, seeds)
        return (*results, *[instantiate(tan.get(results[i].value), results[i]) for i in diff], *tcaps)

    got = ops.while_(init, cond_fn, body_fn)
    tangents = [None] * n
    for i, t in zip(diff, got[n:n + len(diff)]):
        tangents[i] = t
    return tangents


# ---------------------------------------------------------------- while: trip count

def _static_value(v, block_args, operands, invariant, captured, caps):
    """The int a 0-d integer value holds at trace time, or None: a constant (inside the region or
    outside), a capture of a constant, or a loop-invariant carry whose initial value is one."""
    if isinstance(v, ir.BlockArgument):
        if v in block_args:
            j = block_args.index(v)
            if j in invariant:
                return _int_of(operands[j])
        return None
    owner = v.owner
    if getattr(owner, "name", None) == "stablehlo.constant":
        got = constant_array(owner.operation if hasattr(owner, "operation") else owner, limit=1)
        return int(got[0]) if got is not None and got[1] and got[0].dtype.kind in "iu" else None
    if v in captured:
        return _int_of(caps[captured.index(v)])
    return None


def _int_of(t):
    if t.shape != () or t.dtype.kind not in "iu":
        return None
    s = splat(t)
    return None if s is None else int(s)


_FLIP = {"LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE", "NE": "NE", "EQ": "EQ"}
_MAX_TRIPS = 2 ** 31 - 1      # the loops the vjp emits count iterations in int32
_MAX_SEGMENTS = 1 << 16       # wrap-arounds followed before the trip count is given up


def _trip_count(region_op, operands, captured, caps):
    """(trip count, loop-invariant carry positions, (counter position, start, step)) of a counted
    loop, else None: a carry ``i`` with a static start, ``i <cmp> bound`` (LT, LE, GT, GE, NE or EQ)
    with a static bound and
    ``i + step`` or ``i - step`` with a static step (the pattern lax.fori_loop, lax.scan and the
    backward loops here emit). The count is exact under the counter dtype's wrap-around, and the
    comparison's signedness; a loop that never ends, or runs more than 2**31 - 1 times, gives None."""
    cond_block, body_block = region_op.regions[0].blocks[0], region_op.regions[1].blocks[0]
    body_ret = list(body_block.operations)[-1].operation
    invariant = {j for j, v in enumerate(body_ret.operands) if v == body_block.arguments[j]}
    pred = list(cond_block.operations)[-1].operation.operands[0]
    if isinstance(pred, ir.BlockArgument) or pred.owner.name != "stablehlo.compare":
        return None
    compare = pred.owner.operation
    params = OPS["stablehlo.compare"].decode(compare)
    direction = params["direction"]
    if direction not in _FLIP:
        return None
    a, bnd = compare.operands
    cond_args = list(cond_block.arguments)
    if not (isinstance(a, ir.BlockArgument) and a in cond_args):
        a, bnd, direction = bnd, a, _FLIP[direction]
    if not (isinstance(a, ir.BlockArgument) and a in cond_args):
        return None
    k = cond_args.index(a)
    dtype = operands[k].dtype
    signed = {"SIGNED": True, "UNSIGNED": False, None: dtype.kind == "i"}.get(params["compare_type"])
    if dtype.kind not in "iu" or signed is None:
        return None
    bound = _static_value(bnd, cond_args, operands, invariant, captured, caps)
    start = _int_of(operands[k])
    step = _step(body_ret.operands[k], list(body_block.arguments), k, operands, invariant, captured, caps)
    if bound is None or start is None or step is None:
        return None
    trips = wrapped_trip_count(start, bound, step, direction, dtype.itemsize * 8, signed)
    return None if trips is None else (trips, invariant, (k, start, step))


def wrapped_trip_count(start, bound, step, direction, bits, signed):
    """How many times ``while i <direction> bound: i += step`` runs when ``i`` is a ``bits``-wide
    integer that wraps around (compared signed or unsigned), or None: it never ends, or it runs
    more than 2**31 - 1 times (or past 2**16 wrap-arounds)."""
    m = 1 << bits
    lo = -(m >> 1) if signed else 0
    hi = lo + m - 1

    def wrap(v):
        return (v - lo) % m + lo

    start, bound = wrap(start), wrap(bound)
    step = (step + (m >> 1)) % m - (m >> 1)  # the same step mod m, of least magnitude
    holds = {"LT": start < bound, "LE": start <= bound, "GT": start > bound, "GE": start >= bound,
             "NE": start != bound, "EQ": start == bound}[direction]
    if not holds:
        return 0
    if step == 0:
        return None
    if direction == "EQ":
        return 1
    if direction == "NE":  # the least t with start + t * step == bound (mod m)
        g = math.gcd(step % m, m)
        gap = (bound - start) % m
        if gap % g:
            return None
        period = m // g
        trips = gap // g * pow(step % m // g, -1, period) % period
        return trips if trips <= _MAX_TRIPS else None
    c_lo, c_hi = {"LT": (lo, bound - 1), "LE": (lo, bound), "GT": (bound + 1, hi), "GE": (bound, hi)}[direction]
    v, trips = start, 0
    for _ in range(_MAX_SEGMENTS):  # v holds the condition; run until it leaves [c_lo, c_hi]
        k = (c_hi - v) // step + 1 if step > 0 else (v - c_lo) // -step + 1
        trips, v = trips + k, v + k * step
        if trips > _MAX_TRIPS:
            return None
        if lo <= v <= hi:
            return trips
        v = wrap(v)
        if not c_lo <= v <= c_hi:
            return trips
    return None


def _step(v, body_args, k, operands, invariant, captured, caps):
    """The static s of ``v = i + s`` (or ``i - s``: -s), i the body's argument ``k``, else None."""
    if isinstance(v, ir.BlockArgument) or v.owner.name not in ("stablehlo.add", "stablehlo.subtract"):
        return None
    x, y = v.owner.operation.operands
    sign = 1
    if v.owner.name == "stablehlo.subtract":
        if x != body_args[k]:
            return None
        sign = -1
    elif y == body_args[k]:
        x, y = y, x
    if x != body_args[k]:
        return None
    s = _static_value(y, body_args, operands, invariant, captured, caps)
    return None if s is None or s == 0 else sign * s


_WHILE_ERROR = ("hloforge AD: reverse-mode differentiation of stablehlo.while needs a loop with a static trip "
                "count: use hloforge.lax.fori_loop with static bounds or hloforge.lax.scan (as in jax, "
                "reverse mode does not work for lax.while_loop or fori_loop with dynamic start/stop values; "
                "jvp/jacfwd work)")


# ---------------------------------------------------------------- while: vjp

# Ops a backward loop recomputes from the loop counter rather than store per iteration (the index
# arithmetic of lax.scan and the slices of its xs it reads): cheap next to a stored buffer's
# dynamic_update_slice and dynamic_slice. Ops that read no carry but the counter's and invariant
# ones (a weight's transpose) are recomputed whatever they are, as the loop body computes them.
_RECOMPUTED = frozenset(f"stablehlo.{name}" for name in (
    "constant", "iota", "reshape", "broadcast_in_dim", "convert", "dynamic_slice", "slice", "transpose",
    "compare", "select", "add", "subtract", "multiply", "negate", "clamp", "get_tuple_element", "tuple"))


def _const(value, dtype):
    """A 0-d constant emitted here (not AD's per-block splat cache: the forward loop is emitted
    before ops that the cache's constants may follow)."""
    return ops.constant(np.asarray(value, dtype))


def _zeros(shape, dtype):
    return ops.broadcast_in_dim(_const(0, dtype), tuple(shape), ())


def _counter_at(t, dtype, start, step):
    """start + t * step in the counter's dtype (wrapping as the loop's own counter does)."""
    bits = dtype.itemsize * 8
    wrap = lambda v: np.asarray(v % (1 << bits), np.uint64).astype(dtype)  # noqa: E731
    tt = ops.convert(t, dtype) if t.dtype != dtype else t
    return ops.add(ops.constant(wrap(start)), ops.multiply(tt, ops.constant(wrap(step))))


def _inner_values(op):
    """The values ``op`` reads: its operands and, for control flow, the outside values its regions use."""
    return list(op.operands) + (core.captured_values(op) if len(op.regions) else [])


def _remap(op, mapping):
    """Replace, in ``op`` and the ops nested in it, every operand that ``mapping`` names."""
    for inner in [op, *nested_ops(op)]:
        for j, v in enumerate(inner.operands):
            new = mapping.get(v)
            if new is not None:
                inner.operands[j] = new


def _induction_carries(args, res_of, operands, static, invariant, trips) -> dict:
    """{carry position: (its value at the first iteration, at the last)} of the integer carries
    that the traced step (block arguments ``args``, next carries ``res_of``) moves by a static
    nonzero amount from a static start without wrapping around: the loop's counter, and the
    fori_loop index jax's lowering carries beside scan's own counter."""
    found = {}
    for j, x in enumerate(operands):
        if j in invariant or x.shape != () or x.dtype.kind not in "iu":
            continue
        start, off = _int_of(x), _counter_offset(res_of[j], {args[j]}, static)
        if start is None or off is None or off[1] != 1 or off[2] == 0:
            continue
        info, last = np.iinfo(x.dtype), start + (trips - 1) * off[2]
        if info.min <= min(start, last) and max(start, last) <= info.max:
            found[j] = (start, last)
    return found


def _counter_offset(v, counters, static, depth=4):
    """(counter, sign, c) when ``v`` is ``sign * counter + c``, a value of ``counters`` through
    adds and subtracts of static ints (``static(c)``: ``counter + c``, ``n - counter - 1``), else None."""
    if v in counters:
        return v, 1, 0
    if depth == 0 or isinstance(v, ir.BlockArgument) or v.owner.name not in ("stablehlo.add", "stablehlo.subtract"):
        return None
    x, y = v.owner.operation.operands
    sub = v.owner.name == "stablehlo.subtract"
    cx, cy = static(x), static(y)
    if cy is not None:
        off = _counter_offset(x, counters, static, depth - 1)
        return None if off is None else (off[0], off[1], off[2] - cy if sub else off[2] + cy)
    if cx is not None:
        off = _counter_offset(y, counters, static, depth - 1)
        return None if off is None else (off[0], -off[1], cx - off[2]) if sub else (off[0], off[1], cx + off[2])
    return None


def _is_negative_test(pred, k, static) -> bool:
    """Whether ``pred`` is ``k < 0``."""
    if isinstance(pred, ir.BlockArgument) or pred.owner.name != "stablehlo.compare":
        return False
    compare = pred.owner.operation
    a, z = compare.operands
    return a == k and OPS["stablehlo.compare"].decode(compare)["direction"] == "LT" and static(z) == 0


def _row_span(v, counters, static):
    """(the row ``v`` indexes at the first iteration, at the last) when ``v`` is ``counter``,
    ``counter + c`` or ``c - counter`` (``counters``: step value -> its (first, last) values), also
    behind the negative-index wrap of jnp and jax's fori_loop bodies (``select(k < 0, k + n, k)``)
    where k is never negative; else None."""
    if not isinstance(v, ir.BlockArgument) and v.owner.name == "stablehlo.select":
        pred, _, k = v.owner.operation.operands
        span = _row_span(k, counters, static)
        if span is None or min(span) < 0 or not _is_negative_test(pred, k, static):
            return None
        return span
    off = _counter_offset(v, counters, static)
    if off is None:
        return None
    counter, sign, c = off
    first, last = counters[counter]
    return sign * first + c, sign * last + c


def _unzeroed(g, seed, counters, static, trips) -> bool:
    """Whether the cotangent ``g`` of a carry is ``dynamic_update_slice(seed, 0, [k(counter), ...])``
    with one row written per iteration, a different one each time, and the step reads ``seed``
    only there and in dynamic_slices at the same indices (lax.scan's stacked outputs, fori_loop's
    dynamic_update_slice at its index). The backward loop then reads each row once, before any
    iteration would zero it, so the zeroing can go: the cotangent is the incoming one, an invariant
    of the backward loop (no copy of the buffer per iteration). Only where the carry's initial
    value needs no cotangent (it would get the rows zeroed)."""
    if g is None or isinstance(g.value, ir.BlockArgument) or g.value.owner.name != "stablehlo.dynamic_update_slice":
        return False
    dus = g.value.owner.operation
    operand, update, *index = dus.operands
    rows = shape_dtype_of(operand.type)[0]
    if operand != seed or not rows or shape_dtype_of(update.type)[0][0] != 1:
        return False
    span = _row_span(index[0], counters, static)
    # (distinct rows: the index moves by a nonzero step, so every row between its ends once)
    if span is None or span[0] == span[1] and trips > 1 or not (0 <= min(span) and max(span) < rows[0]):
        return False
    if isinstance(update, ir.BlockArgument) or update.owner.name != "stablehlo.constant":
        return False
    got = constant_array(update.owner.operation, limit=1)
    if got is None or not got[1] or got[0].ravel()[0] != 0:
        return False
    for use in seed.uses:
        user = use.owner
        user = user.operation if hasattr(user, "operation") else user
        if user == dus:
            continue
        if user.name != "stablehlo.dynamic_slice" or list(user.operands)[1:] != index:
            return False
    return True


# Elementwise ops whose result the backward loop recomputes from stored residuals rather than
# store it too (``u * u`` beside ``u``, of ``u * u * u``): one op against a buffer written and read.
_REMADE = frozenset(f"stablehlo.{name}" for name in ("multiply", "add", "subtract", "negate"))


def _remade_residuals(residuals, cheap, defining) -> set:
    """The residuals an op of _REMADE computes from other stored residuals and cheap values only."""
    remade = set()
    for v in residuals:
        op = defining.get(v)
        if op is None or op.name not in _REMADE:
            continue
        if all(r in cheap or (r in residuals and r not in remade and r != v) for r in op.operands):
            remade.add(v)
    return remade


def _static_in_step(args, operands, caps, invariant):
    """value -> the int it holds at trace time, or None, for the values of the traced loop step
    (block arguments: the carries, then the captures): constants, invariant carries and captures
    holding one (jax's loop bodies read their index constants through such carries)."""
    n, nc = len(operands), len(caps)

    def static(v):
        if isinstance(v, ir.BlockArgument) and v in args[n:n + nc]:
            return _int_of(caps[args.index(v) - n])
        return _static_value(v, args[:n], operands, invariant, (), ())
    return static


def _split_step(block, n, nc, invariant, counter, swept):
    """Partition a traced loop step (the body re-emitted, then swept backwards from cotangent
    block arguments) for loop fission, as jax's partial evaluation of scan's body does.

    Block arguments: the carries (n), the captures (nc), the cotangent seeds; the backward sweep's
    ops start at index ``swept`` (an optimization_barrier there, a checkpoint's, counts as reading
    a cotangent: the ops it guards are recomputed in the backward loop). The ops that read no
    cotangent stay in the forward loop; the others go to the backward one; the values those read
    from the forward side are recomputed there when cheap (constants, invariants, functions of
    the loop counter by ``_RECOMPUTED`` ops) and stored per iteration otherwise (residuals).
    Returns (forward ops, [(backward op, the values it reads)], cheap values, varying values,
    value -> its forward op, the step's own values)."""
    args = list(block.arguments)
    tangent = set(args[n + nc:])
    cheap = {a for j, a in enumerate(args[:n]) if j in invariant} | set(args[n:n + nc])
    counted = set()
    if counter is not None:
        cheap.add(args[counter])
        counted.add(args[counter])
    varying = {a for j, a in enumerate(args[:n]) if j not in invariant and j != counter}
    local = set(args)
    fwd, bwd, defining = [], [], {}
    for k, op in enumerate(block.operations):
        op = op.operation
        reads = _inner_values(op)
        results = list(op.results)
        local.update(results)
        # (a checkpoint's barrier in the backward sweep: what it guards is recomputed backwards)
        if any(v in tangent for v in reads) or (k >= swept and op.name == "stablehlo.optimization_barrier"):
            tangent.update(results)
            bwd.append((op, reads))
            continue
        fwd.append(op)
        for r in results:
            defining[r] = op
        reads_local = [v for v in reads if v in local]
        if any(v in varying for v in reads_local) or not all(v in cheap for v in reads_local):
            varying.update(results)
            continue
        if any(v in counted for v in reads_local):
            if op.name not in _RECOMPUTED:
                varying.update(results)
                continue
            counted.update(results)
        cheap.update(results)
    return fwd, bwd, cheap, varying, defining, local


@def_rule("vjp", "stablehlo.while")
def _while_vjp(ins, outs, cts, region_op, captured, cond=None, body=None):
    """Loop fission of the body's linearization, as jax's scan transpose: one forward loop runs
    the body and stores per iteration the values its derivative reads (the residuals); a backward
    loop from the last iteration down reads them (dynamic_slice) and runs only the derivative.
    The forward loop takes the original loop's place (its results replace the original's, which
    the passes then remove), so the body runs once per iteration forwards."""
    operands, caps = _split(ins, captured)
    n, nc = len(operands), len(caps)
    found = _trip_count(region_op, operands, captured, caps)
    if found is None:
        raise NotImplementedError(_WHILE_ERROR)
    trips, invariant, (counter, c_start, c_step) = found
    # (an invariant carry's cotangent reaches no other carry: none where its initial value needs none)
    diff = [i for i in range(n) if differentiable(operands[i].dtype) and (needs(i) or i not in invariant)]
    cap_diff = [k for k, c in enumerate(caps) if differentiable(c.dtype) and needs(n + k)]
    dropped = {i for i in diff if not needs(i)}  # (carries whose initial value gets no cotangent)
    result = [None] * len(ins)
    if trips == 0:
        for i in diff:
            result[i] = cts[i]
        return result
    body_region = region_op.regions[1]
    b = current_builder("hloforge AD")
    saved_ip = b.ip
    anchor = _loop_here(region_op, outs, saved_ip.block)
    if anchor is not None:
        b.ip = ir.InsertionPoint(anchor)
    try:
        # the step, traced once: the body, then its backward sweep from cotangent placeholders
        got_x, got_c, res_of, swept = [], [], [], []

        def step(args):
            xs, cap_args, seeds_in = args[:n], args[n:n + nc], args[n + nc:]
            results, tape = _emit_region(body_region, xs, _outer(captured, cap_args))
            swept.append(len(current_builder().ip.block.operations))  # (the backward sweep's ops follow)
            seeds = {}
            for i, s in zip(diff, seeds_in):
                seeds[results[i].value] = add_any(seeds.get(results[i].value), s)
            sources = [xs[i] for i in diff] + [cap_args[k] for k in cap_diff]
            grads = core.backward(tape, seeds, core.active_values(tape, sources))
            res_of.extend(latest(r.value) for r in results)  # (a nested loop's forward loop's results)
            got_x.extend(grads.get(xs[i].value) for i in diff)
            got_c.extend(grads.get(cap_args[k].value) for k in cap_diff)
            return ()

        specs = [Spec(x.shape, x.dtype) for x in operands] + [Spec(c.shape, c.dtype) for c in caps] \
            + [Spec(operands[i].shape, operands[i].dtype) for i in diff]
        traced = trace_body(step, specs, tree_util.tree_structure(tuple(range(len(specs)))),
                            "hloforge AD: while loop step")
        try:
            return _fission(b, saved_ip, traced, operands, caps, invariant, counter, c_start, c_step, trips, diff,
                            cap_diff, cts, res_of, got_x, got_c, anchor, outs, result, dropped, swept[0])
        finally:
            traced.discard()
    finally:
        b.ip = saved_ip


def _loop_here(region_op, outs, block):
    """The while op whose place the forward loop takes, in ``block`` (the trace's): ``region_op``
    itself (hf.grad of a traced function), or its re-emission whose results are ``outs``
    (Module.vjp, hf.to_jax), so that uses of the loop's results inside the module read the forward
    loop's and the loop runs once; else None."""
    if region_op.block == block:
        return region_op
    owner = outs[0].value.owner if outs and not isinstance(outs[0].value, ir.BlockArgument) else None
    owner = getattr(owner, "operation", owner)
    if owner is not None and owner.name == "stablehlo.while" and owner.block == block and \
            [o.value for o in outs] == list(owner.results):
        return owner
    return None


def _fission(b, end_ip, traced, operands, caps, invariant, counter, c_start, c_step, trips, diff, cap_diff,
             cts, res_of, got_x, got_c, anchor, outs, result, dropped, swept):
    n, nc = len(operands), len(caps)
    block = traced.block
    args = list(block.arguments)
    seed_of = dict(zip(diff, args[n + nc:]))
    if counter is not None:  # (a stacked output's cotangent passes through: see _unzeroed)
        static = _static_in_step(args, operands, caps, invariant)
        counters = {args[j]: span for j, span in
                    _induction_carries(args, res_of, operands, static, invariant, trips).items()}
        got_x = [b.tensor(seed_of[i]) if i in dropped and _unzeroed(g, seed_of[i], counters, static, trips)
                 else g for g, i in zip(got_x, diff)]
    fwd_ops, bwd_ops, cheap, varying, defining, local = _split_step(block, n, nc, invariant, counter, swept)
    outputs = [g.value for g in got_x if g is not None] + [g.value for g in got_c if g is not None]
    tangent = set(args[n + nc:])
    for op, _ in bwd_ops:
        tangent.update(op.results)
    residuals, needed = {}, {}
    for v in [v for _, reads in bwd_ops for v in reads] + outputs:
        if v in tangent or v not in local:
            continue
        if v in cheap:
            needed[v] = None
        else:
            residuals[v] = None
    remade = _remade_residuals(residuals, cheap, defining)
    needed.update(dict.fromkeys(remade))
    residuals = [v for v in residuals if v not in remade]
    stored = set(residuals)
    # the recomputed ops the backward loop needs, in program order (from the stored residuals)
    clones, stack = set(), [v for v in needed if v in defining]
    while stack:
        op = defining[stack.pop()]
        if op in clones:
            continue
        clones.add(op)
        stack.extend(v for v in _inner_values(op) if v in defining and v not in stored)
    clones = [op for op in fwd_ops if op in clones]
    i32 = _I32
    nr = len(residuals)
    res_specs = [shape_dtype_of(v.type) for v in residuals]

    # forward: the body's ops (and the derivative's that read no cotangent), residuals stored
    def fwd_cond(*a):
        return ops.compare(a[0], _const(trips, i32), "LT")

    def fwd_body(*a):
        t, xs, bufs, cap_a = a[0], a[1:n + 1], a[n + 1:n + 1 + nr], a[n + 1 + nr:]
        mapping = {old: new.value for old, new in zip(args, [*xs, *cap_a])}
        fwd_args.update(mapping)
        for op in fwd_ops:
            op.detach_from_parent()
            b.ip.insert(op)
            _remap(op, mapping)
        z = _const(0, i32)
        new_bufs = []
        for buf, v in zip(bufs, residuals):
            r = b.tensor(mapping.get(v, v))
            new_bufs.append(ops.dynamic_update_slice(buf, ops.reshape(r, (1, *r.shape)), [t] + [z] * r.ndim))
        results = [b.tensor(mapping.get(v, v)) for v in res_of]
        return (ops.add(t, _const(1, i32)), *results, *new_bufs, *cap_a)

    fwd_args = {}  # (the step's block arguments -> the forward body's)
    init = [_const(0, i32), *operands, *[_zeros((trips, *s), d) for s, d in res_specs], *caps]
    fwd = ops.while_(init, fwd_cond, fwd_body)
    # the forward loop computes the loop's results: it takes the place of the loop where that is in
    # this block, else only of the outputs the trace returns (ADState.replaced, Module.vjp's)
    replaced = ad_state().replaced
    for old, new in zip(list(anchor.results)[:n] if anchor is not None else [o.value for o in outs[:n]],
                        fwd[1:n + 1]):
        if anchor is not None:
            old.replace_all_uses_with(new.value)
        replaced[old] = new.value
    bufs = fwd[n + 1:n + 1 + nr]
    b.ip = end_ip

    # backward: t = trips - 1 ... 0, the derivative's ops over the stored residuals
    ct0 = [instantiate(cts[i], operands[i]) for i in diff]
    acc0 = [zeros_like(caps[k]) for k in cap_diff]
    inv_pos = sorted(invariant)
    inv = [operands[j] for j in inv_pos]
    nd, na = len(diff), len(cap_diff)

    def at(buf, t, z):
        piece = ops.dynamic_slice(buf, [t] + [z] * (buf.ndim - 1), (1, *buf.shape[1:]))
        return ops.reshape(piece, buf.shape[1:])

    def bwd_cond(*a):
        return ops.compare(a[0], _const(0, i32), "GE")

    def bwd_body(*a):
        t = a[0]
        cs, accs = a[1:1 + nd], a[1 + nd:1 + nd + na]
        bs = a[1 + nd + na:1 + nd + na + nr]
        invs = a[1 + nd + na + nr:1 + nd + na + nr + len(inv)]
        cap_a = a[1 + nd + na + nr + len(inv):]
        z = _const(0, i32)
        mapping = {s: c.value for s, c in zip(args[n + nc:], cs)}
        mapping.update({args[j]: v.value for j, v in zip(inv_pos, invs)})
        mapping.update({args[n + k]: v.value for k, v in enumerate(cap_a)})
        if counter is not None and counter not in invariant:
            mapping[args[counter]] = _counter_at(t, operands[counter].dtype, c_start, c_step).value
        for buf, v in zip(bs, residuals):
            mapping[v] = at(buf, t, z).value
        # (the clones copy forward-loop ops, which read the forward body's arguments)
        of_fwd = {fwd_args[k]: v for k, v in mapping.items() if k in fwd_args}
        for op in clones:
            new = op.clone(ip=b.ip)
            _remap(new, {**mapping, **of_fwd})
            mapping.update(zip(op.results, new.results))
            of_fwd.update(zip(op.results, new.results))
        for op, _ in bwd_ops:
            op.detach_from_parent()
            b.ip.insert(op)
            _remap(op, mapping)

        def tensor(g):
            return None if g is None else b.tensor(mapping.get(g.value, g.value))

        new_cs = [instantiate(tensor(g), operands[i]) for g, i in zip(got_x, diff)]
        new_accs = [add_any(acc, tensor(g)) for acc, g in zip(accs, got_c)]
        return (ops.subtract(t, _const(1, i32)), *new_cs, *new_accs, *bs, *invs, *cap_a)

    bwd = ops.while_([_const(trips - 1, i32), *ct0, *acc0, *bufs, *inv, *caps], bwd_cond, bwd_body)
    for i, c in zip(diff, bwd[1:1 + nd]):
        result[i] = c
    for k, c in zip(cap_diff, bwd[1 + nd:1 + nd + na]):
        result[n + k] = c
    return result
