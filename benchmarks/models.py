"""Benchmark programs written once against a numpy-like module ``xp`` (hloforge.numpy or jax.numpy),
so hloforge and jax.jit run exactly the same computation."""
from __future__ import annotations

import itertools
import math

import jax
import numpy as np


def gelu(xp, x):
    return 0.5 * x * (1.0 + xp.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))


def pointwise(xp, x, w, b):
    return xp.einsum("bi...,io->bo...", x, w) + xp.reshape(b, (1, -1) + (1,) * (x.ndim - 2))


def spectral_conv(xp, x, weights, modes):
    nd = len(modes)
    grid = x.shape[2:]
    axes = tuple(range(2, 2 + nd))
    spectrum = xp.fft.rfftn(x, axes=axes)
    letters = "xyz"[:nd]
    blocks = {}
    for k, signs in enumerate(itertools.product((0, 1), repeat=nd - 1)):
        index = (slice(None), slice(None)) + tuple(
            slice(0, m) if s == 0 else slice(n - m, n) for s, n, m in zip(signs, grid, modes)) + (slice(0, modes[-1]),)
        blocks[signs] = xp.einsum(f"bi{letters},io{letters}->bo{letters}", spectrum[index], weights[k])
    for axis in reversed(range(nd - 1)):
        n, m = grid[axis], modes[axis]
        merged = {}
        for head in {key[:-1] for key in blocks}:
            pos, neg = blocks[head + (0,)], blocks[head + (1,)]
            gap = list(pos.shape)
            gap[2 + axis] = n - 2 * m
            merged[head] = xp.concatenate([pos, xp.zeros(gap, pos.dtype), neg], axis=2 + axis)
        blocks = merged
    out = blocks[()]
    out = xp.pad(out, [(0, 0)] * (out.ndim - 1) + [(0, grid[-1] // 2 + 1 - modes[-1])])
    return xp.fft.irfftn(out, s=grid, axes=axes)


def fno(xp, x, params, modes, padding):
    h = pointwise(xp, x, *params["lift"])
    nd = len(modes)
    if padding:
        h = xp.pad(h, [(0, 0), (0, 0)] + [(0, padding)] * nd)
    layers = params["layers"]
    for i, layer in enumerate(layers):
        h = spectral_conv(xp, h, layer["spectral"], modes) + pointwise(xp, h, *layer["skip"])
        if i < len(layers) - 1:
            h = gelu(xp, h)
    if padding:
        h = h[(slice(None), slice(None)) + (slice(0, -padding),) * nd]
    return pointwise(xp, gelu(xp, pointwise(xp, h, *params["proj1"])), *params["proj2"])


def fno_params(n_dims, modes, width, layers, in_ch, rng):
    def linear(i, o):
        bound = 1.0 / math.sqrt(i)
        return (rng.uniform(-bound, bound, (i, o)).astype(np.float32), rng.uniform(-bound, bound, (o,)).astype(np.float32))

    scale = 1.0 / (width * width)
    shape = (2 ** (n_dims - 1), width, width) + tuple(modes)
    return {"lift": linear(in_ch, width), "proj1": linear(width, 128), "proj2": linear(128, 1),
            "layers": [{"spectral": (scale * (rng.random(shape) + 1j * rng.random(shape))).astype(np.complex64),
                        "skip": linear(width, width)} for _ in range(layers)]}


def split_planes(params):
    """``fno_params`` with each layer's complex spectral weights as a pair of real planes (real, imag)."""
    return dict(params, layers=[dict(layer, spectral=(layer["spectral"].real, layer["spectral"].imag))
                                for layer in params["layers"]])


def join_planes(params, complex_):
    """``split_planes`` parameters with their weights joined again by ``complex_`` (``jax.lax.complex``,
    ``hloforge.lax.complex``): inside a program, so that the program takes real leaves only."""
    return dict(params, layers=[dict(layer, spectral=complex_(*layer["spectral"])) for layer in params["layers"]])


def on_planes(model):
    """``model(params, x)`` taking ``split_planes`` parameters: the weights are joined inside the program."""
    return lambda params, x: model(join_planes(params, jax.lax.complex), x)


def descent(grads):
    """``grads`` with each complex leaf conjugated: jax's gradient of a real loss in a complex weight is
    ``d/dre - i d/dim``, the conjugate of the descent direction an optax update expects."""
    return jax.tree.map(lambda g: g.conj() if np.iscomplexobj(g) else g, grads)


def round_trips(xp, x, w):
    """irfftn(rfftn(x)) in a loop of layers: the passes remove every FFT pair."""
    for _ in range(8):
        x = xp.fft.irfftn(xp.fft.rfftn(x, axes=(1, 2)), s=x.shape[1:], axes=(1, 2))
        x = xp.tanh(x * w)
    return x


def layer_norm(xp, x, scale, bias, eps=1e-5):
    mean = xp.mean(x, axis=-1, keepdims=True)
    centered = x - mean
    var = xp.mean(centered * centered, axis=-1, keepdims=True)
    return centered / xp.sqrt(var + eps) * scale + bias


def softmax(xp, x):
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


def vit_block(xp, x, p, heads=3):
    """A ViT-tiny encoder block: pre-norm multi-head self-attention and a GELU MLP."""
    b, t, d = x.shape
    h = layer_norm(xp, x, *p["ln1"])
    qkv = h @ p["qkv"]                                           # (b, t, 3d)
    qkv = xp.reshape(qkv, (b, t, 3, heads, d // heads))
    q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]           # (b, t, heads, dh)
    scores = xp.einsum("bqhd,bkhd->bhqk", q, k) * (1.0 / math.sqrt(d // heads))
    attn = xp.einsum("bhqk,bkhd->bqhd", softmax(xp, scores), v)
    x = x + xp.reshape(attn, (b, t, d)) @ p["proj"]
    h = layer_norm(xp, x, *p["ln2"])
    return x + gelu(xp, h @ p["fc1"]) @ p["fc2"]


def vit_params(d, rng):
    def w(*shape):
        return (rng.standard_normal(shape) / math.sqrt(shape[0])).astype(np.float32)
    ln = (np.ones(d, np.float32), np.zeros(d, np.float32))
    return {"ln1": ln, "ln2": ln, "qkv": w(d, 3 * d), "proj": w(d, d), "fc1": w(d, 4 * d), "fc2": w(4 * d, d)}


def tiny_add(xp, x, y):
    return x + y


def burgers_operators(n, nu, dt, length=2 * math.pi):
    """Spectral operators of the viscous Burgers step on a periodic grid of ``n`` points:
    i*k for d/dx, 1 / (1 + nu*dt*k^2) for the implicit viscous term, the 2/3 dealiasing mask."""
    k = 2 * math.pi / length * np.arange(n // 2 + 1)
    mask = (np.arange(n // 2 + 1) < (2 * (n // 2 + 1)) // 3).astype(np.float32)
    ik = (1j * k).astype(np.complex64)
    return ik, (mask / (1.0 + nu * dt * k ** 2)).astype(np.float32)


def burgers(xp, u0, steps=200, nu=0.02, dt=1e-3):
    """Pseudo-spectral viscous Burgers u_t + (u^2/2)_x = nu u_xx, periodic, ``steps`` semi-implicit
    Euler steps (nonlinear term explicit and dealiased, viscosity implicit), in one fori_loop."""
    import jax
    import hloforge as hf
    lax = hf.lax if xp.__name__.startswith("hloforge") else jax.lax
    n = u0.shape[-1]
    ik, factor = burgers_operators(n, nu, dt)

    def step(_, u):
        u_hat = xp.fft.rfft(u)
        nonlinear = xp.fft.rfft(u * u)
        u_hat = (u_hat - (0.5 * dt) * ik * nonlinear) * factor
        return xp.fft.irfft(u_hat, n=n)

    return lax.fori_loop(0, steps, step, u0)
