"""hloforge.numpy.vectorize (frontend/numpy/_vectorize.py) against jax.numpy.vectorize and numpy.vectorize:
broadcast loop dimensions batched with hf.vmap (the function traced once), gufunc signatures, excluded
arguments, several results, and the errors."""
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
import hloforge.numpy as hnp

RNG = np.random.default_rng(5)
A = RNG.standard_normal((5, 2, 3)).astype(np.float32)
B = RNG.standard_normal((3,)).astype(np.float32)
X = RNG.standard_normal((4, 1, 3)).astype(np.float32)
Y = RNG.standard_normal((1, 6, 3)).astype(np.float32)

CASES = {
    "elementwise": (lambda n: lambda a, b: a * 2 + b, {}, (X, Y)),
    "broadcast_scalar": (lambda n: lambda a, b: n.maximum(a, b), {}, (X, np.float32(0.25))),
    "matvec": (lambda n: lambda m, v: m @ v, {"signature": "(m,n),(n)->(m)"}, (A, B)),
    "reduction": (lambda n: lambda v: n.sum(v * v), {"signature": "(n)->()"}, (A,)),
    "two_results": (lambda n: lambda a, b: (a + b, a * b), {"signature": "(),()->(),()"}, (X, Y)),
    "outer_core": (lambda n: lambda u, v: u[:, None] * v[None, :], {"signature": "(i),(j)->(i,j)"}, (A, B)),
}


@pytest.mark.parametrize("name", CASES)
def test_matches_jax_numpy_vectorize(name):
    make, options, args = CASES[name]
    got = hnp.vectorize(make(hnp), **options)(*args)
    want = jnp.vectorize(make(jnp), **options)(*args)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert np.shape(g) == w.shape and np.asarray(g).dtype == w.dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)


def test_the_function_is_traced_once_not_per_element():
    calls = []

    def f(a):
        calls.append(1)
        return hnp.sin(a) * 2.0

    m = hf.trace(hnp.vectorize(f), hf.ShapeDtype((64, 64), np.float32))
    assert len(calls) == 1 and sum(m.op_counts().values()) < 12  # (it used to unroll 4096 copies)
    x = RNG.standard_normal((64, 64)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(m.compile()(x)), np.sin(x) * 2, rtol=1e-6)


def test_excluded_positions_and_keywords_pass_through():
    scaled = hnp.vectorize(lambda a, k, *, offset: a * k + offset, excluded={1, "offset"})
    np.testing.assert_allclose(np.asarray(scaled(A, 3.0, offset=1.0)), A * 3.0 + 1.0, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(hnp.vectorize(lambda a, k: a if k is None else a + k)(A, None)), A)
    assert hnp.vectorize(np.cos, doc="the cosine").__doc__ == "the cosine"
    assert np.asarray(hnp.vectorize(lambda a: a * 2, otypes=[np.int32])(np.arange(3))).dtype == np.int32


def test_inside_jit_and_grad():
    norm = hnp.vectorize(lambda v: hnp.sqrt(hnp.sum(v * v)), signature="(n)->()")
    np.testing.assert_allclose(np.asarray(hf.jit(norm)(A)), np.linalg.norm(A, axis=-1), rtol=1e-6)
    grad = hf.grad(lambda a: hnp.sum(norm(a)))(A)
    np.testing.assert_allclose(np.asarray(grad), A / np.linalg.norm(A, axis=-1, keepdims=True), rtol=1e-5)


@pytest.mark.parametrize("call, error, match", [
    (lambda: hnp.vectorize(lambda a: a, signature="(n->()"), ValueError, r"not a valid gufunc signature: '\(n->\(\)'"),
    (lambda: hnp.vectorize(lambda a: a, excluded={1.5}), TypeError, r"excluded takes integer positions and keyword"),
    (lambda: hnp.vectorize(lambda a: a, signature=5), TypeError, r"signature must be a string .*, got 5"),
    (lambda: hnp.vectorize(lambda a: a, excluded={-1}), ValueError, r"excluded=\{-1\} contains negative positions"),
    (lambda: hnp.vectorize(lambda a, b: a @ b, signature="(n),(n)->()")(A[..., :2], B), ValueError,
     r"inconsistent size for core dimension 'n': 3 vs 2"),
    (lambda: hnp.vectorize(lambda a: a, signature="(m,n)->(m,n)")(B), ValueError,
     r"input with shape \(3,\) does not have enough dimensions for all core dimensions \('m', 'n'\)"),
    (lambda: hnp.vectorize(lambda a: a, signature="(n)->()")(A), ValueError,
     r"result shape \(3,\) does not match core dimensions \(\)"),
    (lambda: hnp.vectorize(lambda a: a, signature="(n),(n)->()")(A), TypeError,
     r"wrong number of positional arguments: expected 2, got 1"),
    (lambda: hnp.vectorize(lambda a, b=1: a + b)(A, b=B), TypeError, r"keyword arguments \['b'\] are not in excluded"),
    (lambda: hnp.vectorize(lambda a: a, signature="()->(),()")(A), TypeError, r"must return a tuple of 2 results"),
])
def test_errors_name_the_values(call, error, match):
    with pytest.raises(error, match=match):
        call()
