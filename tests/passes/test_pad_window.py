"""pad-push's pads into windowed ops and reductions (passes/pad_window.py): over random shapes, paddings,
dilations and strides, a pad of a convolution's input or of a reduce_window's operand moves into the
op's padding, and a reduce of a pad reduces the pad's operand;
max and min windows keep every bit on inputs with -0.0, Inf and NaN without finite math, sums and
convolutions agree to rounding under finite math. (Firing and declining cases: tests/passes/test_patterns.py.)"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import hloforge as hf
from hloforge import ops
from test_pad_arith import bits, inputs

F32 = np.float32


INIT = {"max": -np.inf, "min": np.inf, "add": 0.0}  # (each body's identity: the pads pad with it)


def _pad_ops(m):
    return m.op_counts().get("stablehlo.pad", 0)


def _draw_pad(data, ints):
    """(rank, shape, low, high) of a random pad; ``ints(lo, hi)`` draws a list of rank ints."""
    rank = data.draw(st.integers(1, 3))
    shape = data.draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    return rank, shape, ints(0, 2, rank), ints(0, 2, rank)


def _ints(data):
    return lambda lo, hi, n: data.draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n))


def _check_pattern(m, pattern, body):
    """Run ``pattern`` alone (finite math only for sums, and for reduce_of_pad, whose float max and min wait
    for it: subnormals, below); max and min keep every bit on inputs with -0.0, Inf and NaN (no subnormals),
    sums agree to rounding on finite inputs."""
    args = inputs(m, seed=sum(m.signature[0][0].shape))
    if body == "add":
        args = [np.where(np.isfinite(a), a, 1.5).astype(F32) for a in args]
    want = [np.asarray(o) for o in m.compile().call_flat(args)]
    report = m.optimize(f"pattern:{pattern}", finite_math=body == "add" or pattern == "reduce_of_pad")
    assert report.fired[pattern] == 1
    got = [np.asarray(o) for o in m.compile().call_flat(args)]
    if body == "add":
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-6)
    else:
        assert [bits(np.atleast_1d(g)) for g in got] == [bits(np.atleast_1d(w)) for w in want]


@settings(max_examples=15, deadline=None)
@given(data=st.data(), body=st.sampled_from(["max", "min", "add"]))
def test_reduce_window_of_pad_over_random_windows(data, body):
    ints = _ints(data)
    rank, shape, low, high = _draw_pad(data, ints)
    dilations = ints(1, 2, rank)
    own = data.draw(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=rank, max_size=rank))
    dilated = [(n - 1) * d + 1 + lo + hi + a + b for n, d, lo, hi, (a, b) in zip(shape, dilations, low, high, own)]
    window = [data.draw(st.integers(1, n)) for n in dilated]
    strides = ints(1, 2, rank)

    def fn(x):
        return ops.reduce_window(ops.pad(x, INIT[body], low, high), F32(INIT[body]), window, window_strides=strides,
                                 base_dilations=dilations, padding=own, body=body)

    m = hf.trace(fn, hf.ShapeDtype(shape, F32))
    _check_pattern(m, "reduce_window_of_pad", body)
    assert _pad_ops(m) == 0


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_convolution_of_pad_over_random_convolutions(data):
    n = data.draw(st.integers(1, 2))  # spatial dims
    spatial = data.draw(st.lists(st.integers(2, 5), min_size=n, max_size=n))
    kernel = [data.draw(st.integers(1, k)) for k in spatial]
    low = data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    high = data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    lhs_dilation = data.draw(st.lists(st.integers(1, 2), min_size=n, max_size=n))
    rhs_dilation = data.draw(st.lists(st.integers(1, 2), min_size=n, max_size=n))
    own = data.draw(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=n, max_size=n))
    strides = data.draw(st.lists(st.integers(1, 2), min_size=n, max_size=n))
    out_dims = [(s - 1) * ld + 1 + lo + hi + a + b - ((k - 1) * rd + 1)
                for s, ld, lo, hi, (a, b), k, rd in zip(spatial, lhs_dilation, low, high, own, kernel, rhs_dilation)]
    if min(out_dims) < 0:
        return  # (the window does not fit)

    def fn(x, w):
        return ops.convolution(ops.pad(x, 0.0, [0, 0] + low, [0, 0] + high), w, window_strides=strides,
                               padding=own, lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation)

    specs = hf.ShapeDtype([2, 3] + spatial, F32), hf.ShapeDtype([4, 3] + kernel, F32)
    m = hf.trace(fn, *specs)
    rng = np.random.default_rng(sum(spatial + kernel))
    args = [rng.standard_normal(s.shape).astype(F32) for s in specs]
    want = np.asarray(m.compile().call_flat(args)[0])
    m.optimize("pattern:convolution_of_pad")
    assert _pad_ops(m) == 0
    np.testing.assert_allclose(np.asarray(m.compile().call_flat(args)[0]), want, rtol=1e-5, atol=1e-5)


@settings(max_examples=15, deadline=None)
@given(data=st.data(), body=st.sampled_from(["max", "min", "add"]))
def test_reduce_of_pad_over_random_reductions(data, body):
    ints = _ints(data)
    rank, shape, low, high = _draw_pad(data, ints)
    interior = ints(0, 1, rank)
    dims = sorted(data.draw(st.sets(st.integers(0, rank - 1), min_size=1)))

    def fn(x):
        return ops.reduce(ops.pad(x, INIT[body], low, high, interior), F32(INIT[body]), dims, body)

    _check_pattern(hf.trace(fn, hf.ShapeDtype(shape, F32)), "reduce_of_pad", body)


def _min_of_padded(value):
    return lambda x: ops.reduce(ops.pad(x, value, (1,), (0,)), value, (0,), "min")


def test_reduce_of_pad_leaves_float_max_and_min_to_finite_math():
    """The optimize sweep (benchmarks/optimize_sweep.py, seed 1795): min(-0.0, -0.0, 4e-45) gave -0.0 and,
    without the padding's copy, min(-0.0, 4e-45) gave 4e-45; min(2.0, 2.0, 4e-45) gave +0.0 and min(2.0, 4e-45)
    4e-45. XLA:CPU compares a subnormal as zero and keeps one of equal operands, or flushes it, by the number
    and order of the elements it reduces. So float max and min keep their pads without finite math."""
    x = np.array([4e-45], np.float32)
    for value in (-0.0, 2.0, np.inf):
        m = hf.trace(_min_of_padded(np.float32(value)), hf.ShapeDtype((1,), np.float32))
        want = np.asarray(m.compile()(x))
        assert m.optimize(finite_math=False).fired["reduce_of_pad"] == 0, value
        assert np.asarray(m.compile()(x)).tobytes() == want.tobytes(), value
        m = hf.trace(_min_of_padded(np.float32(value)), hf.ShapeDtype((1,), np.float32))
        assert m.optimize(finite_math=True).fired["reduce_of_pad"] == 1
    m = hf.trace(_min_of_padded(np.int32(-3)), hf.ShapeDtype((1,), np.int32))
    assert m.optimize(finite_math=False).fired["reduce_of_pad"] == 1  # (integers: exact)
