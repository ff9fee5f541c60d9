"""hf.config.dtypes: "numpy" (NumPy 2's dtypes) and "jax" (jax's without x64), checked against numpy and
jax on the same expressions; in both, hf.jit's Python scalar arguments are weakly typed as literals are
(a learning rate never changes the parameters' dtype, and a new value does not trace again)."""
import os
import subprocess
import sys
import warnings
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import hloforge as hf
import hloforge.lax as hl
import hloforge.numpy as hnp
from hloforge.frontend import dtypes
from hloforge.runtime.settings import Config
from helpers import assert_close

BF16 = np.dtype(ml_dtypes.bfloat16)
MODES = ("numpy", "jax")


@pytest.fixture(autouse=True)
def restore_mode():
    """No test leaks its mode into the next."""
    saved = hf.config.dtypes
    assert dtypes.mode() == saved
    yield
    hf.config.dtypes = saved
    assert dtypes.mode() == saved


@pytest.fixture(params=MODES)
def mode(request):
    hf.config.dtypes = request.param
    return request.param


# ---------------------------------------------------------------- everyday expressions

def _inputs():
    return dict(x=np.array([0.5, -1.0, 2.0], np.float32), i=np.array([3, 0, 2], np.int32),
                h=np.array([1, 2, 3], np.float16), b=np.array([1, 2, 3], BF16),
                u8=np.array([1, 200, 3], np.uint8), i8=np.array([1, -100, 3], np.int8),
                u32=np.array([1, 2, 3], np.uint32), d=np.array([1.5, 2.5, 3.5]))


def _size(m):
    return {} if m is np else {"size": 3}


# (name, expression over a module m and the inputs a, the reference of "numpy" mode: numpy, or jax where
# hloforge keeps jax's bfloat16 lattice in both modes; "jax" mode's reference is always jax)
ROWS = [
    ("zeros", lambda m, a: m.zeros(3), np),
    ("ones", lambda m, a: m.ones((2, 2)), np),
    ("arange int", lambda m, a: m.arange(5), np),
    ("arange float", lambda m, a: m.arange(0.0, 1.0, 0.25), np),
    ("linspace", lambda m, a: m.linspace(0, 1, 5), np),
    ("eye", lambda m, a: m.eye(3), np),
    ("full float", lambda m, a: m.full(3, 2.0), np),
    ("full int", lambda m, a: m.full(3, 7), np),
    ("f32 * 2.0", lambda m, a: a.x * 2.0, np),
    ("i32 * 0.5", lambda m, a: a.i * 0.5, np),
    ("i32 + f16", lambda m, a: a.i + a.h, np),
    ("i8 + u8", lambda m, a: a.i8 + a.u8, np),
    ("u32 + i32", lambda m, a: a.u32 + a.i, np),
    ("bf16 + f16", lambda m, a: a.b + a.h, jnp),
    ("bf16 + i32", lambda m, a: a.b + a.i, jnp),
    ("i32 / i32", lambda m, a: a.i / (a.i + 1), np),
    ("sqrt i8", lambda m, a: m.sqrt(m.abs(a.i8)), np),
    ("sum i8", lambda m, a: m.sum(a.i8), np),
    ("sum u8", lambda m, a: a.u8.sum(), np),
    ("mean i32", lambda m, a: m.mean(a.i), np),
    ("cumsum i8", lambda m, a: m.cumsum(a.i8), np),
    ("argmax", lambda m, a: m.argmax(a.x), np),
    ("argsort", lambda m, a: a.x.argsort(), np),
    ("nonzero", lambda m, a: m.nonzero(a.x != 0, **_size(m))[0], np),
    ("f32 + numpy f64", lambda m, a: a.x + np.ones(3), np),
    ("f64 argument", lambda m, a: a.d * 2, np),
    ("asarray numpy f64", lambda m, a: m.asarray(np.arange(3.0)), np),
    ("astype float64", lambda m, a: a.x.astype(np.float64), np),
    ("zeros int64", lambda m, a: m.zeros(2, np.int64), np),
    ("i32 + 1j", lambda m, a: a.i + 1j, np),
    ("f16 * 1j", lambda m, a: a.h * 1j, np),
    ("bool + 1", lambda m, a: (a.x > 0) + 1, np),
    ("median i32", lambda m, a: m.median(a.i), np),
]


