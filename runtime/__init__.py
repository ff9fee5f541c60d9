"""Compile and run StableHLO modules through jaxlib's PJRT runtime."""
from hloforge.runtime.settings import Config, config
from hloforge.runtime import compiler  # noqa: F401  (adds Module.compile)
from hloforge.runtime.dynamic import DynamicExecutable
from hloforge.runtime.executable import Executable
from hloforge.runtime.pjrt import (
    CompileError, DeviceNotFoundError, ExecutionError, Mesh, NamedSharding, PartitionSpec, devices)
from hloforge.runtime.sharded import ShardedExecutable

__all__ = ["Executable", "ShardedExecutable", "DynamicExecutable", "CompileError", "DeviceNotFoundError", "ExecutionError",
           "devices", "config", "Config", "Mesh", "NamedSharding", "PartitionSpec"]
