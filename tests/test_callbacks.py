"""Host callbacks: hf.debug.print, hf.debug.callback and hf.pure_callback against jax's, inside
hf.jit (through the pass pipeline and without it), eagerly, under hf.grad/hf.jvp/hf.vmap, with
ordered=True, and their errors. Each case compiles one program for hloforge and one for jax."""
from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
import hloforge.numpy as hnp
from hloforge.frontend import dtypes

X = np.arange(3, dtype=np.float32)
F64 = np.array([1 / 3, -2.5e300], np.float64)


def _jax_out(capsys, fn, *args):
    """What jax.jit(fn) prints for ``args`` (stdout), run to completion."""
    capsys.readouterr()
    jax.block_until_ready(jax.jit(fn)(*args))
    return capsys.readouterr().out


def _hf_out(capsys, fn, *args):
    capsys.readouterr()
    result = fn(*args)
    return capsys.readouterr().out, result


def _printing(lib, lnp):
    def f(x, s):
        lib.debug.print("x={} s={s:.3f} both={x} {s}", x, s=s, x=x)
        lib.debug.print("plain text")
        lib.debug.print("{0} then {1} then {0}", lnp.sum(x), x * 2)
        with np.printoptions(precision=2):
            lib.debug.print("rounded {}", x / 3)
        lib.debug.print(ordered=True)("two-call form {v}", v=x[1])
        return x + s
    return f


def test_print_formats_like_jax(capsys):
    s = np.float32(0.25)
    want = _jax_out(capsys, _printing(jax, jnp), X, s)
    f = hf.jit(_printing(hf, hnp))
    for _ in range(2):  # (each run prints: a later run takes the same path as the first)
        got, y = _hf_out(capsys, f, X, s)
        assert sorted(got.splitlines()) == sorted(want.splitlines())
        np.testing.assert_array_equal(np.asarray(y), X + s)
    assert "rounded [0.   0.33 0.67]" in got  # (the numpy print options of the call, as in jax)


_ORDERED_LINES = ["a 0.0", "b [0. 1. 2.]", "c 6.0", "d [0. 2. 4.]", "e 3.0"]


def _ordered(lib, lnp):
    def f(x):
        lib.debug.print("a {}", x[0], ordered=True)
        y = x * 2
        lib.debug.print("b {}", x, ordered=True)
        z = lnp.sum(y)
        lib.debug.print("c {}", z, ordered=True)
        lib.debug.print("d {}", y, ordered=True)
        lib.debug.print("e {}", lnp.sum(x), ordered=True)
        return z
    return f


def test_ordered_prints_keep_program_order(capsys):
    want = _jax_out(capsys, _ordered(jax, jnp), X)
    assert want.splitlines() == _ORDERED_LINES
    f = hf.jit(_ordered(hf, hnp))
    for _ in range(3):
        assert _hf_out(capsys, f, X)[0] == want
    m = f.lower(X)
    m.optimize()
    assert m.text.count("hloforge.callback_order") == 5
    hlo = m.compile().hlo_text  # (a chain of tokens: the first from after-all, each the next one's operand)
    assert hlo.count("after-all()") == 1 and len(re.findall(r"token\[\] custom-call\(", hlo)) == 5


def _loops(lib, lax):
    def f(x):
        lib.debug.print("before {}", x, ordered=True)

        def body(i, c):
            lib.debug.print("i={} c={}", i, c, ordered=True)

            def inner(j, d):
                lib.debug.print("  j={}", j, ordered=True)
                return d + 1
            return lax.fori_loop(0, 2, inner, c * 2)
        y = lax.fori_loop(0, 2, body, x)
        lib.debug.print("after {}", y, ordered=True)
        z = lax.cond(y > 0, lambda v: (lib.debug.print("pos {}", v, ordered=True), v)[1], lambda v: -v, y)
        lib.debug.print("end {}", z, ordered=True)
        return z
    return f


