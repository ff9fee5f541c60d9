"""hloforge.numpy.fft against numpy.fft (numpy is the oracle); ops.fft's own tests: tests/ops/test_fft.py."""
from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from helpers import assert_close, random, run

import hloforge as hf
from hloforge import numpy as hnp
from hloforge.frontend import dtypes

NORMS = (None, "backward", "ortho", "forward")
F16 = np.dtype(np.float16)
DTYPES = [np.dtype(d) for d in (np.float32, np.float64, np.complex64, np.complex128, np.int32,
                                np.bool_, np.float16)]
ONE_D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
N_D = ("fftn", "ifftn", "rfftn", "irfftn")
REAL_INPUT = ("rfft", "ihfft", "rfftn", "rfft2")


def _input(name, shape, dtype, seed=0):
    if name in REAL_INPUT and np.dtype(dtype).kind == "c":
        dtype = np.float64 if np.dtype(dtype) == np.complex128 else np.float32
    return random(shape, dtype, seed)


def _norms(name, kw):
    hfn = getattr(hnp.fft, name)
    return lambda a: [hfn(a, norm=m, **kw) for m in NORMS]


class Sweep:
    """The cases of one parametrized test, {id: (name, x, kw)}: ``name`` on ``x`` for every norm,
    every case in one program compiled on first use (XLA compiles one program of many small
    transforms about 2.5 times faster than each on its own), each case its own compile when that
    program fails to build (so its test shows its own error)."""

    def __init__(self, cases):
        self.cases, self.results = cases, None

    def __getitem__(self, case):
        if self.results is None:
            ids = list(self.cases)
            try:
                out = run(lambda *xs: [_norms(self.cases[i][0], self.cases[i][2])(x) for i, x in zip(ids, xs)],
                          *[self.cases[i][1] for i in ids])
                self.results = dict(zip(ids, out))
            except Exception:
                self.results = {}
        if case not in self.results:
            name, x, kw = self.cases[case]
            return run(_norms(name, kw), x)
        return self.results[case]


def check_norms(sweep, case, rtol=None):
    """Case ``case`` of ``sweep`` for every norm compared with numpy."""
    name, x, kw = sweep.cases[case]
    nfn = getattr(np.fft, name)
    for g, m in zip(sweep[case], NORMS):
        assert_close(g, nfn(x, norm=m, **kw), rtol=rtol)


def counts(fn, *args):
    c = hf.trace(fn, *args).op_counts()
    return c.get("stablehlo.fft", 0), c.get("stablehlo.transpose", 0)


# ---------------------------------------------------------------- 1-D transforms

def _rejects(name, dtype) -> bool:
    return name in REAL_INPUT and dtype.kind == "c"


ONE_D_DTYPES = Sweep({(name, dtype): (name, random((3, 9), dtype), {})
                      for name in ONE_D for dtype in DTYPES if not _rejects(name, dtype)})


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ONE_D)
def test_1d_dtypes(name, dtype):
    if _rejects(name, dtype):
        with pytest.raises(TypeError, match=f"{name}: input dtype {dtype} is complex"):
            hf.trace(getattr(hnp.fft, name), random((3, 9), dtype))
        return
    # numpy computes float16 in float32 but rounds its norm factor to float16
    check_norms(ONE_D_DTYPES, (name, dtype), rtol=2e-3 if dtype == F16 else None)


ONE_D_LENGTHS = Sweep({(name, length, n): (name, _input(name, (2, length), np.complex128, seed=length), {"n": n})
                       for name in ONE_D for length in (7, 8) for n in (None, 5, 6, 13)})


@pytest.mark.parametrize("n", [None, 5, 6, 13], ids=lambda n: f"n={n}")
@pytest.mark.parametrize("length", [7, 8])
@pytest.mark.parametrize("name", ONE_D)
def test_1d_lengths(name, length, n):
    check_norms(ONE_D_LENGTHS, (name, length, n))


ONE_D_AXES = Sweep({(name, axis): (name, _input(name, (6, 5, 4), np.complex64),
                                   {"axis": axis, "n": 7 if axis == 1 else None})
                    for name in ONE_D for axis in (0, 1, -3)})


