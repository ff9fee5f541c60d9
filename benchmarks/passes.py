"""Benchmark: the default pass pipeline on a generated module of about 10,000 ops.

The module chains blocks that give every pattern family work: jax-style ortho FFT
round trips (scales computed through reduce/sqrt/divide/broadcast), no-op and nested
pads, slices of pads, transposes, constant arithmetic and plain elementwise ops.

    python benchmarks/passes.py [--ops 10000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import hloforge as hf
from hloforge import ops

SHAPE = (4, 8)


def _ortho_scale(n: int, dtype, inverse: bool):
    size = ops.reduce(ops.constant(np.array([n], dtype)), np.asarray(1, dtype), (0,), "mul")
    root = ops.sqrt(size)
    scale = root if inverse else ops.divide(ops.constant(np.asarray(1, dtype)), root)
    return ops.broadcast_in_dim(scale, (SHAPE[0], SHAPE[1] // 2 + 1) if not inverse else SHAPE, ())


def block(x, i: int = 0):
    """One block of about 40 ops; the default pipeline leaves about 5 of them. ``i`` varies
    its constants so that CSE cannot share them between blocks."""
    y = ops.sin(x)
    y = y * float(2 ** (i % 8)) * float(2.0 ** -(i % 8))
    y = ops.pad(ops.pad(y, 0.0, (0, 0), (0, 0)), 0.0, (1, 0), (0, 2))
    y = ops.slice(y, (1, 0), (SHAPE[0] + 1, SHAPE[1]))
    y = ops.transpose(ops.transpose(y, (1, 0)), (1, 0))
    z = ops.fft(y, "RFFT", SHAPE[1:]) * _ortho_scale(SHAPE[1], np.complex64, inverse=False)
    z = ops.pad(z, 0j, (0, 0), (0, 0))
    y = ops.fft(z, "IRFFT", SHAPE[1:]) * ops.convert(_ortho_scale(SHAPE[1], np.complex64, True), np.float32)
    c = ops.add(ops.sqrt(ops.constant(np.full(SHAPE, 4.0 + i, np.float32))),
                ops.constant(np.arange(np.prod(SHAPE), dtype=np.float32).reshape(SHAPE) / (i + 1)))
    return ops.tanh(ops.add(y, c))


def build(n_ops: int) -> hf.Module:
    probe = hf.trace(block, hf.ShapeDtype(SHAPE, np.float32))
    per_block = sum(probe.op_counts().values()) - 2
    blocks = max(1, n_ops // per_block)

    def fn(x):
        for i in range(blocks):
            x = block(x, i)
        return x

    return hf.trace(fn, hf.ShapeDtype(SHAPE, np.float32))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    template = build(args.ops)
    n = sum(template.op_counts().values())
    times = []
    for _ in range(args.repeat):
        m = template.clone()
        start = time.perf_counter()
        report = m.optimize()
        times.append(time.perf_counter() - start)
    print(report)
    print(f"default pipeline on {n} ops: best {min(times):.3f} s, "
          f"median {sorted(times)[len(times) // 2]:.3f} s over {args.repeat} runs")


if __name__ == "__main__":
    main()