def test_ordered_prints_in_loops_and_branches(capsys):
    f = hf.jit(_loops(hf, hf.lax))
    for x in (np.float32(1.5), np.float32(-1.5)):  # (-1.5: the branch without a print)
        want = _jax_out(capsys, _loops(jax, jax.lax), x)
        got, y = _hf_out(capsys, f, x)
        assert got == want
    m = f.lower(x)
    m.optimize()
    hlo = m.compile().hlo_text.splitlines()  # (the token is a loop carry and a result of the conditional, as in jax)
    assert sum("token[]" in line and " while(" in line for line in hlo) == 2
    assert sum("token[]" in line and " conditional(" in line for line in hlo) == 1


def _values(lib, seen):
    def f(xs, tree):
        lib.debug.callback(lambda *a, **k: seen.append((a, k)), *xs, label="all", n=3)
        lib.debug.callback(lambda t: seen.append(t), tree, ordered=True)
        return [lib.pure_callback(lambda v: v, jax.ShapeDtypeStruct(x.shape, x.dtype), x) for x in xs]
    return f


# one operand per dtype the FFI callback carries (float64 and 64-bit integers exact: no x64 flag needed)
_DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64, np.float16, dtypes.bfloat16,
           np.float32, np.float64, np.complex64, np.complex128]


def test_callbacks_receive_numpy_arrays_of_every_dtype():
    rng = np.random.default_rng(0)
    xs = [(rng.normal(size=(2, 3)) * 40).astype(d) for d in _DTYPES] + [F64, np.int32(7)]
    xs[6] = np.array([[2**64 - 1, 0, 1], [2**63, 5, 6]], np.uint64)
    tree = {"a": F64, "b": (xs[3],)}
    seen = []
    out = hf.jit(_values(hf, seen))(xs, tree)
    (args, kwargs), got_tree = seen
    assert kwargs == {"label": "all", "n": 3}
    for a, x, o in zip(args, xs, out):
        assert type(a) is np.ndarray and a.dtype == np.asarray(x).dtype
        np.testing.assert_array_equal(a, x)
        np.testing.assert_array_equal(np.asarray(o), x)  # (pure_callback's identity: the values come back)
        assert np.asarray(o).dtype == np.asarray(x).dtype
    assert list(got_tree) == ["a", "b"] and isinstance(got_tree["b"], tuple)
    np.testing.assert_array_equal(got_tree["a"], F64)


def _pure(lib, lnp):
    def f(x, y):
        out = lib.pure_callback(lambda a, b: {"sin": np.sin(a), "n": (np.int32(a.size), b.sum() * 2.0)},
                                {"sin": jax.ShapeDtypeStruct(x.shape, x.dtype),
                                 "n": (jax.ShapeDtypeStruct((), np.int32), jax.ShapeDtypeStruct((), np.float32))},
                                x, b=y)
        unused = lib.pure_callback(lambda a: pytest.fail("a dead pure_callback ran"),  # (dropped, as in jax)
                                   jax.ShapeDtypeStruct((), np.float32), x)
        del unused
        return out["sin"] + out["n"][1], out["n"][0]
    return f


def test_pure_callback_results_like_jax():
    y = np.ones(4, np.float32)
    want = jax.jit(_pure(jax, jnp))(X, y)
    f = hf.jit(_pure(hf, hnp))
    got = f(X, y)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def _switchable(mode):
    def cb(x):
        return {"ok": x * 2, "shape": np.zeros(4, np.float32), "dtype": (x * 2).astype(np.float64),
                "scalar": 1.5, "tree": (x, x), "raise": 1 / 0 if mode[0] == "raise" else x}[mode[0]]
    return lambda x: hf.pure_callback(cb, hf.ShapeDtypeStruct((3,), np.float32), x)


