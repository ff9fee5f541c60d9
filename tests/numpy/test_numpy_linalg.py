"""Linear algebra: hloforge.lax.linalg (the LAPACK/cuSOLVER custom calls jax emits, checked against
jax's own lowering) and hloforge.numpy.linalg against numpy, batched, per dtype, with numpy's errors
(the stablehlo.cholesky/triangular_solve builders' own tests: tests/ops/test_factorization.py)."""
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export, lax

import hloforge as hf
import hloforge.lax.linalg as L
import hloforge.numpy.linalg as hl
from hloforge import numpy as hnp
from helpers import assert_close, run

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _tol(dtype):
    return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


def _random(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.normal(size=shape)
    return a.astype(dtype)


def _spd(shape, dtype, seed=0):
    a = _random(shape, dtype, seed)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


# ---------------------------------------------------------------- the custom calls are jax's

def _custom_calls(text):
    """(target, attribute dict text) of every custom call, without SSA names, locations and the
    Shardy rule (which hloforge does not emit)."""
    out = []
    for line in text.splitlines():
        m = re.search(r"stablehlo\.custom_call @(\w+)\(.*?\) (\{.*\}) :", line)
        if m:
            attrs = re.sub(r", sdy\.sharding_rule = #sdy\.op_sharding_rule<.*?custom>", "", m.group(2))
            attrs = re.sub(r'backend_config = "", ', "", attrs)
            out.append((m.group(1), attrs))
    return out


JAX_FUNCTIONS = {
    "cholesky": (lambda x: lax.linalg.cholesky(x), lambda x, p: L.cholesky(x, platform=p)),
    "eigh": (lambda x: lax.linalg.eigh(x), lambda x, p: L.eigh(x, platform=p)),
    "qr": (lambda x: lax.linalg.qr(x), lambda x, p: L.qr(x, platform=p)),
    "qr_reduced": (lambda x: lax.linalg.qr(x[..., :2], full_matrices=False),
                   lambda x, p: L.qr(x[..., :2], full_matrices=False, platform=p)),
    "lu": (lambda x: lax.linalg.lu(x), lambda x, p: L.lu(x, platform=p)),
    "svd": (lambda x: lax.linalg.svd(x), lambda x, p: L.svd(x, platform=p)),
    "svd_s": (lambda x: lax.linalg.svd(x[..., :2, :], full_matrices=False),
              lambda x, p: L.svd(x[..., :2, :], full_matrices=False, platform=p)),
    "svd_vals": (lambda x: lax.linalg.svd(x, compute_uv=False), lambda x, p: L.svd(x, compute_uv=False, platform=p)),
    "trsm": (lambda x: lax.linalg.triangular_solve(x, x, left_side=True, lower=True, transpose_a=True),
             lambda x, p: L.triangular_solve(x, x, left_side=True, lower=True, transpose_a=True, platform=p)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.complex64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)], ids=str)
def test_cpu_custom_calls_are_jaxs(dtype, shape):
    x = np.ones(shape, dtype)
    for name, (jax_fn, hf_fn) in JAX_FUNCTIONS.items():
        want = _custom_calls(jax.jit(jax_fn).lower(x).as_text())
        got = _custom_calls(hf.trace(lambda x: hf_fn(x, "cpu"), x).text)
        assert got == want, name


def test_eig_custom_call_is_jaxs():
    x = np.ones((2, 3, 3), np.float32)
    for jax_fn, hf_fn in ((lambda x: jax.numpy.linalg.eig(x), lambda x: L.eig(x, compute_left_eigenvectors=False)),
                          (lambda x: lax.linalg.eig(x.astype(np.complex64)),
                           lambda x: L.eig(x.astype(np.complex64)))):
        assert _custom_calls(hf.trace(hf_fn, x).text) == _custom_calls(jax.jit(jax_fn).lower(x).as_text())


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_eig_eigvals_roots(dtype):
    a = _random((2, 4, 4), dtype, 11)
    p = np.array([0.0, 1.0, -6.0, 11.0, -6.0, 0.0])
    w, v, wv, r_static, r_traced = run(lambda a, q: tuple(hl.eig(a)) + (hl.eigvals(a), hnp.roots(p), hnp.roots(q)),
                                       a, p[1:5].astype(dtype))
    complex_dtype = np.result_type(dtype, np.complex64)
    assert w.dtype == v.dtype == wv.dtype == complex_dtype
    assert_close(a @ v, v * w[:, None, :], rtol=_tol(dtype) * 10)
    assert_close(np.sort_complex(wv.ravel()), np.sort_complex(np.linalg.eigvals(a).ravel()).astype(complex_dtype),
                 rtol=_tol(dtype) * 10)
    assert_close(np.sort_complex(r_static), np.sort_complex(np.roots(p)).astype(np.complex128), rtol=1e-9)
    assert_close(np.sort_complex(r_traced), np.array([1, 2, 3], complex_dtype), rtol=_tol(dtype) * 100)


