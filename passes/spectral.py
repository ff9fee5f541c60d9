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
"""
from __future__ import annotations

import math

import numpy as np

from hloforge.frontend.attributes import read_dot_dimensions
from hloforge.frontend.context import i64_array, ir, stablehlo
from hloforge.frontend.ops.slicing import scatter_body_name
from hloforge.passes._ir import (
    NO_MATCH, constant, constant_value, cost_model, dot_general, dtype_of, element_type, emit, has_one_use, ints,
    is_zero, producer, shape_of, tensor)
from hloforge.passes.fft import fft_type
from hloforge.passes.pad import scalar_constant
from hloforge.target import COST_MODELS, CPU, GPU, KEEP_FFTS, PARTIAL_DFT_ATTR, CostModel  # noqa: F401  (re-exported)

FFT = "stablehlo.fft"
MAX_MATRIX = 1 << 22  # largest DFT matrix (elements) a pattern materializes


# ---------------------------------------------------------------- DFT matrices

def _angles(rows, cols, n: int, sign: int) -> np.ndarray:
    """sign * 2 pi (r * c mod n) / n, reduced exactly in integers."""
    rc = np.outer(np.asarray(rows, np.int64), np.asarray(cols, np.int64)) % n
    return sign * 2 * np.pi * rc / n


def _real_to_pair(theta, scale):
    """[k, n, q]: a real input times scale * e^(i theta) as (re, im)."""
    return np.stack([scale * np.cos(theta), scale * np.sin(theta)], -1)


def _pair_to_pair(theta, scale):
    """[p, k, n, q]: (a + ib) * scale * e^(i theta) as (re, im)."""
    c, s = scale * np.cos(theta), scale * np.sin(theta)
    return np.stack([np.stack([c, s], -1), np.stack([-s, c], -1)], 0)


def _pair_to_real(theta, scale):
    """[p, k, n]: the real part of (a + ib) * scale * e^(i theta)."""
    return np.stack([scale * np.cos(theta), -scale * np.sin(theta)], 0)


_MATRICES: dict = {}  # (the DFT matrices of the last pipeline runs: an FNO's layers share their shapes)
_CACHED_MATRIX = 1 << 16  # largest matrix (elements) kept


def _cached(key, build):
    matrix = _MATRICES.get(key)
    if matrix is None:
        matrix = build()
        if matrix.size <= _CACHED_MATRIX:
            if len(_MATRICES) >= 256:
                _MATRICES.clear()
            matrix.flags.writeable = False
            _MATRICES[key] = matrix
    return matrix


def _forward_matrix(paired: bool, rows: tuple, cols: tuple, n: int, dtype) -> np.ndarray:
    """The forward partial DFT over one axis, from positions ``rows`` onto modes ``cols``."""
    return _cached(("forward", paired, rows, cols, n, dtype), lambda: (_pair_to_pair if paired else _real_to_pair)(
        _angles(rows, cols, n, -1), 1.0).astype(dtype))


def _inverse_matrix(out_pair: bool, modes: tuple, n: int, dtype) -> np.ndarray:
    """The inverse partial DFT over one axis, from ``modes`` onto all n positions; ``out_pair``
    False is IRFFT's last axis, where bins 1 .. ceil(n/2)-1 stand for two conjugate bins."""
    def build():
        theta = _angles(modes, range(n), n, 1)
        if out_pair:
            return _pair_to_pair(theta, 1.0 / n).astype(dtype)
        w = np.where((np.asarray(modes) == 0) | (2 * np.asarray(modes) == n), 1.0, 2.0)
        return _pair_to_real(theta, w[:, None] / n).astype(dtype)
    return _cached(("inverse", out_pair, modes, n, dtype), build)


# ---------------------------------------------------------------- the contraction chain

