"""A corpus of small pad-heavy jax programs, and how many pad + fft ops the default pipeline leaves.

Each program is a realistic use of padding written with jax.numpy: FNO spectral blocks (1-3 d),
FFT convolution and spectral interpolation, stencils and causal convolutions on zero-padded
grids, shifts, U-Net crop-and-pad, interior (zero-insertion) upsampling, pads followed by
transposes, reshapes, broadcasts, converts and concatenates, sums and products of padded
branches, circular and reflect padding. ``--write`` lowers them with jax into
tests/data/pad_corpus/NAME.mlir (what tests/passes/test_pad_corpus.py reads); the default run counts
pad + fft ops before and after ``Module.optimize()`` and checks every result.

    python benchmarks/pad_corpus.py [--corpus v1|v3] [--write]

``--corpus v3`` is CORPUS_V3 (tests/data/pad_corpus_v3/): programs for pad-push's pad-arith families
(shifted pads combined by elementwise ops, selects of boxes, adjacent slices, pads and crops of
concatenates), lowered and checked the same way (tests/passes/test_pad_arith.py).
"""
from __future__ import annotations

import argparse
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data", "pad_corpus")
DATA_V3 = os.path.join(HERE, "..", "tests", "data", "pad_corpus_v3")
F32, C64 = np.float32, np.complex64


