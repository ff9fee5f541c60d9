"""hf.vmap's axis_name and hloforge.lax's named-axis collectives (frontend/lax/parallel.py,
frontend/batching/axes.py) against jax.vmap with jax.lax's."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
from hloforge import lax as hl
from hloforge import numpy as hnp

from helpers import assert_close

RNG = np.random.default_rng(11)
XS = RNG.standard_normal((4, 3)).astype(np.float32)
X3 = RNG.standard_normal((2, 4, 3)).astype(np.float32)


def both(name):
    """(hloforge.lax's function, jax.lax's)"""
    return getattr(hl, name), getattr(jax.lax, name)


FORWARD = {
    "psum": lambda lax, v: v / lax.psum(v, "i"),
    "pmean": lambda lax, v: v - lax.pmean(v, "i"),
    "pmax_pmin": lambda lax, v: lax.pmax(v, "i") * 2 + lax.pmin(v, "i"),
    "all_gather": lambda lax, v: lax.all_gather(v, "i"),
    "all_gather_axis": lambda lax, v: lax.all_gather(v * 2, "i", axis=1),
    "all_gather_tiled": lambda lax, v: lax.all_gather(v[None], "i", axis=1, tiled=True),
    # (.astype: hloforge.numpy promotes float32 * int32 to float64 as numpy does, jax to float32)
    "axis_index": lambda lax, v: v * lax.axis_index("i").astype(np.float32),
    "psum_of_a_python_number": lambda lax, v: v * lax.psum(1, "i"),  # (a Python int, as in jax)
    "psum_of_an_unbatched_value": lambda lax, v: lax.psum(v * 0 + 2.0, "i") + v,
    "pytree": lambda lax, v: lax.psum({"a": v, "b": (v * 2,)}, "i")["b"][0],
}


@pytest.mark.parametrize("name", FORWARD)
def test_collectives_match_jax(name):
    f = FORWARD[name]
    want = jax.vmap(lambda v: f(jax.lax, v), axis_name="i")(XS)
    assert_close(hf.vmap(lambda v: f(hl, v), axis_name="i")(XS), want)
    assert_close(hf.jit(hf.vmap(lambda v: f(hl, v), axis_name="i"))(XS), want)


def test_a_reduction_is_unbatched_so_out_axes_may_be_none():
    got = hf.vmap(lambda v: hl.psum(v, "i"), axis_name="i", out_axes=None)(XS)
    assert_close(got, XS.sum(0))
    assert_close(hf.vmap(lambda v: hl.axis_size("i") + v, axis_name="i")(XS), XS + 4)


GRADS = {
    "psum": lambda np_, lax, v: np_.sum(np_.sin(v) / lax.psum(v, "i")),
    "pmean": lambda np_, lax, v: np_.sum(lax.pmean(v ** 2, "i") * v),
    "all_gather": lambda np_, lax, v: np_.sum(lax.all_gather(v, "i") ** 2 * lax.axis_index("i").astype(np.float32)),
    "all_gather_tiled": lambda np_, lax, v: np_.sum(lax.all_gather(v, "i", tiled=True) ** 3),
}


@pytest.mark.parametrize("name", GRADS)
def test_grad_inside_and_outside_the_vmap(name):
    f = GRADS[name]
    hf_f, jax_f = (lambda v: f(hnp, hl, v)), (lambda v: f(jnp, jax.lax, v))
    assert_close(hf.vmap(hf.grad(hf_f), axis_name="i")(XS), jax.vmap(jax.grad(jax_f), axis_name="i")(XS), rtol=1e-5)
    assert_close(hf.grad(lambda x: hnp.sum(hf.vmap(hf_f, axis_name="i")(x)))(XS),
                 jax.grad(lambda x: jnp.sum(jax.vmap(jax_f, axis_name="i")(x)))(XS), rtol=1e-5)
    tangent = np.ones_like(XS)
    assert_close(hf.jvp(hf.vmap(hf_f, axis_name="i"), (XS,), (tangent,))[1],
                 jax.jvp(jax.vmap(jax_f, axis_name="i"), (XS,), (tangent,))[1], rtol=1e-5)


EMPTY = {**{f"forward_{k}": (lambda f: lambda lib, lax, v: f(lax, v))(f) for k, f in FORWARD.items()},
         **{f"grad_{k}": (lambda f: lambda lib, lax, v: (hf.grad if lax is hl else jax.grad)(
             lambda w: f(lib, lax, w))(v))(f) for k, f in GRADS.items()
            if k != "all_gather_tiled"},  # (jax 0.10.2 divides by the axis size there)
         "ppermute": lambda lib, lax, v: lax.ppermute(v, "i", [])}


@pytest.mark.parametrize("name", EMPTY)
def test_an_empty_axis_gives_jax_shapes(name):
    """A batch of size 0: all_gather has no example to gather (it concatenated none), ppermute no
    table to read, the gradients no block to take; jax's empty results."""
    f, x = EMPTY[name], XS[:0]
    want = jax.vmap(lambda v: f(jnp, jax.lax, v), axis_name="i")(x)
    got = hf.vmap(lambda v: f(hnp, hl, v), axis_name="i")(x)
    assert (np.asarray(got).shape, np.asarray(got).dtype) == (want.shape, want.dtype)


