"""Differentially private SGD (DP-SGD) with per-example gradients: hf.vmap(hf.grad(loss)).

Each step takes the gradient of every example's loss separately (``vmap`` over the batch, the
parameters shared: ``in_axes=(None, 0, 0)``), clips each example's gradient to an L2 norm of at
most ``CLIP``, averages them, adds Gaussian noise from hloforge.random (standard deviation
``NOISE * CLIP / batch``) and takes an SGD step: all of it one hf.jit program. The same program
runs in jax (jax.vmap, jax.grad, jax.random: hloforge.random draws jax's streams for the same key),
and the example checks that both give the same loss at every step and the same final parameters.

A small MLP on a synthetic 4-class task (Gaussian blobs); a few seconds.
Run: python examples/per_example_gradients.py [--steps N]
"""
import argparse
import sys
import types

import jax
import jax.numpy as jnp
import numpy as np
from jax import tree_util

import hloforge as hf
from hloforge import numpy as hnp

FEATURES, HIDDEN, CLASSES = 16, 64, 4
BATCH, EXAMPLES = 64, 1024
CLIP, NOISE, LR = 1.0, 0.8, 0.5
LOSS_RTOL, PARAM_ATOL = 1e-5, 1e-5

HLOFORGE = types.SimpleNamespace(np=hnp, grad=hf.grad, vmap=hf.vmap, random=hf.random, jit=hf.jit)
JAX = types.SimpleNamespace(np=jnp, grad=jax.grad, vmap=jax.vmap, random=jax.random, jit=jax.jit)


def mlp_loss(xp, params, x, y):
    """Cross-entropy of one example: ``x`` (features,), ``y`` a one-hot (classes,)."""
    h = x
    for w, b in params[:-1]:
        h = xp.tanh(h @ w + b)
    w, b = params[-1]
    logits = h @ w + b
    shifted = logits - xp.max(logits)
    return -xp.sum(y * (shifted - xp.log(xp.sum(xp.exp(shifted)))))


def clip_and_average(xp, grads, clip):
    """The mean over the batch (axis 0 of every leaf) of each example's gradient scaled to an
    L2 norm (over all its leaves) of at most ``clip``."""
    leaves = tree_util.tree_leaves(grads)
    squares = sum(xp.sum(g * g, axis=tuple(range(1, g.ndim))) for g in leaves)
    scale = xp.minimum(1.0, clip / (xp.sqrt(squares) + 1e-6))
    return tree_util.tree_map(lambda g: xp.mean(g * xp.reshape(scale, (-1,) + (1,) * (g.ndim - 1)), axis=0), grads)


def make_step(api):
    """One DP-SGD step in ``api``'s numpy, grad, vmap and random: returns (batch loss, new
    parameters, next key)."""
    xp = api.np

    def loss(params, x, y):
        return mlp_loss(xp, params, x, y)

    def step(params, xs, ys, key):
        key, noise_key = api.random.split(key)
        grads = api.vmap(api.grad(loss), in_axes=(None, 0, 0))(params, xs, ys)
        mean = clip_and_average(xp, grads, CLIP)
        leaves, tree = tree_util.tree_flatten(mean)
        keys = api.random.split(noise_key, len(leaves))
        noisy = [g + (NOISE * CLIP / xs.shape[0]) * api.random.normal(keys[i], g.shape, g.dtype)
                 for i, g in enumerate(leaves)]
        params = tree_util.tree_map(lambda p, g: p - LR * g, params, tree_util.tree_unflatten(tree, noisy))
        batch_loss = xp.mean(api.vmap(loss, in_axes=(None, 0, 0))(params, xs, ys))
        return batch_loss, params, key
    return api.jit(step)


def init_params(rng):
    sizes = [FEATURES, HIDDEN, HIDDEN, CLASSES]
    return [((rng.standard_normal((i, o)) / np.sqrt(i)).astype(np.float32), np.zeros(o, np.float32))
            for i, o in zip(sizes[:-1], sizes[1:])]


def make_data(rng):
    centers = 0.5 * rng.standard_normal((CLASSES, FEATURES)).astype(np.float32)
    labels = rng.integers(0, CLASSES, EXAMPLES)
    xs = (centers[labels] + rng.standard_normal((EXAMPLES, FEATURES))).astype(np.float32)
    return xs, np.eye(CLASSES, dtype=np.float32)[labels], labels


def train(api, params, xs, ys, steps):
    step = make_step(api)
    key = np.asarray(api.random.PRNGKey(0))
    losses = []
    for i in range(steps):
        batch = slice((i * BATCH) % EXAMPLES, (i * BATCH) % EXAMPLES + BATCH)
        loss, params, key = step(params, xs[batch], ys[batch], key)
        losses.append(float(loss))
    return np.array(losses), params


def accuracy(params, xs, labels):
    h = xs
    for w, b in params[:-1]:
        h = np.tanh(h @ np.asarray(w) + np.asarray(b))
    logits = h @ np.asarray(params[-1][0]) + np.asarray(params[-1][1])
    return float(np.mean(np.argmax(logits, axis=1) == labels))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    params = init_params(rng)
    xs, ys, labels = make_data(rng)

    losses_h, params_h = train(HLOFORGE, params, xs, ys, args.steps)
    losses_j, params_j = train(JAX, params, xs, ys, args.steps)

    loss_gap = float(np.max(np.abs(losses_h - losses_j) / np.abs(losses_j)))
    param_gap = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
                    for a, b in zip(tree_util.tree_leaves(params_h), tree_util.tree_leaves(params_j)))
    print(f"DP-SGD, {args.steps} steps of batch {BATCH}: loss {losses_h[0]:.4f} -> {losses_h[-1]:.4f}, "
          f"train accuracy {accuracy(params_h, xs, labels):.3f} (jax: {accuracy(params_j, xs, labels):.3f})")
    print(f"largest relative loss gap to jax over all steps: {loss_gap:.2e} (tolerance {LOSS_RTOL})")
    print(f"max abs parameter difference to jax after training: {param_gap:.2e} (tolerance {PARAM_ATOL})")
    ok = loss_gap <= LOSS_RTOL and param_gap <= PARAM_ATOL
    print("ok" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
