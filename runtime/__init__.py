"""Compile and run StableHLO modules through jaxlib's PJRT runtime."""
from hloforge.runtime.executable import Executable
from hloforge.runtime.pjrt import DeviceNotFoundError, devices

__all__ = ["Executable", "DeviceNotFoundError", "devices"]
