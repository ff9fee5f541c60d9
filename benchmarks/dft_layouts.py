"""Which formulation of a truncated 2-D spectral convolution (rfft2 -> two corners of modes x weights ->
irfft2) runs fastest? Pure jax, every variant checked against jax's FFT program first (issue 46: is the
trailing (re, im) axis of hloforge's partial DFTs what keeps its TPU programs from the roofline?).

    python benchmarks/dft_layouts.py [--sizes b,c,n,m ...] [--repeats 30] [--dump DIR]

Variants:
  fft      jnp.fft.rfft2 / irfft2 (jax's program)
  hf       hf.optimize(fft, cost_model="tpu"): hloforge's partial DFT (real dots, trailing re/im axis of 2)
  complex  complex64 DFT matrices, einsum at HIGHEST (XLA splits complex dots itself)
  split    real and imaginary parts as separate real dots (no axis of 2 anywhere), grid axes contracted
           one at a time, outputs with the modes as the minor axis
  leading  like split, but the DFT matrices as lhs: outputs keep a grid (or channel) axis minor

Times are per call with calls queued (5 per wait, median of ``--repeats``). On a TPU v5e, 2026-12-06
(docs/benchmarks.md): hloforge's formulation is the fastest of the five at every size (0.47x / 0.27x / 0.12x
jax's FFTs at b8 c32 64^2 m12, b20 c32 94^2 m12, b32 c64 128^2 m16; the others 0.42-0.55x, 0.42-0.46x,
0.19-0.20x). ``--dump DIR`` writes each variant's compiled HLO at the first size and prints XLA's cost analysis.
"""
import argparse
import sys
import time

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax

HI = lax.Precision.HIGHEST


