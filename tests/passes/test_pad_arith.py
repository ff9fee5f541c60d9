"""pad-push's pad-arith patterns (passes/pad_arith.py, pad_select.py, pad_slices.py): each fires where it
should and not where it must not, keeps every output bit (on inputs with -0.0, Inf and NaN, without finite
math), survives random programs, and brings the v3 pad corpus (benchmarks/pad_corpus.py CORPUS_V3) to what the docs say."""
from __future__ import annotations

import collections
import os
import sys

import numpy as np
import pytest
from helpers import random
from hypothesis import given, settings
from hypothesis import strategies as st

import hloforge as hf
from hloforge import ops
from hloforge.passes import pad_arith, pad_select, patterns
from hloforge.passes._ir import assume_finite
from hloforge.passes.pad_push import ARITH_PATTERNS

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks"))
import pad_corpus  # noqa: E402

F32, F64, I32, B = np.float32, np.float64, np.int32, np.bool_
SPECIAL = np.array([-0.0, 0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.5], F64)

Case = collections.namedtuple("Case", "pattern fires why fn specs finite_math present absent",
                              defaults=(False, (), ()))


def sd(shape, dtype=F32):
    return hf.ShapeDtype(shape, dtype)


def inputs(m, seed=0):
    """Random inputs with special values mixed in (floats), so that a rewrite that is not exact shows."""
    out = []
    for i, s in enumerate(m.signature[0]):
        x = np.array(random(s.shape, s.dtype, seed=seed + i))
        if x.dtype.kind == "f" and x.size:
            flat = x.reshape(-1)
            flat[::3] = SPECIAL[(np.arange(flat[::3].size) + i) % SPECIAL.size].astype(x.dtype)
        out.append(x)
    return out


def bits(a):
    """Every bit, except that a NaN is any NaN: XLA's algebraic simplifier picks a NaN's sign from
    the graph it sees (``a - (-b)`` becomes ``a + b``), so a rewrite that exposes such a form can
    flip it; the fuzz test found +NaN for -NaN. NaNs stay NaNs; docs/passes.md says so."""
    a = np.array(np.asarray(a), order="C")
    if a.dtype.kind in "fc" or a.dtype == np.dtype("bfloat16"):
        a[np.isnan(a)] = np.nan
    return a.dtype, a.shape, a.view(np.uint8).tobytes()


def assert_same_bits(m, pipeline, finite_math=False, seed=0):
    """Optimize ``m`` in place; assert every output keeps its bits; return the report."""
    args = inputs(m, seed)
    want = [bits(o) for o in m.compile().call_flat(args)]
    report = m.optimize(pipeline, finite_math=finite_math)
    m.verify()
    got = [bits(o) for o in m.compile().call_flat(args)]
    assert got == want, f"{pipeline} changed the bits:\n{m}"
    return report


def pad(x, value, low, high, interior=None):
    return ops.pad(x, value, low, high, interior or [0] * len(low))


def iota_box(shape, lo, hi, d=0):
    i = ops.iota(shape, I32, d)
    c = lambda k: ops.constant(np.full(shape, k, I32))  # noqa: E731
    return ops.and_(ops.compare(i, c(lo), "GE"), ops.compare(i, c(hi), "LT"))


