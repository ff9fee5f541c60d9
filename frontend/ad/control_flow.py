"""Derivative rules of control flow (frontend/ops/control_flow.py: while, if, case).

Control flow regions may use values of the enclosing trace: the walkers append those
(``Entry.captured``) to the op's operands, so a rule sees ``ins = operands + captures`` and gets
``region_op`` (the op whose regions it re-emits) and ``captured`` (the outside values they use).
Reverse mode through a while loop needs a static trip count (lax.fori_loop with static bounds,
lax.scan): a forward loop stores every iteration's carries in stacked buffers, a backward loop
reads them back and runs the body's vjp, as jax's scan transpose does.
"""
from __future__ import annotations

import math

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.ad import core
from hloforge.frontend.ad._util import add_any, differentiable, full, instantiate, needs, splat, zeros_like
from hloforge.frontend.attributes import constant_array
from hloforge.frontend.context import ir
from hloforge.frontend.registry import OPS, def_rule

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
    """(trip count, loop-invariant carry positions) of a counted loop, else None: a carry ``i``
    with a static start, ``i <cmp> bound`` (LT, LE, GT, GE, NE or EQ) with a static bound and
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
    return None if trips is None else (trips, invariant)


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

@def_rule("vjp", "stablehlo.while")
def _while_vjp(ins, outs, cts, region_op, captured, cond=None, body=None):
    """A forward loop stores the carries each iteration starts with (stacked along a new leading
    dim, dynamic_update_slice); a backward loop from the last iteration down reads them
    (dynamic_slice), re-emits the body and sweeps it backwards."""
    operands, caps = _split(ins, captured)
    n = len(operands)
    found = _trip_count(region_op, operands, captured, caps)
    if found is None:
        raise NotImplementedError(_WHILE_ERROR)
    trips, invariant = found
    diff = [i for i in range(n) if differentiable(operands[i].dtype)]
    cap_diff = [k for k, c in enumerate(caps) if differentiable(c.dtype) and needs(n + k)]
    result = [None] * len(ins)
    if trips == 0:
        for i in diff:
            result[i] = cts[i]
        return result
    body_region = region_op.regions[1]
    stored = [i for i in range(n) if i not in invariant]
    zero = full(0, (), _I32)

    def at(buf, t):
        piece = ops.dynamic_slice(buf, [t] + [zero] * (buf.ndim - 1), (1, *buf.shape[1:]))
        return ops.reshape(piece, buf.shape[1:])

    # forward: bufs[j][t] = carry j at the start of iteration t
    bufs0 = [full(0, (trips, *operands[i].shape), operands[i].dtype) for i in stored]

    def fwd_cond(*args):
        return ops.compare(args[0], full(trips, (), _I32), "LT")

    def fwd_body(*args):
        t, xs = args[0], list(args[1:n + 1])
        bufs, cap_args = args[n + 1:n + 1 + len(stored)], args[n + 1 + len(stored):]
        z = full(0, (), _I32)
        new_bufs = [ops.dynamic_update_slice(buf, ops.reshape(xs[i], (1, *xs[i].shape)), [t] + [z] * xs[i].ndim)
                    for buf, i in zip(bufs, stored)]
        results, _ = _emit_region(body_region, xs, _outer(captured, cap_args))
        return (ops.add(t, full(1, (), _I32)), *results, *new_bufs, *cap_args)

    fwd = ops.while_([zero, *operands, *bufs0, *caps], fwd_cond, fwd_body)
    bufs = fwd[n + 1:n + 1 + len(stored)]

    # backward: t = trips - 1 ... 0
    ct0 = [instantiate(cts[i], operands[i]) for i in diff]
    acc0 = [zeros_like(caps[k]) for k in cap_diff]
    inv = [operands[i] for i in sorted(invariant)]
    nd, na, nb = len(diff), len(cap_diff), len(bufs)

    def bwd_cond(*args):
        return ops.compare(args[0], full(0, (), _I32), "GE")

    def bwd_body(*args):
        t = args[0]
        cs, accs = args[1:1 + nd], args[1 + nd:1 + nd + na]
        bs = args[1 + nd + na:1 + nd + na + nb]
        invs = args[1 + nd + na + nb:1 + nd + na + nb + len(inv)]
        cap_args = args[1 + nd + na + nb + len(inv):]
        xs = [None] * n
        for buf, i in zip(bs, stored):
            xs[i] = at(buf, t)
        for x, i in zip(invs, sorted(invariant)):
            xs[i] = x
        inner_outer = _outer(captured, cap_args)
        results, tape = _emit_region(body_region, xs, inner_outer)
        seeds = {}
        for i, c in zip(diff, cs):
            seeds[results[i].value] = add_any(seeds.get(results[i].value), c)
        sources = [xs[i] for i in diff] + [cap_args[k] for k in cap_diff]
        got = core.backward(tape, seeds, core.active_values(tape, sources))
        new_cs = [instantiate(got.get(xs[i].value), xs[i]) for i in diff]
        new_accs = [add_any(a, got.get(cap_args[k].value)) for a, k in zip(accs, cap_diff)]
        return (ops.subtract(t, full(1, (), _I32)), *new_cs, *new_accs, *bs, *invs, *cap_args)

    bwd = ops.while_([full(trips - 1, (), _I32), *ct0, *acc0, *bufs, *inv, *caps], bwd_cond, bwd_body)
    for i, c in zip(diff, bwd[1:1 + nd]):
        result[i] = c
    for k, c in zip(cap_diff, bwd[1 + nd:1 + nd + na]):
        result[n + k] = c
    return result