def reference(x, w, m):
    """x [b,c,n,n] f32, w [2,c,o,m,m] c64 -> [b,o,n,n]."""
    n = x.shape[-1]
    X = jnp.fft.rfft2(x)
    top = jnp.einsum("bchw,cohw->bohw", X[:, :, :m, :m], w[0])
    bot = jnp.einsum("bchw,cohw->bohw", X[:, :, -m:, :m], w[1])
    Y = jnp.zeros((x.shape[0], w.shape[2], n, n // 2 + 1), X.dtype)
    Y = Y.at[:, :, :m, :m].set(top).at[:, :, -m:, :m].set(bot)
    return jnp.fft.irfft2(Y, s=(n, n))


def dft_mats(n, m):
    """forward: Fw [n, m] (rfft along w, first m), Fh [n, 2m] (fft along h, rows 0..m-1 and n-m..n-1);
    inverse: Gh [2m, n] (ifft along h), Gw [m, n] (irfft along w, the Hermitian weights)."""
    k = np.arange(m)
    kh = np.concatenate([np.arange(m), np.arange(n - m, n)])
    j = np.arange(n)
    Fw = np.exp(-2j * np.pi * np.outer(j, k) / n)
    Fh = np.exp(-2j * np.pi * np.outer(j, kh) / n)
    Gh = np.exp(2j * np.pi * np.outer(kh, j) / n) / n
    scale = np.where((k == 0) | (2 * k == n), 1.0, 2.0)
    Gw = scale[:, None] * np.exp(2j * np.pi * np.outer(k, j) / n) / n
    return [a.astype(np.complex64) for a in (Fw, Fh, Gh, Gw)]


def mix(Xt, w, m):
    """Xt [b,c,2m,m] complex -> [b,o,2m,m] (top rows with w[0], bottom with w[1])."""
    top = jnp.einsum("bchw,cohw->bohw", Xt[:, :, :m], w[0], precision=HI)
    bot = jnp.einsum("bchw,cohw->bohw", Xt[:, :, m:], w[1], precision=HI)
    return jnp.concatenate([top, bot], axis=2)


def complex_variant(x, w, m, mats):
    Fw, Fh, Gh, Gw = mats
    X = jnp.einsum("bchw,wk->bchk", x.astype(jnp.complex64), Fw, precision=HI)
    X = jnp.einsum("bchk,hq->bcqk", X, Fh, precision=HI)
    Y = mix(X, w, m)
    Y = jnp.einsum("boqk,qh->bohk", Y, Gh, precision=HI)
    return jnp.einsum("bohk,kw->bohw", Y, Gw, precision=HI).real


def split_variant(x, w, m, mats):
    Fw, Fh, Gh, Gw = mats
    e = lambda s, a, b: jnp.einsum(s, a, b, precision=HI)
    xr = e("bchw,wk->bchk", x, Fw.real), e("bchw,wk->bchk", x, Fw.imag)
    Xr = e("bchk,hq->bcqk", xr[0], Fh.real) - e("bchk,hq->bcqk", xr[1], Fh.imag)
    Xi = e("bchk,hq->bcqk", xr[0], Fh.imag) + e("bchk,hq->bcqk", xr[1], Fh.real)
    Y = mix(lax.complex(Xr, Xi), w, m)
    Yr, Yi = Y.real, Y.imag
    Zr = e("boqk,qh->bohk", Yr, Gh.real) - e("boqk,qh->bohk", Yi, Gh.imag)
    Zi = e("boqk,qh->bohk", Yr, Gh.imag) + e("boqk,qh->bohk", Yi, Gh.real)
    return e("bohk,kw->bohw", Zr, Gw.real) - e("bohk,kw->bohw", Zi, Gw.imag)


def leading_variant(x, w, m, mats):
    Fw, Fh, Gh, Gw = mats
    e = lambda s, a, b: jnp.einsum(s, a, b, precision=HI)
    # (matrices first: dot outputs [k, b, c, h] with h minor, then [q, k, b, c] with c minor)
    xr, xi = e("wk,bchw->kbch", Fw.real, x), e("wk,bchw->kbch", Fw.imag, x)
    Xr = e("hq,kbch->qkbc", Fh.real, xr) - e("hq,kbch->qkbc", Fh.imag, xi)
    Xi = e("hq,kbch->qkbc", Fh.imag, xr) + e("hq,kbch->qkbc", Fh.real, xi)
    X = jnp.transpose(lax.complex(Xr, Xi), (2, 3, 0, 1))
    Y = mix(X, w, m)
    Yr, Yi = Y.real, Y.imag
    Zr = e("qh,boqk->bohk", Gh.real, Yr) - e("qh,boqk->bohk", Gh.imag, Yi)
    Zi = e("qh,boqk->bohk", Gh.imag, Yr) + e("qh,boqk->bohk", Gh.real, Yi)
    return e("bohk,kw->bohw", Zr, Gw.real) - e("bohk,kw->bohw", Zi, Gw.imag)


def timed(f, args, repeats):
    f(*args).block_until_ready()
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(5):
            r = f(*args)
        r.block_until_ready()
        out.append((time.perf_counter() - t) / 5)
    return float(np.median(out))


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", nargs="+", default=["8,32,64,12", "20,32,94,12", "32,64,128,16"])
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--no-hf", action="store_true")
    p.add_argument("--dump", default=None, help="write each variant's compiled HLO (first size) here")
    a = p.parse_args(argv)
    print(jax.devices()[0], flush=True)
    for size in a.sizes:
        b, c, n, m = map(int, size.split(","))
        rng = np.random.default_rng(0)
        x = jax.device_put(rng.standard_normal((b, c, n, n)).astype(np.float32))
        w = jax.device_put(((rng.random((2, c, c, m, m)) + 1j * rng.random((2, c, c, m, m))) / c / c).astype(np.complex64))
        mats = [jax.device_put(t) for t in dft_mats(n, m)]
        variants = {"fft": jax.jit(lambda x, w: reference(x, w, m))}
        if not a.no_hf:
            import hloforge as hf
            variants["hf"] = jax.jit(hf.optimize(lambda x, w: reference(x, w, m), cost_model="tpu"))
        for name, fn in (("complex", complex_variant), ("split", split_variant), ("leading", leading_variant)):
            variants[name] = jax.jit(lambda x, w, fn=fn: fn(x, w, m, mats))
        want = np.asarray(variants["fft"](x, w))
        if a.dump and size == a.sizes[0]:
            import os
            os.makedirs(a.dump, exist_ok=True)
            for name, f in variants.items():
                compiled = f.lower(x, w).compile()
                with open(os.path.join(a.dump, f"{name}.hlo.txt"), "w") as out:
                    out.write(compiled.as_text())
                cost = compiled.cost_analysis()
                cost = cost[0] if isinstance(cost, (list, tuple)) else cost
                print(f"{name:8s} bytes accessed {cost.get('bytes accessed', 0) / 1e6:9.2f} MB  "
                      f"flops {cost.get('flops', 0) / 1e6:9.1f} M", flush=True)
        base = None
        for name, f in variants.items():
            got = np.asarray(f(x, w))
            err = float(np.abs(got - want).max() / np.abs(want).max())
            t = timed(f, (x, w), a.repeats)
            base = base or t
            print(f"b{b} c{c} n{n} m{m}  {name:8s} {t * 1e3:8.3f} ms  {t / base:5.2f}x fft   rel err {err:.1e}",
                  flush=True)


if __name__ == "__main__":
    sys.exit(main())