@pytest.mark.parametrize("axis", [0, 1, -3])
@pytest.mark.parametrize("name", ONE_D)
def test_1d_axis(name, axis):
    check_norms(ONE_D_AXES, (name, axis))


def test_1d_bfloat16_computes_in_float32():
    x = random((4, 10), dtypes.bfloat16)
    x32 = x.astype(np.float32)
    got = run(lambda a: (hnp.fft.fft(a), hnp.fft.rfft(a, norm="ortho"), hnp.fft.irfft(a)), x)
    for g, e in zip(got, (np.fft.fft(x32), np.fft.rfft(x32, norm="ortho"), np.fft.irfft(x32))):
        assert_close(g, e)


def test_float16_result_dtypes_follow_numpy():
    x = random((4, 6), np.float16)
    got = run(lambda a: (hnp.fft.irfft(a), hnp.fft.hfft(a), hnp.fft.irfftn(a), hnp.fft.irfft2(a),
                         hnp.fft.rfft(a)), x)
    assert [g.dtype for g in got] == [np.float16, np.float16, np.float32, np.float32, np.complex64]
    assert_close(got[0], np.fft.irfft(x), rtol=2e-3)
    assert_close(got[2], np.fft.irfftn(x), rtol=2e-3)


def test_array_like_input():
    got = run(lambda: hnp.fft.fft([1.0, 2.0, 0.0, -1.0]))
    assert_close(got, np.fft.fft([1.0, 2.0, 0.0, -1.0]))


# ---------------------------------------------------------------- N-D transforms

ND_CASES = [  # (shape, s, axes)
    ((4, 6), None, None),
    ((5, 7), (4, 9), (0, 1)),
    ((3, 4, 5), None, (0,)),
    ((3, 4, 5), None, (-1, 0)),
    ((3, 4, 5), (6, 3), (2, 0)),
    ((3, 4, 5), None, (1, 0, 2)),
    ((4, 3), (5, 12), (0, 1)),
    ((2, 3, 4, 5), None, None),
    ((2, 3, 4, 5), (3, 2, -1, 4), (3, 1, 0, -2)),
    ((2, 3, 2, 3, 4), None, None),
    ((2, 3, 2, 3, 4), (3, 4, 2, 2, 5), (4, 2, 0, 1, 3)),
    ((2, 2, 3, 2, 2, 3, 2), None, None),
    ((3, 2, 2, 3, 2, 2, 3), None, (6, 0, 2, 4, 1, 5, 3)),
]


ND = Sweep({(name, i): (name, _input(name, shape, np.complex128),
                         {"s": s, "axes": axes} if s is not None or axes is not None else {})
           for name in N_D for i, (shape, s, axes) in enumerate(ND_CASES)})


@pytest.mark.parametrize("case", range(len(ND_CASES)), ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in ND_CASES])
@pytest.mark.parametrize("name", N_D)
def test_nd(name, case):
    check_norms(ND, (name, case))


AXES_3D = [p for k in (1, 2, 3) for p in itertools.permutations(range(3), k)]
ND_AXES = Sweep({(name, axes): (name, _input(name, (4, 5, 6), np.complex64, seed=len(axes)), {"axes": axes})
                 for name in N_D for axes in AXES_3D})


@pytest.mark.parametrize("axes", AXES_3D, ids=str)
@pytest.mark.parametrize("name", N_D)
def test_nd_axes_permutations(name, axes):
    check_norms(ND_AXES, (name, axes))


ND_DTYPES = Sweep({(name, dtype): (name, random((4, 3, 5), dtype), {"axes": (2, 0)})
                   for name in N_D for dtype in DTYPES if not _rejects(name, dtype)})


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", N_D)
def test_nd_dtypes(name, dtype):
    if _rejects(name, dtype):
        with pytest.raises(TypeError, match=f"{name}: input dtype {dtype} is complex"):
            hf.trace(getattr(hnp.fft, name), random((4, 3, 5), dtype))
        return
    check_norms(ND_DTYPES, (name, dtype), rtol=2e-3 if dtype == F16 else None)


