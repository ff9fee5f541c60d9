"""One of 2 processes of tests/runtime/test_multiprocess.py: jax.distributed over loopback with gloo,
2 CPU devices each, an hf.jit SPMD program over the 4-device global mesh, then 3 data-parallel SGD steps
of a tiny FNO-1D (hf.value_and_grad) checked against the same steps on one local device.

Run: python multiprocess_worker.py PROCESS_ID PORT (XLA_FLAGS=--xla_force_host_platform_device_count=2)
"""
import hashlib
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

# data-parallel training: params replicated, the batch split over the 4 global devices; the loss's
# mean over the batch makes XLA all-reduce the gradients across the processes
model = hf.nn.FNO(n_dims=1, modes=4, width=8, n_layers=2, in_channels=2, hidden=16)
params0 = model.init(seed=0)
xs = rng.standard_normal((8, 2, 16)).astype(np.float32)
ys = rng.standard_normal((8, 16)).astype(np.float32)


def sgd_step(params, x, y):
    loss, grads = hf.value_and_grad(lambda p: hnp.mean((model(x, p)[:, 0] - y) ** 2))(params)
    # (hf.grad of a real loss in a complex weight is the conjugate of the descent direction)
    return jax.tree.map(lambda p, g: p - 0.1 * (hnp.conj(g) if g.dtype.kind == "c" else g), params, grads), loss


train = hf.jit(sgd_step, in_shardings=(hf.P(), hf.P("batch"), hf.P("batch")), out_shardings=hf.P(), mesh=mesh)
reference = hf.jit(sgd_step)  # one local device, the whole batch
params, ref_params, losses, ref_losses = params0, params0, [], []
for _ in range(3):
    params, loss = train(params, xs, ys)
    ref_params, ref_loss = reference(ref_params, xs, ys)
    losses.append(np.asarray(loss.addressable_shards[0].data))
    ref_losses.append(np.asarray(ref_loss))
leaves, ref_leaves = jax.tree.leaves(params), jax.tree.leaves(ref_params)
assert all(a.sharding.is_fully_replicated and not a.is_fully_addressable for a in leaves + [loss])
local_leaves = [np.asarray(a.addressable_shards[0].data) for a in leaves]
for a in leaves:  # both local replicas agree
    np.testing.assert_array_equal(np.asarray(a.addressable_shards[1].data), np.asarray(a.addressable_shards[0].data))
assert losses[-1] < losses[0], losses
np.testing.assert_allclose(losses, ref_losses, rtol=1e-5, atol=1e-6)
for got, want in zip(local_leaves, ref_leaves):
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-5, atol=1e-6)
# the test process compares these exact bits between the two processes
digest = np.concatenate([np.ravel(v).view(np.uint8) for v in losses + local_leaves])
print(f"process {process_id}: train {hashlib.sha256(digest.tobytes()).hexdigest()} loss {float(losses[-1])!r}",
      flush=True)
print(f"process {process_id}: OK", flush=True)
jax.distributed.shutdown()