def test_gpu_custom_calls_are_jaxs():
    """jax lowers for CUDA without a GPU (jax.export); hloforge emits the same calls."""
    x = np.ones((2, 3, 3), np.float32)
    for name, (jax_fn, hf_fn) in JAX_FUNCTIONS.items():
        want = _custom_calls(export.export(jax.jit(jax_fn), platforms=["cuda"])(x).mlir_module())
        text = hf.trace(lambda x: hf_fn(x, "gpu"), x).text
        assert _custom_calls(text) == want, name
        if name == "trsm":
            assert "stablehlo.triangular_solve" in text


# ---------------------------------------------------------------- lax.linalg numerics

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_lax_linalg_factorizations(dtype):
    a, spd, b = _random((2, 4, 4), dtype, 1), _spd((2, 4, 4), dtype, 2), _random((2, 4, 3), dtype, 3)
    tall = a[:, :, :3]

    def f(a, spd, b, tall):
        return {"chol": L.cholesky(spd), "trsm": L.triangular_solve(spd, b, left_side=True, lower=True),
                "trsm_right": L.triangular_solve(spd, hnp.swapaxes(b, 1, 2),
                                                 lower=False, transpose_a=True, conjugate_a=True),
                "qr": L.qr(a), "qr_tall": L.qr(tall), "qr_tall_reduced": L.qr(tall, full_matrices=False),
                "qr_wide": L.qr(hnp.swapaxes(tall, 1, 2)), "eigh": L.eigh(spd), "svd": L.svd(a),
                "svd_tall": L.svd(tall, full_matrices=False), "svd_vals": L.svd(a, compute_uv=False), "lu": L.lu(tall),
                "solve": L.solve(a, b), "solve_t": L.solve(a, b, transpose=True), "det": L.det(a), "slogdet": L.slogdet(a)}

    out = run(f, a, spd, b, tall)
    tol = _tol(dtype)
    close = lambda got, want: assert_close(got, np.asarray(want).astype(got.dtype), rtol=tol)
    close(out["chol"], np.linalg.cholesky(spd))
    close(out["trsm"], np.linalg.solve(np.tril(spd), b))
    upper_h = np.conj(np.swapaxes(np.triu(spd), 1, 2))
    close(out["trsm_right"] @ upper_h, np.swapaxes(b, 1, 2))
    for key, x in (("qr", a), ("qr_tall", tall), ("qr_tall_reduced", tall), ("qr_wide", np.swapaxes(tall, 1, 2))):
        q, r = out[key]
        close(q @ r, x)
        close(np.conj(np.swapaxes(q, 1, 2)) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:1] + (q.shape[-1],) * 2))
        assert np.allclose(np.tril(r, -1), 0)
    assert out["qr_tall"][0].shape == (2, 4, 4) and out["qr_tall_reduced"][0].shape == (2, 4, 3)
    v, w = out["eigh"]
    close(w, np.linalg.eigvalsh(spd))
    close(spd @ v, v * w[:, None, :])
    u, s, vh = out["svd"]
    close((u * s[:, None, :]) @ vh, a)
    close(s, np.linalg.svd(a, compute_uv=False))
    u, s, vh = out["svd_tall"]
    assert u.shape == (2, 4, 3) and vh.shape == (2, 3, 3)
    close((u * s[:, None, :]) @ vh, tall)
    close(out["svd_vals"], np.linalg.svd(a, compute_uv=False))
    close(out["solve"], np.linalg.solve(a, b))
    close(out["solve_t"], np.linalg.solve(np.swapaxes(a, 1, 2), b))
    close(out["det"], np.linalg.det(a))
    sign, logabs = np.linalg.slogdet(a)
    close(out["slogdet"][0], sign)
    close(out["slogdet"][1], logabs)
    lu, piv, perm = out["lu"]
    assert piv.dtype == perm.dtype == np.int32 and piv.shape == (2, 3) and perm.shape == (2, 4)
    lower = np.tril(lu, -1)[:, :, :3] + np.eye(4, 3)
    close(tall[np.arange(2)[:, None], perm], lower @ np.triu(lu)[:, :3, :])


