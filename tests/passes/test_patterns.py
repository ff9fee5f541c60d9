"""hloforge.passes: every pattern fires where it should, not where it must not, and keeps outputs."""
from __future__ import annotations

import collections

import numpy as np
import pytest
from helpers import RTOL, assert_close, random
from hypothesis import given, settings
from hypothesis import strategies as st

import hloforge as hf
from hloforge import numpy as hnp
from hloforge import ops
from hloforge.frontend.context import ir, stablehlo
from hloforge.passes import fft as fft_passes
from hloforge.passes import pad as pad_passes
from hloforge.passes.pad_push import ARITH_PATTERNS
from hloforge.passes import patterns
from hloforge.passes import dot_layout, spec_semantics

F32, F64, C64, I32 = np.float32, np.float64, np.complex64, np.int32


def sd(shape, dtype=F32):
    return hf.ShapeDtype(shape, dtype)


def outputs(m, args):
    return [np.asarray(o) for o in m.compile().call_flat(args)]


def assert_same(got, want):
    """assert_close, with a tolerance scaled by the largest finite |value| (NaN and Inf must match)."""
    got, want = np.asarray(got), np.asarray(want)
    rtol = RTOL.get(want.dtype)
    if rtol is None:
        return assert_close(got, want)
    size = np.abs(want.astype(np.complex128))
    scale = np.max(size[np.isfinite(size)], initial=1.0)
    assert_close(got, want, rtol=rtol, atol=rtol * scale)


def optimize_checked(m, pipeline="default", finite_math=True, seed=0, run=True):
    """Optimize ``m`` in place; assert it computes what it computed before on random inputs."""
    if not run:
        return m.optimize(pipeline, finite_math=finite_math)
    args = [random(s.shape, s.dtype, seed + i) for i, s in enumerate(m.signature[0])]
    before = outputs(m, args)
    report = m.optimize(pipeline, finite_math=finite_math)
    for got, want in zip(outputs(m, args), before):
        assert_same(got, want)
    return report


# run=False: only the IR is checked
Case = collections.namedtuple("Case", "pattern fires why fn specs finite_math absent present run",
                              defaults=(True, (), (), True))


def const(value, dtype=F32):
    return ops.constant(np.asarray(value, dtype))


def pad1(x, lo, hi, value=0.0, interior=0):
    return ops.pad(x, value, (lo,), (hi,), (interior,))


def _pad_of_pad(l1, h1, l2, h2, v1=0.0, v2=0.0):
    return lambda x: ops.pad(ops.pad(x, v1, l1, h1), v2, l2, h2)


def _converted_zero(x):
    zero = ops.convert(const(0, I32), F32)
    return ops.pad(ops.pad(x, zero, (1, 0), (0, 2)), 0.0, (0, 1), (1, 1))


def _scaled_irfft(scale):
    return lambda x, s: ops.fft(scale(ops.fft(x, "RFFT", (8,)), s), "IRFFT", (8,))


def _reduce_bf16(x):
    c = ops.reduce(ops.constant(np.array([256, 1, 1], hf.bfloat16)), 0.0, (0,), "add")
    return x + ops.convert(c, F32)


PAD_CASES = [
    Case("noop_pad", True, "all paddings are 0", lambda x: pad1(x, 0, 0), [sd((5,))], absent=["stablehlo.pad"]),
    Case("noop_pad", False, "pads one element", lambda x: pad1(x, 1, 0), [sd((5,))]),
    Case("pad_of_empty", True, "the operand has no elements",
         lambda x: ops.pad(x, 2.0, (1, 0), (1, 0)), [sd((0, 3))], present=["stablehlo.broadcast_in_dim"]),
    Case("pad_of_empty", False, "the operand has elements", lambda x: pad1(x, 1, 1), [sd((4,))]),
    Case("pad_of_splat", True, "splat 2 padded with 2",
         lambda x: x + pad1(const(np.full(3, 2.0)), 1, 1, 2.0), [sd((5,))], absent=["stablehlo.pad"]),
    Case("pad_of_splat", False, "the pad value 0 differs from the splat's 2",
         lambda x: x + pad1(const(np.full(3, 2.0)), 1, 1, 0.0), [sd((5,))]),
    Case("pad_of_constant", True, "small constant",
         lambda x: x + pad1(const([1, 2, 3]), 1, 2, -1.0, 1), [sd((8,))], absent=["stablehlo.pad"]),
    Case("pad_of_constant", False, "the result has more than 1024 elements",
         lambda x: x + pad1(const(np.arange(10)), 0, 1990), [sd((2000,))]),
    Case("pad_of_pad", True, "equal values, no crops", _pad_of_pad((1, 0), (0, 2), (2, 1), (1, 0)), [sd((3, 4))],
         present=[("stablehlo.pad", 1)]),
    Case("pad_of_pad", True, "an outer crop may eat into x", _pad_of_pad((1,), (0,), (-3,), (2,)), [sd((5,))]),
    Case("pad_of_pad", True, "two crops add up", _pad_of_pad((-1,), (-1,), (-1,), (0,)), [sd((5,))]),
    Case("pad_of_pad", True, "equal constants through a convert", _converted_zero, [sd((3, 4))],
         present=[("stablehlo.pad", 1)]),
    Case("pad_of_pad", False, "the pad values 0 and 1 differ", _pad_of_pad((1,), (0,), (1,), (0,), 0.0, 1.0),
         [sd((4,))]),
    Case("pad_of_pad", False, "inner crop then outer pad: x[0] would come back instead of the pad value",
         _pad_of_pad((-1,), (0,), (1,), (0,)), [sd((4,))]),
    Case("pad_of_pad", False, "interior padding", lambda x: pad1(pad1(x, 1, 0, interior=1), 1, 0), [sd((4,))]),
    Case("negative_pad", True, "only crops: a slice", lambda x: ops.pad(x, 0.0, (-1, 0), (0, -2)), [sd((4, 5))],
         absent=["stablehlo.pad"], present=["stablehlo.slice"]),
    Case("negative_pad", True, "mixed signs: pad of a slice", lambda x: ops.pad(x, 0.0, (-1, 2), (1, -1)),
         [sd((4, 5))], present=["stablehlo.slice", "stablehlo.pad"]),
    Case("negative_pad", True, "regression: a crop past x with padding on the other side (pad(x: 2, -3, 2))",
         lambda x: pad1(x, -3, 2, 1.5), [sd((2,))], absent=["stablehlo.pad", "stablehlo.slice"]),
    Case("negative_pad", True, "a high crop past x with low padding, and a crop into x on dim 1",
         lambda x: ops.pad(x, 2.0, (2, -1), (-3, 1)), [sd((2, 3))]),
    Case("negative_pad", True, "a crop past x leaving padding, next to an interior-padded dim",
         lambda x: ops.pad(x, 1.0, (-4, 1), (3, 0), (0, 1)), [sd((2, 3))]),
    Case("negative_pad", False, "no negative padding", lambda x: pad1(x, 1, 2), [sd((4,))]),
    Case("negative_pad", False, "interior padding on a cropped dim", lambda x: pad1(x, -1, 0, interior=1),
         [sd((4,))]),
    Case("slice_of_pad", True, "slice inside x", lambda x: ops.slice(pad1(x, 2, 3), (2,), (7,)), [sd((5,))],
         absent=["stablehlo.pad", "stablehlo.slice"]),
    Case("slice_of_pad", True, "slice across the border",
         lambda x: ops.slice(ops.pad(x, 1.0, (2, 0), (3, 0)), (1, 0), (6, 4), (1, 2)), [sd((5, 4))],
         present=["stablehlo.pad"]),
    Case("slice_of_pad", True, "slice wholly in the padding", lambda x: ops.slice(pad1(x, 2, 3, 4.0), (7,), (9,)),
         [sd((5,))], absent=["stablehlo.pad"], present=["stablehlo.broadcast_in_dim"]),
    Case("slice_of_pad", True, "through a crop", lambda x: ops.slice(pad1(x, -2, 3), (1,), (5,)), [sd((5,))]),
    Case("slice_of_pad", False, "the pad has another user and the slice still needs padding",
         lambda x: (lambda p: (ops.slice(p, (1,), (7,)), p))(pad1(x, 2, 3)), [sd((5,))],
         present=[("stablehlo.pad", 1)]),
    Case("slice_of_pad", True, "the pad has another user but the slice lies inside x",
         lambda x: (lambda p: (ops.slice(p, (3,), (6,)), p))(pad1(x, 2, 3)), [sd((5,))],
         present=[("stablehlo.pad", 1)]),
    Case("slice_of_pad", False, "stride 2 on a padded dim", lambda x: ops.slice(pad1(x, 2, 3), (0,), (9,), (2,)),
         [sd((5,))]),
    Case("slice_of_pad", False, "interior padding", lambda x: ops.slice(pad1(x, 0, 0, interior=1), (0,), (3,)),
         [sd((5,))]),
    Case("unary_of_pad", True, "exp of a pad", lambda x: ops.exp(pad1(x, 1, 2, 1.0)), [sd((5,))]),
    Case("unary_of_pad", True, "convert of a pad", lambda x: ops.convert(pad1(x, 1, 2, 2.5), I32), [sd((5,))]),
    Case("unary_of_pad", True, "abs of a complex pad", lambda x: ops.abs(pad1(x, 1, 0, -2j)), [sd((3,), C64)]),
    Case("unary_of_pad", False, "the pad has another user",
         lambda x: (lambda p: (ops.sin(p), p))(pad1(x, 1, 1)), [sd((5,))]),
    Case("pads_of_windows", True, "central difference: two shifts of x become slices of one pad",
         lambda x: pad1(ops.slice(x, (1,), (11,)), 0, 1) - pad1(ops.slice(x, (0,), (10,)), 1, 0), [sd((11,))],
         present=[("stablehlo.pad", 1), ("stablehlo.slice", 2)]),
    Case("pads_of_windows", True, "a pad of x itself and a shift on dim 1, with a common row border",
         lambda x: (ops.pad(x, 2.0, (1, 0), (0, 2)), ops.pad(ops.slice(x, (0, 1), (3, 4)), 2.0, (1, 0), (0, 2))),
         [sd((3, 4))], present=[("stablehlo.pad", 1), ("stablehlo.slice", 1)]),
    Case("pads_of_windows", False, "the slice does not reach x's edge on its padded side",
         lambda x: pad1(ops.slice(x, (1,), (10,)), 0, 2) - pad1(ops.slice(x, (0,), (10,)), 1, 0), [sd((11,))]),
    Case("pads_of_windows", False, "the padding values differ",
         lambda x: pad1(ops.slice(x, (1,), (5,)), 0, 1, 1.0) - pad1(ops.slice(x, (0,), (4,)), 1, 0), [sd((5,))]),
    Case("pads_of_windows", False, "two pads of x itself: one pad and two slices would be one op more",
         lambda x: pad1(x, 0, 1) * pad1(x, 1, 0), [sd((5,))], present=[("stablehlo.pad", 2)]),
]

