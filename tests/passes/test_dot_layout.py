"""dot-layout (passes/dot_layout.py): transpose(dot_general(w, x)) -> a batched dot_general of the
broadcast w that produces the transposed layout itself (flattened over x's trailing free dims), and
f(reshape(a), ...) -> reshape(f(a, ...)) for elementwise f, which carries that reshape to the next product."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hloforge as hf
from helpers import assert_close

F32 = np.float32
RNG = np.random.default_rng(0)


def _module(fn, *args):
    return hf.Module.parse(jax.jit(fn).lower(*args).as_text())


def _counts(module):
    counts = module.op_counts()
    return counts.get("stablehlo.transpose", 0), counts.get("stablehlo.dot_general", 0)


def _fires(fn, *args, **options):
    module = _module(fn, *args)
    report = module.optimize("pattern:batched_dot_layout", **options)
    return report.fired.get("batched_dot_layout", 0), module


# the channel mixings of FNO layers and 1x1 convolutions, in the orders jax lowers them
MIXINGS = {
    "weights_last": (lambda w, x: jnp.einsum("co,bchw->bohw", w, x), (5, 7), (2, 5, 64, 64)),
    "weights_first": (lambda w, x: jnp.einsum("bchw,co->bohw", x, w), (5, 7), (2, 5, 64, 64)),
    "weights_lhs": (lambda w, x: jax.lax.dot_general(w, x, (((0,), (1,)), ((), ()))).transpose(1, 0, 2, 3),
                    (5, 7), (2, 5, 64, 64)),
    "two_batch_dims": (lambda w, x: jnp.einsum("co,abcn->abon", w, x), (4, 3), (2, 3, 4, 4096)),
    "1d": (lambda w, x: jnp.einsum("co,bcn->bon", w, x), (6, 6), (3, 6, 5000)),
}


@pytest.mark.parametrize("name", MIXINGS)
def test_fires_on_a_channel_mixing_and_keeps_its_values(name):
    fn, w_shape, x_shape = MIXINGS[name]
    w, x = RNG.standard_normal(w_shape).astype(F32), RNG.standard_normal(x_shape).astype(F32)
    fired, module = _fires(fn, w, x)
    assert fired == 1
    assert _counts(module) == (0, 1), module.text
    want = np.asarray(jax.jit(fn)(w, x))
    assert_close(np.asarray(module.compile()(w, x)), want, rtol=1e-5)


def test_the_default_pipeline_applies_it_and_hf_optimize_keeps_gradients():
    fn = MIXINGS["weights_last"][0]
    w, x = RNG.standard_normal((5, 7)).astype(F32), RNG.standard_normal((2, 5, 64, 64)).astype(F32)
    module = _module(fn, w, x)
    assert module.optimize().fired.get("batched_dot_layout") == 1
    loss = lambda f: lambda w, x: jnp.sum(jnp.tanh(f(w, x)) ** 2)  # noqa: E731
    got = jax.grad(loss(hf.optimize(fn)), argnums=(0, 1))(w, x)
    want = jax.grad(loss(fn), argnums=(0, 1))(w, x)
    for g, e in zip(got, want):
        assert_close(np.asarray(g), np.asarray(e), rtol=1e-5)


NOT_FIRING = {
    # (fn, w shape, x shape, options, the reason debug=True prints)
    "finite_math off": (MIXINGS["weights_last"][0], (5, 7), (2, 5, 64, 64), {"finite_math": False}, None),
    "another cost model": (MIXINGS["weights_last"][0], (5, 7), (2, 5, 64, 64), {"cost_model": "gpu"},
                           "the cost model is not the CPU's"),
    "another order": (lambda w, x: jnp.einsum("co,bchw->bowh", w, x), (5, 7), (2, 5, 64, 64), {},
                      "the transpose does not move the leading dims"),
    "no dims left per batch": (lambda w, x: jax.lax.dot_general(w, x, (((0,), (1,)), ((), ()))).T, (5, 7), (2, 5), {},
                               "the transpose does not move the leading dims"),
    "few elements per batch": (MIXINGS["weights_last"][0], (5, 7), (2, 5, 32, 32), {},
                               "too few activation elements per batch"),
    "large weights": (lambda w, x: jnp.einsum("cok,bcn->bokn", w, x), (5, 100, 100), (2, 5, 4096), {},
                      "the broadcast weights would be larger than the activation"),
    "batching dims": (lambda w, x: jnp.einsum("bco,bcn->obn", w, x), (2, 5, 7), (2, 5, 70), {},
                      "the dot_general has batching dims"),
}


@pytest.mark.parametrize("case", NOT_FIRING)
def test_does_not_fire(case):
    fn, w_shape, x_shape, options, reason = NOT_FIRING[case]
    w, x = RNG.standard_normal(w_shape).astype(F32), RNG.standard_normal(x_shape).astype(F32)
    module = _module(fn, w, x)
    report = module.optimize("pattern:batched_dot_layout", debug=reason is not None, **options)
    assert not report.fired.get("batched_dot_layout")
    if reason is not None:
        assert reason in report.explain(), report.explain()


def test_a_dot_with_another_use_is_kept():
    def fn(w, x):
        y = jnp.einsum("co,bchw->bhwo", w, x)
        return y.transpose(0, 3, 1, 2), y
    w, x = RNG.standard_normal((5, 7)).astype(F32), RNG.standard_normal((2, 5, 64, 64)).astype(F32)
    fired, module = _fires(fn, w, x)
    assert fired == 0


@settings(max_examples=10, deadline=None)
@given(batch=st.lists(st.integers(1, 3), min_size=1, max_size=2), c=st.integers(1, 6), o=st.integers(1, 6),
       rest=st.lists(st.integers(16, 90), min_size=1, max_size=2), weights_lhs=st.booleans())
def test_hypothesis_mixings_of_any_rank_fire_and_keep_values(batch, c, o, rest, weights_lhs):
    """x: batch dims, c, rest dims; w: (c, o); out: batch dims, o, rest dims, from either operand order."""
    nb, nr = len(batch), len(rest)
    x = RNG.standard_normal((*batch, c, *rest)).astype(F32)
    w = RNG.standard_normal((c, o)).astype(F32)
    if weights_lhs:  # dot(w, x): [o, batch, rest]
        def fn(w, x):
            y = jax.lax.dot_general(w, x, (((0,), (nb,)), ((), ())))
            return y.transpose(*range(1, nb + 1), 0, *range(nb + 1, nb + 1 + nr))
    else:  # dot(x, w): [batch, rest, o]
        def fn(w, x):
            y = jax.lax.dot_general(x, w, (((nb,), (0,)), ((), ())))
            return y.transpose(*range(nb), nb + nr, *range(nb, nb + nr))
    module = _module(fn, w, x)
    report = module.optimize("pattern:batched_dot_layout", debug=True)
    assert report.fired.get("batched_dot_layout", 0) == int(np.prod(rest) >= 4096), report.explain()
    assert_close(np.asarray(module.compile()(w, x)), np.asarray(jax.jit(fn)(w, x)), rtol=1e-5)


# ---------------------------------------------------------------- reshapes below elementwise ops

def _bias_gelu(x, b):
    """What batched_dot_layout leaves after a flattened product: reshape, then a bias and a GELU."""
    y = x.reshape(2, 8, 64, 64) + b.reshape(1, -1, 1, 1)
    return 0.5 * y * (1.0 + jnp.tanh(0.8 * (y + 0.044715 * y ** 3)))


def test_a_reshape_moves_below_a_bias_and_gelu_and_keeps_every_bit():
    x, b = RNG.standard_normal((2, 8, 4096)).astype(F32), RNG.standard_normal(8).astype(F32)
    module = _module(_bias_gelu, x, b)
    want = np.asarray(module.compile()(x, b))
    assert module.optimize("pattern:reshape_below_elementwise").fired["reshape_below_elementwise"] == 10
    lines = [line.strip() for line in module.text.splitlines()]
    last = next(i for i, line in enumerate(lines) if line.startswith("return"))
    assert "stablehlo.reshape" in lines[last - 1], module.text  # the chain computes in 2x8x4096, then reshapes
    assert [line for line in lines if "stablehlo.tanh" in line and "2x8x4096" in line], module.text
    np.testing.assert_array_equal(np.asarray(module.compile()(x, b)), want)


BELOW_NOT_FIRING = {
    # (fn, argument shapes, options, the reason debug=True prints)
    "another cost model": (_bias_gelu, ((2, 8, 4096), (8,)), {"cost_model": "gpu"}, "the cost model is not the CPU's"),
    "a broadcast along the reshaped dims": (lambda x, v: x.reshape(2, 8, 64, 64) + v[:, None], ((2, 8, 4096), (64,)),
                                            {}, "neither a reshape, a splat constant nor a broadcast along"),
    "another array": (lambda x, z: x.reshape(2, 8, 64, 64) * z, ((2, 8, 4096), (2, 8, 64, 64)), {},
                      "neither a reshape, a splat constant nor a broadcast along"),
    "reshapes from two shapes": (lambda x, y: x.reshape(2, 8, 64, 64) - y.reshape(2, 8, 64, 64),
                                 ((2, 8, 4096), (16, 4096)), {}, "the reshapes start from different shapes"),
}


@pytest.mark.parametrize("case", BELOW_NOT_FIRING)
def test_a_reshape_stays_above(case):
    fn, shapes, options, reason = BELOW_NOT_FIRING[case]
    module = _module(fn, *[RNG.standard_normal(s).astype(F32) for s in shapes])
    report = module.optimize("pattern:reshape_below_elementwise", debug=True, **options)
    assert not report.fired.get("reshape_below_elementwise")
    assert reason in report.explain(), report.explain()


def _head(x, w1, b1, w2, b2):
    """An FNO's projection: 1x1 convolutions 32 -> 128 -> 1 channels around a GELU."""
    h = jnp.einsum("bi...,io->bo...", x, w1) + b1.reshape(1, -1, 1, 1)
    h = 0.5 * h * (1.0 + jnp.tanh(0.7978846 * (h + 0.044715 * h ** 3)))
    return jnp.einsum("bi...,io->bo...", h, w2) + b2.reshape(1, -1, 1, 1)


