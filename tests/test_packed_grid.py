"""benchmarks/packed_grid.py's packed and flat FNO-2D (an issue 47 experiment, timed on the TPU) compute the
unpacked model's values, so the experiment's figures compare the same function."""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import packed_grid  # noqa: E402


def test_packed_and_flat_models_equal_the_unpacked_one_and_their_gradients_too():
    fns, (p, x, y) = packed_grid.models_and_args()
    want = np.asarray(jax.jit(fns["unpacked"])(p, x))

    def grads(f):
        return jax.jit(jax.grad(lambda q: jnp.mean((f(q, x) - y) ** 2)))(p)
    want_grads = grads(fns["unpacked"])
    for name in ("packed", "flat"):
        got = np.asarray(jax.jit(fns[name])(p, x))
        np.testing.assert_allclose(got, want, rtol=0, atol=2e-6 * np.abs(want).max(), err_msg=name)
        for g, w in zip(jax.tree.leaves(grads(fns[name])), jax.tree.leaves(want_grads)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=0, atol=2e-6 * float(jnp.abs(w).max()),
                                       err_msg=name)


def test_block_diagonal_products_are_row_by_row_products():
    rng = np.random.default_rng(0)
    a, rows = rng.standard_normal((6, 4)), rng.standard_normal((5, 3, 6))
    packed = rows.reshape(5, 18) @ packed_grid.block_diagonal(a, 3)
    np.testing.assert_allclose(packed.reshape(5, 3, 4), rows @ a, rtol=1e-12)
