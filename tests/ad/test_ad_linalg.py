"""Derivatives of hloforge.lax.linalg and hloforge.numpy.linalg (frontend/ad/lax_linalg.py: the
rules of the hloforge.linalg.* composites) against jax.vjp/jax.jvp of the same jax computation,
batched, in float32, float64 and complex64, central differences in f64, second order,
Module.vjp of traced modules, the IR, and the unsupported options. Cases are grouped into one
traced function per check, jax's references compile without LLVM's optimizations (compile time
dominates)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import hloforge as hf
import hloforge.lax.linalg as L
from ad_helpers import check_finite_differences_once, close, jax_run, random_like
from hloforge import numpy as hnp

DTYPES = [np.float32, np.float64, np.complex64]
IDS = lambda d: np.dtype(d).name  # noqa: E731


def _random(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _hermitian(shape, dtype, seed=0, shift=None):
    """A Hermitian matrix (positive definite with ``shift``, e.g. the size)."""
    a = _random(shape, dtype, seed)
    h = a + np.conj(np.swapaxes(a, -1, -2)) if shift is None else a @ np.conj(np.swapaxes(a, -1, -2))
    return (h + (shift or 0) * np.eye(shape[-1])).astype(dtype)


def _tols(dtype):
    return 2e-3 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-9


def _flat(fn):
    return lambda *xs: tuple(jax.tree_util.tree_leaves(fn(*xs)))


def _against_jax(h, j, xs, rtol):
    """hf.vjp and hf.jvp of ``h`` against jax.vjp and jax.jvp of ``j`` at ``xs``, random
    (co)tangents: one compiled function each (outputs, input cotangents, output tangents)."""
    h, j = _flat(h), _flat(j)
    with jax.enable_x64(True):
        specs = jax.eval_shape(j, *xs)
    cts = random_like(tuple(np.zeros(s.shape, s.dtype) for s in specs), 1)
    ts = random_like(tuple(xs), 2)

    def hf_all(xs, cts, ts):
        out, pullback = hf.vjp(h, *xs)
        return out, pullback(cts), hf.jvp(h, xs, ts)[1]

    def jax_all(xs, cts, ts):  # (integer outputs take float0 cotangents in jax)
        cts = tuple(c if s.dtype.kind in "fc" else np.zeros(s.shape, jax.dtypes.float0) for c, s in zip(cts, specs))
        out, pullback = jax.vjp(j, *xs)
        return out, pullback(cts), jax.jvp(j, xs, ts)[1]

    got = hf.jit(hf_all)(tuple(xs), cts, ts)
    with jax.enable_x64(True):
        want = jax_run(jax_all, tuple(xs), cts, ts)
    close(got, want, rtol)


# ---------------------------------------------------------------- each factorization against jax

def _cholesky_case(dtype):
    a = _hermitian((2, 4, 4), dtype, shift=4)
    return ((lambda x: (L.cholesky(x), L.cholesky(x, symmetrize_input=False))),
            (lambda x: (lax.linalg.cholesky(x), lax.linalg.cholesky(x, symmetrize_input=False))), (a,))


TRSM = [dict(left_side=True, lower=True), dict(left_side=False, lower=False, transpose_a=True),
        dict(left_side=True, lower=False, transpose_a=True, conjugate_a=True, unit_diagonal=True),
        dict(left_side=False, lower=True, conjugate_a=True)]


def _trsm_case(dtype):
    a = _random((2, 4, 4), dtype) + 4 * np.eye(4, dtype=dtype)
    bs = tuple(_random((2, 4, 3) if kw["left_side"] else (2, 3, 4), dtype, seed=i + 1) for i, kw in enumerate(TRSM))
    return ((lambda a, *bs: tuple(L.triangular_solve(a, b, **kw) for b, kw in zip(bs, TRSM))),
            (lambda a, *bs: tuple(lax.linalg.triangular_solve(a, b, **kw) for b, kw in zip(bs, TRSM))), (a, *bs))


QR = [((2, 5, 3), False), ((2, 5, 3), True), ((3, 5), False), ((4, 4), True)]


def _qr_case(dtype):
    xs = tuple(_random(s, dtype, seed=i) for i, (s, _) in enumerate(QR))
    return ((lambda *xs: tuple(L.qr(x, full_matrices=f) for x, (_, f) in zip(xs, QR))),
            (lambda *xs: tuple(lax.linalg.qr(x, full_matrices=f) for x, (_, f) in zip(xs, QR))), xs)


def _eigh_case(dtype):
    a = _hermitian((2, 4, 4), dtype)
    return ((lambda x: (L.eigh(x), L.eigh(x, symmetrize_input=False))),
            (lambda x: (lax.linalg.eigh(x), lax.linalg.eigh(x, symmetrize_input=False))), (a,))


SVD = [((2, 5, 3), dict(full_matrices=False)), ((3, 5), dict(full_matrices=False)), ((2, 4, 4), {}),
       ((2, 3, 5), dict(compute_uv=False))]


def _svd_case(dtype):
    xs = tuple(_random(s, dtype, seed=i) for i, (s, _) in enumerate(SVD))
    return ((lambda *xs: tuple(L.svd(x, **kw) for x, (_, kw) in zip(xs, SVD))),
            (lambda *xs: tuple(lax.linalg.svd(x, **kw) for x, (_, kw) in zip(xs, SVD))), xs)


LU = [(2, 4, 4), (3, 5), (5, 3)]


def _lu_case(dtype):
    xs = tuple(_random(s, dtype, seed=i) for i, s in enumerate(LU))
    return ((lambda *xs: tuple(L.lu(x) for x in xs)), (lambda *xs: tuple(lax.linalg.lu(x) for x in xs)), xs)


def _jax_solve(a, b, trans):
    op = [lambda m: m, lambda m: jnp.swapaxes(m, -1, -2), lambda m: jnp.conj(jnp.swapaxes(m, -1, -2))][trans]
    return jnp.linalg.solve(op(a), b)


def _solve_case(dtype):
    """solve (both orientations), lu_solve (trans 0, 1, 2), det and slogdet: the composites whose
    rules solve with the factorization instead of differentiating it."""
    a = _random((2, 4, 4), dtype) + 4 * np.eye(4, dtype=dtype)
    b = _random((2, 4, 3), dtype, seed=1)

    def h(a, b):
        lu, _, perm = L.lu(a)
        return (L.solve(a, b), L.solve(a, b, transpose=True), *(L.lu_solve(lu, perm, b, trans=t) for t in (0, 1, 2)),
                L.slogdet(a), L.det(a))

    def j(a, b):
        return (_jax_solve(a, b, 0), _jax_solve(a, b, 1), *(_jax_solve(a, b, t) for t in (0, 1, 2)),
                tuple(jnp.linalg.slogdet(a)), jnp.linalg.det(a))
    return h, j, (a, b)


CASES = {"cholesky": _cholesky_case, "triangular_solve": _trsm_case, "qr": _qr_case, "eigh": _eigh_case,
         "svd": _svd_case, "lu": _lu_case, "solve": _solve_case}


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("name", list(CASES))
def test_factorization_against_jax(name, dtype):
    h, j, xs = CASES[name](dtype)
    _against_jax(h, j, xs, _tols(dtype))


# ---------------------------------------------------------------- central differences (f64)

def _gauge_invariant(x):
    """Quantities that do not depend on the sign/phase of singular and eigen vectors."""
    q, r = L.qr(x, full_matrices=False)
    u, s, vh = L.svd(x, full_matrices=False)
    h = hnp.matmul(hnp.swapaxes(x, -1, -2), x)
    v, w = L.eigh(h)
    return q @ r[..., :, :1], hnp.abs(r), s, u * u, vh * vh, w, v * v


def test_finite_differences_f64():
    x = _random((2, 5, 3), np.float64)
    check_finite_differences_once(_gauge_invariant, x, rtol=1e-6)
    a = _random((3, 3), np.float64) + 3 * np.eye(3)
    check_finite_differences_once(lambda a: (L.lu(a)[0], hnp.linalg.inv(a), L.cholesky(a @ a.T)), a, rtol=1e-6)


# ---------------------------------------------------------------- numpy.linalg: hf.grad against jax.grad

def _numpy_losses(m, x, h, b):
    """Real scalar losses of numpy.linalg functions; ``m`` is hloforge.numpy or jax.numpy. The
    Hermitian ones with jax.numpy's default (symmetrize the input) and reading one triangle."""
    def sq(z):
        return m.sum(m.real(z * m.conj(z)))
    rect = x[..., :, :3]
    parts = [sq(m.linalg.solve(x, b)), sq(m.linalg.inv(x)), m.sum(m.linalg.slogdet(x)[1]),
             sq(m.linalg.pinv(rect)), sq(m.linalg.lstsq(rect[0], b[0])[0]),
             m.sum(m.linalg.norm(rect, 2, axis=(-2, -1))), m.sum(m.linalg.norm(rect, "nuc", axis=(-2, -1))),
             m.sum(m.linalg.cond(rect)), sq(m.linalg.qr(rect)[1]), m.sum(m.linalg.svd(rect, full_matrices=False)[1])]
    for kw in ({}, {"symmetrize_input": False}):
        w, v = m.linalg.eigh(h, **kw)
        parts += [m.sum(m.linalg.eigvalsh(h, **kw) ** 2), sq(m.linalg.cholesky(h + 8 * m.eye(4), **kw)),
                  m.sum(w * m.sum(m.abs(v) ** 4, axis=-2))]
    if not np.issubdtype(x.dtype, np.complexfloating):
        parts.append(m.sum(m.linalg.det(x)))
    return sum(p * (k + 1) for k, p in enumerate(parts))


