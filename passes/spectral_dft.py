"""Partial DFTs in real arithmetic, for ``fft-truncate`` (``spectral.py``, ``spectral_fold.py``): the DFT
matrices over kept positions and modes (cached: an FNO's layers share their shapes) and the chain of one-axis
``dot_general`` contractions that applies them. A complex tensor travels as a real one with a trailing (re, im)
pair axis.
"""
from __future__ import annotations

import math

import numpy as np

from hloforge.frontend.context import ir
from hloforge.passes._ir import build, constant, dft_precision, dot_general, element_type, ints, shape_of, tensor
from hloforge.target import PARTIAL_DFT_ATTR

MAX_MATRIX = 1 << 22  # largest DFT matrix (elements) a pattern materializes


def fft_axes(op):
    """The axes an FFT op transforms (its trailing ones) and its fft_length."""
    lengths = ints(op, "fft_length")
    rank = len(shape_of(op.operands[0]))
    return list(range(rank - len(lengths), rank)), lengths



# ---------------------------------------------------------------- DFT matrices

def angles(rows, cols, n: int, sign: int) -> np.ndarray:
    """sign * 2 pi (r * c mod n) / n, reduced exactly in integers."""
    rc = np.outer(np.asarray(rows, np.int64), np.asarray(cols, np.int64)) % n
    return sign * 2 * np.pi * rc / n


def real_to_pair(theta, scale):
    """[k, n, q]: a real input times scale * e^(i theta) as (re, im)."""
    return np.stack([scale * np.cos(theta), scale * np.sin(theta)], -1)


def pair_to_pair(theta, scale):
    """[p, k, n, q]: (a + ib) * scale * e^(i theta) as (re, im)."""
    c, s = scale * np.cos(theta), scale * np.sin(theta)
    return np.stack([np.stack([c, s], -1), np.stack([-s, c], -1)], 0)


def pair_to_real(theta, scale):
    """[p, k, n]: the real part of (a + ib) * scale * e^(i theta)."""
    return np.stack([scale * np.cos(theta), -scale * np.sin(theta)], 0)


_MATRICES: dict = {}  # (the DFT matrices of the last pipeline runs: an FNO's layers share their shapes)
_CACHED_MATRIX = 1 << 16  # largest matrix (elements) kept


def _cached(key, compute):
    matrix = _MATRICES.get(key)
    if matrix is None:
        matrix = compute()
        if matrix.size <= _CACHED_MATRIX:
            if len(_MATRICES) >= 256:
                _MATRICES.clear()
            matrix.flags.writeable = False
            _MATRICES[key] = matrix
    return matrix


def forward_matrix(paired: bool, rows, cols, n: int, dtype) -> np.ndarray:
    """The forward partial DFT over one axis, from positions ``rows`` onto modes ``cols`` (``Positions``)."""
    return _cached(("forward", paired, rows, cols, n, dtype), lambda: (pair_to_pair if paired else real_to_pair)(
        angles(rows.array(), cols.array(), n, -1), 1.0).astype(dtype))


def inverse_matrix(out_pair: bool, modes, n: int, dtype) -> np.ndarray:
    """The inverse partial DFT over one axis, from ``modes`` (``Positions``) onto all n positions; ``out_pair``
    False is IRFFT's last axis, where bins 1 .. ceil(n/2)-1 stand for two conjugate bins."""
    def compute():
        bins = modes.array()
        theta = angles(bins, range(n), n, 1)
        if out_pair:
            return pair_to_pair(theta, 1.0 / n).astype(dtype)
        w = np.where((bins == 0) | (2 * bins == n), 1.0, 2.0)
        return pair_to_real(theta, w[:, None] / n).astype(dtype)
    return _cached(("inverse", out_pair, modes, n, dtype), compute)



# ---------------------------------------------------------------- the contraction chain