def _program(m):
    return lambda **a: tuple(fn(m, SimpleNamespace(**a)) for _, fn, _ in ROWS)


_REFERENCE = {}


def _reference(module):
    """numpy's results (eager) or jax's (one jax.jit, x64 off as in this process), computed once."""
    if module not in _REFERENCE:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (jax: "Explicitly requested dtype float64 ... truncated")
            run = _program(np) if module is np else jax.jit(_program(jnp))
            _REFERENCE[module] = [np.asarray(r) for r in run(**_inputs())]
    return _REFERENCE[module]


def test_everyday_expressions_against_numpy_and_jax(mode):
    assert not jax.config.jax_enable_x64
    ours = hf.jit(_program(hnp))(**_inputs())
    mismatched = []
    for k, ((name, _, numpy_mode_reference), got) in enumerate(zip(ROWS, ours)):
        expected = _reference(jnp if mode == "jax" else numpy_mode_reference)[k]
        if np.asarray(got).dtype != expected.dtype:
            mismatched.append(f"{name}: {np.asarray(got).dtype}, expected {expected.dtype}")
            continue
        assert_close(got, expected)
    assert mismatched == []


def test_the_modes_differ_where_the_table_says():
    """The rows whose dtypes differ between the modes: everything 64-bit, and jax's lattice."""
    numpy_dtypes = [r.dtype for r in _reference(np)]
    jax_dtypes = [r.dtype for r in _reference(jnp)]
    same = {name for (name, _, _), a, b in zip(ROWS, numpy_dtypes, jax_dtypes) if a == b}
    assert same == {"f32 * 2.0", "i8 + u8", "bf16 + f16", "f16 * 1j"}


# ---------------------------------------------------------------- promotion tables

_DTYPES = [np.dtype(d) for d in (np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32,
                                 np.float16, BF16, np.float32, np.complex64)]
_SCALARS = (True, 1, 1.0, 1j)


def test_jax_mode_promotes_as_jax():
    hf.config.dtypes = "jax"
    for a in _DTYPES + [np.dtype(np.float64), np.dtype(np.int64)]:
        for b in _DTYPES:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = jax.dtypes.result_type(np.zeros(1, a), np.zeros(1, b))  # (numpy arrays: narrowed)
            assert dtypes.result_type(np.zeros(1, a), np.zeros(1, b)) == expected, (a, b)
        for s in _SCALARS:
            d = a if a not in dtypes.X32 else dtypes.X32[a]
            expected, weak = jax.dtypes.result_type(d, s, return_weak_type_flag=True)
            assert (dtypes.result_type(d, s), dtypes.weak_result(d, s)) == (expected, weak), (a, s)
    for s in _SCALARS:
        assert dtypes.result_type(s) == jnp.asarray(s).dtype


def test_numpy_mode_promotes_as_numpy_with_jax_weak_flags():
    for a in _DTYPES + [np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.uint64)]:
        for b in _DTYPES + [np.dtype(np.float64)]:
            if BF16 not in (a, b):  # (bfloat16: jax's lattice, as before)
                assert dtypes.result_type(a, b) == np.result_type(a, b), (a, b)
        for s in _SCALARS:
            if a != BF16:
                assert dtypes.result_type(a, s) == np.result_type(np.zeros(1, a), s), (a, s)  # NEP 50
            if a not in dtypes.X32:
                assert dtypes.weak_result(a, s) == jax.dtypes.result_type(a, s, return_weak_type_flag=True)[1]
    assert [dtypes.result_type(s) for s in _SCALARS] == [np.bool_, np.int64, np.float64, np.complex128]