def test_lu_permutation_is_one_loop_whatever_the_size():
    """(unrolled, the swaps made XLA compile for seconds at n = 256)"""
    counts = hf.trace(lambda x: L.lu(x), hf.ShapeDtype((256, 256), np.float32)).op_counts()
    assert counts["stablehlo.while"] == 1 and sum(counts.values()) < 80, counts
    x = _random((3, 40, 40), np.float32, 4)
    _, piv, perm = run(lambda x: L.lu(x), x)
    _, jpiv, jperm = jax.lax.linalg.lu(x)
    np.testing.assert_array_equal(piv, jpiv)
    np.testing.assert_array_equal(perm, jperm)


def test_lax_linalg_failures_become_nan_and_empty_inputs():
    not_pd = np.array([[1.0, 2.0], [2.0, 1.0]])
    out = run(lambda x, e: (L.cholesky(x), L.cholesky(e), L.qr(e), L.svd(e), L.eigh(e), L.lu(e)),
              not_pd, np.zeros((0, 0)))
    assert np.isnan(out[0][np.tril_indices(2)]).all() and (np.triu(out[0], 1) == 0).all()  # as jax
    assert out[1].shape == (0, 0) and out[2][0].shape == (0, 0) and out[3][1].shape == (0,)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_lu_solve_and_solve_of_empty_matrices(dtype):
    e = np.zeros((3, 0, 0), dtype)
    lu, _, perm = L.lu(e)
    assert L.lu_solve(lu, perm, np.zeros((3, 0, 2), dtype)).shape == (3, 0, 2)
    assert L.solve(e, np.zeros((3, 0, 2), dtype)).shape == (3, 0, 2)
    np.testing.assert_array_equal(np.asarray(L.det(e)), np.ones(3, dtype))  # (jax: the empty product)
    with pytest.raises(ValueError, match=r"permute_rows: a permutation of 2 rows for matrices with none"):
        hf.trace(L.permute_rows, hf.ShapeDtype((2,), np.int32), hf.ShapeDtype((0, 3), np.float32))


def test_lax_linalg_runs_eagerly_as_jax_lax_linalg():
    a = np.array([[4.0, 1.0], [1.0, 3.0]], np.float32)
    b = np.ones((2, 1), np.float32)
    lu, piv, perm = L.lu(a)
    for got, want in [(L.cholesky(a), lax.linalg.cholesky(a)), (L.eigh(a)[1], lax.linalg.eigh(a)[1]),
                      (L.qr(a)[1], lax.linalg.qr(a)[1]),
                      (L.svd(a, compute_uv=False), lax.linalg.svd(a, compute_uv=False)),
                      (L.triangular_solve(a, b, left_side=True, lower=True),
                       lax.linalg.triangular_solve(a, b, left_side=True, lower=True)),
                      (lu, lax.linalg.lu(a)[0]), (L.lu_pivots_to_permutation(piv, 2), lax.linalg.lu(a)[2]),
                      (L.lu_solve(lu, perm, b), np.linalg.solve(a, b)), (L.det(a), np.linalg.det(a))]:
        assert isinstance(got, jax.Array)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn,exc,match", [
    (lambda x: L.cholesky(x[0]), ValueError, "cholesky: operand must have rank >= 2"),
    (lambda x: L.cholesky(x[:, :2]), ValueError, "cholesky: operand must be a batch of square matrices"),
    (lambda x: L.eigh(x.astype(np.float16)), TypeError, "eigh: dtype float16 is not supported"),
    (lambda x: L.qr(x.astype(np.int32)), TypeError, "qr: dtype int32 is not supported"),
    (lambda x: L.cholesky(x, platform="npu"), ValueError, "platform must be 'cpu' or 'gpu', got 'npu'"),
    (lambda x: L.cholesky(x, platform="tpu"), NotImplementedError, "have no TPU lowering in hloforge yet"),
    (lambda x: L.triangular_solve(x, x[None]), ValueError, "triangular_solve requires both arguments"),
    (lambda x: L.triangular_solve(x, x.astype(np.float64)), TypeError, "a and b dtypes float32 and float64 differ"),
    (lambda x: L.qr(x, pivoting=True), NotImplementedError, "pivoting"),
    (lambda x: L.solve(x, x[:2]), ValueError, r"solve: b must be \(\.\.\., n, k\) with a's batch dims and n, got a "
                                              r"\(3, 3\) and b \(2, 3\)"),
    (lambda x: L.solve(x, x.astype(np.float64)), TypeError, "solve: a and b dtypes float32 and float64 differ"),
    (lambda x: L.solve(x[:, :2], x[:, :2]), ValueError, "solve: operand must be a batch of square matrices"),
    (lambda x: L.lu_solve(x, L.lu(x)[2], x, trans=3), ValueError, "lu_solve: trans must be 0, 1 or 2, got 3"),
    (lambda x: L.lu_solve(x, L.lu(x)[2], x[:2]), ValueError, r"lu_solve: needs lu \(\.\.\., n, n\), permutation "
                                                            r"\(\.\.\., n\) .* got lu \(3, 3\), permutation \(3,\) "
                                                            r"and b \(2, 3\)"),
    (lambda x: L.lu_solve(x, L.lu(x)[2], x.astype(np.float64)), TypeError, "lu_solve: lu and b dtypes float32 and"),
    (lambda x: L.permute_rows(x[0], x), TypeError, r"permute_rows: needs integer permutations .* got "
                                                   r"Tensor\(shape=\(3,\), dtype=float32\)"),
    (lambda x: L.slogdet(x[0]), ValueError, "slogdet: operand must have rank >= 2"),
    (lambda x: L.det(x.astype(np.int32)), TypeError, "det: dtype int32 is not supported"),
])
def test_lax_linalg_errors(fn, exc, match):
    with pytest.raises(exc, match=match):
        hf.trace(fn, np.ones((3, 3), np.float32))


