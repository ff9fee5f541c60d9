"""Module.optimize() never changes a result, bit for bit: a few hundred generated programs in the
style of StableHLO's testdata (constants in, every op family and dtype, edge values), each run raw
and optimized; the folding patterns fire where evaluate computes XLA's bits and not elsewhere;
reduce_precision's cases of StableHLO's interpreter tests; shape computations are left to shape
refinement."""
from __future__ import annotations

import numpy as np
import pytest

import hloforge as hf
from hloforge import ops
from hloforge.frontend import dtypes
from hloforge.frontend.ops.bits import reduce_precision_numpy
from hloforge.frontend.registry import OPS

from helpers import ALL_DTYPES
from test_registry_dtypes import values

F32, F64, C64, I32 = (np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.int32))


# ---------------------------------------------------------------- generated programs

def _c(a):
    return ops.constant(np.asarray(a))


def _bcast(a):
    """``a`` as XLA sees a non-constant: a broadcast of a constant (its simplifier rewrites ops of
    such values and constants before folding them)."""
    a = np.asarray(a)
    return ops.reshape(ops.broadcast_in_dim(_c(a[None]), (1,) + a.shape, tuple(range(a.ndim + 1))), a.shape)


def _unary(name):
    return lambda x, y, z: [OPS[name].builder(_c(x)), OPS[name].builder(_bcast(x))]


def _binary(name):
    def program(x, y, z):
        f = OPS[name].builder
        return [f(_c(x), _c(y)), f(_bcast(x), _c(y)), f(_c(x), _bcast(y)), f(f(_c(x), _c(y)), _c(z))]
    return program


def _compare(x, y, z):
    return [ops.select(ops.compare(_c(x), _c(y), d), _c(z), _c(x)) for d in ("EQ", "NE", "LT", "GE")]


def _clamp(x, y, z):
    return [ops.clamp(_c(np.minimum(x, y)), _c(z), _c(np.maximum(x, y)))]


def _converts(x, y, z):
    return [ops.convert(_c(x), t) for t in ALL_DTYPES]


def _reductions(x, y, z):
    out = []
    for body in ("add", "mul", "max", "min", "and", "or"):
        for init in _inits(body, x.dtype):
            try:
                out += [ops.reduce(_c(x.reshape(4, -1)), init, (1,), body), ops.reduce(_c(x[:3]), init, (0,), body)]
            except TypeError:
                break
    return out


def _inits(body, dtype):
    """The identity of ``body`` and a value that is not one."""
    if dtype == np.bool_:
        return [np.array(body in ("mul", "and", "min")), np.array(body not in ("mul", "and", "min"))]
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        ident = {"add": 0, "mul": 1, "max": info.min, "min": info.max, "or": 0,
                 "and": -1 if dtype.kind == "i" else info.max}[body]
        return [np.array(ident, dtype), np.array(3, dtype)]
    ident = {"add": 0.0, "mul": 1.0, "max": -np.inf, "min": np.inf}.get(body, 0.0)
    return [np.array(ident).astype(dtype), np.array(2.0).astype(dtype)]


def _contractions(x, y, z):
    a, b = x.reshape(4, -1)[:, :6], y.reshape(-1, 4)[:6]
    exact = (np.arange(24).reshape(4, 6) % 5 - 2).astype(x.dtype)
    return [ops.dot_general(_c(a), _c(b), (), (), (1,), (0,)), ops.dot_general(_c(exact), _c(exact.T), (), (), (1,), (0,)),
            ops.dot_general(_bcast(exact), _c(exact.T), (), (), (1,), (0,)),
            ops.dot_general(_c(a), _c(b), (), (), (1,), (0,), preferred_element_type=_wider(x.dtype)),
            ops.dot_general(_c(exact), _c(exact.T), (), (), (1,), (0,), preferred_element_type=_wider(x.dtype))]


