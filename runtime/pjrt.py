"""The one adapter between hloforge and jaxlib's PJRT runtime (version-specific calls only)."""
from __future__ import annotations

import numpy as np

import jax
from jax.extend.backend import get_backend
from jaxlib import _jax as xc

_PLATFORM_ALIASES = {"cpu": "cpu", "gpu": "gpu", "cuda": "cuda", "rocm": "rocm"}


class DeviceNotFoundError(RuntimeError):
    """The requested kind of device is not available."""


class CompileError(RuntimeError):
    """XLA rejected a module; the message carries XLA's diagnostic."""


class ExecutionError(RuntimeError):
    """Running a compiled executable failed (e.g. out of memory)."""


RuntimeFailure = jax.errors.JaxRuntimeError


def client(platform: str = "cpu"):
    """The PJRT client for ``platform`` ("cpu" or "gpu")."""
    platform = _PLATFORM_ALIASES.get(platform, platform)
    try:
        return get_backend(platform)
    except RuntimeError as e:
        if platform in ("gpu", "cuda"):
            raise DeviceNotFoundError(
                "no GPU found: install the CUDA plugin with `pip install 'hloforge[cuda12]'` "
                f"(jax-cuda12-plugin) on a machine with an NVIDIA GPU ({e})") from None
        raise DeviceNotFoundError(f"no {platform!r} devices: {e}") from None


def devices(platform: str = "cpu") -> list:
    return list(client(platform).devices())


def resolve_device(device=None):
    """None -> the first CPU device; "cpu"/"gpu" -> that platform's first device; a Device as is."""
    if device is None:
        return devices("cpu")[0]
    if isinstance(device, str):
        return devices(device)[0]
    if hasattr(device, "platform") and hasattr(device, "client"):
        return device
    raise TypeError(f"device must be None, 'cpu', 'gpu' or a jax Device, got {device!r}")


def compile(code: str | bytes, device):
    """Compile StableHLO (text or bytecode) for one device; returns a loaded executable."""
    options = xc.CompileOptions()
    try:
        return device.client.compile_and_load(code, xc.DeviceList((device,)), options)
    except RuntimeFailure as e:
        raise CompileError(str(e)) from None


def put(array: np.ndarray, device) -> jax.Array:
    """Place a host array on ``device`` keeping its dtype (f64/c128 too), without touching jax's
    global x64 flag: the scoped ``enable_x64`` context is thread-local."""
    if array.dtype.itemsize == 8 or array.dtype == np.complex128:
        with jax.enable_x64(True):
            return jax.device_put(array, device)
    return jax.device_put(array, device)


def execute(loaded, arrays) -> list:
    """Run on the executable's single device; returns one jax.Array per result."""
    try:
        return loaded.execute(arrays)
    except RuntimeFailure as e:
        raise ExecutionError(str(e)) from None


def is_device_array(x) -> bool:
    return isinstance(x, jax.Array)


def hlo_text(loaded) -> str:
    return loaded.get_hlo_text()


def cost_analysis(loaded) -> dict:
    return dict(loaded.cost_analysis())


def memory_stats(loaded):
    return loaded.get_compiled_memory_stats()
