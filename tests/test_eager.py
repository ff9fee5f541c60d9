"""Eager calls (frontend/eager.py): every public function of hloforge.numpy (with fft and linalg),
hloforge.ops, hloforge.nn and hloforge.lax called on concrete values outside a trace returns jax Arrays equal to the same call
traced, and its compiled form is cached per static signature."""
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
from hloforge.frontend.tracing import NoTraceError

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


def _traced(fn, args):
    """fn(*args) traced with the array arguments as hf.jit arguments, or None if it does not trace."""
    arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]

    def body(*xs):
        full = list(args)
        for i, x in zip(arrays, xs):
            full[i] = x
        return fn(*full)
    try:
        return hf.jit(body)(*[args[i] for i in arrays])
    except Exception:
        return None


def _leaves_equal(got, want, built_ir):
    got_leaves, want_leaves = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        assert isinstance(g, jax.Array) or not built_ir, type(g)  # (no IR: its own Python values, as numpy's)
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


@pytest.mark.parametrize("namespace, name", FUNCTIONS, ids=[f"{m.split('.')[-1]}.{n}" for m, n in FUNCTIONS])
def test_eager_equals_traced(namespace, name):
    """The first argument list the traced function takes gives the same arrays eagerly; a function
    that takes none of them fails eagerly as it does traced, never for want of a trace."""
    fn = getattr(NAMESPACES[namespace], name)
    for args in CANDIDATES:
        want = _traced(fn, args)
        if want is not None and all(isinstance(x, jax.Array) for x in jax.tree_util.tree_leaves(want)):
            try:
                got = fn(*args)
            except TypeError:
                if fn.__wrapped__ in eager._traced:
                    raise
                return  # (builds no IR: numpy's own answer for arrays, e.g. can_cast(array) is numpy 2's TypeError)
            _leaves_equal(got, want, fn.__wrapped__ in eager._traced)
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