class _Chain:
    """Builds a sequence of one-axis DFT contractions in real arithmetic, tracking where each original
    axis is. A complex input is split once, re and im concatenated along the first contracted axis;
    between contractions complex values carry a trailing (re, im) axis; the last contraction puts
    re and im side by side along its output axis, so no reshapes are needed at either end."""

    def __init__(self, value, complex_input: bool, loc):
        self.loc = loc
        self.shape = list(shape_of(value))
        self.order = list(range(len(self.shape)))  # current position -> original axis
        self.real = _real_of(element_type(value)) if complex_input else element_type(value)
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
            parts = [emit(name, [self.value], tensor(self.shape, self.real), None, self.loc)
                     for name in ("stablehlo.real", "stablehlo.imag")]
            doubled = list(self.shape)
            doubled[pos] *= 2
            self.value = emit("stablehlo.concatenate", parts, tensor(doubled, self.real), {"dimension": _i64(pos)},
                              self.loc)
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
        self.value = dot_general(self.value, m, lhs, rhs, tensor(shape, self.real), self.loc)
        self.shape = shape
        self.order = self.order[:pos] + self.order[pos + 1:] + [axis]

    def finish(self, complex_type):
        """The result in the original axis order: complex (from the split output) or real."""
        out = self.value
        if self.state == "split":
            n = self.shape[-1] // 2
            base = self.shape[:-1] + [n]
            parts = []
            for q in (0, 1):
                attrs = {"start_indices": i64_array([0] * (len(base) - 1) + [q * n]),
                         "limit_indices": i64_array(base[:-1] + [(q + 1) * n]), "strides": i64_array([1] * len(base))}
                parts.append(emit("stablehlo.slice", [out], tensor(base, self.real), attrs, self.loc))
            out = emit("stablehlo.complex", parts, tensor(base, complex_type), None, self.loc)
            self.shape = base
        perm = [self.order.index(a) for a in range(len(self.order))]
        if perm != list(range(len(perm))):
            shape = [self.shape[p] for p in perm]
            out = emit("stablehlo.transpose", [out], tensor(shape, element_type(out)),
                       {"permutation": i64_array(perm)}, self.loc)
        return out


def _mark_partial_dfts(op) -> None:
    """Note on ``op``'s module that it now holds partial DFTs."""
    top = op.operation
    while top.parent is not None:
        top = top.parent
    top.attributes[PARTIAL_DFT_ATTR] = ir.UnitAttr.get()


def _real_of(complex_element):
    return complex_element.element_type  # ir.ComplexType


def _i64(v):
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)


def _flops(shape, pairs_in: bool, axes_plan) -> int:
    """Flops of the chain: ``axes_plan`` is [(axis, n_in, n_out, out_pair)] in order."""
    size = math.prod(shape) * (2 if pairs_in else 1)
    paired, total = pairs_in, 0
    for _, n_in, n_out, out_pair in axes_plan:
        rows = size // (n_in * (2 if paired else 1))
        total += 2 * size * n_out * (2 if out_pair else 1)
        size = rows * n_out * (2 if out_pair else 1)
        paired = out_pair
    return total


# ---------------------------------------------------------------- forward: slices of an FFT

def _fft_axes(op):
    lengths = ints(op, "fft_length")
    rank = len(shape_of(op.operands[0]))
    return list(range(rank - len(lengths), rank)), lengths


def _kept_by_slices(op, axes):
    """Per FFT axis the sorted indices some slice user reads, and the users; None if some user is
    not a slice."""
    users = [u.owner for u in op.result.uses]
    if not users or any(u.name != "stablehlo.slice" or u.operands[0] != op.result for u in users):
        return None
    kept = {a: set() for a in axes}
    for u in users:
        start, limit, strides = ints(u, "start_indices"), ints(u, "limit_indices"), ints(u, "strides")
        for a in axes:
            kept[a].update(range(start[a], limit[a], strides[a]))
    return {a: sorted(kept[a]) for a in axes}, users


def _remapped_slice(u, axes, kept):
    """(start, limit, strides) of user slice ``u`` on the compact spectrum, or None."""
    start, limit, strides = ints(u, "start_indices"), ints(u, "limit_indices"), ints(u, "strides")
    for a in axes:
        where = [kept[a].index(i) for i in range(start[a], limit[a], strides[a])]
        if not where:
            return None
        step = where[1] - where[0] if len(where) > 1 else 1
        if step < 1 or where != list(range(where[0], where[-1] + 1, step)):
            return None
        start[a], limit[a], strides[a] = where[0], where[-1] + 1, step
    return start, limit, strides


