"""Batching rules of the elementwise family (frontend/batching/elementwise.py: every op of
frontend/ops/elementwise.py and chlo_math.py) against a loop over the examples: each dtype's ops in
one program, operands batched at any axis or not at all (hypothesis over shapes and axes); and
against jax.vmap of the same lax functions, bit for bit.

Against the loop bit for bit for the exactly rounded ops (arithmetic, rounding, comparisons,
integer and bit ops) and to a few ulps for the others: XLA:CPU rounds its transcendental functions
(exp, log, sin, ...) and the CHLO functions it expands (atan, lgamma, ...) differently in its
vector and scalar loops and with the fusion around them, contracts complex products into fused
multiply-adds depending on the operands' layouts, and turns a division by an unbatched
(broadcast) divisor into a multiplication by its reciprocal. jax.vmap's program is the same ops as
hf.vmap's and is rounded the same way (equal bit for bit, below), differing from jax's own loop in
the same places."""
import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hloforge as hf
import hloforge.frontend.batching.elementwise as rules
from hloforge.frontend.registry import OPS, Spec
from batching_helpers import assert_same, loop_reference

B = 3
DTYPES = [np.float32, np.float64, np.int32, np.uint8, np.bool_, np.complex64]


def _accepts(name, dtype) -> bool:
    info = OPS[name]
    spec = Spec((2,), np.dtype(dtype))
    try:
        info.abstract(*[spec] * (1 if "unary" in info.traits else 2))
    except (TypeError, ValueError):
        return False
    return True


FAMILY = {dt: [n for n in rules.FAMILY if _accepts(n, dt)] for dt in DTYPES}
TRANSCENDENTAL = {n for n in rules.FAMILY if n.startswith("chlo.")} - {
    "chlo.is_inf", "chlo.is_pos_inf", "chlo.is_neg_inf", "chlo.next_after"} | {
    f"stablehlo.{n}" for n in ("exponential", "exponential_minus_one", "log", "log_plus_one", "logistic", "sine",
                               "cosine", "tan", "tanh", "power", "atan2", "cbrt", "rsqrt")}


def _sample(dtype, shape, rng):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":  # (small values: shifts and powers stay in range, divisors may be 0)
        return rng.integers(0 if dtype.kind == "u" else -6, 7, shape).astype(dtype)
    x = rng.uniform(-2, 2, shape)
    if dtype.kind == "c":
        x = x + 1j * rng.uniform(-2, 2, shape)
    return x.astype(dtype)


def every_op(dtype):
    """f(x, y): every elementwise op that takes ``dtype``, unary ones on x, binary ones on (x, y)."""
    names = FAMILY[dtype]

    def f(x, y):
        return [OPS[n].builder(x) if "unary" in OPS[n].traits else OPS[n].builder(x, y) for n in names]
    return f


def check_every_op(dtype, x, y, in_axes):
    """hf.vmap of every_op(dtype) equals the loop over the examples (see the module docstring)."""
    fn = every_op(dtype)
    got, want = hf.vmap(fn, in_axes=in_axes)(x, y), loop_reference(fn, (x, y), in_axes)
    rounded = TRANSCENDENTAL | ({"stablehlo.divide"} if in_axes[1] is None else set())
    if np.dtype(dtype).kind == "c":
        rounded = rounded | {"stablehlo.multiply", "stablehlo.divide"}
    for name, g, w in zip(FAMILY[dtype], got, want):
        assert_same(np.asarray(g), w, exact=name not in rounded)


def _batched(x, axis):
    return x[0] if axis is None else np.moveaxis(x, 0, axis)


def test_every_op_of_the_family_is_checked():
    checked = set().union(*FAMILY.values())
    assert checked == set(rules.FAMILY) and len(rules.FAMILY) >= 57, sorted(set(rules.FAMILY) - checked)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("axes", [(1, None), (2, 1)])