class Chain:
    """Builds a sequence of one-axis DFT contractions in real arithmetic, tracking where each original
    axis is. A complex input is split once, re and im concatenated along the first contracted axis;
    between contractions complex values carry a trailing (re, im) axis; the last contraction puts
    re and im side by side along its output axis, so no reshapes are needed at either end."""

    def __init__(self, value, complex_input: bool, loc):
        self.loc = loc
        self.shape = list(shape_of(value))
        self.order = list(range(len(self.shape)))  # current position -> original axis
        self.real = real_of(element_type(value)) if complex_input else element_type(value)
        self.dtype = np.dtype(np.float64) if str(self.real) == "f64" else np.dtype(np.float32)
        self.state = "complex" if complex_input else "real"  # then "pair", "split" or "real"
        self.value = value

    @property
    def paired(self) -> bool:
        return self.state in ("complex", "pair")

    def contract(self, axis: int, matrix: np.ndarray, out_pair: bool, last: bool):
        """``matrix``: [k, n(, q)] for a real input, [p, k, n(, q)] for a complex one (p, q: re/im)."""
        pos = self.order.index(axis)
        if self.state == "complex":  # [re | im] along the contracted axis
            parts = [build(name, [self.value], loc=self.loc) for name in ("stablehlo.real", "stablehlo.imag")]
            self.value = build("stablehlo.concatenate", parts, dimension=pos, loc=self.loc)
            matrix = matrix.reshape((-1,) + matrix.shape[2:])
            lhs, rhs, rest = [pos], [0], [d for i, d in enumerate(self.shape) if i != pos]
        elif self.state == "pair":
            lhs, rhs = [pos, len(self.shape) - 1], [1, 0]
            rest = [d for i, d in enumerate(self.shape[:-1]) if i != pos]
        else:
            lhs, rhs, rest = [pos], [0], [d for i, d in enumerate(self.shape) if i != pos]
        n_out = matrix.shape[len(rhs)]
        if out_pair and last:  # [re | im] along the output axis
            matrix = np.moveaxis(matrix, -1, -2)
            matrix = matrix.reshape(matrix.shape[:-2] + (2 * n_out,))
            shape, self.state = rest + [2 * n_out], "split"
        elif out_pair:
            shape, self.state = rest + [n_out, 2], "pair"
        else:
            shape, self.state = rest + [n_out], "real"
        m = constant(np.ascontiguousarray(matrix), tensor(matrix.shape, self.real), self.loc)
        self.value = dot_general(self.value, m, lhs, rhs, self.loc, precision=dft_precision())
        self.shape = shape
        self.order = self.order[:pos] + self.order[pos + 1:] + [axis]

    def finish(self):
        """The result in the original axis order: complex (from the split output) or real."""
        out = self.value
        if self.state == "split":
            n = self.shape[-1] // 2
            base = self.shape[:-1] + [n]
            parts = []
            for q in (0, 1):
                parts.append(build("stablehlo.slice", [out], start_indices=[0] * (len(base) - 1) + [q * n],
                                   limit_indices=base[:-1] + [(q + 1) * n], strides=[1] * len(base), loc=self.loc))
            out = build("stablehlo.complex", parts, loc=self.loc)
            self.shape = base
        perm = [self.order.index(a) for a in range(len(self.order))]
        if perm != list(range(len(perm))):
            out = build("stablehlo.transpose", [out], permutation=perm, loc=self.loc)
        return out


def mark_partial_dfts(op) -> None:
    """Note on ``op``'s module that it now holds partial DFTs."""
    top = op.operation
    while top.parent is not None:
        top = top.parent
    top.attributes[PARTIAL_DFT_ATTR] = ir.UnitAttr.get()


def real_of(complex_element):
    return complex_element.element_type  # ir.ComplexType


def flops(shape, pairs_in: bool, axes_plan) -> int:
    """Flops of the chain: ``axes_plan`` is [(axis, n_in, n_out, out_pair)] in order."""
    size = math.prod(shape) * (2 if pairs_in else 1)
    paired, total = pairs_in, 0
    for _, n_in, n_out, out_pair in axes_plan:
        rows = size // (n_in * (2 if paired else 1))
        total += 2 * size * n_out * (2 if out_pair else 1)
        size = rows * n_out * (2 if out_pair else 1)
        paired = out_pair
    return total
