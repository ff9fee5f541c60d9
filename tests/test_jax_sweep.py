"""Every jax function crosses (issue 47): a sweep of jax's public callables through ``hf.optimize``, whose
values, gradients and ``jax.vmap`` must equal jax's own.

Each case is a jax function and small arguments. Three checks run per case, each against the same call without
``hf.optimize``: the value; ``jax.grad`` of a weighted sum of the outputs with respect to every float and complex
argument (cases that are not differentiable say so); ``jax.vmap`` over the first argument stacked twice (a second
sample: a perturbed array, another key). A case's checks run in one ``jax.jit`` per side. What fails is in XFAIL,
strict, with its reason.
"""
from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import hloforge as hf

from helpers import assert_close

optax = pytest.importorskip("optax")

RNG = np.random.default_rng(47)
V = np.linspace(-0.9, 0.8, 6).astype(np.float32)            # inside (-1, 1): arcsin, arccos
POSITIVE = np.linspace(0.5, 3.5, 6).astype(np.float32)      # lgamma
M = RNG.standard_normal((3, 4)).astype(np.float32)
SQUARE = (RNG.standard_normal((3, 3)) + 3 * np.eye(3)).astype(np.float32)
SPD = (SQUARE @ SQUARE.T + np.eye(3)).astype(np.float32)
B = RNG.standard_normal(3).astype(np.float32)
SIGNAL = RNG.standard_normal(8).astype(np.float32)
IMAGE = RNG.standard_normal((4, 6)).astype(np.float32)
LOGITS = RNG.standard_normal((2, 5)).astype(np.float32)
INDEX = np.int32(1)
COMPLEX = (V + 1j * V[::-1]).astype(np.complex64)
INTEGERS = np.array([3, 12, 7, -5], np.int32)


@dataclasses.dataclass(frozen=True)
class Case:
    fn: object
    args: tuple
    grad: bool = True       # whether jax.grad applies (some float or complex argument, a differentiable function)
    vmap: bool = True
    rtol: float = 1e-5      # float32 on the CPU; transcendental functions and factorizations get more


def case(fn, *args, **options) -> Case:
    return Case(fn, args, **options)


RAW_KEY = jax.random.PRNGKey(3)
TYPED_KEY = jax.random.key(3)


def _random_cases(prefix, key, every_sampler=True) -> dict:
    """jax.random's samplers and key functions. Typed keys cross as their key data, which raw keys are: for
    them (``every_sampler=False``) one sampler, and what returns keys."""
    r = jax.random
    sampler = dict(grad=False)
    cases = {
        f"{prefix}.normal": case(lambda k, s: s * r.normal(k, (4,)), key, np.float32(1.5)),
        f"{prefix}.categorical": case(lambda k, logits: r.categorical(k, logits), key, LOGITS, **sampler),
        f"{prefix}.split": case(lambda k: r.split(k, 3), key, grad=False),
        f"{prefix}.fold_in": case(lambda k: r.fold_in(k, 5), key, grad=False),
    }
    if prefix == "random.typed":
        cases["random.typed.key_made_inside"] = case(lambda s: (r.split(r.key(0)), s * r.normal(r.key(1))),
                                                     np.float32(2.0))
    if every_sampler:
        cases.update({
            f"{prefix}.uniform": case(lambda k: r.uniform(k, (4,), minval=-1.0, maxval=2.0), key, **sampler),
            f"{prefix}.bernoulli": case(lambda k: r.bernoulli(k, 0.3, (6,)), key, **sampler),
            f"{prefix}.randint": case(lambda k: r.randint(k, (5,), 0, 10), key, **sampler),
            f"{prefix}.permutation": case(lambda k: r.permutation(k, 7), key, **sampler),
            f"{prefix}.truncated_normal": case(lambda k: r.truncated_normal(k, -1.0, 2.0, (4,)), key, **sampler),
            f"{prefix}.choice": case(lambda k: r.choice(k, 5, (3,), replace=False), key, **sampler),
        })
    return cases


def _optax_update(make):
    """An optax optimizer's first update, its state made inside the function (as a training step's first call)."""
    def update(params, grads):
        optimizer = make()
        return optimizer.update(grads, optimizer.init(params), params)
    return update


