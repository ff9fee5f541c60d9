"""hloforge.ops: every op against numpy over a dtype grid, and every validation message."""
import numpy as np
import pytest

import hloforge as hf
from hloforge import ops
from hloforge.frontend import dtypes
from helpers import ALL_DTYPES, assert_close, random, run

UNARY = {  # ops name -> (numpy reference, dtype categories it accepts)
    "neg": (np.negative, "iufc"), "abs": (np.abs, "ifc"), "exp": (np.exp, "fc"),
    "log": (np.log, "fc"), "log1p": (np.log1p, "fc"), "expm1": (np.expm1, "fc"),
    "sin": (np.sin, "fc"), "cos": (np.cos, "fc"), "tan": (np.tan, "fc"), "tanh": (np.tanh, "fc"),
    "sqrt": (np.sqrt, "fc"), "rsqrt": (lambda x: 1 / np.sqrt(x), "fc"), "cbrt": (np.cbrt, "f"),
    "logistic": (lambda x: 1 / (1 + np.exp(-x)), "fc"), "floor": (np.floor, "f"),
    "ceil": (np.ceil, "f"), "round": (np.round, "f"), "sign": (np.sign, "ifc"),
    "not_": (np.invert, "biu"),
}
BINARY = {
    "add": (np.add, "biufc"), "subtract": (np.subtract, "iufc"), "multiply": (np.multiply, "biufc"),
    "divide": (None, "iufc"), "remainder": (np.fmod, "iuf"), "power": (np.power, "fc"),
    "maximum": (np.maximum, "biuf"), "minimum": (np.minimum, "biuf"), "atan2": (np.arctan2, "f"),
    "and_": (np.bitwise_and, "biu"), "or_": (np.bitwise_or, "biu"), "xor": (np.bitwise_xor, "biu"),
}
GRID = [d for d in ALL_DTYPES if d != dtypes.bfloat16]  # bf16 has its own smoke test below


def _kind(d):
    return "b" if d == np.bool_ else d.kind if d.kind in "iuc" else "f"


def _positive(x):
    """Inputs in the domain of log/sqrt (complex inputs are fine anywhere)."""
    return np.abs(x) + 0.5 if x.dtype.kind == "f" else x


def _numpy_truncating_divide(a, b):
    if a.dtype.kind in "iu":
        return (np.trunc(a.astype(np.float64) / b)).astype(a.dtype)
    return a / b


@pytest.mark.parametrize("dtype", GRID, ids=str)
def test_unary_ops_match_numpy(dtype):
    names = [n for n, (_, kinds) in UNARY.items() if _kind(dtype) in kinds]
    assert names, f"no unary op takes {dtype}"
    x = random((3, 5), dtype, seed=1)
    if dtype.kind in "fc":
        x = _positive(x)
    outs = run(lambda x: {n: getattr(ops, n)(x) for n in names}, x)
    for n in names:
        ref = UNARY[n][0](x)
        if n == "abs" and dtype.kind == "c":
            ref = ref.astype(dtypes.real_dtype(dtype))
        if n == "sign" and dtype.kind == "c":
            ref = x / np.abs(x)
        assert_close(outs[n], np.asarray(ref).astype(outs[n].dtype), dtype=outs[n].dtype)


@pytest.mark.parametrize("dtype", GRID, ids=str)
def test_binary_ops_match_numpy(dtype):
    names = [n for n, (_, kinds) in BINARY.items() if _kind(dtype) in kinds]
    a = random((4, 3), dtype, seed=2)
    b = random((4, 3), dtype, seed=3)
    if dtype.kind in "iu":
        b = np.where(b == 0, 1, b).astype(dtype)  # no division by zero
    if dtype.kind == "f" or dtype.kind == "c":
        a = _positive(a)  # power of negatives is NaN in both; keep values comparable
    outs = run(lambda a, b: {n: getattr(ops, n)(a, b) for n in names}, a, b)
    for n in names:
        ref = _numpy_truncating_divide(a, b) if n == "divide" else BINARY[n][0](a, b)
        assert_close(outs[n], np.asarray(ref).astype(dtype), dtype=dtype)


