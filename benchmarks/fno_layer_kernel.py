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
    python benchmarks/fno_layer_kernel.py --variants  # the DFT dots at other precisions, parts left out
    python benchmarks/fno_layer_kernel.py --packed    # also the lane-dense layers (packed_layer, rows_outer_layer)

On a TPU v5e, 2026-12-07 (docs/benchmarks.md): 1.10 ms at 256² (R = 8) and 1.62 ms at 128² (R = 16) against
1.88 and 1.79 ms for the same layer under XLA, where hloforge's program spends about 1.0 ms per layer, and a
GELU copy 0.51 ms. Not worth a pass. ``--variants`` (2026-12-08) shows what bounds it: not the DFT dots (at
default precision, or HIGH's three bfloat16 products built in the kernel, it gains 10-20% at 256² and loses at
128²), but moving the blocks: with every dot and the GELU left out it still takes 0.84 ms at 256² and 1.47 ms
at 128². The spectral blocks [O, R, 2k] are 2k = 32 wide, padded to the chip's 128 lanes, so at 128² the
kernel moves four grids' worth of bytes where the copy moves two. ``--packed``: with those arrays lane-dense
(p = 128 / 2k rows of X side by side, the DFT matrices p-block diagonal) the layer takes 0.82 ms at 256² and,
with the packed rows outside the channels, 0.85 ms at 128²: 0.44x and 0.47x XLA's layer, about 15% under
hloforge's own fusions per layer, before converting the spectral arrays for the X-direction work.
"""
import argparse
import functools
import math
import time

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

HIGHEST = jax.lax.Precision.HIGHEST
# the DFT dots' precisions: jax's two, and HIGH's three bfloat16 products built by hand (Pallas's TPU dots
# refuse Precision.HIGH)
PRECISIONS = {"highest": HIGHEST, "default": jax.lax.Precision.DEFAULT, "high3": None}
PARTS = ("conv", "inverse", "gelu", "forward")  # what --variants leaves out, one at a time and all at once


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


def _split(a):
    """``a`` as bfloat16 (hi, lo) with hi + lo = a to about 16 bits."""
    hi = a.astype(jnp.bfloat16)
    return hi, (a - hi.astype(jnp.float32)).astype(jnp.bfloat16)


def _kernel(precision, skip, h_ref, s_ref, w_ref, b_ref, inverse_ref, forward_ref, out_ref, t_ref):
    c, r, y = h_ref.shape[1:]
    o, k2 = s_ref.shape[1], t_ref.shape[3]
    h = h_ref[0].reshape(c * r, y)
    acc = h if "conv" in skip else jnp.dot(w_ref[...], h, preferred_element_type=jnp.float32)
    s = s_ref[0].reshape(o * r, s_ref.shape[3])
    if "inverse" not in skip:  # (high3: s arrives as [s_hi, s_hi, s_lo], the inverse as [i_hi; i_lo; i_hi])
        acc += jnp.dot(s, inverse_ref[...], precision=PRECISIONS[precision], preferred_element_type=jnp.float32)
    out = acc + b_ref[...] if "gelu" in skip else gelu(acc + b_ref[...])
    out_ref[0] = out.reshape(o, r, y)
    if "forward" in skip:
        t = out[:, :k2]
    elif precision == "high3":  # the forward matrix as [F_hi | F_lo | F_hi]: out_hi @ [F_hi | F_lo] + out_lo @ F_hi
        hi, lo = _split(out)
        both = jnp.dot(hi, forward_ref[:, :2 * k2], preferred_element_type=jnp.float32)
        t = both[:, :k2] + both[:, k2:] + jnp.dot(lo, forward_ref[:, 2 * k2:], preferred_element_type=jnp.float32)
    else:
        t = jnp.dot(out, forward_ref[...], precision=PRECISIONS[precision], preferred_element_type=jnp.float32)
    t_ref[0] = t.reshape(o, r, k2)


def kernel_layer(h, s1, w, b, inverse, forward, *, rows=8, precision="highest", skip=(), interpret=False):
    """``xla_layer`` as one Pallas kernel over (batch, blocks of ``rows`` rows of X), its DFT dots at
    ``precision`` (a name of PRECISIONS), the PARTS in ``skip`` left out (timing only: wrong values)."""
    batch, _, x, y = h.shape
    o, k2 = w.shape[0], forward.shape[1]
    if precision == "high3":  # (the pieces of the small operands are built here, outside the kernel)
        (s_hi, s_lo), (i_hi, i_lo), (f_hi, f_lo) = _split(s1), _split(inverse), _split(forward)
        s1 = jnp.concatenate([s_hi, s_hi, s_lo], -1)
        inverse = jnp.concatenate([i_hi, i_lo, i_hi], 0)
        forward = jnp.concatenate([f_hi, f_lo, f_hi], 1)
    w_rows = jnp.kron(w, jnp.eye(rows, dtype=w.dtype))
    b_rows = jnp.repeat(b, rows, axis=0)
    whole = lambda a: pl.BlockSpec(a.shape, lambda i, j: (0,) * a.ndim)
    return pl.pallas_call(
        functools.partial(_kernel, precision, tuple(skip)), grid=(batch, x // rows), interpret=interpret,
        in_specs=[pl.BlockSpec((1, h.shape[1], rows, y), lambda i, j: (i, 0, j, 0)),
                  pl.BlockSpec((1, o, rows, s1.shape[3]), lambda i, j: (i, 0, j, 0)),
                  whole(w_rows), whole(b_rows), whole(inverse), whole(forward)],
        out_specs=[pl.BlockSpec((1, o, rows, y), lambda i, j: (i, 0, j, 0)),
                   pl.BlockSpec((1, o, rows, k2), lambda i, j: (i, 0, j, 0))],
        out_shape=[jax.ShapeDtypeStruct((batch, o, x, y), jnp.float32),
                   jax.ShapeDtypeStruct((batch, o, x, k2), jnp.float32)],
    )(h, s1, w_rows, b_rows, inverse, forward)


def packed(a, p: int):
    """[B, C, X, L] as [B, C, X / p, p * L]: p rows of X side by side in one row (a row-major reshape)."""
    batch, c, x, length = a.shape
    return a.reshape(batch, c, x // p, p * length)


def _packed_kernel(last, h_ref, s_ref, w_ref, b_ref, inverse_ref, forward_ref, out_ref, t_ref=None):
    c, n, py = h_ref.shape[1:]
    o = s_ref.shape[1]
    acc = jnp.dot(w_ref[...], h_ref[0].reshape(c * n, py), preferred_element_type=jnp.float32)
    acc += jnp.dot(s_ref[0].reshape(o * n, s_ref.shape[3]), inverse_ref[...], precision=HIGHEST,
                   preferred_element_type=jnp.float32)
    out = acc + b_ref[...] if last else gelu(acc + b_ref[...])
    out_ref[0] = out.reshape(o, n, py)
    if not last:
        t_ref[0] = jnp.dot(out, forward_ref[...], precision=HIGHEST,
                           preferred_element_type=jnp.float32).reshape(o, n, t_ref.shape[3])


def _rows_outer_kernel(last, h_ref, s_ref, w_ref, b_ref, inverse_ref, forward_ref, out_ref, t_ref=None):
    for i in range(h_ref.shape[1]):  # (each packed row: plain dots, no kron-expanded convolution)
        acc = jnp.dot(w_ref[...], h_ref[0, i], preferred_element_type=jnp.float32)
        acc += jnp.dot(s_ref[0, i], inverse_ref[...], precision=HIGHEST, preferred_element_type=jnp.float32)
        out = acc + b_ref[...] if last else gelu(acc + b_ref[...])
        out_ref[0, i] = out
        if not last:
            t_ref[0, i] = jnp.dot(out, forward_ref[...], precision=HIGHEST, preferred_element_type=jnp.float32)


def rows_per_row(k2: int) -> int:
    """p: how many spectral rows of 2k values (zero-padded to a divisor of 128) fill one 128-lane row."""
    return 128 // next(d for d in (8, 16, 32, 64, 128) if d >= k2)


def packed_matrices(inverse, forward, py: int):
    """(p, the inverse DFT's [128, p*Y] and the forward DFT's [p*Y, 128] p-block diagonals) of ``dft_matrices``'
    [2k, Y] and [Y, 2k], 2k zero-padded to 128 / p."""
    k2 = inverse.shape[0]
    p = rows_per_row(k2)
    width = 128 // p
    inverse = jnp.pad(inverse, ((0, width - k2), (0, 0)))
    forward = jnp.pad(forward, ((0, 0), (0, width - k2)))
    eye = jnp.eye(p, dtype=inverse.dtype)
    return (p, jnp.einsum("ij,ky->ikjy", eye, inverse).reshape(128, py),
            jnp.einsum("ij,yk->iyjk", eye, forward).reshape(py, 128))


def _lane_dense_call(kernel, h, s1, w, b, inverse, forward, rows, last, interpret, rows_outer_layout):
    batch = h.shape[0]
    xp, c = (h.shape[1], h.shape[2]) if rows_outer_layout else (h.shape[2], h.shape[1])
    py = h.shape[3]
    p, inverse_p, forward_p = packed_matrices(inverse, forward, py)
    n, o = rows // p, w.shape[0]
    if not rows_outer_layout:  # (the convolution of n rows at once: kron(W, I_n), rows in (channel, row) order)
        w, b = jnp.kron(w, jnp.eye(n, dtype=w.dtype)), jnp.repeat(b, n, axis=0)
    whole = lambda a: pl.BlockSpec(a.shape, lambda i, j: (0,) * a.ndim)
    if rows_outer_layout:
        block = lambda ch, lanes: pl.BlockSpec((1, n, ch, lanes), lambda i, j: (i, j, 0, 0))
        shape = lambda ch, lanes: jax.ShapeDtypeStruct((batch, xp, ch, lanes), jnp.float32)
    else:
        block = lambda ch, lanes: pl.BlockSpec((1, ch, n, lanes), lambda i, j: (i, 0, j, 0))
        shape = lambda ch, lanes: jax.ShapeDtypeStruct((batch, ch, xp, lanes), jnp.float32)
    outs = [(o, py)] + ([] if last else [(o, 128)])
    return pl.pallas_call(
        functools.partial(kernel, last), grid=(batch, xp // n), interpret=interpret,
        in_specs=[block(c, py), block(o, 128), whole(w), whole(b), whole(inverse_p), whole(forward_p)],
        out_specs=[block(*a) for a in outs], out_shape=[shape(*a) for a in outs],
    )(h, s1, w, b, inverse_p, forward_p)


def packed_layer(h, s1, w, b, inverse, forward, *, rows=32, last=False, interpret=False):
    """``xla_layer`` with every array lane-dense: the spectral arrays [B, O, X, 2k] have 2k (zero-padded to a
    divisor of 128) lanes where the chip's tiles have 128, so ``p = 128 / 2k`` rows of X go side by side in one
    row (``packed``), the grid's rows with them, and the DFT matrices become ``p``-block diagonals: the
    inverse DFT contracts 128 (not 2k) and the forward one writes 128 (not 2k) columns, the same passes of the
    matrix unit. Takes and returns packed arrays: h [B, C, X/p, p*Y], s1 [B, O, X/p, 128]. ``last``: an FNO's
    last layer (no GELU, no spectrum for a next layer; returns [h'])."""
    return _lane_dense_call(_packed_kernel, h, s1, w, b, inverse, forward, rows, last, interpret, False)


def rows_outer_layer(h, s1, w, b, inverse, forward, *, rows=32, last=False, interpret=False):
    """``packed_layer`` with the packed rows outside the channels: h [B, X/p, C, p*Y], s1 [B, X/p, O, 128]
    (``rows_outer``), so that each packed row's convolution is one [O, C] x [C, p*Y] dot."""
    return _lane_dense_call(_rows_outer_kernel, h, s1, w, b, inverse, forward, rows, last, interpret, True)


def rows_outer(a):
    """A ``packed`` array [B, C, X/p, L] as [B, X/p, C, L]."""
    return jnp.transpose(a, (0, 2, 1, 3))


def packed_args(layer_args):
    """``xla_layer``'s arguments as ``packed_layer`` takes them, and p."""
    h, s1, w, b, inverse, forward = layer_args
    k2 = inverse.shape[0]
    p = rows_per_row(k2)
    s1 = jnp.pad(s1, ((0, 0), (0, 0), (0, 0), (0, 128 // p - k2)))
    return [packed(h, p), packed(s1, p), w, b, inverse, forward], p


def unpacked_t(t, p: int, k2: int):
    """``packed_layer``'s spectral result as ``xla_layer``'s [B, O, X, 2k]."""
    batch, o, xp, _ = t.shape
    return t.reshape(batch, o, xp * p, -1)[..., :k2]


def queued(fn, args, repeats=20, calls=5):
    """Median seconds per call, ``calls`` calls per wait."""
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready([fn(*args) for _ in range(calls)])
        times.append((time.perf_counter() - start) / calls)
    return float(np.median(times))


def _variants(interpret: bool) -> list:
    """(label, kernel_layer keywords) of the rows: each precision, then each part left out and all four."""
    rows = (8,) if interpret else (8, 16)
    out = [(f"{p} R={r}", dict(rows=r, precision=p)) for p in PRECISIONS for r in rows]
    for skip in [(part,) for part in PARTS] + [PARTS]:
        out += [(f"without {'+'.join(skip)} R={r}", dict(rows=r, skip=skip)) for r in rows]
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interpret", action="store_true", help="Pallas's interpreter, small sizes, values only")
    parser.add_argument("--packed", action="store_true", help="also packed_layer (lane-dense arrays)")
    parser.add_argument("--variants", action="store_true",
                        help="also the DFT dots at default and by-hand HIGH precision, and parts left out")
    args = parser.parse_args(argv)
    interpret = args.interpret
    sizes = [(2, 8, 64, 128, 16)] if interpret else [(16, 32, 256, 256, 16), (32, 64, 128, 128, 16),
                                                     (8, 32, 64, 64, 12)]
    variants = _variants(interpret) if args.variants else [(f"R={r}", dict(rows=r)) for r in (8, 16)]
    rng = np.random.default_rng(0)
    for batch, c, x, y, k in sizes:
        inverse, forward = dft_matrices(y, k)
        layer_args = [jnp.asarray(a) for a in (
            rng.standard_normal((batch, c, x, y)).astype(np.float32),
            (0.1 * rng.standard_normal((batch, c, x, 2 * k))).astype(np.float32),
            (rng.standard_normal((c, c)) / np.sqrt(c)).astype(np.float32),
            (0.1 * rng.standard_normal((c, 1))).astype(np.float32), inverse, forward)]
        want = [np.asarray(a) for a in jax.jit(xla_layer)(*layer_args)]
        print(f"b{batch} c{c} {x}x{y} k{k}:", flush=True)
        if not interpret:
            t_xla, t_copy = queued(jax.jit(xla_layer), layer_args), queued(jax.jit(gelu), layer_args[:1])
            print(f"  XLA's layer {t_xla * 1e3:.3f} ms, GELU copy {t_copy * 1e3:.3f} ms", flush=True)
        for label, keywords in variants:
            fn = jax.jit(functools.partial(kernel_layer, interpret=interpret, **keywords))
            got = [np.asarray(a) for a in fn(*layer_args)]
            line = f"  kernel {label}:"
            if not keywords.get("skip"):
                gap = max(float(np.max(np.abs(g - w)) / np.max(np.abs(w))) for g, w in zip(got, want))
                line += f" gap to XLA's {gap:.1e}"
            if not interpret:
                t = queued(fn, layer_args)
                line += f" {t * 1e3:.3f} ms ({t / t_xla:.2f}x XLA's layer)"
            print(line, flush=True)
        if args.packed:
            prepared, p = packed_args(layer_args)
            outer = [rows_outer(prepared[0]), rows_outer(prepared[1])] + prepared[2:]
            for name, layer, inputs, back in [("packed", packed_layer, prepared, lambda a: a),
                                              ("rows-outer", rows_outer_layer, outer, rows_outer)]:
                for rows in (8 * p,) if interpret else (8 * p, 16 * p):
                    fn = jax.jit(functools.partial(layer, rows=rows, interpret=interpret))
                    out, t = (back(a) for a in fn(*inputs))
                    got = [np.asarray(out).reshape(want[0].shape), np.asarray(unpacked_t(t, p, want[1].shape[3]))]
                    gap = max(float(np.max(np.abs(g - w)) / np.max(np.abs(w))) for g, w in zip(got, want))
                    line = f"  {name} kernel (p={p}) R={rows}: gap to XLA's {gap:.1e}"
                    if not interpret:
                        seconds = queued(fn, inputs)
                        line += f" {seconds * 1e3:.3f} ms ({seconds / t_xla:.2f}x XLA's layer)"
                    print(line, flush=True)

if __name__ == "__main__":
    main()
