"""Does a 64-wide grid run faster on the TPU packed two rows to a 128-lane row? (issue 47: the FNO-2D at
b8 64² misses its TPU targets; its [b, c, 64, 64] activations are padded to the TPU's 128-lane tiles.)

    python benchmarks/packed_grid.py [--device tpu] [--calls 10]

Two parts, each timed from a jax.profiler trace (device time per call, benchmarks/device_profile.py):

1. The truncated DFT's two full-grid contractions alone (b8 c32 64², 12 modes, HIGHEST precision), in the
   form hloforge emits (5-D operands with a trailing re/im axis of 2), as flat 2-D products, and packed
   (two or four grid rows per row, the DFT matrix block-diagonal), and a read and write of the grid.
2. The whole FNO-2D (4 layers, width 32) written in jax three ways with the same partial-DFT matrices:
   ``unpacked`` (hloforge's chain), ``packed`` ([b, c, 32, 128] activations, 6-D einsums) and ``flat``
   (packed, every contraction a 2-D product over minor, contiguous dims, the intermediates transposed
   between them), forward and value_and_grad.

On a TPU v5e (2026-12-07, docs/benchmarks.md, "Tenth session"), packing halves the contractions alone, but
inside the model XLA's layout assignment folds the transposes into the products again and the forward is
slower: the pass it would take was not built.
"""
import argparse
import os
import sys

import numpy as np
import jax
import jax.numpy as jnp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from device_profile import call_time, op_times, positive_int  # noqa: E402
from timing import use_device  # noqa: E402

HI = jax.lax.Precision.HIGHEST
B, CIN, W, G, M, L = 8, 3, 32, 64, 12, 4


def dft_matrices(rng):
    """Random stand-ins of the partial DFT's four matrices (shapes are what the timing depends on; the
    variants are checked against each other, not against an FFT): the forward along y [y, ky, re/im], along
    x [re/im, x, 48], the inverse along x [48, x, re/im] and along y [re/im, ky, y]."""
    def r(*shape):
        return (rng.standard_normal(shape) / 8).astype(np.float32)
    return r(G, M, 2), r(2, G, 4 * M), r(4 * M, G, 2), r(2, M, G)


def block_diagonal(a, n):
    """kron(I_n, a) of a 2-D ``a``: ``n`` packed rows each multiplied by ``a``."""
    return np.kron(np.eye(n, dtype=a.dtype), a)