@pytest.mark.parametrize("dtype", [np.dtype(d) for d in (np.int32, np.uint8, np.float32, np.bool_)], ids=str)
def test_compare_all_directions(dtype):
    a, b = random((6,), dtype, seed=4), random((6,), dtype, seed=5)
    a[:2] = b[:2]
    dirs = {"EQ": np.equal, "NE": np.not_equal, "GE": np.greater_equal, "GT": np.greater,
            "LE": np.less_equal, "LT": np.less}
    outs = run(lambda a, b: {d: ops.compare(a, b, d) for d in dirs}, a, b)
    for d, f in dirs.items():
        assert_close(outs[d], f(a, b))


def test_compare_complex_eq_only():
    z = random((3,), np.complex64)
    assert_close(run(lambda z: ops.compare(z, z, "EQ"), z), np.ones(3, bool))
    with pytest.raises(TypeError, match="complex operands support only EQ and NE, got LT"):
        hf.trace(lambda z: ops.compare(z, z, "LT"), z)
    with pytest.raises(ValueError, match="direction 'XX' is not one of"):
        hf.trace(lambda z: ops.compare(z, z, "XX"), z)


def test_select_clamp_complex_real_imag():
    x = random((2, 3), np.float32, seed=6)
    y = random((2, 3), np.float32, seed=7)

    def f(x, y):
        return {"select": ops.select(ops.compare(x, y, "GT"), x, y),
                "select0d": ops.select(ops.compare(ops.constant(np.float32(1)), ops.constant(np.float32(0)),
                                                   "GT"), x, y),
                "clamp": ops.clamp(-0.5, x, 0.5),
                "clamp_t": ops.clamp(ops.minimum(x, y), x, ops.maximum(x, y)),
                "complex": ops.complex(x, y)}
    out = run(f, x, y)
    assert_close(out["select"], np.where(x > y, x, y))
    assert_close(out["select0d"], x)
    assert_close(out["clamp"], np.clip(x, -0.5, 0.5))
    assert_close(out["clamp_t"], x)
    z = x + 1j * y
    assert_close(out["complex"], z.astype(np.complex64))
    re, im = run(lambda z: (ops.real(z), ops.imag(z)), z)
    assert_close(re, z.real)
    assert_close(im, z.imag)


@pytest.mark.parametrize("src,dst", [(np.float32, np.int32), (np.int32, np.float64), (np.float64, np.float16),
                                     (np.int64, np.uint8), (np.bool_, np.float32), (np.complex64, np.complex128),
                                     (np.float32, np.complex64), (np.uint16, np.int8)])
def test_convert(src, dst):
    x = random((7,), src, seed=8, low=-100, high=100)
    out = run(lambda x: ops.convert(x, dst), x)
    ref = x.astype(dst) if not (np.dtype(src).kind == "i" and np.dtype(dst).kind == "u") else x.astype(dst)
    assert_close(out, ref)


def test_bfloat16_roundtrip_and_math():
    x = random((5,), np.float32).astype(dtypes.bfloat16)
    out = run(lambda x: (ops.add(x, x), ops.exp(ops.convert(x, np.float32))), x)
    assert out[0].dtype == dtypes.bfloat16
    assert_close(out[0].astype(np.float32), (x.astype(np.float32) * 2), dtype=np.float32, rtol=1e-2)
    assert_close(out[1], np.exp(x.astype(np.float32)))


def test_constant_iota_and_splats():
    c = np.arange(12, dtype=np.int16).reshape(3, 4)

    def f():
        return (ops.constant(c), ops.constant(np.full((50, 50), 2.5, np.float32)),
                ops.iota((3, 4), np.float32, 1), ops.iota((2, 3), np.int64, 0), ops.constant(True),
                ops.constant(np.array([1 + 2j], np.complex128)), ops.constant(2.0))
    m = hf.trace(f)
    assert "dense<2.500000e+00> : tensor<50x50xf32>" in m.text  # splats stay compact
    out = [np.asarray(o) for o in m.compile()()]
    assert_close(out[0], c)
    assert_close(out[1], np.full((50, 50), 2.5, np.float32))
    assert_close(out[2], np.broadcast_to(np.arange(4, dtype=np.float32), (3, 4)))
    assert_close(out[3], np.broadcast_to(np.arange(2)[:, None], (2, 3)).astype(np.int64))
    assert_close(out[4], np.array(True))
    assert_close(out[5], np.array([1 + 2j]))
    assert_close(out[6], np.array(2.0))


