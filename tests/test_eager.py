"""Eager calls (frontend/eager.py): every public function of hloforge.numpy (with fft and linalg),
hloforge.ops, hloforge.nn and hloforge.lax called on concrete values outside a trace returns jax Arrays equal to the same call
traced, and its compiled form is cached per static signature."""
import functools
import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
from hloforge import lax, nn
from hloforge import numpy as hnp
from hloforge import ops
from hloforge.frontend import eager
from hloforge.frontend.tracing import NoTraceError, Tensor

RNG = np.random.default_rng(3)
A = RNG.uniform(0.1, 0.9, (3, 4)).astype(np.float32)
B = RNG.uniform(0.1, 0.9, (3, 4)).astype(np.float32)
S = (np.eye(3) * 3 + RNG.uniform(0, 0.5, (3, 3))).astype(np.float32)
V = RNG.uniform(0.1, 0.9, 4).astype(np.float32)
I = RNG.integers(1, 5, (3, 4)).astype(np.int32)  # noqa: E741
# argument lists tried in order; a function's case is the first its traced form accepts
CANDIDATES = [(A,), (A, B), (S,), (V,), (A, 2), (I,), (I, I), (A, 0), (V, V), (5,), ((2, 3),)]


def _public(module, names=None):
    names = names if names is not None else [n for n in dir(module) if not n.startswith("_")]
    return [(module.__name__, n) for n in names if inspect.isfunction(getattr(module, n))]


FUNCTIONS = (_public(hnp) + _public(hnp.fft, hnp.fft.__all__) + _public(hnp.linalg, hnp.linalg.__all__)
             + _public(ops, ops.__all__) + _public(nn, nn.__all__) + _public(lax, lax.__all__))
NAMESPACES = {"hloforge.frontend.numpy": hnp, "hloforge.frontend.numpy.fft": hnp.fft,
              "hloforge.frontend.numpy.linalg": hnp.linalg, "hloforge.frontend.ops": ops, "hloforge.frontend.nn": nn,
              "hloforge.frontend.lax": lax}


def _body(fn, args):
    """fn over the array arguments of ``args`` (the other arguments fixed)."""
    arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]

    def body(*xs):
        full = list(args)
        for i, x in zip(arrays, xs):
            full[i] = x
        return fn(*full)
    return body, [args[i] for i in arrays]


def _traces(fn, args) -> bool:
    body, arrays = _body(fn, args)
    try:
        hf.trace(body, *arrays)
    except Exception:
        return False
    return True


@functools.cache
def _traced_results():
    """Every function on the first argument list it traces on; those whose list has a static argument
    (a Python scalar or shape) run traced in one compiled program for all of them (XLA compiles one
    large program faster than dozens of small ones); None for a function whose outputs are not all
    arrays there, so it is checked on its own. The others are checked on their own (``_traced``)."""
    cases = {}
    for namespace, name in FUNCTIONS:
        fn = getattr(NAMESPACES[namespace], name)
        cases[namespace, name] = next((args for args in CANDIDATES if _traces(fn, args)), None)
    chosen = {key: args for key, args in cases.items() if args is not None and not _all_arrays(args)}
    arrays = [A, B, S, V, I]

    def program(*xs):
        out = {}
        for (namespace, name), args in chosen.items():
            fn = getattr(NAMESPACES[namespace], name)
            result = fn(*[xs[_index(arrays, a)] if isinstance(a, np.ndarray) else a for a in args])
            if all(isinstance(leaf, Tensor) for leaf in jax.tree_util.tree_leaves(result)):
                out[f"{namespace}:{name}"] = result
        return out
    try:
        results = hf.jit(program)(*arrays)
    except Exception:
        results = {}
    return cases, {tuple(key.split(":")): value for key, value in results.items()}


def _index(arrays, a):
    return next(i for i, x in enumerate(arrays) if x is a)


def _all_arrays(args) -> bool:
    return all(isinstance(a, np.ndarray) for a in args)


def _call(fn, args):
    """fn(*args), called from this one line for both sides: the eager call of a function on arrays
    alone and hf.jit of that function trace the same module, call site included, so the eager
    call runs the executable hf.jit compiled instead of compiling its own copy."""
    return fn(*args)


def _traced(fn, args):
    """fn(*args) traced with the array arguments as hf.jit arguments, or None if it does not trace."""
    if _all_arrays(args):
        jitted, arrays = hf.jit(fn.__wrapped__), args
    else:
        body, arrays = _body(fn, args)
        jitted = hf.jit(body)
    try:
        return _call(jitted, arrays)
    except Exception:
        return None


