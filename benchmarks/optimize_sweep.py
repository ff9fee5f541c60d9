"""A sweep of random programs through ``optimize(finite_math=False)``, raw against optimized, bit for bit.

Each program is a few independent chains of random steps, traced into one module: pads (padding values
+0.0, -0.0, NaN, -inf; negative edges, interior padding), slices, reshapes, transposes, broadcasts,
unary ops, binary ops of shifted or padded copies and of special-value splats (add, subtract, multiply,
divide, max, min), selects of box masks (iota compares) and of value compares, small FFTs (lengths 1 to 8,
zero-filled spectra, inverse pairs), reductions (add, mul, max, min; identity and -0.0 inits, of pads) and
reduce_windows, concatenates with splat blocks. The inputs are arguments mixing ordinary values with +0.0,
-0.0, NaNs of both signs and distinct payloads, +-inf, subnormals, and complex numbers with inf or NaN
parts. Both modules are compiled (no cache directory) and run on the same inputs; every output element is
compared as unsigned integers, so signed zeros, NaN payloads and complex infinities count.

Run: python benchmarks/optimize_sweep.py --programs 200 [--seed 0] [--minimize] [--verbose]
A mismatch prints the program's seed; ``--only SEED --minimize`` drops chains and steps while it persists
and prints what is left.
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import time

import numpy as np

import hloforge as hf
from hloforge import ops

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from helpers import trace_chains  # noqa: E402  (the random-program tracer test_fuzz.py shares)

F32, F64, C64, C128 = (np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))
NAN_BITS = {F32: (0x7FC00000, 0xFFC00000, 0x7FC0BEEF, 0xFFC00123, 0x7FFFFFFF),
            F64: (0x7FF8000000000000, 0xFFF8000000000000, 0x7FF800000000BEEF, 0xFFF8000000000123)}
STEPS = ("pad", "pad", "slice", "reshape", "transpose", "broadcast", "unary", "binary", "binary", "splat",
         "divide", "select", "select", "fft", "fft", "reduce", "window", "concat")


# ---------------------------------------------------------------- inputs

def _real_specials(dtype) -> np.ndarray:
    tiny = np.finfo(dtype).smallest_subnormal
    plain = np.array([0.0, -0.0, np.inf, -np.inf, tiny, -tiny, 3 * tiny, np.finfo(dtype).tiny, 1.0, -1.0],
                     dtype)
    nans = np.array(NAN_BITS[dtype], np.uint32 if dtype == F32 else np.uint64).view(dtype)
    return np.concatenate([plain, nans])


def special_values(shape, dtype, seed) -> np.ndarray:
    """Random values of ``dtype`` (f32/f64/c64/c128), about half of them special (see the docstring)."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    part = F32 if dtype in (F32, C64) else F64
    specials = _real_specials(part)

    def parts():
        x = rng.uniform(-3, 3, shape).astype(part)
        pick = rng.random(shape) < 0.5
        x[pick] = specials[rng.integers(len(specials), size=int(pick.sum()))]
        return x
    if dtype.kind != "c":
        return parts()
    out = np.empty(shape, dtype)
    out.real, out.imag = parts(), parts()
    return out


# ---------------------------------------------------------------- steps

def _zero(x, value=0.0):
    return complex(value) if x.dtype.kind == "c" else value


def _pad(x, rng):
    n = x.shape
    interior = [int(rng.random() < 0.2) * int(rng.integers(1, 3)) for _ in n]
    low = [int(rng.integers(-s - 1, 3)) for s in n]
    high = []
    for lo, s, it in zip(low, n, interior):
        floor = -(lo + s + max(s - 1, 0) * it)  # (the result size stays >= 0)
        high.append(int(rng.integers(max(floor, -s - 1), max(floor, -s - 1) + 5)))
    value = float(rng.choice([0.0, -0.0, -0.0, 1.5, np.nan, -np.inf]))
    return ops.pad(x, _zero(x, value), low, high, interior)


def _slice(x, rng):
    start = [int(rng.integers(0, s + 1)) for s in x.shape]
    limit = [int(rng.integers(b, s + 1)) for b, s in zip(start, x.shape)]
    return ops.slice(x, start, limit, [int(rng.integers(1, 3)) for _ in x.shape])


