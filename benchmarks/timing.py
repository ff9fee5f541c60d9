"""Shared timing of the benchmarks: interleaved steady-state medians."""
from __future__ import annotations

import statistics
import time

import jax


def steady(fns, args, rounds):
    """Interleaved medians of 3-call medians, one per function (run.py's steady state): each
    function is warmed up (hf.jit functions until their truncated programs are compiled:
    ``finish_compiling``), then every round times 3 calls of each function in turn."""
    for f in fns:
        jax.block_until_ready(f(*args))
        if hasattr(f, "finish_compiling"):
            f.finish_compiling()
    times = [[] for _ in fns]
    for _ in range(rounds):
        for f, ts in zip(fns, times):
            samples = []
            for _ in range(3):
                t = time.perf_counter()
                jax.block_until_ready(f(*args))
                samples.append(time.perf_counter() - t)
            ts.append(statistics.median(samples))
    return [statistics.median(ts) for ts in times]
