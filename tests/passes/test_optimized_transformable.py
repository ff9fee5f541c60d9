"""After optimize(), Module.vjp, Module.jvp and Module.vmap work on every module they worked on before
(issue 47): the default pipeline runs on jax's lowerings of tests/batching/test_module_vmap.py's corpus
(elementwise, dots, reductions, fft, pad, conv, loops, cond, gather, scatter, sort, cumsum, windows,
LAPACK calls, mixed precision) and the FNO spellings of tests/fno_spellings.py, and the transformed
optimized modules are checked against jax's transformations of the same functions."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
from batching.test_module_vmap import CASES, check_module_vmap
from fno_spellings import SPELLINGS
from helpers import assert_close

RNG = np.random.default_rng(7)


def _optimized(f, examples):
    m = hf.Module.parse(jax.jit(f).lower(*examples).as_text())
    m.optimize()
    return m


def _floating(examples, outs):
    return all(np.issubdtype(np.asarray(x).dtype, np.floating) and np.asarray(x).dtype != jnp.bfloat16
               for x in list(examples) + list(outs))


def _close_all(got, want, tolerance):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_close(g, w, rtol=tolerance, atol=tolerance)


def _leaves(tree):
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(tree)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_of_the_optimized_module(name):
    f, examples, in_axes, out_axes = CASES[name]
    check_module_vmap(f, examples, in_axes, out_axes, module=_optimized(f, examples))


@pytest.mark.parametrize("transform", ["vjp", "jvp"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_vjp_and_jvp_of_the_optimized_module(name, transform):
    """The optimized module's Module.vjp/jvp equals the unoptimized module's (which equals jax's,
    tests/ad), wherever the unoptimized one works."""
    f, examples, _, _ = CASES[name]
    outs = _leaves(jax.jit(f)(*examples))
    if not _floating(examples, outs):
        pytest.skip("integer, bool or bfloat16 values: the vmap test covers this module")
    extra = ([RNG.standard_normal(o.shape).astype(o.dtype) for o in outs] if transform == "vjp" else
             [RNG.standard_normal(np.shape(x)).astype(np.asarray(x).dtype) for x in examples])
    source = hf.Module.parse(jax.jit(f).lower(*examples).as_text())
    try:
        want = [np.asarray(w) for w in getattr(source, transform)().compile()(*examples, *extra)]
    except NotImplementedError as e:  # (LAPACK custom calls: opaque to Module.vjp/jvp, optimized or not)
        pytest.skip(f"Module.{transform} of the unoptimized module raises too: {str(e).splitlines()[0]}")
    got = [np.asarray(g) for g in getattr(_optimized(f, examples), transform)().compile()(*examples, *extra)]
    _close_all(got, want, 2e-5)


# (one spelling of each kind: the whole corpus takes two minutes; tests/passes/test_fno_spellings.py
# checks every spelling's gradient through hf.optimize)
SAMPLED = ["at_set_1d", "channels_last_2d", "dus_2d", "take_rows_2d", "vmapped_1d"]


@pytest.mark.parametrize("name", SAMPLED)
def test_transformations_of_truncated_fno_spellings(name):
    """The FNO spellings, truncated (FFTs -> DFT contractions, a documented change of rounding): their
    vjp, jvp and vmap equal the unoptimized module's within float32 rounding."""
    x, w = SPELLINGS[name].args(0)
    source = hf.Module.parse(jax.jit(SPELLINGS[name].fn).lower(x, w).as_text())
    truncated = source.clone()
    truncated.optimize(cost_model="cpu")
    assert "stablehlo.fft" not in truncated.op_counts()
    y = np.asarray(jax.jit(SPELLINGS[name].fn)(x, w))
    ct = RNG.standard_normal(y.shape).astype(y.dtype)
    tangents = [RNG.standard_normal(a.shape).astype(a.dtype) for a in (x, w)]
    xs = np.stack([x, 2 * x])
    for make, args in (("vjp", (x, w, ct)), ("jvp", (x, w, *tangents)), ("vmap", (xs, w))):
        transform = (lambda m: m.vmap(2, in_axes=(0, None))) if make == "vmap" else (lambda m: getattr(m, make)())
        want = [np.asarray(v) for v in transform(source).compile()(*args)]
        got = [np.asarray(v) for v in transform(truncated).compile()(*args)]
        for g, v in zip(got, want):
            scale = float(np.max(np.abs(v))) or 1.0
            assert float(np.max(np.abs(g - v))) <= 1e-4 * scale, (make, name)
