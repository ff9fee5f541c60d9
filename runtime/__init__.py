"""Compile and run StableHLO modules through jaxlib's PJRT runtime.

The names below load on first use (PEP 562), so ``hf.config`` (``runtime.settings``) does not
import the compiler, and with it the passes, on ``import hloforge``.
"""
import importlib as _importlib

from hloforge.runtime.settings import Config, config

_NAMES = {
    "DynamicExecutable": "hloforge.runtime.dynamic", "Executable": "hloforge.runtime.executable",
    "ShardedExecutable": "hloforge.runtime.sharded",
    **{name: "hloforge.runtime.pjrt" for name in (
        "CompileError", "DeviceNotFoundError", "ExecutionError", "Mesh", "NamedSharding", "PartitionSpec", "devices")},
}


def __getattr__(name):
    if name not in _NAMES:
        raise AttributeError(f"module 'hloforge.runtime' has no attribute {name!r}")
    _importlib.import_module("hloforge.runtime.compiler")  # (adds Module.compile)
    value = getattr(_importlib.import_module(_NAMES[name]), name)
    globals()[name] = value
    return value


__all__ = ["Executable", "ShardedExecutable", "DynamicExecutable", "CompileError", "DeviceNotFoundError", "ExecutionError",
           "devices", "config", "Config", "Mesh", "NamedSharding", "PartitionSpec"]
