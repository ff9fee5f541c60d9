"""Gradients of programs ported from jax compile to jax's loops and FFTs (#26 item 6).

- Reverse mode through lax.scan (frontend/ad/control_flow.py): one forward loop in the original's
  place storing only the residuals, one backward loop running only the derivative (no recomputed
  body, the stacked outputs' cotangent passed through unchanged); a checkpointed body is recomputed
  in the backward loop.
- hloforge.numpy's ``x.at[box].set`` (a scatter into the flattened array) becomes a window scatter
  and its derivative's gathers slices (passes/indexing.py), so an FNO spectral convolution written
  that way truncates its inverse FFT.
Gradients are compared with jax's on the same inputs.
"""
from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
from hloforge import numpy as hnp

T, B, D, H = 8, 2, 3, 4


def _rnn(xp, lax, reverse=False, checkpoint=None):
    def loss(params, xs):
        wx, wh, b = params

        def cell(h, x):
            h = xp.tanh(x @ wx + h @ wh + b)
            return h, h

        body = checkpoint(cell) if checkpoint is not None else cell
        h_last, ys = lax.scan(body, xp.zeros((B, H), xp.float32), xs, reverse=reverse)
        return xp.mean(ys ** 2) + xp.sum(h_last)
    return loss


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    params = tuple(a.astype(np.float32) for a in (rng.standard_normal((D, H)) / 2, rng.standard_normal((H, H)) / 3,
                                                  rng.standard_normal(H) / 4))
    return params, rng.standard_normal((T, B, D)).astype(np.float32)


def _loops(text):
    """The optimized StableHLO's top-level while ops' bodies, in order."""
    parts = text.split("stablehlo.while")[1:]
    return parts


def _count(text, name):
    return len(re.findall(rf"stablehlo\.{name}\b", text))


@pytest.fixture(scope="module")
def rnn_module():
    params, xs = _inputs()
    m = hf.jit(hf.grad(_rnn(hnp, hf.lax))).lower(params, xs)
    m.optimize()
    return m.text


def test_scan_gradient_is_two_loops_storing_only_residuals(rnn_module):
    text = rnn_module
    assert _count(text, "while") == 2  # (the original forward loop is gone: the storing one replaced it)
    fwd, bwd = _loops(text)
    # forward: the body's two dots; per iteration the ys row and the residuals (h, 1 - y*y)
    assert _count(fwd, "dot_general") == 2 and _count(fwd, "tanh") == 1
    assert _count(fwd, "dynamic_update_slice") == 3
    # backward: only the derivative (three dots, no tanh), reading rows; nothing written per
    # iteration (the ys cotangent is read row by row, never zeroed)
    assert _count(bwd, "dot_general") == 3 and _count(bwd, "tanh") == 0
    assert _count(bwd, "dynamic_update_slice") == 0


def test_scan_gradient_compiles_to_jax_loops():
    params, xs = _inputs()
    f_h = hf.jit(hf.grad(_rnn(hnp, hf.lax)))
    f_j = jax.jit(jax.grad(_rnn(jnp, jax.lax)))
    got, want = f_h(params, xs), f_j(params, xs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-6)
    ours = next(iter(f_h._cache.values()))[0].hlo_text
    theirs = f_j.lower(params, xs).compile().as_text()
    for op in ("while", "dot", "dynamic-update-slice"):
        n_h, n_j = (len(re.findall(rf"\b{op}\(", t)) for t in (ours, theirs))
        assert n_h <= n_j, (op, n_h, n_j)