def test_target_tables_cover_the_device_kinds():
    """Every factorization's table (lax/_linalg_calls.py) names a lowering for each device kind that has
    them (a TPU has none: refused at trace time); only eig has none on GPU (jax's default lowers it on the
    host)."""
    from hloforge.frontend.lax import _linalg_calls as calls
    DEVICE_KINDS = calls.PLATFORMS
    tables = {name: t for name, t in vars(calls).items() if name.isupper() and isinstance(t, dict)
              and all(isinstance(v, (calls.Target, type(None))) for v in t.values())}
    assert set(tables) >= {"CHOLESKY", "TRIANGULAR_SOLVE", "GEQRF", "HOUSEHOLDER_PRODUCT", "EIGH", "LU", "EIG"}
    missing = {name: sorted(set(DEVICE_KINDS) - set(t)) for name, t in tables.items() if set(t) != set(DEVICE_KINDS)}
    assert missing == {"EIG": ["gpu"]}
    assert set(L.SVD_LOWERINGS) == set(DEVICE_KINDS)
    assert calls.HOUSEHOLDER_PRODUCT["cpu"].target(np.complex64) == "lapack_cungqr_ffi"
    with pytest.raises(NotImplementedError, match="eig: only the CPU"):
        hf.trace(lambda x: L.eig(x, platform="gpu"), np.ones((2, 2), np.float32))


# ---------------------------------------------------------------- hloforge.numpy.linalg

