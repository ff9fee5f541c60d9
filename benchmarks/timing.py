"""Shared timing of the benchmarks: interleaved steady-state medians."""
from __future__ import annotations

import statistics
import time

import jax


QUEUED = 5  # calls per wait in the benchmarks' queued rows (off the CPU)


def steady(fns, args, rounds, calls=1):
    """Interleaved medians of 3-call medians, one per function (run.py's steady state): each
    function is warmed up (hf.jit functions until their truncated programs are compiled:
    ``finish_compiling``), then every round times 3 samples of each function in turn. A sample is
    ``calls`` calls waited for once, divided by ``calls``: more than 1 queues them as a training
    loop does, which on an accelerator leaves out the 0.1-0.5 ms a waited call costs there."""
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
                jax.block_until_ready([f(*args) for _ in range(calls)])
                samples.append((time.perf_counter() - t) / calls)
            ts.append(statistics.median(samples))
    return [statistics.median(ts) for ts in times]


def use_device(kind):
    """Run hloforge and jax on device kind ``kind`` ("cpu", "gpu", "tpu"; None: jax's default device):
    hf.config.device, and jax's default device, so that both frameworks' programs and arrays go there.
    Returns the device."""
    import hloforge as hf
    device = hf.devices(kind)[0] if kind else jax.devices()[0]
    hf.config.device = kind
    jax.config.update("jax_default_device", device)
    return device


def bandwidth(device, megabytes=512) -> float:
    """The device's measured memory bandwidth in bytes/s: ``x + 1`` over a float32 array (read + write)."""
    x = jax.device_put(jax.numpy.zeros((megabytes << 18,), jax.numpy.float32), device)
    f = jax.jit(lambda v: v + 1)
    jax.block_until_ready(f(x))
    t = time.perf_counter()
    for _ in range(10):
        y = f(x)
    jax.block_until_ready(y)
    return 10 * 2 * x.nbytes / (time.perf_counter() - t)