def _scan_cumulative(x):
    return lax.scan(lambda c, v: (c * 0.9 + v, jnp.sin(c + v)), 0.0, x)


def _layout_ops(x):
    return (jnp.diff(x, axis=1), jnp.triu(x, 1), jnp.roll(x, 2, axis=1),
            jnp.pad(x, ((1, 0), (2, 1)), mode="reflect"), jnp.tile(jnp.repeat(x, 2, axis=0), (1, 2)))


def _integer_ops(i):
    return (i // 3, i % 4, jnp.right_shift(i, 1), i & 6, jnp.gcd(i, 6), jnp.lcm(i, 4), lax.population_count(i),
            lax.clz(i))


def _sized_selections(x):
    """Selections with a static size (nonzero, argwhere) and counts (histogram, bincount)."""
    return (jnp.nonzero(x > 0, size=6, fill_value=-1)[0], jnp.argwhere(x > 0, size=6, fill_value=-1),
            jnp.histogram(x, bins=4, range=(-1.0, 1.0))[0], jnp.bincount(jnp.round(x * 3).astype(int) + 3, length=8))


def _special_functions(x):
    special = jax.scipy.special
    return (special.gammainc(2.0, x), special.i0e(x), special.logit(x / 4), special.xlogy(x, x),
            special.polygamma(1, x))


def _conditionals(x):
    return (jnp.select([x < -0.3, x > 0.3], [x * 2, x ** 2], x), jnp.piecewise(x, [x < 0], [jnp.sin, jnp.cos]),
            jnp.vectorize(lambda a, b: a * b + 1, signature="(),()->()")(x, x[::-1]))


def _max_pool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (1, 2), "VALID")


def _conv(image, kernel):
    return lax.conv_general_dilated(image[None, None], kernel[None, None], (1, 1), "SAME")


