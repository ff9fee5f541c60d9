"""hloforge.lax's reductions against jax.lax on the same inputs: reduce with jax's and hloforge's
named computations, lambdas and pytrees of operands; reduce_sum/prod/max/min/and/or/xor over
dtypes; reduce_window with hloforge.lax.max; cumlogsumexp, associative_scan, approx_max_k/min_k;
and every error message."""
from __future__ import annotations

import jax
import numpy as np
import pytest

from hloforge import lax

from lax_helpers import both, refuses

F = np.array([[3.0, -1.0, 2.5, np.inf], [0.5, -4.0, 2.5, 1.0], [-0.0, 7.0, np.nan, -2.0]], np.float32)
POOL = np.linspace(-3, 3, 2 * 6 * 6 * 3, dtype=np.float32).reshape(2, 6, 6, 3)


def _reduces(L, f, i, b, c, pool):
    def argmax_step(acc, x):  # (value, index) pairs: the larger value, the lower index on ties
        take = L.bitwise_or(L.gt(x[0], acc[0]), L.bitwise_and(L.eq(x[0], acc[0]), L.lt(x[1], acc[1])))
        return L.select(take, x[0], acc[0]), L.select(take, x[1], acc[1])
    idx = L.broadcasted_iota(np.int32, f.shape, 1)
    fin = L.select(L.is_finite(f), f, L.full_like(f, 0))
    return [L.reduce(f, -np.inf, L.max, (1,)), L.reduce(f, np.float32(0), jax.lax.add, (0,)),
            L.reduce(i, 1, L.mul, (0, 1)), L.reduce(b, False, L.bitwise_or, (1,)), L.reduce(b, True, L.bitwise_and, (0,)),
            L.reduce(i, 0, lambda a, x: L.add(a, L.mul(x, x)), (1,)), L.reduce(fin, 5.0, L.add, (1,)),
            L.reduce((fin, idx), (-np.inf, 0), argmax_step, (1,)), L.reduce(i, 0, L.bitwise_xor, (0,)),
            L.reduce({"a": i, "b": fin}, {"a": 0, "b": 0.0},
                     lambda acc, x: {"a": L.max(acc["a"], x["a"]), "b": L.add(acc["b"], x["b"])}, (0,)),
            L.reduce(c, np.complex64(0), L.add, (1,)), L.reduce(c, np.complex64(-np.inf), L.max, (1,)),
            L.reduce_window(pool, -np.inf, L.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
            L.reduce_window(pool, 0.0, L.add, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
            L.reduce_window(pool, -np.inf, lambda a, x: L.max(a, x), (1, 2, 2, 1), (1, 1, 1, 1), "VALID"),
            L.reduce_window((pool, pool), (-np.inf, np.inf), lambda a, x: (L.max(a[0], x[0]), L.min(a[1], x[1])),
                            (1, 2, 2, 1), (1, 2, 2, 1), "VALID")]


def test_reduce_and_reduce_window_match_jax():
    i = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
    finite = np.where(np.isfinite(F), F, 1)
    c = (finite + 1j * finite[::-1]).astype(np.complex64)
    both(_reduces, F, i, F > 0, c, POOL)


REDUCTIONS = ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or", "reduce_xor"]
DTYPES = [np.float32, np.float16, np.int32, np.uint8, np.int64, np.bool_, np.complex64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_named_reductions_match_jax_over_dtypes(dtype):
    rng = np.random.default_rng(0)
    a = (rng.integers(-3, 4, (3, 4)) if np.dtype(dtype).kind != "b" else rng.random((3, 4)) < 0.5).astype(dtype)
    if a.dtype == np.float32:
        a[0, 0], a[1, 1] = np.nan, -np.inf
    if a.dtype.kind == "c":
        a = (a + 1j * a[::-1]).astype(dtype)
    kinds = {"reduce_sum": "iufc", "reduce_prod": "iufc", "reduce_max": "biufc", "reduce_min": "biufc"}
    accepted = [name for name in REDUCTIONS if a.dtype.kind in kinds.get(name, "biu")]
    both(lambda L, a: [getattr(L, name)(a, axes) for name in accepted for axes in ((1,), (0, 1))], a, rtol=2e-3)
    for name in set(REDUCTIONS) - set(accepted):
        refuses(lambda v: getattr(lax, name)(v, (0,)), a,
                match=rf"hloforge\.lax\.{name}(: logical reduction requires operand dtype bool or int| does not accept "
                      rf"dtype)")


def _scans(L, f, v, m):
    return [L.cumlogsumexp(f, 1), L.cumlogsumexp(v), L.cumlogsumexp(f, 0, reverse=True),
            L.associative_scan(L.add, v), L.associative_scan(L.max, m, reverse=True, axis=1),
            L.associative_scan(lambda a, b: (L.add(a[0], b[0]), L.mul(a[1], b[1])), (m, m * 0.5), axis=0),
            L.associative_scan(L.bitwise_or, L.gt(v, np.float32(1))), L.associative_scan(L.add, v[:1]),
            *L.approx_max_k(m, 3), *L.approx_min_k(m, 2, reduction_dimension=0), *L.approx_max_k(f, 2),
            *L.approx_min_k(f, 4)]


def test_scans_and_approx_top_k_match_jax():
    v = np.linspace(-2, 3, 7, dtype=np.float32)
    m = np.array([[1.0, -2.0, 3.0, 3.0, 0.0], [-0.0, 0.0, 5.0, -1.0, 2.0], [4.0, 4.0, -3.0, 1.0, 1.5]], np.float32)
    both(_scans, F, v, m)


ERRORS = [
    (lambda x: lax.reduce(x, (0.0, 0.0), lax.add, (0,)), ValueError,
     r"hloforge\.lax\.reduce: operands must have the same tree structure as init_values"),
    (lambda x: lax.reduce(x, np.int32(0), lax.add, (0,)), TypeError,
     r"reduce: operand dtypes should match corresponding initial value dtypes \(0-d\), got operand 0 float32\[3, 4\] "
     r"and initial value int32\[\]"),
    (lambda x: lax.reduce(x, 0.0, lax.add, (2,)), ValueError,
     r"reduce: reduction axes \(2,\) contains out-of-bounds indices for float32\[3, 4\]"),
    (lambda x: lax.reduce(x, 0.0, 3, (0,)), TypeError, r"reduce: computation must be callable, got int"),
    (lambda x: lax.reduce((x, x), (0.0, 0.0), lambda a, b: a[0], (0,)), TypeError,
     r"reduce: the computation must return the operands' structure"),
    (lambda x: lax.reduce(x, 0.0, lambda a, b: lax.convert_element_type(a, np.int32), (0,)), TypeError,
     r"int32"),
    (lambda x: lax.reduce((x, x[0]), (0.0, 0.0), lambda a, b: a, (0,)), ValueError, r"operands must have one shape"),
    (lambda x: lax.reduce(x, 0.0, lax.add, (0,), out_sharding=1), ValueError, r"reduce: out_sharding=1 is not supported"),
    (lambda x: lax.reduce_sum(x, (-1,)), ValueError, r"reduce_sum: reduction axes \(-1,\) contains out-of-bounds"),
    (lambda x: lax.reduce_max(x, (1, 1)), ValueError, r"reduce_max: duplicate value in 'axes' of reduction: \(1, 1\)"),
    (lambda x: lax.reduce_and(x, (0,)), TypeError, r"reduce_and: logical reduction requires operand dtype bool or int, "
                                                   r"got float32"),
    (lambda x: lax.reduce_sum(lax.gt(x, x), (0,)), TypeError,
     r"reduce_sum does not accept dtype bool\. Accepted dtypes are subtypes of number\."),
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 2, 2), (1, 1), "VALID"), ValueError,
     r"reduce_window: window_dimensions \[1, 2, 2\] must have 2 entries"),
    (lambda x: lax.reduce_window(x, (0.0,), lax.add, (2, 2), (1, 1), "VALID"), TypeError,
     r"reduce_window: operand tree .* and init_value tree .* differ"),
    (lambda x: lax.cumlogsumexp(lax.convert_element_type(x, np.int32)), TypeError,
     r"cumlogsumexp does not accept dtype int32"),
    (lambda x: lax.associative_scan(3, x), TypeError, r"associative_scan: fn argument should be callable"),
    (lambda x: lax.associative_scan(lax.add, (x, x[:2])), ValueError, r"associative_scan: array inputs must have the "
                                                                      r"same first dimension"),
    (lambda x: lax.approx_max_k(x, 0), ValueError, r"approx_max_k: k must be positive, got 0"),
    (lambda x: lax.approx_max_k(x, 5), ValueError, r"approx_max_k: k must be smaller than the size of reduction_dim 4, "
                                                   r"got 5"),
    (lambda x: lax.approx_min_k(lax.convert_element_type(x, np.int32), 1), ValueError,
     r"approx_min_k: operand must be a floating type, got int32"),
    (lambda x: lax.approx_max_k(x, 2, aggregate_to_topk=False), ValueError, r"aggregate_to_topk=False is not supported"),
]


@pytest.mark.parametrize("fn,exc,match", ERRORS)
def test_errors(fn, exc, match):
    refuses(fn, F, exc=exc, match=match)


def test_named_computations_become_one_op_bodies():
    """hloforge.lax's, jax.lax's and hloforge.ops' add/max/... give the one-op bodies of
    hloforge.ops' named reducers (what the passes and evaluate know); a lambda is traced."""
    import hloforge as hf
    from hloforge import ops

    def fn(x):
        return (lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1), "VALID"), lax.reduce(x, 0.0, ops.add, (0,)),
                lax.reduce(x, 1.0, jax.lax.mul, (1,)), lax.reduce(x, 0.0, lambda a, b: lax.add(a, b), (0,)))
    text = hf.trace(fn, F).text
    assert "applies stablehlo.add" in text and "applies stablehlo.multiply" in text
    assert text.count("stablehlo.maximum") == 1 and text.count("stablehlo.add") == 2
