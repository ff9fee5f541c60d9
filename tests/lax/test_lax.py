"""hloforge.lax against jax.lax on the same inputs: control flow over pytree carries, closures,
nested and zero-trip loops, reverse scans; indexing; ordering; and every error message."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import tree_util

import hloforge as hf
from hloforge import lax
from hloforge import numpy as hnp
from hloforge.frontend.lax._trace import nested_ops

from helpers import PLATFORM, assert_close, platform_rtol

X = np.linspace(-2, 3, 12, dtype=np.float32).reshape(3, 4)
V = np.array([3.0, -1.0, 2.5, 0.5, -4.0, 2.5], np.float32)


def _both(fn, *args, rtol=1e-5):
    """fn(lax, np-like) traced by hloforge and by jax.jit; every leaf compared."""
    got = hf.jit(lambda *a: fn(lax, hnp, *a))(*args)
    want = jax.jit(lambda *a: fn(jax.lax, jnp, *a))(*args)
    g, w = tree_util.tree_leaves(got), tree_util.tree_leaves(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        b = np.asarray(b)
        assert_close(np.asarray(a), b, dtype=b.dtype, rtol=rtol if b.dtype.kind in "fc" else None)
    return got


def _control_flow(L, N, x, n):
    s = x.sum()
    out = {}
    # while over a pytree carry, with a closure over x and s
    out["while"] = L.while_loop(lambda c: c["i"] < n, lambda c: {"i": c["i"] + 1, "acc": (c["acc"][0] * 0.5 + x, c["acc"][1] + s)},
                                {"i": 0, "acc": (x, s)})
    # zero-trip loops (static and traced bounds)
    out["zero"] = L.while_loop(lambda c: c[0] > 100, lambda c: (c[0] + 1, c[1] * 2), (0, x))
    out["fori_zero"] = L.fori_loop(3, 3, lambda i, v: v + 1.0, x)
    out["fori"] = L.fori_loop(0, n, lambda i, v: v * 0.9 + i.astype(v.dtype) * x, x)
    out["fori_neg"] = L.fori_loop(n, 0, lambda i, v: v + 1.0, x)
    # nested loops, the inner one capturing the outer index and an outer value
    out["nested"] = L.fori_loop(0, 3, lambda i, v: L.fori_loop(0, i + 1, lambda j, w: w + x * j.astype(w.dtype), v), x)
    # scan, forward and reverse, pytree carry and xs, ys pytree
    def step(c, xs):
        a, b = xs
        return (c[0] + a * b.sum(), c[1] * 1.01), {"y": c[0] - a, "z": b * s}
    out["scan"] = L.scan(step, (np.float32(0), x[0]), (x[:, 0], x))
    out["scan_rev"] = L.scan(step, (np.float32(0), x[0]), (x[:, 0], x), reverse=True, unroll=2)
    out["scan_len"] = L.scan(lambda c, _: (c + s, c * 2), np.float32(1), None, length=4)
    out["map"] = L.map(lambda r: (r * s).sum(), x)
    out["map_batched"] = L.map(lambda r: {"r": r * s, "m": r.max()}, x, batch_size=2)  # one batch and a remainder
    # cond / switch with operands, pytree outputs and closures
    out["cond"] = L.cond(s > 0, lambda a, b: (a * 2, b - s), lambda a, b: (a - s, b * 3), x, x[0])
    out["cond_int"] = L.cond(n, lambda: x + 1, lambda: x - 1)
    out["switch"] = [L.switch(k, [lambda a: a + s, lambda a: a * 2, lambda a: -a], x) for k in (0, 1, 2, 7, -3)]
    out["switch_traced"] = L.switch(n, [lambda: x, lambda: x * 2, lambda: x * 3])
    out["cond_in_loop"] = L.fori_loop(0, 4, lambda i, v: L.cond(i % 2 == 0, lambda: v + x, lambda: v * 0.5), x)
    return out


@pytest.mark.parametrize("n", [0, 1, 5])
def test_control_flow_matches_jax(n):
    _both(_control_flow, X, np.int32(n))


def _slicing(L, N, x, i, idx):
    out = [L.select(x > 0, x, -x), L.select(True, x, x * 2)]
    out += [L.dynamic_slice(x, (i, 1), (2, 2)), L.dynamic_slice(x, (-1, i), (1, 3)), L.dynamic_slice(x, (5, -9), (2, 2))]
    out += [L.dynamic_update_slice(x, x[:2, :2] * 10, (i, 3)), L.dynamic_update_slice(x, x[:1] * 0, (-1, 0))]
    out += [L.dynamic_index_in_dim(x, i, 1), L.dynamic_index_in_dim(x, -1, 0, keepdims=False)]
    dn = L.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    for mode in (None, "clip", "fill", L.GatherScatterMode.PROMISE_IN_BOUNDS):
        out.append(L.gather(x, idx[:, None], dn, (1, 4), mode=mode))
    out.append(L.gather(x, idx[:, None], dn, (1, 4), mode="fill", fill_value=-7.0))
    sdn = L.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    upd = jnp.ones((idx.shape[0], 4), jnp.float32) if N is jnp else hnp.ones((idx.shape[0], 4), np.float32)
    for fn in (L.scatter_add, L.scatter_mul, L.scatter_min, L.scatter_max):
        for mode in (None, "clip"):
            out.append(fn(x, idx[:, None], upd * 3.0, sdn, mode=mode))
    out.append(L.scatter(x, idx[:1, None], upd[:1] * 5, sdn))
    # batched gather: one row index per batch element
    bdn = L.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
                                   operand_batching_dims=(0,), start_indices_batching_dims=(0,))
    out.append(L.gather(x, (idx[:3] % 4)[:, None], bdn, (1, 1)))
    return out


def test_slicing_matches_jax():
    _both(_slicing, X, np.int32(2), np.array([2, 0, 2, 5, -1], np.int32))


def _ordering(L, N, v, x):
    out = [L.sort(v), L.sort(x, dimension=0), L.sort((x[0] > 0, x[1], x[2]), num_keys=2), L.sort((v, v * 2), num_keys=1)]
    out += list(L.top_k(v, 3)) + list(L.top_k(x, 2))
    for f in (L.cumsum, L.cumprod, L.cummax, L.cummin):
        out += [f(v), f(x, axis=1, reverse=True), f(x, 0)]
    out += [L.cumsum(v.astype(jnp.int32 if N is jnp else np.int32))]
    out += [L.argmax(v, 0, jnp.int32), L.argmin(x, 1, jnp.int32), L.argmax(x, 0, np.uint8)]
    out += [L.iota(jnp.int32, 5), L.broadcasted_iota(jnp.float32, (2, 3), 1)]
    return out


def test_ordering_matches_jax():
    _both(_ordering, V, X)


def test_cumsum_rounds_as_jax_and_so_does_its_gradient():
    """One reduce_window per running sum, as jax lowers lax.cumsum and jnp.cumsum (XLA turns the
    long window into a scan of its own), and jax's transpose: the same bits, forward and backward."""
    x = np.random.default_rng(5).standard_normal((3, 700)).astype(np.float32)
    z = (x + 1j * x[::-1]).astype(np.complex64)

    def sums(L, N, x, z):
        return [L.cumsum(x, 1), L.cumsum(x, 1, reverse=True), L.cumsum(x, 0), N.cumsum(x, axis=-1), L.cumsum(z, 1)]

    def loss(L, N):
        return lambda x: sum(N.sum(s * s) for s in sums(L, N, x, x.astype(np.complex64))).real
    got = hf.jit(lambda x, z: (sums(lax, hnp, x, z), hf.grad(loss(lax, hnp))(x)))(x, z)
    want = jax.jit(lambda x, z: (sums(jax.lax, jnp, x, z), jax.grad(loss(jax.lax, jnp))(x)))(x, z)
    for g, w in zip(tree_util.tree_leaves(got), tree_util.tree_leaves(want)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    assert hf.trace(lambda x: lax.cumsum(x, 1), x).op_counts()["stablehlo.reduce_window"] == 1


def test_cumprod_and_cumlogsumexp_round_as_jax_and_differentiate_as_its_scan():
    """One reduce_window each, as jax lowers them (forward bits equal), in a composite whose
    derivative is the associative scan's, as jax's is; vmap keeps the composite, so grad of vmap
    differentiates the scan too (not the window's rule, a multiply per tap)."""
    # (XLA:TPU compiles jax's own 300-tap windows for minutes (over 90 s; 48 taps: 8.5 s), so shorter there)
    x = np.random.default_rng(6).uniform(0.5, 1.5, (3, 300 if PLATFORM == "cpu" else 48)).astype(np.float32)

    def scans(L, x):
        return [L.cumprod(x, 1), L.cumprod(x, 0, reverse=True), L.cumlogsumexp(x, 1), L.cumlogsumexp(x, 1, reverse=True)]
    got = hf.jit(lambda x: scans(lax, x))(x)
    want = jax.jit(lambda x: scans(jax.lax, x))(x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))

    def loss(L, N, vmap):
        return lambda x: sum(N.sum(s * s) for s in scans(L, x)) + N.sum(vmap(lambda r: L.cumprod(r, 0))(x))
    short = x[:, :12]  # (the scans' derivative programs compile for seconds at 300)
    got = hf.grad(loss(lax, hnp, hf.vmap))(short)
    want = jax.jit(jax.grad(loss(jax.lax, jnp, jax.vmap)))(short)
    assert_close(np.asarray(got), np.asarray(want), rtol=platform_rtol(2e-6))
    counts = hf.trace(hf.grad(lambda x: hnp.sum(hf.vmap(lax.cumprod)(x))), x).op_counts()
    assert counts["stablehlo.composite"] == 1 and counts["stablehlo.multiply"] < 100, counts  # (not 300 taps)


