"""Devices: listing, choosing with device=/hf.config/HLOFORGE_DEVICE (default: jax's default device), and
the one-line error for a kind that is absent."""
import jax
import numpy as np
import pytest

import hloforge as hf
from hloforge.runtime.cli.main import main
from hloforge.runtime.settings import Config
from helpers import assert_close

HAS_GPU = hf.devices()[0].platform != "cpu"
no_gpu_only = pytest.mark.skipif(HAS_GPU, reason="this machine has an accelerator")


def test_devices_are_the_default_backends_as_in_jax():
    assert hf.devices() == jax.devices()  # (on a TPU VM the TPU's only: a mesh over them never mixes in the CPU)
    assert {d.platform for d in hf.devices()} == {jax.devices()[0].platform}
    cpus = hf.devices("cpu")
    assert cpus == jax.devices("cpu") and all(d.platform == "cpu" for d in cpus)


def test_devices_refuses_a_kind_that_is_none_of_them():
    with pytest.raises(ValueError, match=r"hloforge.devices: kind must be None or one of \('cpu', 'gpu', 'tpu'\), "
                                         r"got 'tpux'"):
        hf.devices("tpux")
    with pytest.raises(TypeError, match=r"hloforge.devices: kind must be None or one of .*, got 3"):
        hf.devices(3)


def test_with_nothing_set_hloforge_runs_where_jax_would(monkeypatch):
    monkeypatch.setattr(hf.config, "device", None)
    x = np.arange(3, dtype=np.float32)
    assert hf.jit(lambda a: a + 1.0)(x).devices() == {jax.devices()[0]}
    assert hf.trace(lambda a: a + 1.0, x).compile().device == jax.devices()[0]
    assert Config({}).device is None and Config({"HLOFORGE_DEVICE": " TPU "}).device == "tpu"


@pytest.mark.parametrize("make, committed", [
    (lambda x: jax.device_put(x), False), (lambda x: x, False),
    (lambda x: jax.device_put(x, jax.devices()[0]), True)], ids=["uncommitted", "numpy", "committed"])
def test_results_are_committed_as_jaxs(monkeypatch, make, committed):
    """A result is committed to its device when an argument was (or the jit names a device), as
    jax.jit's; every call alike, the C++ loop's too. (Several devices: tests/runtime/sharding_checks.py.)"""
    monkeypatch.setattr(hf.config, "device", None)
    x = make(np.arange(3, dtype=np.float32))
    f, g = hf.jit(lambda a: a * 2.0), jax.jit(lambda a: a * 2.0)
    for _ in range(3):
        assert f(x).committed == g(x).committed == committed
        assert hf.numpy.sin(x).committed == committed
    assert hf.jit(lambda a: a * 2.0, device=jax.devices()[0])(x).committed


@no_gpu_only
def test_jax_default_backend_decides_the_default(monkeypatch):
    from hloforge.runtime import pjrt
    monkeypatch.setattr(hf.config, "device", None)
    monkeypatch.setattr(pjrt, "_default_backend", lambda: "tpu")  # (as on a TPU VM)
    with pytest.raises(hf.DeviceNotFoundError, match=r"^no TPU found: this process has cpu \(\d+ devices?\); on a "
                                                     r"TPU VM, install jax's TPU support"):
        hf.trace(lambda a: a + 1.0, np.ones(2, np.float32)).compile()


@no_gpu_only
@pytest.mark.parametrize("kind", ["gpu", "tpu"])
def test_an_absent_kind_is_one_line_naming_what_is_present(monkeypatch, kind):
    monkeypatch.setattr(hf.config, "device", kind)
    x = np.ones(2, np.float32)
    for call in (lambda: hf.devices(kind), lambda: hf.jit(lambda a: a + 1.0)(x),
                 lambda: hf.trace(lambda a: a + 1.0, x).compile(), lambda: hf.device_put(x)):
        with pytest.raises(hf.DeviceNotFoundError, match=rf"^no {kind.upper()} found: this process has cpu "
                                                         r"\(\d+ devices?\); [^\n]*$"):
            call()


def test_jit_and_compile_take_a_device(monkeypatch):
    monkeypatch.setattr(hf.config, "device", "cpu")  # (None below means hf.config.device)
    x = np.arange(4, dtype=np.float32)
    cpu = hf.devices("cpu")[0]
    for device in ("cpu", cpu, None):
        y = hf.jit(lambda a: a * 2.0, device=device)(x)
        assert_close(y, x * 2)
        assert y.devices() == {cpu}
    exe = hf.trace(lambda a: a + 1.0, x).compile(device=cpu)
    assert exe.devices == (cpu,) and exe.device == cpu