def _reshape(x, rng):
    n = list(x.shape)
    if len(n) >= 2 and rng.random() < 0.5:
        i = int(rng.integers(len(n) - 1))
        n[i:i + 2] = [n[i] * n[i + 1]]
    else:
        n.insert(int(rng.integers(len(n) + 1)), 1)
    return ops.reshape(x, n) if len(n) <= 4 else x


def _transpose(x, rng):
    return ops.transpose(x, [int(p) for p in rng.permutation(x.ndim)])


def _broadcast(x, rng):
    if x.ndim >= 4:
        return x
    shape = list(x.shape)
    at = int(rng.integers(x.ndim + 1))
    shape.insert(at, int(rng.integers(1, 3)))
    return ops.broadcast_in_dim(x, shape, [i if i < at else i + 1 for i in range(x.ndim)])


def _unary(x, rng):
    if x.dtype.kind == "c":
        return [ops.real, ops.imag, ops.neg, ops.exp, ops.sqrt, lambda v: ops.multiply(v, v)][int(rng.integers(6))](x)
    return [ops.neg, ops.abs, ops.sin, ops.tanh, ops.sqrt, ops.exp, ops.floor, ops.sign][int(rng.integers(8))](x)


def _binary_op(x, rng):
    if x.dtype.kind == "c":
        return [ops.add, ops.subtract, ops.multiply, ops.divide][int(rng.integers(4))]
    return [ops.add, ops.subtract, ops.multiply, ops.divide, ops.maximum, ops.minimum][int(rng.integers(6))]


def _binary(x, rng):
    """f(x, a shifted copy of x), f of two pads of x, or f of two disjoint pads."""
    f = _binary_op(x, rng)
    if x.ndim == 0:
        return f(x, x)
    d = int(rng.integers(x.ndim))
    n = x.shape[d]
    zeros, lo, hi = [0] * x.ndim, [0] * x.ndim, [0] * x.ndim
    value = _zero(x, float(rng.choice([0.0, -0.0, 1.0])))
    kind = rng.integers(3)
    if kind == 0 and n > 1:
        k = int(rng.integers(1, n))
        lo[d], hi[d] = -k, k
        return f(x, ops.pad(x, value, lo, hi)) if rng.random() < 0.5 else f(ops.pad(x, value, lo, hi), x)
    if kind == 1:
        lo[d], hi[d] = int(rng.integers(-1, 3)), int(rng.integers(0, 3))
        if n + lo[d] < 0:
            return x
        other = _zero(x, float(rng.choice([0.0, -0.0])))
        return f(ops.pad(ops.neg(x), value, lo, hi), ops.pad(x, other if rng.random() < 0.5 else value, lo, hi))
    hi[d] = n + int(rng.integers(0, 3))
    return f(ops.pad(x, value, zeros, hi), ops.pad(ops.neg(x), value, hi, zeros))


def _splat(x, rng):
    """f(pad(x), splat c) or f(x, splat c) with c special."""
    f = _binary_op(x, rng)
    c = float(rng.choice([0.0, -0.0, 1.0, -1.0, 2.0, np.inf, -np.inf, np.nan]))
    c = complex(c, float(rng.choice([0.0, -0.0, 1.0]))) if x.dtype.kind == "c" else c
    if x.ndim and rng.random() < 0.5:
        lo = [int(rng.integers(0, 2)) for _ in x.shape]
        x = ops.pad(x, _zero(x, float(rng.choice([0.0, -0.0]))), lo, [0] * x.ndim)
    y = ops.constant(np.full(x.shape, c, x.dtype))
    return f(x, y) if rng.random() < 0.5 else f(y, x)


def _divide(x, rng):
    """x / pad(x) (division by the padding value), pad(x) / x's window, x / x."""
    if x.ndim == 0 or 0 in x.shape:
        return ops.divide(x, x)
    d = int(rng.integers(x.ndim))
    lo, hi = [0] * x.ndim, [0] * x.ndim
    lo[d], hi[d] = 1, -1
    value = _zero(x, float(rng.choice([0.0, -0.0, 1.0])))
    shifted = ops.pad(x, value, lo, hi)
    return ops.divide(x, shifted) if rng.random() < 0.5 else ops.divide(shifted, x)