CASES = {
    # jax.numpy
    "jnp.var": case(jnp.var, V),
    "jnp.std": case(jnp.std, V),
    "jnp.median": case(jnp.median, V),
    "jnp.percentile": case(lambda x: jnp.percentile(x, 30.0), V),
    "jnp.interp": case(lambda x: jnp.interp(x, jnp.arange(-1.0, 1.0, 0.25), jnp.arange(8.0) ** 2), V),
    "jnp.sort": case(lambda x: jnp.sort(x, axis=-1), M),
    "jnp.argsort": case(lambda x: jnp.argsort(x, axis=-1), M, grad=False),
    "jnp.cumsum": case(lambda x: jnp.cumsum(x, axis=1), M),
    "jnp.linalg.norm": case(jnp.linalg.norm, M),
    "jnp.einsum": case(lambda a, b: jnp.einsum("ij,i->j", a, b), M, B),
    "jnp.where": case(lambda x: jnp.where(x > 0, x ** 2, -x), V),
    "jnp.take": case(lambda x, i: jnp.take(x, jnp.array([2, 0, 1]) + i, axis=1), M, INDEX),
    "jnp.clip": case(lambda x: jnp.clip(x, -0.5, 0.5), V),
    "jnp.sinh": case(jnp.sinh, V, rtol=1e-4),
    "jnp.cosh": case(jnp.cosh, V, rtol=1e-4),
    "jnp.arcsin": case(jnp.arcsin, V, rtol=1e-4),
    "jnp.arccos": case(jnp.arccos, V, rtol=1e-4),
    "jnp.arctan": case(jnp.arctan, V, rtol=1e-4),
    "jnp.square": case(jnp.square, V),
    "logsumexp": case(lambda x: jax.nn.logsumexp(x, axis=-1), M, rtol=1e-4),
    "jnp.cumprod": case(lambda x: jnp.cumprod(x, axis=0), M),
    "jnp.outer_kron": case(lambda a, b: (jnp.outer(a, b), jnp.kron(a[:3, None], b)), V, B),
    "jnp.diff_triu_roll_pad_tile": case(_layout_ops, M),
    "jnp.argmax": case(lambda x: jnp.argmax(x, axis=1), M, grad=False),
    "jnp.max_prod": case(lambda x: (jnp.max(x, axis=0), jnp.prod(x, axis=1)), M),
    "jnp.searchsorted": case(lambda x: jnp.searchsorted(jnp.sort(x), jnp.array([-0.5, 0.0, 0.5])), V, grad=False),
    "jnp.unique_size": case(lambda x: jnp.unique(jnp.round(x * 2), size=4, fill_value=0.0), V, grad=False),
    "jnp.nan_to_num": case(lambda x: jnp.nan_to_num(jnp.log(x)), V, rtol=1e-4),
    "jnp.arctan2_hypot": case(lambda a, b: (jnp.arctan2(a, b), jnp.hypot(a, b)), V, V[::-1] + 0.05, rtol=1e-4),
    "jnp.log1p_expm1": case(lambda x: jnp.log1p(x) + jnp.expm1(x), V, rtol=1e-4),
    "jnp.power_mod": case(lambda x: jnp.power(jnp.abs(x) + 0.5, 1.7) + jnp.mod(x, 0.3), V, rtol=1e-4),
    "scipy.special.digamma": case(jax.scipy.special.digamma, POSITIVE, rtol=1e-4),
    "scipy.special.erfinv": case(jax.scipy.special.erfinv, V * 0.9, rtol=1e-4),
    "jnp.select_piecewise_vectorize": case(_conditionals, V, rtol=1e-4),
    "jnp.nanmean_nanmedian": case(lambda x: (jnp.nanmean(jnp.log(x)), jnp.nanmedian(jnp.log(x))), V, rtol=1e-4),
    "jnp.at_add_set_segment_sum": case(lambda x: (x.at[jnp.array([0, 2, 0])].add(1.0).at[1].set(3.0),
                                                   jax.ops.segment_sum(x, jnp.array([0, 1, 0]), num_segments=2)), M),
    "jnp.nonzero_argwhere_histogram_bincount": case(_sized_selections, V, grad=False),
    "integer_ops": case(_integer_ops, INTEGERS, grad=False),
    "complex.abs_angle_einsum": case(lambda z, w: (jnp.abs(z), jnp.angle(z), jnp.einsum("i,i->", z, w)),
                                     COMPLEX, COMPLEX[::-1], rtol=1e-4),
    "bfloat16_float16": case(lambda x: (jax.nn.gelu(x.astype(jnp.bfloat16)).astype(jnp.float32),
                                        jnp.tanh(x.astype(jnp.float16)).astype(jnp.float32)), V, rtol=1e-2),
    "lax.stop_gradient": case(lambda x: x * lax.stop_gradient(x), V),
    "scipy.special.gammainc_i0e_logit_xlogy_polygamma": case(_special_functions, POSITIVE, rtol=1e-4),
    "scipy.special.betainc": case(lambda x: jax.scipy.special.betainc(2.0, 3.0, x / 4), POSITIVE, rtol=1e-4),
    "scipy.stats.norm": case(lambda x: (jax.scipy.stats.norm.cdf(x), jax.scipy.stats.norm.logpdf(x)), V, rtol=1e-4),
    "scipy.linalg.solve_triangular": case(lambda a, b: jax.scipy.linalg.solve_triangular(jnp.triu(a), b), SQUARE, B,
                                          rtol=1e-4),
    # jax.numpy.fft
    "jnp.fft.fft": case(jnp.fft.fft, SIGNAL, rtol=1e-4),
    "jnp.fft.rfft": case(jnp.fft.rfft, SIGNAL, rtol=1e-4),
    "jnp.fft.irfft": case(lambda x: jnp.fft.irfft(jnp.fft.rfft(x) * jnp.arange(5.0), n=8), SIGNAL, rtol=1e-4),
    "jnp.fft.fft2": case(jnp.fft.fft2, IMAGE, rtol=1e-4),
    "jnp.fft.rfftn": case(jnp.fft.rfftn, IMAGE, rtol=1e-4),
    "jnp.fft.fftshift": case(jnp.fft.fftshift, IMAGE),
    "jnp.fft.hfft_ihfft": case(lambda x: (jnp.fft.hfft(x * (1 + 0.5j)), jnp.fft.ihfft(x)), SIGNAL, rtol=1e-4),
    "jnp.fft.ifft": case(lambda x: jnp.fft.ifft(x * (1 + 0.5j)), SIGNAL, rtol=1e-4),
    "jnp.fft.irfft2": case(lambda x: jnp.fft.irfft2(jnp.fft.rfft2(x) * 1.5, s=x.shape), IMAGE, rtol=1e-4),
    # jax.numpy.linalg (LAPACK custom calls on the CPU)
    "jnp.linalg.solve": case(jnp.linalg.solve, SQUARE, B, rtol=1e-4),
    "jnp.linalg.inv": case(jnp.linalg.inv, SQUARE, rtol=1e-4),
    "jnp.linalg.det": case(jnp.linalg.det, SQUARE, rtol=1e-4),
    "jnp.linalg.cholesky": case(jnp.linalg.cholesky, SPD, rtol=1e-4),
    "jnp.linalg.qr": case(jnp.linalg.qr, SQUARE, rtol=1e-4),
    "jnp.linalg.eigh": case(lambda a: jnp.linalg.eigh(a + a.T)[0], SQUARE, rtol=1e-4),
    "jnp.linalg.svd": case(lambda a: jnp.linalg.svd(a, compute_uv=False), SQUARE, rtol=1e-4),
    "jnp.linalg.slogdet": case(lambda a: jnp.linalg.slogdet(a)[1], SQUARE, rtol=1e-4),
    "jnp.linalg.pinv": case(jnp.linalg.pinv, M, rtol=1e-4),
    "jnp.linalg.lstsq": case(lambda a, b: jnp.linalg.lstsq(a, b)[0], M.T, M.T[:, 0], rtol=1e-4),
    "jnp.linalg.eigvals": case(jnp.linalg.eigvals, SQUARE, grad=False, rtol=1e-4),
    "scipy.linalg.lu": case(jax.scipy.linalg.lu, SQUARE, rtol=1e-4),
    # jax.nn
    "nn.relu": case(jax.nn.relu, V),
    "nn.gelu": case(jax.nn.gelu, V, rtol=1e-4),
    "nn.softmax": case(lambda x: jax.nn.softmax(x, axis=-1), M, rtol=1e-4),
    "nn.log_softmax": case(lambda x: jax.nn.log_softmax(x, axis=-1), M, rtol=1e-4),
    "nn.sigmoid": case(jax.nn.sigmoid, V, rtol=1e-4),
    "nn.silu": case(jax.nn.silu, V, rtol=1e-4),
    "nn.one_hot": case(lambda i: jax.nn.one_hot(i, 4), np.array([0, 3, 1], np.int32), grad=False),
    "nn.standardize": case(lambda x: jax.nn.standardize(x, axis=-1), M, rtol=1e-4),
    "nn.softplus_elu": case(lambda x: jax.nn.softplus(x) + jax.nn.elu(x) + jax.nn.leaky_relu(x), V, rtol=1e-4),
    "nn.dot_product_attention": case(lambda q: jax.nn.dot_product_attention(q, q * 0.5, q[..., ::-1]),
                                     M.reshape(1, 3, 1, 4), rtol=1e-4),
    # jax.random, with raw and typed keys
    **_random_cases("random.raw", RAW_KEY),
    **_random_cases("random.typed", TYPED_KEY, every_sampler=False),
    # jax.lax
    "lax.scan": case(_scan_cumulative, V, rtol=1e-4),
    "lax.fori_loop": case(lambda x: lax.fori_loop(0, 3, lambda i, c: c * x + i, x), V),
    "lax.while_loop": case(lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 1.5), (0, x)),
                           V, grad=False),
    "lax.while_loop_data": case(lambda x: lax.while_loop(lambda c: jnp.sum(c) < 10.0, lambda c: c * 1.5 + 0.1,
                                                        jnp.abs(x) + 0.1), V, grad=False),
    "lax.cond_pytree": case(lambda x: lax.cond(x[0] > 0, lambda t: (t[0] * 2, t[1]), lambda t: (t[1], t[0]),
                                               (x, x * 3)), V),
    "lax.cond": case(lambda x: lax.cond(jnp.sum(x) > 0, jnp.sin, jnp.cos, x), V, rtol=1e-4),
    "lax.switch": case(lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x), INDEX, V, rtol=1e-4),
    "lax.dynamic_slice": case(lambda x, i: lax.dynamic_slice(x, (i, i), (2, 2)), M, INDEX),
    "lax.dynamic_update_slice": case(lambda x, u: lax.dynamic_update_slice(x, u, (1, 2)), M, M[:2, :2] * 3),
    "lax.top_k": case(lambda x: lax.top_k(x, 2), M),
    "lax.cummax_cumlogsumexp": case(lambda x: (lax.cummax(x, axis=1), lax.cumlogsumexp(x, axis=1)), M, rtol=1e-4),
    # (jax's batching of rng_bit_generator draws every example from the first key; hloforge's is per example:
    # test_rng_bit_generator_batches_per_example)
    "lax.rng_bit_generator": case(lambda k: lax.rng_bit_generator(k, (4,))[1], np.arange(4, dtype=np.uint32),
                                  grad=False, vmap=False),
    "lax.associative_scan": case(lambda x: lax.associative_scan(jnp.add, x, axis=1), M),
    "lax.map": case(lambda x: lax.map(lambda row: jnp.sin(row) * row.sum(), x), M, rtol=1e-4),
    "lax.sort_multi": case(lambda x, y: lax.sort((x, y), num_keys=1), V[::-1], V * 2),
    "jax.checkpoint": case(jax.checkpoint(lambda x: jnp.sin(jnp.sin(x) * x)), V, rtol=1e-4),
    "lax.erf": case(lax.erf, V, rtol=1e-4),
    "lax.lgamma": case(lax.lgamma, POSITIVE, rtol=1e-4),
    "lax.reduce_window": case(_max_pool, IMAGE),
    "jnp.convolve": case(lambda x, k: jnp.convolve(x, k, mode="same"), SIGNAL, B, rtol=1e-4),
    "lax.conv_general_dilated": case(_conv, IMAGE, SQUARE, rtol=1e-4),
    # optax optimizers, their state made inside the function
    "optax.adam": case(_optax_update(lambda: optax.adam(1e-3)), M, M * 0.5 + 0.1, rtol=1e-4),
    "optax.sgd_momentum": case(_optax_update(lambda: optax.sgd(1e-2, momentum=0.9)), M, M * 0.5 + 0.1),
    "optax.adamw": case(_optax_update(lambda: optax.adamw(1e-3, weight_decay=1e-2)), M, M * 0.5 + 0.1,
                        rtol=1e-4),
}