FOLD_CASES = [
    Case("elementwise_of_constants", True, "sqrt of a constant", lambda x: x + ops.sqrt(const([1, 2, 3])),
         [sd((3,))], absent=["stablehlo.sqrt"]),
    Case("elementwise_of_constants", True, "integer divide truncates",
         lambda x: x + ops.divide(const([-7, 7, -7], I32), const([2, -2, -2], I32)), [sd((3,), I32)],
         absent=["stablehlo.divide"]),
    Case("elementwise_of_constants", True, "remainder takes the dividend's sign",
         lambda x: x + ops.remainder(const([-7, 7, -7], I32), const([2, -2, -2], I32)), [sd((3,), I32)],
         absent=["stablehlo.remainder"]),
    Case("elementwise_of_constants", True, "bfloat16 add",
         lambda x: x + ops.add(ops.constant(np.array([1.5, 3], hf.bfloat16)), ops.constant(np.array([0.25, 1],
                                                                                                  hf.bfloat16))),
         [sd((2,), hf.bfloat16)], present=[("stablehlo.add", 1)]),
    Case("elementwise_of_constants", True, "complex add of splats",
         lambda x: x * ops.add(const([1 + 2j] * 3, C64), const([3 - 1j] * 3, C64)), [sd((3,), C64)]),
    Case("elementwise_of_constants", False, "complex multiply: XLA's kernels fuse a*c - b*d",
         lambda x: x * ops.multiply(const([1 + 2j] * 3, C64), const([3 - 1j] * 3, C64)), [sd((3,), C64)]),
    Case("elementwise_of_constants", False, "max(-0.0, +0.0) is not pinned down",
         lambda x: x + ops.maximum(const([-0.0, 1]), const([0.0, 2])), [sd((2,))]),
    Case("elementwise_of_constants", False, "an operand is an argument", lambda x: ops.sin(x), [sd((3,))]),
    Case("compare_of_constants", True, "constants", lambda x: ops.select(ops.compare(const([1, 5]), const([2, 2]),
                                                                                      "LT"), x, -x),
         [sd((2,))], absent=["stablehlo.compare"]),
    Case("compare_of_constants", False, "an operand is an argument",
         lambda x: ops.compare(x, const([2, 2]), "LT"), [sd((2,))]),
    Case("convert_of_constant", True, "float -> int truncates", lambda x: x + ops.convert(const([-1.7, 2.5]), I32),
         [sd((2,), I32)], absent=["stablehlo.convert"]),
    Case("convert_of_constant", True, "int -> int8 wraps",
         lambda x: x + ops.convert(const([300, -129], I32), np.int8), [sd((2,), np.int8)]),
    Case("convert_of_constant", True, "complex -> real keeps the real part",
         lambda x: x + ops.convert(const([1.5 - 2j, -3j], C64), F32), [sd((2,))]),
    Case("convert_of_constant", False, "3e9 does not fit int32: implementation-defined",
         lambda x: x + ops.convert(const([3e9, 1.0]), I32), [sd((2,), I32)]),
    Case("broadcast_of_constant", True, "small", lambda x: x + ops.broadcast_in_dim(const([1, 2, 3]), (2, 3), (1,)),
         [sd((2, 3))], absent=["stablehlo.broadcast_in_dim"]),
    Case("broadcast_of_constant", True, "a splat of any size",
         lambda x: x + ops.broadcast_in_dim(const(2.0), (300, 400), ()), [sd((300, 400))]),
    Case("broadcast_of_constant", False, "2000 elements that are not a splat",
         lambda x: x + ops.broadcast_in_dim(const(np.arange(10)), (200, 10), (1,)), [sd((200, 10))]),
    Case("reshape_of_constant", True, "small", lambda x: x + ops.reshape(const(np.arange(6)), (2, 3)), [sd((2, 3))],
         absent=["stablehlo.reshape"]),
    Case("reshape_of_constant", False, "the operand is an argument", lambda x: ops.reshape(x, (3, 2)), [sd((2, 3))]),
    Case("transpose_of_constant", True, "small",
         lambda x: x + ops.transpose(const(np.arange(6).reshape(2, 3)), (1, 0)), [sd((3, 2))]),
    Case("transpose_of_constant", False, "1600 elements that are not a splat",
         lambda x: x + ops.transpose(const(np.arange(1600).reshape(40, 40)), (1, 0)), [sd((40, 40))]),
    Case("reduce_of_constant", True, "a sum", lambda x: x + ops.reduce(const(np.arange(6).reshape(2, 3)), 0.0, (1,)),
         [sd((2,))], absent=["stablehlo.reduce"]),
    Case("reduce_of_constant", False, "a complex product of two factors: XLA's kernels fuse a*c - b*d",
         lambda x: x * ops.reduce(const([2 + 0j, 3], C64), 1 + 0j, (0,), "mul"), [sd((), C64)]),
    Case("reduce_of_constant", False, "a bfloat16 sum of 3 whose partial sums round: the order is the backend's",
         _reduce_bf16, [sd(())]),
    Case("op_of_constants", True, "select, slice and concatenate of constants",
         lambda x: x + ops.concatenate([ops.slice(const([1, 2, 3]), (1,), (3,)),
                                        ops.select(const([True], np.bool_), const([4.0]), const([5.0]))], 0),
         [sd((3,))], absent=["stablehlo.select", "stablehlo.slice", "stablehlo.concatenate"]),
    Case("op_of_constants", True, "concatenate of two different splats (not a splat)",
         lambda x: x + ops.concatenate([const(np.ones((1, 2))), const(np.full((1, 2), 2.0))], 0), [sd((2, 2))],
         absent=["stablehlo.concatenate"]),
    Case("op_of_constants", True, "dot_general of constants",
         lambda x: x + ops.dot_general(const(np.eye(2)), const([1, 2]), (), (), (1,), (0,)), [sd((2,))],
         absent=["stablehlo.dot_general"]),
    Case("op_of_constants", False, "an inexact float16 dot: the accumulation precision is the backend's",
         lambda x: x + ops.convert(ops.dot_general(const([0.1, 0.2], np.float16), const([3, 7], np.float16),
                                                   (), (), (0,), (0,)), F32), [sd(())]),
    Case("op_of_constants", False, "an operand is an argument", lambda x: ops.slice(x, (1,), (3,)), [sd((3,))]),
    Case("multiply_by_one", True, "float", lambda x: x * 1.0, [sd((3,))], absent=["stablehlo.multiply"]),
    Case("multiply_by_one", True, "int", lambda x: 1 * x, [sd((3,), I32)], absent=["stablehlo.multiply"]),
    Case("multiply_by_one", False, "complex without finite math: (inf + 0j) * (1 + 0j) has a NaN part",
         lambda x: x * (1 + 0j), [sd((3,), C64)], False),
    Case("multiply_by_one", False, "the scale is 2", lambda x: x * 2.0, [sd((3,))]),
    Case("multiply_of_multiply", True, "float scales", lambda x: x * 2.0 * 0.25, [sd((3,))],
         present=[("stablehlo.multiply", 1)]),
    Case("multiply_of_multiply", True, "int scales (exact)", lambda x: x * 3 * 5, [sd((3,), I32)], False,
         present=[("stablehlo.multiply", 1)]),
    Case("multiply_of_multiply", False, "float reassociation needs finite math", lambda x: x * 2.0 * 0.25,
         [sd((3,))], False),
    Case("multiply_of_multiply", False, "the inner factor is not a constant", lambda x, y: x * y * 2.0,
         [sd((3,)), sd((3,))]),
]


def _fft_pair(outer, inner, lengths, outer_lengths=None):
    return lambda x: ops.fft(ops.fft(x, inner, lengths), outer, outer_lengths or lengths)


def _rfft_const(kind, shape, lengths, dtype):
    c = random(shape, dtype, seed=3)
    return lambda x: x + ops.fft(ops.constant(c), kind, lengths)


FFT_CASES = [
    Case("fft_of_zero", True, "rfft of zeros", lambda x: x + ops.fft(const(np.zeros((4, 8))), "RFFT", (8,)),
         [sd((4, 5), C64)], absent=["stablehlo.fft"]),
    Case("fft_of_zero", True, "length-1 rfft of -0.0 without finite math: the zero itself, -0.0+0.0j",
         lambda: ops.fft(const(np.full((3, 1), -0.0)), "RFFT", (1,)), [], False, absent=["stablehlo.fft"]),
    Case("fft_of_zero", False, "rfft of +0.0 of length 8 without finite math: XLA gives -0.0 imaginary parts",
         lambda x: x + ops.fft(const(np.zeros((4, 8))), "RFFT", (8,)), [sd((4, 5), C64)], False),
    Case("fft_of_zero", False, "fft of +0.0 of length 127 without finite math: XLA gives -0.0 parts",
         lambda x: x + ops.fft(const(np.zeros((2, 127)), C64), "FFT", (127,)), [sd((2, 127), C64)], False),
    Case("fft_of_zero", False, "splat 1 is not 0",
         lambda x: x + ops.fft(ops.constant(np.ones((64, 64), C64)), "FFT", (64,)), [sd((64, 64), C64)]),
    Case("fft_of_constant", True, "a length-1 fft (a copy)", _rfft_const("FFT", (3, 1), (1,), C64), [sd((3, 1), C64)],
         absent=["stablehlo.fft"]),
    Case("fft_of_constant", False, "rfft: XLA never folds an FFT and its FFT library rounds its own way",
         _rfft_const("RFFT", (3, 8), (8,), F32), [sd((3, 5), C64)]),
    Case("fft_of_constant", False, "2-d ifft", _rfft_const("IFFT", (2, 4, 6), (4, 6), C64), [sd((2, 4, 6), C64)]),
    Case("fft_of_constant", False, "irfft of a non-Hermitian constant",
         _rfft_const("IRFFT", (3, 4, 5), (4, 8), C64), [sd((3, 4, 8))]),
    Case("fft_of_constant", False, "2048 elements", _rfft_const("FFT", (64, 32), (32,), C64), [sd((64, 32), C64)]),
    Case("fft_of_transpose", True, "batch dims swap", lambda x: ops.fft(ops.transpose(x, (1, 0, 2)), "FFT", (6,)),
         [sd((3, 4, 6), C64)]),
    Case("fft_of_transpose", True, "fft dims swap with their lengths",
         lambda x: ops.fft(ops.transpose(x, (0, 2, 1)), "IFFT", (5, 4)), [sd((3, 4, 5), C64)]),
    Case("fft_of_transpose", True, "rfft with the last dim kept",
         lambda x: ops.fft(ops.transpose(x, (1, 0, 2)), "RFFT", (6,)), [sd((3, 4, 6))]),
    Case("fft_of_transpose", False, "rfft's last dim would move",
         lambda x: ops.fft(ops.transpose(x, (0, 2, 1)), "RFFT", (5, 4)), [sd((3, 4, 5))]),
    Case("fft_of_transpose", False, "a batch dim and an fft dim swap",
         lambda x: ops.fft(ops.transpose(x, (1, 0)), "FFT", (4,)), [sd((4, 4), C64)]),
    Case("transpose_of_transpose", True, "to the identity",
         lambda x: ops.transpose(ops.transpose(x, (1, 2, 0)), (2, 0, 1)), [sd((2, 3, 4))],
         absent=["stablehlo.transpose"]),
    Case("transpose_of_transpose", True, "composed", lambda x: ops.transpose(ops.transpose(x, (1, 2, 0)), (1, 0, 2)),
         [sd((2, 3, 4))], present=[("stablehlo.transpose", 1)]),
    Case("transpose_of_transpose", False, "a single transpose", lambda x: ops.transpose(x, (1, 0)), [sd((2, 3))]),
    Case("slice_of_transpose", True, "channels-last spectrum: both slices move above the transpose",
         lambda x: _slices_of_transpose(x, lambda t: t), [sd((2, 4, 8))],
         present=[("stablehlo.slice", 2)]),
    Case("slice_of_transpose", False, "the transpose has a user that is not a slice",
         lambda x: _slices_of_transpose(x, lambda t: t * 2.0), [sd((2, 4, 8))]),
    Case("noop_transpose", True, "identity permutation", lambda x: ops.transpose(x, (0, 1)), [sd((2, 3))],
         absent=["stablehlo.transpose"]),
    Case("noop_transpose", False, "a real permutation", lambda x: ops.transpose(x, (1, 0)), [sd((2, 3))]),
]

