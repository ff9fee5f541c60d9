"""What an executable cache hit costs against a compile, on a module whose text is large: 30 layers of
rfft2 -> multiply by a 256x129 complex constant -> irfft2 over 256x256 (about 16 MB of text).

Rows (medians; the ratio is hit / compile, target <= 0.2):

- ``memory``: in one process (warmed by a small compile), ``m.compile()`` of a freshly traced module with
  the memory cache cleared, against the same for a second freshly traced identical module (a memory hit).
- ``disk``: in fresh processes (each warmed by a small compile), the compile with an empty cache
  directory, against the load from the directory that an earlier process filled (a disk hit).

Run: python benchmarks/cache_hit.py [--repeats N]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

LAYERS, N = 30, 256


def build():
    import hloforge as hf
    import hloforge.numpy as hnp
    from hloforge import ops
    rng = np.random.default_rng(0)
    ws = [(rng.standard_normal((N, N // 2 + 1)) + 1j * rng.standard_normal((N, N // 2 + 1))).astype(np.complex64)
          for _ in range(LAYERS)]

    def f(x):
        for w in ws:
            x = hnp.fft.irfft2(hnp.fft.rfft2(x) * ops.constant(w), s=(N, N))
        return x
    return hf.trace(f, hf.ShapeDtype((N, N), np.float32))


def _warm():
    import hloforge as hf
    import hloforge.numpy as hnp
    hf.trace(lambda x: hnp.fft.rfft2(x) * 2, hf.ShapeDtype((4, 4), np.float32)).compile()


def _timed_compile(m) -> tuple:
    start = time.perf_counter()
    exe = m.compile()
    return time.perf_counter() - start, exe.source


def child(directory: str) -> None:
    """One compile in this fresh process, with ``directory`` as the cache directory."""
    import hloforge as hf
    hf.config.cache_dir = None
    _warm()
    hf.config.cache_dir = directory
    print(json.dumps(_timed_compile(build())))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--child")
    args = parser.parse_args()
    if args.child:
        return child(args.child)
    import hloforge as hf
    from hloforge.runtime import cache
    hf.config.cache_dir = None
    _warm()
    print(f"module text: {len(build().to_text(debug_info=True)) / 1e6:.1f} MB")
    cold, hit = [], []
    for _ in range(args.repeats):
        cache.clear()
        cold.append(_timed_compile(build()))
        hit.append(_timed_compile(build()))
    assert {s for _, s in cold} == {"compiled"} and {s for _, s in hit} == {"memory"}, (cold, hit)
    rows = [("memory", statistics.median(t for t, _ in cold), statistics.median(t for t, _ in hit))]
    fresh, disk = [], []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as directory:
            for into in (fresh, disk):
                out = subprocess.run([sys.executable, __file__, "--child", directory], capture_output=True, text=True,
                                     check=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
                into.append(json.loads(out.stdout.splitlines()[-1]))
    assert {s for _, s in fresh} == {"compiled"} and {s for _, s in disk} == {"disk"}, (fresh, disk)
    rows.append(("disk", statistics.median(t for t, _ in fresh), statistics.median(t for t, _ in disk)))
    for name, compile_s, hit_s in rows:
        print(f"{name:7s} compile {compile_s * 1e3:7.1f} ms   hit {hit_s * 1e3:7.1f} ms   "
              f"ratio {hit_s / compile_s:.2f}")


if __name__ == "__main__":
    main()