def test_top_k_orders_floats_as_jax_nan_first_and_negative_nan_last():
    v = np.array([[0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1.0, -1.0, 1.0]], np.float32)
    got = hf.jit(lambda v: [lax.top_k(v, 9), lax.top_k(-v, 4)])(v)
    want = jax.jit(lambda v: [jax.lax.top_k(v, 9), jax.lax.top_k(-v, 4)])(v)
    for g, w in zip(tree_util.tree_leaves(got), tree_util.tree_leaves(want)):
        assert np.asarray(g).tobytes() == np.asarray(w).tobytes()


def test_argmax_nan_and_ties():
    """The first NaN, else the first of tied extremes, as numpy, in any reduction order. (jax's comparator
    chooses between two NaNs by the order XLA reduces in: on a TPU v5e its answer differed from this.)"""
    v = np.array([1.0, np.nan, 3.0, 3.0, np.nan], np.float32)
    got = hf.jit(lambda a: (lax.argmax(a, 0, np.int32), lax.argmin(a, 0, np.int32), lax.argmax(a[2:4], 0, np.int32)))(v)
    assert [int(g) for g in got] == [np.argmax(v), np.argmin(v), np.argmax(v[2:4])] == [1, 1, 0]


# ---------------------------------------------------------------- the emitted IR