def test_nested_axes_and_tuples_of_names():
    def f(lax, v):
        index = lax.axis_index("i").astype(np.float32)
        return v / lax.psum(v, "i") + lax.psum(v, "j") + lax.all_gather(v, "j").sum() * index

    def over_both(lax, vmap, g):
        return vmap(vmap(lambda v: g(lax, v), axis_name="j"), axis_name="i")

    assert_close(over_both(hl, hf.vmap, f)(X3), over_both(jax.lax, jax.vmap, f)(X3), rtol=1e-5)
    g = lambda lax, v: lax.psum(v, ("i", "j")) + lax.pmax(v, "i")  # noqa: E731
    assert_close(over_both(hl, hf.vmap, g)(X3), over_both(jax.lax, jax.vmap, g)(X3))


def test_a_vmap_over_a_module_and_an_unused_axis_name():
    m = hf.trace(hf.vmap(lambda v: hnp.sin(v) * 2.0, axis_name="unused"), XS)
    assert "stablehlo.iota" not in m.text  # (the hidden axis index is erased when nothing reads it)
    assert_close(m.compile()(XS), np.sin(XS) * 2.0)


def test_errors():
    with pytest.raises(NameError, match=r"unbound axis name: k\. The following axis names .* \['i'\]"):
        hf.vmap(lambda v: hl.psum(v, "k"), axis_name="i")(XS)
    with pytest.raises(NameError, match=r"unbound axis name: i"):
        hf.jit(lambda v: hl.psum(v, "i"))(XS)
    with pytest.raises(NotImplementedError, match=r"hloforge.lax.pmax: not differentiable"):
        hf.vmap(hf.grad(lambda v: hnp.sum(hl.pmax(v, "i"))), axis_name="i")(XS)
    with pytest.raises(NotImplementedError, match=r"axis_index_groups=\[\[0, 1\]\] is not supported"):
        hf.vmap(lambda v: hl.psum(v, "i", axis_index_groups=[[0, 1]]), axis_name="i")(XS)
    with pytest.raises(ValueError, match=r"all_gather: axis 2 is out of range for an operand of rank 1"):
        hf.vmap(lambda v: hl.all_gather(v, "i", axis=2), axis_name="i")(XS)
    with pytest.raises(TypeError, match=r"axis_name must be hashable, got \['i'\]"):
        hf.vmap(lambda v: v, axis_name=["i"])
    with pytest.raises(NotImplementedError, match=r"spmd_axis_name='b'"):
        hf.vmap(lambda v: v, spmd_axis_name="b")


N4 = RNG.standard_normal((4, 4, 3)).astype(np.float32)
EXCHANGES = {
    "ppermute": lambda lax, v: lax.ppermute(v, "i", [(i, (i + 1) % 4) for i in range(4)]),
    "pshuffle": lambda lax, v: lax.pshuffle(v, "i", [2, 0, 3, 1]),
    "pbroadcast": lambda lax, v: lax.pbroadcast(v, "i", 1),
    "psum_scatter": lambda lax, v: lax.psum_scatter(v, "i"),
    "psum_scatter_tiled": lambda lax, v: lax.psum_scatter(v, "i", scatter_dimension=0, tiled=True),
    "all_to_all": lambda lax, v: lax.all_to_all(v, "i", 0, 1),
    "all_to_all_tiled": lambda lax, v: lax.all_to_all(v, "i", 0, 1, tiled=True),
    "pswapaxes": lambda lax, v: lax.pswapaxes(v, "i", 0),
}


# (jax 0.10.2's pbroadcast has no working transpose under vmap: its derivatives are checked against
# the same function written with all_gather)
JAX_DERIVATIVES = {"pbroadcast": lambda lax, v: lax.all_gather(v, "i")[1]}