# (check, case) -> why it fails; strict, so a fix shows up as XPASS
XFAIL: dict[tuple[str, str], str] = {
}


@functools.cache
def optimized(name):
    """One hf.optimize function per case, so its three checks share the traced and optimized program."""
    return hf.optimize(CASES[name].fn)


def _ids(check) -> list:
    names = [n for n, c in CASES.items() if check == "value" or getattr(c, check)]
    return [pytest.param(n, id=n, marks=pytest.mark.xfail(reason=XFAIL[check, n], strict=True))
            if (check, n) in XFAIL else pytest.param(n, id=n) for n in names]


def _weights(shape, dtype):
    w = jnp.cos(jnp.arange(int(np.prod(shape)), dtype=jnp.float32) * 0.7 + 0.3).reshape(shape)
    return w * (1 - 0.5j) if jnp.issubdtype(dtype, jnp.complexfloating) else w


def _weighted_sum(outputs):
    """A scalar of every inexact output (weighted, so softmax's constant sum still has a gradient)."""
    total = 0.0
    for leaf in jax.tree_util.tree_leaves(outputs):
        if jnp.issubdtype(leaf.dtype, jnp.inexact):
            total = total + jnp.sum(jnp.real(leaf * _weights(leaf.shape, leaf.dtype)))
    return total


