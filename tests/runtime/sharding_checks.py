"""SPMD checks that need 8 CPU devices: run as a script by tests/runtime/test_sharding.py with
XLA_FLAGS=--xla_force_host_platform_device_count=8. Prints one JSON object: check name ->
{"ok": true} or {"error": traceback}.
"""
import json
import os
import re
import sys
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/: the shared helpers

import jax  # noqa: E402

import hloforge as hf  # noqa: E402
from hloforge import numpy as hnp  # noqa: E402
from hloforge.passes.spectral import KEEP_FFTS  # noqa: E402
from hloforge.runtime import cache  # noqa: E402
import fno2d  # noqa: E402
from helpers import assert_close, random  # noqa: E402

CHECKS = {}
PARTITIONERS = {"shardy": True, "gspmd": False}


def check(fn):
    CHECKS[fn.__name__] = fn
    return fn


def mesh_2d():
    return hf.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))


def collectives(hlo: str) -> dict:
    return {k: len(re.findall(r"\b" + k + r"[.(]", hlo)) for k in ("all-gather", "all-to-all", "all-reduce")}


def executable(jitted):
    (entry,) = jitted._cache.values()
    return entry[0]


@check
def elementwise_and_reduction():
    mesh = mesh_2d()

    def f(a, b):
        return a * 2.0 + b, hnp.sum(a * b)

    a, b = random((8, 4), np.float32, seed=1), random((8, 4), np.float32, seed=2)
    want = hf.jit(f)(a, b)
    for shardy in PARTITIONERS.values():
        jax.config.update("jax_use_shardy_partitioner", shardy)
        g = hf.jit(f, in_shardings=(hf.P("x"), None), mesh=mesh)
        y, s = g(a, b)
        assert len(y.devices()) == 8 and isinstance(executable(g), hf.ShardedExecutable)
        assert_close(y, np.asarray(want[0]))
        assert_close(s, np.asarray(want[1]))
        assert s.sharding.spec == hf.P(), s.sharding
        g2 = hf.jit(f, in_shardings=hf.NamedSharding(mesh, hf.P("x", "y")), out_shardings=(hf.P(None, "y"), None))
        y2, s2 = g2(a, b)
        assert y2.sharding == hf.NamedSharding(mesh, hf.P(None, "y")), y2.sharding
        assert_close(y2, np.asarray(want[0]))
        text = g2.lower(a, b).text  # the traced module itself carries no sharding
        assert "sharding" not in text
    jax.config.update("jax_use_shardy_partitioner", True)


@check
def permuted_device_mesh():
    mesh = hf.Mesh(np.array(jax.devices()[::-1]).reshape(2, 4), ("a", "b"))
    x = random((8, 8), np.float32, seed=6)
    for shardy in PARTITIONERS.values():
        jax.config.update("jax_use_shardy_partitioner", shardy)
        f = hf.jit(lambda v: (v * 2.0, v.T + 1.0), in_shardings=hf.P("b", "a"),
                   out_shardings=(hf.P("a"), hf.P(None, "b")), mesh=mesh)
        y, z = f(x)
        assert_close(y, x * 2)
        assert_close(z, x.T + 1)
        assert y.addressable_shards[0].device.id == 7  # partition 0 runs on mesh.devices.flat[0]
    jax.config.update("jax_use_shardy_partitioner", True)


@check
def annotations_follow_the_partitioner():
    mesh = mesh_2d()
    m = hf.trace(lambda a: a + 1.0, hf.ShapeDtype((8, 4), np.float32))
    m.compile(in_shardings=hf.P("x"), mesh=mesh)
    assert "sdy" not in m.to_text()  # compile annotates a copy
    from hloforge.runtime import sharding
    for shardy, marker in ((True, '#sdy.sharding<@mesh, [{"x"}, {}]>'), (False, 'mhlo.sharding = "{devices=[4,1,2]')):
        copy = m.clone()
        plan = sharding.Plan(mesh, [hf.P("x")], None, [((8, 4), np.float32)], [((8, 4), np.float32)])
        sharding.annotate(copy, plan, shardy)
        text = copy.to_text()
        assert marker in text and "mhlo.num_partitions = 8" in text, text
        assert ('sdy.mesh @mesh = <["x"=4, "y"=2]>' in text) == shardy