def test_the_mode_functions():
    assert (dtypes.default_int(), dtypes.default_float(), dtypes.default_complex()) == (
        np.int64, np.float64, np.complex128)
    assert dtypes.canonicalize(float) == np.float64 and dtypes.narrow(np.int64, np.int8) == np.int64
    hf.config.dtypes = "jax"
    assert dtypes.mode() == "jax"
    assert (dtypes.default_int(), dtypes.default_float(), dtypes.default_complex()) == (
        np.int32, np.float32, np.complex64)
    assert [dtypes.canonicalize(d) for d in (float, int, np.uint64, np.complex128, np.float16)] == [
        np.float32, np.int32, np.uint32, np.complex64, np.float16]
    assert dtypes.narrow(np.int64, np.int8) == np.int32 and dtypes.narrow(np.int64, np.int64) == np.int64


# ---------------------------------------------------------------- weak hf.jit arguments

def _step(m):
    def step(params, lr):
        grads = {k: 2 * p for k, p in params.items()}
        return {k: p - lr * grads[k] for k, p in params.items()}
    return step


def test_a_learning_rate_argument_keeps_the_parameters_dtypes_and_traces_once(mode, python_calls):
    traces = []

    def counted(params, lr):
        traces.append(lr)
        return _step(hnp)(params, lr)

    params = {"w": np.ones(3, np.float32), "h": np.ones(2, np.float16), "b": np.ones(2, BF16)}
    step, reference = hf.jit(counted), jax.jit(_step(jnp))
    for lr in (0.1, 0.01, 1e-3):
        new, expected = step(params, lr), reference(params, lr)
        for k in params:
            assert new[k].dtype == params[k].dtype == expected[k].dtype
            assert_close(new[k], expected[k])
    assert len(traces) == 1 and step.cache_size() == 1
    assert len(python_calls) == 1  # (later values run from jax's C++ loop)


def _time_loop(m, lax):
    def run(x, dt):
        def body(i, c):
            t = i * dt  # (a float32 index times a weak scalar: weak, so the carry stays float32)
            return c + m.sin(t) * c - t * t * 0.01
        literal = lax.fori_loop(0, 4, lambda i, c: c + m.sin(i * 0.25) * c - (i * 0.25) * (i * 0.25) * 0.01, x)
        return lax.fori_loop(0, 4, body, x), literal
    return run


def test_fori_loop_time_from_the_index_and_a_weak_step(mode):
    x = np.array([1.0, -0.5], np.float32)
    (argument, literal), (expected, _) = hf.jit(_time_loop(hnp, hl))(x, 0.25), jax.jit(_time_loop(jnp, jax.lax))(x, 0.25)
    assert argument.dtype == literal.dtype == expected.dtype == np.float32
    assert_close(argument, expected)
    assert_close(literal, expected)


# each: (module, inputs, s) -> value; s a Python scalar (a literal, or an argument of the jitted function)
_SCALAR_ROWS = [
    ("f32 * s", lambda m, a, s: a.x * s),
    ("f16 + s", lambda m, a, s: a.h + s),
    ("bf16 * s", lambda m, a, s: a.b * s),
    ("i32 * s + f16", lambda m, a, s: a.i * s + a.h),  # ("numpy" mode too: numpy would give float64)
    ("-s * f16", lambda m, a, s: -s * a.h),
    ("s * s * f16", lambda m, a, s: s * s * a.h),
    ("sin(s) * bf16", lambda m, a, s: m.sin(s) * a.b),
    ("s", lambda m, a, s: s * 1),
]


def _scalar_program(m, literal=None):
    def run(**a):
        s = a.pop("s") if literal is None else literal
        return tuple(fn(m, SimpleNamespace(**a), s) for _, fn in _SCALAR_ROWS)
    return run