CASES = [
    # family 1: arithmetic of pads at different offsets
    Case("binary_of_shifted_pads", True, "overlapping supports: a concatenate of three pieces, no pad",
         lambda a, b: pad(a, -0.0, (1,), (0,)) + pad(b, -0.0, (0,), (1,)), [sd((5,)), sd((5,))],
         absent=["stablehlo.pad", "stablehlo.constant"], present=["stablehlo.concatenate"]),
    Case("binary_of_shifted_pads", True, "+0.0 padding under finite math (x + 0.0 is x there)",
         lambda a, b: pad(a, 0.0, (1,), (0,)) + pad(b, 0.0, (0,), (1,)), [sd((5,)), sd((5,))], True,
         absent=["stablehlo.pad"], present=["stablehlo.concatenate"]),
    Case("binary_of_shifted_pads", False, "+0.0 padding without finite math: XLA would fold the pieces' "
         "x + 0.0 into x, which is -0.0 where IEEE gives +0.0",
         lambda a, b: pad(a, 0.0, (1,), (0,)) + pad(b, 0.0, (0,), (1,)), [sd((5,)), sd((5,))]),
    Case("binary_of_shifted_pads", True, "max with -inf padding: the windows are kept as they are",
         lambda a, b: ops.maximum(pad(a, -np.inf, (2,), (0,)), pad(b, -np.inf, (0,), (2,))), [sd((4,)), sd((4,))],
         absent=["stablehlo.pad"], present=[("stablehlo.maximum", 1)]),
    Case("binary_of_shifted_pads", True, "subtract with other dims padded alike: one pad left",
         lambda a, b: pad(a, 1.0, (1, 0), (1, 2)) - pad(b, 1.0, (1, 2), (1, 0)), [sd((2, 3)), sd((2, 3))],
         present=[("stablehlo.pad", 1)]),
    Case("binary_of_shifted_pads", True, "compare of shifted pads with different values",
         lambda a, b: ops.compare(pad(a, 0.0, (0,), (3,)), pad(b, 2.0, (2,), (1,)), "LT"), [sd((3,)), sd((3,))],
         present=[("stablehlo.pad", 1), ("stablehlo.compare", 4)]),
    Case("binary_of_shifted_pads", True, "int multiply of zero pads: the gap is a constant",
         lambda a, b: ops.multiply(pad(a, 0, (0,), (4,)), pad(b, 0, (4,), (0,))), [sd((3,), I32), sd((3,), I32)],
         absent=["stablehlo.pad", "stablehlo.slice"], present=["stablehlo.broadcast_in_dim"]),
    Case("binary_of_shifted_pads", False, "the paddings differ on two dims",
         lambda a, b: pad(a, 0.0, (1, 0), (0, 1)) + pad(b, 0.0, (0, 1), (1, 0)), [sd((2, 2)), sd((2, 2))]),
    Case("binary_of_shifted_pads", False, "interior padding",
         lambda a, b: pad(a, 0.0, (1,), (0,), (1,)) + pad(b, 0.0, (0,), (1,), (1,)), [sd((3,)), sd((3,))]),
    Case("binary_of_shifted_pads", False, "a pad has another user",
         lambda a, b: (lambda p: (p + pad(b, 0.0, (0,), (1,)), p))(pad(a, 0.0, (1,), (0,))), [sd((3,)), sd((3,))]),
    Case("binary_of_pad_and_splat", True, "a pad times a broadcast scalar",
         lambda a: pad(a, 1.0, (1,), (2,)) * ops.broadcast_in_dim(ops.constant(np.float32(3)), (6,), ()), [sd((3,))],
         present=[("stablehlo.pad", 1)]),
    Case("binary_of_pad_and_splat", True, "a splat constant on the left of a subtract",
         lambda a: ops.constant(np.full((5,), 2, I32)) - pad(a, 7, (2,), (0,)), [sd((3,), I32)]),
    Case("binary_of_pad_and_splat", False, "a float add of a zero splat (XLA folds x + 0.0 into x)",
         lambda a: pad(a, 1.0, (1,), (2,)) + ops.broadcast_in_dim(ops.constant(np.float32(0)), (6,), ()), [sd((3,))]),
    Case("binary_of_pad_and_splat", False, "the other operand is not a splat",
         lambda a, b: pad(a, 0.0, (1,), (0,)) * b, [sd((3,)), sd((4,))]),
    Case("binary_of_pad_and_splat", False, "the pad has another user",
         lambda a: (lambda p: (p * ops.constant(np.full((4,), 2, F32)), p))(pad(a, 0.0, (1,), (0,))), [sd((3,))]),
    # family 2: selects of boxes
    Case("select_of_box", True, "a pad of true with false: the pad's window set into y",
         lambda x, y: ops.select(pad(ops.constant(np.ones((3,), B)), False, (2,), (3,)), pad(x, 0.0, (2,), (3,)), y),
         [sd((3,)), sd((8,))], absent=["stablehlo.select"], present=["stablehlo.dynamic_update_slice"]),
    Case("select_of_box", True, "an iota box on two dims (and of compares)",
         lambda x, y: ops.select(ops.and_(iota_box((5, 6), 1, 3, 0), iota_box((5, 6), 2, 6, 1)), x, y),
         [sd((5, 6)), sd((5, 6))], present=["stablehlo.dynamic_update_slice", ("stablehlo.slice", 1)]),
    Case("select_of_box", True, "the ends of an axis (or of equalities): the complement of a box",
         lambda g, u: ops.select(ops.or_(ops.compare(ops.iota((7,), I32), ops.constant(np.zeros(7, I32)), "EQ"),
                                         ops.compare(ops.iota((7,), I32), ops.constant(np.full(7, 6, I32)), "EQ")),
                                 g, u), [sd((7,)), sd((7,))], present=["stablehlo.dynamic_update_slice"]),
    Case("select_of_box", True, "a box-shaped constant, false on the box",
         lambda x, y: ops.select(ops.constant(np.pad(np.zeros((2, 2), B), ((1, 0), (0, 1)), constant_values=True)),
                                 x, y), [sd((3, 3)), sd((3, 3))], present=["stablehlo.dynamic_update_slice"]),
    Case("select_of_box", True, "an all-false mask picks a constant that main returns",
         lambda x: (ops.select(iota_box((2, 3), 1, 1, 1), x, ops.constant(np.zeros((2, 3), np.complex64))), x),
         [sd((2, 3), np.complex64)], absent=["stablehlo.select"]),
    Case("select_of_box", True, "an all-false mask picks the run-time operand under a divide",
         lambda x: x / ops.select(iota_box((2, 3), 1, 1, 1), ops.constant(np.zeros((2, 3), np.complex64)), x),
         [sd((2, 3), np.complex64)], absent=["stablehlo.select"]),
    Case("select_of_box", False, "an all-false mask would make a complex divisor a literal zero (XLA: nan+nanj)",
         lambda x: x / ops.select(iota_box((2, 3), 1, 1, 1), x, ops.constant(np.zeros((2, 3), np.complex64))),
         [sd((2, 3), np.complex64)]),
    Case("select_of_box", False, "an all-true mask would add a literal 0.0 (XLA folds x + 0.0 into x)",
         lambda x: x + ops.select(iota_box((4,), 0, 4), ops.constant(np.zeros(4, F32)), x), [sd((4,))]),
    Case("select_of_box", False, "the mask is two boxes apart",
         lambda x, y: ops.select(ops.constant(np.array([1, 0, 1, 0], B)), x, y), [sd((4,)), sd((4,))]),
    Case("select_of_box", False, "a mask read at run time", lambda m, x, y: ops.select(m, x, y),
         [sd((4,), B), sd((4,)), sd((4,))]),
    Case("select_of_same_branches", True, "jax's gradient of a scatter at an index array: zeros or zeros",
         lambda m, x: x * ops.select(m, ops.constant(np.zeros(4, F32)), ops.constant(np.zeros(4, F32))),
         [sd((4,), B), sd((4,))], absent=["stablehlo.select"]),
    Case("select_of_same_branches", True, "one value on both sides", lambda m, x: ops.select(m, x, x),
         [sd((4,), B), sd((4,))], absent=["stablehlo.select"]),
    Case("select_of_same_branches", False, "zeros of either sign differ in their bits",
         lambda m, x: x * ops.select(m, ops.constant(np.zeros(4, F32)), ops.constant(-np.zeros(4, F32))),
         [sd((4,), B), sd((4,))]),
    Case("select_of_pads", True, "a run-time mask between two pads alike: a pad of the select",
         lambda m, a, b: ops.select(m, pad(a, 0.0, (0, 1), (0, 2)), pad(b, 0.0, (0, 1), (0, 2))),
         [sd((4, 6), B), sd((4, 3)), sd((4, 3))], present=[("stablehlo.pad", 1), ("stablehlo.slice", 1)]),
    Case("select_of_pads", True, "a scalar predicate, padding values of equal bits",
         lambda m, a, b: ops.select(m, pad(a, 1.5, (2,), (0,)), pad(b, ops.constant(F32(1.5)), (2,), (0,))),
         [sd((), B), sd((3,)), sd((3,))], present=[("stablehlo.pad", 1)], absent=["stablehlo.slice"]),
    Case("select_of_pads", False, "the pads pad differently",
         lambda m, a, b: ops.select(m, pad(a, 0.0, (1,), (0,)), pad(b, 0.0, (0,), (1,))),
         [sd((4,), B), sd((3,)), sd((3,))]),
    Case("select_of_pads", False, "different padding values",
         lambda m, a, b: ops.select(m, pad(a, 0.0, (1,), (0,)), pad(b, -0.0, (1,), (0,))),
         [sd((4,), B), sd((3,)), sd((3,))]),
    # family 3: adjacent slices
    Case("concatenate_of_adjacent_slices", True, "rows of a column window: one slice",
         lambda x: ops.concatenate([ops.slice(x, (1, 0), (3, 4)), ops.slice(x, (3, 0), (6, 4))], 0), [sd((8, 6))],
         absent=["stablehlo.concatenate"], present=[("stablehlo.slice", 1)]),
    Case("concatenate_of_adjacent_slices", True, "strided slices that continue each other, next to another value",
         lambda x, y: ops.concatenate([ops.slice(x, (0,), (4,), (2,)), ops.slice(x, (4,), (9,), (2,)), y], 0),
         [sd((9,)), sd((2,))], present=[("stablehlo.slice", 1), "stablehlo.concatenate"]),
    Case("concatenate_of_adjacent_slices", True, "the slices are also returned; together they are all of x",
         lambda x: (lambda p, q: (ops.concatenate([p, q], 0), p))(ops.slice(x, (0,), (2,)), ops.slice(x, (2,), (5,))),
         [sd((5,))], absent=["stablehlo.concatenate"]),
    Case("concatenate_of_adjacent_slices", False, "a gap between the slices",
         lambda x: ops.concatenate([ops.slice(x, (0,), (2,)), ops.slice(x, (3,), (5,))], 0), [sd((5,))]),
    Case("concatenate_of_adjacent_slices", False, "the other dims differ",
         lambda x: ops.concatenate([ops.slice(x, (0, 0), (2, 2)), ops.slice(x, (2, 1), (4, 3))], 0), [sd((4, 3))]),
    # family 4: pads and slices of concatenates
    Case("pad_of_concatenate", True, "the first operand's low edge joins the outer pad",
         lambda a, b: pad(ops.concatenate([pad(a, 0.0, (2,), (0,)), b], 0), 0.0, (1,), (1,)), [sd((3,)), sd((4,))],
         present=[("stablehlo.pad", 1)]),
    Case("pad_of_concatenate", True, "the last operand's high edge, other dims padded by the inner pad",
         lambda a, b: pad(ops.concatenate([a, pad(b, 1.0, (0, 1), (2, 0))], 0), 1.0, (0, 0), (1, 0)),
         [sd((2, 3)), sd((2, 2))], present=[("stablehlo.pad", 2)]),
    Case("pad_of_concatenate", False, "the padding values differ",
         lambda a, b: pad(ops.concatenate([pad(a, 1.0, (2,), (0,)), b], 0), 0.0, (1,), (1,)), [sd((3,)), sd((4,))]),
    Case("pad_of_concatenate", False, "the inner pad pads the joint between the operands",
         lambda a, b: pad(ops.concatenate([pad(a, 0.0, (0,), (2,)), b], 0), 0.0, (1,), (1,)), [sd((3,)), sd((4,))]),
    Case("slice_of_concatenate", True, "a crop reads two operands",
         lambda a, b: ops.slice(ops.concatenate([a, b], 0), (2,), (6,)), [sd((4,)), sd((5,))],
         present=[("stablehlo.slice", 2)]),
    Case("slice_of_concatenate", True, "a slice inside one operand of a shared concatenate",
         lambda a, b: (lambda c: (ops.slice(c, (0, 5), (2, 7)), c))(ops.concatenate([a, b], 1)),
         [sd((2, 4)), sd((2, 3))], present=[("stablehlo.slice", 1)]),
    Case("slice_of_concatenate", False, "a stride along the concatenate's dim",
         lambda a, b: ops.slice(ops.concatenate([a, b], 0), (1,), (7,), (2,)), [sd((4,)), sd((4,))]),
    Case("slice_of_concatenate", False, "the concatenate is shared and the slice reads both operands",
         lambda a, b: (lambda c: (ops.slice(c, (2,), (6,)), c))(ops.concatenate([a, b], 0)), [sd((4,)), sd((4,))]),
]