INVERSE_CASES = [
    Case("irfft_of_rfft", True, "even length", _fft_pair("IRFFT", "RFFT", (8,)), [sd((3, 8))],
         absent=["stablehlo.fft"]),
    Case("irfft_of_rfft", True, "odd 2-d lengths", _fft_pair("IRFFT", "RFFT", (3, 7)), [sd((2, 3, 7), F64)],
         absent=["stablehlo.fft"]),
    Case("irfft_of_rfft", False, "lengths 8 and 9 share the bin count but differ",
         _fft_pair("IRFFT", "RFFT", (8,), (9,)), [sd((3, 8))]),
    Case("irfft_of_rfft", False, "finite_math=False keeps the pair", _fft_pair("IRFFT", "RFFT", (8,)), [sd((8,))],
         False),
    Case("ifft_of_fft", True, "1-d", _fft_pair("IFFT", "FFT", (6,)), [sd((2, 6), C64)], absent=["stablehlo.fft"]),
    Case("ifft_of_fft", False, "a 2-d ifft of a 1-d fft", _fft_pair("IFFT", "FFT", (6,), (2, 6)),
         [sd((2, 6), C64)]),
    Case("fft_of_ifft", True, "2-d", _fft_pair("FFT", "IFFT", (2, 6)), [sd((2, 6), C64)], absent=["stablehlo.fft"]),
    Case("fft_of_ifft", False, "rfft of irfft is a projection, not the identity", _fft_pair("RFFT", "IRFFT", (8,)),
         [sd((5,), C64)]),
    Case("irfft_of_scaled_rfft", True, "a real constant scale", _scaled_irfft(lambda z, s: z * (2 + 0j)), [sd((8,)), sd(())],
         absent=["stablehlo.fft"]),
    Case("irfft_of_scaled_rfft", True, "a converted real argument",
         _scaled_irfft(lambda z, s: z * hnp.astype(s, C64)), [sd((8,)), sd(())], absent=["stablehlo.fft"]),
    Case("irfft_of_scaled_rfft", True, "two scales", _scaled_irfft(lambda z, s: z * hnp.astype(s, C64) * (0.5 + 0j)),
         [sd((8,)), sd(())], absent=["stablehlo.fft"]),
    Case("irfft_of_scaled_rfft", False, "a non-real scale: irfft(rfft(x) * 1j) is not x * 1j",
         _scaled_irfft(lambda z, s: z * 1j), [sd((8,)), sd(())]),
    Case("irfft_of_scaled_rfft", False, "a per-frequency scale is a filter",
         _scaled_irfft(lambda z, s: z * hnp.astype(hnp.arange(5), C64)), [sd((8,)), sd(())]),
    Case("ifft_of_scaled_fft", True, "a complex argument scale",
         lambda x, s: ops.fft(ops.fft(x, "FFT", (6,)) * s, "IFFT", (6,)), [sd((6,), C64), sd((), C64)],
         absent=["stablehlo.fft"]),
    Case("ifft_of_scaled_fft", False, "an elementwise (non-scalar) product",
         lambda x, s: ops.fft(ops.fft(x, "FFT", (6,)) * s, "IFFT", (6,)), [sd((6,), C64), sd((6,), C64)]),
    Case("fft_of_scaled_ifft", True, "a complex constant scale",
         lambda x: ops.fft(ops.fft(x, "IFFT", (6,)) * (1 - 2j), "FFT", (6,)), [sd((6,), C64)],
         absent=["stablehlo.fft"]),
    Case("fft_of_scaled_ifft", False, "different lengths",
         lambda x: ops.fft(ops.fft(x, "IFFT", (6,)) * 2.0, "FFT", (2, 6)), [sd((2, 6), C64)]),
]



def _raw(name, x, divisor):
    """A StableHLO integer divide/remainder built past ops' refusal of constant zero divisors."""
    from hloforge.frontend.tracing import Tensor, current_builder
    b = current_builder()
    op = b.emit(name, [x, divisor], [(x.shape, x.dtype)])
    return Tensor(op.result, x.shape, x.dtype, b)


GUARD_CASES = [
    Case("divide_by_constant_zero", True, "a constant divisor holding 0",
         lambda x: _raw("stablehlo.divide", x, const([1, 0, 2], I32)), [sd((3,), I32)],
         present=[("stablehlo.select", 1)]),
    Case("divide_by_constant_zero", False, "a zero-free constant divisor",
         lambda x: _raw("stablehlo.divide", x, const([1, 3, 2], I32)), [sd((3,), I32)]),
    Case("remainder_by_constant_zero", True, "an all-zero constant divisor: x % 0 is x",
         lambda x: x + _raw("stablehlo.remainder", x, const([0, 0, 0], I32)), [sd((3,), I32)],
         absent=["stablehlo.remainder"]),
    Case("remainder_by_constant_zero", False, "float remainder by 0 is NaN, no crash",
         lambda x: _raw("stablehlo.remainder", x, const([0, 1, 0])), [sd((3,))]),
    Case("division_by_folded_divisor", True, "XLA folds const / (const * 0)",
         lambda x: x + _raw("stablehlo.divide", const([5, -5, 7], I32),
                            ops.multiply(const([1, 2, 3], I32), const([0, 1, 0], I32))), [sd((3,), I32)],
         present=[("stablehlo.select", 2)]),
    Case("division_by_folded_divisor", True, "a runtime dividend: XLA may still simplify it to a constant",
         lambda x: _raw("stablehlo.divide", x, ops.multiply(const([1, 2, 3], I32), const([0, 1, 0], I32))),
         [sd((3,), I32)]),
    Case("division_by_folded_divisor", False, "the divisor is an argument of @main: XLA cannot fold it",
         lambda x, y: _raw("stablehlo.remainder", x, y), [sd((3,), I32), sd((3,), I32)]),
]

def _slices_of_transpose(x, f):
    """Two mode slices of transpose(x) (of f(transpose(x)) for the second)."""
    t = ops.transpose(x, (0, 2, 1))
    return ops.slice(t, (0, 0, 0), (2, 3, 4)) + ops.slice(f(t), (0, 5, 0), (2, 8, 4))


def _zero_filled_irfft2(y1, y2):
    """An FNO inverse: two corner blocks around a zero gap, zero-padded bins, irfft2."""
    gap = ops.constant(np.zeros((2, 6, 5), C64))
    z = ops.concatenate([y1, gap, y2], 1)
    return ops.fft(ops.pad(z, 0j, (0, 0, 0), (0, 0, 2)), "IRFFT", (12, 12))


def _set_corners(y1, y2, computation="set", at=(4, 0)):
    """An FNO-3d inverse as jax writes it: out = zeros.at[corner].set(block), twice, then irfftn."""
    out = ops.constant(np.zeros((2, 8, 5), C64))
    for y, start in ((y1, (0, 0)), (y2, at)):
        out = ops.scatter(out, ops.constant(np.array(start, I32)), y, (0, 1, 2), (), (1, 2), 0, computation)
    return ops.fft(out, "IRFFT", (8, 8))


def _corner_slices(x):
    z = ops.fft(x, "RFFT", (12, 10))
    return ops.slice(z, (0, 0, 0), (2, 3, 4)), ops.slice(z, (0, 9, 0), (2, 12, 4))


def _split_dot(z, m, axis):
    """A partial DFT's first contraction: [re | im] of z along axis, contracted with constant m."""
    pairs = ops.concatenate([ops.real(z), ops.imag(z)], axis)
    return ops.dot_general(pairs, ops.constant(m.astype(F32)), (), (), (axis,), (0,))


def _complex_rows(w):
    """The real [re | im] rows, (re, im) columns form of multiplying by complex matrix w."""
    return np.concatenate([np.stack([w.real, w.imag], -1), np.stack([-w.imag, w.real], -1)], 0)


_W = np.random.default_rng(3).normal(size=(6, 4)) + 1j * np.random.default_rng(4).normal(size=(6, 4))
_M2 = np.random.default_rng(5).normal(size=(2, 5, 7))


def _across(m1=_complex_rows(_W), dims=((1, 3), (1, 0)), m2=_M2):
    def fn(x):
        y = _split_dot(ops.fft(x, "RFFT", (8,)), m1, 1)
        return ops.dot_general(y, ops.constant(m2.astype(F32)), (), (), *dims)
    return fn