def _wider(dtype):
    """A contraction's wider accumulator for ``dtype`` operands (bool: none, the dtype itself)."""
    if dtype.kind in "iu":
        return np.dtype(f"{dtype.kind}8")
    return {"c": np.complex128, "b": np.bool_}.get(dtype.kind, np.float32 if dtype.itemsize < 4 else np.float64)


def _windows(x, y, z):
    out = []
    for body, init in (("add", 0), ("max", -np.inf if x.dtype.kind in "fcV" else 0)):
        try:
            out.append(ops.reduce_window(_c(x.reshape(4, -1)), np.array(init).astype(x.dtype), (2, 2),
                                         window_strides=(1, 2), padding=((1, 0), (0, 1)), body=body))
        except (TypeError, ValueError):
            pass
    return out


def _movement(x, y, z):
    m = _c(x.reshape(4, -1))
    return [ops.pad(m, x[3], (1, -1), (0, 2), (1, 0)), ops.slice(m, (0, 1), (4, 5), (2, 3)), ops.reverse(m, (0, 1)),
            ops.transpose(m, (1, 0)), ops.reshape(m, (2, x.size // 2)),
            ops.broadcast_in_dim(_c(x[:3]), (2, 3), (1,)), ops.concatenate([m, _c(y.reshape(4, -1))], 1),
            ops.dynamic_slice(m, (ops.constant(np.int32(3)), ops.constant(np.int32(-2))), (2, 3)),
            ops.dynamic_update_slice(m, _c(y.reshape(4, -1)[:2, :2]), (ops.constant(np.int32(1)), ops.constant(np.int32(9)))),
            ops.gather(m, _c(np.array([[1, 2], [3, 0]], np.int32)), (1,), (0,), (0, 1), 1, (1, 3)),
            ops.concatenate([_c(x[:2]), ops.pad(_c(y[:3]), z[0], (2,), (1,))], 0)]


def _sorts(x, y, z):
    if x.dtype.kind == "c":
        return []
    return [*ops.sort([_c(x.reshape(4, -1)), _c(y.reshape(4, -1))], 1, "LT", is_stable=True),
            *ops.sort([_c(x)], 0, "GT")]


def _bit_ops(x, y, z):
    out = []
    if x.dtype.kind in "fV":
        out += [ops.reduce_precision(_c(x), e, m) for e, m in ((5, 10), (8, 7), (5, 0), (2, 1))]
    if x.dtype.kind in "iuf" or x.dtype == dtypes.bfloat16:
        out.append(ops.bitcast_convert(_c(x), np.dtype(f"u{x.dtype.itemsize}") if x.dtype.kind != "u" else
                                       np.dtype(f"i{x.dtype.itemsize}")))
    return out


def _iota_arithmetic(x, y, z):
    if x.dtype == np.bool_ or x.dtype.kind == "c":
        return []
    i = ops.iota((300,), x.dtype)
    return [ops.add(i, ops.broadcast_in_dim(_c(x[0]), (300,), ())), ops.multiply(i, i)]


def _spectral(x, y, z):
    if x.dtype.kind != "c":
        return []
    return [ops.fft(_c(x.reshape(4, -1)), "FFT", (x.size // 4,)), ops.fft(_c(x.reshape(-1, 1)), "FFT", (1,))]


PROGRAMS = {
    **{f"unary:{n}": _unary(n) for n in sorted(OPS) if {"elementwise", "unary"} <= OPS[n].traits
       and n not in ("stablehlo.convert", "stablehlo.reduce_precision")},
    **{f"binary:{n}": _binary(n) for n in sorted(OPS) if {"elementwise", "binary"} <= OPS[n].traits
       and n != "stablehlo.compare"},  # (compare takes a direction: "compare" below)
    "compare": _compare, "clamp": _clamp, "convert": _converts, "reduce": _reductions,
    "dot_general": _contractions, "reduce_window": _windows, "movement": _movement, "sort": _sorts,
    "bits": _bit_ops, "iota": _iota_arithmetic, "fft": _spectral,
}


def _programs(dtype):
    """(name, outputs) of every generated program that takes ``dtype``; traced into one module."""
    rows = [values(dtype, seed) for seed in (11, 12, 13)]
    built = []

    def main():
        outs = []
        for name, program in PROGRAMS.items():
            for r in range(rows[0].shape[0]):
                x, y, z = (v[r] for v in rows)
                if name in ("binary:stablehlo.divide", "binary:stablehlo.remainder") and dtype.kind in "iu":
                    y = np.where((y == 0) | (y == np.array(-1).astype(dtype)), np.array(5, dtype), y)
                    z = np.where((z == 0) | (z == np.array(-1).astype(dtype)), np.array(5, dtype), z)
                try:
                    results = program(x, y, z)
                except (TypeError, ValueError):
                    continue  # (the op does not take this dtype)
                built.append((name, r, len(results)))
                outs += results
        return outs

    return hf.trace(main), built


def _bits(a):
    a = np.ascontiguousarray(np.asarray(a))
    return a.view(np.uint8).reshape(a.size, -1) if a.size else a.view(np.uint8).reshape(0, 1)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
def test_optimize_keeps_every_bit_of_generated_programs(dtype):
    module, built = _programs(dtype)
    assert len(built) >= 20
    raw = [np.asarray(o) for o in module.compile().call_flat([])]
    optimized = module.clone()
    report = optimized.optimize()
    got = [np.asarray(o) for o in optimized.compile().call_flat([])]
    assert sum(n for p, n in report.fired.items() if p.endswith(("_of_constant", "_of_constants"))) > 20
    outputs = iter(zip(raw, got))
    changed = []
    for name, row, count in built:
        for _ in range(count):
            r, g = next(outputs)
            bad = np.flatnonzero((_bits(r) != _bits(g)).any(axis=1))
            if len(bad):
                changed.append(f"{name} (row {row}): {len(bad)} elements, e.g. {r.reshape(-1)[bad[:3]]} raw vs "
                               f"{g.reshape(-1)[bad[:3]]} optimized")
    assert not changed, "\n".join(changed)


def test_generated_programs_cover_every_op_family():
    assert len(PROGRAMS) >= 60
    count = sum(len(_programs(d)[1]) for d in (F32, I32, C64, np.dtype(np.bool_)))
    assert count >= 300  # (four of the fifteen dtypes)


# ---------------------------------------------------------------- the folder: fires, and does not

def _folds(fn) -> int:
    m = hf.trace(fn)
    return sum(n for p, n in m.optimize().fired.items() if p.endswith(("_of_constant", "_of_constants")))


@pytest.mark.parametrize("why,fn", [
    ("an exact float sum", lambda: ops.add(_c(np.float32([1.5, 2.0])), _c(np.float32([0.25, -8.0])))),
    ("a correctly rounded float product", lambda: ops.multiply(_c(np.float32([0.1])), _c(np.float32([3.0])))),
    ("real sqrt is correctly rounded", lambda: ops.sqrt(_c(np.float32([2.0, 3.0])))),
    ("division by a power of two", lambda: ops.divide(_c(np.float32([3.0, 0.1])), _c(np.float32([4.0, 0.5])))),
    ("float16 arithmetic is float32 arithmetic rounded once",
     lambda: ops.multiply(_c(np.float16([0.1, 3.3])), _c(np.float16([7.0, -0.3])))),
    ("complex add", lambda: ops.add(_c(np.complex64([1 + 2j])), _c(np.complex64([0.5 - 1j])))),
    ("a sum of small integers in float32", lambda: ops.reduce(_c(np.float32([1, 2, 3, 4])), np.float32(0), (0,))),
    ("a product whose partial products are exact", lambda: ops.reduce(_c(np.float32([3, 0.5, -5])), np.float32(1), (0,),
                                                                     "mul")),
    ("an exact float dot", lambda: ops.dot_general(_c(np.float32([[1, 2], [3, 4]])), _c(np.float32([0.5, -1])), (), (),
                                                   (1,), (0,))),
    ("integer wrap-around", lambda: ops.multiply(_c(np.int8([100])), _c(np.int8([3])))),
    ("round_nearest_afz keeps -0", lambda: ops.round_nearest_afz(_c(np.float32([-0.25, 2.5])))),
    ("reduce_precision of NaN with mantissa bits", lambda: ops.reduce_precision(_c(np.float32([np.nan, 1.1])), 5, 10)),
    ("a max over int8", lambda: ops.reduce(_c(np.int8([-3, 7, 2])), np.int8(-128), (0,), "max")),
    ("a length-1 FFT", lambda: ops.fft(_c(np.complex64([[1 + 1j], [2]])), "FFT", (1,))),
])
def test_folder_folds_what_xla_computes_exactly(why, fn):
    assert _folds(fn) > 0, why


@pytest.mark.parametrize("why,fn", [
    ("exp: XLA's kernels and its folder round it their own ways", lambda: ops.exp(_c(np.float32([0.3, 1.7])))),
    ("tanh", lambda: ops.tanh(_c(np.float32([0.3])))),
    ("cosh (CHLO)", lambda: OPS["chlo.cosh"].builder(_c(np.float32([8.46])))),
    ("log1p of complex", lambda: ops.log1p(_c(np.complex64([0.5 + 1j])))),
    ("power", lambda: ops.power(_c(np.float32([2.0])), _c(np.float32([0.5])))),
    ("complex multiply", lambda: ops.multiply(_c(np.complex64([1 + 2j])), _c(np.complex64([3 - 1j])))),
    ("complex abs", lambda: ops.abs(_c(np.complex64([3 + 4j])))),
    ("x / 3: XLA computes x * (1/3)", lambda: ops.divide(_c(np.float32([1.0])), _c(np.float32([3.0])))),
    ("a subnormal result (flushed at run time)", lambda: ops.multiply(_c(np.float32([1e-30])), _c(np.float32([1e-10])))),
    ("a NaN result", lambda: ops.subtract(_c(np.float32([np.inf])), _c(np.float32([np.inf])))),
    ("reduce_precision of NaN to 0 mantissa bits", lambda: ops.reduce_precision(_c(np.float32([np.nan])), 5, 0)),
    ("clz of a negative int8: XLA's folder counts 64 bits", lambda: ops.count_leading_zeros(_c(np.int8([-1])))),
    ("an inexact float sum", lambda: ops.reduce(_c(np.float32([0.1, 0.2, 0.3])), np.float32(0), (0,))),
    ("a reduce whose init is no identity", lambda: ops.reduce(_c(np.int32([[4]])), np.int32(5), (1,))),
    ("an inexact float dot", lambda: ops.dot_general(_c(np.float32([0.1, 0.7])), _c(np.float32([0.3, 3])), (), (),
                                                     (0,), (0,))),
    ("an FFT", lambda: ops.fft(_c(np.complex64([1, 2, 3, 4])), "FFT", (4,))),
    ("sort with a NaN key", lambda: ops.sort(_c(np.float32([2, np.nan, 1])), 0, "LT", is_stable=True)),
])
def test_folder_leaves_to_xla_what_it_could_compute_differently(why, fn):
    assert _folds(fn) == 0, why


def test_the_folder_says_why_in_words():
    m = hf.trace(lambda: ops.divide(_c(np.float32([1.0])), _c(np.float32([3.0]))))
    text = m.optimize("pattern:elementwise_of_constants", debug=True).explain()
    assert ("elementwise_of_constants: declined 1 time: the registry's evaluate declines these values (it would not "
            "give XLA's bits) [1]") in text


def _fired(fn, *specs) -> dict:
    m = hf.trace(fn, *specs)
    return dict(m.optimize().fired)


def test_a_constant_feeding_an_op_left_to_xla_is_left_to_xla_too():
    # XLA folds sin(broadcast(c)) with its HLO evaluator, sin(c) with the StableHLO folders it runs on
    # import when c is a literal: folding the broadcast would switch folders and change sin's bits
    row = np.float32([0.3, 1.7, -2.2])
    fired = _fired(lambda: ops.sin(ops.broadcast_in_dim(_c(row), (2, 3), (1,))))
    assert fired.get("broadcast_of_constant", 0) == 0
    fired = _fired(lambda: ops.sin(ops.real(_c(np.complex64([1 + 2j, 3 - 1j])))))
    assert fired.get("elementwise_of_constants", 0) == 0
    fired = _fired(lambda: ops.divide(ops.broadcast_in_dim(_c(row), (2, 3), (1,)), _c(np.full((2, 3), 3, np.float32))))
    assert fired.get("broadcast_of_constant", 0) == 0  # (XLA computes broadcast(c) / 3 as broadcast(c) * (1/3))


def test_a_constant_feeding_folded_or_computed_ops_folds():
    row = np.float32([0.3, 1.7, -2.2])
    fired = _fired(lambda: ops.sin(ops.add(ops.broadcast_in_dim(_c(row), (2, 3), (1,)), _c(np.ones((2, 3), np.float32)))))
    assert fired.get("broadcast_of_constant", 0) == 0  # (add folds, but then sin would get a new literal)
    fired = _fired(lambda: ops.add(ops.broadcast_in_dim(_c(row), (2, 3), (1,)), _c(np.ones((2, 3), np.float32))))
    assert fired["broadcast_of_constant"] == 1 and fired["elementwise_of_constants"] == 1
    fired = _fired(lambda x: ops.sin(ops.add(x, ops.broadcast_in_dim(_c(row), (2, 3), (1,)))),
                   hf.ShapeDtype((2, 3), np.float32))
    assert fired["broadcast_of_constant"] == 1  # (the add keeps its argument: XLA computes it as before)


# ---------------------------------------------------------------- reduce_precision (StableHLO's interpreter tests)

def _f64(*bits):
    return np.array(bits, np.uint64).view(np.float64)


INF64, NAN64, TINY64 = 0x7FF0000000000000, 0x7FFFFFFFFFFFFFFF, 0x0000000000000001


@pytest.mark.parametrize("x,exponent_bits,mantissa_bits,want", [
    (np.concatenate([_f64(INF64, NAN64, TINY64), [0.0, 65505.0, 65520.0]]), 5, 10,
     np.concatenate([_f64(INF64, NAN64), [0.0, 0.0, 65504.0], _f64(INF64)])),
    (_f64(NAN64), 5, 0, _f64(INF64)),                       # (no mantissa bits: a NaN becomes +inf)
    (np.float32([-np.nan, 1.0, 3.0, 6.0]), 5, 0, np.float32([np.inf, 1.0, 2.0, 8.0])),  # (ties to even exponents)
])
def test_reduce_precision_follows_the_interpreter(x, exponent_bits, mantissa_bits, want):
    got = reduce_precision_numpy(x, exponent_bits, mantissa_bits).astype(x.dtype)
    assert got.tobytes() == want.tobytes()
    folded = np.asarray(hf.trace(lambda: ops.reduce_precision(_c(x), exponent_bits, mantissa_bits))
                        .compile(device="cpu").call_flat([])[0])
    assert folded.tobytes() == want.tobytes()  # XLA:CPU's constant folder agrees with the interpreter


def test_reduce_precision_evaluates_what_xla_kernels_compute_too():
    """XLA:CPU's kernels (XLA:TPU cannot compile a float64 reduce_precision)."""
    info = OPS["stablehlo.reduce_precision"]
    x = np.concatenate([_f64(INF64, NAN64), [0.0, 65505.0, 65520.0, -1.0000001]])
    kernel = np.asarray(hf.jit(lambda a: ops.reduce_precision(a, 5, 10), optimize=False, device="cpu")(x))
    assert info.evaluate(x, exponent_bits=5, mantissa_bits=10).tobytes() == kernel.tobytes()
    nan = _f64(NAN64)
    kept = hf.jit(lambda a: ops.reduce_precision(a, 5, 0), optimize=False, device="cpu")(nan)
    assert np.isnan(np.asarray(kept))
    assert info.evaluate(nan, exponent_bits=5, mantissa_bits=0) is None   # the kernel keeps NaN, the folder: inf
    assert info.evaluate(_f64(TINY64), exponent_bits=5, mantissa_bits=10) is None  # (a subnormal input)


# ---------------------------------------------------------------- shape computations stay refinable

_DYNAMIC = """
func.func @main(%x: tensor<?x4x4xf32>) -> tensor<?x4x4xf32> {
  %four = stablehlo.constant dense<4> : tensor<1xi32>
  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4x4xf32>) -> tensor<i32>
  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %shape = stablehlo.concatenate %n1, %four, %four, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %b = stablehlo.dynamic_broadcast_in_dim %one, %shape, dims = [] : (tensor<f32>, tensor<3xi32>) -> tensor<?x4x4xf32>
  %y = stablehlo.add %x, %b : tensor<?x4x4xf32>
  return %y : tensor<?x4x4xf32>
}
"""

_STATIC = """
func.func @main(%x: tensor<1xi32>) -> tensor<3xi32> {
  %four = stablehlo.constant dense<4> : tensor<1xi32>
  %v = stablehlo.concatenate %x, %four, %four, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
  %y = stablehlo.add %v, %v : tensor<3xi32>
  return %y : tensor<3xi32>
}
"""


def test_a_shape_operand_is_left_to_shape_refinement():
    m = hf.Module.parse(_DYNAMIC)
    report = m.optimize()
    assert report.fired["concatenate_of_pads"] == 0
    x = np.arange(48, dtype=np.float32).reshape(3, 4, 4)
    np.testing.assert_array_equal(np.asarray(m.compile()(x)), x + 1)


def test_the_same_concatenate_of_data_becomes_a_pad():
    m = hf.Module.parse(_STATIC)
    assert m.optimize().fired["concatenate_of_pads"] == 1
    np.testing.assert_array_equal(np.asarray(m.compile()(np.int32([7]))), [14, 8, 8])


@pytest.mark.parametrize("init", [0.0, -0.0])
def test_a_reduction_over_an_empty_dim_of_an_inexact_constant_folds_to_its_init(init):
    """Issue 49: the default pipeline raised numpy's "zero-size array to reduction operation minimum" on
    hnp.sum(c[:, 4:], axis=1) for an inexact c (the folder asked whether the empty sums were exact)."""
    from hloforge import numpy as hnp
    c = np.float32([[0.1, 0.2, 0.3, 0.7]] * 3)
    np.testing.assert_array_equal(np.asarray(hf.jit(lambda x: hnp.sum(hnp.asarray(c)[:, 4:], axis=1) + x)(
        np.ones(3, np.float32))), [1, 1, 1])  # (as jax gives)
    m = hf.trace(lambda: ops.reduce(ops.slice(_c(c), (0, 4), (3, 4)), np.float32(init), (1,)))
    want = np.asarray(m.compile()())
    assert np.signbit(want).all() == (str(init) == "-0.0")
    m.optimize(finite_math=False)  # (the slice folds to an empty constant; XLA folds the reduce of it to init)
    assert np.asarray(m.compile()()).tobytes() == want.tobytes()
    empty = np.zeros((3, 0), np.float32)
    for body in ("add", "mul"):  # (evaluate: no partial sum or product to round, the init as it is)
        identity = np.float32(init if body == "add" else 1.0)
        got = OPS["stablehlo.reduce"].evaluate(empty, identity, dimensions=(1,), body=body)
        assert np.asarray(got[0]).tobytes() == np.full(3, identity).tobytes()
