"""fft-truncate: partial DFTs against float64 numpy, and the cost model that decides."""
from __future__ import annotations

import jax
import numpy as np
import pytest
from helpers import assert_close, random

import hloforge as hf
from hloforge import ops
from hloforge.passes import spectral, spectral_dft

F32, F64, C64, C128 = np.float32, np.float64, np.complex64, np.complex128
NEVER = spectral.CostModel("never", dict(spectral.CPU.fft_ns), flop_ns=1e9, byte_ns=0.0)
ALWAYS = spectral.CostModel("always", dict(spectral.CPU.fft_ns), flop_ns=0.0, byte_ns=0.0)


def _numpy_spectral_conv(x, w, modes):
    """The FNO spectral convolution in float64 numpy (rfftn, corners, mix, zero-fill, irfftn)."""
    grid = x.shape[2:]
    z = np.fft.rfftn(x.astype(F64), axes=(2, 3))
    m0, m1 = modes
    out = np.zeros((x.shape[0], w.shape[2], grid[0], grid[1] // 2 + 1), C128)
    for k, rows in enumerate((slice(0, m0), slice(grid[0] - m0, grid[0]))):
        out[:, :, rows, :m1] = np.einsum("bixy,ioxy->boxy", z[:, :, rows, :m1], w[k].astype(C128))
    return np.fft.irfftn(out, s=grid, axes=(2, 3))


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("model", ["cpu", "gpu"])
def test_fno_spectral_conv_matches_float64_numpy(dtype, model):
    layer = hf.nn.SpectralConv(2, (3, 4), 3, 2)
    w = layer.init(seed=1, dtype=C64 if dtype == F32 else C128)
    x = random((2, 3, 10, 12), dtype, seed=2)
    m = hf.trace(layer, hf.ShapeDtype(x.shape, dtype), hf.ShapeDtype(w.shape, w.dtype))
    report = m.optimize(cost_model=model)
    assert report.fired["truncated_inverse_fft"] == 1 and report.fired["truncated_forward_fft"] == 1
    assert "stablehlo.fft" not in m.op_counts(), str(m)
    got = np.asarray(m.compile()(x, w))
    assert_close(got, _numpy_spectral_conv(x, w, (3, 4)).astype(dtype))


def test_irfft_of_non_hermitian_bins_keeps_numpys_semantics():
    """Only the real parts of the DC and Nyquist bins count, as for numpy's (and XLA's) irfft."""
    y = random((3, 5), C64, seed=4)
    m = hf.trace(lambda y: ops.fft(ops.pad(y, 0j, (0, 0), (0, 4)), "IRFFT", (16,)), hf.ShapeDtype(y.shape, C64))
    m.optimize(cost_model=ALWAYS)
    assert "stablehlo.fft" not in m.op_counts()
    want = np.fft.irfft(np.pad(y.astype(C128), [(0, 0), (0, 4)]), n=16)
    assert_close(np.asarray(m.compile()(y)), want.astype(F32))
    y8 = random((9,), C64, seed=5)  # the Nyquist bin itself is kept
    m = hf.trace(lambda y: ops.fft(ops.pad(y, 0j, (2,), (0,), (0,)), "IRFFT", (20,)), hf.ShapeDtype(y8.shape, C64))
    m.optimize(cost_model=ALWAYS)
    want = np.fft.irfft(np.pad(y8.astype(C128), [(2, 0)]), n=20)
    assert_close(np.asarray(m.compile()(y8)), want.astype(F32))


def _fno_like(x):
    z = ops.fft(x, "RFFT", (32, 32))
    low, high = ops.slice(z, (0, 0, 0), (4, 6, 6)), ops.slice(z, (0, 26, 0), (4, 32, 6))
    gap = ops.constant(np.zeros((4, 20, 6), C64))
    y = ops.pad(ops.concatenate([low * (2 + 1j), gap, high], 1), 0j, (0, 0, 0), (0, 0, 11))
    return ops.fft(y, "IRFFT", (32, 32))


def test_the_cost_model_decides():
    spec = hf.ShapeDtype((4, 32, 32), F32)
    for model, fired in [(NEVER, 0), (spectral.KEEP_FFTS, 0), (ALWAYS, 2), ("cpu", 2), ("gpu", 2)]:
        m = hf.trace(_fno_like, spec)
        report = m.optimize(cost_model=model)
        assert sum(report.fired[p] for p in spectral.PATTERNS) == fired, (model, report)
    x = random((4, 32, 32), F32, seed=6)
    m = hf.trace(_fno_like, spec)
    want = np.asarray(m.compile()(x))
    m.optimize(cost_model="cpu")
    assert_close(np.asarray(m.compile()(x)), want)


def test_config_cost_model_is_the_default(monkeypatch):
    monkeypatch.setattr(hf.config, "cost_model", NEVER)
    m = hf.trace(_fno_like, hf.ShapeDtype((4, 32, 32), F32))
    assert not any(m.optimize().fired[p] for p in spectral.PATTERNS)
    m = hf.trace(_fno_like, hf.ShapeDtype((4, 32, 32), F32))
    assert m.optimize(cost_model="cpu").fired["truncated_inverse_fft"] == 1  # the argument wins


def test_finite_math_false_skips_fft_truncate():
    m = hf.trace(_fno_like, hf.ShapeDtype((4, 32, 32), F32))
    report = m.optimize(finite_math=False, cost_model=ALWAYS)
    assert "fft-truncate" in report.skipped and m.op_counts()["stablehlo.fft"] == 2


def test_gpu_model_favours_matmuls_more_than_cpu():
    """A 4096-point rfft keeping 36 modes: the matmul only pays off on the GPU model."""
    lengths, kept = (4096,), 36
    for model, wanted in [(spectral.CPU, False), (spectral.GPU, True)]:
        fft = model.fft_cost("RFFT", 64, lengths)
        dft = model.dft_cost(spectral_dft.flops([64, 4096], False, [(1, 4096, kept, True)]))
        assert model.prefers_partial_dft(fft, dft) == wanted, model.name


def test_cost_model_errors():
    with pytest.raises(ValueError, match="fft_ns needs exactly the keys FFT, IFFT, RFFT, IRFFT, got \\['FFT'\\]"):
        spectral.CostModel("bad", {"FFT": 1.0}, 0.1, 0.1)
    with pytest.raises(ValueError, match="flop_ns must be a number >= 0, got -1"):
        spectral.CostModel("bad", dict(spectral.CPU.fft_ns), -1, 0.1)
    with pytest.raises(ValueError, match="cost_model must be None, 'cpu', 'gpu', 'tpu', 'keep-ffts' or a .*CostModel, "
                                         "got 'npu'"):
        hf.trace(lambda x: x, hf.ShapeDtype((2,), F32)).optimize(cost_model="npu")
    with pytest.raises(ValueError, match="config.cost_model must be None, 'cpu', 'gpu', 'tpu', 'keep-ffts' or .*, got 3"):
        hf.config.cost_model = 3


def _dft_precisions(module) -> list:
    """The precision attribute of each dot_general in ``module``'s text."""
    return [line.split("precision = [")[1].split(",")[0] for line in str(module).splitlines()
            if "stablehlo.dot_general" in line]


@pytest.mark.parametrize("precision", ["highest", "high", "DEFAULT"])
def test_dft_precision_sets_the_partial_dfts_contractions(precision):
    """``optimize(dft_precision=...)`` is the precision of every contraction of a partial DFT; XLA:CPU
    computes f32 dots in f32 whatever is asked, so the bits are those of "highest"."""
    x = random((4, 32, 32), F32, seed=3)
    m = hf.trace(_fno_like, hf.ShapeDtype(x.shape, F32))
    want = np.asarray(m.compile(device="cpu")(x))
    highest = m.clone()
    highest.optimize()
    m.optimize(dft_precision=precision)
    assert "stablehlo.fft" not in m.op_counts()
    assert _dft_precisions(m) == [precision.upper()] * 4, str(m)
    got = np.asarray(m.compile(device="cpu")(x))
    assert_close(got, want)
    np.testing.assert_array_equal(got, np.asarray(highest.compile(device="cpu")(x)))


def test_config_dft_precision_is_the_default(monkeypatch):
    """hf.config.dft_precision (HLOFORGE_DFT_PRECISION) is what optimize(), hf.jit and hf.optimize use
    when no dft_precision is given; it is part of the Target, and so of the pipeline entry's key."""
    from hloforge.runtime import compiler
    from hloforge.runtime.settings import Config
    from hloforge.runtime.targets import resolve_target
    traced = hf.trace(_fno_like, hf.ShapeDtype((4, 32, 32), F32))
    key = compiler.pipeline_key(traced, resolve_target("cpu"))
    monkeypatch.setattr(hf.config, "dft_precision", "High")
    assert hf.config.dft_precision == "high" and resolve_target("cpu").dft_precision == "high"
    assert compiler.pipeline_key(traced, resolve_target("cpu")) != key
    m = traced.clone()
    m.optimize()
    assert _dft_precisions(m) == ["HIGH"] * 4
    m = traced.clone()
    m.optimize(dft_precision="highest")  # the argument wins
    assert _dft_precisions(m) == ["HIGHEST"] * 4
    assert Config({"HLOFORGE_DFT_PRECISION": "DEFAULT"}).dft_precision == "default"
    with pytest.raises(ValueError, match="HLOFORGE_DFT_PRECISION must be one of \\['highest', 'high', 'default'\\], "
                                         "got 'bf16'"):
        Config({"HLOFORGE_DFT_PRECISION": "bf16"})


def test_dft_precision_errors():
    m = hf.trace(_fno_like, hf.ShapeDtype((4, 32, 32), F32))
    with pytest.raises(ValueError, match="dft_precision must be one of \\['highest', 'high', 'default'\\], got 'bf16'"):
        m.optimize(dft_precision="bf16")
    with pytest.raises(ValueError, match="Module.optimize: dft_precision must be one of .*, got 3"):
        m.optimize(dft_precision=3)
    with pytest.raises(ValueError, match="config.dft_precision must be one of \\['highest', 'high', 'default'\\], "
                                         "got 'low'"):
        hf.config.dft_precision = "low"
    assert "stablehlo.fft" in m.op_counts()  # (nothing ran)


def test_keep_ffts_by_name(monkeypatch):
    x = hf.ShapeDtype((4, 32, 32), F32)
    truncated = hf.trace(_fno_like, x)
    truncated.optimize()
    kept = hf.trace(_fno_like, x)
    kept.optimize(cost_model="keep-ffts")
    assert "stablehlo.fft" not in truncated.op_counts() and kept.op_counts()["stablehlo.fft"] == 2
    monkeypatch.setattr(hf.config, "cost_model", "keep-ffts")
    m = hf.trace(_fno_like, x)
    m.optimize()
    assert m.op_counts()["stablehlo.fft"] == 2


def test_partial_dfts_mark_the_module_and_compile_without_ynnpack_fusions():
    from hloforge.passes.spectral import PARTIAL_DFT_ATTR
    from hloforge.runtime import pjrt
    x = hf.ShapeDtype((4, 32, 32), F32)
    m = hf.trace(_fno_like, x)
    want = np.asarray(m.compile()(random((4, 32, 32), F32, seed=3)))
    m.optimize()
    assert PARTIAL_DFT_ATTR in m.mlir.operation.attributes
    exe = m.compile()
    assert "__ynn_fusion" not in exe._loaded.hlo_modules()[0].to_string()
    assert_close(np.asarray(exe(random((4, 32, 32), F32, seed=3))), want)
    kept = hf.trace(_fno_like, x)
    kept.optimize(cost_model="keep-ffts")
    assert PARTIAL_DFT_ATTR not in kept.mlir.operation.attributes
    cpu = jax.devices("cpu")[:1]
    with_dfts = dict(pjrt.compile_options(cpu, partial_dfts=True).env_option_overrides)
    assert with_dfts["xla_cpu_experimental_ynn_fusion_type"] == ""
    assert "xla_cpu_experimental_ynn_fusion_type" not in dict(pjrt.compile_options(cpu).env_option_overrides)


def test_partial_dft_of_fft_says_why_in_words():
    def split_along_the_last_axis(x):  # (rfft2's leading transformed axis is 1)
        z = ops.fft(x, "RFFT", (6, 8))
        pairs = ops.concatenate([ops.real(z), ops.imag(z)], 2)
        return ops.dot_general(pairs, ops.constant(np.ones((10, 7), F32)), (), (), (2,), (0,))
    m = hf.trace(split_along_the_last_axis, hf.ShapeDtype((2, 6, 8), F32))
    text = m.optimize("pattern:partial_dft_of_fft", debug=True).explain()
    assert ("partial_dft_of_fft: declined 1 time: the concatenate's axis is not the FFT's leading transformed "
            "axis [1]") in text


def test_jit_uses_the_cost_model_of_its_device(monkeypatch):
    from hloforge import target
    from hloforge.runtime.targets import resolve_target
    monkeypatch.setattr(hf.config, "cost_model", None)
    assert resolve_target("cpu").cost_model is target.CPU  # (the device's own model)
    seen = []
    original = hf.Module.optimize

    def spy(self, *args, **kwargs):
        seen.append(kwargs.get("cost_model"))
        return original(self, *args, **kwargs)
    monkeypatch.setattr(hf.Module, "optimize", spy)
    monkeypatch.setattr(hf.config, "first_call", "steady")
    monkeypatch.setattr(hf.config, "cost_model", "keep-ffts")  # an explicit hf.config.cost_model wins
    assert resolve_target("cpu").cost_model is target.KEEP_FFTS
    x = random((4, 32, 32), F32, seed=7)
    hf.jit(_fno_like, device="cpu")(x)
    assert seen and all(model is target.KEEP_FFTS for model in seen)
    monkeypatch.setattr(hf.config, "cost_model", None)
    assert_close(np.asarray(hf.jit(_fno_like, device="cpu")(x)), np.asarray(hf.jit(_fno_like, optimize=False)(x)))
