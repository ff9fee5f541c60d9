"""``hloforge.numpy.fft``: numpy.fft over traced Tensors, lowered to ``stablehlo.fft``.

Semantics follow numpy 2: ``n``/``s`` crop or zero-pad the input, ``norm`` is one of
None/"backward"/"ortho"/"forward", integer and bool inputs compute in float64, float16
and bfloat16 in float32. The last axis of ``axes`` is the halved one of the real
transforms. Transforms over trailing, sorted axes are a single ``stablehlo.fft``;
other axes cost a transpose before and after, and transforms over more than three
axes are split into several ``stablehlo.fft`` ops (StableHLO allows at most three).

Deliberate differences from numpy 2: repeated axes raise ``ValueError`` (numpy transforms
the axis twice); an axis out of range raises ``numpy.exceptions.AxisError``; ``fftfreq``
with ``n < 1`` or ``d == 0`` raises ``ValueError``; bfloat16 inverse real transforms return
float32 (numpy with ml_dtypes returns float64); ``s`` without ``axes`` uses the last
``len(s)`` axes without numpy's deprecation warning. Transforms whose result is empty emit a
zero constant instead of ``stablehlo.fft`` (cuFFT rejects zero-size batches).
"""
from __future__ import annotations

import math
import operator

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy._base import asarray, astype, splat
from hloforge.frontend.numpy._math import conj
from hloforge.frontend.tracing import Tensor

_NORMS = (None, "backward", "ortho", "forward")
_HALF = (np.dtype(np.float16), dtypes.bfloat16)  # computed in float32
_MAX_FFT_DIMS = 3  # stablehlo.fft takes 1 to 3 fft_length entries


# ---------------------------------------------------------------- argument checks

def _check_norm(name, norm):
    if not (norm is None or isinstance(norm, str)) or norm not in _NORMS:
        raise ValueError(f'{name}: invalid norm {norm!r}; should be None, "backward", "ortho" or "forward"')


def _swap_norm(name, norm):
    """hfft/ihfft are irfft/rfft with the normalization applied in the other direction."""
    _check_norm(name, norm)
    return {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}[norm]


def _check_out(name, out):
    if out is not None:
        raise TypeError(f"{name}: out= is not supported for traced Tensors (got {type(out).__name__}); "
                        "use the returned Tensor")


def _axis(name, axis, ndim) -> int:
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{name}: axis must be an integer, got {axis!r}") from None
    if not -ndim <= a < ndim:
        raise np.exceptions.AxisError(f"{name}: axis {a} is out of bounds for array of dimension {ndim}")
    return a % ndim


def _length(name, n, axis) -> int:
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{name}: n or s for axis {axis} must be an integer, got {n!r}") from None
    if n < 1:
        raise ValueError(f"{name}: invalid number of FFT data points ({n}) specified for axis {axis}; "
                         "it must be >= 1")
    return n


def _cook(name, x, s, axes, c2r):
    """numpy's ``_cook_nd_args``: the transform lengths and axes (non-negative), validated."""
    if s is not None:
        if not isinstance(s, (tuple, list, np.ndarray)):
            raise TypeError(f"{name}: s must be a sequence of ints, got {s!r}")
        s = list(s)
    if axes is None:
        axes = tuple(range(x.ndim)) if s is None else tuple(range(-len(s), 0))
    elif isinstance(axes, (tuple, list, np.ndarray)):
        axes = tuple(axes)
    else:
        raise TypeError(f"{name}: axes must be a sequence of ints, got {axes!r}")
    norm_axes = tuple(_axis(name, a, x.ndim) for a in axes)
    if len(set(norm_axes)) != len(norm_axes):
        raise ValueError(f"{name}: axes {axes} repeat an axis")
    if s is None:
        s = [x.shape[a] for a in norm_axes]
        if c2r and s:
            s[-1] = 2 * (s[-1] - 1)
    else:
        if len(s) != len(norm_axes):
            raise ValueError(f"{name}: s {tuple(s)} and axes {axes} have different lengths")
        # numpy 2: -1 (and the deprecated None) use the input's length along that axis
        s = [x.shape[a] if v is None or (not isinstance(v, bool) and v == -1) else v
             for v, a in zip(s, norm_axes)]
    s = [_length(name, v, a) for v, a in zip(s, norm_axes)]
    return s, norm_axes


