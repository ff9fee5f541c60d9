"""hloforge.nn against numpy references."""
import math

import numpy as np
import pytest

from hloforge import nn
from helpers import assert_close, random, run

_erf = np.vectorize(math.erf)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=str)
def test_activations(dtype):
    x = random((4, 6), dtype, seed=1)
    out = run(lambda x: (nn.relu(x), nn.gelu(x), nn.gelu(x, approximate=False), nn.softmax(x),
                         nn.softmax(x, axis=0)), x)
    assert_close(out[0], np.maximum(x, 0))
    tanh_form = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    assert_close(out[1], tanh_form.astype(dtype))
    assert_close(out[2], (0.5 * x * (1 + _erf(x / np.sqrt(2)))).astype(dtype), rtol=1e-6 if dtype == np.float32 else 1e-12)
    e = np.exp(x - x.max(-1, keepdims=True))
    assert_close(out[3], e / e.sum(-1, keepdims=True))
    e0 = np.exp(x - x.max(0, keepdims=True))
    assert_close(out[4], e0 / e0.sum(0, keepdims=True))


def test_dense():
    x, w, b = random((5, 3), np.float32, 1), random((3, 4), np.float32, 2), random((4,), np.float32, 3)
    y, y0 = run(lambda x, w, b: (nn.dense(x, w, b), nn.dense(x, w)), x, w, b)
    assert_close(y, x @ w + b)
    assert_close(y0, x @ w)


def test_gelu_rejects_integers():
    import hloforge as hf
    with pytest.raises(TypeError, match="gelu: needs a float tensor, got int32"):
        hf.trace(nn.gelu, np.ones(3, np.int32))


def test_layer_norm():
    x = random((4, 6), np.float32, seed=4)
    s, b = random((6,), np.float32, seed=5), random((6,), np.float32, seed=6)
    y, y0 = run(lambda x, s, b: (nn.layer_norm(x, s, b), nn.layer_norm(x)), x, s, b)
    ref = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    assert_close(y, ref * s + b, rtol=1e-5)
    assert_close(y0, ref, rtol=1e-5)
