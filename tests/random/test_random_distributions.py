"""hloforge.random's distributions against jax.random (jax 0.10.2 on CPU): the same uint32[2] key
gives the same integers bit for bit and the same floats (to a few ulps inside one large program,
which XLA fuses and vectorizes differently from jax's; bit for bit in eager calls, one program each,
as jax's); under hf.grad the same derivatives; every public callable of jax.random exists with jax's
signature; validation errors name the bad values.

XLA compiles each sampler's threefry hashes and rejection loops for about a second (jax's own as
long), so every sampler of one x64 setting is in one program per side (the gradients in x64 off's),
the programs compile at once in a thread pool (XLA compiles without the GIL), and each runs on
every key.
"""
import concurrent.futures
import inspect

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import hloforge as hf
import hloforge.numpy as hnp
import hloforge.random as hr

KEYS = [np.asarray(jax.random.PRNGKey(s)) for s in (0, 42)] + [np.asarray(jax.random.split(jax.random.PRNGKey(3))[1])]
BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
S = (3, 5)


def params(d):
    """Parameter arrays of dtype ``d`` (five entries: they broadcast against (3, 5) samples)."""
    pos = np.array([0.3, 0.9, 1.7, 4.0, 12.0], d)
    prob = np.array([0.05, 0.3, 0.5, 0.75, 0.98], d)
    return {"pos": pos, "rev": pos[::-1].copy(), "small": pos / 4, "hi": pos + 5,
            "left": np.array([-1.5, -0.2, 0.0, 0.4, 1.0], d), "mid": np.array([-1.0, 0.3, 1.0, 2.0, 5.0], d),
            "conc": np.array([1.0, 2.3, 3.0, 4.0, 7.0], d), "prob": prob, "pm": prob / prob.sum(),
            "count": np.array([5, 20, 100, 1000, 3000], d), "p": np.array(1.5, d)}


_COV = (lambda a: a @ a.T)(np.arange(9, dtype=np.float32).reshape(3, 3) / 7 + np.eye(3, dtype=np.float32))
ARGS = {**{d.name: params(d) for d in (F16, BF16, F32, F64)},
        "lam": np.array([0.0, 0.5, 3.0, 9.9, 10.0, 25.0, 400.0], np.float32),
        "logits": np.log(np.array([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]], np.float32)),
        "mean": np.array([1.0, -1.0, 0.5], np.float32), "cov": _COV, "cov2": np.stack([_COV, 2 * _COV]),
        "mean64": np.array([1.0, -1.0, 0.5]), "cov64": _COV.astype(np.float64), "gradient_key": KEYS[2]}
"""The samplers' array arguments: run-time arguments of the compiled programs, as in jax.random's jit."""


# ---------------------------------------------------------------- the samplers, one table for both sides

def _transforms(r, k, x, d):
    """Samplers without loops, (3, 5) samples of dtype ``d``, parameters of ``d``."""
    return {
        "exponential": r.exponential(k, S, d), "cauchy": r.cauchy(k, S, d), "laplace": r.laplace(k, S, d),
        "logistic": r.logistic(k, S, d), "gumbel": r.gumbel(k, S, d), "gumbel_high": r.gumbel(k, S, d, "high"),
        "gumbel_highest": r.gumbel(k, S, d, "highest"), "pareto": r.pareto(k, x["pos"], S, d),
        "rayleigh": r.rayleigh(k, x["pos"], S, d), "triangular": r.triangular(k, x["left"], x["mid"], x["hi"]),
        "lognormal": r.lognormal(k, x["pos"], S, d), "wald": r.wald(k, x["pos"], S, d),
        "maxwell": r.maxwell(k, S, d), "rademacher": r.rademacher(k, S, d),
        "double_sided_maxwell": r.double_sided_maxwell(k, x["left"], x["pos"], (3,), d),
        "weibull_min": r.weibull_min(k, x["pos"], x["conc"], S, d), "gamma": r.gamma(k, x["pos"], S, d)}