def truncated_forward_fft(op, rewriter):
    """slice_i(fft(zero-filled x, L)) -> slice_i'(partial DFT of x's nonzero part onto the modes read)

    Preconditions: an FFT or RFFT that computes modes nobody reads (every user is a slice, each
    slice's indices evenly spaced in the modes the slices read) or sums zeros (x is zero outside
    some positions of a transformed axis, through zero pads and concatenates with zero blocks, as
    for truncated_inverse_fft); the cost model prefers the partial DFT; matrices up to 2**22
    elements. Finite math only (the sums are rounded differently, and a non-finite x no longer
    spreads to every mode).
    """
    kind = fft_type(op)
    if kind not in ("FFT", "RFFT"):
        return NO_MATCH
    axes, lengths = _fft_axes(op)
    out_shape = list(shape_of(op.result))
    found = _kept_by_slices(op, axes)
    if found is None:
        kept, users = {a: list(range(out_shape[a])) for a in axes}, None
    else:
        kept, users = found
        remapped = [_remapped_slice(u, axes, kept) for u in users]
        if any(r is None for r in remapped):
            return NO_MATCH
    x = op.operands[0]
    support = _support(x, axes)
    if support is ZERO:
        return NO_MATCH
    positions = support.positions
    if all(len(kept[a]) == out_shape[a] and len(positions[a]) == lengths[i] for i, a in enumerate(axes)):
        return NO_MATCH
    in_shape = [len(positions[a]) if a in axes else n for a, n in enumerate(shape_of(x))]
    if 0 in in_shape or 0 in out_shape:
        return NO_MATCH
    order = ([axes[-1]] + axes[:-1]) if kind == "RFFT" else axes
    plan = [(a, len(positions[a]), len(kept[a]), True) for a in order]
    filled = 0 if in_shape == list(shape_of(x)) else math.prod(shape_of(x)) * dtype_of(x).itemsize
    if not _worth_it(kind, in_shape, axes, lengths, plan, kind == "FFT", filled):
        return NO_MATCH
    _mark_partial_dfts(op)
    with rewriter.ip:
        chain = _Chain(support.build(op.location), kind == "FFT", op.location)
        for i, (a, _, _, _) in enumerate(plan):
            n = lengths[axes.index(a)]
            matrix = _forward_matrix(chain.paired, tuple(positions[a]), tuple(kept[a]), n, chain.dtype)
            chain.contract(a, matrix, True, i == len(plan) - 1)
        spectrum = chain.finish(element_type(op.result))
        if users is None:
            rewriter.replace_op(op, [spectrum])
            return None
        compact = list(shape_of(spectrum))
        for u, (start, limit, strides) in zip(users, remapped):
            if start == [0] * len(compact) and limit == compact and strides == [1] * len(compact):
                out = spectrum
            else:
                out = emit("stablehlo.slice", [spectrum], u.result.type,
                           {"start_indices": i64_array(start), "limit_indices": i64_array(limit),
                            "strides": i64_array(strides)}, u.location)
            rewriter.replace_op(u, [out])
    rewriter.erase_op(op)


def _worth_it(kind, shape, axes, lengths, plan, pairs_in, zero_filled_bytes) -> bool:
    model = cost_model() or CPU
    batch = math.prod(n for i, n in enumerate(shape) if i not in axes)
    if any(n_in * n_out * 4 > MAX_MATRIX for _, n_in, n_out, _ in plan):
        return False
    dft = model.dft_cost(_flops(shape, pairs_in, plan))
    return model.prefers_partial_dft(model.fft_cost(kind, batch, lengths, zero_filled_bytes), dft)


# ---------------------------------------------------------------- inverse: FFTs of zero-filled spectra