SPECTRAL_CASES = [
    Case("truncated_inverse_fft", True, "irfft of zero-padded bins",
         lambda y: ops.fft(ops.pad(y, 0j, (0, 0), (0, 3)), "IRFFT", (16,)), [sd((4, 6), C64)],
         absent=["stablehlo.fft", "stablehlo.pad"], present=["stablehlo.dot_general"]),
    Case("truncated_inverse_fft", True, "odd length: no Nyquist bin",
         lambda y: ops.fft(ops.pad(y, 0j, (0,), (5,)), "IRFFT", (15,)), [sd((3,), C64)], absent=["stablehlo.fft"]),
    Case("truncated_inverse_fft", True, "FNO corners: concatenate with a zero block, then pad",
         _zero_filled_irfft2, [sd((2, 3, 5), C64), sd((2, 3, 5), C64)], absent=["stablehlo.fft"]),
    Case("truncated_inverse_fft", True, "ifft of an interior-padded spectrum",
         lambda y: ops.fft(ops.pad(y, 0j, (0, 1), (0, 2), (0, 1)), "IFFT", (8,)), [sd((2, 3), C64)],
         absent=["stablehlo.fft"]),
    Case("truncated_inverse_fft", True, "corner blocks set into zeros by scatters (x.at[...].set)",
         _set_corners, [sd((2, 2, 3), C64), sd((2, 2, 3), C64)], absent=["stablehlo.fft"]),
    Case("truncated_inverse_fft", True, "overlapping windows: the later one wins, in the compact tensor too",
         lambda y1, y2: _set_corners(y1, y2, at=(1, 1)), [sd((2, 2, 3), C64), sd((2, 2, 3), C64)],
         absent=["stablehlo.fft"]),
    Case("truncated_inverse_fft", False, "a scatter that adds is not a window set",
         lambda y1, y2: _set_corners(y1, y2, "add"), [sd((2, 2, 3), C64), sd((2, 2, 3), C64)]),
    Case("truncated_inverse_fft", False, "a window past the edge (XLA skips it whole): left alone",
         lambda y1, y2: _set_corners(y1, y2, at=(7, 0)), [sd((2, 2, 3), C64), sd((2, 2, 3), C64)]),
    Case("truncated_inverse_fft", False, "the padding value is 1, not 0",
         lambda y: ops.fft(ops.pad(y, 1 + 0j, (0,), (3,)), "IRFFT", (16,)), [sd((6,), C64)]),
    Case("truncated_inverse_fft", False, "nothing is zero-filled", lambda y: ops.fft(y, "IRFFT", (16,)),
         [sd((9,), C64)]),
    Case("truncated_inverse_fft", False, "finite_math=False",
         lambda y: ops.fft(ops.pad(y, 0j, (0,), (3,)), "IRFFT", (16,)), [sd((6,), C64)], False),
    Case("partial_dft_of_fft", True, "a complex FFT folds into the contraction that follows",
         lambda x: _split_dot(ops.fft(x, "FFT", (8,)), np.random.default_rng(0).normal(size=(16, 5)), 1), [sd((3, 8), C64)],
         absent=["stablehlo.fft"]),
    Case("partial_dft_of_fft", True, "a one-axis RFFT: the contraction reads x itself",
         lambda x: _split_dot(ops.fft(x, "RFFT", (8,)), np.random.default_rng(0).normal(size=(10, 4)), 1), [sd((3, 8))],
         absent=["stablehlo.fft", "stablehlo.concatenate"]),
    Case("partial_dft_of_fft", True, "rfft2 split along its leading axis: a one-axis RFFT is left",
         lambda x: _split_dot(ops.fft(x, "RFFT", (6, 8)), np.random.default_rng(0).normal(size=(12, 7)), 1), [sd((2, 6, 8))],
         present=[("stablehlo.fft", 1)]),
    Case("partial_dft_of_fft", False, "rfft2 split along its last axis, not the leading one",
         lambda x: _split_dot(ops.fft(x, "RFFT", (6, 8)), np.random.default_rng(0).normal(size=(10, 7)), 2), [sd((2, 6, 8))]),
    Case("partial_dft_of_fft", False, "another user reads the spectrum",
         lambda x: (lambda z: (_split_dot(z, np.random.default_rng(0).normal(size=(16, 5)), 1), ops.abs(z)))(ops.fft(x, "FFT", (8,))),
         [sd((3, 8), C64)]),
    Case("partial_dft_of_fft", False, "finite_math=False",
         lambda x: _split_dot(ops.fft(x, "FFT", (8,)), np.random.default_rng(0).normal(size=(16, 5)), 1), [sd((3, 8), C64)], False),
    Case("partial_dft_of_fft_across", True, "an RFFT along 2 through a complex product along 1 into the next dot",
         _across(), [sd((2, 6, 8))], absent=["stablehlo.fft"]),
    Case("partial_dft_of_fft_across", False, "the first contraction does not multiply complex numbers",
         _across(m1=np.random.default_rng(0).normal(size=(12, 4, 2))), [sd((2, 6, 8))]),
    Case("partial_dft_of_fft_across", False, "the second contraction reads the modes but not the (re, im) pair",
         _across(dims=((1,), (1,)), m2=np.random.default_rng(0).normal(size=(3, 5, 7))), [sd((2, 6, 8))]),
    Case("truncated_forward_fft", True, "rfft of which one slice of modes is read",
         lambda x: ops.slice(ops.fft(x, "RFFT", (16,)), (0, 0), (3, 4)), [sd((3, 16))],
         absent=["stablehlo.fft"], present=["stablehlo.dot_general"]),
    Case("truncated_forward_fft", True, "rfft2 read by two corner slices", _corner_slices, [sd((2, 12, 10))],
         absent=["stablehlo.fft"]),
    Case("truncated_forward_fft", True, "a strided slice of a complex fft",
         lambda x: ops.slice(ops.fft(x, "FFT", (8, 16)), (0, 0, 1), (2, 2, 16), (1, 1, 5)), [sd((2, 8, 16), C64)],
         absent=["stablehlo.fft"]),
    Case("truncated_forward_fft", True, "rfft of a short zero-padded kernel (FFT convolution)",
         lambda k: ops.fft(pad1(k, 0, 59), "RFFT", (64,)), [sd((5,))], absent=["stablehlo.fft", "stablehlo.pad"]),
    Case("truncated_forward_fft", True, "fft2 of a zero-padded block, one slice read",
         lambda x: ops.slice(ops.fft(ops.pad(x, 0j, (0, 2, 0), (0, 10, 12)), "FFT", (16, 16)), (0, 0, 0), (2, 16, 5)),
         [sd((2, 4, 4), C64)], absent=["stablehlo.fft", "stablehlo.pad"]),
    Case("truncated_forward_fft", False, "a zero-padded signal whose every mode is used: the FFT is cheaper",
         lambda x: ops.fft(pad1(x, 0, 6), "RFFT", (256,)), [sd((250,))]),
    Case("truncated_forward_fft", False, "another user reads the whole spectrum",
         lambda x: (lambda z: (ops.slice(z, (0,), (3,)), ops.abs(z)))(ops.fft(x, "RFFT", (16,))), [sd((16,))]),
    Case("truncated_forward_fft", False, "the slices read every mode",
         lambda x: (lambda z: (ops.slice(z, (0,), (5,)), ops.slice(z, (4,), (9,))))(ops.fft(x, "RFFT", (16,))),
         [sd((16,))]),
    Case("truncated_forward_fft", False, "finite_math=False",
         lambda x: ops.slice(ops.fft(x, "RFFT", (16,)), (0,), (3,)), [sd((16,))], False),
]



def _two_pads(f, cfg_a, cfg_b, va=0.0, vb=0.0):
    return lambda a, b: f(ops.pad(a, va, *cfg_a), ops.pad(b, vb, *cfg_b))


def _concat(*pieces, dim=0):
    return lambda *xs: ops.concatenate([p(*xs) for p in pieces], dim)