def _select(x, rng):
    """select of a box mask (iota compares, a pad of a boolean) or of a value compare."""
    if x.ndim == 0 or 0 in x.shape:
        return x
    d = int(rng.integers(x.ndim))
    other = ops.neg(x) if rng.random() < 0.5 else ops.constant(np.full(x.shape, _zero(x, -0.0), x.dtype))
    kind = rng.integers(3)
    if kind == 0:
        i = ops.iota(x.shape, np.int32, d)
        k = ops.constant(np.full(x.shape, int(rng.integers(0, x.shape[d] + 1)), np.int32))
        mask = ops.compare(i, k, str(rng.choice(["LT", "GE", "EQ", "NE"])))
    elif kind == 1:
        lo, hi = [0] * x.ndim, [0] * x.ndim
        lo[d] = int(rng.integers(0, x.shape[d] + 1))
        inner = [s if i != d else s - lo[d] for i, s in enumerate(x.shape)]
        mask = ops.pad(ops.constant(np.ones(inner, bool)), False, lo, hi)
    else:
        probe = ops.real(x) if x.dtype.kind == "c" else x
        zero = ops.constant(np.zeros(probe.shape, probe.dtype))
        mask = ops.compare(probe, zero, str(rng.choice(["GT", "EQ", "NE", "LE"])))
    return ops.select(mask, x, other) if rng.random() < 0.5 else ops.select(mask, other, x)


def _fft(x, rng):
    """A small FFT (trailing length 1..8): complex FFT/IFFT, RFFT, IRFFT, their pairs, of zero-filled input."""
    if x.ndim == 0 or 0 in x.shape or x.shape[-1] > 8:
        return x
    n = x.shape[-1]
    complex_type = C64 if x.dtype in (F32, C64) else C128
    kind = rng.integers(4)
    if x.dtype.kind != "c":
        if kind == 0:
            return ops.fft(x, "RFFT", (n,))
        if kind == 1:  # irfft(rfft(x)): a pair finite math would drop
            return ops.fft(ops.fft(x, "RFFT", (n,)), "IRFFT", (n,))
        if kind == 2:  # rfft of a zero-filled signal
            hi = [0] * x.ndim
            hi[-1] = int(rng.integers(0, 4))
            return ops.fft(ops.pad(x, float(rng.choice([0.0, -0.0])), [0] * x.ndim, hi), "RFFT", (n + hi[-1],))
        x = ops.convert(x, complex_type)
    if kind == 1:
        return ops.fft(ops.fft(x, "FFT", (n,)), "IFFT", (n,))
    if kind == 2:
        length = 2 * n - 1 - int(n > 1 and rng.random() < 0.5)
        return ops.fft(x, "IRFFT", (length,))
    if kind == 3 and rng.random() < 0.5:  # fft of zeros padded after the signal
        hi = [0] * x.ndim
        hi[-1] = int(rng.integers(1, 4))
        x = ops.pad(x, complex(float(rng.choice([0.0, -0.0]))), [0] * x.ndim, hi)
    return ops.fft(x, str(rng.choice(["FFT", "IFFT"])), x.shape[-1:])


def _init(x, body, rng):
    identity = {"add": -0.0, "mul": 1.0, "max": -np.inf, "min": np.inf}[body]
    value = float(rng.choice([identity, identity, 0.0, -0.0, 2.0]))
    return np.array(complex(value) if x.dtype.kind == "c" else value, x.dtype)


def _reduce(x, rng):
    """A reduction over one dim (of a pad, sometimes), the dim put back as 1 so the chain goes on."""
    if x.ndim == 0:
        return x
    body = str(rng.choice(["add", "mul"] if x.dtype.kind == "c" else ["add", "mul", "max", "min"]))
    d = int(rng.integers(x.ndim))
    init = _init(x, body, rng)
    if rng.random() < 0.5:
        lo, hi = [0] * x.ndim, [0] * x.ndim
        lo[d] = int(rng.integers(0, 3))
        x = ops.pad(x, init[()] if rng.random() < 0.7 else _zero(x, -0.0), lo, hi)
    r = ops.reduce(x, init, (d,), body)
    shape = list(x.shape)
    shape[d] = 1
    return ops.reshape(r, shape)