class _Support:
    """A value that is zero outside ``positions[axis]`` on the transformed axes, and the op tree
    building its nonzero part (``build(loc)``: the compact value, len(positions[axis]) long)."""

    def __init__(self, positions, build):
        self.positions, self.build = positions, build


ZERO = _Support(None, None)


def _support(value, axes):
    """The nonzero part of ``value`` (through zero pads and concatenates with zero blocks)."""
    s = _support_of(value, axes)
    return ZERO if s is not ZERO and any(not s.positions[a] for a in axes) else s


def _support_of(value, axes):
    if is_zero(value):
        return ZERO
    shape = shape_of(value)
    leaf = _Support({a: list(range(shape[a])) for a in axes}, lambda loc: value)
    owner = producer(value)
    if owner is None:
        return leaf
    if owner.name == "stablehlo.pad":
        return _pad_support(owner, axes) or leaf
    if owner.name == "stablehlo.concatenate":
        return _concat_support(owner, axes) or leaf
    if owner.name == "stablehlo.scatter":
        return _scatter_support(owner, axes) or leaf
    return leaf


def _pad_support(pad, axes):
    v = scalar_constant(pad.operands[1])
    if v is None or v != 0:
        return None
    low, high, interior = ints(pad, "edge_padding_low"), ints(pad, "edge_padding_high"), ints(pad, "interior_padding")
    for d, (lo, hi, it) in enumerate(zip(low, high, interior)):
        if d not in axes and (lo or hi or it):
            return None
        if lo < 0 or hi < 0:
            return None
    inner = _support(pad.operands[0], axes)
    if inner is ZERO:
        return ZERO
    positions = {a: [low[a] + p * (interior[a] + 1) for p in inner.positions[a]] for a in axes}
    return _Support(positions, inner.build)


def _concat_support(cat, axes):
    d = ir.IntegerAttr(cat.attributes["dimension"]).value
    if d not in axes:
        return None
    parts, offset, positions = [], 0, []
    others = None
    for operand in cat.operands:
        s = _support(operand, axes)
        if s is not ZERO:
            rest = {a: s.positions[a] for a in axes if a != d}
            if others is not None and rest != others:
                return None
            others = rest
            positions += [offset + p for p in s.positions[d]]
            parts.append(s)
        offset += shape_of(operand)[d]
    if not parts:
        return ZERO
    if len(parts) == 1:
        build = parts[0].build
    else:
        def build(loc, parts=parts):
            values = [p.build(loc) for p in parts]
            shape = list(shape_of(values[0]))
            shape[d] = sum(shape_of(v)[d] for v in values)
            return emit("stablehlo.concatenate", values, tensor(shape, element_type(values[0])),
                        {"dimension": _i64(d)}, loc)
    return _Support({**others, d: positions}, build)


def _set_window(op):
    """(base, start) when scatter ``op`` sets one whole update window (updates of the operand's rank)
    at constant indices, inside the operand: jax's ``x.at[a:b, c:d].set(u)``. Else None."""
    if len(op.operands) != 3 or scatter_body_name(op) != "set":
        return None
    dims = stablehlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
    base, indices, update = op.operands
    rank = len(shape_of(base))
    if (list(dims.update_window_dims) != list(range(rank)) or list(dims.inserted_window_dims)
            or list(dims.input_batching_dims) or dims.index_vector_dim != 0 or len(shape_of(update)) != rank):
        return None
    index = constant_value(indices)
    to_operand = list(dims.scattered_dims_to_operand_dims)
    if index is None or index.ndim != 1 or len(index) != len(to_operand):
        return None
    start = [0] * rank
    for k, o in enumerate(to_operand):
        start[o] = int(index[k])
    if any(b < 0 or b + u > n for b, u, n in zip(start, shape_of(update), shape_of(base))):
        return None
    return base, start


