"""passes/isolate.py: the bodies hloforge treats as isolated (sort, reduce, scatter, ... but not while/if/case)
get back the constants MLIR's folders hoist out of them, so AD and vmap can re-emit optimized modules (issue 47)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
from hloforge import numpy as hnp
from hloforge.passes.isolate import sink_constants

X = np.array([3.0, -0.0, 1.0, np.nan, 2.0, 0.0], np.float32)


def _constants_outside_bodies(m) -> int:
    """Uses, inside a sort/reduce body, of a constant defined outside it."""
    count = 0
    for op in m.walk():
        if op.name in ("stablehlo.sort", "stablehlo.reduce"):
            inside = set()
            for region in op.regions:
                for block in region.blocks:
                    for inner in block.operations:
                        inside.add(inner.operation)
                        for value in inner.operands:
                            owner = value.owner
                            if not isinstance(owner, hf.frontend.context.ir.Block) and \
                                    owner.operation.name == "stablehlo.constant" and owner.operation not in inside:
                                count += 1
    return count


def test_jax_sort_comparators_keep_their_constants_after_optimize():
    m = hf.trace(hf.from_jax(jnp.sort), X)
    want = np.asarray(m.compile()(X))
    m.optimize()
    assert _constants_outside_bodies(m) == 0
    np.testing.assert_array_equal(np.asarray(m.compile()(X)).view(np.uint32), want.view(np.uint32))


def test_sink_constants_copies_into_the_body_and_drops_what_is_left_unused():
    text = """
    func.func @main(%x: tensor<4xf32>) -> tensor<f32> {
      %zero = stablehlo.constant dense<0.0> : tensor<f32>
      %r = stablehlo.reduce(%x init: %zero) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
        reducer(%a: tensor<f32>, %b: tensor<f32>) {
          %s = stablehlo.add %a, %b : tensor<f32>
          %t = stablehlo.maximum %s, %zero : tensor<f32>
          stablehlo.return %t : tensor<f32>
        }
      return %r : tensor<f32>
    }"""
    m = hf.Module.parse(text)
    x = np.array([1.0, -5.0, 2.0, 0.5], np.float32)
    want = np.asarray(m.compile()(x))
    assert _constants_outside_bodies(m) == 1
    assert sink_constants(m) == 1 and _constants_outside_bodies(m) == 0
    assert m.op_counts()["stablehlo.constant"] == 2  # (the init still reads the outer one)
    np.testing.assert_array_equal(np.asarray(m.compile()(x)), want)
    assert sink_constants(m) == 0  # (nothing left to copy)


def test_while_bodies_may_read_outer_constants():
    m = hf.trace(lambda x: hf.lax.fori_loop(0, 3, lambda i, c: c * 2.0 + 1.0, x), hf.ShapeDtype((2,), np.float32))
    m.optimize()
    before = m.text
    assert sink_constants(m) == 0 and m.text == before  # (while/if/case are not isolated: nothing moves)


@pytest.mark.parametrize("jax_fn", [jnp.sort, lambda v: jnp.sort(v)[::-1] * 2.0, lambda v: jnp.cumsum(jnp.sort(v))],
                         ids=["sort", "reversed", "cumsum"])
def test_optimized_modules_stay_differentiable_and_batchable(jax_fn):
    x = np.array([3.0, 1.0, 2.0, -1.0], np.float32)
    f = hf.optimize(jax_fn)
    weights = jnp.arange(4.0)
    np.testing.assert_array_equal(jax.grad(lambda v: jnp.sum(f(v) * weights))(x),
                                  jax.grad(lambda v: jnp.sum(jax_fn(v) * weights))(x))
    batch = np.stack([x, x[::-1], -x])
    np.testing.assert_array_equal(jax.vmap(f)(batch), jax.vmap(jax_fn)(batch))
    m = hf.trace(hf.from_jax(jax_fn), x)
    m.optimize()
    assert m.vjp() is not None and m.jvp() is not None and m.vmap(0) is not None


def test_hloforge_sorts_too():
    m = hf.trace(lambda v: hnp.sort(v) + 1.0, X)
    m.optimize()
    assert _constants_outside_bodies(m) == 0
