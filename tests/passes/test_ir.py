"""passes/_ir.py: patterns build ops through the registry (build, rebuild) and read them through its decode
(params_of)."""
import numpy as np
import pytest

import hloforge as hf
from hloforge.passes import pad as pad_passes
from hloforge.passes._ir import NO_MATCH, build, params_of, producer, rebuild, shape_of

F32 = np.float32


def _op(module, name):
    return next(op for op in module.walk() if op.name == name)


def test_params_of_reads_the_builders_keywords():
    m = hf.trace(lambda x: hf.lax.pad(x, 0.0, [(1, 2, 1)]), hf.ShapeDtype((3,), F32))
    assert params_of(_op(m, "stablehlo.pad")) == {"low": (1,), "high": (2,), "interior": (1,)}
    m = hf.trace(lambda x: x.T, hf.ShapeDtype((2, 3), F32))
    assert params_of(_op(m, "stablehlo.transpose")) == {"permutation": (1, 0)}


def _rotate_by_one(op, rewriter):
    """negate(x) -> negate(concatenate([x[1:], x[:1]]))  (a test pattern: rotates by one)"""
    x = op.operands[0]
    if producer(x, "stablehlo.concatenate") is not None:
        return NO_MATCH
    with rewriter.ip:
        n = shape_of(x)[0]
        tail = build("stablehlo.slice", [x], start_indices=[1], limit_indices=[n], strides=[1], loc=op.location)
        head = build("stablehlo.slice", [x], start_indices=[0], limit_indices=[1], strides=[1], loc=op.location)
        joined = build("stablehlo.concatenate", [tail, head], dimension=0, loc=op.location)
        out = rebuild(op, [joined])
    rewriter.replace_op(op, [out])


def test_build_computes_result_types_and_rebuild_copies_an_op(monkeypatch):
    monkeypatch.setitem(pad_passes.PATTERNS, "rotate", (("stablehlo.negate",), _rotate_by_one))
    m = hf.trace(lambda x: -x, hf.ShapeDtype((4,), F32))
    m.optimize("pad-canonicalize")
    assert m.op_counts()["stablehlo.slice"] == 2
    x = np.arange(4, dtype=F32)
    np.testing.assert_array_equal(np.asarray(m.compile()(x)), -np.roll(x, -1))


def _slice_past_the_end(op, rewriter):
    """negate(x) -> x[0:99]  (a wrong test pattern)"""
    with rewriter.ip:
        out = build("stablehlo.slice", [op.operands[0]], start_indices=[0], limit_indices=[99], strides=[1],
                    loc=op.location)
    rewriter.replace_op(op, [out])


def test_a_wrong_rewrite_raises_the_rules_message_in_the_pattern(monkeypatch):
    monkeypatch.setitem(pad_passes.PATTERNS, "wrong", (("stablehlo.negate",), _slice_past_the_end))
    m = hf.trace(lambda x: -x, hf.ShapeDtype((4,), F32))
    with pytest.raises(ValueError, match=r"slice.*99") as info:
        m.optimize("pad-canonicalize")
    assert any("pad-canonicalize" in note for note in info.value.__notes__)


def test_rebuild_takes_changed_params(monkeypatch):
    def swap(op, rewriter):
        """transpose(x, p) -> transpose(x, p) with p = (0, 1)  (a test pattern)"""
        if params_of(op)["permutation"] == (0, 1):
            return NO_MATCH
        with rewriter.ip:
            out = build("stablehlo.reshape", [rebuild(op, [op.operands[0]], permutation=(0, 1))],
                        shape=(3, 2), loc=op.location)
        rewriter.replace_op(op, [out])

    monkeypatch.setitem(pad_passes.PATTERNS, "swap", (("stablehlo.transpose",), swap))
    m = hf.trace(lambda x: x.T, hf.ShapeDtype((2, 3), F32))
    m.optimize("pad-canonicalize")
    x = np.arange(6, dtype=F32).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(m.compile()(x)), x.reshape(3, 2))