def _scatter_support(op, axes):
    """Windows set into a zero tensor (a chain of _set_window scatters; later ones win where they
    overlap): zero outside the union of the windows' positions per axis. The compact value is the
    same chain over a compact zero tensor, each window's start moved to its place there."""
    chain, value = [], op.result
    while not is_zero(value):
        s = producer(value, "stablehlo.scatter")
        found = _set_window(s) if s is not None else None
        if found is None:
            return None
        if 0 not in shape_of(s.operands[2]):  # (an empty window writes nothing)
            chain.append((s, found[1]))
        value = found[0]
    chain.reverse()
    shape, element = shape_of(op.result), element_type(op.result)
    positions = {a: sorted(set().union(*(range(b[a], b[a] + shape_of(s.operands[2])[a]) for s, b in chain)))
                 for a in axes}
    compact = tensor([len(positions[a]) if a in axes else n for a, n in enumerate(shape)], element)

    def build(loc):
        out = constant(np.zeros((), dtype_of(op.result)), compact, loc)
        for s, start in chain:
            moved = [positions[a].index(b) if a in axes else b for a, b in enumerate(start)]
            to_operand = stablehlo.ScatterDimensionNumbers(s.attributes["scatter_dimension_numbers"])
            index = [moved[o] for o in to_operand.scattered_dims_to_operand_dims]
            copy = s.operation.clone()
            copy.operands[0] = out
            copy.operands[1] = constant(np.asarray(index), s.operands[1].type, loc)
            copy.results[0].set_type(compact)
            out = copy.results[0]
        return out
    return _Support(positions, build)


def truncated_inverse_fft(op, rewriter):
    """ifft(zero-filled y, L) -> partial inverse DFT of y's nonzero modes (also irfft)

    Preconditions: an IFFT or IRFFT whose operand is, on the transformed axes, zero outside some
    modes, through pads with a zero padding value (no crops, no padding of batch axes) and
    concatenates along a transformed axis with all-zero (splat or broadcast) blocks; some mode is
    left out; the cost model prefers the partial DFT; matrices up to 2**22 elements. IRFFT keeps
    its semantics for any input: only the real part of the DC (and even-length Nyquist) bins
    counts. Finite math only.
    """
    kind = fft_type(op)
    if kind not in ("IFFT", "IRFFT"):
        return NO_MATCH
    axes, lengths = _fft_axes(op)
    y = op.operands[0]
    full = list(shape_of(y))
    s = _support(y, axes)
    if s is ZERO or all(len(s.positions[a]) == full[a] for a in axes):
        return NO_MATCH
    compact = [len(s.positions[a]) if a in axes else n for a, n in enumerate(full)]
    if 0 in compact:
        return NO_MATCH
    plan = [(a, len(s.positions[a]), lengths[i], kind == "IFFT" or i < len(axes) - 1) for i, a in enumerate(axes)]
    filled = math.prod(full) * dtype_of(y).itemsize
    if not _worth_it(kind, compact, axes, lengths, plan, True, filled):
        return NO_MATCH
    _mark_partial_dfts(op)
    with rewriter.ip:
        chain = _Chain(s.build(op.location), True, op.location)
        for i, (a, _, n, out_pair) in enumerate(plan):
            matrix = _inverse_matrix(out_pair, tuple(s.positions[a]), n, chain.dtype)
            chain.contract(a, matrix, out_pair, i == len(plan) - 1)
        out = chain.finish(element_type(op.result) if kind == "IFFT" else None)
    rewriter.replace_op(op, [out])


# ---------------------------------------------------------------- an FFT into a contraction

def _split_into_dot(op, axis):
    """The dot_general contracting ``op``'s result split as concatenate([real, imag], axis) (how a
    partial DFT takes a complex input) along that axis with dim 0 of a constant, and the constant;
    else (None, None)."""
    users = [u.owner for u in op.result.uses]
    if sorted(u.name for u in users) != ["stablehlo.imag", "stablehlo.real"] or not all(
            has_one_use(u.result) for u in users):
        return None, None
    cat = next(iter(users[0].result.uses)).owner
    re, im = sorted(users, key=lambda u: u.name != "stablehlo.real")
    if (cat.name != "stablehlo.concatenate" or list(cat.operands) != [re.result, im.result]
            or ir.IntegerAttr(cat.attributes["dimension"]).value != axis or not has_one_use(cat.result)):
        return None, None
    dot = next(iter(cat.result.uses)).owner
    if dot.name != "stablehlo.dot_general" or dot.operands[0] != cat.result:
        return None, None
    if read_dot_dimensions(dot) != ((), (), (axis,), (0,)):
        return None, None
    if dtype_of(dot.operands[1]) != dtype_of(cat.result) or str(element_type(cat.result)) not in ("f32", "f64"):
        return None, None
    matrix = constant_value(dot.operands[1], limit=MAX_MATRIX)
    return (dot, matrix) if matrix is not None else (None, None)


