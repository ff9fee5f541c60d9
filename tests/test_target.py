"""hloforge.target: the device kinds and their cost models, the Target a program is compiled for
(runtime/targets.py), hf.config's defaults, and the names passes and runtime share. CI has no
accelerator: a TPU or GPU is a stand-in Device here, and jax's default backend a monkeypatched name."""
from __future__ import annotations

import dataclasses

import jax
import numpy as np
import pytest

import hloforge as hf
from hloforge import target
from hloforge.passes import run as run_passes, spectral
from hloforge.runtime import compiler, pjrt, targets
from hloforge.runtime.settings import Config


@dataclasses.dataclass(frozen=True)
class FakeClient:
    platform: str
    platform_version: str = "fake 1.0"


@dataclasses.dataclass(frozen=True)
class FakeDevice:
    """Enough of a jax Device for ``resolve_target`` (it compiles nothing)."""
    platform: str
    id: int = 0
    device_kind: str = "fake"
    process_index: int = 0

    @property
    def client(self):
        return FakeClient(self.platform)


def test_resolve_names_and_models():
    assert target.resolve("cpu") is target.CPU and target.resolve("gpu") is target.GPU
    assert target.resolve("tpu") is target.TPU and target.resolve("keep-ffts") is target.KEEP_FFTS
    mine = target.CostModel("mine", dict(target.CPU.fft_ns), flop_ns=1.0, byte_ns=0.0)
    assert target.resolve(mine) is mine
    with pytest.raises(ValueError, match="cost_model must be None, 'cpu', 'gpu', 'tpu', 'keep-ffts' or a "
                                         "hloforge.target.CostModel, got 'npu'"):
        target.resolve("npu")


def test_kinds_of_jax_platforms():
    assert [target.kind_of(p) for p in ("cpu", "cuda", "rocm", "gpu", "tpu")] == ["cpu", "gpu", "gpu", "gpu", "tpu"]
    with pytest.raises(ValueError, match="device kinds \\('cpu', 'gpu', 'tpu'\\); jax's platform 'metal' is none"):
        target.kind_of("metal")


def test_none_follows_hf_config(monkeypatch):
    monkeypatch.setattr(hf.config, "cost_model", None)
    monkeypatch.setattr(hf.config, "device", "gpu")
    assert target.resolve(None) is target.GPU  # (the device's model)
    monkeypatch.setattr(hf.config, "device", "tpu")
    assert target.resolve(None) is target.TPU
    monkeypatch.setattr(hf.config, "cost_model", "keep-ffts")
    assert target.resolve(None) is target.KEEP_FFTS  # (an explicit cost_model wins)
    monkeypatch.setattr(hf.config, "device", "cpu")
    monkeypatch.setattr(hf.config, "cost_model", None)
    assert target.resolve(None) is target.CPU
    Config({"HLOFORGE_DEVICE": "gpu", "HLOFORGE_COST_MODEL": "keep-ffts"})  # (not hf.config: no effect)
    assert target.resolve(None) is target.CPU


def test_the_default_kind_is_jax_default_backend(monkeypatch):
    monkeypatch.setattr(hf.config, "device", None)
    monkeypatch.setattr(hf.config, "cost_model", None)
    assert target.default_kind() == target.kind_of(jax.default_backend())
    monkeypatch.setattr(jax, "default_backend", lambda: "tpu")
    assert target.default_kind() == "tpu" and target.resolve(None) is target.TPU
    monkeypatch.setattr(jax, "default_backend", lambda: "cuda")
    assert target.default_kind() == "gpu" and target.resolve(None) is target.GPU
    monkeypatch.setattr(hf.config, "device", "cpu")  # (a kind set in hf.config wins)
    assert target.default_kind() == "cpu"


def test_setting_errors_name_the_setting():
    with pytest.raises(ValueError, match=r"config.device must be None \(jax's default device\) or one of "
                                         r"\('cpu', 'gpu', 'tpu'\), got 'npu'"):
        hf.config.device = "npu"
    with pytest.raises(ValueError, match="config.cost_model must be None, .* got 'npu'"):
        target.set_defaults("cpu", "npu")
    assert target.resolve(None) is target.resolve(hf.config.cost_model, target.default_kind())


def test_the_pipeline_takes_a_resolved_model():
    m = hf.trace(lambda x: x + 1.0, hf.ShapeDtype((2,), np.float32))
    with pytest.raises(TypeError, match="hloforge.passes.run: cost_model must be a hloforge.target.CostModel or "
                                        "None, got 'gpu'"):
        run_passes(m, cost_model="gpu")
    assert m.optimize(cost_model="gpu").ops_after == m.op_counts()  # (Module.optimize takes names)


