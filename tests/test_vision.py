"""The benchmark vision models (benchmarks/vision.py) at tiny sizes: hloforge and jax.jit on the
same weights agree."""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
from hloforge import numpy as hnp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import vision  # noqa: E402


def _agree(program, *args, rtol=2e-4):
    got = np.asarray(hf.jit(lambda *a: program(hnp, *a))(*args))
    with jax.default_matmul_precision("highest"):
        want = np.asarray(jax.jit(lambda *a: program(jnp, *a))(*args))
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max())


@pytest.mark.parametrize("depth,bn", [(11, False), (11, True), (16, False), (16, True)], ids=["vgg11", "vgg11_bn", "vgg16", "vgg16_bn"])
def test_vgg(depth, bn):
    rng = np.random.default_rng(depth)
    params = vision.vgg_params(depth, rng, width=1 / 16, image=32, hidden=16, classes=5, bn=bn)
    x = rng.standard_normal((2, 32, 32, 3)).astype(np.float32)
    _agree(lambda xp, x, p: vision.vgg(xp, x, p, depth), x, params)


def test_resnet18():
    rng = np.random.default_rng(18)
    params = vision.resnet18_params(rng, width=1 / 16, classes=5)
    x = rng.standard_normal((2, 32, 32, 3)).astype(np.float32)
    _agree(vision.resnet18, x, params)


def test_vit_tiny():
    rng = np.random.default_rng(3)
    params = vision.vit_tiny_params(rng, image=32, patch=8, dim=24, depth=2, classes=5)
    x = rng.standard_normal((2, 32, 32, 3)).astype(np.float32)
    _agree(lambda xp, x, p: vision.vit_tiny(xp, x, p, patch=8, heads=3), x, params)


def test_parameter_trees_of_jax_arrays_take_the_cpp_dispatch_path():
    params = jax.device_put({"w": np.ones((3, 3), np.float32), "b": [np.zeros(3, np.float32)]})
    x = jax.device_put(np.ones((2, 3), np.float32))
    f = hf.jit(lambda x, p: x @ p["w"] + p["b"][0])
    np.testing.assert_array_equal(np.asarray(f(x, params)), np.full((2, 3), 3, np.float32))
    np.testing.assert_array_equal(np.asarray(f(x, params)), np.full((2, 3), 3, np.float32))  # (the C++ loop now)
    np.testing.assert_array_equal(np.asarray(f(np.ones((2, 3), np.float32), {"w": np.eye(3, dtype=np.float32),
                                                                          "b": [np.ones(3, np.float32)]})),
                                  np.full((2, 3), 2, np.float32))  # (numpy leaves: the Python path)