NUMPY_CASES = {
    "solve": lambda n, a, spd, b, r: n.linalg.solve(a, b),
    "solve_vector": lambda n, a, spd, b, r: n.linalg.solve(a[0], b[0, :, 0]),
    "solve_broadcast": lambda n, a, spd, b, r: n.linalg.solve(a, b[0]),
    "inv": lambda n, a, spd, b, r: n.linalg.inv(a),
    "det": lambda n, a, spd, b, r: n.linalg.det(a),
    "slogdet": lambda n, a, spd, b, r: tuple(n.linalg.slogdet(a)),
    "cholesky": lambda n, a, spd, b, r: (n.linalg.cholesky(spd), n.linalg.cholesky(spd, upper=True)),
    "eigvalsh": lambda n, a, spd, b, r: (n.linalg.eigvalsh(spd), n.linalg.eigvalsh(spd, UPLO="U")),
    "svdvals": lambda n, a, spd, b, r: (n.linalg.svd(a, compute_uv=False), n.linalg.svdvals(r)),
    "qr_r": lambda n, a, spd, b, r: n.linalg.qr(r, mode="r").shape,
    "norm": lambda n, a, spd, b, r: (n.linalg.norm(a), n.linalg.norm(a, "fro", axis=(1, 2)), n.linalg.norm(a[0], "nuc"),
                                     n.linalg.norm(a[0], 1), n.linalg.norm(a[0], -1), n.linalg.norm(a[0], np.inf),
                                     n.linalg.norm(a[0], -np.inf), n.linalg.norm(a[0], 2), n.linalg.norm(a[0], -2),
                                     n.linalg.norm(a[0, 0]), n.linalg.norm(a[0, 0], 3), n.linalg.norm(a[0, 0], 0),
                                     n.linalg.norm(a[0, 0], np.inf), n.linalg.norm(a[0, 0], -np.inf),
                                     n.linalg.norm(a, axis=1, keepdims=True), n.linalg.norm(a, 2, axis=(2, 1), keepdims=True)),
    "pinv": lambda n, a, spd, b, r: (n.linalg.pinv(r), n.linalg.pinv(a)),
    "lstsq": lambda n, a, spd, b, r: n.linalg.lstsq(r, b[0])[:2] + n.linalg.lstsq(r, b[0, :, 0])[:2]
    + (n.linalg.lstsq(r.T, b[0, :3])[0],),
    "matrix_power": lambda n, a, spd, b, r: (n.linalg.matrix_power(a, 3), n.linalg.matrix_power(a, -2),
                                             n.linalg.matrix_power(a, 0), n.linalg.matrix_power(a, 1)),
    "matrix_rank": lambda n, a, spd, b, r: (n.linalg.matrix_rank(a), n.linalg.matrix_rank(r @ r.T)),
    "cond": lambda n, a, spd, b, r: (n.linalg.cond(a), n.linalg.cond(a, 1), n.linalg.cond(a, "fro"), n.linalg.cond(a, -2)),
    "multi_dot": lambda n, a, spd, b, r: n.linalg.multi_dot([a[0], a[1], b[0]]),
    "tensorinv": lambda n, a, spd, b, r: n.linalg.tensorinv(a[0].reshape(2, 2, 2, 2) if n is np else hnp.reshape(a[0], (2, 2, 2, 2)), ind=2),
}


def _check(got, want, dtype):
    if isinstance(want, tuple) and all(isinstance(w, (int, np.integer)) for w in want):
        assert tuple(got) == want
    elif isinstance(want, (tuple, list)):
        for g, w in zip(got, want):
            _check(g, w, dtype)
    else:
        want = np.asarray(want)
        assert_close(got, want, rtol=_tol(dtype) * 10 if want.dtype.kind in "fc" else None)