def _implicit_uses(module):
    """Operands used inside a stablehlo.while that are defined outside it."""
    bad = []
    for op in module.walk():
        if op.name != "stablehlo.while":
            continue
        op = op.operation
        inside = set()
        for o in [op, *nested_ops(op)]:
            for r in o.regions:
                for b in r.blocks:
                    inside.update(b.arguments)
            if o is not op:
                inside.update(o.results)
        bad += [v for o in nested_ops(op) for v in o.operands if v not in inside]
    return bad


def test_while_captures_become_operands():
    def fn(x, n):
        y = x * 2
        return lax.fori_loop(0, n, lambda i, v: lax.fori_loop(0, i, lambda j, w: w + y, v) + x, x)
    m = hf.trace(fn, hf.ShapeDtype((3,), np.float32), hf.ShapeDtype((), np.int32))
    assert m.op_counts()["stablehlo.while"] == 2
    assert not _implicit_uses(m)
    outer = next(op for op in m.walk() if op.name == "stablehlo.while")
    assert len(outer.operands) == 5  # i, v, then the captures n, y and x
    got = np.asarray(hf.jit(fn)(np.ones(3, np.float32), np.int32(3)))
    want = jax.jit(lambda x, n: jax.lax.fori_loop(0, n, lambda i, v: jax.lax.fori_loop(0, i, lambda j, w: w + 2 * x, v) + x, x))(
        np.ones(3, np.float32), np.int32(3))
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_bodies_are_traced_once_and_scratch_ops_are_gone():
    calls = []

    def body(i, v):
        calls.append(i)
        return lax.cond(i > 1, lambda: v + 1.0, lambda: v)

    m = hf.trace(lambda x: lax.scan(lambda c, a: (body(a, c), c), x, hnp.arange(3, dtype=np.int32)),
                 hf.ShapeDtype((2,), np.float32))
    assert len(calls) == 1
    counts = m.op_counts()
    assert counts["stablehlo.while"] == 1 and counts["stablehlo.if"] == 1 and "stablehlo.case" not in counts