TWO_D_KWS = {"default": {}, "axes": {"axes": (0, 2)}, "s": {"s": (3, 8), "axes": (-1, 1)}}
TWO_D = Sweep({(name, kw): (name, _input(name, (3, 4, 6), np.complex64), TWO_D_KWS[kw])
               for name in ("fft2", "ifft2", "rfft2", "irfft2") for kw in TWO_D_KWS})


@pytest.mark.parametrize("kw", list(TWO_D_KWS))
@pytest.mark.parametrize("name", ("fft2", "ifft2", "rfft2", "irfft2"))
def test_2d(name, kw):
    check_norms(TWO_D, (name, kw))


def test_s_without_axes_uses_the_last_axes():
    x = random((3, 4, 5), np.float64)
    got = run(lambda a: hnp.fft.rfftn(a, s=(6, 4)), x)
    assert_close(got, np.fft.rfftn(x, s=(6, 4), axes=(1, 2)))


def test_empty_axes_return_input_like_numpy():
    x = random((3, 4), np.float32)
    assert_close(run(lambda a: hnp.fft.fftn(a, axes=()), x), np.fft.fftn(x, axes=()))


# ---------------------------------------------------------------- round trips

def test_round_trips():
    x = random((3, 4, 5, 2, 3), np.float64)
    z = random((4, 7), np.complex128)

    def f(a, b):
        return (hnp.fft.irfftn(hnp.fft.rfftn(a), s=a.shape),
                hnp.fft.irfftn(hnp.fft.rfftn(a, axes=(3, 0, 2)), s=(2, 3, 5), axes=(3, 0, 2)),
                hnp.fft.ifftn(hnp.fft.fftn(b, norm="ortho"), norm="ortho"),
                hnp.fft.ifft(hnp.fft.fft(b, axis=0), axis=0),
                hnp.fft.irfft(hnp.fft.rfft(a), n=3),
                hnp.fft.hfft(hnp.fft.ihfft(a), n=3))
    got = run(f, x, z)
    for g, e in zip(got, (x, x, z, z, x, x)):
        assert_close(g, e.astype(g.dtype))


# ---------------------------------------------------------------- emitted IR

X3 = hf.ShapeDtype((4, 6, 8), np.float32)
Z3 = hf.ShapeDtype((4, 6, 8), np.complex64)


@pytest.mark.parametrize("fn,arg,expected", [
    (lambda a: hnp.fft.fft(a), Z3, (1, 0)),
    (lambda a: hnp.fft.ifft(a, n=5), Z3, (1, 0)),
    (lambda a: hnp.fft.rfft(a), X3, (1, 0)),
    (lambda a: hnp.fft.irfft(a), Z3, (1, 0)),
    (lambda a: hnp.fft.hfft(a), Z3, (1, 0)),
    (lambda a: hnp.fft.ihfft(a), X3, (1, 0)),
    (lambda a: hnp.fft.fftn(a), Z3, (1, 0)),
    (lambda a: hnp.fft.fftn(a, axes=(2, 1)), Z3, (1, 0)),
    (lambda a: hnp.fft.fft2(a, axes=(-1, -2)), Z3, (1, 0)),
    (lambda a: hnp.fft.rfftn(a, axes=(1, 2)), X3, (1, 0)),
    (lambda a: hnp.fft.rfftn(a, axes=(2, 1)), X3, (1, 2)),
    (lambda a: hnp.fft.irfftn(a, axes=(-2, -1)), Z3, (1, 0)),
    (lambda a: hnp.fft.irfft2(a, axes=(2, 1)), Z3, (1, 2)),
    (lambda a: hnp.fft.fft(a, axis=0), Z3, (1, 2)),
    (lambda a: hnp.fft.rfftn(a, axes=(0, 2)), X3, (1, 2)),
    (lambda a: hnp.fft.fftn(a), hf.ShapeDtype((2, 3, 4, 5), np.complex64), (2, 2)),
    (lambda a: hnp.fft.rfftn(a), hf.ShapeDtype((2, 3, 4, 5, 6), np.float32), (2, 2)),
    (lambda a: hnp.fft.irfftn(a), hf.ShapeDtype((2, 3, 4, 5, 6), np.complex64), (2, 2)),
    (lambda a: hnp.fft.fftn(a), hf.ShapeDtype((2,) * 7, np.complex64), (3, 3)),
    (lambda a: hnp.fft.rfft(a), hf.ShapeDtype((14, 15, 0, 17), np.float32), (0, 0)),
])
def test_ir_fft_and_transpose_counts(fn, arg, expected):
    assert counts(fn, arg) == expected