def test_every_op_at_batch_axes(dtype, axes):
    rng = np.random.default_rng(0)
    x, y = _sample(dtype, (B, 2, 4), rng), _sample(dtype, (B, 2, 4), rng)
    check_every_op(dtype, _batched(x, axes[0]), _batched(y, axes[1]), axes)


@settings(max_examples=10, deadline=None)
@given(dtype=st.sampled_from(DTYPES), shape=st.lists(st.integers(1, 3), max_size=3), seed=st.integers(0, 2 ** 16),
       data=st.data())
def test_hypothesis_shapes_and_axes(dtype, shape, seed, data):
    rank = len(shape)
    x_axis = data.draw(st.sampled_from([None] + list(range(rank + 1))))
    y_axis = data.draw(st.sampled_from(list(range(rank + 1)) + ([] if x_axis is None else [None])))
    rng = np.random.default_rng(seed)
    x, y = _sample(dtype, (B, *shape), rng), _sample(dtype, (B, *shape), rng)
    check_every_op(dtype, _batched(x, x_axis), _batched(y, y_axis), (x_axis, y_axis))


def test_the_batch_dim_stays_where_the_operands_put_it():
    x = np.ones((2, B, 4), np.float32)
    m = hf.trace(hf.vmap(lambda a, b: hf.ops.add(a, b), in_axes=(1, 1), out_axes=1), x, x)
    assert "stablehlo.transpose" not in str(m)


JAX_PAIRS = [(hf.ops.atan2, jax.lax.atan2), (hf.ops.power, jax.lax.pow), (hf.ops.remainder, jax.lax.rem),
             (hf.ops.next_after, jax.lax.nextafter), (hf.ops.maximum, jax.lax.max), (hf.ops.divide, jax.lax.div),
             (hf.ops.atan, jax.lax.atan), (hf.ops.lgamma, jax.lax.lgamma), (hf.ops.exp, jax.lax.exp)]
UNARY_PAIRS = (hf.ops.atan, hf.ops.lgamma, hf.ops.exp)


def _pair(ours, theirs):
    """Each side's f(a, b): the op (unary ones on a) and sin(a)."""
    n = 1 if ours in UNARY_PAIRS else 2
    return (lambda a, b: [ours(*(a, b)[:n]), hf.ops.sin(a)]), (lambda a, b: [theirs(*(a, b)[:n]), jax.lax.sin(a)])


def test_against_jax_vmap_bit_for_bit():
    """Every pair but divide, and the complex product, in one program per side (XLA's per-program
    cost paid once); divide keeps programs of its own: in the bigger one XLA:CPU rounds hf.vmap's
    division by the broadcast divisor otherwise (see the module docstring), and jax.vmap's not."""
    rng = np.random.default_rng(1)
    x, y = _sample(np.float32, (2, 4, B), rng), _sample(np.float32, (2, 4), rng)
    z, w = _sample(np.complex64, (B, 5, 3), rng), _sample(np.complex64, (5, B, 3), rng)
    merged = [_pair(ours, theirs) for ours, theirs in JAX_PAIRS if ours is not hf.ops.divide]
    got = hf.jit(lambda a, b, c, d: [[hf.vmap(f, in_axes=(2, None))(a, b) for f, _ in merged],
                                     hf.vmap(hf.ops.multiply, in_axes=(0, 1))(c, d)])(x, y, z, w)
    want = jax.jit(lambda a, b, c, d: [[jax.vmap(g, in_axes=(2, None))(a, b) for _, g in merged],
                                       jax.vmap(jax.lax.mul, in_axes=(0, 1))(c, d)])(x, y, z, w)
    assert_same(jax.tree_util.tree_map(np.asarray, got), jax.tree_util.tree_map(np.asarray, want))
    ours, theirs = _pair(hf.ops.divide, jax.lax.div)
    assert_same([np.asarray(g) for g in hf.vmap(ours, in_axes=(2, None))(x, y)],
                [np.asarray(v) for v in jax.jit(jax.vmap(theirs, in_axes=(2, None)))(x, y)])
