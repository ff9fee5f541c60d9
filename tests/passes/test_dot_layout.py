"""dot-layout (passes/dot_layout.py): transpose(dot_general(w, x)) -> a batched dot_general of the
broadcast w that produces the transposed layout itself."""
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
