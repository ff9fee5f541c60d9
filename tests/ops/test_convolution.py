"""hloforge.ops, convolution family (frontend/ops/convolution.py): ops.convolution's
preferred_element_type is its result type, with no convert (ops.convolution and hloforge.lax's
convolutions against jax.lax on grids of layouts, strides, dilations, paddings and groups, and their
errors: tests/lax/test_conv.py)."""
import numpy as np

import hloforge as hf
from hloforge import ops


def test_ops_convolution_preferred_element_type_is_the_result_type():
    x, w = np.full((1, 1, 4, 4), 100, np.int8), np.full((1, 1, 3, 3), 100, np.int8)
    m = hf.trace(lambda x, w: ops.convolution(x, w, preferred_element_type=np.int32), x, w)
    assert "convert" not in m.text and "-> tensor<1x1x2x2xi32>" in m.text, m.text
    np.testing.assert_array_equal(np.asarray(m.compile()(x, w)), np.full((1, 1, 2, 2), 90000, np.int32))