PUSH_CASES = [
    Case("binary_of_pads", True, "add of two equally padded values",
         _two_pads(ops.add, ((1, 0), (0, 2)), ((1, 0), (0, 2)), 1.0, 2.0), [sd((3, 4)), sd((3, 4))],
         present=[("stablehlo.pad", 1)]),
    Case("binary_of_pads", True, "compare keeps its direction; crops and interior padding are fine",
         _two_pads(lambda a, b: ops.compare(a, b, "LT"), ((-1,), (2,), (1,)), ((-1,), (2,), (1,)), 0.0, 1.0),
         [sd((4,)), sd((4,))], present=[("stablehlo.pad", 1)]),
    Case("binary_of_pads", False, "the paddings differ", _two_pads(ops.multiply, ((1,), (0,)), ((0,), (1,))),
         [sd((4,)), sd((4,))]),
    Case("binary_of_pads", False, "a pad has another user",
         lambda a, b: (lambda p, q: (p * q, p))(pad1(a, 1, 0), pad1(b, 1, 0)), [sd((4,)), sd((4,))]),
    Case("sum_of_disjoint_pads", True, "two halves become one concatenate",
         _two_pads(ops.add, ((0, 0), (0, 5)), ((0, 3), (0, 0))), [sd((2, 3)), sd((2, 5))],
         absent=["stablehlo.pad", "stablehlo.add"], present=["stablehlo.concatenate"]),
    Case("sum_of_disjoint_pads", True, "a gap and outer padding on both dims",
         _two_pads(ops.or_, ((1, 0), (1, 7)), ((1, 5), (1, 3))), [sd((2, 3), np.bool_), sd((2, 2), np.bool_)],
         present=[("stablehlo.pad", 1)]),
    Case("sum_of_disjoint_pads", True, "int add is exact without finite math",
         _two_pads(ops.add, ((0,), (4,)), ((3,), (0,))), [sd((3,), I32), sd((4,), I32)], False,
         absent=["stablehlo.pad"]),
    Case("sum_of_disjoint_pads", False, "the supports overlap", _two_pads(ops.add, ((0,), (2,)), ((1,), (0,))),
         [sd((3,)), sd((4,))]),
    Case("sum_of_disjoint_pads", False, "float add without finite math: -0.0 + 0.0 is +0.0",
         _two_pads(ops.add, ((0,), (4,)), ((3,), (0,))), [sd((3,)), sd((4,))], False),
    Case("sum_of_disjoint_pads", False, "a padding value is 1", _two_pads(ops.add, ((0,), (4,)), ((3,), (0,)), 0, 1),
         [sd((3,)), sd((4,))]),
    Case("sum_of_pads_regrouped", True, "x + corner + corner: the two corners in one row add first",
         lambda x, a, b: (x + ops.pad(a, 0.0, (0, 0), (4, 3))) + ops.pad(b, 0.0, (4, 0), (0, 3)),
         [sd((6, 5)), sd((2, 2)), sd((2, 2))], present=[("stablehlo.add", 2)]),
    Case("sum_of_pads_regrouped", True, "integers, without finite math, either order",
         lambda x, a, b: ops.pad(b, 0, (4, 0), (0, 3)) + (ops.pad(a, 0, (0, 0), (4, 3)) + x),
         [sd((6, 5), I32), sd((2, 2), I32), sd((2, 2), I32)], False),
    Case("sum_of_pads_regrouped", False, "float add without finite math (signs of zeros)",
         lambda x, a, b: (x + ops.pad(a, 0.0, (0, 0), (4, 3))) + ops.pad(b, 0.0, (4, 0), (0, 3)),
         [sd((6, 5)), sd((2, 2)), sd((2, 2))], False),
    Case("sum_of_pads_regrouped", False, "the corners differ on both dims",
         lambda x, a, b: (x + ops.pad(a, 0.0, (0, 0), (4, 3))) + ops.pad(b, 0.0, (4, 3), (0, 0)),
         [sd((6, 5)), sd((2, 2)), sd((2, 2))]),
    Case("product_of_pads", True, "the product lives on the intersection",
         _two_pads(ops.multiply, ((0, 1), (2, 1)), ((1, 0), (0, 1))), [sd((3, 3)), sd((4, 4))],
         present=[("stablehlo.pad", 1), "stablehlo.slice"]),
    Case("product_of_pads", True, "disjoint bool supports: all false",
         _two_pads(ops.and_, ((0,), (3,)), ((3,), (0,))), [sd((2,), np.bool_), sd((2,), np.bool_)],
         absent=["stablehlo.pad", "stablehlo.and"]),
    Case("product_of_pads", False, "float product without finite math: inf * 0 is NaN",
         _two_pads(ops.multiply, ((0,), (1,)), ((1,), (0,))), [sd((3,)), sd((3,))], False),
    Case("product_of_pads", False, "interior padding", _two_pads(ops.multiply, ((0,), (1,), (1,)), ((1,), (0,), (1,))),
         [sd((3,)), sd((3,))]),
    Case("sum_of_interleaved_pads", True, "zero-insertion upsample plus its shift: a repeat",
         lambda x: ops.pad(x, 0.0, (0, 0), (0, 1), (0, 1)) + ops.pad(x, 0.0, (0, 1), (0, 0), (0, 1)), [sd((2, 5))],
         absent=["stablehlo.pad", "stablehlo.add"], present=["stablehlo.broadcast_in_dim"]),
    Case("sum_of_interleaved_pads", True, "two values interleaved, with outer padding on both dims",
         _two_pads(ops.xor, ((1, 2), (1, 1), (0, 1)), ((1, 3), (1, 0), (0, 1))), [sd((2, 3), I32), sd((2, 3), I32)],
         False, absent=["stablehlo.xor"], present=[("stablehlo.pad", 1), "stablehlo.concatenate"]),
    Case("sum_of_interleaved_pads", False, "float add without finite math: -0.0 + 0.0 is +0.0",
         _two_pads(ops.add, ((0,), (1,), (1,)), ((1,), (0,), (1,))), [sd((3,)), sd((3,))], False),
    Case("sum_of_interleaved_pads", False, "the phases are two apart: a gap, not an interleave",
         _two_pads(ops.add, ((0,), (2,), (2,)), ((2,), (0,), (2,))), [sd((3,)), sd((3,))]),
    Case("sum_of_interleaved_pads", False, "a multiply, not a sum",
         _two_pads(ops.multiply, ((0,), (1,), (1,)), ((1,), (0,), (1,))), [sd((3,)), sd((3,))]),
    Case("sum_of_pad", True, "a zero pad added to a tensor: the tensor with its window updated",
         lambda a, b: b + ops.pad(a, 0.0, (0, 1), (0, 2)), [sd((3, 4)), sd((3, 7))],
         absent=["stablehlo.pad"], present=["stablehlo.dynamic_update_slice"]),
    Case("sum_of_pad", True, "integers, or: exact without finite math",
         lambda a, b: ops.or_(ops.pad(a, 0, (1,), (0,)), b), [sd((4,), I32), sd((5,), I32)], False,
         absent=["stablehlo.pad"]),
    Case("sum_of_pad", False, "a float add without finite math (-0.0 + 0.0 is +0.0)",
         lambda a, b: b + ops.pad(a, 0.0, (1,), (0,)), [sd((4,)), sd((5,))], False),
    Case("sum_of_pad", False, "a pad beside a splat: binary_of_pad_and_splat's",
         lambda a: ops.pad(a, 0.0, (1,), (0,)) + ops.broadcast_in_dim(const(2.0), (5,), ()), [sd((4,))]),
    Case("sum_of_pad", False, "beside a sum of pads: the pad-sum patterns merge those first",
         lambda a, b, c: ops.pad(c, 0.0, (4,), (0,)) + (ops.pad(a, 0.0, (0,), (3,)) + ops.pad(b, 0.0, (2,), (1,))),
         [sd((2,)), sd((2,)), sd((1,))]),
    Case("concatenate_of_alike_pads", True, "two adjacent pads of the other dim beside a tensor: one pad of them",
         lambda a, b, c: ops.concatenate([ops.pad(a, 1.5, (0, 1, 0), (0, 0, 0)), ops.pad(b, 1.5, (0, 1, 0), (0, 0, 0)), c],
                                         2), [sd((2, 3, 4)), sd((2, 3, 1)), sd((2, 4, 1))], present=[("stablehlo.pad", 1)]),
    Case("concatenate_of_alike_pads", True, "three pads sharing a low padding, one with more: two pads",
         lambda a, b, c: ops.concatenate([ops.pad(a, 0.0, (0, 1), (0, 0)), ops.pad(b, 0.0, (0, 1), (0, 1)),
                                          ops.pad(c, 0.0, (0, 1), (0, 0))], 0), [sd((1, 4)), sd((3, 3)), sd((1, 4))],
         present=[("stablehlo.pad", 2)]),
    Case("concatenate_of_alike_pads", False, "the pads pad with different values",
         lambda a, b, c: ops.concatenate([ops.pad(a, 0.0, (1, 0), (0, 0)), ops.pad(b, 1.0, (1, 0), (0, 0)), c], 1),
         [sd((3, 2)), sd((3, 2)), sd((4, 1))]),
    Case("concatenate_of_alike_pads", False, "no padding all of them share: no fewer pads",
         lambda a, b: ops.concatenate([ops.pad(a, 0.0, (1, 0), (0, 0)), ops.pad(b, 0.0, (0, 0), (1, 0))], 1),
         [sd((3, 2)), sd((3, 2))]),
    Case("convolution_of_pad", True, "a zero pad of the spatial dims, the input dilated: into its padding",
         lambda x, w: ops.convolution(ops.pad(x, 0.0, (0, 0, 1, 2), (0, 0, 1, 0)), w, padding=((1, 1), (0, 0)),
                                      lhs_dilation=(2, 1)), [sd((1, 2, 5, 5)), sd((3, 2, 2, 2))],
         absent=["stablehlo.pad"]),
    Case("convolution_of_pad", False, "without finite math (Inf * 0 in the padding)",
         lambda x, w: ops.convolution(ops.pad(x, 0.0, (0, 0, 1, 1), (0, 0, 1, 1)), w),
         [sd((1, 2, 5, 5)), sd((3, 2, 2, 2))], False),
    Case("convolution_of_pad", False, "the pad pads the feature dim",
         lambda x, w: ops.convolution(ops.pad(x, 0.0, (0, 1, 1, 1), (0, 0, 1, 1)), w),
         [sd((1, 1, 5, 5)), sd((3, 2, 2, 2))]),
    Case("convolution_of_pad", False, "the pad's value is -0.0",
         lambda x, w: ops.convolution(ops.pad(x, -0.0, (0, 0, 1, 1), (0, 0, 1, 1)), w),
         [sd((1, 2, 5, 5)), sd((3, 2, 2, 2))]),
    Case("reduce_window_of_pad", True, "max pooling of a -inf pad, base-dilated: exact without finite math",
         lambda x: ops.reduce_window(ops.pad(x, -np.inf, (0, 1, 1), (0, 1, 1)), np.float32(-np.inf), (1, 2, 2),
                                     base_dilations=(1, 2, 1), padding=((0, 0), (0, 1), (0, 0)), body="max"),
         [sd((2, 5, 5))], False, absent=["stablehlo.pad"]),
    Case("reduce_window_of_pad", True, "a sum window over a zero pad, under finite math",
         lambda x: ops.reduce_window(ops.pad(x, 0.0, (1, 1), (1, 1)), np.float32(0), (3, 3)), [sd((5, 5))],
         absent=["stablehlo.pad"]),
    Case("reduce_window_of_pad", False, "a sum window without finite math",
         lambda x: ops.reduce_window(ops.pad(x, 0.0, (1, 1), (1, 1)), np.float32(0), (3, 3)), [sd((5, 5))], False),
    Case("reduce_window_of_pad", False, "the pad's value is not the init value",
         lambda x: ops.reduce_window(ops.pad(x, 0.0, (1, 1), (1, 1)), np.float32(-np.inf), (2, 2), body="max"),
         [sd((5, 5))]),
    Case("reduce_of_pad", True, "a max over a -inf pad (interior on the reduced dim), under finite math",
         lambda x: ops.reduce(ops.pad(x, -np.inf, (1, 2), (0, 1), (1, 0)), F32(-np.inf), (0,), "max"), [sd((3, 4))],
         present=[("stablehlo.pad", 1)]),
    Case("reduce_of_pad", True, "an integer max: exact without finite math",
         lambda x: ops.reduce(ops.pad(x, -7, (1, 2), (0, 1)), np.int32(-7), (0,), "max"), [sd((3, 4), np.int32)],
         False, present=[("stablehlo.pad", 1)]),
    Case("reduce_of_pad", False, "a float max without finite math (XLA:CPU flushes or keeps a subnormal by order)",
         lambda x: ops.reduce(ops.pad(x, -np.inf, (1, 2), (0, 1)), F32(-np.inf), (0,), "max"), [sd((3, 4))], False),
    Case("reduce_of_pad", True, "a sum over a zero pad of both dims, under finite math",
         lambda x: ops.reduce(ops.pad(x, 0.0, (1, 2), (3, 0)), F32(0), (1,), "add"), [sd((3, 4))],
         present=[("stablehlo.pad", 1)]),
    Case("reduce_of_pad", False, "the init value is not add's identity",
         lambda x: ops.reduce(ops.pad(x, 3.0, (1, 2), (3, 0)), F32(3), (1,), "add"), [sd((3, 4))]),
    Case("reduce_of_pad", False, "a float sum without finite math",
         lambda x: ops.reduce(ops.pad(x, 0.0, (1, 2), (3, 0)), F32(0), (1,), "add"), [sd((3, 4))], False),
    Case("reduce_of_pad", False, "the pad's value is not the init value",
         lambda x: ops.reduce(ops.pad(x, 0.0, (1, 2), (3, 0)), F32(-np.inf), (1,), "max"), [sd((3, 4))]),
    Case("transpose_of_pad", True, "the pad moves below",
         lambda x: ops.transpose(ops.pad(x, 1.0, (1, 0, 2), (0, 3, 0), (0, 1, 0)), (2, 0, 1)), [sd((2, 3, 4))]),
    Case("transpose_of_pad", False, "the pad has another user",
         lambda x: (lambda p: (ops.transpose(p, (1, 0)), p))(ops.pad(x, 0.0, (1, 0), (0, 0))), [sd((2, 3))]),
    Case("reshape_of_pad", True, "merging unpadded dims",
         lambda x: ops.reshape(ops.pad(x, 0.0, (0, 0, 1), (0, 0, 2)), (6, 7)), [sd((2, 3, 4))],
         present=[("stablehlo.pad", 1)]),
    Case("reshape_of_pad", True, "adding unit dims around a padded one",
         lambda x: ops.reshape(ops.pad(x, 2.0, (1, 0), (1, 0), (1, 0)), (1, 9, 1, 4)), [sd((4, 4))]),
    Case("reshape_of_pad", False, "the reshape merges the padded dim",
         lambda x: ops.reshape(ops.pad(x, 0.0, (0, 1), (0, 1)), (12,)), [sd((3, 2))]),
    Case("broadcast_of_pad", True, "new dims around the pad",
         lambda x: ops.broadcast_in_dim(ops.pad(x, 3.0, (2,), (1,)), (4, 8, 2), (1,)), [sd((5,))]),
    Case("broadcast_of_pad", False, "a padded dim of size 1 is expanded",
         lambda x: ops.broadcast_in_dim(ops.pad(x, 3.0, (1, 0), (0, 0)), (4, 3), (0, 1)), [sd((0, 3))]),
    Case("concatenate_of_pads", True, "two pads become one",
         _concat(lambda a, b: ops.pad(a, 0.0, (0, 2), (0, 0)), lambda a, b: ops.pad(b, 0.0, (0, 0), (0, 3)), dim=1),
         [sd((2, 3)), sd((2, 4))], present=[("stablehlo.pad", 1)]),
    Case("concatenate_of_pads", True, "zero blocks around x: one pad",
         _concat(lambda x: const(np.zeros((3, 2))), lambda x: x, lambda x: const(np.zeros((1, 2)))),
         [sd((4, 2))], absent=["stablehlo.concatenate"], present=[("stablehlo.pad", 1)]),
    Case("concatenate_of_pads", True, "neighbouring slices and a zero block: a shift",
         _concat(lambda x: ops.slice(x, (1,), (3,)), lambda x: ops.slice(x, (3,), (6,)), lambda x: const(np.zeros(1))),
         [sd((6,))], absent=["stablehlo.concatenate"]),
    Case("concatenate_of_pads", True, "pads that also pad the other dim alike",
         _concat(lambda a, b: ops.pad(a, 1.0, (1, 1), (0, 1)), lambda a, b: ops.pad(b, 1.0, (0, 1), (2, 1))),
         [sd((2, 3)), sd((1, 3))], present=[("stablehlo.pad", 1)]),
    Case("concatenate_of_pads", False, "an FNO spectrum: a zero block between two values",
         _concat(lambda a, b: a, lambda a, b: const(np.zeros((2, 3))), lambda a, b: b), [sd((2, 3)), sd((2, 3))]),
    Case("concatenate_of_pads", False, "the padding values differ",
         _concat(lambda a, b: pad1(a, 1, 0, 0.0), lambda a, b: pad1(b, 0, 1, 1.0)), [sd((2,)), sd((2,))]),
    Case("concatenate_of_pads", False, "a pad pads another dim, next to an unpadded value",
         _concat(lambda a, b: ops.pad(a, 0.0, (0, 1), (0, 1)), lambda a, b: b), [sd((2, 3)), sd((2, 5))]),
]

