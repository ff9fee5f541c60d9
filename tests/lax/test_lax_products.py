"""hloforge.lax's products (frontend/lax/products.py) against jax.lax on the same operands: the
result dtypes of mixed and preferred element types, the ops they lower to, and the values."""
import jax
import ml_dtypes
import numpy as np
import pytest

import hloforge as hf
import hloforge.lax as L

BF16 = ml_dtypes.bfloat16
DN = (((1,), (0,)), ((), ()))

# (lhs dtype, rhs dtype, preferred_element_type): jax's accepted combinations
PAIRS = [(BF16, BF16, np.float32), (np.int8, np.int8, np.int32), (np.int8, np.int8, np.float32),
         (np.float32, np.float32, BF16), (np.float16, np.float16, None), (BF16, np.float32, None),
         (BF16, np.float32, np.float32), (np.int8, np.float32, None), (np.float16, BF16, None),
         (np.uint8, np.int8, None), (np.complex64, np.float32, None)]


def _operands(a, b):
    rng = np.random.default_rng(0)
    x = rng.integers(-8, 9, (3, 5)).astype(a)
    y = rng.integers(-8, 9, (5, 2)).astype(b)
    return x, y


@pytest.mark.parametrize("a, b, preferred", PAIRS, ids=lambda d: getattr(np.dtype(d), "name", "none") if d else "none")
def test_dot_general_dtypes_ops_and_values_match_jax(a, b, preferred):
    x, y = _operands(a, b)
    mine = hf.jit(lambda x, y: L.dot_general(x, y, DN, preferred_element_type=preferred))
    theirs = jax.jit(lambda x, y: jax.lax.dot_general(x, y, DN, preferred_element_type=preferred))
    got, want = np.asarray(mine(x, y)), np.asarray(theirs(x, y))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    text = mine.lower(x, y).text
    converts = "stablehlo.convert" in text
    assert converts == (np.dtype(a) != np.dtype(b)), text  # same dtypes go in as they are, as in jax


def test_same_dtype_operands_accumulate_into_the_preferred_type():
    x = np.full((1, 64), 100, np.int8)
    y = np.full((64, 1), 100, np.int8)
    m = hf.trace(lambda x, y: L.dot(x, y, preferred_element_type=np.int32), x, y)
    assert "(tensor<1x64xi8>, tensor<64x1xi8>) -> tensor<1x1xi32>" in m.text, m.text
    np.testing.assert_array_equal(np.asarray(m.compile()(x, y)), [[640000]])


@pytest.mark.parametrize("x, y, kw, match", [
    (np.ones((2, 3), np.int32), np.ones((3, 2), np.int32), {"preferred_element_type": np.int8},
     r"`preferred_element_type` must not be narrower than the original type, got preferred_element_type of int8 "
     r"for result type of int32"),
])
def test_dot_general_errors_as_jax(x, y, kw, match):
    with pytest.raises(TypeError, match=match):
        hf.jit(lambda x, y: L.dot_general(x, y, DN, **kw))(x, y)
    with pytest.raises(TypeError):
        jax.jit(lambda x, y: jax.lax.dot_general(x, y, DN, **kw))(x, y)
