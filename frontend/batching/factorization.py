"""Batching rules of ``frontend/ops/factorization.py``: cholesky and triangular_solve take leading
batch dimensions, so the vmap batch dimension stays where it is among them and moves to the front
from the matrix dimensions. A batched right-hand side over one matrix is folded into its columns
(left side) or rows (right side) instead: one solve of a wider b, as jax's rule does."""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.batching._util import bdim_at, moveaxis
from hloforge.frontend.registry import def_rule


def _leading(x, d):
    """(x, d) with the batch dimension among the leading (non-matrix) dimensions."""
    return (x, d) if d < x.ndim - 2 else (moveaxis(x, d, 0), 0)


@def_rule("batch", "stablehlo.cholesky")
def _cholesky_batch(size, ins, dims, *, lower):
    """Pattern: cholesky(a[b at d]) -> cholesky(a)[b at d] (d moved first from the matrix dims)."""
    a, d = _leading(ins[0], dims[0])
    return [ops.cholesky(a, lower=lower)], [d]


@def_rule("batch", "stablehlo.triangular_solve")
def _triangular_solve_batch(size, ins, dims, *, left_side, lower, unit_diagonal, transpose_a):
    """Patterns: solve(a, b[b]) -> unfold(solve(a, fold(b, b -> columns or rows)));
    solve(a[b], b) -> solve(a, b)[b first], b broadcast when unbatched."""
    (a, b), (ad, bd) = ins, dims
    params = dict(left_side=left_side, lower=lower, unit_diagonal=unit_diagonal, transpose_a=transpose_a)
    if ad is None:
        # left side: columns of b are independent (batch next to them, last); right side: rows are
        last = b.ndim - 1
        at = last if left_side else last - 1
        b = moveaxis(b, bd, at)
        shape = list(b.shape)  # (..., n, k, size) left, (..., k, size, n) right: fold size into k
        folded = shape[:at - 1] + [shape[at - 1] * size] + shape[at + 1:]
        x = ops.triangular_solve(a, ops.reshape(b, tuple(folded)), **params)
        return [ops.reshape(x, tuple(shape))], [at]
    a = bdim_at(a, ad, size, 0)
    b = bdim_at(b, bd, size, 0)
    return [ops.triangular_solve(a, b, **params)], [0]