def _float32_only(r, k, a):
    """The family built on gamma (gamma's arithmetic, tested in every dtype), the counting samplers,
    the linear algebra and Python scalar parameters, in float32."""
    x = a["float32"]
    return {
        "loggamma": r.loggamma(k, x["small"], S), "beta": r.beta(k, x["pos"], x["rev"], S),
        "dirichlet": r.dirichlet(k, x["pos"], (3,)), "chisquare": r.chisquare(k, x["pos"], S),
        "f": r.f(k, x["pos"], x["rev"], (5,)), "t": r.t(k, x["pos"], S),
        "generalized_normal": r.generalized_normal(k, x["p"], S), "ball": r.ball(k, 3, x["p"], (4,)),
        "poisson": r.poisson(k, a["lam"], (3, 7)), "geometric": r.geometric(k, x["prob"], S),
        "geometric_scalar": r.geometric(k, 0.3, (5,)), "categorical": r.categorical(k, a["logits"]),
        "categorical_axis0": r.categorical(k, a["logits"], 0, (4, 3)),
        "categorical_without": r.categorical(k, a["logits"], shape=(2, 2), replace=False, mode="high"),
        "binomial": r.binomial(k, x["count"], x["prob"], S),
        "multinomial": r.multinomial(k, x["count"][:3], x["pm"], shape=S),
        "rademacher/int8": r.rademacher(k, S, np.int8),
        "lognormal/complex64": r.lognormal(k, x["pos"], None, np.complex64),
        "multivariate_normal": r.multivariate_normal(k, a["mean"], a["cov"], (4,)),
        "multivariate_normal_svd": r.multivariate_normal(k, a["mean"], a["cov"], (4,), method="svd"),
        "multivariate_normal_eigh": r.multivariate_normal(k, a["mean"], a["cov"], (4,), method="eigh"),
        "multivariate_normal_batch": r.multivariate_normal(k, a["mean"], a["cov2"], (4, 2)),
        "orthogonal": r.orthogonal(k, 4), "orthogonal_wide": r.orthogonal(k, 3, (2,), m=5),
        "orthogonal/complex64": r.orthogonal(k, 3, (), np.complex64),
        # Python scalars: jax's weak float32 (computed in float32, then meeting the samples' dtype)
        "pareto_scalar": r.pareto(k, 1.7, (5,)),
        "weibull_min_scalars/float16": r.weibull_min(k, 2.0, 1.5, (5,), F16),
        "double_sided_maxwell_scalars/float16": r.double_sided_maxwell(k, 0.5, 2.0, (5,), F16)}


_HALF = ("exponential", "logistic", "gumbel_high", "pareto", "wald", "maxwell", "gamma")


def narrow_program(r, k, a):
    """Everything with jax's x64 off: float32 in full, float16 for the samplers with arithmetic of
    their own and gamma, bfloat16 (8 random bits per value) for three."""
    out = {n if "/" in n else f"{n}/float32": v
           for part in (_transforms(r, k, a["float32"], F32), _float32_only(r, k, a)) for n, v in part.items()}
    half = _transforms(_Only(r, _HALF), k, a["float16"], F16)
    out.update({f"{n}/float16": half[n] for n in _HALF})
    bf16 = _transforms(_Only(r, ("exponential", "pareto", "gamma")), k, a["bfloat16"], BF16)
    out.update({f"{n}/bfloat16": bf16[n] for n in ("exponential", "pareto", "gamma")})
    return out


def wide_program(r, k, a):
    """float64 samples, with jax's x64 on."""
    x, d = a["float64"], F64
    out = {"exponential": r.exponential(k, S, d), "gumbel_highest": r.gumbel(k, S, d, "highest"),
           "rademacher": r.rademacher(k, S, d), "wald": r.wald(k, x["pos"], S, d),
           "weibull_min": r.weibull_min(k, x["pos"], x["conc"], S, d), "gamma": r.gamma(k, x["pos"], S, d),
           "multivariate_normal": r.multivariate_normal(k, a["mean64"], a["cov64"], (4,)),
           "orthogonal": r.orthogonal(k, 3, (2,), d, m=4)}
    return {f"{n}/float64": v for n, v in out.items()}


