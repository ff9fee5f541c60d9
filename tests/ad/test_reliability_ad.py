"""Silent wrong results in AD, nn and random, and unclear errors (issue #31): complex outputs of
jacrev/hessian, argnums, wrap-around trip counts of while loops under reverse mode, custom rule
outputs, relu's derivative at 0, random populations beyond int32, scan sizes, cond's Python scalars."""
import random as pyrandom

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
import hloforge.numpy as hnp
from hloforge import lax, nn
from hloforge.frontend.ad.control_flow import wrapped_trip_count

X = np.array([1.0, 2.0], np.float32)
Z = np.array([1 + 1j, 2.0 - 0.5j], np.complex64)


# ---------------------------------------------------------------- B2: complex outputs, holomorphic

def test_jacrev_and_hessian_of_complex_outputs_raise_as_jax():
    with pytest.raises(TypeError, match=r"jacrev\(<lambda>\): jacrev requires real-valued outputs \(output dtype "
                                        r"that is a sub-dtype of np.floating\), but got complex64 .*pass "
                                        r"holomorphic=True"):
        hf.jacrev(lambda a: a * 1j)(X)
    with pytest.raises(TypeError, match=r"jacrev requires real-valued outputs .* but got complex64"):
        hf.hessian(lambda a: hnp.sum(a * a * 1j))(X)
    with pytest.raises(TypeError, match=r"grad\(<lambda>\): grad requires real-valued outputs .* but got complex64"):
        hf.grad(lambda a: hnp.sum(a * 1j))(X)
    with pytest.raises(TypeError, match=r"jacrev requires real-valued outputs .* but got int32 .*integer outputs, "
                                        r"use hf.vjp directly"):
        hf.jacrev(lambda a: a.astype(np.int32))(X)
    with pytest.raises(TypeError, match=r"jacfwd requires real-valued inputs .* but got complex64"):
        hf.jacfwd(lambda a: a * a)(Z)


def test_holomorphic_needs_complex_inputs_and_outputs():
    with pytest.raises(TypeError, match=r"jacrev with holomorphic=True requires inputs with complex dtype, but got "
                                        r"float32"):
        hf.jacrev(lambda a: a * 1j, holomorphic=True)(X)
    with pytest.raises(TypeError, match=r"jacrev with holomorphic=True requires outputs with complex dtype, but got "
                                        r"float32"):
        hf.jacrev(lambda a: hnp.abs(a), holomorphic=True)(Z)


@pytest.mark.parametrize("name", ["jacrev", "jacfwd", "hessian", "grad"])
def test_holomorphic_derivatives_are_jax(name):
    def f(xp):
        if name in ("hessian", "grad"):
            return lambda a: xp.sum(xp.sin(a) * a * a)
        return lambda a: xp.sin(a) * a
    got = getattr(hf, name)(f(hnp), holomorphic=True)(Z)
    want = getattr(jax, name)(f(jnp), holomorphic=True)(Z)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-5, atol=1e-5)


def test_real_jacobians_of_complex_inputs_and_complex_jacfwd_outputs_stay_jax():
    np.testing.assert_allclose(hf.jacrev(lambda a: hnp.abs(a))(Z), jax.jit(jax.jacrev(jnp.abs))(Z), rtol=1e-6)
    np.testing.assert_allclose(hf.jacfwd(lambda a: a * 1j)(X), jax.jit(jax.jacfwd(lambda a: a * 1j))(X))


# ---------------------------------------------------------------- argnums

@pytest.mark.parametrize("argnums", [0.0, None, True, (0, "a"), "0"])
def test_bad_argnums_types_name_the_value(argnums):
    with pytest.raises(TypeError, match=r"grad\(<lambda>\): argnums must be an int or a tuple of ints, got "):
        hf.grad(lambda a: hnp.sum(a), argnums=argnums)


def test_argnums_out_of_range_empty_or_repeated():
    with pytest.raises(ValueError, match=r"argnums 1 out of range for 1 positional argument\(s\): differentiating "
                                         r"with respect to argnums=1 requires at least 2 positional arguments"):
        hf.grad(lambda a: hnp.sum(a), argnums=1)(X)
    with pytest.raises(ValueError, match=r"jacrev\(<lambda>\): argnums -2 out of range"):
        hf.jacrev(lambda a: a, argnums=-2)(X)
    with pytest.raises(ValueError, match=r"argnums \(\) names no argument"):
        hf.grad(lambda a: hnp.sum(a), argnums=())
    with pytest.raises(ValueError, match=r"argnums \(0, -2\) names argument\(s\) more than once"):
        hf.grad(lambda a, b: hnp.sum(a * b), argnums=(0, -2))(X, X)
    assert hf.grad(lambda a: hnp.sum(a), argnums=np.int64(0))(X).shape == (2,)
    (g,) = hf.grad(lambda a: hnp.sum(a), argnums=[0])(X)
    np.testing.assert_allclose(g, np.ones(2))


