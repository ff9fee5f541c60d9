"""Derivative rules of the windowed ops (frontend/ops/window.py): reduce_window and
select_and_scatter (JAX's rules, jax/_src/lax/windowed_reductions.py)."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.ad._util import add_any, instantiate, needs, sum_to_scalar, zeros_like
from hloforge.frontend.ad.convolution import vjp_lhs_padding
from hloforge.frontend.registry import def_rule

_CHOOSE = {"max": "GE", "min": "LE"}


def _window(window_dimensions, window_strides, base_dilations, window_dilations, padding):
    n = len(window_dimensions)
    return (tuple(window_strides or (1,) * n), tuple(base_dilations or (1,) * n),
            tuple(window_dilations or (1,) * n), tuple(padding or ((0, 0),) * n))


def _chooser(direction):
    """A variadic body over (value, carried) pairs keeping the pair whose value wins ``direction``."""
    def body(a, ta, b, tb):
        keep = ops.compare(a, b, direction)
        return ops.select(keep, a, b), ops.select(keep, ta, tb)
    return body


def _gather_chosen(x, t, direction, window_dimensions, **window):
    """select_and_gather_add: per window, the element of ``t`` where ``x`` wins (jax's rule)."""
    worst = -np.inf if direction in ("GE", "GT") else np.inf
    return ops.reduce_window([x, t], [worst, 0], window_dimensions,
                             body=_chooser(direction), **window)[1]


def _window_taps(x, fill, window_dimensions, window_strides, base_dilations, window_dilations, padding):
    """(the padded, base-dilated operand, [(start, limit, strides) of the strided slice of each tap])."""
    strides, base, wdil, pads = _window(window_dimensions, window_strides, base_dilations, window_dilations, padding)
    padded = ops.pad(x, fill, [lo for lo, _ in pads], [hi for _, hi in pads], [b - 1 for b in base])
    out_shape = [0 if n == 0 or (w - 1) * wd + 1 > n else (n - (w - 1) * wd - 1) // s + 1
                 for n, w, wd, s in zip(padded.shape, window_dimensions, wdil, strides)]
    taps = []
    for pos in np.ndindex(*window_dimensions):
        start = [p * wd for p, wd in zip(pos, wdil)]
        limit = [b + (m - 1) * s + 1 for b, m, s in zip(start, out_shape, strides)]
        taps.append((start, limit, list(strides)))
    return padded, taps


def _untap(padded_ct, x, window_dimensions, window_strides, base_dilations, window_dilations, padding):
    """The transpose of ``_window_taps``'s pad: crop the padding, keep every base-th element."""
    strides, base, wdil, pads = _window(window_dimensions, window_strides, base_dilations, window_dilations, padding)
    r = ops.pad(padded_ct, 0, [-lo for lo, _ in pads], [-hi for _, hi in pads], [0] * x.ndim)
    if any(b > 1 for b in base):
        r = ops.slice(r, [0] * x.ndim, r.shape, list(base))
    return r


def _mul_window_vjp(x, init, c, **window):
    """Product windows, zero-safe: each tap's cotangent is c times the product of the other taps
    (prefix and suffix products), scattered back by the transpose of its strided slice."""
    padded, taps = _window_taps(x, init, **window)
    slices = [ops.slice(padded, *t) for t in taps]
    n = len(slices)
    prefix = [None] * n
    suffix = [None] * n
    acc = None
    for i in range(n):
        prefix[i] = acc
        acc = slices[i] if acc is None else ops.multiply(acc, slices[i])
    acc = None
    for i in reversed(range(n)):
        suffix[i] = acc
        acc = slices[i] if acc is None else ops.multiply(acc, slices[i])
    scaled = ops.multiply(c, ops.broadcast_in_dim(init, c.shape, ()))
    total = None
    for i, (start, limit, strides) in enumerate(taps):
        others = scaled
        for p in (prefix[i], suffix[i]):
            if p is not None:
                others = ops.multiply(others, p)
        high = [m - (b + (k - 1) * s + 1) for m, b, k, s in zip(padded.shape, start, others.shape, strides)]
        total = add_any(total, ops.pad(others, 0, start, high, [s - 1 for s in strides]))
    return _untap(total, x, **window)


def _chosen_window_vjp(x, init, c, y, **window):
    """max/min windows with dilations (jax has no rule): each window's cotangent goes to the first
    tap attaining the result (select_and_scatter's GE/LE choice), scattered back per tap."""
    padded, taps = _window_taps(x, init, **window)
    taken = None
    total = None
    for start, limit, strides in taps:
        hit = ops.compare(ops.slice(padded, start, limit, strides), y, "EQ")
        if taken is not None:
            hit = ops.and_(hit, ops.not_(taken))
        taken = hit if taken is None else ops.or_(taken, hit)
        part = ops.select(hit, c, zeros_like(c))
        high = [m - (b + (k - 1) * s + 1) for m, b, k, s in zip(padded.shape, start, c.shape, strides)]
        total = add_any(total, ops.pad(part, 0, start, high, [s - 1 for s in strides]))
    return _untap(total, x, **window)


def _is_running_sum(shape, window_dimensions, strides, base, wdil, pads) -> bool:
    """Whether a reduce_window is a cumulative sum as jax lowers lax.cumsum: one window of a whole
    axis n, padded by n - 1 on one side; no strides, dilations or other windows."""
    axes = [d for d, w in enumerate(window_dimensions) if w != 1]
    if len(axes) != 1 or any(v != 1 for v in (*strides, *base, *wdil)):
        return False
    ax, n = axes[0], shape[axes[0]]
    return window_dimensions[ax] == n and sorted(pads[ax]) == [0, n - 1] and \
        all(p == (0, 0) for d, p in enumerate(pads) if d != ax)


@def_rule("jvp", "stablehlo.reduce_window")
def _reduce_window_jvp(ins, outs, ts, body, **window):
    if len(ins) != 2 or not isinstance(body, str):
        raise NotImplementedError("hloforge AD: stablehlo.reduce_window is differentiable with one operand and "
                                  f"an add, mul, max or min body, got {len(ins) // 2} operand(s), body {body!r}")
    x, init = ins
    tx, ti = ts
    if body == "add":
        return [ops.reduce_window(instantiate(tx, x), instantiate(ti, init), body="add", **window)]
    if body in _CHOOSE:
        if tx is None:
            return [None]
        return [_gather_chosen(x, tx, _CHOOSE[body], **window)]
    if body == "mul":
        def prod(a, ta, b, tb):
            return ops.multiply(a, b), ops.add(ops.multiply(ta, b), ops.multiply(a, tb))
        return [ops.reduce_window([x, instantiate(tx, x)], [init, instantiate(ti, init)], body=prod, **window)[1]]
    return [None]  # and/or: integer results


@def_rule("vjp", "stablehlo.reduce_window")
def _reduce_window_vjp(ins, outs, cts, body, window_dimensions, window_strides, base_dilations,
                       window_dilations, padding):
    window = dict(window_dimensions=window_dimensions, window_strides=window_strides,
                  base_dilations=base_dilations, window_dilations=window_dilations, padding=padding)
    if len(ins) != 2 or not isinstance(body, str):
        return _reduce_window_jvp(ins, outs, [None] * len(ins), body, **window)
    x, init = ins
    c = cts[0]
    strides, base, wdil, pads = _window(**window)
    if body == "add" and _is_running_sum(x.shape, window_dimensions, strides, base, wdil, pads):
        mirrored = tuple((hi, lo) for lo, hi in pads)  # (jax's _cumsum_transpose_rule: cumsum from the other end)
        ct_x = ops.reduce_window(c, 0, window_dimensions, window_strides=strides, padding=mirrored, body="add")
        return [ct_x, sum_to_scalar(c) if needs(1) else None]
    if body == "add":  # jax's _reduce_window_sum_transpose_rule
        t_pads = vjp_lhs_padding(x.shape, window_dimensions, strides, c.shape, pads, base, wdil)
        padded = ops.pad(c, 0, [lo for lo, _ in t_pads], [hi for _, hi in t_pads], [s - 1 for s in strides])
        ct_x = ops.reduce_window(padded, 0, window_dimensions, window_strides=base, window_dilations=wdil,
                                 body="add")
        return [ct_x, sum_to_scalar(c) if needs(1) else None]
    if body in _CHOOSE:
        if any(b > 1 for b in base) or any(w > 1 for w in wdil):  # (select_and_scatter has no dilations)
            return [_chosen_window_vjp(x, init, c, outs[0], **window), None]
        return [ops.select_and_scatter(x, c, 0, window_dimensions, window_strides=strides, padding=pads,
                                       select=_CHOOSE[body], scatter="add"), None]
    if body == "mul":
        ct_init = None
        if needs(1):  # d y / d init = y / init per window
            ct_init = sum_to_scalar(ops.multiply(c, ops.divide(outs[0], ops.broadcast_in_dim(init, c.shape, ()))))
        return [_mul_window_vjp(x, init, c, **window), ct_init]
    return [None, None]


def _sas_check(select, scatter):
    if not isinstance(select, str) or scatter != "add":
        raise NotImplementedError("hloforge AD: stablehlo.select_and_scatter is differentiable with a named select "
                                  f"(GE, GT, LE, LT) and an add scatter, got select {select!r}, scatter {scatter!r}")


@def_rule("jvp", "stablehlo.select_and_scatter")
def _sas_jvp(ins, outs, ts, select, scatter, **window):
    """Linear in the source and the init value; the selection does not move."""
    _sas_check(select, scatter)
    x, source, init = ins
    if ts[1] is None and ts[2] is None:
        return [None]
    return [ops.select_and_scatter(x, instantiate(ts[1], source), instantiate(ts[2], init), select=select,
                                   scatter=scatter, **window)]


@def_rule("vjp", "stablehlo.select_and_scatter")
def _sas_vjp(ins, outs, cts, select, scatter, window_dimensions, window_strides, padding):
    """The source's cotangent gathers the cotangent at each window's selected element."""
    _sas_check(select, scatter)
    x, source, init = ins
    c = cts[0]
    ct_source = _gather_chosen(x, c, select, window_dimensions, window_strides=window_strides,
                               padding=padding) if needs(1) else None
    return [None, ct_source, sum_to_scalar(c) if needs(2) else None]
