"""hloforge.numpy.pad (every numpy mode) against numpy.pad. Several pads share one traced function
to keep the number of compiles small (ops.pad's own tests: tests/ops/test_pad.py; ops.sort's:
tests/ops/test_sort.py)."""
import warnings

import numpy as np
import pytest

import hloforge as hf
import hloforge.numpy as hnp
from helpers import assert_close, check_all, random, run

ODD = {"reflect_type": "odd"}
# every mode and option form; the values suit unsigned and bool arrays too
MODES = [
    ("constant", {}), ("constant", {"constant_values": ((2, 1),)}), ("edge", {}),
    ("reflect", {}), ("reflect", ODD), ("symmetric", {}), ("symmetric", ODD), ("wrap", {}),
    ("linear_ramp", {"end_values": (2, 1)}), ("maximum", {}), ("minimum", {"stat_length": 2}),
    ("mean", {"stat_length": (1, 3)}), ("median", {}), ("median", {"stat_length": 2}),
]
# per rank: a shape (with size-1 axes) and widths mixing 0, small and wider than the axis
LAYOUTS = {
    1: ((5,), ((2, 13),)),
    2: ((3, 1), ((0, 7), (2, 1))),
    3: ((2, 3, 4), ((1, 0), (0, 0), (9, 2))),
    4: ((2, 1, 2, 3), ((0, 5), (1, 1), (0, 0), (2, 0))),
}
B, I8, I16, I32, I64 = np.bool_, np.int8, np.int16, np.int32, np.int64
U8, U16, U32, U64 = np.uint8, np.uint16, np.uint32, np.uint64
F16, BF16, F32, F64, C64, C128 = np.float16, hf.bfloat16, np.float32, np.float64, np.complex64, np.complex128
ALL = [B, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64, C64, C128]
MATRIX = ([(d, 1) for d in ALL] + [(d, 2) for d in (B, I8, U8, I64, F16, F32, F64, C64, C128)]
          + [(d, 3) for d in (B, U16, I32, F32, C128)] + [(d, 4) for d in (I8, U32, F16, F64, C64)])


@pytest.mark.parametrize("dtype,rank", MATRIX, ids=[f"{np.dtype(d).name}-rank{r}" for d, r in MATRIX])
def test_modes_match_numpy(dtype, rank):
    shape, width = LAYOUTS[rank]
    x = random(shape, dtype, seed=rank)
    got = run(lambda a: [hnp.pad(a, width, m, **kw) for m, kw in MODES], x)
    check_all(got, [np.pad(x, width, m, **kw) for m, kw in MODES], MODES)


@pytest.mark.parametrize("mode,kw", [("reflect", {}), ("reflect", ODD), ("symmetric", {}),
                                     ("symmetric", ODD), ("wrap", {})])
def test_widths_wider_than_the_axis_repeat_like_numpy(mode, kw):
    xs = [np.array([3, -1, 4, 1][:n], np.int32) for n in (1, 2, 3, 4)]
    widths = [(0, 9), (7, 2), (13, 11)]
    got = run(lambda *a: [hnp.pad(x, w, mode, **kw) for x in a for w in widths], *xs)
    labels = [(x.size, w) for x in xs for w in widths]
    check_all(got, [np.pad(x, w, mode, **kw) for x in xs for w in widths], labels)


def test_zero_widths_return_the_input():
    x = random((2, 3), np.float32)
    m = hf.trace(lambda a: [hnp.pad(a, 0, m, **kw) for m, kw in MODES], x)
    assert set(m.op_counts()) == {"func.func", "func.return"}
    assert_close(run(lambda a: hnp.pad(a, ((0, 0), (0, 0)), "median"), x), x)


def test_scalar_input():
    x = np.float32(2.5)
    got = run(lambda a: (hnp.pad(a, 3), hnp.pad(a, 2, "reflect")), x)
    check_all(got, [np.pad(x, 3), np.pad(x, 2, "reflect")], ["constant", "reflect"])


# ---------------------------------------------------------------- argument forms

def test_pad_width_forms():
    x = random((2, 3), np.int32)
    forms = [1, (1,), (1, 2), ((1, 2),), ((1, 2), (0, 3)), [[1], [2]], np.array([[0, 1], [2, 0]]),
             np.int64(2), {1: (1, 2)}, {-1: 2}, {0: 1}]
    got = run(lambda a: [hnp.pad(a, w, mode) for w in forms for mode in ("constant", "edge")], x)
    labels = [(w, mode) for w in forms for mode in ("constant", "edge")]
    check_all(got, [np.pad(x, w, mode) for w, mode in labels], labels)