# ---------------------------------------------------------------- B4: trip counts under wrap-around

def _simulate(start, bound, step, direction, bits, signed):
    m = cap = 1 << bits  # the counter has m states: a loop still running after m trips repeats one, forever
    lo = -(m >> 1) if signed else 0
    wrap = lambda v: (v - lo) % m + lo  # noqa: E731
    holds = {"LT": lambda v: v < b, "LE": lambda v: v <= b, "GT": lambda v: v > b, "GE": lambda v: v >= b,
             "NE": lambda v: v != b, "EQ": lambda v: v == b}[direction]
    v, b, trips = wrap(start), wrap(bound), 0
    while holds(v):
        v, trips = wrap(v + step), trips + 1
        if trips > cap:
            return None
    return trips


@pytest.mark.parametrize("bits,signed", [(8, True), (8, False), (16, True), (16, False)])
def test_wrapped_trip_count_is_the_simulated_one(bits, signed):
    rng = pyrandom.Random(bits * 2 + signed)
    lo, hi = (-(1 << bits - 1), (1 << bits - 1) - 1) if signed else (0, (1 << bits) - 1)
    for _ in range(3000 if bits == 8 else 300):
        start, bound = rng.randint(lo, hi), rng.randint(lo, hi)
        step = rng.choice([s for s in (1, -1, 2, -3, 5, 7, -128, 127, 64, -100) if lo <= s <= hi])
        direction = rng.choice(["LT", "LE", "GT", "GE", "NE", "EQ"])
        want = _simulate(start, bound, step, direction, bits, signed)
        assert wrapped_trip_count(start, bound, step, direction, bits, signed) == want, \
            (start, bound, step, direction)


def test_wrapped_trip_count_of_wide_counters():
    assert wrapped_trip_count(0, 10, 3, "LT", 32, True) == 4
    assert wrapped_trip_count(2 ** 31 - 2, -2 ** 31 + 1, 1, "NE", 32, True) == 3
    assert wrapped_trip_count(0, 1, 2, "NE", 32, True) is None          # never reaches an odd bound
    assert wrapped_trip_count(0, 2 ** 31 - 1, 1, "LE", 32, True) is None  # i <= max never fails
    assert wrapped_trip_count(0, 2 ** 40, 1, "LT", 64, True) is None      # more than 2**31 - 1 trips
    assert wrapped_trip_count(5, 3, 1, "LT", 64, False) == 0


def _counted_loop(start, bound, step, direction, dtype):
    """``while i <direction> bound: i += step; x *= 1.01`` with an integer counter of ``dtype``."""
    def f(x):
        bnd = np.asarray(bound, dtype)
        holds = {"LT": lambda i: i < bnd, "LE": lambda i: i <= bnd, "GT": lambda i: i > bnd,
                 "GE": lambda i: i >= bnd, "NE": lambda i: i != bnd}[direction]
        _, y = lax.while_loop(lambda c: holds(c[0]), lambda c: (c[0] + np.asarray(step, dtype), c[1] * 1.01),
                              (np.asarray(start, dtype), x))
        return y
    return f


LOOPS = [(120, -122, 1, "NE", np.int8), (120, 127, 5, "LT", np.int8), (250, 3, 1, "NE", np.uint8),
         (10, 250, 7, "LT", np.uint8), (5, 2, 255, "GE", np.uint8), (3, 0, 1, "GE", np.int8),
         (-100, 100, -7, "LE", np.int8), (100, 90, 50, "GT", np.int8), (30000, -30000, 1000, "GT", np.int16),
         (0, 10, 1, "LT", np.int32), (10, 0, -1, "GT", np.int32)]


@pytest.mark.parametrize("start,bound,step,direction,dtype", LOOPS, ids=str)
def test_reverse_mode_through_wrapping_counters_matches_forward(start, bound, step, direction, dtype):
    bits = np.dtype(dtype).itemsize * 8
    trips = _simulate(start, bound, step, direction, bits, np.dtype(dtype).kind == "i")
    f = _counted_loop(start, bound, step, direction, dtype)
    x = np.float32(1.0)
    grad = float(hf.grad(f)(x))
    tangent = float(hf.jvp(f, (x,), (x,))[1])
    np.testing.assert_allclose([grad, tangent, float(hf.jit(f)(x))], [1.01 ** trips] * 3, rtol=1e-4)