def test_shape_ops():
    x = random((2, 3, 4), np.float32, seed=9)

    def f(x):
        return {"reshape": ops.reshape(x, (6, 4)), "transpose": ops.transpose(x, (2, 0, 1)),
                "bcast": ops.broadcast_in_dim(ops.slice(x, (0, 0, 0), (1, 3, 4)), (5, 2, 3, 4), (1, 2, 3)),
                "slice": ops.slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 3)),
                "dslice": ops.dynamic_slice(x, (1, ops.constant(np.int32(1)).astype(np.int64), 2), (1, 2, 2)),
                "dslice_clamped": ops.dynamic_slice(x, (5, 5, 5), (1, 2, 2)),
                "concat": ops.concatenate([x, x[:, :1]], 1), "reverse": ops.reverse(x, (0, 2))}
    out = run(f, x)
    assert_close(out["reshape"], x.reshape(6, 4))
    assert_close(out["transpose"], x.transpose(2, 0, 1))
    assert_close(out["bcast"], np.broadcast_to(x[:1], (5, 2, 3, 4)))
    assert_close(out["slice"], x[0:2, 1:3, 0:4:3])
    assert_close(out["dslice"], x[1:2, 1:3, 2:4])
    assert_close(out["dslice_clamped"], x[1:2, 1:3, 2:4])  # starts clamp to size - slice size
    assert_close(out["concat"], np.concatenate([x, x[:, :1]], 1))
    assert_close(out["reverse"], x[::-1, :, ::-1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.int32], ids=str)
def test_dot_general(dtype):
    a = random((2, 3, 4), dtype, seed=10)
    b = random((2, 4, 5), dtype, seed=11)
    out = run(lambda a, b: ops.dot_general(a, b, (0,), (0,), (2,), (1,)), a, b)
    assert_close(out, np.einsum("bij,bjk->bik", a, b), dtype=np.dtype(dtype))


def test_dot_general_preferred_element_type_is_the_result_type():
    a = random((2, 3), np.int8, seed=12)
    m = hf.trace(lambda a: ops.dot_general(a, a, (), (), (1,), (1,), preferred_element_type=np.int32), a)
    assert "-> tensor<2x2xi32>" in m.text, m.text
    wide = a.astype(np.int32)
    np.testing.assert_array_equal(np.asarray(m.compile()(a)), wide @ wide.T)


def test_dot_general_precision_attr():
    a = random((2, 2), np.float32)
    m = hf.trace(lambda a: ops.dot_general(a, a, (), (), (1,), (0,), precision="HIGHEST"), a)
    assert "HIGHEST" in m.text
    with pytest.raises(ValueError, match="precision 'BEST' is not one of"):
        hf.trace(lambda a: ops.dot_general(a, a, (), (), (1,), (0,), precision="BEST"), a)


@pytest.mark.parametrize("body,ref,init", [("add", np.sum, 0), ("mul", np.prod, 1), ("max", np.max, -np.inf),
                                           ("min", np.min, np.inf)])
def test_reduce_named_bodies(body, ref, init):
    x = random((3, 4, 5), np.float64, seed=12)
    out = run(lambda x: ops.reduce(x, init, (0, 2), body), x)
    assert_close(out, ref(x, axis=(0, 2)))


def test_reduce_bool_and_callable_body():
    b = random((4, 6), np.bool_, seed=13)
    x = random((4, 6), np.float32, seed=14)

    def f(b, x):
        return (ops.reduce(b, True, (1,), "and"), ops.reduce(b, False, (0,), "or"),
                ops.reduce(x, np.float32(0), (1,), lambda acc, v: ops.add(acc, ops.multiply(v, v))),
                ops.reduce([x, x], [np.float32(-np.inf), np.float32(np.inf)], (0,),
                           lambda a1, a2, v1, v2: (ops.maximum(a1, v1), ops.minimum(a2, v2))))
    all_, any_, sq, (mx, mn) = run(f, b, x)
    assert_close(all_, b.all(1))
    assert_close(any_, b.any(0))
    assert_close(sq, (x * x).sum(1))
    assert_close(mx, x.max(0))
    assert_close(mn, x.min(0))