@pytest.mark.parametrize("mode, error", [
    ("shape", r"hloforge.pure_callback: incorrect output shape for return value #0: expected \(3,\), got \(4,\)"),
    ("dtype", r"hloforge.pure_callback: incorrect output dtype for return value #0: expected float32, got float64"),
    ("tree", r"hloforge.pure_callback: the callback must return values of the structure of result_shape_dtypes"),
    ("raise", r"ZeroDivisionError: division by zero"),
])
def test_pure_callback_results_are_checked(mode, error):
    state = _CHECKED.setdefault("state", ["ok"])
    f = _CHECKED.setdefault("f", hf.jit(_switchable(state)))  # (one program: the callback's mode changes)
    state[0] = "ok"
    np.testing.assert_array_equal(np.asarray(f(X)), X * 2)
    state[0] = "scalar"  # (a Python scalar takes the declared dtype, as jax's weak types do)
    with pytest.raises(hf.ExecutionError, match=r"incorrect output shape .* expected \(3,\), got \(\)"):
        f(X)
    state[0] = mode
    with pytest.raises(hf.ExecutionError, match=error):
        f(X)
    state[0] = "ok"
    np.testing.assert_array_equal(np.asarray(f(X)), X * 2)  # (the executable still runs)


_CHECKED: dict = {}


def test_eager_calls(capsys):
    capsys.readouterr()
    jax.debug.print("eager {} {k}", jnp.asarray(X), k=2)
    want = capsys.readouterr().out
    hf.debug.print("eager {} {k}", jnp.asarray(X), k=2)
    assert capsys.readouterr().out == want == "eager [0. 1. 2.] 2\n"
    seen = []
    hf.debug.callback(lambda a, b: seen.append((type(a), a, b)), jnp.asarray(X), 5)
    assert seen[0][0] is np.ndarray and seen[0][2] == 5
    np.testing.assert_array_equal(seen[0][1], X)
    out = hf.pure_callback(np.cos, hf.ShapeDtypeStruct((2,), np.float64), F64)  # (exact float64, no x64 flag)
    assert isinstance(out, jax.Array) and out.dtype == np.float64
    np.testing.assert_array_equal(np.asarray(out), np.cos(F64))


def _grads(lib):
    def f(x):
        lib.debug.print("primal {}", x)
        lib.debug.callback(lambda v: None, x * 3)
        return (x * x).sum()
    return f


def test_debug_callbacks_under_grad_and_jvp_see_primal_values(capsys):
    capsys.readouterr()
    want_g = jax.grad(_grads(jax))(X)
    want_j = jax.jvp(_grads(jax), (X,), (X,))
    want = capsys.readouterr().out
    got_g = hf.grad(_grads(hf))(X)
    got_j = hf.jvp(_grads(hf), (X,), (X,))
    assert capsys.readouterr().out == want == "primal [0. 1. 2.]\n" * 2
    np.testing.assert_array_equal(np.asarray(got_g), np.asarray(want_g))
    np.testing.assert_array_equal(np.asarray(got_j[1]), np.asarray(want_j[1]))


def test_pure_callback_is_not_differentiable():
    def f(x):
        return hf.pure_callback(np.sin, hf.ShapeDtypeStruct((), np.float32), x)
    with pytest.raises(ValueError, match=r"hloforge.pure_callback: pure callbacks do not support differentiation "
                                         r"\(hf.grad, hf.vjp, hf.jacrev\); wrap .* hf.custom_vjp"):
        hf.grad(f)(np.float32(1))
    with pytest.raises(ValueError, match=r"hloforge.pure_callback: pure callbacks do not support JVP"):
        hf.jvp(f, (np.float32(1),), (np.float32(1),))


def _batched_prints(lib):
    def f(x, y):
        lib.debug.print("p1 {}", x, ordered=True)
        lib.debug.print("p2 {}", y, ordered=True)  # (unbatched: once, between the others)
        lib.debug.print("p3 {} {}", x * 2, y, ordered=True)
        return x
    return f


def test_vmap_prints_each_example_in_order(capsys):
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    want = _jax_out(capsys, jax.vmap(_batched_prints(jax), in_axes=(0, None)), xs, np.float32(7))
    got, _ = _hf_out(capsys, hf.jit(hf.vmap(_batched_prints(hf), in_axes=(0, None))), xs, np.float32(7))
    assert got == want and len(got.splitlines()) == 5


