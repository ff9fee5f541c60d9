"""A whole FNO-2D forward with its grid work in fno_layer_kernel.py's lane-dense Pallas layers (issue 46's
128² and 256² targets): does the per-layer gain survive in the model, against jax.jit and hloforge's
truncated program (``jax.jit(hf.optimize(models.fno))``) on the same chip, in one process?

Each layer's grid work (1x1 convolution, inverse partial DFT over Y, bias, GELU, the next layer's forward
partial DFT over Y) is one kernel on packed arrays (``packed_layer``: [B, C, X/p, p*Y]; ``rows_outer_layer``:
[B, X/p, C, p*Y]). XLA does the rest: the lift and projection (on packed arrays: they act on channels only),
the X-direction DFTs and the mode mixing, with the spectral arrays converted from and to the packed form
around them. The same math as ``models.fno`` (checked in Pallas's interpreter by
tests/test_fno_kernel_model.py).

    python benchmarks/fno_kernel_model.py              # on the TPU
    python benchmarks/fno_kernel_model.py --interpret  # anywhere: small sizes, values only

On a TPU v5e, 2026-12-08 (docs/benchmarks.md, fifteenth session), queued: b32 128² w64 m16 jax 26.23 ms,
hloforge 6.48 ms (0.247), packed 6.99 (0.267), rows outer 5.83 (0.222); b16 256² w32 m16 jax 33.07 ms,
hloforge 5.63 (0.170), packed 5.32 (0.161), rows outer 5.19 (0.157). About 10% under hloforge's program,
short of the targets (0.2 and 0.15).
"""
import argparse
import functools
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

import hloforge as hf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fno_layer_kernel as kernel  # noqa: E402
import models  # noqa: E402

HIGHEST = jax.lax.Precision.HIGHEST
LAYOUTS = ("packed", "rows-outer")


def x_matrices(n: int, modes: int):
    """The X-direction complex DFT [X, 2m] onto the kept modes 0..m-1 and X-m..X-1, and its inverse [2m, X]."""
    kx = np.concatenate([np.arange(modes), np.arange(n - modes, n)])
    theta = 2 * np.pi * np.outer(np.arange(n), kx) / n
    return np.exp(-1j * theta).astype(np.complex64), (np.exp(1j * theta.T) / n).astype(np.complex64)


def _channels(a, w, b, outer: bool):
    """``models.pointwise`` on a packed array (the channel axis is 2 with the rows outside it)."""
    spec = "bgil,io->bgol" if outer else "bigl,io->bogl"
    bias = b[None, None, :, None] if outer else b[None, :, None, None]
    return jnp.einsum(spec, a, w) + bias


def kernel_fno(params, x, modes: int, layout: str = "rows-outer", rows: int = 32, interpret: bool = False):
    """``models.fno(jnp, x, params, (modes, modes), 0)`` with each layer's grid work in one Pallas kernel."""
    batch, _, nx, ny = x.shape
    outer = layout == "rows-outer"
    inverse, forward = kernel.dft_matrices(ny, modes)
    p = kernel.rows_per_row(2 * modes)
    forward_p = kernel.packed_matrices(inverse, forward, p * ny)[2]
    to_layout = (lambda a: jnp.transpose(a, (0, 2, 1, 3))) if outer else (lambda a: a)
    fx, gx = x_matrices(nx, modes)
    h = _channels(to_layout(kernel.packed(x, p)), *params["lift"], outer)
    t = jnp.einsum("...l,lk->...k", h, forward_p, precision=HIGHEST)  # the first layer's Y-direction DFT
    layer = kernel.rows_outer_layer if outer else kernel.packed_layer
    layers = params["layers"]
    for i, weights in enumerate(layers):
        spectrum = to_layout(t).reshape(batch, -1, nx, 128 // p)[..., :2 * modes]
        z = jnp.einsum("bcxk,xj->bcjk", jax.lax.complex(spectrum[..., :modes], spectrum[..., modes:]), fx,
                       precision=HIGHEST)
        z = jnp.einsum("bijk,iojk->bojk", z, jnp.concatenate(list(weights["spectral"]), axis=2))
        s = jnp.einsum("bojk,jx->boxk", z, gx, precision=HIGHEST)
        s1 = jnp.concatenate([s.real, s.imag], -1)
        s1 = jnp.pad(s1, ((0, 0), (0, 0), (0, 0), (0, 128 // p - 2 * modes)))
        s1 = to_layout(s1.reshape(batch, -1, nx // p, 128))
        w, b = weights["skip"]
        last = i == len(layers) - 1
        out = layer(h, s1, w.T, b[:, None], inverse, forward, rows=rows, last=last, interpret=interpret)
        h = out[0]
        t = None if last else out[1]
    h = _channels(models.gelu(jnp, _channels(h, *params["proj1"], outer)), *params["proj2"], outer)
    return to_layout(h).reshape(batch, 1, nx, ny)


def cases(batch, n, width, modes, interpret=False):
    """(params, x, {name: jitted function of (params, x)}): jax, hloforge's truncated program, and the kernel
    FNO in each layout."""
    rng = np.random.default_rng(0)
    params = jax.tree.map(jnp.asarray, models.fno_params(2, (modes, modes), width, 4, 3, rng))
    x = jnp.asarray(rng.standard_normal((batch, 3, n, n)).astype(np.float32))
    model = lambda p, v: models.fno(jnp, v, p, (modes, modes), 0)
    out = {"jax": jax.jit(model), "hf.optimize": jax.jit(hf.optimize(model))}
    for layout in LAYOUTS:
        out[f"kernel FNO, {layout}"] = jax.jit(functools.partial(kernel_fno, modes=modes, layout=layout,
                                                                 interpret=interpret))
    return params, x, out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interpret", action="store_true", help="Pallas's interpreter, small sizes, values only")
    args = parser.parse_args(argv)
    sizes = [(2, 128, 8, 16)] if args.interpret else [(32, 128, 64, 16), (16, 256, 32, 16)]
    for batch, n, width, modes in sizes:
        params, x, fns = cases(batch, n, width, modes, args.interpret)
        with jax.default_matmul_precision("float32"):
            want = np.asarray(jax.jit(lambda p, v: models.fno(jnp, v, p, (modes, modes), 0))(params, x))
        print(f"b{batch} {n}² w{width} m{modes}:", flush=True)
        for name, fn in fns.items():
            got = np.asarray(fn(params, x))
            print(f"  {name}: error {float(np.max(np.abs(got - want)) / np.max(np.abs(want))):.1e} against "
                  f"float32 dots", flush=True)
        if not args.interpret:
            times = {name: kernel.queued(fn, (params, x)) for name, fn in fns.items()}
            print("  queued: " + ", ".join(f"{k} {v * 1e3:.3f} ms ({v / times['jax']:.3f})" for k, v in times.items()),
                  flush=True)


if __name__ == "__main__":
    main()