def test_fft_and_pad_single_ops():
    x = random((3, 8), np.float32, seed=15)
    y, p = run(lambda x: (ops.fft(x, "RFFT", (8,)), ops.pad(x, 0.0, (1, -1), (0, 2), (0, 1))), x)
    assert_close(y, np.fft.rfft(x).astype(np.complex64))
    # interior 1 on dim 1, then low (1, -1), high (0, 2)
    spread = np.zeros((3, 15), np.float32)
    spread[:, ::2] = x
    ref = np.pad(spread, ((1, 0), (0, 2)))[:, 1:]
    assert_close(p, ref)


def test_locations_point_at_user_code():
    x = random((2,), np.float32)
    m = hf.trace(lambda x: ops.exp(x), x)
    text = m.to_text(debug_info=True)
    assert "test_ops.py" in text
    assert "loc(" not in m.text
    named = hf.trace(lambda x: ops.exp(x, loc="my_exp"), x).to_text(debug_info=True)
    assert '"my_exp"' in named
    with pytest.raises(TypeError, match="loc must be None, a str or an ir.Location, got int"):
        hf.trace(lambda x: ops.exp(x, loc=3), x)


def test_registry_knows_every_op():
    from hloforge.frontend.registry import OPS, lookup
    assert lookup("stablehlo.fft").builder is ops.fft.__wrapped__  # (ops.fft: its eager wrapper, frontend/eager.py)
    assert ops.add.stablehlo_op == "stablehlo.add"
    for name in ("stablehlo.pad", "stablehlo.reduce", "stablehlo.dot_general", "stablehlo.compare"):
        assert name in OPS
    with pytest.raises(KeyError, match="no hloforge builder for 'stablehlo.nope'"):
        lookup("stablehlo.nope")


# ---------------------------------------------------------------- validation messages

F32 = hf.ShapeDtype((2, 3), np.float32)