def test_stat_length_forms():
    x = random((4, 5), np.float64)
    forms = [None, 2, (1, 3), ((1, 2), (3, 1)), 2.6, 10]
    cases = [(mode, s) for mode in ("maximum", "mean", "median") for s in forms]
    got = run(lambda a: [hnp.pad(a, ((2, 1), (1, 3)), mode, stat_length=s) for mode, s in cases], x)
    check_all(got, [np.pad(x, ((2, 1), (1, 3)), mode, stat_length=s) for mode, s in cases], cases)


def test_values_per_axis_side():
    x = random((2, 3, 2), np.float32)
    width = ((1, 2), (2, 1), (1, 1))
    per_axis = ((1, 2), (3, 4), (5, 6))
    cases = [("constant", {"constant_values": per_axis}), ("linear_ramp", {"end_values": per_axis}),
             ("constant", {"constant_values": [[7], [8], [9]]})]
    got = run(lambda a: [hnp.pad(a, width, m, **kw) for m, kw in cases], x)
    check_all(got, [np.pad(x, width, m, **kw) for m, kw in cases], cases)


def test_constant_values_cast_like_numpy():
    xi = np.arange(6, dtype=np.int32).reshape(2, 3)
    xu, xb = np.arange(3, dtype=np.uint8), np.array([True, False])
    cases = [(xi, {"constant_values": 1.7}), (xi, {"constant_values": ((-2.5, 300), (1, 2))}),
             (xu, {"constant_values": (-1, 2)}), (xb, {"constant_values": 2}),
             (xb, {"constant_values": (0.0, 0.5)})]
    got = run(lambda *a: [hnp.pad(x, 1, **kw) for x, (_, kw) in zip(a, cases)], *(x for x, _ in cases))
    check_all(got, [np.pad(x, 1, **kw) for x, kw in cases], [kw for _, kw in cases])


def test_constant_values_complex_into_real_warns_like_numpy():
    x = np.arange(3, dtype=np.float32)
    with pytest.warns(np.exceptions.ComplexWarning):
        expected = np.pad(x, 1, constant_values=1 + 2j)
    with pytest.warns(np.exceptions.ComplexWarning):
        got = run(lambda a: hnp.pad(a, 1, constant_values=1 + 2j), x)
    assert_close(got, expected)


def test_constant_values_tensor():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    got = run(lambda a, v: hnp.pad(a, ((1, 0), (2, 1)), constant_values=v), x, np.float64(-2.5))
    assert_close(got, np.pad(x, ((1, 0), (2, 1)), constant_values=np.float64(-2.5)))


def test_integer_mean_and_median_round_half_to_even():
    x = np.array([[0, 1], [0, 3], [1, 2], [-1, -2], [2, 3]], np.int32)
    got = run(lambda a: (hnp.pad(a, ((0, 0), (1, 1)), "mean"), hnp.pad(a, ((0, 0), (1, 1)), "median")), x)
    expected = np.pad(x, ((0, 0), (1, 1)), "mean")
    assert expected[:, 0].tolist() == [0, 2, 2, -2, 2]
    check_all(got, [expected, np.pad(x, ((0, 0), (1, 1)), "median")], ["mean", "median"])


def test_integer_linear_ramp_is_exact():
    x = np.array([[70, 5], [-20, -7]], np.int64)
    fractional = {"end_values": ((0.5, -1.25), (2, 3.75))}
    got = run(lambda a: (hnp.pad(a, ((0, 0), (10, 0)), "linear_ramp", end_values=-20),
                         hnp.pad(a, ((3, 2), (5, 4)), "linear_ramp", **fractional)), x)
    expected = np.pad(x, ((0, 0), (10, 0)), "linear_ramp", end_values=-20)
    assert expected[0, 7] == 42  # numpy's float64 evaluation; the exact ramp value is 43
    expected[0, 7] = 43
    check_all(got, [expected, np.pad(x, ((3, 2), (5, 4)), "linear_ramp", **fractional)], ["exact", "fractions"])


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_statistics_propagate_nan(dtype):
    x = np.array([[1, np.nan, 3, 4], [2, 5, 1, 0]], dtype)
    cases = [("median", {}), ("median", {"stat_length": 1}), ("mean", {}), ("maximum", {}), ("minimum", {}),
             ("maximum", {"stat_length": 1})]
    if dtype == np.complex64:
        x[1, 2] = complex(np.nan, 1)
        cases = cases[:3]
    got = run(lambda a: [hnp.pad(a, ((0, 0), (2, 1)), m, **kw) for m, kw in cases], x)
    # (an explicit atol: helpers.assert_close would derive a NaN one from the NaN values)
    check_all(got, [np.pad(x, ((0, 0), (2, 1)), m, **kw) for m, kw in cases], cases, atol=1e-4)


