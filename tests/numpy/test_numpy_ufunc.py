"""hloforge.numpy's ufunc objects (frontend/numpy/_ufunc.py) against jax.numpy's (jax 0.10.2): the same 14
names, attributes, and reduce/accumulate/at/reduceat/outer results, eagerly and inside hf.jit, their
gradients, and the errors (with the values)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
import hloforge.numpy as hnp

X = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5) / 3
I = np.arange(12, dtype=np.int32).reshape(3, 4) * 7 - 20
ARITH = ["add", "multiply", "subtract", "maximum", "minimum", "logaddexp", "logaddexp2"]
BITS = ["bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor"]
TRANSCENDENTAL = {"logaddexp", "logaddexp2"}  # (XLA rounds exp/log differently inside a loop's fusion)


def _same(name, got, want, loop=False):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    if name in TRANSCENDENTAL and loop:
        np.testing.assert_allclose(got, want, rtol=1e-6)
    else:
        np.testing.assert_array_equal(got, want)


def test_the_same_names_are_ufuncs_with_jax_numpys_attributes():
    names = sorted(n for n in dir(jnp) if isinstance(getattr(jnp, n), jnp.ufunc))
    assert names == sorted(n for n in dir(hnp) if isinstance(getattr(hnp, n), hnp.ufunc))
    for n in names:
        ours, theirs = getattr(hnp, n), getattr(jnp, n)
        assert (ours.nin, ours.nout, ours.nargs) == (theirs.nin, theirs.nout, theirs.nargs), n
        assert ours.identity == theirs.identity or (np.isnan(ours.identity) and np.isnan(theirs.identity)), n
        assert ours.__name__ == n and repr(ours) == f"<hloforge.numpy.ufunc '{n}'>"
    np.testing.assert_array_equal(hnp.add(X, 1.0), np.add(X, 1.0))  # (still the function it was)


CASES = [("reduce", lambda u: u.reduce(X)), ("reduce_axis1_keepdims", lambda u: u.reduce(X, axis=1, keepdims=True)),
         ("reduce_all", lambda u: u.reduce(X, axis=None)),
         ("reduce_initial_where", lambda u: u.reduce(X, axis=1, initial=0.5, where=X > -1)),
         ("accumulate", lambda u: u.accumulate(X)), ("accumulate_axis1", lambda u: u.accumulate(X, axis=1)),
         ("outer", lambda u: u.outer(X[0], X[:, 1])),
         ("reduceat", lambda u: u.reduceat(X, np.array([0, 2, 3]), axis=1)),
         ("at", lambda u: u.at(X, np.array([0, 0, 2]), np.float32(0.75), inplace=False))]
LOOPED = {"accumulate", "accumulate_axis1", "reduceat", "at", "reduce_initial_where"}


@pytest.mark.parametrize("name", ARITH)
@pytest.mark.parametrize("case, method", CASES, ids=[c for c, _ in CASES])
def test_methods_match_jax_numpy(name, case, method):
    _same(name, method(getattr(hnp, name)), method(getattr(jnp, name)), loop=case in LOOPED)


@pytest.mark.parametrize("name", ARITH)
def test_at_with_slices_matches_numpy(name):  # (jax.numpy's ufunc.at takes no slices)
    where = (slice(1, None), np.array([1, 1, 3]))
    want = X.copy()
    getattr(np, name).at(want, where, np.float32(0.5))
    _same(name, getattr(hnp, name).at(X, where, np.float32(0.5), inplace=False), want, loop=True)


@pytest.mark.parametrize("name", BITS)
def test_bitwise_and_logical_reductions_match_jax_numpy(name):
    for axis in (0, 1, None):
        _same(name, getattr(hnp, name).reduce(I, axis=axis), getattr(jnp, name).reduce(I, axis=axis))
    _same(name, getattr(hnp, name).accumulate(I, axis=1), getattr(jnp, name).accumulate(I, axis=1))
    _same(name, getattr(hnp, name).outer(I[0], I[1]), getattr(jnp, name).outer(I[0], I[1]))


def test_methods_trace_into_one_program_and_differentiate():
    def f(x):
        return (hnp.add.reduce(x, axis=None), hnp.subtract.accumulate(x, axis=1), hnp.multiply.outer(x[0], x[1]),
                hnp.maximum.reduceat(x, np.array([0, 1]), axis=0))
    got = hf.jit(f)(X)
    want = jax.jit(lambda x: (jnp.add.reduce(x, axis=None), jnp.subtract.accumulate(x, axis=1),
                              jnp.multiply.outer(x[0], x[1]), jnp.maximum.reduceat(x, np.array([0, 1]), axis=0)))(X)
    for g, w in zip(got, want):
        _same("add", g, w)
    grad = hf.grad(lambda x: hnp.logaddexp.reduce(x, axis=None) + hnp.subtract.reduce(x, axis=1).sum())(X)
    want = jax.grad(lambda x: jnp.logaddexp.reduce(x, axis=None) + jnp.subtract.reduce(x, axis=1).sum())(X)
    np.testing.assert_allclose(np.asarray(grad), np.asarray(want), rtol=1e-6, atol=1e-7)


def test_jax_dtype_mode_gives_jax_numpys_dtypes():
    saved = hf.config.dtypes
    hf.config.dtypes = "jax"
    try:
        small = np.arange(5, dtype=np.int8)
        assert hnp.add.reduce(small).dtype == jnp.add.reduce(small).dtype == np.int32
        assert hnp.subtract.reduce(np.arange(4.0)).dtype == np.float32
    finally:
        hf.config.dtypes = saved


@pytest.mark.parametrize("call, error, match", [
    (lambda: hnp.maximum.reduce(X, where=X > 0), ValueError, r"'maximum' does not have an identity.*'initial'"),
    (lambda: hnp.add.reduce(X, out=X), NotImplementedError, r"add.reduce: out= is not supported"),
    (lambda: hnp.negative.reduce(X), ValueError, r"negative.reduce: only binary ufuncs have reduce"),
    (lambda: hnp.add.accumulate(X, axis=None), ValueError, r"accumulate does not allow multiple axes, got axis=None"),
    (lambda: hnp.add.at(X, 0, 1.0), NotImplementedError, r"pass inplace=False"),
    (lambda: hnp.add.at(X, 0, inplace=False), TypeError, r"add.at: a 2-input ufunc takes one value array b, got b=None"),
    (lambda: hnp.negative.at(X, 0, 1.0, inplace=False), TypeError, r"takes no value array b, got b=1.0"),
    (lambda: hnp.add.reduceat(X, np.zeros((2, 2), np.int32)), ValueError, r"indices must be one-dimensional, "
                                                                         r"got indices.shape=\(2, 2\)"),
    (lambda: hnp.add.reduceat(X, np.array([0]), axis=(0, 1)), ValueError, r"single integer axis, got axis=\(0, 1\)"),
    (lambda: hnp.subtract.reduce(X, axis=(0, 1)), NotImplementedError, r"a tuple of axes, got axis=\(0, 1\)"),
    (lambda: hnp.subtract.reduce(np.zeros((0, 2), np.float32)), ValueError, r"zero-size array .* subtract"),
    (lambda: hnp.add(X, X, out=X), NotImplementedError, r"hloforge.numpy.add: out= and where= are not supported"),
])
def test_errors_name_the_values(call, error, match):
    with pytest.raises(error, match=match):
        call()