def test_ir_no_extra_ops_for_default_arguments():
    c = hf.trace(lambda a: hnp.fft.rfftn(a), X3).op_counts()
    assert set(c) == {"func.func", "func.return", "stablehlo.fft"}
    c = hf.trace(lambda a: hnp.fft.fft(a, n=5, norm="ortho"), Z3).op_counts()
    assert c["stablehlo.slice"] == 1 and c["stablehlo.multiply"] == 1 and "stablehlo.pad" not in c
    c = hf.trace(lambda a: hnp.fft.irfft(a, n=20), Z3).op_counts()
    assert c["stablehlo.pad"] == 1 and "stablehlo.slice" not in c


def test_ir_splits_into_at_most_three_dims():
    module = hf.trace(lambda a: hnp.fft.fftn(a), hf.ShapeDtype((2,) * 7, np.complex64))
    lengths = re.findall(r"stablehlo\.fft .*length = \[([\d, ]*)\]", module.text)
    assert sorted(len(x.split(",")) for x in lengths) == [1, 3, 3]


# ---------------------------------------------------------------- zero-size batch dims

@pytest.mark.parametrize("name,kw", [
    ("fft", {}), ("rfft", {"n": 10}), ("irfft", {}), ("hfft", {"n": 5}), ("ihfft", {}),
    ("fftn", {"axes": (0, 3)}), ("rfftn", {"axes": (3, 1)}), ("irfftn", {"axes": (0, 1, 3)}),
    ("fft2", {"axes": (0, 1)}), ("ifft2", {"s": (3, 20), "axes": (-1, 1)}),
])
def test_zero_size_batch(name, kw):
    x = _input(name, (14, 15, 0, 17), np.complex64)
    f = lambda a: getattr(hnp.fft, name)(a, **kw)  # noqa: E731
    assert counts(f, x)[0] == 0
    assert_close(run(f, x), getattr(np.fft, name)(x, **kw))


def test_zero_length_axis_padded_by_n():
    x = np.zeros((3, 0), np.float32)
    assert_close(run(lambda a: hnp.fft.fft(a, n=4), x), np.fft.fft(x, n=4))


# ---------------------------------------------------------------- fftfreq, fftshift

def test_fftfreq():
    cases = [(1, 1.0), (4, 1.0), (5, 0.1), (8, np.float32(0.5)), (7, 2)]
    got = run(lambda: [f(n, d) for n, d in cases for f in (hnp.fft.fftfreq, hnp.fft.rfftfreq)])
    expected = [f(n, d) for n, d in cases for f in (np.fft.fftfreq, np.fft.rfftfreq)]
    for g, e in zip(got, expected):
        assert_close(g, e)
    assert hf.trace(lambda: hnp.fft.fftfreq(6, d=3.0, device="cpu")).op_counts()["stablehlo.constant"] == 1


@pytest.mark.parametrize("shape,axes", [
    ((7,), None), ((6, 5), None), ((6, 5), 0), ((4, 5, 3), (-1, 0)), ((4, 5), (1, 1)), ((3, 0), None)])
def test_fftshift(shape, axes):
    x = random(shape, np.int32)
    got = run(lambda a: (hnp.fft.fftshift(a, axes), hnp.fft.ifftshift(a, axes),
                         hnp.fft.ifftshift(hnp.fft.fftshift(a, axes), axes)), x)
    for g, e in zip(got, (np.fft.fftshift(x, axes), np.fft.ifftshift(x, axes), x)):
        assert_close(g, e)


def test_fftshift_of_fftfreq_is_sorted():
    got = run(lambda: hnp.fft.fftshift(hnp.fft.fftfreq(9, 0.5)))
    assert_close(got, np.fft.fftshift(np.fft.fftfreq(9, 0.5)))
    assert (np.diff(got) > 0).all()


