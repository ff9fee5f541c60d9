"""hloforge.target: the cost models by name, hf.config's default, and the names passes and runtime share."""
from __future__ import annotations

import numpy as np
import pytest

import hloforge as hf
from hloforge import target
from hloforge.passes import run as run_passes, spectral
from hloforge.runtime.settings import Config


def test_resolve_names_and_models():
    assert target.resolve("cpu") is target.CPU and target.resolve("gpu") is target.GPU
    assert target.resolve("keep-ffts") is target.KEEP_FFTS
    mine = target.CostModel("mine", dict(target.CPU.fft_ns), flop_ns=1.0, byte_ns=0.0)
    assert target.resolve(mine) is mine
    with pytest.raises(ValueError, match="cost_model must be None, 'cpu', 'gpu', 'keep-ffts' or a "
                                         "hloforge.target.CostModel, got 'tpu'"):
        target.resolve("tpu")


def test_none_follows_hf_config(monkeypatch):
    monkeypatch.setattr(hf.config, "cost_model", None)
    monkeypatch.setattr(hf.config, "device", "gpu")
    assert target.resolve(None) is target.GPU  # (the device's model)
    monkeypatch.setattr(hf.config, "cost_model", "keep-ffts")
    assert target.resolve(None) is target.KEEP_FFTS  # (an explicit cost_model wins)
    monkeypatch.setattr(hf.config, "device", "cpu")
    monkeypatch.setattr(hf.config, "cost_model", None)
    assert target.resolve(None) is target.CPU
    Config({"HLOFORGE_DEVICE": "gpu", "HLOFORGE_COST_MODEL": "keep-ffts"})  # (not hf.config: no effect)
    assert target.resolve(None) is target.CPU


def test_setting_errors_name_the_setting():
    with pytest.raises(ValueError, match=r"config.device must be one of \('cpu', 'gpu'\), got 'tpu'"):
        hf.config.device = "tpu"
    with pytest.raises(ValueError, match="config.cost_model must be None, .* got 'tpu'"):
        target.set_defaults("cpu", "tpu")
    assert target.resolve(None) is target.resolve(hf.config.cost_model or hf.config.device)


def test_the_pipeline_takes_a_resolved_model():
    m = hf.trace(lambda x: x + 1.0, hf.ShapeDtype((2,), np.float32))
    with pytest.raises(TypeError, match="hloforge.passes.run: cost_model must be a hloforge.target.CostModel or "
                                        "None, got 'gpu'"):
        run_passes(m, cost_model="gpu")
    assert m.optimize(cost_model="gpu").ops_after == m.op_counts()  # (Module.optimize takes names)


def test_spectral_reexports_the_target_names():
    assert (spectral.CostModel, spectral.CPU, spectral.GPU, spectral.KEEP_FFTS, spectral.PARTIAL_DFT_ATTR) == (
        target.CostModel, target.CPU, target.GPU, target.KEEP_FFTS, target.PARTIAL_DFT_ATTR)