def test_every_pattern_has_cases():
    assert {c.pattern for c in CASES if c.fires} == {c.pattern for c in CASES if not c.fires} == set(ARITH_PATTERNS)
    assert all(patterns()[name][0] == "pad-push" for name in ARITH_PATTERNS)


def _traced_cases(fires):
    """All cases of one kind in one module (one compile): each case's outputs are outputs of main."""
    chosen = [c for c in CASES if c.fires == fires]
    specs = [s for c in chosen for s in c.specs]

    def fn(*xs):
        outs, i = [], 0
        for c in chosen:
            r = c.fn(*xs[i:i + len(c.specs)])
            outs += list(r) if isinstance(r, tuple) else [r]
            i += len(c.specs)
        return tuple(outs)
    return hf.trace(fn, *specs)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.pattern}-{'fires' if c.fires else 'not'}-{i}"
                                             for i, c in enumerate(CASES)])
def test_pattern(case):
    m = hf.trace(case.fn, *case.specs)
    report = m.optimize(f"pattern:{case.pattern}", finite_math=case.finite_math)
    m.verify()
    assert (report.fired[case.pattern] > 0) == case.fires, f"{case.why}:\n{m}"
    counts = m.op_counts()
    for name in case.absent:
        assert name not in counts, f"{name} left after {case.pattern} ({case.why}):\n{m}"
    for name in case.present:
        name, n = name if isinstance(name, tuple) else (name, None)
        assert (counts.get(name, 0) == n) if n is not None else name in counts, f"{name} ({case.why}):\n{m}"


