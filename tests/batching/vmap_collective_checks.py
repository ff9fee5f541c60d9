"""hf.vmap of the collectives on 8 CPU devices (manual SPMD, as tests/collective_checks.py): run as a
script by tests/batching/test_vmap_collective.py with XLA_FLAGS=--xla_force_host_platform_device_count=8.
Each check compares the vmapped program, run once, with the per-example program run on each
example's shards and stacked (the loop vmap stands for). Prints one JSON object: check name ->
{"ok": true} or {"error": traceback}."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/: the shared helpers

import hloforge as hf  # noqa: E402
from hloforge import ops  # noqa: E402
from collective_checks import ALL, CH, N, run_checks, run_manual, shards  # noqa: E402

B = 2
RING = [(i, (i + 1) % N) for i in range(N)]
PROGRAMS = {
    "all_reduce": lambda x: ops.all_reduce(x, ALL, **CH),
    "all_reduce_max_groups": lambda x: ops.all_reduce(x, [[0, 1, 2, 3], [4, 5, 6, 7]], computation="max", **CH),
    "all_gather_0": lambda x: ops.all_gather(x, 0, ALL, **CH),
    "all_gather_1": lambda x: ops.all_gather(x, 1, ALL, **CH),
    "reduce_scatter_0": lambda x: ops.reduce_scatter(x, 0, ALL, **CH),
    "all_to_all_0_1": lambda x: ops.all_to_all(x, 0, 1, N, ALL, channel_handle=(1, 1)),
    "collective_permute": lambda x: ops.collective_permute(x, RING, channel_handle=(1, 1)),
}


def _loop(fn, xs, axis):
    """fn run on each example's shards, results stacked per device at 0."""
    runs = [run_manual(fn, [np.take(x, i, axis) for x in xs])[0] for i in range(B)]
    return [np.stack([r[dev] for r in runs]) for dev in range(N)]


def check_program(name, axis):
    fn = PROGRAMS[name]
    per_example = shards((8, 2), seed=len(name))
    xs = [np.stack([x + 10 * i for i in range(B)], axis).astype(np.float32) for x in per_example]
    got = run_manual(hf.vmap(fn, in_axes=axis), xs)[0]
    want = _loop(fn, xs, axis)
    for dev in range(N):
        np.testing.assert_allclose(got[dev], want[dev], rtol=1e-6, err_msg=f"{name} device {dev}")


def check_unbatched_operand_mix():
    """A variadic all_gather over a batched and an unbatched operand: the unbatched one is not
    broadcast; the batched one moves right after the gather dim, which then names both (IR only:
    XLA's manual mode runs single-operand collectives only)."""
    fn = lambda x, y: tuple(ops.all_gather([x, y], 0, ALL, **CH))  # noqa: E731
    text = hf.trace(hf.vmap(fn, in_axes=(0, None)), hf.ShapeDtype((B, 8, 2), np.float32),
                    hf.ShapeDtype((3, 2), np.float32)).text
    assert "(tensor<8x2x2xf32>, tensor<3x2xf32>) -> (tensor<64x2x2xf32>, tensor<24x2xf32>)" in text, text


def main():
    checks = {f"{n}_axis{a}": (lambda n=n, a=a: check_program(n, a)) for n in PROGRAMS for a in (0, 1, 2)}
    checks["unbatched_operand_mix"] = check_unbatched_operand_mix
    run_checks(checks)


if __name__ == "__main__":
    main()