def test_python_scalar_arguments_are_weak_as_literals_are(mode):
    ins = {k: v for k, v in _inputs().items() if k in ("x", "i", "h", "b")}
    argument = hf.jit(_scalar_program(hnp))(**ins, s=0.25)
    literal = hf.jit(_scalar_program(hnp, 0.25))(**ins)
    expected = jax.jit(_scalar_program(jnp))(**ins, s=0.25)
    for (name, _), a, b, e in zip(_SCALAR_ROWS, argument, literal, expected):
        assert a.dtype == b.dtype, name
        if name == "s":  # (a weak scalar alone: the mode's default float; jax's weak float32)
            assert a.dtype == dtypes.default_float()
            continue
        assert a.dtype == e.dtype, name
        assert_close(a, e)
    n = hf.jit(lambda x, n: (x + n, x * n))(np.array([1, 2], np.int8), 3)
    assert [r.dtype for r in n] == [np.int8, np.int8]  # (a Python int argument too)
    shape = hf.eval_shape(lambda x, s: x * s, hf.ShapeDtypeStruct((3,), np.float16), 0.5)
    assert shape == hf.ShapeDtypeStruct((3,), np.float16)  # (eval_shape's arguments as jit's)


def test_weak_tensors_in_a_trace(mode):
    seen = {}

    def f(x, lr, i):
        seen.update(lr=lr.weak, x=x.weak, prod=(i * lr).weak, scaled=(x * lr).weak, sin=hnp.sin(lr).weak,
                    compare=(lr > 0).weak, repr=repr(lr))
        return x * lr

    m = hf.trace(f, hf.ShapeDtype((2,), np.float32), 0.5, hf.ShapeDtype((), np.int32))
    assert seen == {"lr": True, "x": False, "prod": True, "scaled": False, "sin": True, "compare": False,
                    "repr": f"Tensor(shape=(), dtype={dtypes.default_float().name}, weak_type=True)"}
    assert m.signature[0][1] == hf.ShapeDtype((), dtypes.default_float())
    assert m.signature[1][0] == hf.ShapeDtype((2,), np.float32)


# ---------------------------------------------------------------- switching, narrowing, errors

def test_switching_the_mode_traces_again_once_per_mode():
    traces = []

    def f(x):
        traces.append(1)
        return x + hnp.arange(3)

    g = hf.jit(f)
    x = np.ones(3, np.float32)
    assert g(x).dtype == np.float64  # (numpy: float32 + int64)
    hf.config.dtypes = "jax"
    assert g(x).dtype == np.float32
    assert g(x).dtype == np.float32
    hf.config.dtypes = "numpy"
    assert g(x).dtype == np.float64
    assert len(traces) == 2 and g.cache_size() == 2


def test_jax_mode_narrows_64_bit_inputs_as_jax_does(python_calls):
    hf.config.dtypes = "jax"
    f = hf.jit(lambda x, n, s: (x * s, n + 1))
    for k in range(3):
        y, m = f(np.full(3, 1.5 + k), np.int64(k), 2.0)  # (float64 and int64: float32 and int32)
        assert (y.dtype, m.dtype) == (np.float32, np.int32)
        np.testing.assert_array_equal(np.asarray(y), np.full(3, 3.0 + 2 * k, np.float32))
    assert f(np.ones(3, np.float32), np.int32(0), 1.0)[0].dtype == np.float32
    assert f.cache_size() == 1  # (one signature after narrowing)
    assert len(python_calls) == 1  # (jax's C++ loop narrows numpy arrays too: every later call ran from C++)
    assert hf.jit(lambda: np.ones(2))().dtype == np.float32  # (a returned numpy constant too)
    assert list(f.lower(np.ones(3), np.int64(0), 2.0).signature[0]) == [
        hf.ShapeDtype((3,), np.float32), hf.ShapeDtype((), np.int32), hf.ShapeDtype((), np.float32)]


def test_jax_mode_eager_calls():
    hf.config.dtypes = "jax"
    z, total, index = hnp.zeros(3), hnp.sum(np.array([1, 2], np.int8)), hnp.argmax(np.array([1.0, 3.0]))
    assert (z.dtype, total.dtype, index.dtype) == (np.float32, np.int32, np.int32)
    assert isinstance(z, jax.Array) and int(total) == 3 and int(index) == 1
    assert hnp.__array_namespace_info__().default_dtypes()["real floating"] == np.float32