@pytest.mark.parametrize("name", EXCHANGES)
def test_exchanges_match_jax_values_and_gradients(name):
    f = EXCHANGES[name]
    want = jax.vmap(lambda v: f(jax.lax, v), axis_name="i")(N4)
    np.testing.assert_array_equal(np.asarray(hf.vmap(lambda v: f(hl, v), axis_name="i")(N4)), np.asarray(want))
    weights = RNG.standard_normal(want.shape).astype(np.float32)
    g = JAX_DERIVATIVES.get(name, f)

    def loss(lib, vmap, lax, fn):
        return lambda x: lib.sum(vmap(lambda v: fn(lax, v), axis_name="i")(x) * weights)
    assert_close(hf.grad(loss(hnp, hf.vmap, hl, f))(N4), jax.grad(loss(jnp, jax.vmap, jax.lax, g))(N4), rtol=1e-6)
    tangent = RNG.standard_normal(N4.shape).astype(np.float32)
    assert_close(hf.jvp(hf.vmap(lambda v: f(hl, v), axis_name="i"), (N4,), (tangent,))[1],
                 jax.jvp(jax.vmap(lambda v: g(jax.lax, v), axis_name="i"), (N4,), (tangent,))[1], rtol=1e-6)


def test_a_partial_ppermute_gives_zeros_where_nothing_arrives():
    got = hf.vmap(lambda v: hl.ppermute(v, "i", [(0, 2), (3, 1)]), axis_name="i")(XS)  # (jax.vmap wants all)
    want = np.zeros_like(XS)
    want[2], want[1] = XS[0], XS[3]
    np.testing.assert_array_equal(np.asarray(got), want)


def test_exchange_errors_name_the_values():
    with pytest.raises(ValueError, match=r"ppermute: sources and destinations must be unique, got perm=\[\(0, 1\), "
                                         r"\(0, 2\)\]"):
        hf.vmap(lambda v: hl.ppermute(v, "i", [(0, 1), (0, 2)]), axis_name="i")(XS)
    with pytest.raises(ValueError, match=r"ppermute: perm \[\(0, 4\)\] names an example outside range\(4\)"):
        hf.vmap(lambda v: hl.ppermute(v, "i", [(0, 4)]), axis_name="i")(XS)
    with pytest.raises(ValueError, match=r"pshuffle: perm \[0, 0, 1, 2\] is not a permutation of range\(4\)"):
        hf.vmap(lambda v: hl.pshuffle(v, "i", [0, 0, 1, 2]), axis_name="i")(XS)
    with pytest.raises(ValueError, match=r"pbroadcast: source 7 is not an example of the axis \(size 4\)"):
        hf.vmap(lambda v: hl.pbroadcast(v, "i", 7), axis_name="i")(XS)
    with pytest.raises(ValueError, match=r"psum_scatter: dimension 0 of the operand \(shape \(3,\)\) must be the "
                                         r"axis size 4, got 3"):
        hf.vmap(lambda v: hl.psum_scatter(v, "i"), axis_name="i")(XS)
    with pytest.raises(ValueError, match=r"all_to_all: concat_axis=5 is out of range for an operand of rank 2"):
        hf.vmap(lambda v: hl.all_to_all(v, "i", 0, 5), axis_name="i")(N4)
    with pytest.raises(TypeError, match=r"ppermute: perm must be a list of \(source, destination\) pairs, got \[1, 2\]"):
        hf.vmap(lambda v: hl.ppermute(v, "i", [1, 2]), axis_name="i")(XS)
    with pytest.raises(TypeError, match=r"pshuffle: perm must be a list of example indices, got 3"):
        hf.vmap(lambda v: hl.pshuffle(v, "i", 3), axis_name="i")(XS)
    with pytest.raises(NotImplementedError, match=r"ppermute: one axis name at a time, got \('i', 'j'\)"):
        hf.vmap(lambda v: hl.ppermute(v, ("i", "j"), []), axis_name="i")(XS)


def test_exchanges_nest_with_other_axes():
    def f(lax, v):
        return lax.ppermute(v, "j", [(0, 1), (1, 0)]) + lax.pshuffle(v, "i", [1, 0]) * lax.axis_index("j").astype(np.float32)

    def over_both(lax, vmap):
        return vmap(vmap(lambda v: f(lax, v), axis_name="j"), axis_name="i")
    cube = RNG.standard_normal((2, 2, 3)).astype(np.float32)
    assert_close(over_both(hl, hf.vmap)(cube), over_both(jax.lax, jax.vmap)(cube))