def _window(x, rng):
    if x.ndim == 0 or x.dtype.kind == "c" or 0 in x.shape:
        return x
    body = str(rng.choice(["add", "max", "min"]))
    init = _init(x, body, rng)
    d = int(rng.integers(x.ndim))
    dims = [1] * x.ndim
    dims[d] = min(2, x.shape[d])
    padding = [(0, 0)] * x.ndim
    padding[d] = (int(rng.integers(0, 2)), int(rng.integers(0, 2)))
    if rng.random() < 0.5:
        lo, hi = [0] * x.ndim, [0] * x.ndim
        lo[d] = 1
        x = ops.pad(x, init[()], lo, hi)
    return ops.reduce_window(x, init, dims, padding=padding, body=body)


def _concat(x, rng):
    if x.ndim == 0 or 0 in x.shape:
        return x
    d = int(rng.integers(x.ndim))
    block = list(x.shape)
    block[d] = int(rng.integers(1, 3))
    v = float(rng.choice([0.0, -0.0, 1.0, np.nan]))
    fill = ops.constant(np.full(block, _zero(x, v), x.dtype))
    lo, hi = [0] * x.ndim, [0] * x.ndim
    lo[d] = int(rng.integers(1 - x.shape[d], 3))
    start = [0] * x.ndim
    start[d] = int(rng.integers(0, x.shape[d]))
    pieces = [ops.pad(x, _zero(x, v), lo, hi), fill, ops.slice(x, start, list(x.shape))]
    return ops.concatenate([pieces[i] for i in rng.permutation(3)], d)


BUILD = {"pad": _pad, "slice": _slice, "reshape": _reshape, "transpose": _transpose, "broadcast": _broadcast,
         "unary": _unary, "binary": _binary, "splat": _splat, "divide": _divide, "select": _select, "fft": _fft,
         "reduce": _reduce, "window": _window, "concat": _concat}


# ---------------------------------------------------------------- programs

def program(seed: int) -> list:
    """A program: chains of (input shape, dtype, [(step, step seed), ...])."""
    rng = np.random.default_rng(seed)
    chains = []
    for _ in range(int(rng.integers(1, 4))):
        shape = tuple(int(s) for s in rng.integers(0, 6, size=int(rng.integers(1, 4))))
        dtype = [F32, F32, F64, C64, C128][int(rng.integers(5))]
        steps = [(str(rng.choice(STEPS)), int(rng.integers(2**31))) for _ in range(int(rng.integers(1, 7)))]
        chains.append((shape, dtype, steps))
    return chains


def trace(chains):
    return trace_chains(BUILD, chains, 2048)


def bits(a) -> np.ndarray:
    """``a``'s elements as unsigned integers (complex: one row of two per element)."""
    a = np.ascontiguousarray(np.asarray(a))
    size = a.dtype.itemsize // (2 if a.dtype.kind == "c" else 1)
    part = {8: np.uint64, 4: np.uint32, 2: np.uint16, 1: np.uint8}[size]
    return a.view(part).reshape(a.size, 2 if a.dtype.kind == "c" else 1)


def _is_nan(b: np.ndarray, itemsize: int) -> np.ndarray:
    sign = np.array(1 << (8 * itemsize - 1), b.dtype)
    exponent = np.array({8: 0x7FF0000000000000, 4: 0x7F800000, 2: 0x7C00}[itemsize], b.dtype)
    return (b & ~sign) > exponent


def differences(raw, optimized) -> list:
    """(output, flat index, raw bits, optimized bits, kind) of every element whose bits differ; kind
    "value" (a number, a zero's sign, an infinity, NaN-ness changed) or "nan" (each changed part is a
    NaN both ways: only its sign or payload changed, which XLA itself does not keep: see the docs)."""
    found = []
    for i, (r, o) in enumerate(zip(raw, optimized)):
        r, o = np.asarray(r), np.asarray(o)
        if r.shape != o.shape or r.dtype != o.dtype:
            found.append((i, None, f"{r.dtype}{r.shape}", f"{o.dtype}{o.shape}", "value"))
            continue
        rb, ob = bits(r), bits(o)
        changed = rb != ob
        size = r.dtype.itemsize // (2 if r.dtype.kind == "c" else 1)
        both_nan = (_is_nan(rb, size) & _is_nan(ob, size)) if r.dtype.kind in "fc" else np.zeros_like(changed)
        for k in np.flatnonzero(changed.any(axis=1)):
            kind = "nan" if (both_nan[k] | ~changed[k]).all() else "value"
            found.append((i, int(k), " ".join(f"{b:#x}" for b in rb[k]), " ".join(f"{b:#x}" for b in ob[k]),
                          kind))
    return found