def test_bad_modes_are_refused():
    with pytest.raises(ValueError, match=r"config.dtypes must be one of \('numpy', 'jax'\), got 'jax64'"):
        hf.config.dtypes = "jax64"
    with pytest.raises(ValueError, match=r"config.dtypes must be one of \('numpy', 'jax'\), got None"):
        hf.config.dtypes = None
    with pytest.raises(ValueError, match=r"HLOFORGE_DTYPES must be one of \('numpy', 'jax'\), got 'x64'"):
        Config({"HLOFORGE_DTYPES": "x64"})
    with pytest.raises(ValueError, match=r"hf.config.dtypes must be one of \('numpy', 'jax'\), got 'NumPy'"):
        dtypes.set_mode("NumPy")
    assert hf.config.dtypes == dtypes.mode() == "numpy"


def test_the_environment_variable_sets_the_mode():
    other = Config({"HLOFORGE_DTYPES": " JAX "})
    assert other.dtypes == "jax" and "dtypes='jax'" in repr(other)
    assert dtypes.mode() == "numpy"  # (only hf.config itself sets the mode)
    code = ("import hloforge as hf; from hloforge.frontend import dtypes; "
            "print(hf.config.dtypes, dtypes.mode(), dtypes.result_type(0.5))")
    env = dict(os.environ, HLOFORGE_DTYPES="jax")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["jax", "jax", "float32"]


def test_python_ints_that_do_not_fit_are_refused_or_take_numpys_type(mode):
    """Issue 49: a Python int beyond the default integer never wraps. numpy mode: uint64 for [2**63, 2**64)
    as numpy gives, an OverflowError beyond; jax mode: the OverflowError jax raises beyond int32."""
    if mode == "numpy":
        for make in (hnp.asarray, hnp.array, lambda v: hnp.full((2,), v)):
            got = np.asarray(make(2**63))
            assert got.dtype == np.uint64 and (got == np.asarray(2**63)).all()
        assert np.asarray(hf.jit(lambda: hnp.asarray(2**64 - 1) - 1)()) == np.uint64(2**64 - 2)
        assert np.asarray(hnp.asarray(-2**63)).dtype == np.int64
        for v in (2**64, -2**63 - 1):
            with pytest.raises(OverflowError, match=rf"hloforge.numpy.asarray: Python int {v} too large to "
                                                    r"convert to int64 or uint64"):
                hnp.asarray(v)
        with pytest.raises(OverflowError, match=r"hloforge.numpy.asarray: Python int 18446744073709551616 too large"):
            hnp.asarray([1, 2**64])
        with pytest.raises(OverflowError, match=r"hloforge.numpy.full: Python integer 9223372036854775808 out of "
                                                r"bounds for int64"):
            hnp.full((2,), 2**63, np.int64)  # (numpy 2 raises too)
        with pytest.raises(OverflowError, match=r"add: Python integer 1099511627776 out of bounds for int32"):
            hf.jit(lambda x: x + 2**40)(np.int32([1]))  # (NEP 50, as numpy)
    else:
        assert np.asarray(hnp.asarray(2**31 - 1)).dtype == np.int32
        with pytest.raises(OverflowError, match=r"hloforge.numpy.asarray: Python int 2147483648 too large to "
                                                r"convert to int32 \(hf.config.dtypes is \"jax\"\)"):
            hnp.asarray(2**31)
        with pytest.raises(OverflowError, match=r"Python int -2147483649 too large to convert to int32"):
            hf.jit(lambda: hnp.asarray(-2**31 - 1))()
        with pytest.raises(OverflowError, match=r"hloforge.numpy.asarray: Python integer 2147483648 out of "
                                                r"bounds for int32 \(hf.config.dtypes is \"jax\"\)"):
            hnp.asarray([1, 2**31])
        with pytest.raises(OverflowError, match=r"hloforge.numpy.full: Python int 2147483648 too large"):
            hnp.full((2,), 2**31)
        with pytest.raises(OverflowError, match=r"add: Python integer 2147483648 out of bounds for int32"):
            hf.jit(lambda x: x + 2**31)(np.int32([1]))
        for v in (2**31, [2**31]):
            with pytest.raises(OverflowError):
                jnp.asarray(v)  # (what jax does)