@pytest.mark.parametrize("fn,exc,match", [
    (lambda x: ops.add(x, ops.convert(x, np.float64)), TypeError, "add: operand dtypes float32 and float64 differ"),
    (lambda x: ops.add(x, ops.reshape(x, (3, 2))), ValueError, r"add: operand shapes \(2, 3\) and \(3, 2\) differ"),
    (lambda x: ops.exp(ops.convert(x, np.int32)), TypeError, "exp: operand dtype int32 is not supported; expected float or complex"),
    (lambda x: ops.not_(x), TypeError, "not_: operand dtype float32 is not supported"),
    (lambda x: ops.reshape(x, (4, 2)), ValueError, r"reshape: cannot reshape \(2, 3\) \(6 elements\) into \(4, 2\)"),
    (lambda x: ops.transpose(x, (0, 0)), ValueError, r"transpose: permutation \[0, 0\] repeat a dimension"),
    (lambda x: ops.transpose(x, (0, 2)), ValueError, r"transpose: permutation \[0, 2\] out of range for rank 2"),
    (lambda x: ops.broadcast_in_dim(x, (2, 4), (0, 1)), ValueError, "broadcast_in_dim: operand dim 1 of size 3 cannot broadcast"),
    (lambda x: ops.broadcast_in_dim(x, (2, 3), (0,)), ValueError, r"broadcast_in_dim: broadcast_dimensions \[0\] must have one entry"),
    (lambda x: ops.slice(x, (0, 0), (3, 3)), ValueError, "slice: dim 0: need 0 <= start <= limit <= size, got start 0, limit 3, size 2"),
    (lambda x: ops.slice(x, (0, 0), (2, 3), (1, 0)), ValueError, r"slice: strides \[1, 0\] must be >= 1"),
    (lambda x: ops.slice(x, (0,), (2,)), ValueError, r"slice: start_indices \[0\] must have 2 entries"),
    (lambda x: ops.dynamic_slice(x, (0, 0), (3, 1)), ValueError, r"dynamic_slice: slice_sizes \[3, 1\] exceed shape"),
    (lambda x: ops.concatenate([x, ops.convert(x, np.float64)], 0), TypeError, "concatenate: operand 1 dtype float64 differs"),
    (lambda x: ops.concatenate([x, ops.reshape(x, (3, 2))], 0), ValueError, "concatenate: operand 1 shape"),
    (lambda x: ops.concatenate([], 0), ValueError, "concatenate: needs at least one operand"),
    (lambda x: ops.reverse(x, (5,)), ValueError, r"reverse: dimensions \[5\] out of range for rank 2"),
    (lambda x: ops.dot_general(x, x, (), (), (0,), (1,)), ValueError,
     r"dot_general: contracting dims lhs 0 \(size 2\) and rhs 1 \(size 3\) differ"),
    (lambda x: ops.dot_general(x, ops.convert(x, np.int32), (), (), (1,), (1,)), TypeError, "dot_general: operand dtypes"),
    (lambda x: ops.dot_general(x, x, (), (), (1,), (1,), preferred_element_type=np.int32), TypeError,
     r"dot_general: preferred_element_type int32 does not hold a contraction of float32 operands \(integers into"),
    (lambda x: ops.dot_general(x, x, (), (), (1,), (1,), preferred_element_type="float7"), TypeError,
     "dot_general: preferred_element_type 'float7': unsupported dtype"),
    (lambda x: ops.reduce(x, 0.0, (0,), "sum"), ValueError, "reduce: body 'sum' is not one of add, mul, max, min, and, or"),
    (lambda x: ops.reduce(x, 0.0, (0,), "and"), TypeError, "reduce: body 'and' needs bool or integer operands"),
    (lambda x: ops.reduce(x, 0.0, (3,)), ValueError, r"reduce: dimensions \[3\] out of range"),
    (lambda x: ops.select(x, x, x), TypeError, "select: pred dtype must be bool, got float32"),
    (lambda x: ops.clamp(ops.convert(x, np.float64), x, x), TypeError, "clamp: min dtype float64 differs"),
    (lambda x: ops.complex(ops.convert(x, np.float16), ops.convert(x, np.float16)), TypeError,
     "complex: operand dtype must be float32 or float64, got float16"),
    (lambda x: ops.iota((2, 3), np.float32, 2), ValueError, r"iota: dimension 2 out of range for shape \(2, 3\)"),
    (lambda x: ops.iota((2,), np.bool_), TypeError, "iota: dtype bool is not supported"),
    (lambda x: ops.convert(x, object), TypeError, "unsupported dtype"),
    (lambda x: ops.constant(x), TypeError, "constant: value is already a traced Tensor"),
    (lambda x: ops.fft(x, "DFT", (3,)), ValueError, "fft: fft_type 'DFT' is not one of FFT, IFFT, RFFT, IRFFT"),
    (lambda x: ops.pad(x, 0.0, (0, 0), (0, -4)), ValueError, r"pad: result shape \(2, -1\) has a negative dimension"),
    (lambda x: ops.pad(x, 0.0, (0, 0), (0, 0), (0, -1)), ValueError, r"pad: interior_padding \[0, -1\] must be >= 0"),
    (lambda x: ops.add(x, "a"), TypeError, "add rhs"),
    (lambda x: ops.slice(x, (0, "a"), (2, 3)), TypeError, "slice: start_indices must be a sequence of ints"),
])
def test_validation_messages(fn, exc, match):
    with pytest.raises(exc, match=match):
        hf.trace(fn, F32)


def test_integer_division_by_constant_zero_is_refused():
    # XLA's constant folder aborts the whole process on it, so the builder refuses it first
    for op in (ops.divide, ops.remainder):
        with pytest.raises(ZeroDivisionError, match="integer division by a constant zero"):
            hf.trace(lambda x: op(x, ops.constant(np.array([1, 0], np.int32))), np.ones(2, np.int32))
        with pytest.raises(ValueError, match=r"divisor values include 0"):  # (a ValueError too)
            hf.trace(lambda x: op(x, ops.constant(np.int32(0))), np.ones(2, np.int32))
    m = hf.trace(lambda x, y: ops.divide(x, y), np.ones(2, np.int32), np.ones(2, np.int32))
    assert m.op_counts()["stablehlo.divide"] == 1  # run-time divisors are the user's business


def test_ops_outside_a_trace_run_eagerly():
    out = ops.constant(np.arange(3, dtype=np.float32))  # (frontend/eager.py; tests/test_eager.py has the rest)
    np.testing.assert_array_equal(np.asarray(out), np.arange(3, dtype=np.float32))


def test_leaked_tensor_from_another_trace():
    leaked = []
    hf.trace(lambda x: leaked.append(x) or x, F32)
    with pytest.raises(ValueError, match="belongs to another trace"):
        hf.trace(lambda x: ops.add(x, leaked[0]), F32)