@check
def pytrees_kwargs_and_resident_inputs():
    mesh = hf.Mesh(np.array(jax.devices()), ("batch",))

    def f(params, x, scale=1.0):
        return {"y": (x @ params["w"] + params["b"]) * scale}

    params = {"w": random((4, 3), np.float32, seed=3), "b": random((3,), np.float32, seed=4)}
    x = random((16, 4), np.float32, seed=5)
    want = (x @ params["w"] + params["b"]) * 2.0
    g = hf.jit(f, in_shardings=(None, hf.P("batch")), out_shardings={"y": hf.P("batch")}, mesh=mesh)
    out = g(params, x, scale=np.float32(2.0))
    assert_close(out["y"], want)
    assert out["y"].sharding.spec == hf.P("batch")
    exe = executable(g)
    xs = jax.device_put(x, exe.in_shardings[2])
    placed = exe.prepare([params["b"], params["w"], xs, np.float32(2.0)])
    assert placed[2] is xs  # already sharded that way: used as is
    assert_close(g(params, xs, scale=np.float32(2.0))["y"], want)
    double = hf.jit(lambda y: y * 2.0, in_shardings=hf.P("batch"), mesh=mesh)
    assert_close(double(out["y"]), want * 2)
    assert executable(double).prepare([out["y"]])[0] is out["y"]  # a result feeds the next call as is


@check
def single_device_calls_run_where_committed_arguments_live():
    """As jax.jit: arguments committed to a device decide where a call runs and commit its results;
    uncommitted ones (and numpy's) leave the results free to join another device's arrays; the jit's
    own device wins; arguments committed to two devices are refused (every call: the C++ loop too)."""
    d0, d1 = jax.devices()[:2]
    f = hf.jit(lambda a: a + 1.0)
    x = np.arange(3, dtype=np.float32)
    loose, on_d1 = jax.device_put(x), jax.device_put(x, d1)
    for _ in range(3):
        out = f(on_d1)
        assert out.devices() == {d1} and out.committed, (out.devices(), out.committed)
        out = f(loose)
        assert out.devices() == {d0} and not out.committed
        assert (out + on_d1).devices() == {d1}  # (moved by jax, as jax.jit's own result would be)
        out = hf.jit(lambda a: a + 1.0, device=d0)(on_d1)
        assert out.devices() == {d0} and out.committed
        assert hnp.sin(on_d1).devices() == {d1}  # eager calls alike
        try:
            hf.jit(lambda a, b: a + b)(jax.device_put(x, d0), on_d1)
            raise AssertionError("two devices were not refused")
        except ValueError as e:
            assert "argument leaves 0 and 1 are committed to different devices (cpu:0 and cpu:1)" in str(e), e
    assert f.cache_size() == 2  # (d1 and the default device: one program each)


@check
def float64_round_trip_sharded():
    mesh = hf.Mesh(np.array(jax.devices()), ("batch",))
    x = np.arange(16.0).reshape(8, 2) * (1 + 1e-13)
    y = hf.jit(lambda a: a + a - a, in_shardings=hf.P("batch"), mesh=mesh)(x)
    assert y.dtype == np.float64 and not jax.config.jax_enable_x64
    np.testing.assert_array_equal(np.asarray(y), x)


@check
def set_mesh_context_supplies_the_mesh():
    mesh = hf.Mesh(np.array(jax.devices()), ("batch",))
    with jax.set_mesh(mesh):
        y = hf.jit(lambda a: a * 3.0, in_shardings=hf.P("batch"))(np.ones((8, 2), np.float32))
    assert y.sharding.mesh == mesh and y.sharding.spec == hf.P("batch")


@check
def indivisible_shape_is_a_clear_error():
    mesh = hf.Mesh(np.array(jax.devices()), ("batch",))
    try:
        hf.jit(lambda a: a, in_shardings=hf.P("batch"), mesh=mesh)(np.ones((6, 2), np.float32))
    except ValueError as e:
        assert re.match(r"in_shardings\[0\]: P\('batch',\) does not divide shape \[6, 2\] over mesh "
                        r"\{'batch': 8\}", str(e)), str(e)
    else:
        raise AssertionError("no error")