def test_fori_loop_with_int8_bounds_is_jax():
    def f(lax_, x):
        return lax_.fori_loop(np.int8(120), np.int8(-122), lambda i, c: c * 1.5, x)
    assert float(hf.grad(lambda x: f(lax, x))(np.float32(2.0))) == float(jax.grad(lambda x: f(jax.lax, x))(2.0))


def test_a_loop_that_never_ends_is_refused_in_reverse_mode():
    f = _counted_loop(0, 1, 2, "NE", np.int8)  # i = 0, 2, 4, ... never 1
    with pytest.raises(NotImplementedError, match="needs a loop with a static trip count"):
        hf.jit(hf.grad(f)).lower(np.float32(1.0))


# ---------------------------------------------------------------- B5: custom rule outputs

def _custom_jvp(rule):
    @hf.custom_jvp
    def f(x):
        return hnp.sin(x)
    f.defjvp(rule)
    return f


def _custom_vjp(fwd, bwd):
    @hf.custom_vjp
    def g(x):
        return hnp.sin(x)
    g.defvjp(fwd, bwd)
    return g


V = np.ones(3, np.float32)


@pytest.mark.parametrize("mode", ["jvp", "grad"])
def test_custom_jvp_tangent_types_are_checked(mode):
    def run(f):
        if mode == "jvp":
            return hf.jvp(f, (V,), (V,))
        return hf.grad(lambda x: hnp.sum(f(x)))(V)
    tangent = r"custom_jvp\(f\): the jvp rule must produce primal and tangent outputs with corresponding shapes " \
              r"and dtypes: expected float32\[3\] \(tangent type of float32\[3\]\) for tangent output leaf 0, but got "
    with pytest.raises(TypeError, match=tangent + r"float32\[5\]"):
        run(_custom_jvp(lambda p, t: (hnp.sin(p[0]), hnp.ones(5, np.float32))))
    with pytest.raises(TypeError, match=tangent + r"float64\[3\]"):
        run(_custom_jvp(lambda p, t: (hnp.sin(p[0]), t[0].astype(np.float64))))
    with pytest.raises(TypeError, match=r"the jvp rule's primal output must equal the function's output, but its "
                                        r"leaf 0 is float32\[5\] and the function's output leaf 0 is float32\[3\]"):
        run(_custom_jvp(lambda p, t: (hnp.ones(5, np.float32), t[0])))
    with pytest.raises(TypeError, match=r"the jvp rule's primal output must equal the function's output, but it "
                                        r"has the structure PyTreeDef\(\(\*,\)\)"):
        run(_custom_jvp(lambda p, t: ((hnp.sin(p[0]),), (t[0],))))
    with pytest.raises(TypeError, match=r"primal and tangent outputs with equal container \(pytree\) structures, "
                                        r"but got PyTreeDef\(\*\) and PyTreeDef\(\(\*, \*\)\)"):
        run(_custom_jvp(lambda p, t: (hnp.sin(p[0]), (t[0], t[0]))))
    with pytest.raises(TypeError, match=r"the jvp rule must return a pair \(primal_out, tangent_out\)"):
        run(_custom_jvp(lambda p, t: (hnp.sin(p[0]),)))


def test_custom_jvp_rule_not_linear_in_the_tangents_is_refused_in_reverse_mode():
    square = _custom_jvp(lambda p, t: (hnp.sin(p[0]), t[0] * t[0]))
    with pytest.raises(TypeError, match=r"custom_jvp\(f\): reverse-mode differentiation .* must be linear in the "
                                        r"tangents, but stablehlo.multiply multiplies two values that depend on "
                                        r"the tangents"):
        hf.grad(lambda x: hnp.sum(square(x)))(V)
    sine = _custom_jvp(lambda p, t: (hnp.sin(p[0]), hnp.sin(t[0])))
    with pytest.raises(TypeError, match=r"it applies stablehlo.sine to a value that depends on the tangents"):
        hf.grad(lambda x: hnp.sum(sine(x)))(V)
    over = _custom_jvp(lambda p, t: (hnp.sin(p[0]), p[0] / t[0]))
    with pytest.raises(TypeError, match=r"stablehlo.divide divides by a value that depends on the tangents"):
        hf.grad(lambda x: hnp.sum(over(x)))(V)
    np.testing.assert_allclose(hf.jvp(square, (V,), (V,))[1], V)  # (forward mode uses the rule as it is)