def _multiplies_complex(m) -> bool:
    """Whether matrix m ([re | im] input rows, a trailing (re, im) output axis) multiplies complex
    numbers: its im rows are its re rows turned by i."""
    half = m.shape[0] // 2
    return (m.ndim >= 2 and m.shape[-1] == 2 and m.shape[0] == 2 * half
            and np.array_equal(m[half:, ..., 0], -m[:half, ..., 1]) and np.array_equal(m[half:, ..., 1], m[:half, ..., 0]))


def partial_dft_of_fft(op, rewriter):
    """dot_general([re | im](fft(x, L)), M, axis a) -> dot_general([re | im](fft(x, L[1:])), D_a M, axis a)

    D_a is the DFT along a in the same real layout (for a one-axis RFFT: x itself, rows n, no split;
    a one-axis FFT or IFFT splits x itself), so the FFT loses its leading axis a or disappears.
    Preconditions: an FFT, IFFT or RFFT whose only users are real and imag, concatenated (re first)
    along a, the leading transformed axis, and contracted along a (no other dims) with dim 0 of a
    constant M, as truncated_inverse_fft's partial DFTs do; D_a M is computed in float64 and rounded
    once; matrices up to 2**22 elements. Finite math only (the sums are rounded differently).
    """
    kind = fft_type(op)
    if kind not in ("FFT", "IFFT", "RFFT"):
        return NO_MATCH
    axes, lengths = _fft_axes(op)
    a, n = axes[0], lengths[0]
    dot, matrix = _split_into_dot(op, a)
    if dot is None:
        return NO_MATCH
    k = shape_of(op.result)[a]
    if n * k * 4 > MAX_MATRIX or matrix.shape[0] != 2 * k or matrix.size // k * n > MAX_MATRIX:
        return NO_MATCH
    if kind == "RFFT" and len(axes) == 1:  # real x: rows n, columns [re | im] of the k bins
        theta = _angles(range(n), range(k), n, -1)
        d = np.concatenate([np.cos(theta), np.sin(theta)], 1)
    else:
        sign, scale = (1, 1.0 / n) if kind == "IFFT" else (-1, 1.0)
        c, s = scale * np.cos(_angles(range(n), range(n), n, sign)), scale * np.sin(_angles(range(n), range(n), n, sign))
        d = np.block([[c, s], [-s, c]])  # (re + i im) e^(i theta), rows [re | im] of x
    fused = (d @ matrix.reshape(2 * k, -1).astype(np.float64)).reshape((d.shape[0],) + matrix.shape[1:])
    if d.shape[0] == 2 * n and _multiplies_complex(matrix):  # (so is D_a M: keep that exact for the next one)
        fused[n:, ..., 0], fused[n:, ..., 1] = -fused[:n, ..., 1], fused[:n, ..., 0]
    rhs_type = dot.operands[1].type
    loc = dot.location
    with rewriter.ip:
        x = op.operands[0]
        if len(axes) > 1:
            rest = list(shape_of(op.result))
            rest[a] = n
            x = emit(FFT, [x], tensor(rest, element_type(op.result)),
                     {"fft_type": op.attributes["fft_type"], "fft_length": i64_array(lengths[1:])}, op.location)
        if kind != "RFFT" or len(axes) > 1:
            real = _real_of(element_type(x))
            parts = [emit(name, [x], tensor(shape_of(x), real), None, loc) for name in ("stablehlo.real", "stablehlo.imag")]
            doubled = list(shape_of(x))
            doubled[a] *= 2
            x = emit("stablehlo.concatenate", parts, tensor(doubled, real), {"dimension": _i64(a)}, loc)
        m = constant(fused.astype(dtype_of(dot.operands[1])), tensor(fused.shape, ir.RankedTensorType(rhs_type).element_type),
                     loc)
        attrs = {name: dot.attributes[name] for name in dot.attributes}
        out = emit("stablehlo.dot_general", [x, m], dot.result.type, attrs, loc)
    rewriter.replace_op(dot, [out])



