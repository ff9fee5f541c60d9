"""A compiled module bound to one device: call it with numpy arrays, scalars or jax arrays."""
from __future__ import annotations

import weakref

import numpy as np
from jax import tree_util

from hloforge.frontend import dtypes
from hloforge.frontend.tracing import refuse_masked
from hloforge.runtime import dispatch, pjrt


def _describe(shape, dtype) -> str:
    return f"{np.dtype(dtype).name}[{', '.join('?' if d is None else str(d) for d in shape)}]"


def native(array: np.ndarray) -> np.ndarray:
    """``array`` in native byte order ('>f4' on a little-endian host becomes float32)."""
    return array if array.dtype.isnative else array.astype(array.dtype.newbyteorder("="))


class Executable:
    """A compiled StableHLO module.

    ``exe(*args)`` checks the argument count, shapes and dtypes, places the arguments
    on the device and runs. One result comes back as one ``jax.Array``, several as a
    tuple. After a first call, calls with the same kinds of arguments (jax arrays, numpy
    arrays, Python scalars of the parameters' dtypes) run from jax's C++ dispatch loop.
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
        self._avals = [pjrt.aval(shape, dtype) for shape, dtype in self.in_specs]
        self._sharding = pjrt.single_device_sharding(device)
        self._loops = self._make_loops()
        self._ran = False  # (until one run finished: see call_flat)

    def _make_loops(self):
        # (the loops hold their cache-miss callback: it must not hold self, a cycle through a C++
        # object is never collected; jax keeps compiled entries as long as the function object
        # lives, so each executable needs its own)
        return dispatch.Loops(self.name, _signature_function(), _executable_miss(weakref.ref(self)))

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
        return [self._place(i, self._usable(i, a), shape, dtype) for i, (a, (shape, dtype)) in
                enumerate(zip(args, self.in_specs))]

    def _usable(self, index, arg):
        """``arg``, unless it is a jax tracer (a jax transformation of this call) or a deleted jax.Array."""
        tracer = dispatch.tracer_error(f"{self.name}: argument {index}", arg)
        if tracer is not None:
            raise tracer
        if pjrt.is_device_array(arg) and arg.is_deleted():
            raise ValueError(f"{self.name}: argument {index}: Array has been deleted with shape="
                             f"{_describe(arg.shape, arg.dtype)}")
        return arg

    def _place(self, index, arg, shape, dtype):
        if pjrt.is_device_array(arg):
            self._check(index, arg.shape, arg.dtype, shape, dtype)
            if arg.sharding == self._sharding:
                return arg
            if not arg.is_fully_addressable:
                raise ValueError(f"{self.name}: argument {index} is a jax.Array sharded over devices of other "
                                 f"processes ({arg.sharding}); this executable runs on {self.device} only: "
                                 f"compile over the same global mesh instead")
            return pjrt.put(arg, self.device)
        return pjrt.put_host(self._host_value(index, arg, shape, dtype), self._avals[index], self._sharding,
                             self.device)

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
        refuse_masked(arg, f"{self.name}: argument {index}")
        array = native(np.asarray(arg))
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
        """Run with already-flat arguments; always returns a list of results.

        Until a run has finished, each run is waited for: XLA reports some failures (out of memory
        for the temporaries) only when the results are read, as jax's JaxRuntimeError; waiting makes
        them an ``hf.ExecutionError`` here. Later runs are asynchronous, as in jax."""
        try:
            outs = pjrt.execute(self._loaded, self.prepare(args))
            if not self._ran:
                for out in outs:
                    out.block_until_ready()
                self._ran = True
            return outs
        except (pjrt.ExecutionError, pjrt.RuntimeFailure) as e:
            raise pjrt.ExecutionError(f"{self.name}: execution failed: {e}") from None

    def __call__(self, *args):
        kind = dispatch.route(args)
        try:
            if kind == dispatch.PLAIN:
                return self._loops.plain(*args)
            if kind == dispatch.WIDE:
                return self._loops.call_wide(args)
        except (ValueError, pjrt.RuntimeFailure) as e:
            failure = dispatch.execution_error(self.name, e)
            if failure is None:
                raise
            raise failure from None
        return self._result(self.call_flat(args))

    @staticmethod
    def _result(outs):
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _fastpath_data(self, args, outs):
        """What jax's C++ loop needs to rerun this call's signature without Python, or None."""
        if not (dispatch.fastpath_ok(args, self.in_specs, self._sharding)
                and all(type(o) is pjrt.DEVICE_ARRAY_TYPE for o in outs)):
            return None
        tree = tree_util.tree_structure(self._result(list(range(len(outs)))))
        return pjrt.fastpath_data(self._loaded, self.device, tree, len(args), outs)

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


def _signature_function():
    def signature_only(*args):
        """(jax's loop needs a Python function; an Executable's is never traced)"""
    return signature_only


def _executable_miss(exe_ref):
    def cache_miss(*args):
        exe = exe_ref()
        outs = exe.call_flat(args)
        return exe._result(outs), exe._fastpath_data(args, outs), False
    return cache_miss