# ---------------------------------------------------------------- lowering

def _fit(x, axes, sizes):
    """Crop (stablehlo.slice) or zero-pad (stablehlo.pad) ``x`` to ``sizes`` along ``axes``."""
    target = list(x.shape)
    for a, n in zip(axes, sizes):
        target[a] = n
    if any(t < d for t, d in zip(target, x.shape)):
        x = ops.slice(x, (0,) * x.ndim, [min(t, d) for t, d in zip(target, x.shape)])
    if any(t > d for t, d in zip(target, x.shape)):
        high = [t - d for t, d in zip(target, x.shape)]
        x = ops.pad(x, np.zeros((), x.dtype), (0,) * x.ndim, high)
    return x


def _groups(kind, axes):
    """Split the transform into (fft_type, axes) steps of at most three axes each, in order.

    Complex transforms are separable and commute, so their axes are sorted and chunked from
    the back (trailing axes need no transpose). Real ones keep the halved axis, ``axes[-1]``,
    last: RFFT over it (and up to two more) first, then FFTs; IFFTs first, then IRFFT.
    """
    if kind in ("FFT", "IFFT"):
        order = sorted(axes)
    else:
        order = sorted(axes[:-1]) + [axes[-1]]
    chunks = [tuple(order[max(0, i - _MAX_FFT_DIMS):i]) for i in range(len(order), 0, -_MAX_FFT_DIMS)]
    if kind in ("FFT", "IFFT"):
        return [(kind, c) for c in chunks]
    if kind == "RFFT":
        return [("RFFT", chunks[0])] + [("FFT", c) for c in chunks[1:]]
    return [("IFFT", c) for c in reversed(chunks[1:])] + [("IRFFT", chunks[0])]


def _transform(x, kind, axes, lengths):
    """Emit the stablehlo.fft ops (and transposes only where axes are not trailing)."""
    length_of = dict(zip(axes, lengths))
    order = list(range(x.ndim))  # order[i]: the original axis now at position i
    for fft_type, group in _groups(kind, axes):
        if fft_type in ("FFT", "IFFT"):  # any order works; keep the current one
            group = sorted(group, key=order.index)
        else:  # the halved axis must come last; the others keep their current order
            group = sorted(group[:-1], key=order.index) + [group[-1]]
        want = [a for a in order if a not in group] + list(group)
        if want != order:
            x = ops.transpose(x, [order.index(a) for a in want])
            order = want
        x = ops.fft(x, fft_type, [length_of[a] for a in group])
    if order != sorted(order):
        x = ops.transpose(x, [order.index(a) for a in range(x.ndim)])
    return x


def _scale(norm, count, inverse) -> float:
    """The factor numpy applies on top of stablehlo.fft (whose inverses already divide by N)."""
    if norm is None or norm == "backward":
        return 1.0
    if norm == "ortho":
        return math.sqrt(count) if inverse else 1.0 / math.sqrt(count)
    return float(count) if inverse else 1.0 / count


def _compute_dtype(name, dtype, kind) -> np.dtype:
    """The dtype the transform consumes: numpy 2 computes ints/bools in float64, halves in float32."""
    if dtypes.is_complex(dtype):
        if kind == "RFFT":
            raise TypeError(f"{name}: input dtype {dtype} is complex; {name} needs real input")
        return dtype
    real = (np.dtype(np.float32) if dtype in _HALF or dtype == np.float32
            else np.dtype(np.float64))
    return real if kind == "RFFT" else dtypes.complex_dtype(real)


