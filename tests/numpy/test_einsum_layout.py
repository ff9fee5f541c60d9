"""einsum gives dot_general jax's operand order and dimension numbers, so XLA:CPU lays the operands
out as for jax (the FNO mode einsum's complex transposes compile to jax's kernels)."""
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
from hloforge import numpy as hnp

CASES = [("bixy,ioxy->boxy", (8, 32, 12, 12), (32, 32, 12, 12)), ("bix,io->box", (8, 3, 10), (3, 5)),
         ("bqhd,bkhd->bhqk", (2, 5, 3, 4), (2, 6, 3, 4)), ("bhqk,bkhd->bqhd", (2, 3, 5, 6), (2, 6, 3, 4)),
         ("ij,jk->ik", (3, 4), (4, 5)), ("ij,kj->ik", (3, 4), (5, 4)), ("abc,bcd->ad", (2, 3, 4), (3, 4, 5)),
         ("xbi,ioxb->oxb", (2, 3, 4), (4, 5, 2, 3)), ("cab,bca->", (2, 3, 4), (4, 2, 3))]


def _dots(text):
    return [re.sub(r", precision = \[[A-Z, ]*\]", "", line.split("=", 1)[1].split(":")[0]).strip()
            for line in text.splitlines() if "stablehlo.dot_general" in line]


@pytest.mark.parametrize("subscripts,shape_a,shape_b", CASES)
def test_dot_general_as_jax(subscripts, shape_a, shape_b):
    a, b = np.ones(shape_a, np.float32), np.ones(shape_b, np.float32)
    mine = _dots(hf.trace(lambda x, y: hnp.einsum(subscripts, x, y), a, b).text)
    theirs = _dots(jax.jit(lambda x, y: jnp.einsum(subscripts, x, y)).lower(a, b).as_text())
    assert mine == theirs


@pytest.mark.parametrize("subscripts,shape_a,shape_b", CASES)
def test_values(subscripts, shape_a, shape_b):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(shape_a).astype(np.float32), rng.standard_normal(shape_b).astype(np.float32)
    got = np.asarray(hf.jit(lambda x, y: hnp.einsum(subscripts, x, y))(a, b))
    np.testing.assert_allclose(got, np.einsum(subscripts, a, b), rtol=1e-4, atol=1e-4)


def _precisions(text):
    """Each dot_general's precision pair (none written: DEFAULT, as StableHLO reads it)."""
    return [(re.findall(r"precision = \[([A-Z, ]*)\]", line) or ["DEFAULT, DEFAULT"])[0]
            for line in text.splitlines() if "stablehlo.dot_general" in line]


@pytest.mark.parametrize("precision", [None, "highest", jax.lax.Precision.HIGH, ("highest", "default")],
                         ids=["none", "highest", "HIGH", "pair"])
@pytest.mark.parametrize("name", ["einsum", "matmul", "dot", "tensordot", "inner", "vdot"])
def test_precision_reaches_dot_general_as_in_jax(name, precision):
    """jax.numpy's contractions take ``precision``; so do hloforge.numpy's (on a TPU, float32 products
    at None are one bfloat16 pass, so a port that asks for "highest" must get it)."""
    calls = {"einsum": lambda m, a, b, **k: m.einsum("ij,jk->ik", a, b, **k), "matmul": lambda m, a, b, **k: m.matmul(a, b, **k),
             "dot": lambda m, a, b, **k: m.dot(a, b, **k), "tensordot": lambda m, a, b, **k: m.tensordot(a, b, 1, **k),
             "inner": lambda m, a, b, **k: m.inner(a, b.T, **k), "vdot": lambda m, a, b, **k: m.vdot(a, a, **k)}
    a, b = np.ones((3, 4), np.float32), np.ones((4, 5), np.float32)
    mine = hf.trace(lambda x, y: calls[name](hnp, x, y, precision=precision), a, b).text
    theirs = jax.jit(lambda x, y: calls[name](jnp, x, y, precision=precision)).lower(a, b).as_text()
    assert _precisions(mine) == _precisions(theirs)


def test_a_bad_precision_names_the_function():
    with pytest.raises(ValueError, match=r"precision 'max' is not a jax.lax.Precision, one of DEFAULT"):
        hf.trace(lambda x: hnp.einsum("ij,jk->ik", x, x, precision="max"), np.ones((2, 2), np.float32))
    with pytest.raises(ValueError, match=r"hloforge.nn.FNO: precision 'max' is not a jax.lax.Precision"):
        hf.nn.FNO(2, 4, 8, precision="max")
    layer = hf.nn.SpectralConv(1, 4, 3, 3, precision="highest")
    text = hf.trace(layer, np.ones((2, 3, 16), np.float32), layer.init()).text
    assert _precisions(text) == ["HIGHEST, HIGHEST"]