def _inexact_args(args) -> tuple:
    return tuple(i for i, a in enumerate(args) if jnp.asarray(a).dtype in (jnp.float32, jnp.complex64))


def _second_sample(arg):
    if _is_key(arg) or (arg.dtype == jnp.uint32 and arg.shape == (2,)):  # (a typed or a raw key)
        return jax.random.fold_in(arg, 1)
    if np.dtype(arg.dtype).kind in "iu":
        return arg * 0 + 2 if np.ndim(arg) == 0 else arg[::-1]
    return arg * 0.5 + 0.1


def _stacked(arg):
    return jax.tree_util.tree_map(lambda a, b: jnp.stack([a, b]), arg, _second_sample(arg))


def _is_key(x) -> bool:
    return jnp.issubdtype(x.dtype, jax.dtypes.prng_key)


def assert_same(got, want, rtol):
    got_leaves, got_tree = jax.tree_util.tree_flatten(got)
    want_leaves, want_tree = jax.tree_util.tree_flatten(want)
    assert got_tree == want_tree, f"structure {got_tree} != {want_tree}"
    for g, w in zip(got_leaves, want_leaves):
        if _is_key(w):  # (typed keys come back typed keys, of the same implementation)
            assert g.dtype == w.dtype, f"{g.dtype} != {w.dtype}"
            g, w = jax.random.key_data(g), jax.random.key_data(w)
        w = np.asarray(w)
        assert_close(np.asarray(g), w, rtol=rtol if w.dtype.kind in "fc" else None)