@check
def sharded_executables_are_cached():
    mesh = hf.Mesh(np.array(jax.devices()), ("batch",))
    before = cache.stats()["compiles"]

    def f(a):
        return a - 1.0

    for _ in range(2):
        hf.jit(f, in_shardings=hf.P("batch"), mesh=mesh)(np.ones((8,), np.float32))
    assert cache.stats()["compiles"] - before == 1


@check
def sharded_executables_round_trip_the_disk_cache():
    import tempfile
    mesh = mesh_2d()
    x = random((8, 4), np.float32, seed=9)
    with tempfile.TemporaryDirectory() as directory:
        hf.config.cache_dir = directory
        try:
            m = hf.trace(lambda a: a * a, x)
            first = m.compile(in_shardings=hf.P("x", "y"), mesh=mesh)
            cache.clear()
            again = m.compile(in_shardings=hf.P("x", "y"), mesh=mesh)
        finally:
            hf.config.cache_dir = None
    assert (first.source, again.source) == ("compiled", "disk"), (first.source, again.source)
    y = again(x)
    assert y.sharding.spec == hf.P("x", "y")
    assert_close(y, x * x)


@check
def fno2d_data_parallel():
    """Batch sharded over 8 devices; equal to the single-device run; no collectives at all
    (the FFTs stay local), while without hloforge's rewrite XLA all-gathers every FFT."""
    hf.config.cost_model = KEEP_FFTS  # (fft-truncate would turn these FFTs into dots)
    try:
        _fno2d_data_parallel()
    finally:
        hf.config.cost_model = None


def _fno2d_data_parallel():
    params = fno2d.init()
    x = random((16, 3, 32, 32), np.float32, seed=7, low=-1, high=1)
    single = np.asarray(hf.jit(fno2d.forward)(params, x))
    assert_close(single, fno2d.forward_numpy(params, x), rtol=1e-4)
    mesh = hf.Mesh(np.array(jax.devices()), ("batch",))
    found = {}
    for name, shardy in PARTITIONERS.items():
        jax.config.update("jax_use_shardy_partitioner", shardy)
        for local in (True, False):
            hf.config.local_ffts = local
            g = hf.jit(fno2d.forward, in_shardings=(None, hf.P("batch")), out_shardings=hf.P("batch"), mesh=mesh)
            y = g(params, x)
            assert y.sharding.spec == hf.P("batch") and len(y.sharding.device_set) == 8
            assert_close(y, single, rtol=1e-5)
            hlo = executable(g).hlo_text
            found[(name, local)] = collectives(hlo)
            shapes = re.findall(r"= \w+\[([\d,]+)\]\{[\d,]+\} fft\(", hlo)
            # elements outside the two transformed dims, however XLA folds them into leading dims
            batch = {int(np.prod([int(d) for d in shape.split(",")[:-2]])) for shape in shapes}
            if local:
                # each device transforms its own 2 of the 16 examples, 8 channels each
                assert shapes and batch == {2 * 8}, shapes
    hf.config.local_ffts = True
    jax.config.update("jax_use_shardy_partitioner", True)
    for name in PARTITIONERS:
        assert sum(found[(name, True)].values()) == 0, found
        assert found[(name, False)]["all-gather"] > 0, found


@check
def fno2d_on_a_2d_mesh_keeps_other_axes_free():
    params = fno2d.init()
    x = random((8, 3, 16, 16), np.float32, seed=8, low=-1, high=1)
    single = np.asarray(hf.jit(fno2d.forward)(params, x))
    mesh = mesh_2d()
    for shardy in PARTITIONERS.values():
        jax.config.update("jax_use_shardy_partitioner", shardy)
        g = hf.jit(fno2d.forward, in_shardings=(None, hf.P("x")), out_shardings=hf.P("x"), mesh=mesh)
        assert_close(g(params, x), single, rtol=1e-5)
        assert sum(collectives(executable(g).hlo_text).values()) == 0
    jax.config.update("jax_use_shardy_partitioner", True)


def main(names):
    assert len(jax.devices()) == 8, jax.devices()
    results = {}
    for name in names or CHECKS:
        try:
            CHECKS[name]()
            results[name] = {"ok": True}
        except Exception:  # noqa: BLE001 (reported to the test)
            results[name] = {"error": traceback.format_exc()}
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1:])
