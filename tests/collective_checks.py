"""Manual-SPMD collective checks on 8 CPU devices: run as a script by tests/ops/test_collective.py
with XLA_FLAGS=--xla_force_host_platform_device_count=8. Prints one JSON object: check name ->
{"ok": true} or {"error": traceback}.

(XLA's manual mode takes single-operand all_reduce only; collective_broadcast does not compile on
XLA:CPU: both are checked in IR only, in test_registry.) Each program is traced with hloforge.ops, its arguments and results marked ``{manual}`` (every
partition runs it on its own shard, as inside jax.shard_map) and compiled for 8 partitions.
"""
import json
import os
import re
import sys
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec  # noqa: E402

import hloforge as hf  # noqa: E402
from hloforge import ops  # noqa: E402
from hloforge.runtime import pjrt  # noqa: E402

CHECKS = {}
N = 8
ALL = [list(range(N))]
CH = dict(channel_handle=(1, 1), use_global_device_ids=True)


def check(fn):
    CHECKS[fn.__name__] = fn
    return fn


def _manual_text(module) -> str:
    """The module's text with every argument and result of @main manual, for 8 partitions."""
    text = module.text
    head, rest = text.split("func.func @main(", 1)
    sig, body = rest.split(" {\n", 1)
    args, results = sig.split(") -> ", 1)
    args = re.sub(r"(%arg\d+: tensor<[^>]*>)", r'\1 {mhlo.sharding = "{manual}"}', args)
    results = results.strip()
    inner = results[1:-1] if results.startswith("(") else results
    inner = ", ".join(r + ' {mhlo.sharding = "{manual}"}' for r in inner.split(", "))
    head = head.replace("module {", f"module attributes {{mhlo.num_partitions = {N} : i32, mhlo.num_replicas = 1 : i32}} {{", 1)
    return f"{head}func.func public @main({args}) -> ({inner}) {{\n{body}"


def run_manual(fn, *shards):
    """Run ``fn`` (hloforge ops) once per device; ``shards``: per argument, a list of N arrays.
    Returns per result a list of N numpy arrays."""
    module = hf.trace(fn, *[s[0] for s in shards])
    devs = jax.devices()[:N]
    loaded = pjrt.compile(_manual_text(module), devs, pjrt.compile_options(devs, shardy=False))
    mesh = Mesh(np.array(devs), ("x",))
    sharding = NamedSharding(mesh, PartitionSpec("x"))
    args = [jax.make_array_from_single_device_arrays((N * per_device[0].shape[0],) + per_device[0].shape[1:], sharding,
                                                     [jax.device_put(a, d) for a, d in zip(per_device, devs)])
            for per_device in shards]
    results = loaded.execute_sharded(args).disassemble_into_single_device_arrays()
    return [[np.asarray(r) for r in per_result] for per_result in results]


def shards(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(dtype) if np.dtype(dtype).kind == "f" else
            rng.integers(-50, 50, shape).astype(dtype) for _ in range(N)]


@check
def ids_and_all_reduce():
    xs = shards((4, 3), seed=1)
    ints = shards((5,), np.int32, seed=2)
    out = run_manual(lambda x, i: (ops.reshape(ops.partition_id(), (1,)), ops.all_reduce(x, ALL, **CH),
                                   ops.all_reduce(i, [[0, 1, 2, 3], [4, 5, 6, 7]], computation="max", **CH),
                                   ops.all_reduce(x, ALL, computation=lambda a, b: ops.maximum(a, b), **CH)),
                     xs, ints)
    for d in range(N):
        assert out[0][d].tolist() == [d]
        np.testing.assert_allclose(out[1][d], sum(xs), rtol=1e-5)
        half = ints[:4] if d < 4 else ints[4:]
        np.testing.assert_array_equal(out[2][d], np.max(half, 0))
        np.testing.assert_array_equal(out[3][d], np.max(xs, 0))


@check
def gather_scatter_all_to_all_permute():
    xs = shards((8, 2), seed=3)
    ring = [(i, (i + 1) % N) for i in range(N)]
    out = run_manual(lambda x: (ops.all_gather(x, 1, ALL, **CH), ops.reduce_scatter(x, 0, ALL, **CH),
                                ops.all_to_all(x, 0, 1, N, ALL, channel_handle=(1, 1)),
                                ops.collective_permute(x, ring, channel_handle=(1, 1)),
                                ops.collective_permute(x, [(0, 3)], channel_handle=(2, 1))), xs)
    total = sum(xs)
    for d in range(N):
        np.testing.assert_array_equal(out[0][d], np.concatenate(xs, 1))
        np.testing.assert_allclose(out[1][d], total[d:d + 1], rtol=1e-5)
        np.testing.assert_array_equal(out[2][d], np.concatenate([xs[s][d:d + 1] for s in range(N)], 1))
        np.testing.assert_array_equal(out[3][d], xs[(d - 1) % N])
        np.testing.assert_array_equal(out[4][d], xs[0] if d == 3 else np.zeros_like(xs[0]))


@check
def vjp_of_collectives():
    """hf.vjp through the linear collectives: sum over devices of <ct, L x> equals that of
    <L^T ct, x> (all_gather <-> reduce_scatter, the inverse all_to_all and permutation)."""
    ring = [(i, (i + 1) % N) for i in range(N)]
    lins = [lambda x: ops.all_gather(x, 1, ALL, **CH), lambda x: ops.reduce_scatter(x, 0, ALL, **CH),
            lambda x: ops.all_to_all(x, 0, 1, N, ALL, channel_handle=(1, 1)),
            lambda x: ops.collective_permute(x, ring, channel_handle=(1, 1)), lambda x: ops.all_reduce(x, ALL, **CH)]
    xs = shards((8, 2), seed=5)
    cts = [shards(s, seed=6 + k) for k, s in enumerate([(8, 16), (1, 2), (1, 16), (8, 2), (8, 2)])]

    def fn(x, *ct):
        outs = []
        for lin, c in zip(lins, ct):
            y, back = hf.vjp(lin, x)
            outs += [y, back(c)[0]]
        return tuple(outs)
    out = run_manual(fn, xs, *cts)
    for k in range(len(lins)):
        lhs = sum(float(np.sum(cts[k][d] * out[2 * k][d])) for d in range(N))
        rhs = sum(float(np.sum(xs[d] * out[2 * k + 1][d])) for d in range(N))
        assert abs(lhs - rhs) <= 1e-4 * max(1.0, abs(lhs)), (k, lhs, rhs)


def run_checks(checks: dict) -> None:
    """Run each check, printing one JSON object: name -> {"ok": True} or {"error": traceback}."""
    results = {}
    for name, fn in checks.items():
        try:
            fn()
            results[name] = {"ok": True}
        except Exception:
            results[name] = {"error": traceback.format_exc()}
    print(json.dumps(results))


def main():
    run_checks(CHECKS)


if __name__ == "__main__":
    main()