class _Only:
    """Module ``r`` restricted to the samplers ``names`` (the others draw nothing)."""

    def __init__(self, r, names):
        self.r, self.names = r, {n.split("_")[0] if n.startswith("gumbel") else n for n in names}

    def __getattr__(self, name):
        return getattr(self.r, name) if name in self.names else (lambda *args, **kwargs: None)


class _Names:
    def __getattr__(self, name):
        return lambda *args, **kwargs: None


PROGRAMS = {"narrow": (narrow_program, False), "wide": (wide_program, True)}
CASES = sorted(n for program, _ in PROGRAMS.values() for n in program(_Names(), None, ARGS))


def gradients(r, np_, grad, a):
    """d/d(a, b) of gamma's, beta's and weibull_min's summed samples (their custom derivatives), in
    the narrow program (one compile less per side) but of a key of their own: samples of the
    samplers' key would be shared with theirs, and XLA would fuse those differently on the two sides."""
    k = a["gradient_key"]

    def loss(a, b):
        return np_.sum(r.gamma(k, a, S)) + np_.sum(r.beta(k, a, b, S)) + np_.sum(r.weibull_min(k, b, a, S))
    return grad(loss, argnums=(0, 1))(a["float32"]["pos"], a["float32"]["conc"])


def _program(name, r, np_, grad, k, a):
    """({case: samples}, gradients or None) of program ``name``."""
    program, _ = PROGRAMS[name]
    return program(r, k, a), (gradients(r, np_, grad, a) if name == "narrow" else None)


def _hf_run(name):
    fn = hf.jit(lambda key, a: _program(name, hr, hnp, hf.grad, key, a))
    return [jax.tree.map(np.asarray, fn(key, ARGS)) for key in KEYS]


def _jax_run(name):
    with jax.enable_x64(PROGRAMS[name][1]):
        fn = jax.jit(lambda key, a: _program(name, jax.random, jnp, jax.grad, key, a))
        return [jax.tree.map(np.asarray, fn(key, ARGS)) for key in KEYS]


@pytest.fixture(scope="module")
def compiled():
    """The programs of the comparisons, compiled at once in a thread pool (XLA compiles without the
    GIL): {case: (hloforge's results, jax's) per key} for two programs per side (x64 off; float64
    with jax's x64 on), and (hloforge's gradients, jax's) of each run."""
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        jobs = {name: (pool.submit(_hf_run, name), pool.submit(_jax_run, name)) for name in PROGRAMS}
        out = {}
        for h, j in jobs.values():
            h, j = h.result(), j.result()
            out.update({case: ([r[case] for r, _ in h], [r[case] for r, _ in j]) for case in h[0][0]})
        h, j = (job.result() for job in jobs["narrow"])
        return out, ([g for _, g in h], [g for _, g in j])


@pytest.fixture(scope="module")
def results(compiled):
    return compiled[0]


