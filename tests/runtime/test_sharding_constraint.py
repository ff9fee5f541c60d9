"""sdy.sharding_constraint in the registry (frontend/ops/structure.py, its rules in ad/structure.py and
batching/structure.py): Module.vjp, jvp and vmap of modules jax lowered with with_sharding_constraint,
against jax on the same function; the constraint and its mesh carried into the new modules."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import hloforge as hf
from hloforge import ops

MESH = Mesh(np.array(jax.devices()[:1]), ("x",))
X = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)


def _f(x):
    y = jax.lax.with_sharding_constraint(jnp.sin(x) * 2, NamedSharding(MESH, P("x", None)))
    return jnp.sum(y * y), y


def _module():
    return hf.Module.parse(jax.jit(_f).lower(X).as_text())


def _constraints(m):
    return [line.split("<", 1)[1] for line in m.text.splitlines() if "sdy.sharding_constraint" in line]


def test_vjp_and_jvp_keep_the_constraint_and_match_jax():
    m = _module()
    grads = m.vjp()
    assert len(_constraints(grads)) == 2 and "sdy.mesh @mesh" in grads.text  # (the primal's and the cotangent's)
    ct_y = np.ones_like(X)
    got = grads.compile()(X, np.float32(1.0), ct_y)
    _, pullback = jax.vjp(_f, X)
    np.testing.assert_allclose(np.asarray(got[-1]), np.asarray(pullback((np.float32(1.0), ct_y))[0]), rtol=1e-6)
    tangents = m.jvp().compile()(X, X)
    want = jax.jvp(_f, (X,), (X,))[1]
    np.testing.assert_allclose(np.asarray(tangents[-1]), np.asarray(want[1]), rtol=1e-6)


def test_vmap_adds_an_unsharded_batch_dimension():
    batched = _module().vmap(4)
    assert _constraints(batched) == ['@mesh, [{}, {"x"}, {}]> : tensor<4x2x3xf32>']
    xs = np.random.default_rng(0).standard_normal((4, 2, 3)).astype(np.float32)
    got = batched.compile()(xs)
    want = jax.vmap(_f)(xs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
    assert _constraints(_module().vmap(4, in_axes=1, out_axes=(0, 2)))[0].startswith('@mesh, [{"x"}, {}, {}]')


def test_the_builder_brings_its_mesh_and_checks_the_sharding():
    mesh = 'sdy.mesh @grid = <["a"=1]>'
    m = hf.trace(lambda x: ops.sharding_constraint(x, '#sdy.sharding<@grid, [{}, {"a"}]>', mesh) * 2, X)
    assert "sdy.mesh @grid" in m.text
    np.testing.assert_allclose(np.asarray(m.compile()(X)), X * 2)
    with pytest.raises(ValueError, match=r"shards 1 dimensions, the operand .* has 2"):
        hf.trace(lambda x: ops.sharding_constraint(x, '#sdy.sharding<@grid, [{}]>', mesh), X)
    with pytest.raises(ValueError, match=r"sharding must be the text of an #sdy.sharding<@mesh, \[...\]> attribute, "
                                         r"got 'x'"):
        hf.trace(lambda x: ops.sharding_constraint(x, "x"), X)
    with pytest.raises(ValueError, match=r"mesh must be the text of an sdy.mesh op, got 'grid'"):
        hf.trace(lambda x: ops.sharding_constraint(x, '#sdy.sharding<@grid, [{}, {}]>', "grid"), X)
