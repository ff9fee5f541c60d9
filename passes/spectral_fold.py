"""``fft-truncate``'s patterns rooted at a partial DFT's contraction that an FFT feeds: the FFT folds into
the contraction's constant matrix (``partial_dft_of_fft``, ``partial_dft_of_fft_across``)."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from hloforge.frontend.attributes import read_dot_dimensions
from hloforge.frontend.context import ir
from hloforge.passes._ir import (
    build, constant, constant_value, dtype_of, element_type, has_one_use, params_of, producer, rebuild,
    shape_of, tensor)
from hloforge.passes.fft import fft_type
from hloforge.passes.spectral_dft import MAX_MATRIX, angles, fft_axes, pair_to_pair

FFT = "stablehlo.fft"


def fft_into_dot(dot):
    """(fft, axis, M) when ``dot`` contracts concatenate([real(fft), imag(fft)], axis) (how a partial DFT
    takes a complex input; the FFT's result has no other user) along that axis alone with dim 0 of a
    constant M; else the reason it does not (pure)."""
    cat = producer(dot.operands[0], "stablehlo.concatenate")
    if cat is None or len(cat.operands) != 2 or not has_one_use(cat.result):
        return "the lhs is not a two-operand concatenate with no other user"
    re, im = producer(cat.operands[0], "stablehlo.real"), producer(cat.operands[1], "stablehlo.imag")
    if re is None or im is None or re.operands[0] != im.operands[0]:
        return "the concatenate does not join real(z) and imag(z) of one z, re first"
    fft = producer(re.operands[0], FFT)
    if fft is None:
        return "z is not made by an FFT"
    if sorted(u.owner.name for u in fft.result.uses) != ["stablehlo.imag", "stablehlo.real"] or not (
            has_one_use(re.result) and has_one_use(im.result)):
        return "the FFT's result has other users"
    axis = params_of(cat)["dimension"]
    if read_dot_dimensions(dot) != ((), (), (axis,), (0,)):
        return "the dot_general does not contract the concatenated axis alone with dim 0 of its rhs"
    if dtype_of(dot.operands[1]) != dtype_of(cat.result) or str(element_type(cat.result)) not in ("f32", "f64"):
        return "not float32 or float64 of one dtype"
    matrix = constant_value(dot.operands[1], limit=MAX_MATRIX)
    if matrix is None:
        return "the rhs is not a constant (of at most 2**22 elements)"
    return fft, axis, matrix


def _multiplies_complex(m) -> bool:
    """Whether matrix m ([re | im] input rows, a trailing (re, im) output axis) multiplies complex
    numbers: its im rows are its re rows turned by i."""
    half = m.shape[0] // 2
    return (m.ndim >= 2 and m.shape[-1] == 2 and m.shape[0] == 2 * half
            and np.array_equal(m[half:, ..., 0], -m[:half, ..., 1]) and np.array_equal(m[half:, ..., 1], m[:half, ..., 0]))


class _FFTInDot(NamedTuple):
    fft: object           # the FFT that folds into the contraction
    kind: str             # its type: FFT, IFFT or RFFT
    axes: list            # its transformed axes, the leading one a
    lengths: list         # its fft_length
    k: int                # its modes along a
    matrix: np.ndarray    # the contraction's constant M


def plan_partial_dft_of_fft(dot):
    """The plan of ``partial_dft_of_fft`` for the dot_general ``dot`` (pure), or why it does not fire."""
    found = fft_into_dot(dot)
    if isinstance(found, str):
        return found
    op, split, matrix = found
    kind = fft_type(op)
    if kind not in ("FFT", "IFFT", "RFFT"):
        return f"an {kind}, not an FFT, IFFT or RFFT"
    axes, lengths = fft_axes(op)
    a, n = axes[0], lengths[0]
    if split != a:
        return "the concatenate's axis is not the FFT's leading transformed axis"
    k = shape_of(op.result)[a]
    if n * k * 4 > MAX_MATRIX:
        return "the DFT matrix along the axis would have more than 2**22 elements"
    if matrix.shape[0] != 2 * k:
        return "the rhs's dim 0 is not twice the FFT's modes along the axis"
    if matrix.size // k * n > MAX_MATRIX:
        return "the folded matrix would have more than 2**22 elements"
    return _FFTInDot(op, kind, axes, lengths, k, matrix)


def partial_dft_of_fft(dot, rewriter):
    """dot_general([re | im](fft(x, L)), M, axis a) -> dot_general([re | im](fft(x, L[1:])), D_a M, axis a)

    D_a is the DFT along a in the same real layout (for a one-axis RFFT: x itself, rows n, no split;
    a one-axis FFT or IFFT splits x itself), so the FFT loses its leading axis a or disappears.
    Preconditions: an FFT, IFFT or RFFT whose only users are real and imag, concatenated (re first)
    along a, the leading transformed axis, and contracted along a (no other dims) with dim 0 of a
    constant M, as truncated_inverse_fft's partial DFTs do; D_a M is computed in float64 and rounded
    once; matrices up to 2**22 elements. Finite math only (the sums are rounded differently).
    """
    plan = plan_partial_dft_of_fft(dot)
    if isinstance(plan, str):
        return plan
    op, kind, axes, lengths, k, matrix = plan
    a, n = axes[0], lengths[0]
    if kind == "RFFT" and len(axes) == 1:  # real x: rows n, columns [re | im] of the k bins
        theta = angles(range(n), range(k), n, -1)
        d = np.concatenate([np.cos(theta), np.sin(theta)], 1)
    else:
        sign, scale = (1, 1.0 / n) if kind == "IFFT" else (-1, 1.0)
        c, s = scale * np.cos(angles(range(n), range(n), n, sign)), scale * np.sin(angles(range(n), range(n), n, sign))
        d = np.block([[c, s], [-s, c]])  # (re + i im) e^(i theta), rows [re | im] of x
    fused = (d @ matrix.reshape(2 * k, -1).astype(np.float64)).reshape((d.shape[0],) + matrix.shape[1:])
    if d.shape[0] == 2 * n and _multiplies_complex(matrix):  # (so is D_a M: keep that exact for the next one)
        fused[n:, ..., 0], fused[n:, ..., 1] = -fused[:n, ..., 1], fused[:n, ..., 0]
    rhs_type = dot.operands[1].type
    loc = dot.location
    with rewriter.ip:
        x = op.operands[0]
        if len(axes) > 1:
            x = rebuild(op, [x], fft_length=lengths[1:])
        if kind != "RFFT" or len(axes) > 1:
            parts = [build(name, [x], loc=loc) for name in ("stablehlo.real", "stablehlo.imag")]
            x = build("stablehlo.concatenate", parts, dimension=a, loc=loc)
        element = ir.RankedTensorType(rhs_type).element_type
        m = constant(fused.astype(dtype_of(dot.operands[1])), tensor(fused.shape, element), loc)
        out = rebuild(dot, [x, m], loc=loc)
    rewriter.replace_op(dot, [out])


class _FFTAcross(NamedTuple):
    dot1: object          # the complex multiplication along b that the FFT feeds
    fft: object           # the one-axis FFT or RFFT along a
    kind: str
    b: int
    n: int                # the FFT's length
    k: int                # its modes
    m1: np.ndarray        # dot1's constant matrix
    m2: np.ndarray        # dot2's constant matrix


def plan_partial_dft_of_fft_across(dot2):
    """The plan of ``partial_dft_of_fft_across`` for the dot_general ``dot2`` (pure), or why it does not fire."""
    dot1 = producer(dot2.operands[0], "stablehlo.dot_general")
    if dot1 is None:
        return "the lhs is not a dot_general"
    if not has_one_use(dot1.result):
        return "the lhs dot_general has other users"
    found = fft_into_dot(dot1)
    if isinstance(found, str):
        return found
    op, b, m1 = found
    kind = fft_type(op)
    axes, lengths = fft_axes(op)
    if kind not in ("FFT", "RFFT"):
        return f"an {kind}, not an FFT or RFFT"
    if len(axes) != 1:
        return "the FFT transforms more than one axis"
    if b == axes[0]:
        return "the first contraction is along the FFT's axis (partial_dft_of_fft's case)"
    a, n = axes[0], lengths[0]
    k = shape_of(op.result)[a]
    if not _multiplies_complex(m1):
        return "the first contraction's matrix does not multiply complex numbers"
    pos = a if a < b else a - 1
    if read_dot_dimensions(dot2) != ((), (), (pos, len(shape_of(dot1.result)) - 1), (1, 0)):
        return "the dot_general does not contract the FFT's modes and the (re, im) pair with dims 1 and 0 of its rhs"
    m2 = constant_value(dot2.operands[1], limit=MAX_MATRIX)
    if m2 is None:
        return "the rhs is not a constant (of at most 2**22 elements)"
    if m2.shape[:2] != (2, k):
        return "the rhs's dims 0 and 1 are not the (re, im) pair and the FFT's modes"
    if n * k * 4 > MAX_MATRIX:
        return "the DFT matrix along the FFT's axis would have more than 2**22 elements"
    if m2.size // k * n > MAX_MATRIX:
        return "the folded matrix would have more than 2**22 elements"
    return _FFTAcross(dot1, op, kind, b, n, k, m1, m2)


def partial_dft_of_fft_across(dot2, rewriter):
    """dot2(dot1_b([re | im](fft_a(x))), M2) -> dot2(dot1_b([re | im](x)), D_a M2)

    The FFT along a commutes with dot1, a complex multiplication along another axis b, and folds
    into dot2, which reads a's modes (and the (re, im) pair axis dot1 appends). Preconditions: a
    one-axis FFT or RFFT whose only users are real and imag, concatenated (re first) along b != a
    and contracted along b alone with dim 0 of a constant M1 that multiplies complex numbers (its
    (re, im) input rows and output pair obey [[c, s], [-s, c]]; for an RFFT only its re rows are
    kept, x being real); dot1's only user contracts a's modes and the pair axis with dims 1 and 0
    of a constant M2 (truncated_inverse_fft's partial DFTs have this form); D_a M2 is computed in
    float64 and rounded once; matrices up to 2**22 elements. Finite math only.
    """
    plan = plan_partial_dft_of_fft_across(dot2)
    if isinstance(plan, str):
        return plan
    dot1, op, kind, b, n, k, m1, m2 = plan
    half = m1.shape[0] // 2
    d = pair_to_pair(angles(range(n), range(k), n, -1), 1.0)  # [p, n, k, q]
    fused = np.einsum("pnkq,qk...->pn...", d, m2.astype(np.float64))
    loc = dot2.location
    with rewriter.ip:
        x = op.operands[0]
        if kind == "RFFT":
            m1_type = tensor((half,) + m1.shape[1:], element_type(dot1.operands[1]))
            rhs1 = constant(np.ascontiguousarray(m1[:half]), m1_type, loc)
        else:
            parts = [build(name, [x], loc=loc) for name in ("stablehlo.real", "stablehlo.imag")]
            x = build("stablehlo.concatenate", parts, dimension=b, loc=loc)
            rhs1 = dot1.operands[1]
        y = rebuild(dot1, [x, rhs1])
        rhs2 = constant(fused.astype(dtype_of(dot2.operands[1])), tensor(fused.shape, element_type(dot2.operands[1])),
                        loc)
        out = rebuild(dot2, [y, rhs2], loc=loc)
    rewriter.replace_op(dot2, [out])
