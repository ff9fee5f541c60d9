"""jax's top-level helpers at hloforge's top level: eval_shape, ShapeDtypeStruct, device_put,
block_until_ready, tree_util and tree."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
import hloforge.numpy as hnp


def test_the_names_are_public():
    for name in ("checkpoint", "remat", "checkpoint_policies", "checkpoint_name", "eval_shape", "ShapeDtypeStruct",
                 "device_put", "block_until_ready", "tree_util", "tree"):
        assert name in hf.__all__ and hasattr(hf, name), name
    assert hf.ShapeDtypeStruct is jax.ShapeDtypeStruct
    assert hf.tree_util is jax.tree_util and hf.tree is jax.tree
    import hloforge.tree_util as tu
    from hloforge import tree
    assert tu is jax.tree_util and tree is jax.tree
    assert hf.tree_util.tree_map(lambda v: v + 1, {"a": 1, "b": (2,)}) == {"a": 2, "b": (3,)}
    assert hf.tree.leaves([1, (2, None)]) == [1, 2]


def fn(xp):
    def f(x, y, *, scale):
        return {"mm": x @ x.T, "sum": xp.sum(y * scale, axis=0), "cast": (x > 0).astype(xp.int8)[None]}
    return f


ARGS = (np.ones((3, 4), np.float32), np.ones((2, 5), np.float16))


def test_eval_shape_matches_jax():
    specs = [jax.ShapeDtypeStruct((3, 4), jnp.float32), hf.ShapeDtype((2, 5), np.float16)]
    for args in (ARGS, specs):
        got = hf.eval_shape(fn(hnp), *args, scale=np.float16(2))
        want = jax.eval_shape(fn(jnp), *ARGS, scale=np.float16(2))
        assert jax.tree.structure(got) == jax.tree.structure(want)
        for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
            assert type(g) is jax.ShapeDtypeStruct and (g.shape, g.dtype) == (w.shape, w.dtype)
    inside = hf.trace(lambda x: hnp.zeros(hf.eval_shape(lambda v: v[:, :2], x).shape), ARGS[0])
    assert inside.signature[1][0].shape == (3, 2)  # (Tensors as arguments, inside a trace)


def test_lower_and_trace_take_jax_shape_dtype_structs():
    spec = hf.ShapeDtypeStruct((2, 3), jnp.bfloat16)
    for module in (hf.jit(hnp.sin).lower(spec), hf.trace(hnp.sin, spec)):
        assert module.signature == ([hf.ShapeDtype((2, 3), hf.bfloat16)], [hf.ShapeDtype((2, 3), hf.bfloat16)])


def test_device_put_and_block_until_ready():
    cpu = hf.devices("cpu")[0]
    x = hf.device_put(np.arange(3.0))
    assert isinstance(x, jax.Array) and x.dtype == np.float64 and x.devices() == {cpu}  # (f64 kept, as in numpy)
    tree = hf.device_put({"a": 1, "b": [np.float32(2), True], "c": x}, cpu)
    assert [v.dtype for v in jax.tree.leaves(tree)] == [np.int64, np.float32, np.bool_, np.float64]
    assert all(isinstance(v, jax.Array) and v.devices() == {cpu} for v in jax.tree.leaves(tree))
    assert hf.device_put(x) is x
    mesh = hf.Mesh(np.array([cpu]), ("d",))
    sharded = hf.device_put(np.ones(4, np.float32), hf.NamedSharding(mesh, hf.P("d")))
    assert sharded.sharding == hf.NamedSharding(mesh, hf.P("d"))
    with jax.set_mesh(mesh):
        assert hf.device_put(np.ones(2, np.float32), hf.P()).sharding.mesh == mesh
    a, b = hf.device_put((np.ones(2, np.float32), np.zeros(1, np.int32)), ("cpu", None))
    np.testing.assert_array_equal(np.asarray(a), np.ones(2, np.float32))
    assert b.dtype == np.int32
    big = np.arange(3, dtype=">i4")
    np.testing.assert_array_equal(np.asarray(hf.device_put(big)), big)
    traced = hf.trace(lambda v: hf.device_put(v, cpu) * 2, ARGS[0])  # (Tensors stay as they are)
    assert traced.signature[1][0].shape == (3, 4)
    out = hf.jit(lambda v: v * 2)(np.ones(2, np.float32))
    ready = hf.block_until_ready({"y": out, "n": 3})
    assert ready["y"] is out and ready["n"] == 3


def test_errors():
    with pytest.raises(TypeError, match="hloforge.eval_shape: fun must be callable, got 3"):
        hf.eval_shape(3, ARGS[0])
    with pytest.raises(TypeError, match="hloforge.eval_shape: argument leaf 0 of type object is not an array"):
        hf.eval_shape(hnp.sin, object())
    with pytest.raises(ValueError, match="hloforge.eval_shape: argument leaf 0 float32.*dynamic"):
        hf.eval_shape(hnp.sin, hf.ShapeDtype((None, 2), np.float32))
    with pytest.raises(ValueError, match="device must be 'cpu', 'gpu', 'tpu', a Device .* got 'npu'"):
        hf.device_put(ARGS[0], "npu")
    with pytest.raises(TypeError, match="hloforge.device_put: device must be None, .* got 3 of type int"):
        hf.device_put(ARGS[0], 3)
    with pytest.raises(TypeError, match="hloforge.device_put: leaf 0 of type str is not an array of numbers"):
        hf.device_put("text")
    with pytest.raises(ValueError, match=r"the PartitionSpec P\('d',\) needs a mesh"):
        hf.device_put(ARGS[0], hf.P("d"))
    with pytest.raises(ValueError, match="device must be one target or a pytree prefix of x"):
        hf.device_put((ARGS[0],), ("cpu", "cpu"))