# ---------------------------------------------------------------- errors

Z2 = hf.ShapeDtype((4, 6), np.complex64)


@pytest.mark.parametrize("fn,exc,match", [
    (lambda a: hnp.fft.fftn(a, axes=(0, 0)), ValueError, r"fftn: axes \(0, 0\) repeat an axis"),
    (lambda a: hnp.fft.rfft2(a.real, axes=(1, -1)), ValueError, r"rfft2: axes \(1, -1\) repeat an axis"),
    (lambda a: hnp.fft.fft(a, axis=2), np.exceptions.AxisError,
     "fft: axis 2 is out of bounds for array of dimension 2"),
    (lambda a: hnp.fft.irfftn(a, axes=(0, -3)), IndexError,
     "irfftn: axis -3 is out of bounds for array of dimension 2"),
    (lambda a: hnp.fft.fft(a, axis=1.0), TypeError, "fft: axis must be an integer, got 1.0"),
    (lambda a: hnp.fft.fftn(a, s=(3,), axes=(0, 1)), ValueError,
     r"fftn: s \(3,\) and axes \(0, 1\) have different lengths"),
    (lambda a: hnp.fft.fftn(a, s=3), TypeError, "fftn: s must be a sequence of ints, got 3"),
    (lambda a: hnp.fft.fftn(a, axes=1), TypeError, "fftn: axes must be a sequence of ints, got 1"),
    (lambda a: hnp.fft.fft(a, n=0), ValueError, r"fft: invalid number of FFT data points \(0\) specified "
                                                r"for axis 1"),
    (lambda a: hnp.fft.ifft2(a, s=(3, -2)), ValueError, r"ifft2: invalid number of FFT data points \(-2\)"),
    (lambda a: hnp.fft.fft(a, n=2.5), TypeError, "fft: n or s for axis 1 must be an integer, got 2.5"),
    (lambda a: hnp.fft.irfft(a[:, :1]), ValueError, r"irfft: invalid number of FFT data points \(0\)"),
    (lambda a: hnp.fft.fftn(a[:0]), ValueError, r"fftn: invalid number of FFT data points \(0\) specified "
                                                r"for axis 0"),
    (lambda a: hnp.fft.fft(a, norm="bogus"), ValueError, "fft: invalid norm 'bogus'; should be None"),
    (lambda a: hnp.fft.hfft(a, norm="Ortho"), ValueError, "hfft: invalid norm 'Ortho'"),
    (lambda a: hnp.fft.ihfft(a.real, norm=1), ValueError, "ihfft: invalid norm 1"),
    (lambda a: hnp.fft.rfft(a), TypeError, "rfft: input dtype complex64 is complex; rfft needs real input"),
    (lambda a: hnp.fft.ihfft(a), TypeError, "ihfft: input dtype complex64 is complex"),
    (lambda a: hnp.fft.rfftn(a), TypeError, "rfftn: input dtype complex64 is complex"),
    (lambda a: hnp.fft.rfftn(a.real, axes=()), ValueError, r"rfftn: needs at least one axis, got axes \(\)"),
    (lambda a: hnp.fft.fft(a, out=np.zeros(6)), TypeError, "fft: out= is not supported"),
    (lambda a: hnp.fft.fftshift(a, axes=(0, 5)), np.exceptions.AxisError,
     "fftshift: axis 5 is out of bounds for array of dimension 2"),
    (lambda a: hnp.fft.fftfreq(0), ValueError, "fftfreq: n must be >= 1, got 0"),
    (lambda a: hnp.fft.rfftfreq(2.5), ValueError, "rfftfreq: n should be an integer, got 2.5"),
    (lambda a: hnp.fft.fftfreq(4, d=0.0), ValueError, "fftfreq: sample spacing d must be nonzero, got 0.0"),
    (lambda a: hnp.fft.fftfreq(4, d=a), TypeError, "fftfreq: d must be a Python or numpy scalar"),
])
def test_errors(fn, exc, match):
    with pytest.raises(exc, match=match):
        hf.trace(fn, Z2)