def _fftnd(name, kind, a, s, axes, norm, out, src_dtype=None):
    """The whole pipeline: validate, convert, crop/pad, transform, normalize.

    ``kind`` is "FFT", "IFFT", "RFFT" or "IRFFT"; ``src_dtype`` overrides the dtype that
    decides the result dtype (hfft passes the dtype it was given).
    """
    _check_out(name, out)
    _check_norm(name, norm)
    x = asarray(a)
    src = x.dtype if src_dtype is None else src_dtype
    lengths, axes = _cook(name, x, s, axes, kind == "IRFFT")
    compute = _compute_dtype(name, x.dtype, kind)
    if not axes:
        if kind in ("RFFT", "IRFFT"):
            raise ValueError(f"{name}: needs at least one axis, got axes ()")
        return x  # numpy returns the input as is
    if kind == "IRFFT":
        in_sizes = lengths[:-1] + [lengths[-1] // 2 + 1]
        out_dtype = dtypes.real_dtype(compute)
        if len(axes) == 1 and src == np.float16:
            out_dtype = src  # numpy: irfft/hfft of float16 give float16 (irfftn over 2+ axes: float32)
    else:
        in_sizes = lengths
        out_dtype = dtypes.complex_dtype(compute)
    out_shape = list(x.shape)
    for ax, n in zip(axes, lengths):
        out_shape[ax] = n // 2 + 1 if kind == "RFFT" and ax == axes[-1] else n
    if math.prod(out_shape) == 0:
        # A zero-size batch dimension: the result is empty. cuFFT (XLA:GPU) cannot plan a
        # transform over zero batches, so emit the (empty) constant instead of stablehlo.fft.
        return splat(0, out_dtype, out_shape)
    x = astype(_fit(x, axes, in_sizes), compute)
    y = _transform(x, kind, axes, lengths)
    scale = _scale(norm, math.prod(lengths), inverse=kind in ("IFFT", "IRFFT"))
    if scale != 1.0:
        y = ops.multiply(y, splat(scale, y.dtype, y.shape))
    return astype(y, out_dtype)


def _one_axis(n, axis):
    return (None if n is None else (n,)), (axis,)


# ---------------------------------------------------------------- 1-D transforms

def fft(a, n=None, axis=-1, norm=None, out=None):
    """numpy.fft.fft: the 1-D discrete Fourier transform. Emits ``stablehlo.fft`` (FFT).

    Args:
      a: Tensor or array-like; real inputs are converted to complex.
      n: transform length; the input is cropped or zero-padded to it (default: its length).
      axis: the axis to transform (default the last).
      norm: None/"backward" (no scaling), "ortho" (1/sqrt(n)) or "forward" (1/n).
      out: must be None (Tensors are immutable).
    Returns:
      complex64 (float32/float16/complex64 input) or complex128 Tensor.
    Example:
      >>> y = hnp.fft.fft(x, n=64)
    """
    return _fftnd("fft", "FFT", a, *_one_axis(n, axis), norm, out)


def ifft(a, n=None, axis=-1, norm=None, out=None):
    """numpy.fft.ifft: the 1-D inverse DFT (1/n by default). Emits ``stablehlo.fft`` (IFFT).

    Args:
      a: Tensor or array-like.
      n: transform length; the input is cropped or zero-padded to it.
      axis: the axis to transform.
      norm: None/"backward" (1/n), "ortho" (1/sqrt(n)) or "forward" (no scaling).
      out: must be None.
    Returns:
      complex Tensor.
    Example:
      >>> x = hnp.fft.ifft(hnp.fft.fft(x))
    """
    return _fftnd("ifft", "IFFT", a, *_one_axis(n, axis), norm, out)


def rfft(a, n=None, axis=-1, norm=None, out=None):
    """numpy.fft.rfft: the DFT of real input, ``n // 2 + 1`` outputs. Emits ``stablehlo.fft`` (RFFT).

    Args:
      a: real Tensor or array-like (complex input raises TypeError).
      n: transform length; the input is cropped or zero-padded to it.
      axis: the axis to transform.
      norm: as in :func:`fft`.
      out: must be None.
    Returns:
      complex Tensor; ``axis`` has length ``n // 2 + 1``.
    Example:
      >>> y = hnp.fft.rfft(x)  # (..., 64) float32 -> (..., 33) complex64
    """
    return _fftnd("rfft", "RFFT", a, *_one_axis(n, axis), norm, out)


def irfft(a, n=None, axis=-1, norm=None, out=None):
    """numpy.fft.irfft: inverse of :func:`rfft`. Emits ``stablehlo.fft`` (IRFFT).

    Args:
      a: Tensor holding the non-negative frequency terms.
      n: output length (default ``2 * (m - 1)`` for input length m); the input is cropped or
        zero-padded to ``n // 2 + 1``.
      axis: the axis to transform.
      norm: as in :func:`ifft`.
      out: must be None.
    Returns:
      real Tensor (float32 for complex64 input, float16 for float16, else float64).
    Example:
      >>> x = hnp.fft.irfft(hnp.fft.rfft(x), n=x.shape[-1])
    """
    return _fftnd("irfft", "IRFFT", a, *_one_axis(n, axis), norm, out)


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """numpy.fft.hfft: the DFT of a Hermitian-symmetric signal given by its first half, a real
    spectrum: ``irfft(conj(a), n)`` with the normalization direction swapped. Emits
    ``stablehlo.fft`` (IRFFT).

    Args:
      a: Tensor, the first ``n // 2 + 1`` samples.
      n: output length (default ``2 * (m - 1)``).
      axis: the axis to transform.
      norm: as in :func:`fft`.
      out: must be None.
    Returns:
      real Tensor.
    Example:
      >>> y = hnp.fft.hfft(x, n=16)
    """
    new_norm = _swap_norm("hfft", norm)
    x = asarray(a)
    return _fftnd("hfft", "IRFFT", conj(x), *_one_axis(n, axis), new_norm, out, src_dtype=x.dtype)


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """numpy.fft.ihfft: inverse of :func:`hfft`, ``conj(rfft(a, n))`` with the normalization
    direction swapped. Emits ``stablehlo.fft`` (RFFT).

    Args:
      a: real Tensor (complex input raises TypeError).
      n: transform length; the input is cropped or zero-padded to it.
      axis: the axis to transform.
      norm: as in :func:`ifft`.
      out: must be None.
    Returns:
      complex Tensor; ``axis`` has length ``n // 2 + 1``.
    Example:
      >>> z = hnp.fft.ihfft(x)
    """
    return conj(_fftnd("ihfft", "RFFT", a, *_one_axis(n, axis), _swap_norm("ihfft", norm), out))


# ---------------------------------------------------------------- N-D transforms

def fftn(a, s=None, axes=None, norm=None, out=None):
    """numpy.fft.fftn: the N-D DFT. Emits one ``stablehlo.fft`` (FFT) per group of <= 3 axes,
    and ``stablehlo.transpose`` only when the axes are not trailing.

    Args:
      a: Tensor or array-like.
      s: lengths per transformed axis (crop or zero-pad; -1 keeps an axis' length).
      axes: axes to transform, any order, negatives allowed (default all, or the last len(s)).
      norm: None/"backward", "ortho" or "forward".
      out: must be None.
    Returns:
      complex Tensor.
    Example:
      >>> y = hnp.fft.fftn(x, axes=(0, 2))
    """
    return _fftnd("fftn", "FFT", a, s, axes, norm, out)


def ifftn(a, s=None, axes=None, norm=None, out=None):
    """numpy.fft.ifftn: the N-D inverse DFT. Emits ``stablehlo.fft`` (IFFT), <= 3 axes per op.

    Args:
      a: Tensor or array-like.
      s: lengths per transformed axis (crop or zero-pad).
      axes: axes to transform (default all, or the last len(s)).
      norm: None/"backward", "ortho" or "forward".
      out: must be None.
    Returns:
      complex Tensor.
    Example:
      >>> x = hnp.fft.ifftn(hnp.fft.fftn(x))
    """
    return _fftnd("ifftn", "IFFT", a, s, axes, norm, out)


def rfftn(a, s=None, axes=None, norm=None, out=None):
    """numpy.fft.rfftn: the N-D DFT of real input; the last of ``axes`` is halved.
    Emits ``stablehlo.fft`` RFFT over it and up to two more axes, then FFT for the rest.

    Args:
      a: real Tensor or array-like.
      s: lengths per transformed axis (crop or zero-pad).
      axes: axes to transform (default all, or the last len(s)); order decides the halved axis.
      norm: None/"backward", "ortho" or "forward".
      out: must be None.
    Returns:
      complex Tensor; ``axes[-1]`` has length ``s[-1] // 2 + 1``.
    Example:
      >>> y = hnp.fft.rfftn(x, axes=(2, 0))  # axis 0 is halved
    """
    return _fftnd("rfftn", "RFFT", a, s, axes, norm, out)


def irfftn(a, s=None, axes=None, norm=None, out=None):
    """numpy.fft.irfftn: inverse of :func:`rfftn`. Emits ``stablehlo.fft`` IFFT for all but the
    last three axes, then IRFFT over the last of ``axes`` and up to two more.

    Args:
      a: Tensor.
      s: output lengths per axis (default: input lengths, ``2 * (m - 1)`` along ``axes[-1]``).
      axes: axes to transform (default all, or the last len(s)).
      norm: None/"backward", "ortho" or "forward".
      out: must be None.
    Returns:
      real Tensor.
    Example:
      >>> x = hnp.fft.irfftn(hnp.fft.rfftn(x), s=x.shape)
    """
    return _fftnd("irfftn", "IRFFT", a, s, axes, norm, out)


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """numpy.fft.fft2: :func:`fftn` over the last two axes by default. Emits ``stablehlo.fft``.

    Example:
      >>> y = hnp.fft.fft2(image)
    """
    return _fftnd("fft2", "FFT", a, s, axes, norm, out)


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """numpy.fft.ifft2: :func:`ifftn` over the last two axes by default. Emits ``stablehlo.fft``.

    Example:
      >>> image = hnp.fft.ifft2(hnp.fft.fft2(image))
    """
    return _fftnd("ifft2", "IFFT", a, s, axes, norm, out)


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """numpy.fft.rfft2: :func:`rfftn` over the last two axes by default. Emits ``stablehlo.fft``.

    Example:
      >>> y = hnp.fft.rfft2(image)  # (h, w) -> (h, w // 2 + 1)
    """
    return _fftnd("rfft2", "RFFT", a, s, axes, norm, out)


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """numpy.fft.irfft2: :func:`irfftn` over the last two axes by default. Emits ``stablehlo.fft``.

    Example:
      >>> image = hnp.fft.irfft2(hnp.fft.rfft2(image), s=image.shape)
    """
    return _fftnd("irfft2", "IRFFT", a, s, axes, norm, out)


# ---------------------------------------------------------------- helpers

def _freq(name, fn, n, d, dtype=None):
    try:
        n = operator.index(n)
    except TypeError:
        raise ValueError(f"{name}: n should be an integer, got {n!r}") from None
    if n < 1:
        raise ValueError(f"{name}: n must be >= 1, got {n}")
    if isinstance(d, Tensor) or np.ndim(d) != 0:
        raise TypeError(f"{name}: d must be a Python or numpy scalar, got {d!r}")
    if d == 0:
        raise ValueError(f"{name}: sample spacing d must be nonzero, got {d!r}")
    values = fn(n, d)
    if dtype is not None:
        dtype = dtypes.canonical(dtype)
        if not dtypes.is_float(dtype):
            raise ValueError(f"hloforge.numpy.fft.{name}: dtype must be a real floating dtype, got {dtype}")
        values = values.astype(dtype)
    return ops.constant(values, dtypes.canonical(values.dtype))


def fftfreq(n, d=1.0, device=None, *, dtype=None):
    """numpy.fft.fftfreq: the sample frequencies ``[0, 1, ..., -1] / (d * n)``, as a constant.
    Emits one ``stablehlo.constant`` (float64, like numpy).

    Args:
      n: window length (int >= 1).
      d: sample spacing (a Python or numpy scalar; not a traced Tensor).
      device: accepted for numpy compatibility and ignored.
      dtype: the result's real floating dtype (the array API's; default float64, as numpy).
    Returns:
      float64 (or ``dtype``) Tensor of shape (n,).
    Example:
      >>> f = hnp.fft.fftfreq(8, d=0.1)
    """
    return _freq("fftfreq", np.fft.fftfreq, n, d, dtype)


def rfftfreq(n, d=1.0, device=None, *, dtype=None):
    """numpy.fft.rfftfreq: the non-negative sample frequencies ``[0, ..., n // 2] / (d * n)``,
    the frequencies of :func:`rfft`. Emits one ``stablehlo.constant`` (float64).

    Args:
      n: window length (int >= 1).
      d: sample spacing (a Python or numpy scalar).
      device: accepted for numpy compatibility and ignored.
      dtype: the result's real floating dtype (the array API's; default float64, as numpy).
    Returns:
      float64 (or ``dtype``) Tensor of shape (n // 2 + 1,).
    Example:
      >>> f = hnp.fft.rfftfreq(8)
    """
    return _freq("rfftfreq", np.fft.rfftfreq, n, d, dtype)


def _roll(name, x, axes, sign):
    x = asarray(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif not isinstance(axes, (tuple, list)):
        axes = (axes,)
    shift = [0] * x.ndim
    for a in axes:  # like numpy.roll, a repeated axis shifts again
        a = _axis(name, a, x.ndim)
        shift[a] += sign * (x.shape[a] // 2)
    for a, k in enumerate(shift):
        n = x.shape[a]
        k = k % n if n else 0
        if k == 0:
            continue
        start, limit = [0] * x.ndim, list(x.shape)
        start[a] = limit[a] = n - k
        tail = ops.slice(x, start, x.shape)  # the last k entries move to the front
        head = ops.slice(x, [0] * x.ndim, limit)
        x = ops.concatenate([tail, head], a)
    return x


def fftshift(x, axes=None):
    """numpy.fft.fftshift: move the zero-frequency term to the centre (roll by ``n // 2``).
    Emits two ``stablehlo.slice`` and a ``stablehlo.concatenate`` per shifted axis.

    Args:
      x: Tensor or array-like.
      axes: int or sequence of ints (default all axes).
    Returns:
      Tensor of x's shape and dtype.
    Example:
      >>> centred = hnp.fft.fftshift(hnp.fft.fftfreq(8))
    """
    return _roll("fftshift", x, axes, 1)


def ifftshift(x, axes=None):
    """numpy.fft.ifftshift: inverse of :func:`fftshift` (roll by ``-(n // 2)``).
    Emits two ``stablehlo.slice`` and a ``stablehlo.concatenate`` per shifted axis.

    Args:
      x: Tensor or array-like.
      axes: int or sequence of ints (default all axes).
    Returns:
      Tensor of x's shape and dtype.
    Example:
      >>> x = hnp.fft.ifftshift(hnp.fft.fftshift(x))
    """
    return _roll("ifftshift", x, axes, -1)


__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
