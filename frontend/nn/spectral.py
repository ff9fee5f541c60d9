"""The Fourier layer of neural operators (FNO): spectral convolution with explicit weights."""
from __future__ import annotations

import itertools
import operator

import numpy as np

from hloforge.frontend import lax
from hloforge.frontend import numpy as hnp
from hloforge.frontend.lax.convolution import _precision_names
from hloforge.frontend.numpy._base import asarray


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def checked_precision(who: str, precision):
    """``precision`` if hloforge.numpy.einsum takes it (None, a jax.lax.Precision or its name, an
    (lhs, rhs) pair); else ValueError naming ``who``."""
    try:
        _precision_names(precision)
    except ValueError as e:
        raise ValueError(f"hloforge.nn.{who}: {e}") from None
    return precision


def positive_int(layer: str, name: str, value, minimum: int = 1) -> int:
    """``value`` as an int; TypeError unless it is one, ValueError if it is below ``minimum``."""
    if not _is_int(value):
        raise TypeError(f"{layer}: {name} must be an int, got {value!r} ({type(value).__name__})")
    if value < minimum:
        raise ValueError(f"{layer}: {name} must be >= {minimum}, got {value}")
    return int(value)


class SpectralConv:
    """FNO spectral convolution over the last ``n_dims`` axes of ``x`` (batch, channels, *grid).

    rfftn -> keep the ``modes`` lowest frequencies (both signs on every transformed axis but the
    last, which rfft halves) -> complex channel mixing per mode (one einsum per corner) -> zero-pad
    -> irfftn back to the grid. Weights are explicit arrays, shape
    ``(2 ** (n_dims - 1), in_channels, out_channels, *modes)``: one complex array, or a pair of real
    planes ``(real, imag)`` (``init(planes=True)``), which the layer combines with ``stablehlo.complex``.
    On a TPU, planes make training cheaper: every complex leaf a program takes or returns costs XLA a
    split or a combine there, and optax's Adam then normalizes each plane by itself, as torch's Adam
    does with complex weights (docs/limits.md, "On a TPU").

    Example:
      >>> layer = hf.nn.SpectralConv(2, (12, 12), 32, 32)
      >>> w = layer.init(seed=0)
      >>> y = layer(x, w)      # inside hf.jit / hf.trace

    ``precision`` is the channel mixing's einsum precision (hloforge.numpy.einsum's: None, or "highest"
    for float32 products on a TPU, where None is one bfloat16 pass).
    """

    def __init__(self, n_dims: int, modes, in_channels: int, out_channels: int, precision=None):
        n_dims = positive_int("SpectralConv", "n_dims", n_dims)
        in_channels = positive_int("SpectralConv", "in_channels", in_channels)
        out_channels = positive_int("SpectralConv", "out_channels", out_channels)
        if _is_int(modes):
            modes = (modes,) * n_dims
        elif isinstance(modes, (tuple, list)) and len(modes) == n_dims and all(_is_int(m) for m in modes):
            modes = tuple(modes)
        else:
            raise TypeError(f"SpectralConv: modes must be an int or a sequence of {n_dims} int(s), one per grid axis; "
                            f"got {modes!r}")
        modes = tuple(operator.index(m) for m in modes)
        if any(m < 1 for m in modes):
            raise ValueError(f"SpectralConv: modes {modes} must be {n_dims} positive ints")
        self.n_dims, self.modes = n_dims, modes
        self.in_channels, self.out_channels = in_channels, out_channels
        self.precision = checked_precision("SpectralConv", precision)

    @property
    def weight_shape(self) -> tuple:
        return (2 ** (self.n_dims - 1), self.in_channels, self.out_channels, *self.modes)

    def init(self, seed: int = 0, dtype=np.complex64, planes: bool = False):
        """Random weights scaled like neuraloperator's: uniform in [0, 1/(in*out)) for both parts.
        ``planes=True`` returns the same values as a pair of real arrays ``(real, imag)``."""
        if not isinstance(planes, bool):
            raise TypeError(f"SpectralConv.init: planes must be True or False, got {planes!r}")
        rng = np.random.default_rng(seed)
        scale = 1.0 / (self.in_channels * self.out_channels)
        shape = self.weight_shape
        weights = (scale * (rng.random(shape) + 1j * rng.random(shape))).astype(dtype)
        return (weights.real, weights.imag) if planes else weights

    def _check(self, x):
        if x.ndim != self.n_dims + 2 or x.shape[1] != self.in_channels:
            raise ValueError(f"SpectralConv: input shape {x.shape} must be (batch, {self.in_channels}, "
                             f"{self.n_dims} grid dims)")
        grid = x.shape[2:]
        for axis, (n, m) in enumerate(zip(grid, self.modes)):
            last = axis == self.n_dims - 1
            limit = n // 2 + 1 if last else n // 2
            if m > limit:
                raise ValueError(f"SpectralConv: {m} modes on grid axis {axis} of size {n} exceed {limit}")
        return grid

    def _weights(self, weights):
        """One complex array from ``weights``: a complex array, or a pair of real planes (real, imag)."""
        if isinstance(weights, (tuple, list)):
            if len(weights) != 2:
                raise ValueError(f"SpectralConv: weights as planes are a pair (real, imag), got {len(weights)} arrays")
            real, imag = (asarray(w) for w in weights)
            for name, plane in (("real", real), ("imag", imag)):
                if plane.shape != self.weight_shape:
                    raise ValueError(f"SpectralConv: the {name} plane's shape {plane.shape} must be "
                                     f"{self.weight_shape}")
            if real.dtype != imag.dtype or real.dtype.kind != "f":
                raise TypeError(f"SpectralConv: the planes must share one float dtype, got {real.dtype} and "
                                f"{imag.dtype}")
            return lax.complex(real, imag)
        weights = asarray(weights)
        if weights.shape != self.weight_shape:
            raise ValueError(f"SpectralConv: weights shape {weights.shape} must be {self.weight_shape}")
        return weights

    def __call__(self, x, weights):
        x = asarray(x)
        grid = self._check(x)
        weights = self._weights(weights)
        axes = tuple(range(2, 2 + self.n_dims))
        spectrum = hnp.fft.rfftn(x, axes=axes)
        letters = "xyzuvw"[:self.n_dims]
        mix = f"bi{letters},io{letters}->bo{letters}"
        lead = self.n_dims - 1
        corners = {}
        for k, signs in enumerate(itertools.product((0, 1), repeat=lead)):
            index = [slice(None), slice(None)]
            for axis, sign in enumerate(signs):
                n, m = grid[axis], self.modes[axis]
                index.append(slice(0, m) if sign == 0 else slice(n - m, n))
            index.append(slice(0, self.modes[-1]))
            corners[signs] = hnp.einsum(mix, spectrum[tuple(index)], weights[k], precision=self.precision)
        out = self._assemble(corners, grid, lead)
        bins = grid[-1] // 2 + 1
        out = hnp.pad(out, [(0, 0)] * (out.ndim - 1) + [(0, bins - self.modes[-1])])
        return hnp.fft.irfftn(out, s=grid, axes=axes)

    def _assemble(self, corners, grid, lead):
        """Place the corner blocks at the low positive and negative frequencies of each leading axis,
        merging the last sign of every corner key per step."""
        for axis in reversed(range(lead)):
            n, m = grid[axis], self.modes[axis]
            merged = {}
            for head in {key[:-1] for key in corners}:
                pos, neg = corners[head + (0,)], corners[head + (1,)]
                pieces = [pos]
                if n > 2 * m:
                    gap = list(pos.shape)
                    gap[2 + axis] = n - 2 * m
                    pieces.append(hnp.zeros(gap, pos.dtype))
                pieces.append(neg)
                merged[head] = hnp.concatenate(pieces, axis=2 + axis)
            corners = merged
        return corners[()]