def test_an_fno_projection_overwrites_its_wide_activation_instead_of_keeping_two():
    """Flattened products and the reshapes moved between them let XLA:CPU write the GELU over the 128-channel
    product: half the temporaries (32 MB for jax.jit's program; glibc maps that afresh on every call)."""
    args = [RNG.standard_normal(s).astype(F32) for s in ((8, 32, 64, 64), (32, 128), (128,), (128, 1), (1,))]
    module = _module(_head, *args)
    report = module.optimize()
    assert report.fired["batched_dot_layout"] == 2 and report.fired["reshape_below_elementwise"] >= 10
    assert_close(np.asarray(module.compile()(*args)), np.asarray(jax.jit(_head)(*args)), rtol=1e-5)
    temp = lambda f: f.lower(*args).compile().memory_analysis().temp_size_in_bytes  # noqa: E731
    assert temp(jax.jit(hf.optimize(_head))) <= 0.6 * temp(jax.jit(_head))


def _reshape_pairs(module):
    """Reshapes whose operand is a reshape."""
    reshaped = {line.split(" = ")[0].strip() for line in module.text.splitlines() if "= stablehlo.reshape" in line}
    return [line for line in module.text.splitlines()
            if "= stablehlo.reshape" in line and line.split("stablehlo.reshape ")[1].split()[0] in reshaped]