@pytest.mark.parametrize("pipeline", ["pad-push", "default"])
def test_firing_cases_keep_every_bit(pipeline):
    """Every firing case in one module, with -0.0, Inf and NaN among the inputs, without finite math."""
    m = _traced_cases(True)
    report = assert_same_bits(m, pipeline)
    if pipeline == "pad-push":
        assert all(report.fired[name] for name in ARITH_PATTERNS), report.fired


def test_finite_math_identities():
    """x + 0.0 keeps -0.0 only under finite math; x + -0.0 and x * 1 are exact either way."""
    def fn(a, b):
        return (pad(a, 0.0, (1,), (0,)) + pad(b, 0.0, (0,), (1,)),
                pad(a, -0.0, (1,), (0,)) + pad(b, -0.0, (0,), (1,)),
                pad(a, 1.0, (1,), (0,)) * pad(b, 1.0, (0,), (1,)))
    for finite in (False, True):
        m = hf.trace(fn, sd((4,)), sd((4,)))
        m.optimize("pattern:binary_of_shifted_pads", finite_math=finite)
        # next to +0.0: left alone without finite math (XLA would fold the windows' a + 0.0 into a,
        # _xla_folds), a itself under it; next to -0.0 or (for *) 1 it is bare either way: one op per overlap
        assert m.op_counts()["stablehlo.add"] == 2, m
        assert m.op_counts().get("stablehlo.pad", 0) == (2 if not finite else 0), m
        assert m.op_counts()["stablehlo.multiply"] == 1, m
    assert_same_bits(hf.trace(fn, sd((4,)), sd((4,))), "pattern:binary_of_shifted_pads")


