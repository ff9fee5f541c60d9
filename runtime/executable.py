"""A compiled module bound to one device: call it with numpy arrays, scalars or jax arrays."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import dtypes
from hloforge.runtime import pjrt


def _describe(shape, dtype) -> str:
    return f"{np.dtype(dtype).name}{list(shape)}"


class Executable:
    """A compiled StableHLO module.

    ``exe(*args)`` checks the argument count, shapes and dtypes, places the arguments
    on the device and runs. One result comes back as one ``jax.Array``, several as a
    tuple.
    """

    def __init__(self, loaded, in_specs, out_specs, device, name="main", compile_seconds=0.0,
                 source="compiled"):
        self._loaded = loaded
        self.in_specs = tuple(in_specs)     # ((shape, dtype), ...)
        self.out_specs = tuple(out_specs)
        self.device = device
        self.name = name
        self.compile_seconds = compile_seconds
        self.source = source                # "compiled", "memory" or "disk" (the executable caches)

    @property
    def from_cache(self) -> bool:
        """True when this executable came from the memory or disk cache (XLA did not compile)."""
        return self.source != "compiled"

    @property
    def devices(self) -> tuple:
        """The devices it runs on (one here; a mesh's devices for a ShardedExecutable)."""
        return (self.device,)

    def __repr__(self):
        ins = ", ".join(_describe(*s) for s in self.in_specs)
        outs = ", ".join(_describe(*s) for s in self.out_specs)
        return f"Executable({self.name}: ({ins}) -> ({outs}) on {self.device})"

    def prepare(self, args) -> list:
        """Check ``args`` against the signature and place them on the device."""
        if len(args) != len(self.in_specs):
            raise TypeError(f"{self.name}: expected {len(self.in_specs)} arguments, got {len(args)}")
        return [self._place(i, a, shape, dtype) for i, (a, (shape, dtype)) in
                enumerate(zip(args, self.in_specs))]

    def _place(self, index, arg, shape, dtype):
        if pjrt.is_device_array(arg):
            self._check(index, arg.shape, arg.dtype, shape, dtype)
            devs = arg.devices()
            if len(devs) == 1 and next(iter(devs)) == self.device:
                return arg
            return pjrt.put(arg, self.device)
        return pjrt.put(self._host_value(index, arg, shape, dtype), self.device)

    def _host_value(self, index, arg, shape, dtype) -> np.ndarray:
        """A Python scalar or array-like checked against the signature, as a numpy array."""
        weak = dtypes.weak_type(arg)
        if weak is not None:
            if shape != ():
                raise ValueError(f"{self.name}: argument {index}: expected {_describe(shape, dtype)}, "
                                 f"got Python {weak.__name__}")
            if dtypes.result_type(dtype, arg) != dtype:
                raise TypeError(f"{self.name}: argument {index}: expected {_describe(shape, dtype)}, "
                                f"got Python {weak.__name__} {arg!r}")
            dtypes.check_scalar_fits(arg, dtype, f"{self.name}: argument {index}")
            return np.asarray(arg, dtype)
        array = np.asarray(arg)
        self._check(index, array.shape, array.dtype, shape, dtype)
        return array

    def _check(self, index, got_shape, got_dtype, shape, dtype):
        if np.dtype(got_dtype) != dtype:
            raise TypeError(f"{self.name}: argument {index}: expected {_describe(shape, dtype)}, "
                            f"got {_describe(got_shape, got_dtype)}")
        if tuple(got_shape) != tuple(shape):
            raise ValueError(f"{self.name}: argument {index}: expected {_describe(shape, dtype)}, "
                             f"got {_describe(got_shape, got_dtype)}")

    def call_flat(self, args) -> list:
        """Run with already-flat arguments; always returns a list of results."""
        try:
            return pjrt.execute(self._loaded, self.prepare(args))
        except pjrt.ExecutionError as e:
            raise pjrt.ExecutionError(f"{self.name}: execution failed: {e}") from None

    def __call__(self, *args):
        outs = self.call_flat(args)
        return outs[0] if len(outs) == 1 else tuple(outs)

    @property
    def hlo_text(self) -> str:
        """XLA's optimized HLO for this executable."""
        return pjrt.hlo_text(self._loaded)

    def cost_analysis(self) -> dict:
        """XLA's cost estimate (flops, bytes accessed, ...)."""
        return pjrt.cost_analysis(self._loaded)

    def memory_stats(self):
        """XLA's compiled memory statistics (argument, output, temp sizes in bytes)."""
        return pjrt.memory_stats(self._loaded)