def spectral_1d(modes):
    def fn(x, w):
        z = jnp.fft.rfft(x)[..., :modes]
        z = jnp.einsum("bix,iox->box", z, w)
        return jnp.fft.irfft(jnp.pad(z, ((0, 0), (0, 0), (0, x.shape[-1] // 2 + 1 - modes))), n=x.shape[-1])
    return fn


def spectral_2d(m0, m1):
    def fn(x, w):
        n0, n1 = x.shape[-2:]
        z = jnp.fft.rfft2(x)
        lo = jnp.einsum("bixy,ioxy->boxy", z[:, :, :m0, :m1], w[0])
        hi = jnp.einsum("bixy,ioxy->boxy", z[:, :, n0 - m0:, :m1], w[1])
        gap = jnp.zeros(lo.shape[:2] + (n0 - 2 * m0, m1), lo.dtype)
        y = jnp.concatenate([lo, gap, hi], axis=2)
        y = jnp.pad(y, ((0, 0), (0, 0), (0, 0), (0, n1 // 2 + 1 - m1)))
        return jnp.fft.irfft2(y, s=(n0, n1))
    return fn


def spectral_3d(m):
    def fn(x, w):
        n = x.shape[-3:]
        z = jnp.fft.rfftn(x, axes=(2, 3, 4))
        out = jnp.zeros(z.shape, z.dtype)
        for k, (a, b) in enumerate([(0, 0), (0, 1), (1, 0), (1, 1)]):
            ra = slice(0, m) if a == 0 else slice(n[0] - m, n[0])
            rb = slice(0, m) if b == 0 else slice(n[1] - m, n[1])
            out = out.at[:, :, ra, rb, :m].set(z[:, :, ra, rb, :m] * w[k])
        return jnp.fft.irfftn(out, s=n, axes=(2, 3, 4))
    return fn


def fft_conv(x, k):
    n = x.shape[-1] + k.shape[-1] - 1
    xp = jnp.pad(x, ((0, 0), (0, n - x.shape[-1])))
    kp = jnp.pad(k, (0, n - k.shape[-1]))
    return jnp.fft.irfft(jnp.fft.rfft(xp) * jnp.fft.rfft(kp), n=n)


def spectral_upsample(x):
    n = x.shape[-1]
    z = jnp.fft.fft(x)
    z = jnp.concatenate([z[..., :n // 2], jnp.zeros(x.shape[:-1] + (n,), z.dtype), z[..., n // 2:]], axis=-1)
    return jnp.fft.ifft(z).real * 2


def spectral_upsample_2d(x):
    z = jnp.fft.rfft2(x)
    z = jnp.pad(z, ((0, 0), (0, x.shape[-2]), (0, x.shape[-1] // 2)))
    return jnp.fft.irfft2(z, s=(x.shape[-2], 2 * x.shape[-1]))


def laplacian_1d(x):
    p = jnp.pad(x, ((0, 0), (1, 1)))
    return p[:, :-2] - 2 * p[:, 1:-1] + p[:, 2:]


def laplacian_2d(x):
    p = jnp.pad(x, 1)
    return p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * p[1:-1, 1:-1]


def box_3x3(x):
    p = jnp.pad(x, ((0, 0), (1, 1), (1, 1)))
    h, w = x.shape[1:]
    return sum(p[:, i:i + h, j:j + w] for i in range(3) for j in range(3)) / 9


def causal_conv(taps):
    def fn(x, w):
        p = jnp.pad(x, ((0, 0), (taps - 1, 0)))
        n = x.shape[1]
        return sum(w[i] * p[:, i:i + n] for i in range(taps))
    return fn


def shift_left(x):
    return jnp.pad(x[:, 1:], ((0, 0), (0, 1)))


def shift_right_2d(x):
    return jnp.pad(x[:-1, :], ((1, 0), (0, 0)))


def backward_difference(x):
    return x - jnp.pad(x[..., :-1], [(0, 0)] * (x.ndim - 1) + [(1, 0)])


def central_difference(x):
    return (jnp.pad(x[1:], (0, 1)) - jnp.pad(x[:-1], (1, 0))) / 2


def pad_transpose(x):
    return jnp.transpose(jnp.pad(x, ((0, 0), (0, 0), (1, 1), (2, 2))), (0, 2, 3, 1))


def pad_transpose_pad(x):
    return jnp.pad(jnp.pad(x, ((0, 1), (0, 0))).T, ((1, 0), (0, 0)))


def pad_reshape(x):
    return jnp.pad(x, ((0, 0), (0, 0), (0, 3))).reshape(x.shape[0] * x.shape[1], -1)


def pad_reshape_unit(x):
    return jnp.pad(x, ((1, 1), (0, 0)))[None, :, :, None].sum(-1)


def pad_broadcast(x):
    return jnp.broadcast_to(jnp.pad(x, (2, 1))[None], (4, x.shape[0] + 3)) * 3


def pad_broadcast_channels(x):
    return jnp.broadcast_to(jnp.pad(x, ((0, 0), (1, 1)))[:, None, :], (x.shape[0], 3, x.shape[1] + 2))


def pad_convert(x):
    return jnp.pad(x, ((1, 0), (0, 2))).astype(jnp.float16).astype(jnp.float32) + 1


def pad_convert_int(x):
    return jnp.pad((x * 4).astype(jnp.int32), 2) * 3


def concat_of_pads(a, b):
    return jnp.concatenate([jnp.pad(a, ((0, 0), (2, 0))), jnp.pad(b, ((0, 0), (0, 3)))], axis=1)


def concat_of_pads_rows(a, b):
    return jnp.concatenate([jnp.pad(a, ((1, 0), (0, 0))), jnp.pad(b, ((0, 1), (0, 0)))], axis=0) * 2


def concat_with_zeros(x):
    return jnp.concatenate([jnp.zeros((x.shape[0], 3), x.dtype), x, jnp.zeros((x.shape[0], 1), x.dtype)], axis=1)


def concat_slices(x):
    return jnp.concatenate([x[:, :3], x[:, 3:6], jnp.zeros((x.shape[0], 2), x.dtype)], axis=1)


def sum_of_padded_branches(x):
    return jnp.pad(jnp.sin(x), 1) + jnp.pad(jnp.cos(x), 1)


def product_of_padded_branches(x):
    return jnp.pad(jnp.tanh(x), ((0, 0), (2, 2))) * jnp.pad(x * x, ((0, 0), (2, 2)))


def masked_and(x):
    m = x > 0
    return jnp.logical_and(jnp.pad(m, 1), jnp.pad(x < 1, 1))


def sum_of_disjoint_pads(a, b):
    return jnp.pad(a, ((0, 0), (0, b.shape[1]))) + jnp.pad(b, ((0, 0), (a.shape[1], 0)))


def sum_of_gapped_pads(a, b):
    return jnp.pad(a, (0, b.shape[0] + 2)) + jnp.pad(b, (a.shape[0] + 2, 0))


def three_part_sum(a, b, c):
    n = a.shape[0] + b.shape[0] + c.shape[0]
    return (jnp.pad(a, (0, n - a.shape[0])) + jnp.pad(b, (a.shape[0], c.shape[0]))
            + jnp.pad(c, (n - c.shape[0], 0)))


def unet_crop_pad(x):
    return jnp.pad(x[:, 2:-2, 2:-2], ((0, 0), (2, 2), (2, 2)))


def unet_skip(x, y):
    return jnp.concatenate([jnp.pad(x[:, 1:-1, 1:-1], ((0, 0), (1, 1), (1, 1))), y], axis=0)


def zero_insert_upsample(x):
    up = lax.pad(x, 0.0, [(0, 0, 0), (0, 1, 1)])
    return up + jnp.pad(up[:, :-1], ((0, 0), (1, 0)))


def zero_insert_2d(x):
    return lax.pad(x, 0.0, [(0, 1, 1), (0, 1, 1)]) * 4


def pad_crop_pad(x):
    return jnp.pad(jnp.pad(x, 2)[1:-1], 1)


def pad_crop_pad_2d(x):
    return jnp.pad(jnp.pad(x, ((2, 2), (1, 1)))[1:-1, :], ((1, 1), (0, 0)))


def slice_reshape_pad(x):
    return jnp.pad(x[:, 1:].reshape(-1), (0, 3))


def slice_reshape_pad_unit(x):
    return jnp.pad(x[0, 2:].reshape(1, -1), ((0, 0), (2, 0)))


def rfft_padded_signal(x):
    return jnp.abs(jnp.fft.rfft(x, n=2 * x.shape[-1]))


def fft_padded_signal(x):
    return jnp.fft.fft(x, n=64)


def irfft_long(z):
    return jnp.fft.irfft(z, n=64)


def irfft_short(z):
    return jnp.fft.irfft(z, n=8)


def wrap_stencil(x):
    p = jnp.pad(x, ((0, 0), (1, 1)), mode="wrap")
    return p[:, :-2] + p[:, 2:] - 2 * x


def wrap_pad_2d(x):
    return jnp.pad(x, 1, mode="wrap") * 2


def reflect_pad(x):
    return jnp.pad(x, ((0, 0), (2, 2)), mode="reflect") + 1


def _w(shape, dtype=C64):
    return (shape, dtype)


CORPUS = {
    "spectral_1d_m4": (spectral_1d(4), [((2, 3, 32), F32), _w((3, 3, 4))]),
    "spectral_1d_m8": (spectral_1d(8), [((2, 2, 32), F32), _w((2, 2, 8))]),
    "spectral_1d_m5_n64": (spectral_1d(5), [((1, 2, 64), F32), _w((2, 2, 5))]),
    "spectral_1d_m12": (spectral_1d(12), [((2, 2, 48), F32), _w((2, 2, 12))]),
    "spectral_2d_16": (spectral_2d(4, 4), [((1, 2, 16, 16), F32), _w((2, 2, 2, 4, 4))]),
    "spectral_2d_24x20": (spectral_2d(5, 6), [((2, 2, 24, 20), F32), _w((2, 2, 2, 5, 6))]),
    "spectral_2d_32": (spectral_2d(8, 8), [((1, 3, 32, 32), F32), _w((2, 3, 3, 8, 8))]),
    "spectral_2d_12x16": (spectral_2d(3, 3), [((1, 1, 12, 16), F32), _w((2, 1, 1, 3, 3))]),
    "spectral_3d_8": (spectral_3d(2), [((1, 2, 8, 8, 8), F32), _w((4, 2, 2, 2), C64)]),
    "spectral_3d_12": (spectral_3d(3), [((1, 1, 12, 12, 8), F32), _w((4, 3, 3, 3), C64)]),
    "fft_conv_32_5": (fft_conv, [((2, 32), F32), ((5,), F32)]),
    "fft_conv_60_9": (fft_conv, [((1, 60), F32), ((9,), F32)]),
    "fft_conv_16_16": (fft_conv, [((3, 16), F32), ((16,), F32)]),
    "spectral_upsample": (spectral_upsample, [((2, 16), C64)]),
    "spectral_upsample_2d": (spectral_upsample_2d, [((1, 8, 8), F32)]),
    "laplacian_1d": (laplacian_1d, [((2, 16), F32)]),
    "laplacian_2d": (laplacian_2d, [((12, 10), F32)]),
    "box_3x3": (box_3x3, [((2, 8, 8), F32)]),
    "causal_conv_3": (causal_conv(3), [((2, 16), F32), ((3,), F32)]),
    "causal_conv_5": (causal_conv(5), [((1, 24), F32), ((5,), F32)]),
    "shift_left": (shift_left, [((3, 8), F32)]),
    "shift_right_2d": (shift_right_2d, [((6, 5), F32)]),
    "backward_difference": (backward_difference, [((4, 9), F32)]),
    "central_difference": (central_difference, [((11,), F32)]),
    "pad_transpose": (pad_transpose, [((2, 3, 4, 5), F32)]),
    "pad_transpose_pad": (pad_transpose_pad, [((3, 4), F32)]),
    "pad_reshape": (pad_reshape, [((2, 3, 5), F32)]),
    "pad_reshape_unit": (pad_reshape_unit, [((4, 6), F32)]),
    "pad_broadcast": (pad_broadcast, [((5,), F32)]),
    "pad_broadcast_channels": (pad_broadcast_channels, [((2, 6), F32)]),
    "pad_convert": (pad_convert, [((3, 4), F32)]),
    "pad_convert_int": (pad_convert_int, [((3, 3), F32)]),
    "concat_of_pads": (concat_of_pads, [((2, 3), F32), ((2, 4), F32)]),
    "concat_of_pads_rows": (concat_of_pads_rows, [((2, 5), F32), ((3, 5), F32)]),
    "concat_with_zeros": (concat_with_zeros, [((2, 4), F32)]),
    "concat_slices": (concat_slices, [((3, 8), F32)]),
    "sum_of_padded_branches": (sum_of_padded_branches, [((4, 4), F32)]),
    "product_of_padded_branches": (product_of_padded_branches, [((2, 6), F32)]),
    "masked_and": (masked_and, [((3, 3), F32)]),
    "sum_of_disjoint_pads": (sum_of_disjoint_pads, [((2, 3), F32), ((2, 5), F32)]),
    "sum_of_gapped_pads": (sum_of_gapped_pads, [((4,), F32), ((3,), F32)]),
    "three_part_sum": (three_part_sum, [((2,), F32), ((3,), F32), ((4,), F32)]),
    "unet_crop_pad": (unet_crop_pad, [((2, 10, 10), F32)]),
    "unet_skip": (unet_skip, [((2, 6, 6), F32), ((3, 6, 6), F32)]),
    "zero_insert_upsample": (zero_insert_upsample, [((2, 5), F32)]),
    "zero_insert_2d": (zero_insert_2d, [((3, 4), F32)]),
    "pad_crop_pad": (pad_crop_pad, [((6,), F32)]),
    "pad_crop_pad_2d": (pad_crop_pad_2d, [((4, 5), F32)]),
    "slice_reshape_pad": (slice_reshape_pad, [((3, 4), F32)]),
    "slice_reshape_pad_unit": (slice_reshape_pad_unit, [((2, 7), F32)]),
    "rfft_padded_signal": (rfft_padded_signal, [((2, 24), F32)]),
    "fft_padded_signal": (fft_padded_signal, [((3, 20), C64)]),
    "irfft_long": (irfft_long, [((2, 9), C64)]),
    "irfft_short": (irfft_short, [((2, 9), C64)]),
    "wrap_stencil": (wrap_stencil, [((2, 10), F32)]),
    "wrap_pad_2d": (wrap_pad_2d, [((4, 4), F32)]),
    "reflect_pad": (reflect_pad, [((3, 8), F32)]),
    "spectral_1d_m3_tiny": (spectral_1d(3), [((1, 1, 16), F32), _w((1, 1, 3))]),
    "laplacian_2d_big": (laplacian_2d, [((32, 32), F32)]),
}


# ---------------------------------------------------------------- v3: the pad-arith families (issue 28 item 5)

def shifted_sum(a, b):
    return jnp.pad(a, (1, 0)) + jnp.pad(b, (0, 1))


def shifted_max(a, b):
    return jnp.maximum(jnp.pad(a, (2, 0), constant_values=-jnp.inf), jnp.pad(b, (0, 2), constant_values=-jnp.inf))


def shifted_min_rows(a, b):
    return jnp.minimum(jnp.pad(a, ((1, 0), (1, 1)), constant_values=jnp.inf),
                       jnp.pad(b, ((0, 1), (1, 1)), constant_values=jnp.inf))


def shifted_difference_int(a, b):
    return jnp.pad(a, ((0, 0), (1, 0))) - jnp.pad(b, ((0, 0), (0, 1)))


def shifted_product_int(a, b):
    return jnp.pad(a, (0, 3)) * jnp.pad(b, (2, 0))


def shifted_masks(m1, m2):
    return jnp.pad(m1 > 0, (1, 0)) & jnp.pad(m2 > 0, (0, 1))


def weighted_pads(a, b):
    return 0.5 * jnp.pad(a, 1) + 0.25 * jnp.pad(b, 1)


def weighted_shifts(x):
    return 2 * jnp.pad(x, ((0, 0), (1, 0))) - jnp.pad(x, ((0, 0), (0, 1))) * 3


def where_iota_1d(x, y):
    i = jnp.arange(y.shape[0])
    return jnp.where((i >= 2) & (i < 2 + x.shape[0]), jnp.pad(x, (2, y.shape[0] - 2 - x.shape[0])), y)


def where_iota_2d(x, y):
    i = lax.broadcasted_iota(jnp.int32, y.shape, 0)
    j = lax.broadcasted_iota(jnp.int32, y.shape, 1)
    inside = (i >= 1) & (i < 4) & (j >= 2) & (j < 5)
    return jnp.where(inside, jnp.pad(x, ((1, y.shape[0] - 4), (2, y.shape[1] - 5))), y)


def where_pad_mask(x, y):
    mask = jnp.pad(jnp.ones(x.shape, bool), 1)
    return jnp.where(mask, jnp.pad(x, 1), y)


def where_outside(x, y):
    i = jnp.arange(y.shape[-1])
    return jnp.where((i < 1) | (i >= 1 + x.shape[-1]), y, jnp.pad(x, ((0, 0), (1, y.shape[-1] - 1 - x.shape[-1]))))


def boundary_condition(u, g):
    i = jnp.arange(u.shape[0])
    interior = jnp.pad(u[1:-1] * 0.5, 1)
    return jnp.where((i == 0) | (i == u.shape[0] - 1), g, interior)


def adjacent_slices_rows(x):
    return jnp.concatenate([x[1:3, :4], x[3:6, :4]], axis=0) * 2


def adjacent_strided_slices(x):
    return jnp.concatenate([x[0:4:2], x[4:8:2]]) + 1


def pad_of_concat_edges(a, b):
    return jnp.pad(jnp.concatenate([jnp.pad(a, (2, 0)), b]), (1, 1))


def pad_of_concat_rows(a, b):
    return jnp.pad(jnp.concatenate([a, jnp.pad(b, ((0, 2), (0, 0)))], axis=0), ((0, 1), (1, 1)))


def crop_of_concat(a, b):
    return jnp.concatenate([a, b])[2:-1] * 3


def halo_crop(x):
    h = jnp.concatenate([x[:, -1:], x, x[:, :1]], axis=1)
    return h[:, 1:-1] - x


CORPUS_V3 = {
    "shifted_sum": (shifted_sum, [((7,), F32), ((7,), F32)]),
    "shifted_max": (shifted_max, [((5,), F32), ((5,), F32)]),
    "shifted_min_rows": (shifted_min_rows, [((3, 4), F32), ((3, 4), F32)]),
    "shifted_difference_int": (shifted_difference_int, [((2, 6), np.int32), ((2, 6), np.int32)]),
    "shifted_product_int": (shifted_product_int, [((5,), np.int32), ((6,), np.int32)]),
    "shifted_masks": (shifted_masks, [((6,), F32), ((6,), F32)]),
    "weighted_pads": (weighted_pads, [((3, 4), F32), ((3, 4), F32)]),
    "weighted_shifts": (weighted_shifts, [((2, 8), F32)]),
    "where_iota_1d": (where_iota_1d, [((3,), F32), ((8,), F32)]),
    "where_iota_2d": (where_iota_2d, [((3, 3), F32), ((6, 7), F32)]),
    "where_pad_mask": (where_pad_mask, [((4, 4), F32), ((6, 6), F32)]),
    "where_outside": (where_outside, [((2, 4), F32), ((2, 7), F32)]),
    "boundary_condition": (boundary_condition, [((10,), F32), ((10,), F32)]),
    "adjacent_slices_rows": (adjacent_slices_rows, [((8, 6), F32)]),
    "adjacent_strided_slices": (adjacent_strided_slices, [((9, 3), F32)]),
    "pad_of_concat_edges": (pad_of_concat_edges, [((3,), F32), ((4,), F32)]),
    "pad_of_concat_rows": (pad_of_concat_rows, [((2, 3), F32), ((2, 3), F32)]),
    "crop_of_concat": (crop_of_concat, [((4,), F32), ((5,), F32)]),
    "halo_crop": (halo_crop, [((3, 6), F32)]),
}


def lower(name: str) -> str:
    fn, specs = {**CORPUS, **CORPUS_V3}[name]
    args = [jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in specs]
    return jax.jit(fn).lower(*args).as_text()


def inputs(module, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for spec in module.signature[0]:
        a = rng.uniform(-2, 2, spec.shape)
        if spec.dtype.kind == "c":
            a = a + 1j * rng.uniform(-2, 2, spec.shape)
        out.append(a.astype(spec.dtype))
    return out


def pad_fft_count(module) -> int:
    counts = module.op_counts()
    return counts.get("stablehlo.pad", 0) + counts.get("stablehlo.fft", 0)


def relative_error(got, want) -> float:
    got, want = np.asarray(got).astype(np.complex128), np.asarray(want).astype(np.complex128)
    with np.errstate(invalid="ignore"):  # (equal infinities are no error: v3's max of -inf pads)
        diff = np.where(got == want, 0, np.abs(got - want))
    finite = np.abs(want)[np.isfinite(want)]
    return float(np.max(diff, initial=0) / max(np.max(finite, initial=0), 1))


def load_all(version: str = "v1"):
    """The corpus's modules by name: ``"v1"`` (CORPUS, tests/data/pad_corpus) or ``"v3"`` (CORPUS_V3)."""
    import hloforge as hf
    table, data = (CORPUS, DATA) if version == "v1" else (CORPUS_V3, DATA_V3)
    return {name: hf.Module.load(os.path.join(data, f"{name}.mlir")) for name in table}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="lower the corpus with jax into tests/data/pad_corpus")
    parser.add_argument("--corpus", choices=("v1", "v3"), default="v1",
                        help="v1: the 59 modules of CORPUS; v3: CORPUS_V3, the pad-arith families' programs")
    args = parser.parse_args()
    table, data = (CORPUS, DATA) if args.corpus == "v1" else (CORPUS_V3, DATA_V3)
    if args.write:
        os.makedirs(data, exist_ok=True)
        for name in table:
            with open(os.path.join(data, f"{name}.mlir"), "w") as f:
                f.write(lower(name))
        print(f"wrote {len(table)} modules to {os.path.normpath(data)}")
        return
    total_before = total_after = 0
    for name, m in load_all(args.corpus).items():
        args_ = inputs(m)
        want = [np.asarray(o) for o in m.compile().call_flat(args_)]
        m.optimize("inline,symbol-dce")  # (jax lowers each jnp.pad into one function called from many places)
        before = pad_fft_count(m)
        m.optimize()
        after = pad_fft_count(m)
        got = [np.asarray(o) for o in m.compile().call_flat(args_)]
        err = max(relative_error(g, w) for g, w in zip(got, want))
        total_before, total_after = total_before + before, total_after + after
        print(f"{name:<28} pad+fft {before:3d} -> {after:3d}   max rel err {err:.1e}")
    print(f"corpus of {len(table)} modules: pad+fft {total_before} -> {total_after}")


if __name__ == "__main__":
    main()