@pytest.mark.parametrize("dtype", [np.float64, np.complex64], ids=IDS)
def test_numpy_linalg_grad_against_jax(dtype):
    x = _random((2, 4, 4), dtype) + 2 * np.eye(4, dtype=dtype)
    h = _hermitian((2, 4, 4), dtype, seed=1)
    b = _random((2, 4, 2), dtype, seed=2)
    got = hf.grad(lambda x, h: _numpy_losses(hnp, x, h, b), argnums=(0, 1))(x, h)
    with jax.enable_x64(True):
        want = jax_run(jax.grad(lambda x, h: _numpy_losses(jnp, x, h, b), argnums=(0, 1)), x, h)
    close(got, want, _tols(dtype))


def test_second_order_through_the_rules():
    x = _random((3, 3), np.float64) + 3 * np.eye(3)

    def loss(m, g):
        return lambda x: m.sum(g(lambda y: m.linalg.slogdet(y)[1] + m.sum(m.linalg.eigvalsh(y @ y.T) ** 2))(x) ** 2)
    got = hf.grad(loss(hnp, hf.grad))(x)
    with jax.enable_x64(True):
        want = jax_run(jax.grad(loss(jnp, jax.grad)), x)
    close(got, want, 1e-9)


# ---------------------------------------------------------------- modules, passes, IR

