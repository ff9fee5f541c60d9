"""Spectral truncation (``fft-truncate``): FFTs of mode-truncated spectra become partial DFTs.

A Fourier neural operator keeps a few low modes of ``rfftn(x)`` and zero-fills the rest before
``irfftn``. Both transforms then compute mostly values nobody reads or sums of zeros. These
patterns replace them by contractions with small constant DFT matrices over the kept modes
(``dot_general`` in real arithmetic: a complex tensor travels as a real one with a trailing
(re, im) pair axis), when the ``CostModel`` of the target (``hloforge.target``) says that is cheaper.

The rewrites are exact in real arithmetic; in floating point the sums are ordered differently
(and an Inf or NaN no longer spreads to every element), so the family is finite-math only, like
inverse-FFT elimination. ``Module.optimize(cost_model=...)`` or ``hf.config.cost_model`` choose
the model; the default follows ``hf.config.device``.

This file holds the truncation patterns and the family's table; ``spectral_dft`` the DFT matrices and
the contraction chain, ``spectral_support`` where a value is zero, ``spectral_fold`` the patterns that
fold an FFT into the partial DFT after it, and ``hloforge.target`` the cost model (re-exported here).
"""
from __future__ import annotations

import math
from typing import NamedTuple

from hloforge.frontend.context import stablehlo
from hloforge.passes._ir import build, cost_model, dtype_of, shape_of, slice_params
from hloforge.passes.fft import fft_type
from hloforge.passes.spectral_dft import (
    MAX_MATRIX, Chain, fft_axes, flops, forward_matrix, inverse_matrix, mark_partial_dfts)
from hloforge.passes.spectral_fold import partial_dft_of_fft, partial_dft_of_fft_across
from hloforge.passes.spectral_positions import Positions
from hloforge.passes.spectral_support import ZERO, find_support
from hloforge.target import COST_MODELS, CPU, GPU, KEEP_FFTS, PARTIAL_DFT_ATTR, CostModel  # noqa: F401  (re-exported)


# ---------------------------------------------------------------- forward: slices of an FFT

def _kept_by_slices(op, axes):
    """Per FFT axis the ``Positions`` some slice user reads, and the users; None if some user is not a
    slice or the modes read take too many intervals."""
    users = [u.owner for u in op.result.uses]
    if not users or any(u.name != "stablehlo.slice" or u.operands[0] != op.result for u in users):
        return None
    read = [slice_params(u) for u in users]
    kept = {a: Positions.of(range(start[a], limit[a], strides[a]) for start, limit, strides in read) for a in axes}
    return None if None in kept.values() else (kept, users)


def _remapped_slice(u, axes, kept):
    """(start, limit, strides) of user slice ``u`` on the compact spectrum, or None."""
    start, limit, strides = slice_params(u)
    for a in axes:
        where = kept[a].ranks_of(range(start[a], limit[a], strides[a]))
        if where is None:
            return None
        start[a], limit[a], strides[a] = where.start, where.stop, where.step
    return start, limit, strides


class _ForwardPlan(NamedTuple):
    support: object  # where x is nonzero (spectral_support)
    steps: list      # (axis, n_in, n_out, paired) per contraction, in order
    lengths: list    # the FFT length of each transformed axis
    axes: list
    kept: dict       # axis -> the modes read (Positions)
    users: list      # the slices that read the spectrum, or None (it is read whole)
    remapped: list   # each user's (start, limit, strides) on the compact spectrum


def plan_truncated_forward_fft(op):
    """The plan of ``truncated_forward_fft`` for the FFT ``op`` (pure), or why it does not fire."""
    kind = fft_type(op)
    if kind not in ("FFT", "RFFT"):
        return f"an {kind}, not a forward transform"
    axes, lengths = fft_axes(op)
    out_shape = list(shape_of(op.result))
    found = _kept_by_slices(op, axes)
    if found is None:
        kept, users, remapped = {a: Positions.full(out_shape[a]) for a in axes}, None, None
    else:
        kept, users = found
        remapped = [_remapped_slice(u, axes, kept) for u in users]
        if any(r is None for r in remapped):
            return "a slice of the spectrum is not evenly spaced in the modes the slices read"
    x = op.operands[0]
    support = find_support(x, axes)
    if support is ZERO:
        return "the operand is all zeros"
    positions = support.positions
    if all(len(kept[a]) == out_shape[a] and len(positions[a]) == lengths[i] for i, a in enumerate(axes)):
        return "every mode is read and no input position is known to be zero"
    in_shape = [len(positions[a]) if a in axes else n for a, n in enumerate(shape_of(x))]
    if 0 in in_shape or 0 in out_shape:
        return "an empty operand or result"
    order = ([axes[-1]] + axes[:-1]) if kind == "RFFT" else axes
    steps = [(a, len(positions[a]), len(kept[a]), True) for a in order]
    filled = 0 if in_shape == list(shape_of(x)) else math.prod(shape_of(x)) * dtype_of(x).itemsize
    if not _worth_it(kind, in_shape, axes, lengths, steps, kind == "FFT", filled):
        return "the cost model prefers the FFT"
    return _ForwardPlan(support, steps, lengths, axes, kept, users, remapped)


