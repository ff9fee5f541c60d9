"""hloforge.ops, elementwise family (frontend/ops/elementwise.py): the unary and binary ops against
numpy over a dtype grid, complex/real/imag, integer division by a constant zero, and
their validation messages."""
import numpy as np
import pytest

import hloforge as hf
from hloforge import ops
from hloforge.frontend import dtypes
from helpers import ALL_DTYPES, assert_close, random, run
from ops_helpers import F32


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


def test_complex_real_imag():
    x = random((2, 3), np.float32, seed=6)
    y = random((2, 3), np.float32, seed=7)
    z = x + 1j * y
    assert_close(run(lambda x, y: ops.complex(x, y), x, y), z.astype(np.complex64))
    re, im = run(lambda z: (ops.real(z), ops.imag(z)), z)
    assert_close(re, z.real)
    assert_close(im, z.imag)


def test_integer_division_by_constant_zero_is_refused():
    # XLA's constant folder aborts the whole process on it, so the builder refuses it first
    for op in (ops.divide, ops.remainder):
        with pytest.raises(ZeroDivisionError, match="integer division by a constant zero"):
            hf.trace(lambda x: op(x, ops.constant(np.array([1, 0], np.int32))), np.ones(2, np.int32))
        with pytest.raises(ValueError, match=r"divisor values include 0"):  # (a ValueError too)
            hf.trace(lambda x: op(x, ops.constant(np.int32(0))), np.ones(2, np.int32))
    m = hf.trace(lambda x, y: ops.divide(x, y), np.ones(2, np.int32), np.ones(2, np.int32))
    assert m.op_counts()["stablehlo.divide"] == 1  # run-time divisors are the user's business


# ---------------------------------------------------------------- validation messages

@pytest.mark.parametrize("fn,exc,match", [
    (lambda x: ops.add(x, ops.convert(x, np.float64)), TypeError, "add: operand dtypes float32 and float64 differ"),
    (lambda x: ops.add(x, ops.reshape(x, (3, 2))), ValueError, r"add: operand shapes \(2, 3\) and \(3, 2\) differ"),
    (lambda x: ops.exp(ops.convert(x, np.int32)), TypeError, "exp: operand dtype int32 is not supported; expected float or complex"),
    (lambda x: ops.not_(x), TypeError, "not_: operand dtype float32 is not supported"),
    (lambda x: ops.complex(ops.convert(x, np.float16), ops.convert(x, np.float16)), TypeError,
     "complex: operand dtype must be float32 or float64, got float16"),
    (lambda x: ops.add(x, "a"), TypeError, "add rhs"),
])
def test_validation_messages(fn, exc, match):
    with pytest.raises(exc, match=match):
        hf.trace(fn, F32)