PUSH_CASES += [
    Case("slice_of_interior_pad", True, "trims edge padding of a zero-inserted signal",
         lambda x: ops.slice(ops.pad(x, 0.0, (2, 0), (3, 1), (1, 0)), (1, 0), (10, 4)), [sd((3, 3))],
         absent=["stablehlo.slice"], present=[("stablehlo.pad", 1)]),
    Case("slice_of_interior_pad", False, "the slice cuts into x",
         lambda x: ops.slice(ops.pad(x, 0.0, (0,), (1,), (1,)), (1,), (6,)), [sd((3,))]),
    Case("slice_of_interior_pad", False, "stride 2",
         lambda x: ops.slice(ops.pad(x, 0.0, (0,), (1,), (1,)), (0,), (6,), (2,)), [sd((3,))]),
    Case("pad_of_interior_pad", True, "edges add up around an interior pad",
         lambda x: ops.pad(ops.pad(x, 1.0, (0, 1), (1, 0), (2, 0)), 1.0, (1, 0), (0, 2)), [sd((3, 2))],
         present=[("stablehlo.pad", 1)]),
    Case("pad_of_interior_pad", False, "the padding values differ",
         lambda x: ops.pad(ops.pad(x, 1.0, (0,), (1,), (1,)), 0.0, (1,), (0,)), [sd((3,))]),
    Case("pad_of_interior_pad", False, "the outer pad crops",
         lambda x: ops.pad(ops.pad(x, 0.0, (0,), (1,), (1,)), 0.0, (-1,), (0,)), [sd((3,))]),
    Case("concatenate_of_pads", True, "neighbouring slices of one tensor, no padding anywhere",
         lambda x: ops.concatenate([ops.slice(x, (0, 0), (2, 3)), ops.slice(x, (0, 3), (2, 5))], 1), [sd((2, 5))],
         absent=["stablehlo.concatenate", "stablehlo.slice"]),
    Case("slice_of_elementwise", True, "a slice of a product: the product of the operands' slices",
         lambda a, b: ops.slice(a * b, (1,), (3,)), [sd((5,)), sd((5,))], present=[("stablehlo.slice", 2)]),
    Case("slice_of_elementwise", True, "two disjoint slices of a sine: one sine per slice",
         lambda x: (lambda s: (ops.slice(s, (0,), (2,)), ops.slice(s, (3,), (5,))))(ops.sin(x)), [sd((5,))],
         present=[("stablehlo.sine", 2)]),
    Case("slice_of_elementwise", False, "another user reads the whole result",
         lambda x: (lambda s: (ops.slice(s, (0,), (2,)), s))(ops.sin(x)), [sd((5,))]),
    Case("slice_of_elementwise", False, "overlapping slices would compute elements twice",
         lambda x: (lambda s: (ops.slice(s, (0,), (4,)), ops.slice(s, (1,), (5,))))(ops.sin(x)), [sd((5,))]),
    Case("slice_of_slice", True, "strided slices compose into one",
         lambda x: ops.slice(ops.slice(x, (1, 0), (10, 3), (2, 1)), (1, 1), (4, 3), (2, 1)), [sd((11, 3))],
         present=[("stablehlo.slice", 1)]),
    Case("slice_of_slice", True, "an empty result dim slices 0:0 (the composed start lies past the end)",
         lambda x: ops.slice(ops.slice(x, (0, 0), (0, 1), (3, 3)), (0, 1), (0, 1), (2, 2)), [sd((0, 1))],
         present=[("stablehlo.slice", 1)]),
    Case("slice_of_slice", False, "the operand is not a slice", lambda x: ops.slice(ops.sin(x), (1,), (3,)),
         [sd((5,))]),
    Case("unary_of_shared_pad", True, "real and imag of one complex pad (a conjugate)",
         lambda z: (lambda p: ops.complex(ops.real(p), ops.neg(ops.imag(p))))(ops.pad(z, 0j, (1,), (2,))),
         [sd((3,), C64)], present=[("stablehlo.pad", 2)]),
    Case("unary_of_shared_pad", False, "the pad is also returned",
         lambda x: (lambda p: (ops.sin(p), ops.cos(p), p))(pad1(x, 1, 1)), [sd((5,))]),
    Case("unary_of_shared_pad", False, "one user: unary_of_pad's case", lambda x: ops.sin(pad1(x, 1, 1)), [sd((5,))]),
    Case("product_of_pad", True, "a zero pad times an argument: the product of the pad's window",
         lambda a, b: ops.pad(a, 0.0, (1, 0), (2, 1)) * b, [sd((3, 2)), sd((6, 3))],
         present=[("stablehlo.pad", 1), "stablehlo.slice"]),
    Case("product_of_pad", True, "int product, pad on the right, exact without finite math",
         lambda a, b: b * ops.pad(a, 0, (0,), (2,)), [sd((3,), I32), sd((5,), I32)], False,
         present=[("stablehlo.pad", 1)]),
    Case("product_of_pad", False, "float product without finite math: inf * 0 is NaN",
         lambda a, b: pad1(a, 1, 2) * b, [sd((3,)), sd((6,))], False),
    Case("product_of_pad", False, "the padding value is 1", lambda a, b: pad1(a, 1, 2, 1.0) * b, [sd((3,)), sd((6,))]),
    Case("quotient_of_pad", True, "a zero pad over positive weights: the quotient of the pad's window",
         lambda a, b: ops.pad(a, 0.0, (0, 1), (2, 0)) / b, [sd((3, 2)), sd((5, 3))],
         present=[("stablehlo.pad", 1), "stablehlo.slice"]),
    Case("quotient_of_pad", True, "complex, jax's rfft transpose (a spectrum over its bin weights)",
         lambda a, w: ops.pad(a, 0j, (0,), (3,)) / w, [sd((2,), C64), sd((5,), C64)],
         present=[("stablehlo.pad", 1)]),
    Case("quotient_of_pad", False, "without finite math: 0 / 0 is NaN", lambda a, b: pad1(a, 1, 2) / b,
         [sd((3,)), sd((6,))], False),
    Case("quotient_of_pad", False, "the pad is the divisor", lambda a, b: b / pad1(a, 1, 2), [sd((3,)), sd((6,))]),
    Case("quotient_of_pad", False, "integers: 0 / 0 is -1", lambda a, b: ops.pad(a, 0, (0,), (2,)) / b,
         [sd((3,), I32), sd((5,), I32)]),
    Case("empty_concatenate_operands", True, "an empty operand between two others",
         lambda a, e, b: ops.concatenate([a, e, b], 0), [sd((2, 3)), sd((0, 3)), sd((1, 3))],
         present=[("stablehlo.concatenate", 1)]),
    Case("empty_concatenate_operands", False, "no operand is empty",
         lambda a, b: ops.concatenate([a, b], 0), [sd((2, 3)), sd((1, 3))]),
    Case("concatenate_of_concatenate", True, "nested along the same dim",
         lambda a, b, c: ops.concatenate([ops.concatenate([a, b], 1), c], 1), [sd((2, 1)), sd((2, 2)), sd((2, 3))],
         present=[("stablehlo.concatenate", 1)]),
    Case("concatenate_of_concatenate", False, "the inner one joins along another dim",
         lambda a, b, c: ops.concatenate([ops.concatenate([a, b], 0), c], 1), [sd((1, 2)), sd((1, 2)), sd((2, 3))]),
]



def _box_positions(reverse=False):
    """Flat positions of rows 1:3, columns 0:2 of a 4x5 array, as hloforge.numpy's .at[] computes them."""
    grid = ops.slice(ops.reshape(ops.iota((20,), I32, 0), (4, 5)), (1, 0), (3, 2))
    return ops.reverse(grid, (1,)) if reverse else grid


def _flat_gather(x, reverse=False):
    return ops.gather(ops.reshape(x, (20,)), _box_positions(reverse), (), (0,), (0,), 2, (1,))


INDEX_CASES = [
    Case("flat_scatter_window", True, "x.at[1:3, 0:2].set(u): one box of x's shape",
         lambda x, u: x.at[1:3, 0:2].set(u), [sd((4, 5)), sd((2, 2))], present=["stablehlo.scatter"],
         absent=["stablehlo.iota"]),
    Case("flat_scatter_window", True, "x.at[2, 1:4].add(u), integers (an int index drops a dim)",
         lambda x, u: x.at[2, 1:4].add(u), [sd((4, 5), I32), sd((3,), I32)], present=["stablehlo.scatter"]),
    Case("flat_scatter_window", False, "x.at[::2].set(u): the positions are no box",
         lambda x, u: x.at[::2].set(u), [sd((4, 5)), sd((2, 5))]),
    Case("flat_scatter_window", False, "traced positions", lambda x, i, u: x.at[i].set(u),
         [sd((6,)), sd((2,), I32), sd((2,))]),
    Case("flat_gather_slice", True, "positions of rows 1:3, columns 0:2 of a 4x5 array",
         _flat_gather, [sd((4, 5))], present=["stablehlo.slice"], absent=["stablehlo.gather"]),
    Case("flat_gather_slice", False, "the columns reversed: not row-major",
         lambda x: _flat_gather(x, reverse=True), [sd((4, 5))]),
    Case("reshape_of_reshape", True, "(3, 2) -> (6,) -> (2, 3): one reshape",
         lambda x: ops.reshape(ops.reshape(x, (6,)), (2, 3)), [sd((3, 2))], present=[("stablehlo.reshape", 1)]),
    Case("reshape_of_reshape", True, "back to x's shape: no reshape",
         lambda x: ops.reshape(ops.reshape(x, (6,)), (3, 2)) * 2.0, [sd((3, 2))], absent=["stablehlo.reshape"]),
    Case("reshape_of_reshape", False, "a reshape of an argument", lambda x: ops.reshape(x, (6,)), [sd((3, 2))]),
    # (issue 47: the ways jax FNO libraries select and set spectral modes)
    Case("gather_of_known_positions", True, "jnp.take(x, [0, 1, 2, 5], axis=1): a run and a point",
         lambda x: _take_columns(x, [0, 1, 2, 5]), [sd((3, 8))], present=[("stablehlo.slice", 2)],
         absent=["stablehlo.gather"]),
    Case("gather_of_known_positions", True, "positions past the end clamp, steps of 2: one strided slice",
         lambda x: _take_columns(x, [1, 3, 5, 7, 9]), [sd((3, 8))], present=[("stablehlo.slice", 2)]),
    Case("gather_of_known_positions", True, "x[:, 2:6, 1:4] written as a gather at one index vector",
         lambda x: ops.gather(x, const([2, 1], I32), (0, 1, 2), (), (1, 2), 0, (3, 4, 3)), [sd((3, 8, 5))],
         present=["stablehlo.slice"], absent=["stablehlo.gather"]),
    Case("gather_of_known_positions", True, "a mesh, x[:, [0, 1, 5][:, None], [2, 3]]: a slice per run of rows",
         lambda x: ops.gather(x, const(np.stack(np.meshgrid([0, 1, 5], [2, 3], indexing="ij"), -1), I32),
                              (0,), (1, 2), (1, 2), 2, (3, 1, 1)), [sd((3, 8, 5))],
         present=[("stablehlo.slice", 2)], absent=["stablehlo.gather"]),
    Case("gather_of_known_positions", False, "pairs of positions, x[:, [0, 1], [2, 3]]: a diagonal, no mesh",
         lambda x: ops.gather(x, const([[0, 2], [1, 3]], I32), (0,), (1, 2), (1, 2), 1, (3, 1, 1)), [sd((3, 8, 5))]),
    Case("gather_of_known_positions", False, "traced positions", lambda x, i: _take_columns(x, i),
         [sd((3, 8)), sd((4,), I32)]),
    Case("gather_of_known_positions", False, "the index vectors vary along two dims",
         lambda x: ops.gather(x, const([[0, 1], [1, 0]], I32), (), (0, 1), (0, 1), 1, (1, 1)), [sd((3, 8))]),
    Case("scatter_of_known_positions", True, "zeros.at[:, [0, 1, 6, 7]].set(u): two runs, a zero gap",
         lambda u: _set_columns(u, [0, 1, 6, 7]), [sd((3, 4), C64)], absent=["stablehlo.scatter"],
         present=["stablehlo.concatenate"]),
    Case("scatter_of_known_positions", True, "jax's transpose of jnp.take, an add into zeros (finite math)",
         lambda u: _set_columns(u, [1, 3, 5], "add"), [sd((3, 3))], absent=["stablehlo.scatter"]),
    Case("scatter_of_known_positions", True, "a mesh, zeros.at[:, [0, 1, 5][:, None], [2, 3]].set(u)",
         lambda u: ops.scatter(ops.constant(np.zeros((3, 8, 5), np.float32)),
                               const(np.stack(np.meshgrid([0, 1, 5], [2, 3], indexing="ij"), -1), I32), u,
                               (0,), (1, 2), (1, 2), 2), [sd((3, 3, 2))], absent=["stablehlo.scatter"]),
    Case("scatter_of_known_positions", False, "an add into +0.0 without finite math (-0.0 updates)",
         lambda u: _set_columns(u, [1, 3, 5], "add"), [sd((3, 3))], False),
    Case("scatter_of_known_positions", False, "repeated positions (an add would sum them)",
         lambda u: _set_columns(u, [1, 1, 5], "add"), [sd((3, 3))]),
    Case("scatter_of_known_positions", False, "into a nonzero operand",
         lambda x, u: ops.scatter(x, const([[0], [1]], I32), u, (0,), (1,), (1,), 1), [sd((3, 8)), sd((3, 2))]),
    Case("slice_of_window_set", True, "the cotangent's other corner: a slice that misses the window",
         lambda x, u: ops.slice(_set_window(x, u, (4, 0)), (0, 0, 0), (2, 4, 3)), [sd((2, 8, 5)), sd((2, 4, 3))],
         absent=["stablehlo.scatter"]),
    Case("slice_of_window_set", True, "a slice inside the window reads the update",
         lambda x, u: ops.slice(_set_window(x, u, (4, 0)), (0, 5, 1), (2, 7, 3)), [sd((2, 8, 5)), sd((2, 4, 3))],
         absent=["stablehlo.scatter"]),
    Case("slice_of_window_set", True, "through a dynamic_update_slice at constant offsets",
         lambda x, u: ops.slice(ops.dynamic_update_slice(x, u, [const(0, I32), const(6, I32), const(0, I32)]),
                                (0, 0, 0), (2, 3, 5)), [sd((2, 8, 5)), sd((2, 4, 3))],
         absent=["stablehlo.dynamic_update_slice"]),
    Case("slice_of_window_set", False, "the slice straddles the window's edge",
         lambda x, u: ops.slice(_set_window(x, u, (4, 0)), (0, 2, 0), (2, 6, 3)), [sd((2, 8, 5)), sd((2, 4, 3))]),
    Case("dynamic_slice_at_constants", True, "jax's transpose of a dynamic_update_slice, the offset clamped",
         lambda x: ops.dynamic_slice(x, [const(0, I32), const(7, I32)], (2, 3)), [sd((2, 8))],
         absent=["stablehlo.dynamic_slice"], present=["stablehlo.slice"]),
    Case("dynamic_slice_at_constants", False, "a traced offset",
         lambda x, i: ops.dynamic_slice(x, [const(0, I32), i], (2, 3)), [sd((2, 8)), sd((), I32)]),
]


