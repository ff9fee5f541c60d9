"""Would one FNO layer as a hand-written Pallas kernel beat XLA's fusions on a TPU? (issue 46: at 128² and
256² hloforge's truncated FNO runs three full-grid fusions per layer, 3 reads and 2 writes of the activation.)

The kernel does the layer's grid work in one pass, in hloforge's own layout [B, C, X, Y], R rows of X per grid
step: h' = gelu(W h + b + S1 Binv) (1x1 convolution, the inverse partial DFT over Y's kept modes, bias, GELU)
and T' = h' F (the next layer's forward partial DFT over Y), so it reads h once and writes h' once. The
convolution is one dot, kron(W, I_R) [O*R, C*R] @ h [C*R, Y], which keeps the rows in (channel, row) order;
the DFT dots run at HIGHEST, as hloforge's do. Each row compares it with the same layer under XLA and with a
GELU of one activation (one read, one write: the floor of any one-pass layer).

    python benchmarks/fno_layer_kernel.py              # on the TPU
    python benchmarks/fno_layer_kernel.py --interpret  # anywhere: Pallas's interpreter, small sizes, values only

On a TPU v5e, 2026-12-07 (docs/benchmarks.md): 1.10 ms at 256² (R = 8) and 1.62 ms at 128² (R = 16) against
1.88 and 1.79 ms for the same layer under XLA, where hloforge's program spends about 1.0 ms per layer, and a
GELU copy 0.51 ms: the kernel is bound by its HIGHEST-precision DFT dots (K or N of 32), not by memory, and
Pallas's TPU dots take no HIGH (three-pass) precision. Not worth a pass.
"""
import functools
import math
import sys
import time

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

HIGHEST = jax.lax.Precision.HIGHEST


def gelu(x):
    return 0.5 * x * (1.0 + jnp.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))


def dft_matrices(y: int, k: int):
    """[2k, Y] inverse (irfft's weights over the first k bins) and [Y, 2k] forward (rfft's first k bins)."""
    n, m = np.arange(y), np.arange(k)
    theta = 2 * np.pi * np.outer(n, m) / y
    forward = np.concatenate([np.cos(theta), -np.sin(theta)], 1)
    weight = np.where((m == 0) | (2 * m == y), 1.0, 2.0) / y
    inverse = np.concatenate([weight[:, None] * np.cos(theta.T), -weight[:, None] * np.sin(theta.T)], 0)
    return inverse.astype(np.float32), forward.astype(np.float32)


def xla_layer(h, s1, w, b, inverse, forward):
    """The layer as XLA gets it: h [B, C, X, Y], s1 [B, O, X, 2k], w [O, C], b [O, 1]."""
    acc = (jnp.einsum("oc,bcxy->boxy", w, h) + jnp.einsum("boxk,ky->boxy", s1, inverse, precision=HIGHEST)
           + b[None, :, :, None])
    out = gelu(acc)
    return out, jnp.einsum("boxy,yk->boxk", out, forward, precision=HIGHEST)


def _kernel(h_ref, s_ref, w_ref, b_ref, inverse_ref, forward_ref, out_ref, t_ref):
    c, r, y = h_ref.shape[1:]
    o, k2 = s_ref.shape[1], s_ref.shape[3]
    acc = jnp.dot(w_ref[...], h_ref[0].reshape(c * r, y), preferred_element_type=jnp.float32)
    acc += jnp.dot(s_ref[0].reshape(o * r, k2), inverse_ref[...], precision=HIGHEST,
                   preferred_element_type=jnp.float32)
    out = gelu(acc + b_ref[...])
    out_ref[0] = out.reshape(o, r, y)
    t_ref[0] = jnp.dot(out, forward_ref[...], precision=HIGHEST, preferred_element_type=jnp.float32).reshape(o, r, k2)


def kernel_layer(h, s1, w, b, inverse, forward, *, rows=8, interpret=False):
    """``xla_layer`` as one Pallas kernel over (batch, blocks of ``rows`` rows of X)."""
    batch, _, x, y = h.shape
    o, k2 = w.shape[0], forward.shape[1]
    w_rows = jnp.kron(w, jnp.eye(rows, dtype=w.dtype))
    b_rows = jnp.repeat(b, rows, axis=0)
    whole = lambda a: pl.BlockSpec(a.shape, lambda i, j: (0,) * a.ndim)
    return pl.pallas_call(
        _kernel, grid=(batch, x // rows), interpret=interpret,
        in_specs=[pl.BlockSpec((1, h.shape[1], rows, y), lambda i, j: (i, 0, j, 0)),
                  pl.BlockSpec((1, o, rows, k2), lambda i, j: (i, 0, j, 0)),
                  whole(w_rows), whole(b_rows), whole(inverse), whole(forward)],
        out_specs=[pl.BlockSpec((1, o, rows, y), lambda i, j: (i, 0, j, 0)),
                   pl.BlockSpec((1, o, rows, k2), lambda i, j: (i, 0, j, 0))],
        out_shape=[jax.ShapeDtypeStruct((batch, o, x, y), jnp.float32),
                   jax.ShapeDtypeStruct((batch, o, x, k2), jnp.float32)],
    )(h, s1, w_rows, b_rows, inverse, forward)


def queued(fn, args, repeats=20, calls=5):
    """Median seconds per call, ``calls`` calls per wait."""
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready([fn(*args) for _ in range(calls)])
        times.append((time.perf_counter() - start) / calls)
    return float(np.median(times))


def main(interpret: bool):
    sizes = [(2, 8, 16, 128, 4)] if interpret else [(16, 32, 256, 256, 16), (32, 64, 128, 128, 16),
                                                     (8, 32, 64, 64, 12)]
    rng = np.random.default_rng(0)
    for batch, c, x, y, k in sizes:
        inverse, forward = dft_matrices(y, k)
        args = [jnp.asarray(a) for a in (rng.standard_normal((batch, c, x, y)).astype(np.float32),
                                         (0.1 * rng.standard_normal((batch, c, x, 2 * k))).astype(np.float32),
                                         (rng.standard_normal((c, c)) / np.sqrt(c)).astype(np.float32),
                                         (0.1 * rng.standard_normal((c, 1))).astype(np.float32), inverse, forward)]
        want = [np.asarray(a) for a in jax.jit(xla_layer)(*args)]
        line = f"b{batch} c{c} {x}x{y} k{k}:"
        if not interpret:
            t_xla, t_copy = queued(jax.jit(xla_layer), args), queued(jax.jit(gelu), args[:1])
            line += f" XLA {t_xla * 1e3:.3f} ms, GELU copy {t_copy * 1e3:.3f} ms;"
        for rows in (8, 16):
            fn = jax.jit(functools.partial(kernel_layer, rows=rows, interpret=interpret))
            got = [np.asarray(a) for a in fn(*args)]
            gap = max(float(np.max(np.abs(g - w)) / np.max(np.abs(w))) for g, w in zip(got, want))
            line += f" kernel R={rows}: gap {gap:.1e}"
            if not interpret:
                t = queued(fn, args)
                line += f" {t * 1e3:.3f} ms ({t / t_xla:.2f}x XLA)"
            line += ";"
        print(line, flush=True)


if __name__ == "__main__":
    main("--interpret" in sys.argv)
