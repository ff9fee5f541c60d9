"""Fuzzing the default pipeline: random valid programs never make it raise and keep their outputs.

Each example traces a few independent random chains into one module (compiles dominate the cost):
pads with edges of either sign (crops past the operand included), interior padding, zero-size
dims, strided slices, reshapes, transposes, broadcasts, binary ops of shifted or padded copies
(windows of one tensor padded back, zero-insertion upsamples plus their shifts), concatenates with
pads, slices and splat blocks, and fft/ifft/rfft/irfft chains with truncated and zero-filled
spectra (spectral interpolation included). The optimized module is compared with the unoptimized one.
"""
from __future__ import annotations

import math

import numpy as np
from helpers import random, trace_chains
from hypothesis import given, settings
from hypothesis import strategies as st
from test_patterns import assert_same, outputs

import hloforge as hf
from hloforge import ops

F32, F64 = np.float32, np.float64
STEPS = ("pad", "pad", "slice", "reshape", "transpose", "broadcast", "unary", "binary", "concat", "fft", "fft",
         "spectral", "shifts", "interleave", "upsample")


def _pad(x, rng):
    n = x.shape
    interior = [int(rng.random() < 0.2) * int(rng.integers(1, 3)) for _ in n]
    low = [int(rng.integers(-s - 2, 3)) for s in n]
    high = []
    for lo, s, it in zip(low, n, interior):
        floor = -(lo + s + max(s - 1, 0) * it)  # the result size must stay >= 0
        high.append(int(rng.integers(max(floor, -s - 2), max(floor, -s - 2) + 6)))
    value = float(rng.choice([0.0, 0.0, 1.5, -2.0]))
    return ops.pad(x, value if x.dtype.kind != "c" else complex(value), low, high, interior)


def _slice(x, rng):
    start = [int(rng.integers(0, s + 1)) for s in x.shape]
    limit = [int(rng.integers(b, s + 1)) for b, s in zip(start, x.shape)]
    return ops.slice(x, start, limit, [int(rng.integers(1, 4)) for _ in x.shape])