@pytest.mark.parametrize("dtype", DTYPES + [np.int32], ids=lambda d: np.dtype(d).name)
def test_numpy_linalg_matches_numpy(dtype):
    rng = np.random.default_rng(7)
    if dtype == np.int32:
        a = rng.integers(-5, 5, (2, 4, 4)).astype(dtype) + 6 * np.eye(4, dtype=dtype)
        b = rng.integers(-5, 5, (2, 4, 3)).astype(dtype)
    else:
        a, b = _random((2, 4, 4), dtype, 4) + 2 * np.eye(4, dtype=dtype), _random((2, 4, 3), dtype, 5)
    spd = (a @ np.conj(np.swapaxes(a, 1, 2)) + 4 * np.eye(4)).astype(dtype)
    r = a[0, :, :3]
    got = run(lambda a, spd, b, r: {k: f(hnp, a, spd, b, r) for k, f in NUMPY_CASES.items()}, a, spd, b, r)
    for k, f in NUMPY_CASES.items():
        _check(got[k], f(np, a, spd, b, r), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_numpy_linalg_factorizations(dtype):
    a = _random((3, 2, 5, 4), dtype, 9)
    spd = _spd((3, 4, 4), dtype, 10)
    out = run(lambda a, spd: (tuple(hl.qr(a)), tuple(hl.qr(a, "complete")), tuple(hl.eigh(spd)), tuple(hl.eigh(spd, "U")),
                              tuple(hl.svd(a)), tuple(hl.svd(a, full_matrices=False))), a, spd)
    tol = _tol(dtype) * 10
    (q, r), (qc, rc), (w, v), (wu, vu), (u, s, vh), (u2, s2, vh2) = out
    assert q.shape == (3, 2, 5, 4) and r.shape == (3, 2, 4, 4) and qc.shape == (3, 2, 5, 5) and rc.shape == (3, 2, 5, 4)
    assert_close(q @ r, a, rtol=tol)
    assert_close(qc @ rc, a, rtol=tol)
    assert_close(w, np.linalg.eigh(spd)[0], rtol=tol)
    assert_close(spd @ vu, vu * wu[..., None, :], rtol=tol)
    assert u.shape == (3, 2, 5, 5) and vh.shape == (3, 2, 4, 4) and u2.shape == (3, 2, 5, 4)
    assert_close(s, np.linalg.svd(a, compute_uv=False), rtol=tol)
    assert_close((u2 * s2[..., None, :]) @ vh2, a, rtol=tol)


def test_numpy_linalg_singular_and_empty():
    sing = np.array([[1.0, 2.0], [2.0, 4.0]])
    out = run(lambda s, e: (hl.det(s), tuple(hl.slogdet(s)), hl.det(e), hl.inv(e), hl.solve(e, e), hl.matrix_rank(s),
                            hl.pinv(np.zeros((2, 0)))), sing, np.zeros((0, 0)))
    assert out[0] == 0 and out[1][0] == 0 and out[1][1] == -np.inf
    assert out[2] == 1.0 and out[3].shape == (0, 0) and out[5] == 1 and out[6].shape == (0, 2)


def test_numpy_linalg_symmetrizes_as_jax_numpy_unless_told_not_to():
    """jax.numpy's default factors (a + a^H) / 2; symmetrize_input=False reads one triangle, as numpy."""
    a = np.array([[4.0, -2.0, 3.0], [1.0, 3.0, 1.0], [0.5, 0.25, 5.0]])  # (not symmetric)
    with jax.enable_x64(True):
        for kw in ({}, {"symmetrize_input": False}, {"UPLO": "U", "symmetrize_input": False}):
            chol = {k: v for k, v in kw.items() if k != "UPLO"}
            got = hf.jit(lambda a: (hl.cholesky(a, **chol), hl.eigh(a, **kw), hl.eigvalsh(a, **kw)))(a)
            want = (jnp.linalg.cholesky(a, **chol), jnp.linalg.eigh(a, **kw), jnp.linalg.eigvalsh(a, **kw))
            for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
                assert_close(np.abs(g), np.abs(w), rtol=1e-12, atol=1e-12)  # (eigenvector signs)
    assert_close(hl.eigvalsh(a, symmetrize_input=False), np.linalg.eigvalsh(a), rtol=1e-12)
    assert_close(hl.eigvalsh(a, "U", symmetrize_input=False), np.linalg.eigvalsh(a, "U"), rtol=1e-12)
    assert_close(hl.cholesky(a, symmetrize_input=False), np.linalg.cholesky(a), rtol=1e-12)


@pytest.mark.parametrize("fn,exc,match", [
    (lambda x: hl.inv(x[0]), np.linalg.LinAlgError, "1-dimensional array given. Array must be at least two-dimensional"),
    (lambda x: hl.det(x[:, :2]), np.linalg.LinAlgError, "Last 2 dimensions of the array must be square"),
    (lambda x: hl.cholesky(x.astype(np.float16)), TypeError, "array type float16 is unsupported in linalg"),
    (lambda x: hl.eigh(x, UPLO="X"), ValueError, r"UPLO must be one of None, 'L' or 'U', got 'X'"),
    (lambda x: hl.qr(x, mode="full"), ValueError, "Unrecognized mode 'full'"),
    (lambda x: hl.solve(x, x[:2]), ValueError, "solve: Input operand 1 has a mismatch in its core dimension 0"),
    (lambda x: hl.matrix_power(x, 1.5), TypeError, "exponent must be an integer"),
    (lambda x: hl.norm(x[None], 2), ValueError, "Improper number of dimensions to norm"),
    (lambda x: hl.norm(x[0], "fro"), ValueError, "Invalid norm order 'fro' for vectors"),
    (lambda x: hl.norm(x, 3), ValueError, "Invalid norm order for matrices"),
    (lambda x: hl.norm(x, axis=(0, 0)), ValueError, "Duplicate axes given"),
    (lambda x: hl.lstsq(x, x[:2]), np.linalg.LinAlgError, "Incompatible dimensions"),
    (lambda x: hl.lstsq(x[None], x), np.linalg.LinAlgError, "3-dimensional array given"),
    (lambda x: hl.multi_dot([x]), ValueError, "Expecting at least two arrays"),
])
def test_numpy_linalg_errors(fn, exc, match):
    with pytest.raises(exc, match=match):
        hf.trace(fn, np.ones((3, 3), np.float32))