def _take_columns(x, columns):
    """jnp.take(x, columns, axis=1) as jax lowers it (one collapsed dim, index vectors of one position)."""
    index = const(np.asarray(columns)[:, None], I32) if not isinstance(columns, hf.Tensor) else \
        ops.reshape(columns, (columns.shape[0], 1))
    return ops.gather(x, index, (0,), (1,), (1,), 1, (x.shape[0], 1))


def _set_columns(u, columns, computation="set"):
    """zeros((3, 8)).at[:, columns].set(u) (or .add) as jax lowers it."""
    zeros = ops.constant(np.zeros((3, 8), u.dtype))
    return ops.scatter(zeros, const(np.asarray(columns)[:, None], I32), u, (0,), (1,), (1,), 1, computation)


def _set_window(x, u, at):
    """x.at[:, a:a+4, b:b+3].set(u): one window scatter at constant offsets."""
    return ops.scatter(x, const(np.array(at), I32), u, (0, 1, 2), (), (1, 2), 0)

CASES = PAD_CASES + FOLD_CASES + FFT_CASES + INVERSE_CASES + GUARD_CASES + SPECTRAL_CASES + PUSH_CASES + INDEX_CASES


@pytest.mark.parametrize("case", CASES, ids=[f"{c.pattern}-{'fires' if c.fires else 'not'}-{i}"
                                             for i, c in enumerate(CASES)])
def test_pattern(case):
    m = hf.trace(case.fn, *case.specs)
    report = optimize_checked(m, f"pattern:{case.pattern}", finite_math=case.finite_math, run=case.run)
    assert (report.fired[case.pattern] > 0) == case.fires, case.why
    counts = m.op_counts()
    for name in case.absent:
        assert name not in counts, f"{name} left after {case.pattern}:\n{m}"
    for name in case.present:
        name, n = name if isinstance(name, tuple) else (name, None)
        assert counts.get(name, 0) == n if n is not None else name in counts, f"{name}:\n{m}"


@pytest.mark.parametrize("kind, dtype, shape, lengths", [
    ("RFFT", F32, (3, 1), (1,)), ("RFFT", F64, (2, 1, 1), (1, 1)), ("IRFFT", C64, (3, 1), (1,)),
    ("FFT", C64, (3, 1), (1,)), ("IFFT", np.complex128, (2, 1), (1,)),
    ("RFFT", F32, (2, 8), (8,)), ("RFFT", F32, (1, 3), (3,)), ("FFT", C64, (3, 127), (127,)),
    ("IRFFT", C64, (2, 5), (8,)), ("IFFT", C64, (4, 4), (4, 4)),
])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_fft_of_zero_keeps_xla_bits_without_finite_math(kind, dtype, shape, lengths, sign):
    """rfft(pad(x, -0.0)) is -0.0 in XLA, jax and numpy (issue 49): fft_of_zero folds length-1 transforms
    to the zero itself, and longer ones (whose zeros XLA signs by a pattern of the length) only under finite math."""
    zero = np.zeros(shape, dtype) * sign
    if np.dtype(dtype).kind == "c":
        zero = zero + 1j * zero * -1  # (parts of both signs)
    m = hf.trace(lambda: ops.fft(ops.constant(zero), kind, lengths))
    want = np.asarray(m.compile()())
    report = m.optimize("pattern:fft_of_zero", finite_math=False)
    assert report.fired["fft_of_zero"] == (1 if all(n == 1 for n in lengths) else 0)
    assert np.asarray(m.compile()()).tobytes() == want.tobytes()
    m = hf.trace(lambda: ops.fft(ops.constant(zero), kind, lengths))
    assert m.optimize("pattern:fft_of_zero", finite_math=True).fired["fft_of_zero"] == 1
    np.testing.assert_array_equal(np.asarray(m.compile()()), want)  # (zeros, of either sign)


def test_fft_of_zero_of_a_negative_zero_pad_is_negative_zero():
    """The issue's reproducer: rfft of a pad of -0.0 (the operand cropped away) keeps XLA's -0.0."""
    m = hf.trace(lambda x: hnp.fft.rfft(ops.pad(x, np.float32(-0.0), [-1], [1], [0])), sd((1,)))
    x = np.ones(1, F32)
    want = np.asarray(m.compile()(x))
    assert np.signbit(want.real).all()
    m.optimize(finite_math=False)
    assert np.asarray(m.compile()(x)).tobytes() == want.tobytes()
    text = hf.trace(lambda: ops.fft(const(np.zeros(8)), "RFFT", (8,))).optimize(
        "pattern:fft_of_zero", finite_math=False, debug=True).explain()
    assert "fft_of_zero: declined 1 time: XLA's FFT gives zeros of either sign" in text


def test_integer_division_by_constant_zero_is_not_folded():
    # (ops.divide refuses to build this, since XLA aborts on it; modules from elsewhere may carry it)
    m = hf.Module.parse("""
    func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
      %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
      %b = stablehlo.constant dense<[0, 1]> : tensor<2xi32>
      %0 = stablehlo.divide %a, %b : tensor<2xi32>
      %1 = stablehlo.add %x, %0 : tensor<2xi32>
      return %1 : tensor<2xi32>
    }""")
    report = m.optimize("pattern:elementwise_of_constants")
    assert report.fired["elementwise_of_constants"] == 0  # implementation-defined: left to the device
    assert m.op_counts()["stablehlo.divide"] == 1


def test_every_pattern_has_cases():
    calls = {"call_of_function", "call_boundary_of_constant"}  # (on modules with calls: tests/passes/test_inline_bits.py)
    calls |= set(spec_semantics.PATTERNS)  # (they change values by design: tests/passes/test_spec_semantics.py)
    calls |= set(ARITH_PATTERNS)  # (their cases, bit for bit: tests/passes/test_pad_arith.py)
    calls |= set(dot_layout.PATTERNS)  # (jax-lowered channel mixings: tests/passes/test_dot_layout.py)
    fires = {c.pattern for c in CASES if c.fires} | calls
    declines = {c.pattern for c in CASES if not c.fires} | calls
    assert fires == declines == set(patterns())


# ---------------------------------------------------------------- inlining

