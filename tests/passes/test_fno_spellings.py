"""fft-truncate finds the FNO however a library spells it (issue 47).

For every spelling of tests/fno_spellings.py, forward and gradient (w.r.t. input and weights):
hf.optimize's values equal jax.jit's, and the optimized module keeps no stablehlo.fft (truncation
fired on both transforms; sizes are chosen so that it pays on the CPU cost model). Spellings the passes
do not truncate yet are listed in NOT_TRUNCATED (strict xfails: a fix shows up as an XPASS).
"""
from __future__ import annotations

import jax
import numpy as np
import pytest
from fno_spellings import SPELLINGS, loss
from helpers import assert_close

import hloforge as hf

KINDS = ("forward", "grad")

NOT_TRUNCATED: dict = {}  # (name, kind) -> why not, for spellings the passes do not truncate yet (none now)


def _function(name, kind):
    fn = SPELLINGS[name].fn
    return fn if kind == "forward" else jax.grad(loss(fn), argnums=(0, 1))


def _cases():
    for name in SPELLINGS:
        for kind in KINDS:
            reason = NOT_TRUNCATED.get((name, kind))
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            yield pytest.param(name, kind, marks=marks, id=f"{name}-{kind}")


def test_the_corpus_has_a_dozen_spellings():
    assert len(SPELLINGS) >= 12
    assert set(NOT_TRUNCATED) <= {(n, k) for n in SPELLINGS for k in KINDS}


@pytest.mark.parametrize("name, kind", [(n, k) for n in SPELLINGS for k in KINDS])
def test_values_match_jax(name, kind):
    """hf.optimize(f) computes jax.jit(f)'s values (truncation changes only the rounding)."""
    fn = _function(name, kind)
    x, w = SPELLINGS[name].args(0)
    got = jax.tree_util.tree_leaves(hf.optimize(fn)(x, w))
    want = jax.tree_util.tree_leaves(jax.jit(fn)(x, w))
    assert len(got) == len(want)
    for g, e in zip(got, want):
        assert_close(np.asarray(g), np.asarray(e), rtol=1e-4)


def test_gradient_through_optimize_matches_jax():
    """jax.grad of hf.optimize(f) (jax differentiates the bridged function) equals jax's own gradient."""
    for name in ("at_set_2d", "channels_last_2d", "dus_2d"):
        fn = SPELLINGS[name].fn
        x, w = SPELLINGS[name].args(3)
        got = jax.grad(loss(hf.optimize(fn)), argnums=(0, 1))(x, w)
        want = jax.jit(jax.grad(loss(fn), argnums=(0, 1)))(x, w)
        for g, e in zip(got, want):
            assert_close(np.asarray(g), np.asarray(e), rtol=1e-4)


@pytest.mark.parametrize("name, kind", list(_cases()))
def test_truncation_removes_every_fft(name, kind):
    fn = _function(name, kind)
    x, w = SPELLINGS[name].args(0)
    m = hf.Module.parse(jax.jit(fn).lower(x, w).as_text())
    before = m.op_counts()["stablehlo.fft"]
    report = m.optimize(cost_model="cpu")
    after = m.op_counts().get("stablehlo.fft", 0)
    assert before >= 2
    assert after == 0, f"{name} {kind}: {before} -> {after} FFTs\n{report}\n{m}"
    assert report.fired["truncated_forward_fft"] >= 1 and report.fired["truncated_inverse_fft"] >= 1, report


@pytest.mark.parametrize("name, kind", [(n, k) for n in SPELLINGS for k in KINDS])
def test_exact_passes_keep_every_bit(name, kind):
    """Without finite math and with FFTs kept (only the exact patterns run: the index and layout
    canonicalizations that let truncation see the FNO), the module computes the same bits."""
    fn = _function(name, kind)
    x, w = SPELLINGS[name].args(1)
    m = hf.Module.parse(jax.jit(fn).lower(x, w).as_text())
    before = [np.asarray(o) for o in m.compile().call_flat([x, w])]
    m.optimize(finite_math=False, cost_model="keep-ffts")
    after = [np.asarray(o) for o in m.compile().call_flat([x, w])]
    for a, b in zip(after, before):
        assert a.tobytes() == b.tobytes()


def _odd_index_programs():
    """Valid gathers and scatters at the edges of what the index patterns read (the patterns must decline or
    rewrite them, never raise), with what each computes."""
    from hloforge import ops
    i32 = np.int32
    z = ops.constant

    yield "no positions", lambda x: ops.gather(x, z(np.zeros((0, 1), i32)), (0,), (1,), (1,), 1, (3, 1)), (3, 8)
    yield "a 0-d index, the vector implicit", lambda x: ops.gather(x, z(i32(9)), (0,), (1,), (1,), 0, (3, 1)), (3, 8)
    yield "clamped window", lambda x: ops.gather(x, z(np.array([-4, 7], i32)), (0, 1), (), (0, 1), 0, (2, 3)), (3, 8)
    yield "positions out of bounds, skipped by scatter", lambda u: ops.scatter(
        z(np.zeros((3, 8), np.float32)), z(np.array([[2], [9]], i32)), u, (0,), (1,), (1,), 1), (3, 2)
    yield "unsorted positions", lambda u: ops.scatter(
        z(np.zeros((3, 8), np.float32)), z(np.array([[5], [2]], i32)), u, (0,), (1,), (1,), 1), (3, 2)
    yield "positions in a run and a point, add", lambda u: ops.scatter(
        z(np.zeros((3, 8), np.float32)), z(np.array([[0], [1], [2], [6]], i32)), u, (0,), (1,), (1,), 1, "add"), (3, 4)
    yield "a dynamic_slice past the end", lambda x: ops.dynamic_slice(x, [z(i32(5)), z(i32(-3))], (2, 4)), (3, 8)


@pytest.mark.parametrize("finite_math", [False, True])
def test_odd_index_ops_never_raise(finite_math):
    for why, fn, shape in _odd_index_programs():
        m = hf.trace(fn, hf.ShapeDtype(shape, np.float32))
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        want = np.asarray(m.compile()(x))
        m.optimize(finite_math=finite_math)
        assert np.asarray(m.compile()(x)).tobytes() == want.tobytes(), why