_SHAPES: list = []


def _shapes_cb(x, y):
    _SHAPES.append((np.shape(x), np.shape(y)))
    return np.asarray(x + y, np.float32)


def _vmapped(lib, method):
    def f(x, y):
        shape = np.broadcast_shapes(np.shape(x), np.shape(y))
        return lib.pure_callback(_shapes_cb, jax.ShapeDtypeStruct(shape, np.float32), x, y, vmap_method=method)
    return f


@pytest.mark.parametrize("method", ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                                    "legacy_vectorized"])
def test_pure_callback_vmap_methods_like_jax(method):
    x, y = np.arange(4, dtype=np.float32), np.float32(1)
    _SHAPES.clear()
    want = jax.jit(jax.vmap(_vmapped(jax, method), in_axes=(0, None)))(x, y)
    want_calls = list(_SHAPES)
    _SHAPES.clear()
    got = hf.jit(hf.vmap(_vmapped(hf, method), in_axes=(0, None)))(x, y)
    assert _SHAPES == want_calls
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_nested_vmap_of_pure_callback():
    xx, y = np.arange(6, dtype=np.float32).reshape(2, 3), np.float32(1)
    _SHAPES.clear()
    want = jax.jit(jax.vmap(jax.vmap(_vmapped(jax, "expand_dims"), in_axes=(0, None)), in_axes=(0, None)))(xx, y)
    want_calls = list(_SHAPES)
    _SHAPES.clear()
    got = hf.jit(hf.vmap(hf.vmap(_vmapped(hf, "expand_dims"), in_axes=(0, None)), in_axes=(0, None)))(xx, y)
    assert _SHAPES == want_calls == [((2, 3), (1, 1))]
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_pure_callback_vmap_needs_a_method():
    with pytest.raises(NotImplementedError, match=r"hloforge.pure_callback: vmap is only supported when vmap_method "
                                                  r"is one of 'sequential', .* got vmap_method=None"):
        hf.jit(hf.vmap(_vmapped(hf, None), in_axes=(0, None)))(X, np.float32(1))


def _io(lib, lnp, io_callback, log, side):
    """Ordered io calls between ordered prints and in a loop, and an unordered one whose result
    is unused (it runs when XLA schedules it: its own log)."""
    def record(v):
        log.append(np.asarray(v).tolist())
        return np.int32(len(log))

    def note(v):
        side.append(np.asarray(v).tolist())
        return np.int32(0)

    count = lib.ShapeDtypeStruct((), np.int32)

    def f(x):
        lib.debug.print("before", ordered=True)
        n = io_callback(record, count, x * 2, ordered=True)
        lib.debug.print("after {}", n, ordered=True)
        io_callback(note, count, x[0])  # (unused result: still runs, it has a side effect)
        m = lib.lax.fori_loop(0, 2, lambda i, c: c + io_callback(record, count, i, ordered=True), 0)
        return x + n + m
    return f


def test_io_callback_runs_for_its_effect_like_jax(capsys):
    from jax.experimental import io_callback as jax_io_callback
    want_log, want_side, got_log, got_side = [], [], [], []
    want = _jax_out(capsys, _io(jax, jnp, jax_io_callback, want_log, want_side), X)
    f = hf.jit(_io(hf, hnp, hf.io_callback, got_log, got_side))
    got, y = _hf_out(capsys, f, X)
    assert got == want == "before\nafter 1\n"
    assert got_log == want_log == [[0.0, 2.0, 4.0], 0, 1] and got_side == want_side == [0.0]
    np.testing.assert_array_equal(np.asarray(y), X + 1 + 5)  # (n = 1; the loop adds 2 + 3)
    _hf_out(capsys, f, X)  # (each run calls back again)
    assert len(got_log) == 6 and len(got_side) == 2
    m = f.lower(X)
    m.optimize()
    calls = [op for op in m.walk() if op.name == "stablehlo.custom_call"]
    assert len(calls) == 5 and all("has_side_effect = true" in str(op) for op in calls)


