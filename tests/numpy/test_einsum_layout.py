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