def test_spectral_reexports_the_target_names():
    assert (spectral.CostModel, spectral.CPU, spectral.GPU, spectral.KEEP_FFTS, spectral.PARTIAL_DFT_ATTR) == (
        target.CostModel, target.CPU, target.GPU, target.KEEP_FFTS, target.PARTIAL_DFT_ATTR)

# ---------------------------------------------------------------- the Target


def test_cpu_target_is_resolved_once_with_every_platform_fact(monkeypatch):
    monkeypatch.setattr(hf.config, "cost_model", None)
    t = targets.resolve_target("cpu")
    assert t.kind == "cpu" and t.device == hf.devices("cpu")[0] and t.devices == (t.device,)
    assert t.cost_model is target.CPU
    assert t.options() == pjrt.backend_options("cpu") and t.options(True) == pjrt.backend_options("cpu", True)
    assert t.callback_target == "xla_ffi_python_cpu_callback"
    assert t.environment == pjrt.environment((t.device,))
    assert targets.resolve_target(t) is t  # (a Target passes through: it is resolved once)
    assert targets.resolve_target(t.device, "keep-ffts").cost_model is target.KEEP_FFTS


@pytest.mark.parametrize("platform, kind, model, callback", [
    ("tpu", "tpu", target.TPU, None), ("cuda", "gpu", target.GPU, "xla_ffi_python_gpu_callback")])
def test_accelerator_targets(monkeypatch, platform, kind, model, callback):
    monkeypatch.setattr(hf.config, "cost_model", None)
    t = targets.resolve_target(devices=(FakeDevice(platform),))
    assert (t.kind, t.cost_model, t.callback_target, t.options()) == (kind, model, callback, {})
    assert platform in t.environment and "fake 1.0" in t.environment
    monkeypatch.setattr(hf.config, "cost_model", "cpu")  # (hf.config.cost_model wins over the kind's)
    assert targets.resolve_target(devices=(FakeDevice(platform),)).cost_model is target.CPU


def test_cache_keys_hold_the_platform(monkeypatch):
    monkeypatch.setattr(hf.config, "cost_model", None)
    cpu, tpu = targets.resolve_target("cpu"), targets.resolve_target(devices=(FakeDevice("tpu"),))
    code = "module {}"
    assert compiler._cache_key(code, cpu, None) != compiler._cache_key(code, tpu, None)
    m = hf.trace(lambda x: x + 1.0, hf.ShapeDtype((2,), np.float32))
    assert compiler.pipeline_key(m, cpu) != compiler.pipeline_key(m, tpu)
    assert compiler.pipeline_key(m, cpu) == compiler.pipeline_key(m, targets.resolve_target("cpu"))


def test_host_callbacks_on_a_tpu_are_refused_in_one_line(monkeypatch):
    from hloforge.runtime import callbacks
    tpu = targets.resolve_target(devices=(FakeDevice("tpu"),))
    with pytest.raises(hf.UnsupportedOnDevice, match=r"^f: host callbacks \(hloforge.debug.print/callback, "
                                                r"hloforge.pure_callback\) are not supported on TPU devices yet"):
        callbacks.compile_with_callbacks("module {}", tpu, "f", [], [])


def test_linalg_on_a_tpu_is_refused_in_one_line(monkeypatch):
    monkeypatch.setattr(hf.config, "device", "tpu")
    with pytest.raises(hf.UnsupportedOnDevice, match="hloforge.lax.linalg: the factorizations .* have no TPU lowering"):
        hf.trace(lambda a: hf.lax.linalg.cholesky(a), hf.ShapeDtype((3, 3), np.float32))
    assert hf.trace(lambda a: hf.lax.linalg.cholesky(a, platform="cpu"), hf.ShapeDtype((3, 3), np.float32))


def test_complex128_on_a_tpu_is_refused_in_one_line():
    tpu = targets.resolve_target(devices=(FakeDevice("tpu"),))
    assert tpu.unsupported_types == ("complex<f64>",) and targets.resolve_target("cpu").unsupported_types == ()
    code = hf.trace(lambda z: z * z, hf.ShapeDtype((2,), np.complex128)).to_text()
    with pytest.raises(hf.UnsupportedOnDevice, match=r"^f: complex<f64> values are not supported on TPU devices \(XLA "
                                                r"aborts on them\); use 32-bit complex numbers there"):
        compiler.load_or_compile(code, tpu, "f")
    assert issubclass(pjrt.UnsupportedCompile, (hf.CompileError, NotImplementedError))  # (what was raised before)
