"""Derivative rules of the indexing ops (frontend/ops/slicing.py): gather, scatter and
dynamic_update_slice (JAX's rules: gather's transpose is a scatter-add, scatter's are gathers of
the cotangent, with index operands getting no cotangent)."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.ad._util import add_any, full, instantiate, needs, zeros_like
from hloforge.frontend.registry import def_rule

_I32 = np.dtype(np.int32)


# ---------------------------------------------------------------- gather, scatter, dynamic_update_slice

@def_rule("jvp", "stablehlo.gather")
def _gather_jvp(ins, outs, ts, **params):
    return [ops.gather(ts[0], ins[1], **params)]


def _clamped_starts(indices, index_vector_dim, start_index_map, limits):
    """``indices`` with entry k of each index vector clamped into [0, limits[k]], as gather does."""
    hi = np.asarray(limits, dtype=indices.dtype)
    if index_vector_dim == indices.ndim:
        top = full(int(hi[0]), indices.shape, indices.dtype)
    else:
        top = ops.broadcast_in_dim(ops.constant(hi), indices.shape, (index_vector_dim,))
    return ops.clamp(full(0, indices.shape, indices.dtype), indices, top)


@def_rule("vjp", "stablehlo.gather")
def _gather_vjp(ins, outs, cts, offset_dims, collapsed_slice_dims, start_index_map, index_vector_dim, slice_sizes,
                operand_batching_dims, start_indices_batching_dims, indices_are_sorted):
    """Scatter-add the cotangent back, at the start indices clamped as gather clamps them
    (scatter would skip windows that do not fit instead)."""
    x, indices = ins
    limits = [x.shape[d] - slice_sizes[d] for d in start_index_map]
    starts = _clamped_starts(indices, index_vector_dim, start_index_map, limits)
    ct = ops.scatter(zeros_like(x), starts, cts[0], offset_dims, collapsed_slice_dims, start_index_map,
                     index_vector_dim, "add", input_batching_dims=operand_batching_dims,
                     scatter_indices_batching_dims=start_indices_batching_dims, indices_are_sorted=indices_are_sorted)
    return [ct, None]


def _scatter_dims(x, updates, update_window_dims, inserted_window_dims, input_batching_dims):
    """The window size of each operand dim (1 for inserted and batching dims)."""
    window = [d for d in range(x.ndim) if d not in inserted_window_dims and d not in input_batching_dims]
    sizes = [1] * x.ndim
    for u, d in zip(update_window_dims, window):
        sizes[d] = updates.shape[u]
    return sizes


def _gather_updates(t, indices, updates, p):
    """The values of ``t`` at each update's position (a gather with the scatter's dims)."""
    sizes = _scatter_dims(t, updates, p["update_window_dims"], p["inserted_window_dims"], p["input_batching_dims"])
    return ops.gather(t, indices, p["update_window_dims"], p["inserted_window_dims"],
                      p["scatter_dims_to_operand_dims"], p["index_vector_dim"], sizes,
                      operand_batching_dims=p["input_batching_dims"],
                      start_indices_batching_dims=p["scatter_indices_batching_dims"],
                      indices_are_sorted=p["indices_are_sorted"])


def _in_bounds(x, indices, updates, p):
    """A bool Tensor of the updates' shape: whether the update's window fits in x (scatter skips
    the others)."""
    sizes = _scatter_dims(x, updates, p["update_window_dims"], p["inserted_window_dims"], p["input_batching_dims"])
    dims = p["scatter_dims_to_operand_dims"]
    ivd = p["index_vector_dim"]
    hi = np.asarray([x.shape[d] - sizes[d] for d in dims], dtype=indices.dtype)
    if ivd == indices.ndim:
        top = full(int(hi[0]), indices.shape, indices.dtype)
    else:
        top = ops.broadcast_in_dim(ops.constant(hi), indices.shape, (ivd,))
    ok = ops.and_(ops.compare(indices, full(0, indices.shape, indices.dtype), "GE"), ops.compare(indices, top, "LE"))
    if ivd < indices.ndim:
        ok = ops.reduce(ok, True, (ivd,), "and")
    scatter_dims = [d for d in range(updates.ndim) if d not in p["update_window_dims"]]
    return ops.broadcast_in_dim(ok, updates.shape, tuple(scatter_dims))


def _masked(mask, t):
    return ops.select(mask, t, zeros_like(t))


def _scatter_call(x, indices, updates, computation, p):
    kw = {k: v for k, v in p.items() if k not in ("update_window_dims", "inserted_window_dims",
                                                    "scatter_dims_to_operand_dims", "index_vector_dim")}
    return ops.scatter(x, indices, updates, p["update_window_dims"], p["inserted_window_dims"],
                       p["scatter_dims_to_operand_dims"], p["index_vector_dim"], computation, **kw)


def _scatter_kind(computation):
    if not isinstance(computation, str) or computation not in ("set", "add", "mul", "max", "min"):
        raise NotImplementedError("hloforge AD: stablehlo.scatter is differentiable with set, add, mul, max and "
                                  f"min update computations, got {computation!r}")
    return computation


def _winners(x, indices, updates, p):
    """(ids of the updates' elements, the id that ended up at each position of x, the id at
    each update's position): an update element is the one that landed iff its two ids agree
    (jax's rule for scatter with possibly repeated indices)."""
    ids = ops.reshape(ops.add(ops.iota((updates.size,), _I32, 0), full(1, (updates.size,), _I32)), updates.shape)
    landed = _scatter_call(full(0, x.shape, _I32), indices, ids, "set", p)
    return ids, landed, _gather_updates(landed, indices, updates, p)


def _extremal_parts(ins, outs, p):
    x, indices, updates = ins
    out = outs[0]
    at_x = ops.convert(ops.compare(x, out, "EQ"), x.dtype)
    at_u = ops.convert(ops.compare(updates, _gather_updates(out, indices, updates, p), "EQ"), x.dtype)
    count = ops.add(at_x, _scatter_call(zeros_like(x), indices, at_u, "add", p))
    return at_x, at_u, count


def _unique_only(p, what):
    if not p["unique_indices"]:
        raise NotImplementedError(f"hloforge AD: the {what} of stablehlo.scatter with a mul computation w.r.t. the "
                                  "updates is only implemented for unique_indices=True (as in jax)")


@def_rule("jvp", "stablehlo.scatter")
def _scatter_jvp(ins, outs, ts, computation, **p):
    kind = _scatter_kind(computation)
    x, indices, updates = ins
    tx, tu = ts[0], ts[2]
    if kind == "add":
        return [_scatter_call(instantiate(tx, x), indices, instantiate(tu, updates), "add", p)]
    if kind == "set":
        ids, landed, back = _winners(x, indices, updates, p)
        kept_x = _masked(ops.compare(landed, full(0, x.shape, _I32), "EQ"), instantiate(tx, x))
        won = _masked(ops.compare(ids, back, "EQ"), instantiate(tu, updates))
        return [_scatter_call(kept_x, indices, won, "add", p)]
    if kind == "mul":
        out = None if tx is None else _scatter_call(tx, indices, updates, "mul", p)
        if tu is not None:
            _unique_only(p, "jvp")
            out = add_any(out, ops.multiply(x, _scatter_call(zeros_like(x), indices, tu, "add", p)))
        return [out]
    at_x, at_u, count = _extremal_parts(ins, outs, p)
    num = ops.multiply(at_x, instantiate(tx, x))
    num = ops.add(num, _scatter_call(zeros_like(x), indices, ops.multiply(at_u, instantiate(tu, updates)), "add", p))
    return [ops.divide(num, count)]


@def_rule("vjp", "stablehlo.scatter")
def _scatter_vjp(ins, outs, cts, computation, **p):
    kind = _scatter_kind(computation)
    x, indices, updates = ins
    c = cts[0]
    ct_x = ct_u = None
    if kind == "add":
        ct_x = c
        if needs(2):
            ct_u = _masked(_in_bounds(x, indices, updates, p), _gather_updates(c, indices, updates, p))
    elif kind == "set":
        ids, landed, back = _winners(x, indices, updates, p)
        if needs(0):
            ct_x = _masked(ops.compare(landed, full(0, x.shape, _I32), "EQ"), c)
        if needs(2):
            ct_u = _masked(ops.compare(ids, back, "EQ"), _gather_updates(c, indices, updates, p))
    elif kind == "mul":
        if needs(0):
            ct_x = _scatter_call(c, indices, updates, "mul", p)
        if needs(2):
            _unique_only(p, "vjp")
            ct_u = _masked(_in_bounds(x, indices, updates, p),
                           _gather_updates(ops.multiply(c, x), indices, updates, p))
    else:
        at_x, at_u, count = _extremal_parts(ins, outs, p)
        share = ops.divide(c, count)
        ct_x = ops.multiply(at_x, share) if needs(0) else None
        if needs(2):
            ct_u = _masked(_in_bounds(x, indices, updates, p),
                           ops.multiply(at_u, _gather_updates(share, indices, updates, p)))
    return [ct_x, None, ct_u]


@def_rule("jvp", "stablehlo.dynamic_update_slice")
def _dus_jvp(ins, outs, ts):
    x, update, starts = ins[0], ins[1], ins[2:]
    return [ops.dynamic_update_slice(instantiate(ts[0], x), instantiate(ts[1], update), starts)]


@def_rule("vjp", "stablehlo.dynamic_update_slice")
def _dus_vjp(ins, outs, cts):
    """The operand gets the cotangent with the written window zeroed, the update the window
    (dynamic_slice clamps the starts as dynamic_update_slice does)."""
    update, starts = ins[1], ins[2:]
    c = cts[0]
    ct_x = ops.dynamic_update_slice(c, zeros_like(update), starts) if needs(0) else None
    ct_u = ops.dynamic_slice(c, starts, update.shape) if needs(1) else None
    return [ct_x, ct_u] + [None] * len(starts)