CALLS = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @twice(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = call @twice(%0) {no_inline} : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func private @twice(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""

RECURSIVE = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @main(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def test_inline_fires_except_no_inline():
    m = hf.Module.parse(CALLS)
    report = optimize_checked(m, "inline,symbol-dce")
    assert report.fired["call_of_function"] == 1
    assert m.op_counts()["func.call"] == 1, "the no_inline call stays"
    assert m.op_counts()["func.func"] == 2, "@twice is still called"


PRIVATE_ONLY = """
func.func private @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
"""


def test_symbol_passes_skip_a_module_of_one_public_function(monkeypatch):
    from hloforge.passes import pipeline
    ran = []
    monkeypatch.setattr(pipeline._Runner, "_mlir_pass", lambda self, name: ran.append(name))
    m = hf.trace(lambda x: ops.sin(x), sd((3,)))
    report = m.optimize("inline,symbol-dce,canonicalize")
    assert ran == ["canonicalize"], "nothing to inline or drop: neither pass runs"
    assert [p[0] for p in report.passes] == ["inline", "symbol-dce", "canonicalize"]
    for text in (CALLS, PRIVATE_ONLY):  # (another function, or a private one: both run)
        ran.clear()
        hf.Module.parse(text).optimize("symbol-dce")
        assert ran == ["symbol-dce"]


def test_inline_stops_at_recursion():
    m = hf.Module.parse(RECURSIVE)
    report = m.optimize("inline")  # (XLA cannot compile recursion: IR check only)
    assert report.fired["call_of_function"] == 0, "a call to the enclosing function is never inlined"
    assert m.op_counts()["func.call"] == 1


# ---------------------------------------------------------------- pipelines

def test_default_pipeline_removes_a_disguised_round_trip():
    def fn(x):
        y = ops.transpose(ops.transpose(x, (1, 0)), (1, 0))
        z = ops.fft(y, "RFFT", (8,))
        z = ops.pad(ops.pad(z, 0j, (0, 1), (0, 0)), 0j, (0, -1), (0, 0))
        return ops.fft(z * (0.5 + 0j) * (2 + 0j), "IRFFT", (8,))

    m = hf.trace(fn, sd((3, 8)))
    report = optimize_checked(m)
    assert m.op_counts() == {"func.func": 1, "func.return": 1}, str(m)
    assert report.fired["irfft_of_scaled_rfft"] + report.fired["irfft_of_rfft"] == 1
    assert report.ops_before["stablehlo.fft"] == 2 and "stablehlo.fft" not in report.ops_after


def test_rfft_of_irfft_is_kept():
    m = hf.trace(_fft_pair("RFFT", "IRFFT", (8,)), sd((3, 5), C64))
    optimize_checked(m)
    assert m.op_counts()["stablehlo.fft"] == 2


def test_finite_math_false_keeps_fft_pairs():
    m = hf.trace(_fft_pair("IRFFT", "RFFT", (8,)), sd((8,)))
    report = optimize_checked(m, finite_math=False)
    assert m.op_counts()["stablehlo.fft"] == 2
    assert report.skipped == ["inverse-fft-elimination", "fft-truncate", "dot-layout"]


def test_finite_math_assumption_is_what_changes_infinities():
    """The documented caveat: through an FFT pair an Inf spreads as NaN; without the pair it stays."""
    m = hf.trace(_fft_pair("IRFFT", "RFFT", (4,)), sd((4,)))
    x = np.array([np.inf, 0, 1, 2], F32)
    assert np.isnan(outputs(m, [x])[0]).any()
    m.optimize()
    np.testing.assert_array_equal(outputs(m, [x])[0], x)


def test_mlir_passes_by_name():
    m = hf.trace(lambda x: ops.sin(x) + ops.sin(x), sd((3,)))
    report = optimize_checked(m, "canonicalize, cse,symbol-dce")
    assert m.op_counts()["stablehlo.sine"] == 1
    assert [p[0] for p in report.passes] == ["canonicalize", "cse", "symbol-dce"]


def test_report():
    m = hf.trace(_fft_pair("IFFT", "FFT", (4,)), sd((4,), C64))
    report = m.optimize()
    text = str(report)
    assert "ifft_of_fft" in text and "stablehlo.fft" in text
    assert report.fired == {"ifft_of_fft": 1}
    assert report.ops_before["stablehlo.fft"] == 2 and report.seconds > 0
    names = [p[0] for p in report.passes]
    assert {"inline", "cse", "division-guard"} <= set(names)
    # the fixpoint families run as one pattern set, reported as one pass
    assert ("constant-fold+pad-canonicalize+pad-push+index-windows+fft-canonicalize+inverse-fft-elimination+"
            "fft-truncate") in names
    assert dict((p[0], p[2]) for p in report.passes)["division-guard"] == 0


def test_jit_optimizes_by_default(monkeypatch):
    calls = []
    real = hf.Module.optimize
    monkeypatch.setattr(hf.Module, "optimize", lambda self, *a, **k: calls.append(real(self, *a, **k)))
    fn = _fft_pair("IRFFT", "RFFT", (6,))
    x = random((2, 6), F32)
    assert_close(np.asarray(hf.jit(fn)(x)), x)
    assert len(calls) == 1 and calls[0].fired["irfft_of_rfft"] == 1
    assert_close(np.asarray(hf.jit(fn, optimize=False)(x)), x)
    assert len(calls) == 1


# ---------------------------------------------------------------- errors

def test_unknown_names():
    m = hf.trace(lambda x: x, sd((2,)))
    with pytest.raises(ValueError, match="unknown pass 'bogus'"):
        m.optimize("inline,bogus")
    with pytest.raises(ValueError, match="unknown pattern 'nope'"):
        m.optimize("pattern:nope")
    with pytest.raises(TypeError, match="comma-separated"):
        m.optimize(["inline"])
    with pytest.raises(TypeError, match="positional argument"):  # (not finite_math="dot-layout")
        m.optimize("canonicalize", "dot-layout")


def _one_operand_add(op, rewriter):
    """neg(x) -> add(x): an invalid op, for the error path."""
    with rewriter.ip:
        bad = ir.Operation.create("stablehlo.add", results=[op.result.type], operands=[op.operands[0]],
                                  loc=op.location)
    rewriter.replace_op(op, [bad.result])


def test_invalid_module_names_the_pass(monkeypatch):
    monkeypatch.setitem(pad_passes.PATTERNS, "one_operand_add", (stablehlo.NegOp, _one_operand_add))
    m = hf.trace(lambda x: -x, sd((2,)))
    with pytest.raises(ValueError, match=r"pass 'pad-canonicalize' produced an invalid module: .*operand"):
        m.optimize("pad-canonicalize")


def test_pattern_tables_are_documented():
    for name, (family, root, fn) in patterns().items():
        first = (fn.__doc__ or "").strip().splitlines()[0]
        assert "->" in first, f"{name}: docstring must start with the rewrite"
        assert "Preconditions" in fn.__doc__, name
    assert set(fft_passes.INVERSE) <= set(patterns())


# ---------------------------------------------------------------- random chains

STEPS = ("pad", "slice", "transpose", "unary", "scale", "rfft_pair", "fft_pair", "rfft", "irfft")


def _step(x, kind, rng):
    """Apply one random op of ``kind`` to the Tensor x (or return x when it does not apply)."""
    n, real = x.shape, x.dtype.kind == "f"
    if kind == "pad":
        interior = [int(rng.random() < 0.2) for _ in n]
        low = [int(rng.integers(-1, 3)) for _ in n]
        high = [max(int(rng.integers(-1, 3)), 1 - lo - s - (s - 1) * it) for lo, s, it in zip(low, n, interior)]
        return ops.pad(x, float(rng.choice([0.0, 1.5])), low, high, interior)
    if kind == "slice":
        start = [int(rng.integers(0, s)) for s in n]
        limit = [int(rng.integers(b + 1, s + 1)) for b, s in zip(start, n)]
        return ops.slice(x, start, limit, [int(rng.integers(1, 3)) for _ in n])
    if kind == "transpose":
        return ops.transpose(x, [int(p) for p in rng.permutation(len(n))])
    if kind == "unary":
        fns = [ops.sin, ops.neg, ops.tanh, ops.abs] if real else [ops.neg, ops.exp]
        return fns[int(rng.integers(len(fns)))](x * 0.5 if not real else x)
    if kind == "scale":
        return x * float(rng.choice([0.5, 2.0, -1.0]))
    k = int(rng.integers(1, min(len(n), 2) + 1))
    lengths = n[len(n) - k:]
    scale = complex(rng.choice([1.0, 0.5, 2.0]))
    if kind == "rfft_pair" and real:
        return ops.fft(ops.pad(ops.fft(x, "RFFT", lengths) * scale, 0j, [0] * len(n), [0] * len(n)),
                       "IRFFT", lengths)
    if kind == "fft_pair" and not real:
        first, second = ("FFT", "IFFT") if rng.random() < 0.5 else ("IFFT", "FFT")
        return ops.fft(ops.fft(x, first, lengths) * scale, second, lengths)
    if kind == "rfft" and real:
        return ops.fft(x, "RFFT", lengths)
    if kind == "irfft" and not real:
        last = 2 * n[-1] - 1 - int(n[-1] > 1 and rng.random() < 0.5)
        return ops.fft(x, "IRFFT", (*lengths[:-1], last))
    return x


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), dtype=st.sampled_from([F32, F64]),
       steps=st.lists(st.tuples(st.sampled_from(STEPS), st.integers(0, 2**16)), min_size=1, max_size=8))
def test_random_chains_keep_their_outputs(shape, dtype, steps):
    def fn(x):
        for kind, seed in steps:
            x = _step(x, kind, np.random.default_rng(seed))
        return x

    m = hf.trace(fn, sd(shape, dtype))
    optimize_checked(m)
    m.verify()


# ---------------------------------------------------------------- folding semantics against XLA

UNARY_BUILDERS = [ops.neg, ops.abs, ops.exp, ops.expm1, ops.log, ops.log1p, ops.sin, ops.cos, ops.tan, ops.tanh,
                  ops.sqrt, ops.rsqrt, ops.cbrt, ops.logistic, ops.floor, ops.ceil, ops.round,
                  ops.round_nearest_afz, ops.sign, ops.not_, ops.is_finite, ops.real, ops.imag]
BINARY_BUILDERS = [ops.add, ops.subtract, ops.multiply, ops.divide, ops.remainder, ops.maximum, ops.minimum,
                   ops.power, ops.and_, ops.or_, ops.xor, ops.atan2, ops.complex]
FOLD_DTYPES = [np.bool_, np.int8, np.int32, np.uint8, np.uint32, np.float16, hf.bfloat16, F32, F64, C64,
               np.complex128]


def _all_folds(dtype):
    a = random((6,), dtype, seed=5)
    b = random((6,), dtype, seed=6)
    if np.dtype(dtype).kind in "iu":
        b[b == 0] = 3  # (XLA's CPU compiler crashes on an integer division by a constant 0)
    if np.dtype(dtype).kind == "f" or np.dtype(dtype) == hf.bfloat16:
        a[:3] = np.array([-2.5, 0.5, 1.5], dtype)  # rounding ties

    def fn():
        outs = []
        for build, args in [(u, (ops.constant(a),)) for u in UNARY_BUILDERS] + \
                [(f, (ops.constant(a), ops.constant(b))) for f in BINARY_BUILDERS]:
            try:
                outs.append(build(*args))
            except TypeError:
                pass  # not defined for this dtype
        for direction in ("EQ", "LT") if np.dtype(dtype).kind != "c" else ("EQ",):
            outs.append(ops.compare(ops.constant(a), ops.constant(b), direction))
        for body, init in [("add", 0), ("mul", 1), ("max", _lowest(dtype)), ("min", _lowest(dtype, -1)),
                           ("and", _lowest(dtype, -1) if np.dtype(dtype).kind in "biu" else 0), ("or", 0)]:
            try:
                outs.append(ops.reduce(ops.constant(a.reshape(2, 3)), np.asarray(init).astype(dtype), (1,), body))
            except (TypeError, ValueError):
                pass  # not defined for this dtype
        for target in (np.int8, np.uint32, F32, C64, np.bool_):
            outs.append(ops.convert(ops.constant(a * 3 if np.dtype(dtype) != np.bool_ else a), target))
        return tuple(outs)
    return fn


def _lowest(dtype, sign=1):
    """The identity of max (sign=1) or of min and of bitwise and (sign=-1)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return np.iinfo(dtype).min if sign > 0 else np.iinfo(dtype).max
    return sign < 0 if dtype.kind == "b" else -sign * np.inf


@pytest.mark.parametrize("dtype", FOLD_DTYPES, ids=lambda d: np.dtype(d).name)
def test_constant_folding_matches_xla(dtype):
    m = hf.trace(_all_folds(dtype))
    before = outputs(m, [])
    report = m.optimize("constant-fold")
    assert report.fired["elementwise_of_constants"] > 0
    for got, want in zip(outputs(m, []), before):
        assert_same(got, want)


UNSUPPORTED = """
func.func @main(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<4xf8E4M3FN>) {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.pad %x, %c, low = [0, 1], high = [0, -1], interior = [0, 0]
      : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %1 = stablehlo.sine %0 : tensor<?x4xf32>
  %f8 = stablehlo.constant dense<1.0> : tensor<4xf8E4M3FN>
  %2 = stablehlo.negate %f8 : tensor<4xf8E4M3FN>
  return %1, %2 : tensor<?x4xf32>, tensor<4xf8E4M3FN>
}
"""


def test_dynamic_shapes_and_unknown_dtypes_are_left_alone():
    m = hf.Module.parse(UNSUPPORTED)
    before = m.op_counts()
    report = m.optimize()
    assert not report.fired and m.op_counts() == before


def test_needs_operand_skips_ops_without_such_an_operand(monkeypatch):
    from hloforge.passes import fold, pipeline
    from hloforge.passes._ir import NO_MATCH, needs_operand
    seen = []

    @needs_operand("stablehlo.constant")
    def spy(op, rewriter):
        seen.append([o.owner.name if not isinstance(o.owner, ir.Block) else "arg" for o in op.operands])
        return NO_MATCH

    monkeypatch.setitem(pipeline.FAMILIES, "constant-fold", {**fold.PATTERNS, "spy": (("stablehlo.multiply",), spy)})
    m = hf.trace(lambda x, y: (x * y) * 2.0 * (x * x), sd((3,)), sd((3,)))
    m.optimize("constant-fold")
    assert seen and all("stablehlo.constant" in s for s in seen), seen  # only x*y*2.0 reached it


def test_folding_a_scalar_bitcast_keeps_it_a_scalar():
    """A 0-d bitcast_convert of a constant folds to a 0-d constant (np.ascontiguousarray made it
    1-d, and the broadcast_in_dim after it raised in the pipeline)."""
    def f(x):
        bits = ops.bitcast_convert(ops.constant(np.float32(1.5)), np.int32)
        return ops.add(x, ops.broadcast_in_dim(bits, (3,), ()))
    m = hf.trace(f, np.zeros(3, np.int32))
    want = np.asarray(m.compile()(np.arange(3, dtype=np.int32)))
    m.optimize()
    assert "stablehlo.bitcast_convert" not in m.op_counts()
    np.testing.assert_array_equal(np.asarray(m.compile()(np.arange(3, dtype=np.int32))), want)
    assert want[0] == np.float32(1.5).view(np.int32)
