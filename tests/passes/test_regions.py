"""Passes on modules with regions: patterns fire inside while/if/case/scatter bodies; inline,
canonicalize and cse keep the regions (and the numbers) intact."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import hloforge as hf
from hloforge import lax, ops
from hloforge import numpy as hnp
from hloforge.frontend.lax._trace import nested_ops

X = np.linspace(-2, 2, 8, dtype=np.float32)
SPEC = hf.ShapeDtype((8,), np.float32)


def _counts_inside(module, region_op):
    """Op counts of the ops nested in every ``region_op``."""
    counts = {}
    for op in module.walk():
        if op.name != region_op:
            continue
        for inner in nested_ops(op.operation):
            counts[inner.name] = counts.get(inner.name, 0) + 1
    return counts


def _program(x):
    s = x.sum()
    v = lax.fori_loop(0, 3, lambda i, v: v * 1.0 + x * s, x)              # multiply_by_one inside a while
    w = lax.cond(s > 0, lambda: (v * 1.0) * 2.0, lambda: v - 1.0)           # ... inside if branches
    u = lax.switch(hnp.argmax(x).astype(np.int32), [lambda: w, lambda: w * 1.0, lambda: -w])
    t = u.at[np.array([1, 1, 7])].add(hnp.ones(3, np.float32))               # a scatter with its add body
    return t, v


def _run(module, *args):
    out = module.compile()(*args)
    return [np.asarray(o) for o in (out if isinstance(out, (list, tuple)) else [out])]


def test_a_pattern_fires_inside_bodies_and_keeps_them():
    m = hf.trace(_program, SPEC)
    want = _run(m, X)
    before = m.op_counts()
    report = m.optimize("pattern:multiply_by_one")
    assert report.fired.get("multiply_by_one", 0) >= 3
    after = m.op_counts()
    for name in ("stablehlo.while", "stablehlo.if", "stablehlo.case", "stablehlo.scatter"):
        assert after[name] == before[name], name
    assert "stablehlo.multiply" not in _counts_inside(m, "stablehlo.while") or \
        _counts_inside(m, "stablehlo.while")["stablehlo.multiply"] < 2
    for a, b in zip(_run(m, X), want):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_a_pattern_does_not_fire_inside_bodies_when_its_precondition_fails():
    m = hf.trace(lambda x: lax.fori_loop(0, 3, lambda i, v: v * 1.5, x), SPEC)
    report = m.optimize("pattern:multiply_by_one")
    assert not report.fired.get("multiply_by_one")
    assert _counts_inside(m, "stablehlo.while")["stablehlo.multiply"] == 1


def test_default_pipeline_keeps_control_flow_and_numbers():
    m = hf.trace(_program, SPEC)
    want = _run(m, X)
    m.optimize("default")
    counts = m.op_counts()
    assert counts["stablehlo.while"] == 1 and counts["stablehlo.scatter"] == 1
    assert counts.get("stablehlo.if", 0) + counts.get("stablehlo.case", 0) >= 2
    for a, b in zip(_run(m, X), want):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_canonicalize_and_cse_keep_regions_intact():
    def fn(x):
        a = lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] + x * 2.0 + x * 2.0), (0, x))[1]
        b = lax.scan(lambda c, e: (c + e, c * e), np.float32(0), x)
        k = ops.sort([x, ops.iota((8,), np.int32)], 0, "GT")
        return a, b, k
    m = hf.trace(fn, SPEC)
    want = _run(m, X)
    before = m.op_counts()
    m.optimize("canonicalize,cse")
    after = m.op_counts()
    assert after["stablehlo.while"] == before["stablehlo.while"] == 2
    assert after["stablehlo.sort"] == 1
    assert after["stablehlo.multiply"] < before["stablehlo.multiply"]  # cse merged x * 2.0 twice in the body
    for a, b in zip(_run(m, X), want):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_inline_reaches_calls_inside_while_bodies():
    f = lambda x: jax.lax.fori_loop(0, 3, lambda i, v: jnp.remainder(v, 3.0) + jnp.clip(v, -1, 1), x)
    m = hf.Module.parse(jax.jit(f).lower(X).as_text())
    assert _counts_inside(m, "stablehlo.while").get("func.call") == 1
    m.optimize("inline,symbol-dce")
    assert "func.call" not in m.op_counts()
    assert m.op_counts()["stablehlo.while"] == 1
    assert _counts_inside(m, "stablehlo.while")["stablehlo.remainder"] == 1
    np.testing.assert_allclose(_run(m, X)[0], np.asarray(jax.jit(f)(X)), rtol=1e-6)


def test_fold_keeps_a_concatenate_of_distinct_splats():
    def fn(x):
        c = ops.concatenate([ops.constant(np.array([[1]], np.int32)), ops.constant(np.array([[2]], np.int32))], 1)
        return ops.add(x, c)
    m = hf.trace(fn, hf.ShapeDtype((1, 2), np.int32))
    m.optimize("constant-fold")
    np.testing.assert_array_equal(_run(m, np.zeros((1, 2), np.int32))[0], [[1, 2]])