def truncated_forward_fft(op, rewriter):
    """slice_i(fft(zero-filled x, L)) -> slice_i'(partial DFT of x's nonzero part onto the modes read)

    Preconditions: an FFT or RFFT that computes modes nobody reads (every user is a slice, each
    slice's indices evenly spaced in the modes the slices read) or sums zeros (x is zero outside
    some positions of a transformed axis, through zero pads and concatenates with zero blocks, as
    for truncated_inverse_fft); the cost model prefers the partial DFT; matrices up to 2**22
    elements. Finite math only (the sums are rounded differently, and a non-finite x no longer
    spreads to every mode).
    """
    plan = plan_truncated_forward_fft(op)
    if isinstance(plan, str):
        return plan
    mark_partial_dfts(op)
    with rewriter.ip:
        chain = Chain(plan.support.build(op.location), fft_type(op) == "FFT", op.location)
        for i, (a, _, _, _) in enumerate(plan.steps):
            n = plan.lengths[plan.axes.index(a)]
            matrix = forward_matrix(chain.paired, plan.support.positions[a], plan.kept[a], n, chain.dtype)
            chain.contract(a, matrix, True, i == len(plan.steps) - 1)
        spectrum = chain.finish()
        if plan.users is None:
            rewriter.replace_op(op, [spectrum])
            return None
        compact = list(shape_of(spectrum))
        for u, (start, limit, strides) in zip(plan.users, plan.remapped):
            if start == [0] * len(compact) and limit == compact and strides == [1] * len(compact):
                out = spectrum
            else:
                out = build("stablehlo.slice", [spectrum], start_indices=start, limit_indices=limit, strides=strides,
                            loc=u.location)
            rewriter.replace_op(u, [out])
    rewriter.erase_op(op)


def _worth_it(kind, shape, axes, lengths, plan, pairs_in, zero_filled_bytes) -> bool:
    model = cost_model() or CPU
    batch = math.prod(n for i, n in enumerate(shape) if i not in axes)
    if any(n_in * n_out * 4 > MAX_MATRIX for _, n_in, n_out, _ in plan):
        return False
    dft = model.dft_cost(flops(shape, pairs_in, plan))
    return model.prefers_partial_dft(model.fft_cost(kind, batch, lengths, zero_filled_bytes), dft)


# ---------------------------------------------------------------- inverse: FFTs of zero-filled spectra

class _InversePlan(NamedTuple):
    support: object
    steps: list  # (axis, n_in, n_out, paired output) per contraction, in order


def plan_truncated_inverse_fft(op):
    """The plan of ``truncated_inverse_fft`` for the FFT ``op`` (pure), or why it does not fire."""
    kind = fft_type(op)
    if kind not in ("IFFT", "IRFFT"):
        return f"an {kind}, not an inverse transform"
    axes, lengths = fft_axes(op)
    y = op.operands[0]
    full = list(shape_of(y))
    s = find_support(y, axes)
    if s is ZERO:
        return "the operand is all zeros"
    if all(len(s.positions[a]) == full[a] for a in axes):
        return "no mode of the operand is known to be zero"
    compact = [len(s.positions[a]) if a in axes else n for a, n in enumerate(full)]
    if 0 in compact:
        return "an empty operand"
    steps = [(a, len(s.positions[a]), lengths[i], kind == "IFFT" or i < len(axes) - 1) for i, a in enumerate(axes)]
    filled = math.prod(full) * dtype_of(y).itemsize
    if not _worth_it(kind, compact, axes, lengths, steps, True, filled):
        return "the cost model prefers the FFT"
    return _InversePlan(s, steps)


def truncated_inverse_fft(op, rewriter):
    """ifft(zero-filled y, L) -> partial inverse DFT of y's nonzero modes (also irfft)

    Preconditions: an IFFT or IRFFT whose operand is, on the transformed axes, zero outside some
    modes, through pads with a zero padding value (no crops, no padding of batch axes) and
    concatenates along a transformed axis with all-zero (splat or broadcast) blocks; some mode is
    left out; the cost model prefers the partial DFT; matrices up to 2**22 elements. IRFFT keeps
    its semantics for any input: only the real part of the DC (and even-length Nyquist) bins
    counts. Finite math only.
    """
    plan = plan_truncated_inverse_fft(op)
    if isinstance(plan, str):
        return plan
    mark_partial_dfts(op)
    with rewriter.ip:
        chain = Chain(plan.support.build(op.location), True, op.location)
        for i, (a, _, n, out_pair) in enumerate(plan.steps):
            matrix = inverse_matrix(out_pair, plan.support.positions[a], n, chain.dtype)
            chain.contract(a, matrix, out_pair, i == len(plan.steps) - 1)
        out = chain.finish()
    rewriter.replace_op(op, [out])


PATTERNS = {
    "truncated_forward_fft": (stablehlo.FftOp, truncated_forward_fft),
    "truncated_inverse_fft": (stablehlo.FftOp, truncated_inverse_fft),
    "partial_dft_of_fft": (stablehlo.DotGeneralOp, partial_dft_of_fft),
    "partial_dft_of_fft_across": (stablehlo.DotGeneralOp, partial_dft_of_fft_across),
}