def _leaves_equal(got, want, built_ir, ulps=0):
    """Equal leaves; ``ulps``: floats may differ by that many units in the last place (XLA
    vectorizes an elementwise function differently inside a larger fusion)."""
    got_leaves, want_leaves = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        assert isinstance(g, jax.Array) or not built_ir, type(g)  # (no IR: its own Python values, as numpy's)
        g, w = np.asarray(g), np.asarray(w)
        if ulps and g.dtype == w.dtype and np.issubdtype(g.dtype, np.inexact):
            np.testing.assert_allclose(g, w, rtol=ulps * np.finfo(g.dtype).eps, atol=0)
        else:
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("namespace, name", FUNCTIONS, ids=[f"{m.split('.')[-1]}.{n}" for m, n in FUNCTIONS])
def test_eager_equals_traced(namespace, name):
    """The first argument list the traced function takes gives the same arrays eagerly; a function
    that takes none of them fails eagerly as it does traced, never for want of a trace."""
    fn = getattr(NAMESPACES[namespace], name)
    cases, results = _traced_results()
    case = cases[namespace, name]
    if (namespace, name) in results:
        tries, ulps = [(case, results[namespace, name])], 4
    else:  # (from the first argument list that traces: the ones before it do not)
        first = next((i for i, args in enumerate(CANDIDATES) if args is case), len(CANDIDATES))
        tries, ulps = ((args, _traced(fn, args)) for args in CANDIDATES[first:]), 0
    for args, want in tries:
        if want is not None and all(isinstance(x, jax.Array) for x in jax.tree_util.tree_leaves(want)):
            try:
                got = _call(fn, args)
            except TypeError:
                if fn.__wrapped__ in eager._traced:
                    raise
                return  # (builds no IR: numpy's own answer for arrays, e.g. can_cast(array) is numpy 2's TypeError)
            _leaves_equal(got, want, fn.__wrapped__ in eager._traced, ulps)
            return
    try:
        fn(*CANDIDATES[0])
    except NoTraceError:
        raise
    except Exception:
        pass


def test_the_issue_examples():
    out = hnp.sum(hnp.arange(5))
    assert isinstance(out, jax.Array) and int(out) == 10 and out.dtype == np.int64
    np.testing.assert_allclose(np.asarray(hnp.sin(jnp.ones(3)) * 2), np.sin(np.ones(3)) * 2, rtol=1e-6)
    assert hnp.shape(A) == (3, 4) and hnp.ndim(A) == 2  # (functions that build no IR run as they are)
    assert hnp.result_type(A, 1.0) == np.float32


def test_value_shaped_functions_and_vectorize_run_eagerly_as_jax_numpy():
    """nonzero, unique, the set operations, ...: their result shape depends on the values, which an
    eager call has (as jax.numpy reads concrete arrays): no size= outside a trace."""
    a, b = np.array([0, 3, 3, 1, 0]), np.array([3, 9])
    for name, args in [("nonzero", (a,)), ("flatnonzero", (a,)), ("argwhere", (a,)), ("unique", (a,)),
                       ("union1d", (a, b)), ("intersect1d", (a, b)), ("setdiff1d", (a, b)), ("setxor1d", (a, b)),
                       ("extract", (a > 1, a)), ("where", (a > 1,)), ("unique_counts", (a,)),
                       ("unique_all", (a,))]:
        got, want = getattr(hnp, name)(*args), getattr(jnp, name)(*args)
        for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
            assert isinstance(g, jax.Array), name
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w), err_msg=name)
    with pytest.raises(ValueError, match="nonzero: the result's shape depends on the values of a traced array"):
        hf.jit(hnp.nonzero)(a)
    traced = hf.jit(lambda a: hnp.where(a > 1, size=3, fill_value=-1))(a)
    np.testing.assert_array_equal(np.asarray(traced[0]), np.asarray(jnp.where(a > 1, size=3, fill_value=-1)[0]))
    with pytest.raises(ValueError, match="hloforge.numpy.where: either both or neither of x and y should be given"):
        hnp.where(a > 1, a)
    affine = hnp.vectorize(lambda x, k: x * k + 1)
    want = np.vectorize(lambda x, k: x * k + 1)(V, 2.0)  # (numpy's: 2.0 becomes a float64 array)
    for got in (affine(V, 2.0), hf.jit(affine)(V, 2.0)):
        assert isinstance(got, jax.Array)
        np.testing.assert_array_equal(np.asarray(got), want)


def test_python_scalars_stay_weak_and_static_signatures_are_cached():
    x = jnp.ones(3, jnp.float32)
    assert hnp.multiply(x, 2.5).dtype == jnp.float32
    before = len(eager._cache)
    for _ in range(3):
        hnp.multiply(x, 0.5)
        hnp.mean(x, axis=0)
    assert len(eager._cache) - before == 2  # (one compiled function per static signature)
    assert float(hnp.mean(np.arange(4.0), axis=0)) == 1.5


def test_inside_a_trace_nothing_changes():
    m = hf.trace(lambda x: hnp.sin(x) + ops.exp(x), A)
    assert m.op_counts()["stablehlo.sine"] == 1


def test_a_leaked_tracer_is_a_clear_error():
    leaked = []
    hf.jit(lambda x: leaked.append(x) or x)(A)
    with pytest.raises(ValueError, match=r"argument leaf 0 is a Tensor of a finished trace"):
        hnp.add(leaked[0], 1.0)
