"""An executable partitioned by XLA's SPMD partitioner over a jax ``Mesh``."""
from __future__ import annotations

from hloforge.runtime import pjrt
from hloforge.runtime.executable import Executable


class ShardedExecutable(Executable):
    """A compiled module running on every device of ``mesh``.

    Arguments are placed as sharded ``jax.Array``s (``in_shardings``; a jax.Array already
    sharded that way is used as is); results come back as global sharded ``jax.Array``s with
    ``out_shardings`` (the requested ones, or what XLA chose where none was requested).
    """

    def __init__(self, loaded, in_specs, out_specs, mesh, in_shardings, out_shardings=None,
                 name="main", compile_seconds=0.0, source="compiled"):
        super().__init__(loaded, in_specs, out_specs, pjrt.mesh_devices(mesh)[0], name,
                         compile_seconds, source)
        self.mesh = mesh
        self.in_shardings = tuple(in_shardings)
        compiled = pjrt.output_shardings(loaded, mesh, len(self.out_specs))
        requested = out_shardings or (None,) * len(self.out_specs)
        self.out_shardings = tuple(r if r is not None else c for r, c in zip(requested, compiled))
        self._handlers = pjrt.result_handlers(self.out_specs, self.out_shardings)

    def _make_loops(self):
        return None  # (sharded calls take the Python path)

    @property
    def devices(self) -> tuple:
        return pjrt.mesh_devices(self.mesh)

    def __call__(self, *args):
        return self._result(self.call_flat(args))

    def __repr__(self):
        return super().__repr__().rsplit(" on ", 1)[0] + f" on {self.mesh})"

    def _place(self, index, arg, shape, dtype):
        sharding = self.in_shardings[index]
        if pjrt.is_device_array(arg):
            self._check(index, arg.shape, arg.dtype, shape, dtype)
            if arg.sharding == sharding:
                return arg
            return pjrt.put(arg, sharding)
        return pjrt.put(self._host_value(index, arg, shape, dtype), sharding)

    def call_flat(self, args) -> list:
        try:
            return pjrt.execute_sharded(self._loaded, self.prepare(args), self._handlers)
        except pjrt.ExecutionError as e:
            raise pjrt.ExecutionError(f"{self.name}: execution failed: {e}") from None