def test_the_default_pipeline_merges_the_reshape_pairs_it_leaves_between_two_products():
    """[b, c, h*w] -> [b, c, h, w] -> [b, c, h*w] between the projection's products, and the biases'
    [c] -> [1, c, 1, 1] -> [1, c], go in the same run (index-windows' reshape_of_reshape)."""
    args = [RNG.standard_normal(s).astype(F32) for s in ((8, 32, 64, 64), (32, 128), (128,), (128, 1), (1,))]
    module = _module(_head, *args)
    report = module.optimize()
    assert report.fired["reshape_of_reshape"] >= 3
    assert not _reshape_pairs(module), module.text
    assert "dot-layout+pattern:reshape_of_reshape" in [name for name, _, _ in report.passes]
    kept = _module(_head, *args)
    kept.optimize("dot-layout")
    assert _reshape_pairs(kept)  # (what the family alone leaves)
    np.testing.assert_array_equal(np.asarray(module.compile()(*args)), np.asarray(kept.compile()(*args)))


def test_without_finite_math_only_the_exact_merge_runs_after_the_fixpoint():
    x = RNG.standard_normal((2, 8, 64, 64)).astype(F32)
    module = _module(lambda v: (v.reshape(2, 8, 4096) * 2.0).reshape(2, 8 * 4096), x)
    report = module.optimize(finite_math=False)
    assert "dot-layout" in report.skipped and not _reshape_pairs(module)


UNARY = (jnp.tanh, jnp.exp, jnp.negative, jnp.abs, lambda v: v * v)


@settings(max_examples=10, deadline=None)
@given(lead=st.lists(st.integers(1, 3), min_size=1, max_size=2), split=st.sampled_from([(4, 6), (3, 2, 4), (24,)]),
       steps=st.lists(st.tuples(st.integers(0, len(UNARY) - 1), st.sampled_from(["splat", "bias", "none"])),
                      min_size=1, max_size=4))
def test_hypothesis_elementwise_chains_below_a_reshape_keep_every_bit(lead, split, steps):
    """x: lead dims, then 24 elements reshaped to ``split``; a chain of unary ops, splat scales and biases
    along the leading dims."""
    x = RNG.standard_normal((*lead, 24)).astype(F32)
    b = RNG.standard_normal(lead[-1]).astype(F32)

    def fn(x, b):
        y = x.reshape(*lead, *split)
        for unary, other in steps:
            y = UNARY[unary](y)
            if other == "splat":
                y = y * 1.5
            elif other == "bias":
                y = y + b.reshape((1,) * (len(lead) - 1) + (-1,) + (1,) * len(split))
        return y
    module = hf.Module.parse(jax.jit(fn, keep_unused=True).lower(x, b).as_text())  # (b even where no step adds it)
    want = np.asarray(module.compile()(x, b))
    report = module.optimize("pattern:reshape_below_elementwise")
    assert report.fired.get("reshape_below_elementwise", 0) >= (split != (24,))
    np.testing.assert_array_equal(np.asarray(module.compile()(x, b)), want)