def _loss(x):
    q, r = hnp.linalg.qr(x)
    return hnp.sum(r * r) + hnp.sum(hnp.linalg.svd(x, compute_uv=False)) + hnp.linalg.slogdet(x)[1]


def _jax_loss(x):
    q, r = jnp.linalg.qr(x)
    return jnp.sum(r * r) + jnp.sum(jnp.linalg.svd(x, compute_uv=False)) + jnp.linalg.slogdet(x)[1]


def test_module_vjp_of_a_traced_module_and_after_passes():
    x = _random((4, 4), np.float32) + 2 * np.eye(4, dtype=np.float32)
    want, loss = (np.asarray(y) for y in jax_run(lambda x: (jax.grad(_jax_loss)(x), _jax_loss(x)), x))
    m = hf.trace(_loss, x)
    assert m.op_counts()["stablehlo.composite"] == 4, "qr, svd, slogdet and the lu inside slogdet"
    for module in (m, hf.Module.parse(m.text)):
        close(module.vjp().compile()(x, np.float32(1))[1], want, 2e-4)
    m.optimize()  # inline, fold, canonicalize, ...: the composites and their calls stay
    assert m.op_counts()["stablehlo.composite"] == 4
    close(m.compile()(x), loss, 2e-5)
    g = m.vjp()
    g.optimize()
    close(g.compile()(x, np.float32(1))[1], want, 2e-4)


def test_composites_print_the_lapack_calls_and_run_like_the_calls():
    x = _random((2, 5, 3), np.float64)
    m = hf.trace(lambda x: L.qr(x, full_matrices=False), x)
    text = m.text
    assert 'stablehlo.composite "hloforge.linalg.qr"' in text
    assert "composite_attributes = {full_matrices = false, platform = \"cpu\"}" in text
    impl = text[text.index("func.func private @hloforge_linalg_qr_impl"):]
    assert "@lapack_dgeqrf_ffi" in impl and "@lapack_dorgqr_ffi" in impl
    q, r = m.compile()(x)
    np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), x, atol=1e-12)
    close((q, r), np.linalg.qr(x), 1e-10)


# ---------------------------------------------------------------- unsupported

def test_svd_full_matrices_of_non_square_is_refused():
    x = _random((5, 3), np.float32)
    with pytest.raises(NotImplementedError, match=r"svd with full_matrices=True .* square matrices .* \(5, 3\)"):
        hf.grad(lambda x: hnp.sum(L.svd(x)[0]))(x)
    with pytest.raises(NotImplementedError, match=r"svd with full_matrices=True .* \(5, 3\)"):
        hf.jvp(lambda x: L.svd(x), (x,), (x,))


def test_eig_has_no_rule():
    with pytest.raises(NotImplementedError, match="cannot differentiate stablehlo.custom_call @lapack_sgeev_ffi"):
        hf.grad(lambda x: hnp.sum(hnp.abs(hnp.linalg.eigvals(x))))(np.eye(3, dtype=np.float32))


def test_gpu_derivatives_trace_with_cusolver_calls():
    """(traced only: the rules' solves and factorizations follow the composite's platform)"""
    def loss(x):
        q, r = L.qr(x, full_matrices=True, platform="gpu")
        v, w = L.eigh(x, platform="gpu")
        s = L.svd(x, compute_uv=False, platform="gpu")
        lu = L.lu(x, platform="gpu")[0]
        c = L.cholesky(x @ hnp.swapaxes(x, -1, -2), platform="gpu")
        t = L.triangular_solve(c, x, left_side=True, lower=True, platform="gpu")
        solved = L.solve(x, x, platform="gpu")
        logabs = L.slogdet(x, platform="gpu")[1]
        return sum(hnp.sum(y * y) for y in (q, r, v, w, s, lu, c, t, solved, logabs))
    text = hf.trace(hf.grad(loss), hf.ShapeDtype((2, 4, 4), np.float32)).text
    assert "lapack_" not in text
    for target in ("cusolver_geqrf_ffi", "cusolver_syevd_ffi", "cusolver_gesvdj_ffi", "cusolver_getrf_ffi",
                   "cusolver_potrf_ffi", "stablehlo.triangular_solve"):
        assert target in text, target
