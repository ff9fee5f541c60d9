"""Compile and run StableHLO modules through jaxlib's PJRT runtime."""
from hloforge.runtime.executable import Executable
from hloforge.runtime.pjrt import CompileError, DeviceNotFoundError, ExecutionError, devices

__all__ = ["Executable", "CompileError", "DeviceNotFoundError", "ExecutionError", "devices"]