def partial_dft_of_fft_across(op, rewriter):
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
    kind = fft_type(op)
    axes, lengths = _fft_axes(op)
    if kind not in ("FFT", "RFFT") or len(axes) != 1:
        return NO_MATCH
    a, n, rank = axes[0], lengths[0], len(shape_of(op.result))
    k = shape_of(op.result)[a]
    for b in range(rank):
        dot1, m1 = _split_into_dot(op, b) if b != a else (None, None)
        if dot1 is not None:
            break
    else:
        return NO_MATCH
    half = m1.shape[0] // 2
    if not _multiplies_complex(m1):
        return NO_MATCH
    if not has_one_use(dot1.result):
        return NO_MATCH
    dot2 = next(iter(dot1.result.uses)).owner
    pos = a if a < b else a - 1
    if (dot2.name != "stablehlo.dot_general" or dot2.operands[0] != dot1.result
            or read_dot_dimensions(dot2) != ((), (), (pos, len(shape_of(dot1.result)) - 1), (1, 0))):
        return NO_MATCH
    m2 = constant_value(dot2.operands[1], limit=MAX_MATRIX)
    if m2 is None or m2.shape[:2] != (2, k) or n * k * 4 > MAX_MATRIX or m2.size // k * n > MAX_MATRIX:
        return NO_MATCH
    d = _pair_to_pair(_angles(range(n), range(k), n, -1), 1.0)  # [p, n, k, q]
    fused = np.einsum("pnkq,qk...->pn...", d, m2.astype(np.float64))
    loc = dot2.location
    with rewriter.ip:
        x = op.operands[0]
        if kind == "RFFT":
            m1_type = tensor((half,) + m1.shape[1:], element_type(dot1.operands[1]))
            rhs1 = constant(np.ascontiguousarray(m1[:half]), m1_type, loc)
        else:
            real = _real_of(element_type(x))
            parts = [emit(name, [x], tensor(shape_of(x), real), None, loc) for name in ("stablehlo.real", "stablehlo.imag")]
            doubled = list(shape_of(x))
            doubled[b] *= 2
            x = emit("stablehlo.concatenate", parts, tensor(doubled, real), {"dimension": _i64(b)}, loc)
            rhs1 = dot1.operands[1]
        free = [n_ if i != a else n for i, n_ in enumerate(shape_of(op.result)) if i != b]
        attrs1 = {name: dot1.attributes[name] for name in dot1.attributes}
        y = emit("stablehlo.dot_general", [x, rhs1], tensor(free + list(m1.shape[1:]), element_type(dot1.result)),
                 attrs1, dot1.location)
        rhs2 = constant(fused.astype(dtype_of(dot2.operands[1])), tensor(fused.shape, element_type(dot2.operands[1])),
                        loc)
        attrs2 = {name: dot2.attributes[name] for name in dot2.attributes}
        out = emit("stablehlo.dot_general", [y, rhs2], dot2.result.type, attrs2, loc)
    rewriter.replace_op(dot2, [out])


PATTERNS = {
    "truncated_forward_fft": (stablehlo.FftOp, truncated_forward_fft),
    "truncated_inverse_fft": (stablehlo.FftOp, truncated_inverse_fft),
    "partial_dft_of_fft": (stablehlo.FftOp, partial_dft_of_fft),
    "partial_dft_of_fft_across": (stablehlo.FftOp, partial_dft_of_fft_across),
}