def test_empty_mode_has_the_shape_and_dtype():
    x = random((2, 3), np.int16)
    got = run(lambda a: hnp.pad(a, ((1, 2), (0, 1)), "empty"), x)
    assert got.shape == (5, 4) and got.dtype == np.int16
    assert_close(got[1:3, :3], x)


def test_size_zero_axes():
    x = np.zeros((0, 3), np.float32)
    cases = [("constant", ((1, 2), (1, 0)), {"constant_values": 5}), ("edge", ((0, 0), (2, 1)), {}),
             ("median", ((0, 0), (2, 1)), {}), ("reflect", 0, {})]
    got = run(lambda a: [hnp.pad(a, w, m, **kw) for m, w, kw in cases], x)
    check_all(got, [np.pad(x, w, m, **kw) for m, w, kw in cases], cases)
    assert run(lambda a: hnp.pad(a, 1, "empty"), x).shape == (2, 5)


def test_negative_widths_crop_in_constant_mode():
    x = random((4, 5), np.float32)
    got = run(lambda a: (hnp.pad(a, ((-1, 2), (3, -2)), constant_values=7), hnp.pad(a, -1),
                         hnp.pad(a, ((-4, 0), (0, 0)))), x)
    expected = [np.pad(x[1:, :-2], ((0, 2), (3, 0)), constant_values=7), x[1:-1, 1:-1], x[4:]]
    check_all(got, expected, ["pad and crop", "crop", "crop to empty"])
    m = hf.trace(lambda a: hnp.pad(a, ((-1, 2), (3, -2)), constant_values=7), x)
    assert m.op_counts()["stablehlo.pad"] == 1


# ---------------------------------------------------------------- emitted IR

def test_constant_mode_is_one_pad():
    spec = hf.ShapeDtype((3, 4, 5), np.float32)
    for kw in ({}, {"constant_values": 2.5}, {"constant_values": ((1, 1),)}):
        counts = hf.trace(lambda a: hnp.pad(a, ((1, 2), (0, 3), (4, -1)), **kw), spec).op_counts()
        assert counts["stablehlo.pad"] == 1, counts
        assert set(counts) == {"func.func", "func.return", "stablehlo.constant", "stablehlo.pad"}, counts


def test_constant_values_per_side_emit_one_pad_per_run():
    spec = hf.ShapeDtype((3, 4, 5), np.float32)
    # sides in order: 1 | 2 2 2 | 3 3  -> three runs
    counts = hf.trace(lambda a: hnp.pad(a, 1, constant_values=((1, 2), (2, 2), (3, 3))), spec).op_counts()
    assert counts["stablehlo.pad"] == 3


@pytest.mark.parametrize("mode,kw", [("edge", {}), ("reflect", {}), ("symmetric", {}), ("wrap", {}),
                                     ("reflect", ODD), ("symmetric", ODD)])
def test_copy_modes_use_slices_not_gathers(mode, kw):
    counts = hf.trace(lambda a: hnp.pad(a, ((2, 9), (0, 1), (7, 3)), mode, **kw),
                      hf.ShapeDtype((3, 1, 4), np.float32)).op_counts()
    allowed = {"func.func", "func.return", "stablehlo.slice", "stablehlo.reverse", "stablehlo.concatenate",
               "stablehlo.broadcast_in_dim"}
    if kw:
        allowed |= {"stablehlo.constant", "stablehlo.multiply", "stablehlo.subtract"}
    assert set(counts) <= allowed, counts
    assert "stablehlo.concatenate" in counts


def test_statistic_modes_ops():
    spec = hf.ShapeDtype((3, 4), np.float32)
    assert "stablehlo.sort" in hf.trace(lambda a: hnp.pad(a, 2, "median"), spec).op_counts()
    for mode in ("maximum", "minimum", "mean"):
        counts = hf.trace(lambda a: hnp.pad(a, 2, mode), spec).op_counts()
        assert "stablehlo.reduce" in counts and "stablehlo.gather" not in counts