def _complex_product_of_shifted_pads(x):
    one = complex(1.0)
    return pad(x, one, (0, 0), (3, 0)) * pad(-x, one, (3, 0), (0, 0))


def test_complex_products_and_quotients_by_one_wait_for_finite_math():
    """The optimize sweep (benchmarks/optimize_sweep.py, seed 20): the windows of two complex pads of
    1+0j became ``x * (1+0j)``, which XLA folds into x, while the product (a - b*0, a*0 + b) turns
    -0-0j into +0-0j and nan+0j into nan+nanj. Left alone without finite math (_xla_folds), fired under it."""
    x = np.array([[complex(-0.0, -0.0), complex(np.nan, 0.0), complex(-1.5, np.inf), 2 - 1j]], np.complex128)
    for finite in (False, True):
        m = hf.trace(_complex_product_of_shifted_pads, sd((1, 4), np.complex128))
        want = np.asarray(m.compile()(x))
        fired = m.optimize("pad-push", finite_math=finite).fired
        assert fired["binary_of_shifted_pads"] == int(finite), fired
        if not finite:
            assert np.asarray(m.compile()(x)).tobytes() == want.tobytes(), m
    for f in (ops.multiply, ops.divide):
        m = hf.trace(lambda a: f(pad(a, complex(-0.0), (1,), (0,)), ops.constant(np.full(5, 1 + 0j, np.complex64))),
                     sd((4,), np.complex64))
        assert m.optimize("pad-push", finite_math=False).fired["binary_of_pad_and_splat"] == 0
    with assume_finite(False):
        assert pad_arith._xla_folds("stablehlo.multiply", np.complex64(1)) and \
            not pad_arith._xla_folds("stablehlo.multiply", np.float32(1))  # (a float x * 1 is x bit for bit)