def assert_matches(actual, expected, ulps=0):
    """Same shape and dtype; integers and bools equal; floats within ``ulps`` units in the last place
    (0: bit for bit; NaN matches NaN)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    if actual.dtype.kind == "c":
        assert_matches(actual.real, expected.real, ulps)
        assert_matches(actual.imag, expected.imag, ulps)
        return
    if actual.dtype.kind in "biu" or ulps == 0:
        np.testing.assert_array_equal(actual, expected)
        return
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    with np.errstate(invalid="ignore"):
        spacing = np.spacing(np.maximum(np.abs(actual), np.abs(expected))).astype(np.float64)
        bad = ~((a == e) | (np.isnan(a) & np.isnan(e)) | (np.abs(a - e) <= ulps * spacing))
    assert not bad.any(), (f"{bad.sum()} of {bad.size} differ by more than {ulps} ulp: {actual[bad][:4]} vs "
                           f"{expected[bad][:4]}")


def tolerance(name):
    """XLA fuses and vectorizes the two programs differently (one fusion's vector loop is the other's
    scalar remainder), so a float may round an ulp apart, and a transcendental function passes that
    on (pareto's exp(e / b) a few ulps); float16 and bfloat16 are computed in float32 inside a fusion
    (XLA's excess precision), rounded where the fusions end."""
    return 8 if name.endswith(("/float16", "/bfloat16")) else 4


@pytest.mark.parametrize("name", sorted(CASES))
def test_samples_match_jax(results, name):
    actual, expected = results[name]
    for a, e in zip(actual, expected):
        assert_matches(a, e, tolerance(name))


def test_most_samples_are_bit_equal(results):
    """Within a few ulps is the allowance; bit for bit is what almost every value is."""
    values = equal = 0
    for actual, expected in results.values():
        for a, e in zip(actual, expected):
            a, e = np.asarray(a), np.asarray(e)
            values += a.size
            equal += int(np.sum((a == e) | ((a != a) & (e != e))))
    assert equal >= 0.97 * values, f"only {equal} of {values} values are bit-equal"


# ---------------------------------------------------------------- eager calls (one program per call, as jax's)

def test_eager_calls_are_bit_equal_to_jax_eager_calls():
    key, logits = KEYS[1], ARGS["logits"]
    calls = [lambda r: r.exponential(key, S), lambda r: r.pareto(key, 1.7, (5,), F16),
             lambda r: r.weibull_min(key, 2.0, 1.5, (5,), F16), lambda r: r.categorical(key, logits, shape=(4, 2))]
    for call in calls:
        actual = call(hr)
        assert isinstance(actual, jax.Array)
        assert_matches(actual, call(jax.random))


def test_eager_calls_compile_once_per_static_signature():
    from hloforge.frontend.random import _eager
    hr.pareto(KEYS[0], 1.7, (5,), F16)
    before = len(_eager._cache)
    for key, b in zip(KEYS, (0.5, 2.0, 3.5)):  # (other keys and scalars: run-time arguments)
        assert_matches(hr.pareto(key, b, (5,), F16), jax.random.pareto(key, b, (5,), F16))
    assert len(_eager._cache) == before


# ---------------------------------------------------------------- derivatives

def test_gradients_match_jax(compiled):
    """hf.grad through gamma's custom derivative (jax's implicit reparameterization by
    random_gamma_grad), beta's (log-space gamma) and weibull_min's."""
    actual, expected = compiled[1]
    assert len(actual) == len(expected) == len(KEYS)
    for run, run_expected in zip(actual, expected):  # (d/da, d/db) of each run (one gradient key)
        assert len(run) == len(run_expected) == 2
        for a, e in zip(run, run_expected):
            np.testing.assert_allclose(a, e, rtol=2e-5, atol=1e-6)


# ---------------------------------------------------------------- the API

def test_every_callable_of_jax_random_with_jax_signature():
    names = [n for n in dir(jax.random) if not n.startswith("_") and callable(getattr(jax.random, n))]
    assert len(names) == 47 and set(names) <= set(hr.__all__)
    for name in names:
        ours, theirs = inspect.signature(getattr(hr, name)), inspect.signature(getattr(jax.random, name))
        assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == [
            (p.name, p.kind, p.default) for p in theirs.parameters.values()], name


def test_key_functions_over_plain_keys():
    typed = jax.random.key(3)
    data = np.asarray(jax.random.key_data(typed))
    assert_matches(hr.key_data(typed), data)
    assert hr.key_data(KEYS[0]) is KEYS[0]  # (plain keys are their data)
    keys = np.asarray(jax.random.split(KEYS[0], 4))
    assert hr.key_data(keys) is keys and hr.wrap_key_data(keys) is keys
    assert hr.key_impl(KEYS[0]) == hr.key_impl(typed) == jax.random.key_impl(typed) == "threefry2x32"
    assert hr.key_dtype() == hr.key_dtype("threefry2x32") == jax.random.key_dtype()
    assert_matches(jax.random.key_data(jax.random.wrap_key_data(hr.key(5), dtype=hr.key_dtype())), hr.key(5))
    assert hr.clone(KEYS[1]) is KEYS[1]
    assert_matches(hr.exponential(typed, S), jax.random.exponential(typed, S))  # (typed keys: their data)
    assert_matches(hr.key(7, dtype=hr.key_dtype()), hr.PRNGKey(7, impl="threefry2x32"))
    module = hf.trace(lambda k: (hr.key_data(k), hr.wrap_key_data(k), hr.clone(k)), hf.ShapeDtype((3, 2), np.uint32))
    assert set(module.op_counts()) == {"func.func", "func.return"}  # (identities: the arguments are returned)


def test_result_dtypes_follow_jax_promotion():
    """Python scalars are weak (float16 samples stay float16), arrays promote (a float32 scale makes
    them float32, as jax.random.weibull_min does), lists take jax's default float32."""
    key = KEYS[0]
    f32 = np.float32([1.0, 2.0])
    for r_fn in (lambda r, k: r.weibull_min(k, 2.0, 1.5, (2,), F16), lambda r, k: r.weibull_min(k, f32, 1.5, (2,), F16),
                 lambda r, k: r.double_sided_maxwell(k, f32, 2.0, (2,), F16),
                 lambda r, k: r.generalized_normal(k, 1.5, (2,), F16), lambda r, k: r.geometric(k, f32.astype(F16))):
        ours, theirs = hf.eval_shape(lambda k: r_fn(hr, k), key), jax.eval_shape(lambda k: r_fn(jax.random, k), key)
        assert (ours.shape, ours.dtype) == (theirs.shape, theirs.dtype)
    assert hf.eval_shape(lambda k: hr.weibull_min(k, [1.0, 2.0], 1.5), key).dtype == F32


def test_gamma_emits_rejection_loops_and_orthogonal_lapack_calls():
    key = hf.ShapeDtype((2,), np.uint32)
    text = hf.trace(lambda k: hr.gamma(k, 2.0, (4,)), key).text
    assert text.count("stablehlo.while") >= 2 and "custom_call" not in text
    text = hf.trace(lambda k: hr.orthogonal(k, 3), key).text
    assert "lapack_sgeqrf_ffi" in text and "lapack_sorgqr_ffi" in text


# ---------------------------------------------------------------- errors

KEY = KEYS[0]
ERRORS = [
    (lambda: hr.gamma(KEY, 1.0, dtype=np.int32),
     ValueError, r"hloforge.random.gamma: dtype must be a float dtype, got int32"),
    (lambda: hr.pareto(KEY, np.float32(2), (3,), F16), ValueError,
     r"pareto: cannot safely cast b of dtype float32 to the sample dtype float16"),
    (lambda: hr.lognormal(KEY, shape=(2,), dtype=F16), ValueError, r"cannot safely cast sigma of dtype float32"),
    (lambda: hr.exponential(KEY, (2,), out_sharding="x"),
     ValueError, r"exponential: out_sharding is not supported \(got 'x'\)"),
    (lambda: hr.normal(KEY, (2,), out_sharding=1),
     ValueError, r"hloforge.random.normal: out_sharding is not supported"),
    (lambda: hr.gamma(np.zeros(3, np.uint32), 1.0), ValueError, r"gamma: key must have shape \(2,\), got shape \(3,\)"),
    (lambda: hr.beta(np.zeros(2, np.float32), 1.0, 1.0),
     TypeError, r"beta: key must be a uint32\[2\] PRNG key .* got dtype float32"),
    (lambda: hr.pareto(KEY, np.ones(3), (2,)),
     ValueError, r"pareto: parameter shapes \(3,\) must broadcast to the shape argument \(2,\)"),
    (lambda: hr.t(KEY, 1j), TypeError, r"hloforge.random.t: df must be a real number or array, got complex 1j"),
    (lambda: hr.gumbel(KEY, mode="max"),
     ValueError, r"gumbel: mode must be None, 'low', 'high' or 'highest', got 'max'"),
    (lambda: hr.categorical(KEY, ARGS["logits"], mode="x"),
     ValueError, r"categorical: mode must be None, 'low' or 'high'"),
    (lambda: hr.categorical(KEY, ARGS["logits"], axis=2),
     ValueError, r"categorical: axis 2 is out of bounds for logits of shape \(2, 3\)"),
    (lambda: hr.categorical(KEY, np.arange(3)),
     TypeError, r"categorical: logits must be floating point, got dtype int64"),
    (lambda: hr.categorical(KEY, ARGS["logits"], shape=(4, 2), replace=False), ValueError,
     r"the number of samples without replacement \(4\) cannot exceed the number of categories \(3\)"),
    (lambda: hr.dirichlet(KEY, 1.0), ValueError, r"dirichlet: alpha must have at least one dimension"),
    (lambda: hr.multivariate_normal(KEY, ARGS["mean"], ARGS["cov"], method="qr"), ValueError,
     r"method must be one of 'svd', 'eigh' and 'cholesky', got 'qr'"),
    (lambda: hr.multivariate_normal(KEY, ARGS["mean"], np.eye(2, dtype=np.float32)), ValueError,
     r"cov must have shape \(..., n, n\) for n = 3 \(mean's last dimension\), got shape \(2, 2\)"),
    (lambda: hr.multivariate_normal(KEY, 1.0, ARGS["cov"]), ValueError, r"mean must have at least one dimension"),
    (lambda: hr.orthogonal(KEY, 3, dtype=F16),
     TypeError, r"orthogonal: dtype float16 is not supported: the factorization"),
    (lambda: hr.orthogonal(KEY, 2.5), TypeError, r"orthogonal: n must be a concrete int, got 2.5"),
    (lambda: hr.orthogonal(KEY, 3, m=-1), ValueError, r"orthogonal: m must be non-negative, got -1"),
    (lambda: hr.ball(KEY, 2.0), TypeError, r"ball: d must be a concrete int \(the dimension\), got 2.0"),
    (lambda: hr.poisson(KEY, 2.0, dtype=np.float32),
     ValueError, r"poisson: dtype must be an integer dtype, got float32"),
    (lambda: hr.geometric(KEY, 0.5, dtype=np.float32), ValueError, r"geometric: dtype must be an integer dtype"),
    (lambda: hr.rademacher(KEY, dtype=np.bool_),
     ValueError, r"rademacher: dtype must be an integer or float dtype, got bool"),
    (lambda: hr.multinomial(KEY, 3.0, 0.5), ValueError, r"multinomial: p must have at least one dimension"),
    (lambda: hr.multinomial(KEY, np.ones(4), np.ones(3) / 3),
     ValueError, r"multinomial: n of shape \(4,\) cannot be broadcast to \(\)"),
    (lambda: hr.binomial(KEY, np.ones(3), np.ones(2)),
     ValueError, r"binomial: n shape \(3,\) and p shape \(2,\) cannot be broadcast"),
    (lambda: hr.double_sided_maxwell(KEY, np.ones(3), np.ones(2)), ValueError,
     r"double_sided_maxwell: loc shape \(3,\) and scale shape \(2,\) cannot be broadcast together"),
    (lambda: hr.weibull_min(KEY, np.ones(3), 1.0, (2,)), ValueError,
     r"weibull_min: shape \(2,\), scale shape \(3,\) and concentration shape \(\) cannot be broadcast together"),
    (lambda: hr.wrap_key_data(KEY, impl="threefry2x32", dtype=hr.key_dtype()), ValueError,
     r"wrap_key_data: pass impl or dtype, not both"),
    (lambda: hr.wrap_key_data(np.zeros((2, 4), np.uint32)), ValueError,
     r"wrap_key_data: key data must have a trailing dimension of size 2 \(threefry2x32 keys\), got shape \(2, 4\)"),
    (lambda: hr.key_data(np.zeros(2, np.int32)), TypeError, r"key_data: key must be a uint32\[2\] PRNG key"),
    (lambda: hr.key_impl(jax.random.key(0, impl="rbg")),
     ValueError, r"key_impl: PRNG implementation 'rbg' is not supported"),
    (lambda: hr.key_dtype("philox"), ValueError, r"key_dtype: unrecognized PRNG implementation 'philox'"),
    (lambda: hr.PRNGKey(0, impl="rbg"), ValueError, r"PRNGKey: PRNG implementation 'rbg' is not supported"),
    (lambda: hr.key(0, impl="rbg", dtype="rbg"), ValueError, r"hloforge.random.key: pass impl or dtype, not both"),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors(index):
    call, error, match = ERRORS[index]
    with pytest.raises(error, match=match):
        call()