def test_bad_device_argument():
    with pytest.raises(TypeError, match="device must be None, 'cpu', 'gpu', 'tpu' or a jax Device, got 3"):
        hf.trace(lambda a: a, np.ones(2, np.float32)).compile(device=3)


@no_gpu_only
def test_missing_gpu_raises_one_clear_error(tmp_path):
    x = np.ones(3, np.float32)
    calls = [lambda: hf.devices("gpu"),
             lambda: hf.jit(lambda a: a + 1.0, device="gpu")(x),
             lambda: hf.trace(lambda a: a + 1.0, x).compile(device="gpu")]
    for call in calls:
        with pytest.raises(hf.DeviceNotFoundError, match=r"no GPU found: this process has cpu .*; install the CUDA "
                                                         r"plugin with `pip install 'hloforge\[cuda12\]'`"):
            call()


@no_gpu_only
def test_config_device_gpu_is_used_by_default(monkeypatch):
    monkeypatch.setattr(hf.config, "device", "gpu")
    with pytest.raises(hf.DeviceNotFoundError, match="no GPU found"):
        hf.jit(lambda a: a - 1.0)(np.ones(2, np.float32))


@no_gpu_only
def test_cli_run_device_gpu_without_gpu(tmp_path, capsys):
    path = tmp_path / "m.mlir"
    hf.trace(lambda a: a * 3.0, hf.ShapeDtype((2,), np.float32)).save(path)
    assert main(["run", str(path), "--random-inputs", "--device", "gpu"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hloforge run: error: no GPU found: this process has cpu") and err.count("\n") == 1


def test_cli_run_device_cpu(tmp_path, capsys):
    path = tmp_path / "m.mlir"
    hf.trace(lambda a: a * 3.0, hf.ShapeDtype((2,), np.float32)).save(path)
    assert main(["run", str(path), "--random-inputs", "--device", "cpu"]) == 0
    assert "output 0: float32[2]" in capsys.readouterr().out


def test_config_reads_the_environment_and_validates():
    c = Config({"HLOFORGE_DEVICE": "gpu", "HLOFORGE_CACHE_SIZE": "7", "HLOFORGE_CACHE_DIR": "/tmp/x",
                "HLOFORGE_LOCAL_FFTS": "0"})
    assert (c.device, c.cache_size, c.cache_dir, c.local_ffts) == ("gpu", 7, "/tmp/x", False)
    d = Config({"HOME": "/home/u"})
    assert (d.device, d.cache_dir, d.local_ffts) == (None, "/home/u/.cache/hloforge", True)  # (on by default)
    with pytest.raises(ValueError, match=r"config.device must be None \(jax's default device\) or one of "
                                         r"\('cpu', 'gpu', 'tpu'\), got 'npu'"):
        d.device = "npu"
    with pytest.raises(ValueError, match=r"HLOFORGE_DEVICE must be unset \(jax's default device\) or one of "
                                         r"\('cpu', 'gpu', 'tpu'\), got 'npu'"):
        Config({"HLOFORGE_DEVICE": "npu"})
    with pytest.raises(ValueError, match="HLOFORGE_CACHE_SIZE must be an integer >= 0, got 'lots'"):
        Config({"HLOFORGE_CACHE_SIZE": "lots"})
    with pytest.raises(ValueError, match="config.cache_size must be an integer >= 0, got -1"):
        d.cache_size = -1
    with pytest.raises(TypeError, match="config.cache_dir must be a path or None, got int 3"):
        d.cache_dir = 3
    assert "Config(device=" in repr(hf.config)


def test_log_setting_reads_the_environment_and_validates():
    assert Config({}).log == "error"
    assert Config({"HLOFORGE_LOG": "INFO"}).log == "info"
    with pytest.raises(ValueError, match=r"HLOFORGE_LOG must be one of \('debug', 'info', 'warning', 'error', "
                                         r"'fatal'\), got 'loud'"):
        Config({"HLOFORGE_LOG": "loud"})
    with pytest.raises(ValueError, match="config.log must be one of"):
        Config({}).log = "chatty"


def test_devices_local_and_global():
    assert hf.devices("cpu", local=True) == hf.devices("cpu")  # one process: the same devices
    other = type("FakeDevice", (), {"platform": "cpu", "client": hf.devices("cpu")[0].client,
                                    "process_index": 1, "__str__": lambda self: "cpu:99"})()
    with pytest.raises(ValueError, match=r"device cpu:99 belongs to process 1; this process \(0\) can only run"):
        hf.trace(lambda a: a, np.ones(2, np.float32)).compile(device=other)