def test_linear_and_affine_tangent_maps_transpose_as_in_jax():
    rules = [lambda p, t: (hnp.sin(p[0]), hnp.cos(p[0]) * t[0]),
             lambda p, t: (hnp.sin(p[0]), t[0] + 1.0),
             lambda p, t: (hnp.sin(p[0]), hnp.ones(3, np.float32)),
             lambda p, t: (hnp.sin(p[0]), hnp.where(p[0] > 1.5, t[0], 0.0) / 2.0)]
    wants = [np.cos(V), np.ones(3), np.zeros(3), np.zeros(3)]
    for rule, want in zip(rules, wants):
        f = _custom_jvp(rule)
        np.testing.assert_allclose(hf.grad(lambda x: hnp.sum(f(x)))(V), want, rtol=1e-6)


def test_custom_vjp_bwd_outputs_are_checked():
    g = _custom_vjp(lambda x: (hnp.sin(x), x), lambda r, c: (hnp.ones(5, np.float32),))
    with pytest.raises(ValueError, match=r"custom_vjp\(g\): bwd must produce cotangents of the arguments' types, but "
                                         r"its output leaf 0 is float32\[5\] for an argument of type float32\[3\], "
                                         r"so the shapes do not match"):
        hf.grad(lambda x: hnp.sum(g(x)))(V)
    g = _custom_vjp(lambda x: (hnp.sin(x), x), lambda r, c: (c.astype(np.float16),))
    with pytest.raises(ValueError, match=r"float16\[3\] for an argument of type float32\[3\], so the dtypes"):
        hf.grad(lambda x: hnp.sum(g(x)))(V)
    g = _custom_vjp(lambda x: (hnp.sin(x), x), lambda r, c: c)
    with pytest.raises(TypeError, match=r"bwd must return a tuple with one cotangent per argument \(1\)"):
        hf.grad(lambda x: hnp.sum(g(x)))(V)
    g = _custom_vjp(lambda x: [hnp.sin(x), x], lambda r, c: [None])  # (lists, and None for a zero cotangent)
    np.testing.assert_allclose(hf.grad(lambda x: hnp.sum(g(x)))(V), np.zeros(3))


# ---------------------------------------------------------------- B6: derivatives at kinks

KINKS = np.array([-1.0, -0.0, 0.0, 1.0, np.nan], np.float32)


@pytest.mark.parametrize("name", ["relu", "gelu", "gelu_exact", "softmax"])
def test_activation_derivatives_at_kinks_are_jax(name):
    fns = {"relu": (nn.relu, jax.nn.relu),
           "gelu": (nn.gelu, lambda v: jax.nn.gelu(v, approximate=True)),
           "gelu_exact": (lambda v: nn.gelu(v, approximate=False), lambda v: jax.nn.gelu(v, approximate=False)),
           "softmax": (lambda v: nn.softmax(v * hnp.ones(2, np.float32))[0],
                       lambda v: jax.nn.softmax(v * jnp.ones(2, jnp.float32))[0])}
    h, j = fns[name]
    for p in KINKS:
        got = [float(hf.grad(h)(p)), float(hf.hessian(h)(p))]
        want = [float(jax.jit(jax.grad(j))(p)), float(jax.hessian(j)(p))]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"{name} at {p}")


def test_relu_keeps_its_values_and_integer_dtypes():
    x = np.array([-1.0, 0.0, 2.0, np.nan], np.float32)
    np.testing.assert_array_equal(hf.jit(nn.relu)(x), jax.nn.relu(x))
    np.testing.assert_array_equal(hf.jit(nn.relu)(np.arange(-2, 3, dtype=np.int8)), [0, 0, 0, 1, 2])
    np.testing.assert_allclose(hf.jvp(nn.relu, (x,), (np.ones_like(x),))[1], [0, 0, 1, 0])
    m = hf.jit(nn.relu).lower(x)
    m.optimize()
    assert m.op_counts().get("stablehlo.maximum") == 1 and "func.call" not in m.op_counts()


# ---------------------------------------------------------------- B7: random populations and bounds

KEY = np.asarray(jax.random.PRNGKey(0))


