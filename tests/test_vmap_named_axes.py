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
