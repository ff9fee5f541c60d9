"""hloforge's XLA options (runtime/pjrt.py ``backend_options``): XLA:CPU's LLVM at level 1 gives the
bits of XLA's default level, which jax.jit compiles with."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
from hloforge import numpy as hnp
from hloforge.runtime import pjrt

RNG = np.random.default_rng(0)


def test_cpu_compiles_at_llvm_level_1():
    cpu = jax.devices("cpu")[:1]
    assert dict(pjrt.compile_options(cpu).env_option_overrides) == {"xla_backend_optimization_level": 1}
    assert pjrt.backend_options("cpu", partial_dfts=True) == {
        "xla_backend_optimization_level": 1, "xla_cpu_experimental_ynn_fusion_type": ""}
    assert pjrt.backend_options("gpu") == {}


def tanh_chain(xp, x, w):
    for _ in range(8):
        x = xp.tanh(x * w)
    return x


def gelu_erf(xp, x, w):
    return 0.5 * x * (1 + (hf.lax if xp is hnp else jax.lax).erf(x / np.float32(np.sqrt(2)))) + xp.log1p(xp.abs(w))


def softmax_cumsum(xp, x, w):
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return xp.cumsum(e / xp.sum(e, axis=-1, keepdims=True), axis=0) @ w


def scan_sin(xp, x, w):
    lax = hf.lax if xp is hnp else jax.lax
    return lax.fori_loop(0, 50, lambda i, c: xp.sin(c) * np.float32(0.9) + xp.cos(c * w), x)


@pytest.mark.parametrize("program", [tanh_chain, gelu_erf, softmax_cumsum, scan_sin], ids=lambda p: p.__name__)
def test_results_are_jax_jits_bits(program):
    x = RNG.standard_normal((16, 64)).astype(np.float32)
    w = RNG.standard_normal((64, 64) if program is softmax_cumsum else (16, 64)).astype(np.float32)
    got = hf.jit(lambda x, w: program(hnp, x, w), optimize=False)(x, w)
    want = jax.jit(lambda x, w: program(jnp, x, w))(x, w)
    np.testing.assert_array_equal(np.asarray(got).view(np.uint32), np.asarray(want).view(np.uint32))