def _complex_divide_by_empty_mask(x):
    return x / ops.select(iota_box((2, 3), 1, 1, 1), x, ops.constant(np.zeros((2, 3), np.complex64)))


@pytest.mark.parametrize("pipeline", ["pad-push", "default"])
def test_select_of_box_keeps_a_masked_complex_divisor_computed(pipeline):
    """n / select(empty mask, n, 0) is n / 0 computed at run time, +-inf+nanj as numpy and jax give (issue 49);
    XLA gives nan+nanj for a literal zero divisor, so the select is not replaced by the constant."""
    x = np.array([[1, -2, 3], [0.5, -0.0, 7]], np.complex64)
    m = hf.trace(_complex_divide_by_empty_mask, sd((2, 3), np.complex64))
    want = np.asarray(m.compile()(x))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(want, x / np.zeros_like(x))
    assert np.isinf(want.real[0]).all()
    m.optimize(pipeline, finite_math=False)
    assert np.asarray(m.compile()(x)).tobytes() == want.tobytes(), m
    assert "stablehlo.select" in m.op_counts()
    text = _explain(_complex_divide_by_empty_mask, [sd((2, 3), np.complex64)], "select_of_box")
    assert "select_of_box: declined 1 time: the result would be computed from constants only" in text


def test_mask_box_reads_the_box():
    m = hf.trace(lambda x: ops.and_(iota_box((5, 6), 1, 3, 0), ops.not_(iota_box((5, 6), 0, 2, 1))), sd((1,)))
    ret = list(m.mlir.body.operations[0].regions[0].blocks[0].operations)[-1]
    assert pad_select.mask_box(ret.operands[0]) == ([1, 2], [3, 6], True)
    assert pad_select.plan_select_of_box.__doc__ and isinstance(pad_arith.plan_binary_of_shifted_pads.__doc__, str)


def _explain(fn, specs, pattern, **options):
    return hf.trace(fn, *specs).optimize(f"pattern:{pattern}", debug=True, **options).explain()


def test_a_concatenate_plan_says_why_in_words():
    text = _explain(lambda a, b: ops.concatenate([a, b], 0), [sd((2, 3)), sd((1, 3))], "empty_concatenate_operands")
    assert "empty_concatenate_operands: declined 1 time: no operand has zero elements [1]" in text


def test_a_pad_and_tensor_plan_says_why_in_words():
    text = _explain(lambda a, b: b / pad(a, 0.0, (1,), (2,)), [sd((3,)), sd((6,))], "quotient_of_pad", finite_math=True)
    assert ("quotient_of_pad: declined 1 time: the dividend is not a zero pad with no other user, no interior "
            "padding and no crops, beside a non-pad [1]") in text


def test_a_pad_and_splat_plan_says_why_in_words():
    text = _explain(lambda a, b: pad(a, 0.0, (1,), (0,)) * b, [sd((3,)), sd((4,))], "binary_of_pad_and_splat")
    assert "binary_of_pad_and_splat: declined 1 time: the other operand is not a splat [1]" in text


# ---------------------------------------------------------------- fuzzing

OPS = {"add": ops.add, "subtract": ops.subtract, "multiply": ops.multiply, "maximum": ops.maximum,
       "minimum": ops.minimum, "divide": ops.divide, "lt": lambda a, b: ops.compare(a, b, "LT")}
