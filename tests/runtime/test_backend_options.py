"""hloforge's XLA options (runtime/pjrt.py ``backend_options``): XLA:CPU's LLVM at level 2 gives the
bits of XLA's default level 3, which jax.jit compiles with (tests/passes/test_fold.py's generated programs
check every dtype: at level 1 a bf16 subnormal constant came out flushed). An option the user's XLA_FLAGS
names is theirs."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
from hloforge import numpy as hnp
from hloforge.runtime import pjrt

RNG = np.random.default_rng(0)


def test_cpu_compiles_at_llvm_level_2(monkeypatch):
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    cpu = jax.devices("cpu")[:1]
    assert dict(pjrt.compile_options(cpu).env_option_overrides) == {"xla_backend_optimization_level": 2}
    assert pjrt.backend_options("cpu", partial_dfts=True) == {
        "xla_backend_optimization_level": 2, "xla_cpu_experimental_ynn_fusion_type": ""}
    assert pjrt.backend_options("gpu") == {}


@pytest.mark.parametrize("flags, names", [
    ("", set()),
    ("--xla_backend_optimization_level=3", {"xla_backend_optimization_level"}),
    ("  -xla_cpu_experimental_ynn_fusion_type=  --xla_dump_to=/tmp/d --xla_cpu_enable_fast_math",
     {"xla_cpu_experimental_ynn_fusion_type", "xla_dump_to", "xla_cpu_enable_fast_math"}),
])
def test_xla_flags_names_are_read_in_each_spelling(flags, names):
    assert pjrt.flag_names(flags) == names


def test_the_users_xla_flags_win_over_hloforges_defaults(monkeypatch):
    flags = "--xla_backend_optimization_level=3 --xla_cpu_experimental_ynn_fusion_type=default"
    assert pjrt.backend_options("cpu", partial_dfts=True, flags=flags) == {}
    assert pjrt.backend_options("cpu", partial_dfts=True, flags="--xla_dump_to=/tmp/d") == {
        "xla_backend_optimization_level": 2, "xla_cpu_experimental_ynn_fusion_type": ""}
    monkeypatch.setenv("XLA_FLAGS", "--xla_backend_optimization_level=3")
    target = hf.runtime.targets.resolve_target("cpu")
    assert target.options(partial_dfts=True) == {"xla_cpu_experimental_ynn_fusion_type": ""}
    assert "--xla_backend_optimization_level=3" in target.environment  # (the caches' keys)
    monkeypatch.setenv("XLA_FLAGS", "")
    assert hf.runtime.targets.resolve_target("cpu").options() == {"xla_backend_optimization_level": 2}


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


def test_bfloat16_subnormals_move_unchanged():
    # (XLA:CPU flushes subnormals in arithmetic; moving data keeps them)
    bf16 = jnp.bfloat16
    x = (np.arange(1, 25, dtype=np.float32).reshape(4, 6) * np.float32(2.0 ** -133)).astype(bf16)
    assert np.all(np.abs(x.astype(np.float32)) < np.finfo(bf16).tiny)

    def movement(xp, x):
        return (xp.transpose(xp.pad(x, ((1, 0), (0, 2))))[::-1], xp.concatenate([x, x[::-1]], axis=1),
                xp.broadcast_to(x[0], (3, 6)))
    got = hf.jit(lambda x: movement(hnp, x), optimize=False)(x)
    want = jax.jit(lambda x: movement(jnp, x))(x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g).view(np.uint16), np.asarray(w).view(np.uint16))
    assert np.count_nonzero(np.asarray(got[1]).view(np.uint16)) == 48


def test_the_cache_key_holds_the_options():
    import dataclasses
    from hloforge.runtime import compiler
    from hloforge.runtime.targets import resolve_target
    cpu = resolve_target("cpu")
    code = "module {}"
    level3 = dataclasses.replace(cpu, xla_options=(("xla_backend_optimization_level", 3),))
    assert compiler._cache_key(code, level3, None) != compiler._cache_key(code, cpu, None)
