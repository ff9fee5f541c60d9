"""Gradients of programs ported from jax: hloforge (hf.jit(hf.grad(...))) against
jax.jit(jax.grad(...)) of the same program, in one process, interleaved, median of repeats.

Cases (float32 weights; each program written once against a numpy-like module):
- ``rnn``: a tanh RNN through ``lax.scan`` (hidden 32, sequence 64, batch 4, inputs 16), the
  gradient of ``mean(ys**2) + sum(h_last)`` with respect to (Wx, Wh, b);
- ``spectral_small``: an FNO spectral convolution as jax FNO ports write it (``rfft2``, the low
  and high mode blocks mixed by an einsum, written into a zero spectrum with ``.at[].set``,
  ``irfft2``), complex weights from float32 (real, imaginary) pairs, batch 4, width 8, 16x16, 4x4
  modes; the gradient with respect to the two float32 weight arrays;
- ``spectral_fno2d``: the same at the FNO-2D sizes of benchmarks/to_jax.py (batch 8, width 32,
  64x64, 12x12 modes).
Rows: ``steady`` (jax arrays as inputs) and ``steady_numpy`` (numpy arrays: each call copies them
to the device on both sides), target <= 1.05; ``first_call``, the cold first call (trace,
differentiation, hloforge's passes, XLA's compile and one run, every cache cleared, alternating
which framework goes first), target <= 1.0 (#29's first-call target).

Run: python benchmarks/ported_grads.py [--quick] [--only rnn,spectral_small,...]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import hloforge as hf
from hloforge import numpy as hnp
from hloforge.runtime import cache as hf_cache

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import steady  # noqa: E402

TARGETS = {"steady": 1.05, "steady_numpy": 1.05, "first_call": 1.0}


def rnn(sizes=(64, 4, 16, 32)):
    steps, batch, d_in, hidden = sizes

    def make(xp, lax):
        def loss(params, xs):
            wx, wh, b = params

            def cell(h, x):
                h = xp.tanh(x @ wx + h @ wh + b)
                return h, h
            h_last, ys = lax.scan(cell, xp.zeros((batch, hidden), xp.float32), xs)
            return xp.mean(ys ** 2) + xp.sum(h_last)
        return loss

    def inputs(rng):
        params = (rng.standard_normal((d_in, hidden)) / np.sqrt(d_in),
                  rng.standard_normal((hidden, hidden)) / np.sqrt(hidden), np.zeros(hidden))
        return tuple(p.astype(np.float32) for p in params), rng.standard_normal((steps, batch, d_in)).astype(np.float32)
    return make, inputs


def spectral(batch, width, n, modes):
    def make(xp, lax):
        def conv(x, w_re, w_im):
            w = w_re + 1j * w_im  # (complex64: the Python complex is weak)
            s = xp.fft.rfft2(x)
            out = xp.zeros((x.shape[0], width, n, n // 2 + 1), xp.complex64)
            out = out.at[:, :, :modes, :modes].set(xp.einsum("bixy,ioxy->boxy", s[:, :, :modes, :modes], w[0]))
            out = out.at[:, :, -modes:, :modes].set(xp.einsum("bixy,ioxy->boxy", s[:, :, -modes:, :modes], w[1]))
            return xp.fft.irfft2(out, s=(n, n))

        def loss(weights, x):
            return xp.mean(conv(x, *weights) ** 2)
        return loss

    def inputs(rng):
        scale = 1.0 / (width * width)
        shape = (2, width, width, modes, modes)
        weights = tuple((scale * rng.random(shape)).astype(np.float32) for _ in range(2))
        return weights, rng.standard_normal((batch, width, n, n)).astype(np.float32)
    return make, inputs


CASES = {
    "rnn": rnn(),
    "spectral_small": spectral(4, 8, 16, 4),
    "spectral_fno2d": spectral(8, 32, 64, 12),
}


def _grads(make):
    return hf.jit(hf.grad(make(hnp, hf.lax))), jax.jit(jax.grad(make(jnp, jax.lax)))


def _first_calls(make, args, repeats):
    """Cold first calls of fresh functions, every cache cleared, alternating which goes first."""
    firsts = {"hloforge": [], "jax": []}
    for i in range(repeats):
        for name in (("hloforge", "jax") if i % 2 == 0 else ("jax", "hloforge")):
            jax.clear_caches()
            hf_cache.clear()
            f = _grads(make)[0 if name == "hloforge" else 1]
            t = time.perf_counter()
            jax.block_until_ready(f(*args))
            firsts[name].append(time.perf_counter() - t)
    return statistics.median(firsts["hloforge"]), statistics.median(firsts["jax"])


def run_case(name, rounds, first_repeats):
    make, inputs = CASES[name]
    args_np = inputs(np.random.default_rng(0))
    args = jax.device_put(args_np)
    g_h, g_j = _grads(make)
    for a, b in zip(jax.tree_util.tree_leaves(g_h(*args)), jax.tree_util.tree_leaves(g_j(*args))):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-3, atol=1e-6)
    rows = {}
    h, j = steady([g_h, g_j], args, rounds)
    rows["steady"] = (h, j)
    h, j = steady([g_h, g_j], args_np, rounds)
    rows["steady_numpy"] = (h, j)
    rows["first_call"] = _first_calls(make, args, first_repeats)
    return rows


def _fmt(t):
    return f"{t * 1e3:9.2f}ms" if t >= 1e-3 else f"{t * 1e6:9.1f}us"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--only", default="", help="comma-separated cases")
    args = parser.parse_args(argv)
    hf.config.cache_dir = None  # (first calls measure compiles, not the persistent cache)
    names = [n for n in args.only.split(",") if n] or list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        parser.error(f"unknown cases {unknown}; known: {', '.join(CASES)}")
    rounds, firsts = (10, 3) if args.quick else (40, 5)
    print(f"{'case':16s}{'metric':14s}{'hloforge':>12s}{'jax':>12s}{'ratio':>8s}{'target':>8s}  ok")
    missed, results = [], {}
    for name in names:
        for metric, (h, j) in run_case(name, rounds, firsts).items():
            ratio = h / j
            ok = ratio <= TARGETS[metric]
            results[(name, metric)] = ratio
            if not ok:
                missed.append(f"{name}/{metric} ({ratio:.2f} > {TARGETS[metric]})")
            print(f"{name:16s}{metric:14s}{_fmt(h):>12s}{_fmt(j):>12s}{ratio:8.2f}{TARGETS[metric]:8.2f}  "
                  f"{'yes' if ok else 'MISS'}", flush=True)
    print("all targets met" if not missed else "targets missed: " + ", ".join(missed))
    return results


if __name__ == "__main__":
    main()