def run_chains(chains, seed):
    """(raw outputs, optimized outputs, the pass report) of ``chains`` on special-value inputs."""
    m = trace(chains)
    args = [special_values(shape, dtype, seed + i) for i, (shape, dtype, _) in enumerate(chains)]
    raw = [np.asarray(o) for o in m.compile().call_flat(args)]
    optimized = m.clone()
    report = optimized.optimize(finite_math=False)
    optimized.verify()
    got = [np.asarray(o) for o in optimized.compile().call_flat(args)]
    return raw, got, report


def check(seed: int):
    """(differences, the pass report) of program ``seed``."""
    chains = program(seed)
    raw, got, report = run_chains(chains, seed)
    return differences(raw, got), report


def minimize(chains, seed, kinds=("value",)):
    """Drop chains, then single steps, while a difference of one of ``kinds`` persists."""
    def fails(c):
        try:
            raw, got, _ = run_chains(c, seed)
        except Exception:  # noqa: BLE001  (a raise is a finding too)
            return True
        return any(d[-1] in kinds for d in differences(raw, got))
    changed = True
    while changed:
        changed = False
        for i in range(len(chains)):
            trial = chains[:i] + chains[i + 1:]
            if trial and fails(trial):
                chains, changed = trial, True
                break
        for i, (shape, dtype, steps) in enumerate(chains):
            for j in range(len(steps)):
                trial = chains[:i] + [(shape, dtype, steps[:j] + steps[j + 1:])] + chains[i + 1:]
                if steps[:j] + steps[j + 1:] and fails(trial):
                    chains, changed = trial, True
                    break
            if changed:
                break
    return chains


def sweep(programs: int, start: int = 0, verbose: bool = False, out=sys.stdout):
    """Run programs ``start .. start + programs``; returns (fired pattern counts, seeds whose values
    changed or whose passes raised, seeds where only NaN signs or payloads changed)."""
    fired, bad, nan_only = collections.Counter(), [], []
    for seed in range(start, start + programs):
        try:
            found, report = check(seed)
        except Exception as e:  # noqa: BLE001  (a valid program must never make a pass raise)
            bad.append(seed)
            print(f"seed {seed}: raised {type(e).__name__}: {str(e)[:300]}", file=out)
            continue
        fired.update({k: v for k, v in report.fired.items() if v})
        values = [d for d in found if d[-1] == "value"]
        if found:
            (bad if values else nan_only).append(seed)
        if values or (found and verbose):
            empty = any(0 in shape for shape, _, _ in program(seed))
            print(f"seed {seed}{' (an empty input)' if empty else ''}: {len(values)} values and "
                  f"{len(found) - len(values)} NaN signs or payloads differ, "
                  f"e.g. {(values or found)[:3]}; fired {sorted(k for k, v in report.fired.items() if v)}", file=out)
        elif verbose:
            print(f"seed {seed}: ok", file=out)
    return fired, bad, nan_only


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--programs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0, help="the first program's seed")
    parser.add_argument("--only", type=int, help="one program's seed")
    parser.add_argument("--minimize", action="store_true")
    parser.add_argument("--nan", action="store_true", help="minimize NaN sign or payload differences too")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    hf.config.cache_dir = None
    if args.only is not None:
        chains = program(args.only)
        if args.minimize:
            chains = minimize(chains, args.only, ("value", "nan") if args.nan else ("value",))
        raw, got, report = run_chains(chains, args.only)
        print(chains)
        print(differences(raw, got))
        print({k: v for k, v in report.fired.items() if v})
        return
    begin = time.perf_counter()
    fired, bad, nan_only = sweep(args.programs, args.seed, args.verbose)
    print(f"programs {args.programs} (seeds {args.seed}..{args.seed + args.programs - 1}), "
          f"{time.perf_counter() - begin:.0f} s; patterns fired {sum(fired.values())} "
          f"({len(fired)} distinct); programs with changed values or a raise {len(bad)}: {bad}; "
          f"with only NaN signs or payloads changed {len(nan_only)}")
    print(dict(fired.most_common()))


if __name__ == "__main__":
    main()