def _reshape(x, rng):
    n = list(x.shape)
    choice = rng.integers(3)
    if choice == 0 and len(n) >= 2:  # merge two neighbours
        i = int(rng.integers(len(n) - 1))
        n[i:i + 2] = [n[i] * n[i + 1]]
    elif choice == 1 and n:  # split a dim
        i = int(rng.integers(len(n)))
        f = next((f for f in (2, 3) if n[i] % f == 0 and n[i] > f), None)
        if f is not None:
            n[i:i + 1] = [f, n[i] // f]
    else:  # insert a unit dim
        n.insert(int(rng.integers(len(n) + 1)), 1)
    return ops.reshape(x, n) if len(n) <= 4 else x


def _broadcast(x, rng):
    if x.ndim >= 4:
        return x
    shape = list(x.shape)
    at = int(rng.integers(x.ndim + 1))
    shape.insert(at, int(rng.integers(1, 3)))
    dims = [i if i < at else i + 1 for i in range(x.ndim)]
    return ops.broadcast_in_dim(x, shape, dims)


def _binary(x, rng):
    f = [ops.add, ops.multiply, ops.subtract, ops.maximum][int(rng.integers(4))] if x.dtype.kind != "c" else \
        [ops.add, ops.multiply][int(rng.integers(2))]
    if x.ndim == 0:
        return f(x, x)
    d = int(rng.integers(x.ndim))
    n = x.shape[d]
    zeros, lo, hi = [0] * x.ndim, [0] * x.ndim, [0] * x.ndim
    kind = rng.integers(3)
    if kind == 0 and n > 1:  # x with a shifted copy of itself
        k = int(rng.integers(1, n))
        lo[d], hi[d] = -k, k
        return f(x, ops.pad(x, 0.0 if x.dtype.kind != "c" else 0j, lo, hi))
    if kind == 1:  # two pads of x with the same paddings
        lo[d], hi[d] = int(rng.integers(-1, 3)), int(rng.integers(0, 3))
        if n + lo[d] < 0:
            return x
        return f(ops.pad(ops.sin(x) if x.dtype.kind != "c" else x, 0.0 * 1, lo, hi), ops.pad(x, 0.0 * 1, lo, hi))
    gap = int(rng.integers(0, 3))  # two copies side by side, a gap between them
    hi[d] = n + gap
    a = ops.pad(x, 0.0 if x.dtype.kind != "c" else 0j, zeros, hi)
    b = ops.pad(-x, 0.0 if x.dtype.kind != "c" else 0j, hi, zeros)
    return f(a, b)


def _concat(x, rng):
    # (no empty pieces: XLA's CPU compiler aborts on a slice at the end of a concatenate that has
    # an empty operand, e.g. slice(concatenate([x: 2, empty]), [2:2]))
    if x.ndim == 0 or 0 in x.shape:
        return x
    d = int(rng.integers(x.ndim))
    n = x.shape[d]
    block = list(x.shape)
    block[d] = int(rng.integers(1, 3))
    v = float(rng.choice([0.0, 1.0]))
    fill = ops.constant(np.full(block, v, x.dtype))
    lo, hi = [0] * x.ndim, [0] * x.ndim
    lo[d] = int(rng.integers(1 - n, 3))
    pieces = [ops.pad(x, v if x.dtype.kind != "c" else complex(v), lo, hi), fill]
    if n:
        start, limit = [0] * x.ndim, list(x.shape)
        start[d] = int(rng.integers(0, n))
        pieces.append(ops.slice(x, start, limit))
    order = rng.permutation(len(pieces))
    return ops.concatenate([pieces[i] for i in order], d)


def _fft_ok(x, k):
    return x.ndim >= k and all(s > 0 for s in x.shape) and math.prod(x.shape) > 0


def _fft(x, rng):
    k = int(rng.integers(1, min(max(x.ndim, 1), 3) + 1))
    if not _fft_ok(x, k):
        return x
    lengths = list(x.shape[x.ndim - k:])
    if x.dtype.kind == "c":
        if rng.random() < 0.5:
            return ops.fft(x, "FFT" if rng.random() < 0.5 else "IFFT", lengths)
        lengths[-1] = 2 * x.shape[-1] - 1 - int(x.shape[-1] > 1 and rng.random() < 0.5)
        return ops.fft(x, "IRFFT", lengths)
    return ops.fft(x, "RFFT", lengths)


def _spectral(x, rng):
    """An FNO-like block: rfft, keep some modes (slices), scale, zero-fill (pads), irfft."""
    if x.dtype.kind == "c" or not _fft_ok(x, 1):
        return x
    k = int(rng.integers(1, min(x.ndim, 2) + 1))
    lengths = list(x.shape[x.ndim - k:])
    z = ops.fft(x, "RFFT", lengths)
    bins = list(z.shape)
    keep = [int(rng.integers(1, b + 1)) for b in bins]
    start = [0] * z.ndim
    kept = ops.slice(z, start, [kp if i >= z.ndim - k else b for i, (kp, b) in enumerate(zip(keep, bins))])
    kept = kept * complex(rng.choice([1.0, 0.5 - 0.25j]))
    high = [b - s for b, s in zip(bins, kept.shape)]
    return ops.fft(ops.pad(kept, 0j, [0] * z.ndim, high), "IRFFT", lengths)


def _shifts(x, rng):
    """Windows of one tensor each padded back to a common extent (central differences, stencils)."""
    if x.ndim == 0 or x.dtype.kind == "c":
        return x
    d, n = int(rng.integers(x.ndim)), x.shape[int(rng.integers(x.ndim))]
    n = x.shape[d]
    k = int(rng.integers(0, n + 1))
    lo, hi = [0] * x.ndim, [0] * x.ndim
    start, limit = [0] * x.ndim, list(x.shape)
    start[d], hi[d] = k, k  # x[k:] padded at the end ...
    left = ops.pad(ops.slice(x, start, limit), 0.0, lo, hi)
    start[d], limit[d], hi[d], lo[d] = 0, n - k, 0, k  # ... minus x[:n-k] padded at the start
    right = ops.pad(ops.slice(x, start, limit), 0.0, lo, hi)
    return [ops.subtract, ops.add, ops.multiply][int(rng.integers(3))](left, right)


def _interleave(x, rng):
    """A zero-insertion upsample plus a one-step shift of itself or of another value."""
    if x.ndim == 0 or 0 in x.shape:
        return x
    d = int(rng.integers(x.ndim))
    zero = 0.0 if x.dtype.kind != "c" else 0j
    lo, hi, it = [0] * x.ndim, [0] * x.ndim, [0] * x.ndim
    it[d], hi[d] = 1, 1 + int(rng.integers(0, 2))
    a = ops.pad(x, zero, lo, hi, it)
    lo[d], hi[d] = 1, hi[d] - 1
    b = ops.pad(x if rng.random() < 0.5 else -x, zero, lo, hi, it)
    return a + b


def _upsample(x, rng):
    """Spectral interpolation: fft, a zero block in the middle of the spectrum, ifft, real part."""
    if x.ndim == 0 or 0 in x.shape or math.prod(x.shape) > 512:
        return x
    if x.ndim >= 2 and x.dtype.kind != "c" and rng.random() < 0.5:  # irfft2(zero-padded rfft2) at twice the width
        n = list(x.shape[-2:])
        z = ops.fft(x, "RFFT", n)
        high = [0] * x.ndim
        high[-1] = n[1] - n[1] // 2
        return ops.fft(ops.pad(z, 0j, [0] * x.ndim, high), "IRFFT", (n[0], 2 * n[1]))
    z = ops.fft(x if x.dtype.kind == "c" else ops.convert(x, np.complex64 if x.dtype == F32 else np.complex128),
                "FFT", x.shape[-1:])
    n = x.shape[-1]
    h = n // 2
    start, limit = [0] * x.ndim, list(x.shape)
    limit[-1] = h
    low = ops.slice(z, start, limit)
    start[-1], limit[-1] = h, n
    high = ops.slice(z, start, limit)
    gap = list(x.shape)
    gap[-1] = int(rng.integers(1, n + 1))
    y = ops.concatenate([low, ops.constant(np.zeros(gap, z.dtype)), high], x.ndim - 1)
    return ops.real(ops.fft(y, "IFFT", y.shape[-1:]))


def _unary(x, rng):
    if x.dtype.kind == "c":
        return ops.real(x) if rng.random() < 0.5 else -x
    return [ops.sin, ops.tanh, ops.neg, ops.abs][int(rng.integers(4))](x)


BUILD = {"pad": _pad, "slice": _slice, "reshape": _reshape, "transpose":
         lambda x, rng: ops.transpose(x, [int(p) for p in rng.permutation(x.ndim)]),
         "broadcast": _broadcast, "unary": _unary, "binary": _binary, "concat": _concat, "fft": _fft,
         "spectral": _spectral, "shifts": _shifts, "interleave": _interleave, "upsample": _upsample}

chains = st.lists(st.tuples(st.lists(st.integers(0, 5), min_size=1, max_size=3), st.sampled_from([F32, F64]),
                            st.lists(st.tuples(st.sampled_from(STEPS), st.integers(0, 2**16)), min_size=1,
                                     max_size=6)), min_size=1, max_size=4)


def _traced(program):
    return trace_chains(BUILD, program, 4096)


@settings(max_examples=40, deadline=None)
@given(program=chains)
def test_random_programs_never_raise_and_keep_their_outputs(program):
    m = _traced(program)
    args = [random(s.shape, s.dtype, seed=i) for i, s in enumerate(m.signature[0])]
    want = outputs(m, args)
    m.optimize()  # must not raise
    m.verify()
    for got, expected in zip(outputs(m, args), want):
        assert_same(got, expected)


def test_crop_past_the_operand_is_a_valid_pad():
    """The regression behind the fuzzing: pad(x: 2, low=-3, high=2) has one element, the padding."""
    m = hf.trace(lambda x: ops.pad(x, 1.5, (-3,), (2,)), hf.ShapeDtype((2,), F32))
    report = m.optimize()
    assert report.fired["negative_pad"] == 1
    np.testing.assert_array_equal(outputs(m, [np.array([1.0, 2.0], F32)])[0], [1.5])