VALUES = [0.0, -0.0, 1.0, np.inf, -np.inf, np.nan, 2.5]


def _pads_step(x, rng):
    """Two pads of x and -x, padded alike on every dim but one, combined by a random op."""
    d = int(rng.integers(x.ndim))
    low, high = [int(rng.integers(0, 2)) for _ in x.shape], [int(rng.integers(0, 2)) for _ in x.shape]
    lb, hb = list(low), list(high)
    shift = int(rng.integers(-3, 4))
    lb[d], hb[d] = max(low[d] + shift, 0), max(high[d] - shift, 0)
    n = x.shape[d] + low[d] + high[d]
    hb[d] = n - x.shape[d] - lb[d]
    if hb[d] < 0:
        return x
    v, w = (float(VALUES[int(rng.integers(len(VALUES)))]) for _ in range(2))
    f = list(OPS.values())[int(rng.integers(len(OPS)))]
    out = f(ops.pad(x, v, low, high), ops.pad(ops.neg(x), w, lb, hb))
    return ops.convert(out, x.dtype) if out.dtype != x.dtype else out


def _select_step(x, rng):
    box = [(int(a), int(a) + int(rng.integers(0, n - a + 1))) for a, n in
           ((rng.integers(0, n + 1), n) for n in x.shape)]
    mask = None
    for d, (a, b) in enumerate(box):
        m = iota_box(x.shape, a, b, d)
        mask = m if mask is None else ops.and_(mask, m)
    return ops.select(mask if rng.random() < 0.5 else ops.not_(mask), ops.sin(x), x)


def _slices_step(x, rng):
    d = int(rng.integers(x.ndim))
    n = x.shape[d]
    cuts = sorted(int(c) for c in rng.integers(0, n + 1, 3))
    parts = []
    for a, b in zip(cuts, cuts[1:]):
        if b > a:
            start, limit = [0] * x.ndim, list(x.shape)
            start[d], limit[d] = a, b
            parts.append(ops.slice(x, start, limit))
    if not parts:
        return x
    joined = ops.concatenate(parts + [x], d)
    low, high = [0] * x.ndim, [0] * x.ndim
    low[d], high[d] = int(rng.integers(-2, 3)), int(rng.integers(-2, 3))
    if joined.shape[d] + low[d] + high[d] <= 0:
        return joined
    return ops.pad(joined, 0.0, low, high)


STEPS = {"pads": _pads_step, "select": _select_step, "slices": _slices_step}


@settings(max_examples=12, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=2), dtype=st.sampled_from([F32, F64]),
       steps=st.lists(st.tuples(st.sampled_from(sorted(STEPS)), st.integers(0, 2**16)), min_size=1, max_size=4))
def test_random_programs_keep_every_bit(shape, dtype, steps):
    def fn(x):
        for kind, seed in steps:
            if x.size > 512 or x.ndim > 3:
                break
            x = STEPS[kind](x, np.random.default_rng(seed))
        return x
    assert_same_bits(hf.trace(fn, sd(shape, dtype)), "default")


# ---------------------------------------------------------------- the v3 corpus

# pad + fft ops on CORPUS_V3's 19 modules: 26 after inlining, 22 by the default pipeline without the
# pad-arith patterns, 5 with them, 9 without finite math (docs/passes.md, "The pad corpus")
LEFT_V3, LEFT_V3_EXACT = 5, 9


def test_corpus_v3():
    left = exact = 0
    for name, m in pad_corpus.load_all("v3").items():
        args = pad_corpus.inputs(m)
        want = [bits(o) for o in m.compile().call_flat(args)]
        fast = m.clone()
        m.optimize(finite_math=False)
        exact += pad_corpus.pad_fft_count(m)
        assert [bits(o) for o in m.compile().call_flat(args)] == want, name
        fast.optimize()
        left += pad_corpus.pad_fft_count(fast)
    assert len(pad_corpus.CORPUS_V3) == 19
    assert exact <= LEFT_V3_EXACT, f"the default pipeline leaves {exact} pad + fft ops on the v3 corpus without finite math"
    assert left <= LEFT_V3, f"the default pipeline leaves {left} pad + fft ops on the v3 corpus"