# ---------------------------------------------------------------- errors

SPEC = hf.ShapeDtype((2, 3), np.float32)
PAD_ERRORS = [
    (lambda a: hnp.pad(a, ((1, 2), (3, 4), (5, 6))), ValueError,
     r"pad_width \(\(1, 2\), \(3, 4\), \(5, 6\)\) of shape \(3, 2\) cannot be broadcast to \(2, 2\)"),
    (lambda a: hnp.pad(a, ((1, 2), (3,))), ValueError, r"pad_width \(\(1, 2\), \(3,\)\) is ragged"),
    (lambda a: hnp.pad(a, 1.5), TypeError, r"pad_width 1.5 must be of integral type, got dtype float64"),
    (lambda a: hnp.pad(a, ((0, -1), (1, 1)), "edge"), ValueError,
     r"pad_width \(\(0, -1\), \(1, 1\)\) has negative values; only mode 'constant'"),
    (lambda a: hnp.pad(a, 1, "circular"), ValueError, r"mode 'circular' is not supported"),
    (lambda a: hnp.pad(a, 1, lambda v, w, i, k: None), TypeError, r"a callable mode .* is not supported"),
    (lambda a: hnp.pad(a, 1, "edge", constant_values=1), ValueError,
     r"unsupported keyword arguments for mode 'edge': \['constant_values'\]"),
    (lambda a: hnp.pad(a, 1, "reflect", reflect_type="even-ish"), ValueError,
     r"reflect_type 'even-ish' must be 'even' or 'odd'"),
    (lambda a: hnp.pad(a, 1, "mean", stat_length=-2), ValueError, r"stat_length -2 must be >= 0"),
    (lambda a: hnp.pad(a, 1, "maximum", stat_length=(0, 1)), ValueError,
     r"stat_length \(0, 1\) of 0 yields no value for mode 'maximum'"),
    (lambda a: hnp.pad(a, 1, constant_values=((1, 2, 3),)), ValueError,
     r"constant_values \(\(1, 2, 3\),\) of shape \(1, 3\) cannot be broadcast to \(2, 2\)"),
    (lambda a: hnp.pad(a, 1, "linear_ramp", end_values=[1, 2, 3]), ValueError,
     r"end_values \[1, 2, 3\] of shape \(3,\) cannot be broadcast"),
    (lambda a: hnp.pad(a, -2), ValueError, r"result shape \(-2, -1\) has a negative dimension"),
    (lambda a: hnp.pad(a, a[0, 0]), TypeError, r"pad_width must be static"),
    (lambda a: hnp.pad(a, 1, constant_values=a[0]), TypeError,
     r"constant_values as a Tensor must be 0-d, got Tensor\(shape=\(3,\), dtype=float32\)"),
    (lambda a: hnp.pad(a, 1, "linear_ramp", end_values=a[0, 0]), TypeError, r"end_values must be static"),
    (lambda a: hnp.pad(a, {0: (1, 2, 3)}), ValueError, r"pad_width\[0\] = \(1, 2, 3\) must be an int or"),
    (lambda a: hnp.pad(a.astype(np.int8), 1, constant_values=((1, 2), (300, 1))), OverflowError,
     r"constant_values entry 300 cannot be stored in int8"),
    (lambda a: hnp.pad(a, 1, "mean", stat_length="2"), TypeError, r"stat_length '2' must be numbers or None"),
]


@pytest.mark.parametrize("fn,error,match", PAD_ERRORS, ids=[m[:30] for _, _, m in PAD_ERRORS])
def test_pad_errors(fn, error, match):
    with pytest.raises(error, match=match):
        hf.trace(fn, SPEC)


@pytest.mark.parametrize("mode", ["edge", "reflect", "symmetric", "wrap", "linear_ramp", "maximum", "mean",
                                  "median"])
def test_extending_an_empty_axis_needs_data(mode):
    with pytest.raises(ValueError, match=rf"can't extend empty axis 0 of shape \(0, 3\) \(pad_width \(1, 0\)\) "
                                         rf"using modes other than 'constant' or 'empty' \(mode '{mode}'\)"):
        hf.trace(lambda a: hnp.pad(a, ((1, 0), (0, 0)), mode), hf.ShapeDtype((0, 3), np.float32))


def test_numpy_pad_warns_nothing_for_plain_inputs():
    x = random((3, 4), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hf.trace(lambda a: [hnp.pad(a, 2, m, **kw) for m, kw in MODES], x)
