"""One of 2 processes of tests/test_multiprocess.py: jax.distributed over loopback with gloo,
2 CPU devices each, an hf.jit SPMD program over the 4-device global mesh.

Run: python multiprocess_worker.py PROCESS_ID PORT (XLA_FLAGS=--xla_force_host_platform_device_count=2)
"""
import sys

import jax

jax.config.update("jax_cpu_collectives_implementation", "gloo")
process_id, port = int(sys.argv[1]), int(sys.argv[2])
jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}", num_processes=2, process_id=process_id,
                           initialization_timeout=60, heartbeat_timeout_seconds=30,
                           shutdown_timeout_seconds=30)

import numpy as np  # noqa: E402

import hloforge as hf  # noqa: E402
from hloforge import numpy as hnp  # noqa: E402

devices, local = hf.devices("cpu"), hf.devices("cpu", local=True)
assert len(devices) == 4 and len(local) == 2, (devices, local)
assert [d.process_index for d in local] == [process_id] * 2

mesh = hf.Mesh(np.array(devices), ("batch",))
rng = np.random.default_rng(0)  # (the same inputs in both processes)
x = rng.standard_normal((8, 6)).astype(np.float32)
w = rng.standard_normal((6, 3)).astype(np.float32)
f = hf.jit(lambda x, w: hnp.tanh(x @ w) * 2.0, in_shardings=(hf.P("batch"), None),
           out_shardings=hf.P("batch"), mesh=mesh)
y = f(x, w)
want = np.tanh(x.astype(np.float64) @ w) * 2.0
assert y.shape == (8, 3) and not y.is_fully_addressable
assert len(y.addressable_shards) == 2
for shard in y.addressable_shards:
    np.testing.assert_allclose(np.asarray(shard.data), want[shard.index], rtol=1e-5, atol=1e-6)
z = f(x, w)  # a second call: the compiled executable again
np.testing.assert_allclose(np.asarray(z.addressable_shards[0].data), np.asarray(y.addressable_shards[0].data))

# a reduction over the global batch: a cross-process all-reduce through gloo
total = hf.jit(lambda x: hnp.sum(x, axis=0), in_shardings=hf.P("batch"), out_shardings=hf.P(), mesh=mesh)(x)
np.testing.assert_allclose(np.asarray(total.addressable_shards[0].data), x.sum(axis=0), rtol=1e-5, atol=1e-5)

errors = []
try:
    hf.jit(lambda a: a + 1.0)(y)  # y spans the other process's devices
except ValueError as e:
    errors.append(str(e))
other = [d for d in devices if d.process_index != process_id][0]
try:
    hf.trace(lambda a: a + 1.0, x).compile(device=other)
except ValueError as e:
    errors.append(str(e))
assert len(errors) == 2, errors
assert "sharded over devices of other processes" in errors[0], errors[0]
assert f"belongs to process {other.process_index}" in errors[1], errors[1]
print(f"process {process_id}: OK", flush=True)
jax.distributed.shutdown()
