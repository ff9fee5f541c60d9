"""Batching rules of ``frontend/ops/window.py``: the batch dimension gets a window of one element
(stride 1, no dilation, no padding), so each window stays inside one example and the batch
dimension stays where it is. A batched init value (one per example) has no batched form, since
the op's init is one scalar that also fills the padding: those ops are emitted once per example
(``_loop.per_example``)."""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.batching._loop import per_example
from hloforge.frontend.batching._util import bdim_at, common_dim
from hloforge.frontend.registry import def_rule


def _inserted(values, d, value):
    if values is None:
        return None
    out = list(values)
    out.insert(d, value)
    return out


def _window_at(d, window_dimensions, window_strides=None, padding=None, **dilations):
    """The window attributes with the batch dimension ``d`` as a window of one element."""
    out = {"window_dimensions": _inserted(window_dimensions, d, 1), "window_strides": _inserted(window_strides, d, 1),
           "padding": _inserted(padding, d, (0, 0))}
    return {**out, **{k: _inserted(v, d, 1) for k, v in dilations.items()}}


@def_rule("batch", "stablehlo.reduce_window")
def _reduce_window_batch(size, ins, dims, *, body, **window):
    """Pattern: reduce_window(x[b at d], init, w) -> reduce_window(x, init, w with a window of 1
    at d)[b at d]; a batched init: one reduce_window per example."""
    n = len(ins) // 2
    xs, x_dims, inits, init_dims = ins[:n], dims[:n], ins[n:], dims[n:]
    if any(d is not None for d in init_dims):
        def emit(*operands):
            return list(ops.reduce_window(list(operands[:n]), list(operands[n:]), body=body, **window))
        return per_example(size, ins, dims, emit)
    xs, d = common_dim(xs, x_dims, size)
    out = ops.reduce_window(list(xs), list(inits), body=body, **_window_at(d, **window))
    return list(out), [d] * len(out)


@def_rule("batch", "stablehlo.select_and_scatter")
def _select_and_scatter_batch(size, ins, dims, *, window_dimensions, window_strides, padding, select, scatter):
    """Pattern: select_and_scatter(x[b at d], s, init, w) -> select_and_scatter(x, s, init, w with a
    window of 1 at d)[b at d] (x and s batched at one dimension); a batched init: one per example."""
    (x, source, init), (xd, sd, vd) = ins, dims
    params = dict(window_dimensions=window_dimensions, window_strides=window_strides, padding=padding,
                  select=select, scatter=scatter)
    if vd is not None:
        return per_example(size, ins, dims, lambda *operands: [ops.select_and_scatter(*operands, **params)])
    d = xd if xd is not None else sd
    x, source = bdim_at(x, xd, size, d), bdim_at(source, sd, size, d)
    window = _window_at(d, window_dimensions, window_strides, padding)
    out = ops.select_and_scatter(x, source, init, select=select, scatter=scatter, **window)
    return [out], [d]