def test_a_failed_body_leaves_nothing():
    def fn(x):
        try:
            lax.while_loop(lambda c: c < 3, lambda c: 1 / 0, 0)
        except ZeroDivisionError:
            pass
        return x + 1
    assert "stablehlo.while" not in hf.trace(fn, hf.ShapeDtype((2,), np.float32)).op_counts()


# ---------------------------------------------------------------- errors

F = hf.ShapeDtype((3,), np.float32)


@pytest.mark.parametrize("fn,exc,match", [
    (lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1].astype(np.int32)), (0, x)), TypeError,
     r"body_fun output and input must have identical types, got\nthe input carry component init_val\[1\] has type "
     r"float32\[3\] but the corresponding output carry component has type int32\[3\], so the dtypes do not match"),
    (lambda x: lax.while_loop(lambda c: c["a"] < 3, lambda c: {"a": c["a"] + 1, "b": c["b"][:2]}, {"a": 0, "b": x}),
     TypeError, r"init_val\['b'\] has type float32\[3\] but the corresponding output carry component has type "
     r"float32\[2\], so the shapes do not match"),
    (lambda x: lax.while_loop(lambda c: c, lambda c: (c, c), x), TypeError,
     r"body_fun output and input must have the same pytree structure"),
    (lambda x: lax.while_loop(lambda c: c, lambda c: c + 1, x), TypeError,
     r"cond_fun must return a boolean scalar, but got output type\(s\) \[float32\[3\]\]"),
    (lambda x: lax.while_loop(lambda c: True, 3, x), TypeError, r"while_loop: body_fun must be callable, got int"),
    (lambda x: lax.fori_loop(0, 2.5, lambda i, v: v, x), TypeError, r"fori_loop: upper must be an integer, got 2.5"),
    (lambda x: lax.scan(lambda c, a: (c + 1, a), 0, x, length=4), ValueError,
     r"scan got `length` argument of 4 which disagrees with leading axis sizes \[3\]"),
    (lambda x: lax.scan(lambda c, a: (c, a), 0, None), ValueError,
     r"scan got no values to scan over and `length` not provided"),
    (lambda x: lax.scan(lambda c, a: (c * 1.5, a), 0, x), TypeError,
     r"the input carry component carry has type int32\[\] but the corresponding output carry component has type "
     r"float64\[\]"),
    (lambda x: lax.scan(lambda c, a: c, 0.0, x), TypeError, r"scan body output must be a pair \(carry, y\)"),
    (lambda x: lax.cond(x > 0, lambda: x, lambda: x), TypeError, r"Pred must be a scalar, got .* of shape \(3,\)"),
    (lambda x: lax.cond(x[0] > 0, lambda: x, lambda: x[:2]), TypeError,
     r"cond: branch 0 and 1 outputs must have identical types, got output 0 of type float32\[3\] in branch 0 and "
     r"float32\[2\] in branch 1"),
    (lambda x: lax.cond(x[0] > 0, lambda: x, lambda: (x, x)), TypeError,
     r"cond: branch 0 and 1 outputs must have same type structure"),
    (lambda x: lax.switch(0, [], x), ValueError, r"Empty branch sequence"),
    (lambda x: lax.switch(x[0], [lambda: x, lambda: x]), TypeError, r"Index type must be an integer, got float32"),
    (lambda x: lax.select(x, x, x), TypeError, r"select pred must be boolean type, got float32"),
    (lambda x: lax.select(x > 0, x, x[:2]), TypeError, r"select cases must have the same shapes and dtypes"),
    (lambda x: lax.dynamic_slice(x, (0, 0), (1,)), ValueError,
     r"Length of start indices must match number of dimensions of operand; got 2 start indices"),
    (lambda x: lax.dynamic_update_slice(x, x.astype(np.int32), (0,)), TypeError,
     r"dynamic_update_slice update and operand must have the same dtype, got int32 and float32"),
    (lambda x: lax.gather(x, hnp.zeros((2, 1), np.int32), (0,), (1,)), TypeError,
     r"gather: dimension_numbers must be a GatherDimensionNumbers, got tuple"),
    (lambda x: lax.gather(x, hnp.zeros((2, 1), np.int32), lax.GatherDimensionNumbers((), (0,), (0,)), (1,), mode="x"),
     ValueError, r'Unknown gather mode "x"'),
    (lambda x: lax.scatter_add(x, hnp.zeros((2, 1), np.int32), x[:2].astype(np.int32),
                               lax.ScatterDimensionNumbers((), (0,), (0,))), TypeError,
     r"scatter_add: operand and updates must have the same dtype, got float32 and int32"),
    (lambda x: lax.sort((x, x), num_keys=3), ValueError, r"num_keys=3 must be between 1 and len\(operand\)=2"),
    (lambda x: lax.top_k(x, 4), ValueError, r"k argument to top_k must be nonnegative and at most the size"),
    (lambda x: lax.argmax(x, 0, np.float32), TypeError, r"argmax: index_dtype must be an integer type, got float32"),
    (lambda x: lax.cumsum(x, 1), ValueError, r"cumsum: axis 1 is out of bounds for array of rank 1"),
])
def test_lax_errors(fn, exc, match):
    with pytest.raises(exc, match=match):
        hf.trace(fn, F)


@pytest.mark.parametrize("fn,match", [
    (lambda x: x if x[0] > 0 else -x, r"truth value of a traced Tensor is unknown.*hloforge\.lax\.cond.*hloforge\.numpy\.where"),
    (lambda x: [x for _ in range(x[0].astype(np.int32))], r"cannot be used as a Python integer.*hloforge\.lax\.fori_loop"),
    (lambda x: int(x[0]), r"int\(\) of a traced Tensor.*hloforge\.lax\.cond"),
    (lambda x: float(x[0]), r"float\(\) of a traced Tensor"),
])
def test_python_control_flow_on_tensors_points_at_lax(fn, match):
    with pytest.raises(TypeError, match=match):
        hf.trace(fn, F)


@pytest.mark.child_processes
def test_burgers_example_runs_and_checks_itself():
    import os
    import subprocess
    import sys
    examples = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples")
    result = subprocess.run([sys.executable, os.path.join(examples, "burgers_solver.py")], capture_output=True,
                            text=True, timeout=120, cwd=examples)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "check: ok" in result.stdout