@pytest.mark.parametrize("case", ["reverse", "checkpoint", "nested", "fori_index", "hessian"])
def test_reverse_loops_match_jax(case):
    params, xs = _inputs(1)
    if case in ("reverse", "checkpoint"):
        kw_h = {"reverse": True} if case == "reverse" else {"checkpoint": hf.checkpoint}
        kw_j = {"reverse": True} if case == "reverse" else {"checkpoint": jax.checkpoint}
        f_h, f_j = _rnn(hnp, hf.lax, **kw_h), _rnn(jnp, jax.lax, **kw_j)
    elif case == "nested":
        def make(xp, lax):
            def loss(params, xs):
                wx, wh, _ = params

                def outer(c, x):
                    def inner(h, k):
                        return xp.sin(h @ wh) * k + x @ wx, h
                    c, hs = lax.scan(inner, c, xp.arange(3.0, dtype=xp.float32))
                    return c, xp.sum(hs)
                c, ys = lax.scan(outer, xp.zeros((B, H), xp.float32), xs)
                return xp.sum(c * c) + xp.sum(ys)
            return loss
        f_h, f_j = make(hnp, hf.lax), make(jnp, jax.lax)
    elif case == "fori_index":  # (index arithmetic in the body: recomputed from the counter backwards)
        def make(xp, lax):
            def loss(params, xs):
                wx, wh, _ = params

                def body(i, h):
                    t = i.astype(xp.float32) * 0.25
                    return xp.cos(h @ wh) * t + xs[T - 1 - i] @ wx
                return xp.sum(lax.fori_loop(0, T, body, xp.zeros((B, H), xp.float32)) ** 2)
            return loss
        f_h, f_j = make(hnp, hf.lax), make(jnp, jax.lax)
    else:  # hessian: grad of grad through the loops
        inner_h, inner_j = _rnn(hnp, hf.lax), _rnn(jnp, jax.lax)
        f_h = lambda p, xs: hnp.sum(hf.grad(inner_h)(p, xs)[1] ** 2)  # noqa: E731
        f_j = lambda p, xs: jnp.sum(jax.grad(inner_j)(p, xs)[1] ** 2)  # noqa: E731
    got = hf.jit(hf.grad(f_h, argnums=(0, 1)))(params, xs)
    want = jax.jit(jax.grad(f_j, argnums=(0, 1)))(params, xs)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-4, atol=2e-5)


def test_checkpointed_body_is_recomputed_backwards():
    params, xs = _inputs()
    m = hf.jit(hf.grad(_rnn(hnp, hf.lax, checkpoint=hf.checkpoint))).lower(params, xs)
    m.optimize()
    fwd, bwd = _loops(m.text)
    assert _count(fwd, "tanh") == 1 and _count(bwd, "tanh") == 1  # (recomputed behind the barrier)
    assert _count(bwd, "optimization_barrier") == 1
    assert _count(fwd, "dynamic_update_slice") == 2  # (ys, and h: what the checkpoint saves)


# ---------------------------------------------------------------- x.at[box].set before an FFT

N, M, W = 8, 2, 3


def _spectral_at(xp, x, w):
    s = xp.fft.rfft2(x)
    out = xp.zeros((x.shape[0], w.shape[2], N, N // 2 + 1), xp.complex64)
    out = out.at[:, :, :M, :M].set(xp.einsum("bixy,ioxy->boxy", s[:, :, :M, :M], w[0]))
    out = out.at[:, :, -M:, :M].set(xp.einsum("bixy,ioxy->boxy", s[:, :, -M:, :M], w[1]))
    return xp.fft.irfft2(out, s=(N, N))


def test_spectral_convolution_with_at_set_truncates():
    rng = np.random.default_rng(2)
    w = ((rng.random((2, W, W, M, M)) + 1j * rng.random((2, W, W, M, M))) / W).astype(np.complex64)
    x = rng.standard_normal((2, W, N, N)).astype(np.float32)

    def loss(xp):
        return lambda w, x: xp.mean(_spectral_at(xp, x, w) ** 2)
    f_h = hf.jit(hf.grad(loss(hnp), argnums=(0, 1)))
    got = f_h(w, x)
    want = jax.jit(jax.grad(loss(jnp), argnums=(0, 1)))(w, x)
    for g, v in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(v), rtol=2e-4, atol=2e-6)
    m = f_h.lower(w, x)
    m.optimize()
    counts = m.op_counts()
    # no element-by-element scatter or gather is left; the forward FFTs are partial DFTs, the
    # backward rfft of the full cotangent stays (as in jax's program)
    assert counts.get("stablehlo.gather", 0) == 0
    assert counts.get("stablehlo.fft", 0) == 1
    assert not re.search(r"stablehlo\.scatter.*index_vector_dim = [1-9]", m.text)