def _checks_of(case: Case) -> tuple:
    return ("value",) + tuple(check for check in ("grad", "vmap") if getattr(case, check))


def _run(fn, case: Case, checks, args, stacked) -> dict:
    """The results of ``checks`` of ``fn`` (the case's function, or its hf.optimize), one jax program."""
    out = {}
    if "value" in checks:
        out["value"] = fn(*args)
    if "grad" in checks:
        out["grad"] = jax.grad(lambda *a: _weighted_sum(fn(*a)), argnums=_inexact_args(args))(*args)
    if "vmap" in checks:
        out["vmap"] = jax.vmap(fn, (0,) + (None,) * (len(args) - 1))(*stacked)
    return out


def _compiled(fn, name, checks) -> dict:
    """The checks' jax program compiled without LLVM's optimizations (both sides alike: the comparisons
    are tolerance-based, and XLA's own passes still run): a quarter of this file's time."""
    case = CASES[name]
    stacked = (_stacked(case.args[0]),) + case.args[1:]
    return jax.jit(functools.partial(_run, fn, case, checks)).lower(case.args, stacked).compile(
        compiler_options={"xla_backend_optimization_level": 0})(case.args, stacked)


@functools.cache
def _together(name, side):
    """Every check of a case in one jax.jit per side (a third of the compilations); None where that fails, so
    that each check then runs alone and a failure is its own."""
    fn = optimized(name) if side == "hloforge" else CASES[name].fn
    try:
        return _compiled(fn, name, _checks_of(CASES[name]))
    except Exception:
        return None


def _result(name, side, check):
    together = _together(name, side)
    if together is not None:
        return together[check]
    fn = optimized(name) if side == "hloforge" else CASES[name].fn
    return _compiled(fn, name, (check,))[check]


def _compare(name, check):
    assert_same(_result(name, "hloforge", check), _result(name, "jax", check), CASES[name].rtol)


@pytest.mark.parametrize("name", _ids("value"))
def test_value(name):
    _compare(name, "value")


@pytest.mark.parametrize("name", _ids("grad"))
def test_grad(name):
    _compare(name, "grad")


@pytest.mark.parametrize("name", _ids("vmap"))
def test_vmap(name):
    _compare(name, "vmap")


def test_rng_bit_generator_batches_per_example():
    """hloforge's batching of rng_bit_generator draws from each example's key; jax's rule (the sweep's reference)
    draws every example from the first key, so the sweep leaves its vmap out."""
    draw = CASES["lax.rng_bit_generator"].fn
    keys = np.stack([np.arange(4, dtype=np.uint32), np.arange(4, dtype=np.uint32) + 7])
    np.testing.assert_array_equal(np.asarray(jax.jit(jax.vmap(optimized("lax.rng_bit_generator")))(keys)),
                                  np.stack([draw(k) for k in keys]))