def test_choice_and_permutation_refuse_populations_beyond_int32_indices():
    with pytest.raises(OverflowError, match=r"choice: a = 1099511627776 is too large: its indices are int32"):
        hf.random.choice(KEY, 2 ** 40, (10000,))
    with pytest.raises(OverflowError, match=r"choice: a = 2147483649 is too large"):
        hf.random.choice(KEY, np.int64(2 ** 31 + 1), (3,), replace=False)
    with pytest.raises(OverflowError, match=r"permutation: x = 1099511627776 is too large"):
        hf.jit(lambda k: hf.random.permutation(k, 2 ** 40)).lower(KEY)
    assert hf.random.choice(KEY, 2 ** 40, (0,)).shape == (0,)  # (no draws: nothing to refuse, as jax)
    top = np.asarray(hf.random.choice(KEY, 2 ** 31, (1000,)))
    assert top.dtype == np.int32 and top.min() >= 0 and top.max() > 2 ** 30


def test_numpy_and_jax_integer_populations_are_static_and_jax():
    want = np.asarray(jax.random.choice(jax.random.PRNGKey(0), 5, (6,)))
    np.testing.assert_array_equal(hf.random.choice(KEY, np.int64(5), (6,)), want)
    np.testing.assert_array_equal(hf.random.choice(KEY, jnp.int32(5), (6,)), want)
    np.testing.assert_array_equal(hf.random.permutation(KEY, np.int32(7)), jax.random.permutation(KEY, 7))


@pytest.mark.parametrize("lo,hi,dtype,bad", [
    (0, 2 ** 40, None, "maxval 1099511627776"), (-2 ** 40, 0, None, "minval -1099511627776"),
    (0, 2 ** 33, np.uint32, "maxval 8589934592"), (0, np.int64(2 ** 40), np.int32, "maxval 1099511627776"),
    (0, 1e10, None, "maxval 10000000000")])
def test_randint_refuses_static_bounds_it_would_clip_to_another_range(lo, hi, dtype, bad):
    with pytest.raises(OverflowError, match=f"randint: {bad} cannot be sampled exactly as"):
        hf.random.randint(KEY, (3,), lo, hi, dtype)
    with pytest.raises(OverflowError, match=f"randint: {bad} cannot be sampled exactly"):
        hf.jit(lambda k: hf.random.randint(k, (3,), lo, hi, dtype)).lower(KEY)


@pytest.mark.parametrize("lo,hi,dtype", [(0, 1000, np.uint8), (-5, 256, np.uint8), (0, 2 ** 31 - 1, np.int32),
                                         (-2 ** 31, 2 ** 31 - 1, np.int32)])
def test_randint_bounds_jax_clips_still_match_jax(lo, hi, dtype):
    np.testing.assert_array_equal(hf.random.randint(KEY, (8,), lo, hi, dtype),
                                  jax.random.randint(jax.random.PRNGKey(0), (8,), lo, hi, dtype))


# ---------------------------------------------------------------- lax: scan sizes, branch scalars

def test_scan_names_every_leading_size_as_jax():
    def scan_of(a, b):
        return lax.scan(lambda c, x: (c, x), 0.0, (a, b, a))
    with pytest.raises(ValueError, match=r"scan got values with different leading axis sizes: 10, 5, 10\.$"):
        hf.jit(scan_of)(np.zeros(10, np.float32), np.zeros(5, np.float32))
    with pytest.raises(ValueError, match=r"scan got `length` argument of 4 which disagrees with leading axis sizes "
                                         r"\[4, 5, 4\]"):
        hf.jit(lambda a, b: lax.scan(lambda c, x: (c, x), 0.0, (a, b, a), length=4))(
            np.zeros(4, np.float32), np.zeros(5, np.float32))


def test_python_scalars_from_branches_are_jax_weak_defaults():
    p = np.bool_(True)
    assert hf.jit(lambda p: lax.cond(p, lambda: 1.0, lambda: 2.0))(p).dtype == np.float32
    assert hf.jit(lambda i: lax.switch(i, [lambda: 1, lambda: 2]))(np.int32(1)).dtype == np.int32
    assert hf.jit(lambda p: lax.cond(p, lambda: 1j, lambda: 2j))(p).dtype == np.complex64
    assert hf.jit(lambda p, x: lax.cond(p, lambda: 1.0, lambda: x))(p, np.float32(3)).dtype == np.float32
    with pytest.raises(TypeError, match=r"cond: branch 0 and 1 outputs must have identical types, got output 0 of "
                                        r"type float32\[\] in branch 0 and float16\[\] in branch 1"):
        hf.jit(lambda p, x: lax.cond(p, lambda: 1.0, lambda: x))(p, np.float16(3))
