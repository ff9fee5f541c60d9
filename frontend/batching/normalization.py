"""Batching rules of ``frontend/ops/normalization.py`` (jax has no lax op for these).

Every batch norm op works feature by feature: inference is elementwise per feature, training and
grad reduce over every dimension but the feature one. So the vmap batch dimension is folded into
the feature dimension, (size, features) -> size * features, with the per-feature vectors (scale,
offset, mean, variance; an unbatched one repeated for each example) folded the same way: feature
``i * features + j`` is feature j of example i, and its statistics are exactly that example's. (A
fold into a non-feature dimension would mix the examples' statistics in training and grad.) The
results are unfolded again: the operand-shaped ones with the batch dimension right before the
features, the vectors with it first.
"""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.batching._util import bdim_at
from hloforge.frontend.registry import def_rule


def _fold_operand(x, d, size, f):
    """x (batch dim d or unbatched) as the per-example rank, with size * features at ``f``."""
    x = bdim_at(x, d, size, f)
    shape = list(x.shape)
    return ops.reshape(x, tuple(shape[:f] + [shape[f] * shape[f + 1]] + shape[f + 2:]))


def _fold_vector(v, d, size):
    v = bdim_at(v, d, size, 0)
    return ops.reshape(v, (v.shape[0] * v.shape[1],))


def _unfold_operand(y, size, f, features):
    shape = list(y.shape)
    return ops.reshape(y, tuple(shape[:f] + [size, features] + shape[f + 1:]))


def _unfold_vector(v, size, features):
    return ops.reshape(v, (size, features))


def _features(ins, dims) -> int:
    """The per-example number of features: the length of the scale vector (operand 1) without its
    batch dimension (read off it, not divided out of a folded length: the batch may be empty)."""
    scale, d = ins[1], dims[1]
    return scale.shape[0] if d is None else scale.shape[1 - d]


def _folded(size, ins, dims, operand_positions, f):
    """The operands folded: those at ``operand_positions`` operand-shaped, the others vectors."""
    return [_fold_operand(x, d, size, f) if i in operand_positions else _fold_vector(x, d, size)
            for i, (x, d) in enumerate(zip(ins, dims))]


@def_rule("batch", "stablehlo.batch_norm_inference")
def _batch_norm_inference_batch(size, ins, dims, *, epsilon, feature_index):
    """Pattern: bn(x[b], scale, offset, mean, var) -> unfold(bn(fold(x, b into features), folded
    vectors))[b right before the features]."""
    f = feature_index
    out = ops.batch_norm_inference(*_folded(size, ins, dims, (0,), f), epsilon, f)
    return [_unfold_operand(out, size, f, _features(ins, dims))], [f]


@def_rule("batch", "stablehlo.batch_norm_training")
def _batch_norm_training_batch(size, ins, dims, *, epsilon, feature_index):
    """Pattern: bn_training(x[b], scale, offset) -> unfold(bn_training(fold(x), folded vectors)):
    each folded feature's statistics are one example's."""
    f = feature_index
    y, mean, var = ops.batch_norm_training(*_folded(size, ins, dims, (0,), f), epsilon, f)
    n = _features(ins, dims)
    return [_unfold_operand(y, size, f, n), _unfold_vector(mean, size, n), _unfold_vector(var, size, n)], [f, 0, 0]


@def_rule("batch", "stablehlo.batch_norm_grad")
def _batch_norm_grad_batch(size, ins, dims, *, epsilon, feature_index):
    """Pattern: bn_grad(x[b], scale, mean, var, dy) -> unfold(bn_grad(fold(x), folded vectors,
    fold(dy)))."""
    f = feature_index
    dx, dscale, doffset = ops.batch_norm_grad(*_folded(size, ins, dims, (0, 4), f), epsilon, f)
    n = _features(ins, dims)
    return ([_unfold_operand(dx, size, f, n), _unfold_vector(dscale, size, n), _unfold_vector(doffset, size, n)],
            [f, 0, 0])
