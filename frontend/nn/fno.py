"""A Fourier Neural Operator (Li et al. 2021) built from hloforge.numpy and SpectralConv."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import numpy as hnp
from hloforge.frontend.nn.activations import gelu
from hloforge.frontend.nn.spectral import SpectralConv, checked_precision, positive_int


def pointwise(x, w, b, precision=None):
    """1x1 convolution on channel-first data: (batch, in, *grid) -> (batch, out, *grid)."""
    y = hnp.einsum("bi...,io->bo...", x, w, precision=precision)
    return y + hnp.reshape(b, (1, -1) + (1,) * (x.ndim - 2))


class FNO:
    """lift -> ``n_layers`` x (SpectralConv + pointwise skip, GELU between) -> project.

    The grid is zero-padded by ``padding`` cells at the high end of every spatial axis after
    lifting (non-periodic domains) and cropped back before projecting. Data is channel-first:
    ``x`` is (batch, in_channels, *grid). Parameters are a dict of arrays from :meth:`init`.
    ``precision`` is every contraction's (hloforge.numpy.einsum's): None, or "highest" for float32
    products on a TPU, where None is one bfloat16 pass (as in jax).

    Example:
      >>> model = hf.nn.FNO(n_dims=1, modes=16, width=64, n_layers=4, padding=8)
      >>> params = model.init(seed=0)
      >>> y = hf.jit(model)(x, params)
    """

    def __init__(self, n_dims, modes, width, n_layers=4, in_channels=1, out_channels=1, hidden=128,
                 padding=0, precision=None):
        n_dims, width, in_channels, out_channels, hidden = (
            positive_int("FNO", name, value) for name, value in (
                ("n_dims", n_dims), ("width", width), ("in_channels", in_channels),
                ("out_channels", out_channels), ("hidden", hidden)))
        n_layers = positive_int("FNO", "n_layers", n_layers, minimum=0)
        padding = positive_int("FNO", "padding", padding, minimum=0)
        self.n_dims, self.width, self.n_layers = n_dims, width, n_layers
        self.in_channels, self.out_channels, self.hidden, self.padding = in_channels, out_channels, hidden, padding
        self.precision = checked_precision("FNO", precision)
        self.spectral = SpectralConv(n_dims, modes, width, width, precision)

    def init(self, seed: int = 0, dtype=np.float32, planes: bool = False) -> dict:
        """The parameters: ``lift``, ``proj1``, ``proj2`` and ``skip`` as (weights, bias), each layer's
        ``spectral`` weights complex, or with ``planes=True`` a pair of real planes (SpectralConv.init:
        cheaper to train on a TPU)."""
        rng = np.random.default_rng(seed)

        def linear(i, o):
            bound = 1.0 / np.sqrt(i)
            return (rng.uniform(-bound, bound, (i, o)).astype(dtype), rng.uniform(-bound, bound, (o,)).astype(dtype))

        params = {"lift": linear(self.in_channels, self.width), "proj1": linear(self.width, self.hidden),
                  "proj2": linear(self.hidden, self.out_channels)}
        cdtype = np.complex64 if np.dtype(dtype) == np.float32 else np.complex128
        params["layers"] = [{"spectral": self.spectral.init(seed + 1 + i, cdtype, planes),
                             "skip": linear(self.width, self.width)} for i in range(self.n_layers)]
        return params

    def __call__(self, x, params):
        h = pointwise(x, *params["lift"], self.precision)
        p = self.padding
        if p:
            h = hnp.pad(h, [(0, 0), (0, 0)] + [(0, p)] * self.n_dims)
        for i, layer in enumerate(params["layers"]):
            h = self.spectral(h, layer["spectral"]) + pointwise(h, *layer["skip"], self.precision)
            if i < self.n_layers - 1:
                h = gelu(h)
        if p:
            h = h[(slice(None), slice(None)) + (slice(0, -p),) * self.n_dims]
        h = gelu(pointwise(h, *params["proj1"], self.precision))
        return pointwise(h, *params["proj2"], self.precision)
