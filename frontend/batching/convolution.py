"""Batching rule of ``frontend/ops/convolution.py`` (jax's ``_conv_general_dilated_batch_rule``:
the vmap batch dimension is folded into a dimension the convolution already has, and split out of
the result again; no per-example loop).

- lhs batched: folded into the input batch dimension (the result's batch dimension holds it);
  with batch groups, folded inside each group so the groups stay outermost.
- rhs batched: folded into the kernel's output features (the result's features hold it); with
  feature or batch groups, folded inside each group.
- both batched: the example's input features and output features become feature groups (batch
  groups, when the convolution has batch groups), so example i only meets kernel i.
"""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.batching._loop import per_example
from hloforge.frontend.registry import def_rule


def fold_into(x, src: int, dst: int):
    """Dimension ``src`` of ``x`` merged into dimension ``dst`` (numbered without ``src``) as its
    major part: index ``i`` of src and ``j`` of dst become ``i * size(dst) + j``."""
    perm = [i for i in range(x.ndim) if i != src]
    perm.insert(dst, src)
    shape = [x.shape[i] for i in range(x.ndim) if i != src]
    shape[dst] *= x.shape[src]
    if perm != list(range(x.ndim)):
        x = ops.transpose(x, perm)
    return ops.reshape(x, tuple(shape))


def split_out(x, dim: int, major: int):
    """Dimension ``dim`` of ``x`` split into (``major``, size // major) at ``dim`` and ``dim + 1``."""
    shape = list(x.shape)
    shape[dim:dim + 1] = [major, x.shape[dim] // major]
    return ops.reshape(x, tuple(shape))


def _fold_inside_groups(x, bdim: int, dim: int, groups: int):
    """The batch dimension ``bdim`` of ``x`` folded into dimension ``dim`` (per-example numbering)
    inside each of its ``groups`` groups: (groups, rest) -> (groups, batch * rest)."""
    x = split_out(x, dim + (bdim <= dim), groups)          # (..., groups, rest, ...) with the batch still apart
    x = fold_into(x, bdim + (dim < bdim), dim + 1)         # the batch into rest
    return fold_into(x, dim, dim)                          # groups back in front of it


@def_rule("batch", "stablehlo.convolution")
def _convolution_batch(size, ins, dims, *, dimension_numbers, feature_group_count, batch_group_count, **window):
    """Patterns: conv(l[b], r) -> split(conv(fold(l, b -> batch)))[b in the result's batch dim];
    conv(l, r[b]) -> split(conv(l, fold(r, b -> out features)))[b in the result's features];
    conv(l[b], r[b]) -> split(conv(fold(l, b -> in features), fold(r, b -> out features),
    feature_group_count * n))[b in the result's features]."""
    (lhs, rhs), (ld, rd) = ins, dims
    dn = dimension_numbers
    in_batch, in_feature, kernel_out, out_batch, out_feature = dn[0], dn[1], dn[4], dn[6], dn[7]

    def conv(lhs, rhs, fgc=feature_group_count, bgc=batch_group_count):
        return ops.convolution(lhs, rhs, dn, feature_group_count=fgc, batch_group_count=bgc, **window)

    if size == 0:  # (nothing to fold: a batch of 0 folded into the groups would make 0 groups)
        return per_example(0, ins, dims, lambda lhs, rhs: [conv(lhs, rhs)])
    if ld is not None and rd is not None:
        new_rhs = fold_into(rhs, rd, kernel_out)
        if batch_group_count > 1:
            out = conv(fold_into(lhs, ld, in_batch), new_rhs, bgc=batch_group_count * size)
        else:
            out = conv(fold_into(lhs, ld, in_feature), new_rhs, fgc=feature_group_count * size)
        return [split_out(out, out_feature, size)], [out_feature]
    if ld is not None:
        if batch_group_count == 1:
            new_lhs = fold_into(lhs, ld, in_batch)
        else:
            new_lhs = _fold_inside_groups(lhs, ld, in_batch, batch_group_count)
        return [split_out(conv(new_lhs, rhs), out_batch, size)], [out_batch]
    if feature_group_count == 1 and batch_group_count == 1:
        out = conv(lhs, fold_into(rhs, rd, kernel_out))
        return [split_out(out, out_feature, size)], [out_feature]
    groups = max(feature_group_count, batch_group_count)
    out = conv(lhs, _fold_inside_groups(rhs, rd, kernel_out, groups))
    out = split_out(out, out_feature, groups)              # (groups, batch * rest)
    out = split_out(out, out_feature + 1, size)            # (groups, batch, rest)
    return [fold_into(out, out_feature, out_feature + 1)], [out_feature]
