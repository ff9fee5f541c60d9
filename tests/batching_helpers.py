"""Checks for batching: hf.vmap against a loop over the examples (the per-example function compiled
once with hf.jit and run on each slice, results stacked), and against jax.vmap."""
from __future__ import annotations

import numpy as np
from jax import tree_util

import hloforge as hf

# per-dtype tolerances for rules whose batched kernel may round differently (dot, conv, reductions)
TOLERANCE = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12,
             np.dtype(np.complex64): 1e-5, np.dtype(np.complex128): 1e-12}


def _axes_per_leaf(in_axes, args):
    if not isinstance(in_axes, (tuple, list)):
        in_axes = (in_axes,) * len(args)
    out = []
    for a, arg in zip(in_axes, args):
        n = len(tree_util.tree_leaves(arg))
        out.extend(tree_util.tree_leaves(a, is_leaf=lambda v: v is None) if isinstance(a, (tuple, list, dict))
                   else [a] * n)
    return out


def loop_reference(fn, args, in_axes=0, out_axes=0):
    """``fn`` run on each example (hf.jit, one compile) and stacked along ``out_axes`` (an int)."""
    leaves, tree = tree_util.tree_flatten(tuple(args))
    axes = _axes_per_leaf(in_axes, args)
    size = {np.shape(x)[a] for x, a in zip(leaves, axes) if a is not None}
    assert len(size) == 1, size
    size = size.pop()
    step = hf.jit(fn)
    outs = []
    for i in range(size):
        example = [x if a is None else np.take(np.asarray(x), i, axis=a) for x, a in zip(leaves, axes)]
        outs.append(step(*tree_util.tree_unflatten(tree, example)))
    return tree_util.tree_map(lambda *ys: np.stack([np.asarray(y) for y in ys], axis=out_axes), *outs)


def assert_same(got, want, exact=True):
    got_l, got_t = tree_util.tree_flatten(got)
    want_l, want_t = tree_util.tree_flatten(want)
    assert got_t == want_t, (got_t, want_t)
    for g, w in zip(got_l, want_l):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        if exact or w.dtype not in TOLERANCE:
            np.testing.assert_array_equal(g, w)
        else:
            tol = TOLERANCE[w.dtype]
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def check_vmap(fn, *args, in_axes=0, out_axes=0, exact=True):
    """hf.vmap(fn) on ``args`` equals the loop over the examples (bit for bit unless ``exact=False``);
    returns the batched result."""
    got = hf.vmap(fn, in_axes=in_axes, out_axes=out_axes)(*args)
    assert_same(got, loop_reference(fn, args, in_axes, out_axes), exact)
    return got


def empty_batch_cases(np_, lax_) -> dict:
    """name -> (function of one example, the example's [(shape, dtype)]): a function per construct
    whose batch rule takes one example of the batch (region bodies, composites, a map's body) or
    indexes by batched values, built from ``np_``/``lax_`` (hloforge.numpy and hloforge.lax, or
    jax.numpy and jax.lax): the cases of a batch of size 0 (docs/vmap.md)."""
    f32, i32 = np.float32, np.int32
    return {
        "cond": (lambda x: lax_.cond(x.sum() > 0, lambda v: v + 1, lambda v: v - 1, x), [((3,), f32)]),
        "cond_unbatched_predicate": (lambda x: lax_.cond(np_.ones((), f32) > 0, lambda v: v + 1, lambda v: v * 2, x),
                                     [((3,), f32)]),
        "switch": (lambda x: lax_.switch((x.sum() > 0).astype(i32), [lambda v: v + 1, lambda v: v * 2], x),
                   [((3,), f32)]),
        "switch_batched_index": (lambda x, i: lax_.switch(i, [lambda v: v + 1, lambda v: v * 2, np_.sin], x),
                                 [((3,), f32), ((), i32)]),
        "while_loop": (lambda x: lax_.while_loop(lambda v: v.sum() < 10, lambda v: v + 1, x), [((3,), f32)]),
        "fori_loop": (lambda x, n: lax_.fori_loop(0, n, lambda i, v: v * 2 + 1, x), [((3,), f32), ((), i32)]),
        "scan": (lambda x: lax_.scan(lambda c, r: (c + r, c * r), np_.zeros(3, f32), x), [((4, 3), f32)]),
        "map": (lambda x: lax_.map(lambda r: r * 2 + 1, x), [((4, 3), f32)]),
        "gather": (lambda x, i: x[i], [((5, 2), f32), ((3,), i32)]),
        "scatter": (lambda x, i, u: x.at[i].add(u), [((5,), f32), ((2,), i32), ((2,), f32)]),
        "dynamic_slice": (lambda x, i: lax_.dynamic_slice(x, (i,), (2,)), [((5,), f32), ((), i32)]),
        "linalg_solve": (lambda a, b: np_.linalg.solve(a, b), [((3, 3), f32), ((3,), f32)]),
    }
