"""FNO spectral convolutions spelled the ways JAX FNO libraries spell them (issue 47), in plain jax.

Each entry of ``SPELLINGS`` is ``name -> Spelling(fn, args)``: ``fn(x, w)`` a spectral convolution
(rfft -> keep the low modes -> mix channels with complex weights -> zero-fill -> irfft) and
``args(seed)`` its numpy arguments, sized so that truncation pays on the CPU cost model (a grid of 64
points per axis in 1-D and 2-D, 16 in 3-D, 8 modes or fewer per axis); ``spellings(...)`` builds them at
other sizes (benchmarks/to_jax.py's ``--size model``). ``loss(fn)`` is the scalar
whose gradient w.r.t. both arguments tests/passes/test_fno_spellings.py checks too.

Weights are complex64, or pairs of float32 arrays joined by ``lax.complex`` as flax-style libraries
keep them (a real parameter tree).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

B, C, O = 2, 4, 4          # batch, input and output channels
N, M = 64, 8               # 1-D/2-D grid points per axis, modes kept per axis
N3, M3 = 16, 3             # 3-D


class Spelling(NamedTuple):
    fn: Callable
    args: Callable  # seed -> (x, w) numpy arrays


def _real(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _cplx(shape, seed, scale):
    rng = np.random.default_rng(seed)
    return ((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) / scale).astype(np.complex64)


# ---------------------------------------------------------------- 1-D

def slices_pad_1d(x, w):
    """(b, c, n): x_ft[..., :m], einsum, jnp.pad back to n//2+1 modes."""
    M, N = w.shape[-1], x.shape[-1]
    x_ft = jnp.fft.rfft(x)
    y = jnp.einsum("bix,iox->box", x_ft[:, :, :M], w)
    return jnp.fft.irfft(jnp.pad(y, ((0, 0), (0, 0), (0, N // 2 + 1 - M))), n=N)


def at_set_1d(x, w):
    """neuraloperator style: out_ft = zeros(...).at[..., :m].set(einsum(...))."""
    O, M, N = w.shape[1], w.shape[-1], x.shape[-1]
    x_ft = jnp.fft.rfft(x, axis=-1)
    out_ft = jnp.zeros((x.shape[0], O, N // 2 + 1), jnp.complex64)
    out_ft = out_ft.at[:, :, :M].set(jnp.einsum("bix,iox->box", x_ft[:, :, :M], w))
    return jnp.fft.irfft(out_ft, n=x.shape[-1])


def take_concat_1d(x, w):
    """jnp.take of the kept modes, zeros concatenated back."""
    O, M, N = w.shape[1], w.shape[-1], x.shape[-1]
    x_ft = jnp.fft.rfft(x)
    y = jnp.einsum("bix,iox->box", jnp.take(x_ft, jnp.arange(M), axis=-1), w)
    rest = jnp.zeros((x.shape[0], O, N // 2 + 1 - M), y.dtype)
    return jnp.fft.irfft(jnp.concatenate([y, rest], axis=-1), n=N)


def channels_last_1d(x, w):
    """(b, n, c): rfft over axis 1, einsum 'bxi,xio->bxo', pad, irfft over axis 1."""
    M, N = w.shape[0], x.shape[1]
    x_ft = jnp.fft.rfft(x, axis=1)
    y = jnp.einsum("bxi,xio->bxo", x_ft[:, :M, :], w)
    y = jnp.pad(y, ((0, 0), (0, N // 2 + 1 - M), (0, 0)))
    return jnp.fft.irfft(y, n=N, axis=1)


def fancy_index_1d(x, w):
    """x_ft[..., idx] with an index array (a gather), dynamic_update_slice into zeros."""
    O, M, N = w.shape[1], w.shape[-1], x.shape[-1]
    x_ft = jnp.fft.rfft(x)
    y = jnp.einsum("bix,iox->box", x_ft[..., np.arange(M)], w)
    out_ft = lax.dynamic_update_slice(jnp.zeros((x.shape[0], O, N // 2 + 1), y.dtype), y, (0, 0, 0))
    return jnp.fft.irfft(out_ft, n=N)


# ---------------------------------------------------------------- 2-D

def at_set_2d(x, w):
    """neuraloperator's SpectralConv2d: two corners set into a zero spectrum."""
    O, M = w.shape[2], w.shape[-1]
    h, wd = x.shape[-2:]
    x_ft = jnp.fft.rfft2(x)
    out_ft = jnp.zeros((x.shape[0], O, h, wd // 2 + 1), jnp.complex64)
    out_ft = out_ft.at[:, :, :M, :M].set(jnp.einsum("bixy,ioxy->boxy", x_ft[:, :, :M, :M], w[0]))
    out_ft = out_ft.at[:, :, -M:, :M].set(jnp.einsum("bixy,ioxy->boxy", x_ft[:, :, -M:, :M], w[1]))
    return jnp.fft.irfft2(out_ft, s=(h, wd))


def concat_2d(x, w):
    """tests/fno2d.py's spelling: corners concatenated with zero blocks."""
    O, M = w.shape[2], w.shape[-1]
    b, _, h, wd = x.shape
    x_ft = jnp.fft.rfft2(x)
    low = jnp.einsum("bixy,ioxy->boxy", x_ft[:, :, :M, :M], w[0])
    high = jnp.einsum("bixy,ioxy->boxy", x_ft[:, :, h - M:, :M], w[1])
    cols = jnp.concatenate([low, jnp.zeros((b, O, h - 2 * M, M), low.dtype), high], axis=2)
    return jnp.fft.irfft2(jnp.concatenate([cols, jnp.zeros((b, O, h, wd // 2 + 1 - M), low.dtype)], axis=3), s=(h, wd))


def channels_last_2d(x, w):
    """(b, h, w, c): rfft2 over axes (1, 2), einsum 'bxyi,xyio->bxyo', corners set, irfft2 over (1, 2)."""
    O, M = w.shape[-1], w.shape[1]
    b, h, wd, _ = x.shape
    x_ft = jnp.fft.rfft2(x, axes=(1, 2))
    out_ft = jnp.zeros((b, h, wd // 2 + 1, O), jnp.complex64)
    out_ft = out_ft.at[:, :M, :M, :].set(jnp.einsum("bxyi,xyio->bxyo", x_ft[:, :M, :M, :], w[0]))
    out_ft = out_ft.at[:, -M:, :M, :].set(jnp.einsum("bxyi,xyio->bxyo", x_ft[:, -M:, :M, :], w[1]))
    return jnp.fft.irfft2(out_ft, s=(h, wd), axes=(1, 2))


def rfftn_s_2d(x, w):
    """rfftn/irfftn with explicit s= and axes=, weights in (o, i, x, y) order."""
    O, M = w.shape[1], w.shape[-1]
    h, wd = x.shape[-2:]
    x_ft = jnp.fft.rfftn(x, s=(h, wd), axes=(-2, -1))
    out_ft = jnp.zeros((x.shape[0], O, h, wd // 2 + 1), jnp.complex64)
    out_ft = out_ft.at[:, :, :M, :M].set(jnp.einsum("oixy,bixy->boxy", w[0], x_ft[:, :, :M, :M]))
    out_ft = out_ft.at[:, :, h - M:, :M].set(jnp.einsum("oixy,bixy->boxy", w[1], x_ft[:, :, h - M:, :M]))
    return jnp.fft.irfftn(out_ft, s=(h, wd), axes=(-2, -1))


def dus_2d(x, w):
    """lax.dynamic_update_slice of both corners into a zero spectrum."""
    O, M = w.shape[2], w.shape[-1]
    h, wd = x.shape[-2:]
    x_ft = jnp.fft.rfft2(x)
    out_ft = jnp.zeros((x.shape[0], O, h, wd // 2 + 1), jnp.complex64)
    out_ft = lax.dynamic_update_slice(out_ft, jnp.einsum("bixy,ioxy->boxy", x_ft[:, :, :M, :M], w[0]), (0, 0, 0, 0))
    out_ft = lax.dynamic_update_slice(out_ft, jnp.einsum("bixy,ioxy->boxy", x_ft[:, :, h - M:, :M], w[1]),
                                      (0, 0, h - M, 0))
    return jnp.fft.irfft2(out_ft, s=(h, wd))


def real_weights_2d(x, w):
    """flax style: weights as (re, im) float32 pairs joined with lax.complex; one corner, jnp.pad."""
    M = w.shape[-1]
    h, wd = x.shape[-2:]
    x_ft = jnp.fft.rfft2(x)
    y = jnp.einsum("bixy,ioxy->boxy", x_ft[:, :, :M, :M], lax.complex(w[0], w[1]))
    y = jnp.pad(y, ((0, 0), (0, 0), (0, h - M), (0, wd // 2 + 1 - M)))
    return jnp.fft.irfft2(y, s=(h, wd))


def transposed_channels_last_2d(x, w):
    """(b, h, w, c) moved to channels-first by hand, the FFT over the trailing axes, moved back."""
    O, M = w.shape[1], w.shape[-1]
    h, wd = x.shape[1:3]
    xc = jnp.transpose(x, (0, 3, 1, 2))
    x_ft = jnp.fft.rfft2(xc)
    out_ft = jnp.zeros((x.shape[0], O, h, wd // 2 + 1), jnp.complex64)
    out_ft = out_ft.at[:, :, :M, :M].set(jnp.einsum("bixy,ioxy->boxy", x_ft[:, :, :M, :M], w))
    return jnp.transpose(jnp.fft.irfft2(out_ft, s=(h, wd)), (0, 2, 3, 1))


def take_rows_2d(x, w):
    """Both row blocks picked at once by jnp.take with an index array, the result scattered back by index."""
    O, M = w.shape[1], w.shape[-1]
    h, wd = x.shape[-2:]
    rows = np.concatenate([np.arange(M), np.arange(h - M, h)])
    x_ft = jnp.fft.rfft2(x)
    kept = jnp.take(x_ft[:, :, :, :M], rows, axis=2)
    y = jnp.einsum("bixy,ioxy->boxy", kept, w)
    out_ft = jnp.zeros((x.shape[0], O, h, wd // 2 + 1), jnp.complex64).at[:, :, rows, :M].set(y)
    return jnp.fft.irfft2(out_ft, s=(h, wd))


def _one_sample_1d(x, w):
    """equinox style: one sample (c, n), no batch axis; the model vmaps it."""
    O, M, N = w.shape[1], w.shape[-1], x.shape[-1]
    x_ft = jnp.fft.rfft(x)
    y = jnp.einsum("ix,iox->ox", x_ft[:, :M], w)
    return jnp.fft.irfft(jnp.zeros((O, N // 2 + 1), y.dtype).at[:, :M].set(y), n=N)


def vmapped_1d(x, w):
    """jax.vmap of a per-sample spectral convolution over the batch."""
    return jax.vmap(_one_sample_1d, in_axes=(0, None))(x, w)


def ortho_pair_weights_2d(x, w):
    """norm="ortho" transforms; weights with a trailing (re, im) axis, w[..., 0] + 1j * w[..., 1]."""
    O, M = w.shape[1], w.shape[2]
    h, wd = x.shape[-2:]
    x_ft = jnp.fft.rfft2(x, norm="ortho")
    y = jnp.einsum("bixy,ioxy->boxy", x_ft[:, :, :M, :M], w[..., 0] + 1j * w[..., 1])
    out_ft = jnp.zeros((x.shape[0], O, h, wd // 2 + 1), y.dtype).at[:, :, :M, :M].set(y)
    return jnp.fft.irfft2(out_ft, s=(h, wd), norm="ortho")


def mesh_index_2d(x, w):
    """Both corners' rows and the kept columns picked in one fancy index, x_ft[:, :, rows[:, None], cols],
    and set back the same way."""
    O, M = w.shape[1], w.shape[-1]
    h, wd = x.shape[-2:]
    rows, cols = np.concatenate([np.arange(M), np.arange(h - M, h)]), np.arange(M)
    x_ft = jnp.fft.rfft2(x)
    y = jnp.einsum("bixy,ioxy->boxy", x_ft[:, :, rows[:, None], cols], w)
    out_ft = jnp.zeros((x.shape[0], O, h, wd // 2 + 1), jnp.complex64).at[:, :, rows[:, None], cols].set(y)
    return jnp.fft.irfft2(out_ft, s=(h, wd))


# ---------------------------------------------------------------- 3-D

def at_set_3d(x, w):
    """neuraloperator's SpectralConv3d: four corners set into a zero spectrum."""
    O, M3 = w.shape[2], w.shape[-1]
    s = x.shape[-3:]
    x_ft = jnp.fft.rfftn(x, axes=(-3, -2, -1))
    out_ft = jnp.zeros((x.shape[0], O, s[0], s[1], s[2] // 2 + 1), jnp.complex64)
    for k, (r0, r1) in enumerate([(slice(0, M3), slice(0, M3)), (slice(-M3, None), slice(0, M3)),
                                  (slice(0, M3), slice(-M3, None)), (slice(-M3, None), slice(-M3, None))]):
        y = jnp.einsum("bixyz,ioxyz->boxyz", x_ft[:, :, r0, r1, :M3], w[k])
        out_ft = out_ft.at[:, :, r0, r1, :M3].set(y)
    return jnp.fft.irfftn(out_ft, s=s, axes=(-3, -2, -1))


def channels_last_3d(x, w):
    """(b, x, y, z, c): rfftn over axes (1, 2, 3), one low corner, padded back."""
    M3 = w.shape[0]
    s = x.shape[1:4]
    x_ft = jnp.fft.rfftn(x, axes=(1, 2, 3))
    y = jnp.einsum("bxyzi,xyzio->bxyzo", x_ft[:, :M3, :M3, :M3, :], w)
    y = jnp.pad(y, ((0, 0), (0, s[0] - M3), (0, s[1] - M3), (0, s[2] // 2 + 1 - M3), (0, 0)))
    return jnp.fft.irfftn(y, s=s, axes=(1, 2, 3))


def spellings(b=B, c=C, o=O, n1=N, m1=M, n2=N, m2=M, n3=N3, m3=M3) -> dict:
    """{name: Spelling} with batch ``b``, ``c`` -> ``o`` channels, ``nK`` points and ``mK`` modes per axis in K-D
    (each spelling reads its sizes from its arguments' shapes)."""
    def args(x_shape, w_shape):
        return lambda seed: (_real(x_shape, seed), _cplx(w_shape, seed + 1, c * o))
    return {
        "slices_pad_1d": Spelling(slices_pad_1d, args((b, c, n1), (c, o, m1))),
        "at_set_1d": Spelling(at_set_1d, args((b, c, n1), (c, o, m1))),
        "take_concat_1d": Spelling(take_concat_1d, args((b, c, n1), (c, o, m1))),
        "channels_last_1d": Spelling(channels_last_1d, args((b, n1, c), (m1, c, o))),
        "fancy_index_1d": Spelling(fancy_index_1d, args((b, c, n1), (c, o, m1))),
        "at_set_2d": Spelling(at_set_2d, args((b, c, n2, n2), (2, c, o, m2, m2))),
        "concat_2d": Spelling(concat_2d, args((b, c, n2, n2), (2, c, o, m2, m2))),
        "channels_last_2d": Spelling(channels_last_2d, args((b, n2, n2, c), (2, m2, m2, c, o))),
        "rfftn_s_2d": Spelling(rfftn_s_2d, args((b, c, n2, n2), (2, o, c, m2, m2))),
        "dus_2d": Spelling(dus_2d, args((b, c, n2, n2), (2, c, o, m2, m2))),
        "real_weights_2d": Spelling(real_weights_2d, lambda seed: (
            _real((b, c, n2, n2), seed), _real((2, c, o, m2, m2), seed + 1) / (c * o))),
        "transposed_channels_last_2d": Spelling(transposed_channels_last_2d, args((b, n2, n2, c), (c, o, m2, m2))),
        "take_rows_2d": Spelling(take_rows_2d, args((b, c, n2, n2), (c, o, 2 * m2, m2))),
        "vmapped_1d": Spelling(vmapped_1d, args((b, c, n1), (c, o, m1))),
        "ortho_pair_weights_2d": Spelling(ortho_pair_weights_2d, lambda seed: (
            _real((b, c, n2, n2), seed), _real((c, o, m2, m2, 2), seed + 1) / (c * o))),
        "mesh_index_2d": Spelling(mesh_index_2d, args((b, c, n2, n2), (c, o, 2 * m2, m2))),
        "at_set_3d": Spelling(at_set_3d, args((b, c, n3, n3, n3), (4, c, o, m3, m3, m3))),
        "channels_last_3d": Spelling(channels_last_3d, args((b, n3, n3, n3, c), (m3, m3, m3, c, o))),
    }


SPELLINGS = spellings()


def loss(fn):
    """The scalar a training step differentiates: the mean square of the layer's output."""
    return lambda x, w: jnp.mean(fn(x, w) ** 2)