def test_io_callback_eagerly_under_vmap_and_refusing_transformations():
    seen = []

    def record(v):
        seen.append(float(v))
        return np.float32(v) * 2
    spec = hf.ShapeDtypeStruct((), np.float32)
    assert float(hf.io_callback(record, spec, np.float32(1.5))) == 3.0 and seen == [1.5]
    got = hf.vmap(lambda x: hf.io_callback(record, spec, x))(X)  # (once per example, as jax's)
    np.testing.assert_array_equal(np.asarray(got), X * 2)
    assert seen == [1.5, 0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match=r"hloforge.io_callback: cannot vmap an ordered IO callback"):
        hf.vmap(lambda x: hf.io_callback(record, spec, x, ordered=True))(X)
    with pytest.raises(ValueError, match=r"hloforge.io_callback: IO callbacks do not support differentiation"):
        hf.grad(lambda x: hf.io_callback(record, spec, x))(np.float32(1))
    with pytest.raises(ValueError, match=r"hloforge.io_callback: IO callbacks do not support JVP"):
        hf.jvp(lambda x: hf.io_callback(record, spec, x), (np.float32(1),), (np.float32(1),))


def _kept(x):
    hf.debug.print("kept {}", x)
    hf.debug.callback(lambda v: None, x)
    return x + 1


def test_pass_pipeline_keeps_side_effecting_callbacks(capsys):
    m = hf.jit(_kept).lower(X)
    m.optimize()
    calls = [op for op in m.walk() if op.name == "stablehlo.custom_call"]
    assert len(calls) == 2 and all("has_side_effect = true" in str(op) for op in calls)
    assert "func.call" not in m.text  # (the wrappers are inlined)
    plain = hf.trace(lambda x: (hf.ops.custom_call([x], "side_effect", [], has_side_effect=True),
                                hf.ops.custom_call([x], "pure", [((3,), np.float32)]), x)[-1],
                     hf.ShapeDtype((3,), np.float32))
    plain.optimize()  # (any side-effecting custom call stays, an unused pure one goes)
    assert [str(op.attributes["call_target_name"]) for op in plain.walk()
            if op.name == "stablehlo.custom_call"] == ['"side_effect"']
    for optimize in (True, False):  # (without the pipeline, the compile step inlines the wrappers itself)
        got, y = _hf_out(capsys, hf.jit(_kept, optimize=optimize), X)
        assert got == "kept [0. 1. 2.]\n"
    text = m.text  # (a module printed and parsed in this process still runs its callbacks)
    got, _ = _hf_out(capsys, hf.Module.parse(text).compile(), X)
    assert got == "kept [0. 1. 2.]\n"
    other = re.sub(r'hloforge.callback = "cb_[0-9a-f]+_', 'hloforge.callback = "cb_00000000_', text)
    with pytest.raises(hf.CompileError, match=r"calls the Python callback 'cb_00000000_\d+', which this process "
                                              r"never made"):
        hf.Module.parse(other).compile()
    stripped = re.sub(r'hloforge.callback = "cb_[0-9a-f_]+", ', "", text, count=1)
    with pytest.raises(hf.CompileError, match=r"main: stablehlo.custom_call @hloforge.python_callback has no "
                                              r"hloforge.callback attribute naming its Python function"):
        hf.Module.parse(stripped).compile()
    jaxs = text.replace("@hloforge.python_callback(%arg0) {backend_config", "@xla_ffi_python_cpu_callback(%arg0) "
                        "{backend_config", 1)  # (a jax callback next to hloforge's: still refused)
    jaxs = re.sub(r'hloforge.callback = "cb_[0-9a-f_]+", ', "", jaxs, count=1)
    with pytest.raises(hf.CompileError, match=r"main: stablehlo.custom_call @xla_ffi_python_cpu_callback is a jax "
                                              r"Python callback"):
        hf.Module.parse(jaxs).compile()


