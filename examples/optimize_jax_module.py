"""Take the StableHLO jax.jit produces for a spectral round trip, optimize it with hloforge,
show which ops the passes removed, and time both versions.

jax.jit keeps irfftn(rfftn(x)) as two FFTs (plus a no-op pad) and XLA keeps both; hloforge's
inverse-FFT elimination removes the pair. Run: python examples/optimize_jax_module.py
"""
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import hloforge as hf


def spectral_round_trips(x, w):
    for _ in range(4):  # four "layers" that go to Fourier space and straight back
        x = jnp.fft.irfftn(jnp.fft.rfftn(x, axes=(1, 2), norm="ortho"), s=x.shape[1:], axes=(1, 2), norm="ortho")
        x = jnp.tanh(x * w)
    return x


def best_of(fn, *args, repeats=20) -> float:
    fn(*args).block_until_ready()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args).block_until_ready()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 128, 128)).astype(np.float32)
    w = rng.standard_normal((128, 128)).astype(np.float32)
    text = jax.jit(spectral_round_trips).lower(x, w).as_text()

    module = hf.Module.parse(text)
    before = module.compile()
    report = module.optimize()
    after = module.compile()
    print(report)
    removed = {op: n - report.ops_after.get(op, 0) for op, n in report.ops_before.items()
               if n > report.ops_after.get(op, 0)}
    print("removed:", ", ".join(f"{n} x {op}" for op, n in sorted(removed.items())))

    want = np.asarray(before(x, w))
    got = np.asarray(after(x, w))
    error = float(np.max(np.abs(got - want)))
    t_before, t_after = best_of(before, x, w), best_of(after, x, w)
    print(f"jax's module: {t_before * 1e3:.2f} ms; optimized: {t_after * 1e3:.2f} ms; "
          f"speed-up {t_before / t_after:.2f}x; max abs difference {error:.2e}")
    return 0 if error < 1e-4 and module.op_counts().get("stablehlo.fft", 0) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