def packed_matrices(fy, gx, hx, ky):
    """The four matrices for [b, c, 32, 128] activations: 6-D forms (``packed``) and 2-D forms (``flat``)."""
    fy_p = np.zeros((2, G, 2, M, 2), np.float32)       # [s, y, s', ky, re/im] (s: the row in the pair)
    ky_p = np.zeros((2, M, 2, 2, G), np.float32)       # [s, ky, re/im, s', y]
    for s in range(2):
        fy_p[s, :, s] = fy
        ky_p[s, :, :, s] = ky.transpose(1, 0, 2)
    six_d = (fy_p.reshape(2 * G, 2, M, 2), gx.reshape(2, G // 2, 2, 4 * M), hx.reshape(4 * M, G // 2, 2, 2),
             ky_p.reshape(2, M, 2, 2 * G))
    flat = (fy_p.reshape(2 * G, 4 * M), gx.transpose(1, 0, 2).reshape(2 * G, 4 * M), hx.reshape(4 * M, 2 * G),
            ky_p.reshape(4 * M, 2 * G))
    return six_d, flat


def params(rng):
    def r(*shape, scale=1.0):
        return (scale * rng.standard_normal(shape)).astype(np.float32)
    layers = [{"skip": (r(W, W, scale=1 / 6), np.zeros(W, np.float32)),
               "spectral": ((rng.standard_normal((W, W, 2 * M, M)) + 1j * rng.standard_normal((W, W, 2 * M, M)))
                            / W).astype(np.complex64)} for _ in range(L)]
    return {"lift": (r(CIN, W), np.zeros(W, np.float32)), "layers": layers,
            "proj1": (r(W, 128, scale=1 / 6), np.zeros(128, np.float32)),
            "proj2": (r(128, 1, scale=1 / 11), np.zeros(1, np.float32))}


def gelu(x):
    return 0.5 * x * (1.0 + jnp.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def pointwise(h, w, b):
    return jnp.einsum("bc...,cd->bd...", h, w) + b.reshape((1, -1) + (1,) * (h.ndim - 2))


def mix(s, w):
    """[b, c, 48 (24 kx real | 24 kx imaginary), ky] x complex weights [c, o, 24, ky] -> the same layout."""
    o = jnp.einsum("bixy,ioxy->boxy", s[:, :, :2 * M] + 1j * s[:, :, 2 * M:], w)
    return jnp.concatenate([o.real, o.imag], axis=2)


def spectral_unpacked(h, w, mats):
    fy, gx, hx, ky = mats
    a = jnp.einsum("bcxy,ykr->bcxkr", h, fy, precision=HI)
    t = jnp.einsum("bcnk,nxr->bckxr", mix(jnp.einsum("bcxkr,rxn->bcnk", a, gx, precision=HI), w), hx, precision=HI)
    return jnp.einsum("bckxr,rky->bcxy", t, ky, precision=HI)


def spectral_packed(h, w, mats):
    fy, gx, hx, ky = mats
    a = jnp.einsum("bcpq,qskr->bcpskr", h, fy, precision=HI)
    t = jnp.einsum("bcnk,npsr->bckpsr", mix(jnp.einsum("bcpskr,rpsn->bcnk", a, gx, precision=HI), w), hx,
                   precision=HI)
    return jnp.einsum("bckpsr,skrq->bcpq", t, ky, precision=HI)


def spectral_flat(h, w, mats):
    fy, gx, hx, ky = mats
    a = jnp.dot(h, fy, precision=HI)                                                      # [b, c, p, (s, ky, r)]
    a = a.reshape(B, W, G // 2, 2, M, 2).transpose(0, 1, 4, 2, 3, 5).reshape(B, W, M, 2 * G)  # [b, c, ky, (p, s, r)]
    o = mix(jnp.dot(a, gx, precision=HI).transpose(0, 1, 3, 2), w).transpose(0, 1, 3, 2)  # [b, c, ky, 48]
    t = jnp.dot(o, hx, precision=HI)                                                      # [b, c, ky, (p, s, r)]
    t = t.reshape(B, W, M, G // 2, 2, 2).transpose(0, 1, 3, 4, 2, 5).reshape(B, W, G // 2, 4 * M)
    return jnp.dot(t, ky, precision=HI)                                                   # [b, c, p, (s, y)]


def model(spectral, mats, packed):
    """The FNO-2D forward with ``spectral`` as its spectral convolution; ``packed``: activations [b, c, 32, 128]."""
    def fno(p, x):
        h = pointwise(x.reshape(B, CIN, G // 2, 2 * G) if packed else x, *p["lift"])
        for i, layer in enumerate(p["layers"]):
            h = spectral(h, layer["spectral"], mats) + pointwise(h, *layer["skip"])
            h = h if i == L - 1 else gelu(h)
        return pointwise(gelu(pointwise(h, *p["proj1"])), *p["proj2"]).reshape(B, 1, G, G)
    return fno


def models_and_args(seed=0):
    """{"unpacked" | "packed" | "flat": forward}, (params, x, y) as jax arrays."""
    rng = np.random.default_rng(seed)
    mats = dft_matrices(rng)
    six_d, flat = packed_matrices(*mats)
    fns = {"unpacked": model(spectral_unpacked, mats, False), "packed": model(spectral_packed, six_d, True),
           "flat": model(spectral_flat, flat, True)}
    p = jax.tree.map(jnp.asarray, params(rng))
    x = jnp.asarray(rng.standard_normal((B, CIN, G, G)).astype(np.float32))
    y = jnp.asarray(rng.standard_normal((B, 1, G, G)).astype(np.float32))
    return fns, (p, x, y)


def contractions(rng):
    """{name: (function, args)}: part 1's contractions and the grid's read and write."""
    def r(*shape):
        return jnp.asarray(rng.standard_normal(shape).astype(np.float32))
    k2, f2 = np.asarray(r(2 * M, G)), np.asarray(r(G, 2 * M))
    x = r(B, W, G, G)
    return {
        "inverse, hloforge's 5-D form": (lambda t, k: jnp.einsum("bckxr,rky->bcxy", t, k, precision=HI),
                                         (r(B, W, M, G, 2), r(2, M, G))),
        "inverse, flat 2-D": (lambda t, k: jnp.dot(t, k, precision=HI), (r(B * W * G, 2 * M), k2)),
        "inverse, 2 rows packed": (lambda t, k: jnp.dot(t, k, precision=HI),
                                   (r(B * W * G // 2, 4 * M), block_diagonal(k2, 2))),
        "inverse, 4 rows packed": (lambda t, k: jnp.dot(t, k, precision=HI),
                                   (r(B * W * G // 4, 8 * M), block_diagonal(k2, 4))),
        "forward, hloforge's 5-D form": (lambda v, f: jnp.einsum("bcxy,ykr->bcxkr", v, f, precision=HI),
                                         (x, r(G, M, 2))),
        "forward, flat 2-D": (lambda v, f: jnp.dot(v.reshape(-1, G), f, precision=HI), (x, f2)),
        "forward, 2 rows packed": (lambda v, f: jnp.dot(v.reshape(-1, 2 * G), f, precision=HI),
                                   (r(B, W, G // 2, 2 * G), block_diagonal(f2, 2))),
        "forward, 4 rows packed": (lambda v, f: jnp.dot(v.reshape(-1, 4 * G), f, precision=HI),
                                   (r(B, W, G // 4, 4 * G), block_diagonal(f2, 4))),
        "read and write the grid [8,32,64,64]": (lambda v: v * 2.0, (x,)),
        "read and write it packed [8,32,32,128]": (lambda v: v * 2.0, (r(B, W, G // 2, 2 * G),)),
    }


def _device_time(fn, args, calls):
    return call_time(op_times(jax.jit(fn), args, calls))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, choices=("cpu", "gpu", "tpu"),
                        help="default: jax's default device")
    parser.add_argument("--calls", type=positive_int, default=10)
    args = parser.parse_args(argv)
    use_device(args.device)
    print("part 1: one contraction, device time per call")
    for name, (fn, fn_args) in contractions(np.random.default_rng(1)).items():
        print(f"  {name:40s} {_device_time(fn, fn_args, args.calls):8.1f} µs")
    fns, (p, x, y) = models_and_args()
    print("part 2: the FNO-2D b8 64² w32 m12, device time per call")
    for name, fn in fns.items():
        grad = jax.value_and_grad(lambda q, v, t, f=fn: jnp.mean((f(q, v) - t) ** 2))
        print(f"  {name:10s} forward {_device_time(fn, (p, x), args.calls):8.1f} µs   "
              f"value_and_grad {_device_time(grad, (p, x, y), args.calls):8.1f} µs")


if __name__ == "__main__":
    main()