@pytest.mark.parametrize("call, error, match", [
    (lambda: hf.debug.callback(3, X), TypeError, "hloforge.debug.callback: the first argument must be callable, "
                                                  "but got an object of type int: 3"),
    (lambda: hf.debug.callback(ordered=True)(print, X), None, None),
    (lambda: hf.debug.callback(None, X), TypeError, "hloforge.debug.callback received unexpected arguments in the "
                                                     "two-call form"),
    (lambda: hf.debug.print("{}", 1, 2), ValueError, r"Unused positional arguments to `hloforge.debug.print`: \[2\]"),
    (lambda: hf.debug.print("x", x=1), ValueError, r"Unused keyword arguments to `hloforge.debug.print`: \['x'\]. "
                                                   "You may be passing an f-string"),
    (lambda: hf.debug.print("{y}", x=1), KeyError, "'y'"),
    (lambda: hf.debug.print(3), TypeError, "hloforge.debug.print: fmt must be a str, got int: 3"),
    (lambda: hf.debug.print(None, 1), TypeError, "hloforge.debug.print received unexpected arguments in the "
                                                 "two-call form"),
    (lambda: hf.pure_callback(3, None), TypeError, "hloforge.pure_callback: callback must be callable, got int: 3"),
    (lambda: hf.pure_callback(np.sin, (2, 3), X), TypeError,
     r"hloforge.pure_callback: result_shape_dtypes leaf 0 must have a shape and a dtype .* got 2"),
    (lambda: hf.pure_callback(np.sin, hf.ShapeDtype((None,), np.float32), X), ValueError,
     r"result_shape_dtypes leaf 0 has shape \(None,\); callbacks need static nonnegative dimensions"),
    (lambda: hf.pure_callback(np.sin, hf.ShapeDtypeStruct((3,), "U3"), X), TypeError, "unsupported dtype"),
    (lambda: hf.pure_callback(np.sin, hf.ShapeDtypeStruct((3,), np.float32), X, vmap_method="vectorized"),
     ValueError, r"hloforge.pure_callback: vmap_method must be one of \['sequential', .*got 'vectorized'"),
    (lambda: hf.pure_callback(np.sin, hf.ShapeDtypeStruct((3,), np.float32), X, sharding=hf.devices("cpu")[0]),
     NotImplementedError, r"hloforge.pure_callback: sharding=.* is not supported"),
    (lambda: hf.io_callback(3, None), TypeError, "hloforge.io_callback: callback must be callable, got int: 3"),
    (lambda: hf.io_callback(np.sin, (2, 3), X), TypeError,
     r"hloforge.io_callback: result_shape_dtypes leaf 0 must have a shape and a dtype .* got 2"),
    (lambda: hf.io_callback(np.sin, hf.ShapeDtypeStruct((3,), np.float32), X, sharding=hf.devices("cpu")[0]),
     NotImplementedError, r"hloforge.io_callback: sharding=.* is not supported"),
])
def test_errors(call, error, match, capsys):
    if error is None:
        call()  # (valid: the two-call form)
        return
    with pytest.raises(error, match=match):
        call()
    with pytest.raises(error, match=match):  # (the same inside a trace)
        hf.trace(lambda x: call(), hf.ShapeDtype((3,), np.float32))


def test_sharded_programs_with_callbacks_are_refused():
    mesh = hf.Mesh(np.array(hf.devices("cpu")[:1]), ("x",))
    f = hf.jit(_kept, in_shardings=hf.NamedSharding(mesh, hf.P()))
    with pytest.raises(NotImplementedError, match=r"main: host callbacks .* in sharded programs are not supported"):
        f(X)


def test_debug_namespace():
    import hloforge.debug as debug
    assert debug is hf.debug and set(debug.__all__) == {"print", "callback"}
    assert {"pure_callback", "io_callback", "debug"} <= set(hf.__all__)
    with pytest.raises(AttributeError, match="module 'hloforge.debug' has no attribute 'breakpoint'"):
        hf.debug.breakpoint
