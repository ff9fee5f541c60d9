"""passes/explain.py: optimize(debug=True) and `hloforge opt --explain` say why patterns did not fire."""
import os

import numpy as np
import pytest

import hloforge as hf
from hloforge import ops, target
from hloforge.frontend.context import ir
from hloforge.passes import explain
from hloforge.passes import pad as pad_passes
from hloforge.passes._ir import (
    NO_MATCH, Unsupported, assume_finite, begin_visit, producer, run_cache, using_cost_model)
from hloforge.runtime.cli.main import main

F32 = hf.ShapeDtype((8,), np.float32)


def _pads(outer_value):
    return hf.trace(lambda x: ops.pad(ops.pad(x, 0.0, [1], [0]), outer_value, [1], [0]), F32)


def test_a_declined_pattern_says_why_for_each_op():
    text = _pads(1.0).optimize("pattern:pad_of_pad", debug=True).explain()
    assert "pad_of_pad: declined 2 times" in text
    assert "the pads pad with different values [1]" in text  # (the outer pad)
    assert "the operand is not a pad [1]" in text  # (the inner pad: its operand is an argument)


def _bare(op, rewriter):
    """negate(x) -> x  (a test pattern that declines with a bare NO_MATCH)"""
    inner = producer(op.operands[0], "stablehlo.pad")
    if inner is None:
        return NO_MATCH
    return NO_MATCH


def test_a_bare_no_match_is_named_by_the_precondition_and_its_line(monkeypatch):
    # (every pattern in passes/ says why in words; a pattern that returns NO_MATCH is still explained by
    # the `if` around its return, for patterns in passes/: this file stands in for that directory)
    monkeypatch.setattr(explain, "_PASSES", os.path.dirname(os.path.abspath(__file__)))
    monkeypatch.setitem(pad_passes.PATTERNS, "bare", (("stablehlo.negate",), _bare))
    text = hf.trace(lambda x: -x, F32).optimize("pad-canonicalize", debug=True).explain()
    assert "bare: declined 1 time: inner is None (test_explain.py:" in text


def test_a_pattern_that_fired_is_not_listed_and_a_missing_root_is_said():
    text = _pads(0.0).optimize("pattern:pad_of_pad,pattern:noop_transpose", debug=True).explain()
    assert "pad_of_pad" not in text
    assert "never tried (the module has none of their root ops): noop_transpose" in text


def test_a_reason_string_is_reported_as_returned(monkeypatch):
    def picky(op, rewriter):
        """negate(x) -> x  (a test pattern that always declines)"""
        return "x is not a pad" if producer(op.operands[0], "stablehlo.pad") is None else NO_MATCH

    monkeypatch.setitem(pad_passes.PATTERNS, "picky", (("stablehlo.negate",), picky))
    text = hf.trace(lambda x: -x, F32).optimize("pad-canonicalize", debug=True).explain()
    assert "picky: declined 1 time: x is not a pad [1]" in text


def test_a_delegating_pattern_reports_its_helpers_precondition():
    m = hf.trace(lambda x: hf.numpy.fft.ifft(hf.numpy.fft.ifft(x)), hf.ShapeDtype((8,), np.complex64))
    text = m.optimize("pattern:fft_of_ifft", debug=True).explain()
    assert "fft_of_ifft: declined 2 times: an IFFT, not an FFT [2]" in text and "reached" not in text


def test_an_fft_plan_says_why_in_words():
    m = hf.trace(lambda x: hf.numpy.fft.fft(x), hf.ShapeDtype((8,), np.complex64))
    text = m.optimize("pattern:fft_of_transpose", debug=True).explain()
    assert "fft_of_transpose: declined 1 time: the operand is not a transpose [1]" in text


def test_debug_runs_rewrite_as_other_runs_do():
    def program(x):
        y = hf.numpy.fft.irfft(hf.numpy.fft.rfft(x) * 2.0, n=8)
        return y + ops.pad(x, 0.0, [1], [0])[1:]
    plain, debug = hf.trace(program, F32), hf.trace(program, F32)
    assert plain.optimize().declines is None
    report = debug.optimize(debug=True)
    assert debug.text == plain.text and report.fired
    assert "slice_of_elementwise" in report.explain()


def test_explain_needs_a_debug_run():
    with pytest.raises(ValueError, match=r"PassReport.explain: .*debug=True"):
        _pads(1.0).optimize("pattern:pad_of_pad").explain()


def test_the_command_line_explains(tmp_path, capsys):
    path = tmp_path / "pads.mlir"
    _pads(1.0).save(path)
    assert main(["opt", str(path), "-p", "pattern:pad_of_pad", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "stablehlo.pad" in out and "pad_of_pad: declined" in out and "different values" in out


def test_a_plan_function_says_why_in_words():
    def pads_of_two_values(x):
        return hf.numpy.concatenate([ops.pad(x, 0.0, [1], [0]), ops.pad(x, 1.0, [0], [1])])
    text = hf.trace(pads_of_two_values, F32).optimize("pattern:concatenate_of_pads", debug=True).explain()
    assert "concatenate_of_pads: declined 1 time: the pads pad with different values [1]" in text

    def interleave(a, b):  # (sum_of_interleaved_pads, rooted at the add it replaces)
        return ops.add(ops.pad(a, 0.0, [0], [1], [1]), ops.pad(b, 0.0, [1], [0], [1]))
    m = hf.trace(interleave, F32, F32)
    text = m.clone().optimize("pattern:sum_of_interleaved_pads", finite_math=False, debug=True).explain()
    assert "sum_of_interleaved_pads: declined 1 time: a float add without finite math (-0.0 + 0.0 is +0.0) [1]" in text
    assert not m.optimize("pattern:sum_of_interleaved_pads", debug=True).explain().count("sum_of_interleaved_pads")


def test_the_command_line_refuses_a_bad_pipeline_in_one_line(tmp_path, capsys):
    path = tmp_path / "pads.mlir"
    _pads(1.0).save(path)
    code = main(["opt", str(path), "-p", "no-such-pass", "--explain"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "unknown pass 'no-such-pass'" in err[0]


def test_the_truncation_and_window_plans_say_why_in_words():
    def spectral(x):  # (the low modes of an rfft, zero-filled before the irfft)
        y = hf.numpy.fft.rfft(x)[:3]
        return hf.numpy.fft.irfft(hf.numpy.pad(y, (0, 2)), n=8)
    m = hf.trace(spectral, F32)
    text = m.clone().optimize("fft-truncate", cost_model="keep-ffts", debug=True).explain()
    lines = {line.split(":")[0].strip(): line for line in text.splitlines()}
    for name, other_kind in (("truncated_forward_fft", "an IRFFT, not a forward transform [1]"),
                             ("truncated_inverse_fft", "an RFFT, not an inverse transform [1]")):
        assert "declined 2 times" in lines[name] and other_kind in lines[name]
        assert "the cost model prefers the FFT [1]" in lines[name]

    def two_windows(x, pad_value):
        return ops.pad(x[:4], 0.0, [2], [0]), ops.pad(x[4:], pad_value, [0], [2])
    text = hf.trace(lambda x: two_windows(x, 1.0), F32).optimize("pattern:pads_of_windows", debug=True).explain()
    assert ("pads_of_windows: declined 2 times: no other window of the same x padded with the same value in "
            "this block [2]") in text
    m = hf.trace(lambda x: two_windows(x, 0.0), F32)
    assert "pads_of_windows" not in m.optimize("pattern:pads_of_windows", debug=True).explain()
    assert m.op_counts()["stablehlo.pad"] == 1


def test_a_debug_run_of_a_program_that_truncates_its_ffts_works():
    def spectral(x):  # (fft-truncate builds DFT matrices in helpers whose arrays have no truth value)
        return hf.numpy.fft.irfft(hf.numpy.pad(hf.numpy.fft.rfft(x)[:3], (0, 2)), n=8)
    m = hf.trace(spectral, F32)
    m.optimize(debug=True)
    assert "stablehlo.fft" not in m.op_counts()


def _plans() -> dict:
    """name -> (roots, plan function) for every pattern whose module has a ``plan_<name>`` (or whose
    callback names its plan, as constant-fold's generated entries do)."""
    import sys
    from hloforge.passes import pipeline
    found = {}
    for name, (_, roots, fn) in pipeline.patterns().items():
        plan = getattr(sys.modules[fn.__module__], f"plan_{name}", None) or getattr(fn, "plan", None)
        if plan is not None:
            roots = roots if isinstance(roots, tuple) else (roots,)
            found[name] = ({getattr(r, "OPERATION_NAME", r) for r in roots}, plan)
    return found


def test_every_pattern_has_a_plan():
    from hloforge.passes import pipeline
    missing = set(pipeline.patterns()) - set(_plans())
    assert missing == {"call_of_function"}  # (inline's one pattern, run as a whole-module pass)


def test_plans_are_pure_and_give_a_plan_or_words():
    """Every plan_<pattern> on every root op of the pad corpora: the module is unchanged, and the
    answer is a reason string or a (truthy) plan."""
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks"))
    import pad_corpus
    plans = _plans()
    assert len(plans) >= 25
    tried, answered = 0, set()
    for version in ("v1", "v3"):
        for m in pad_corpus.load_all(version).values():
            before = m.text
            ops_ = []
            for block_op in m.mlir.body.operations:
                block_op.operation.walk(lambda op: ops_.append(op) or ir.WalkResult.ADVANCE)
            with m.context, ir.Location.unknown(), assume_finite(True), run_cache(), using_cost_model(target.CPU):
                for op in ops_:
                    for name, (roots, plan) in plans.items():
                        if op.name not in roots:
                            continue
                        begin_visit()
                        try:
                            got = plan(op.opview)
                        except Unsupported:
                            continue
                        assert isinstance(got, str) and got or got is not None and not isinstance(got, str), name
                        tried += 1
                        answered.add((name, isinstance(got, str)))
            assert m.text == before
    planned = sorted(name for name, reason in answered if not reason)
    assert tried > 200 and len(planned) >= 3, planned


def test_a_pattern_whose_ops_another_rewrote_first_is_not_called_absent():
    # (`opt --explain` said pad_of_pad was "never tried (the module has none of their root ops)" of a
    # module with two pads: noop_pad, tried before it on each pad, had removed them)
    m = hf.trace(lambda x: ops.pad(ops.pad(x, 0.0, [0], [0]), 0.0, [0], [0]), F32)
    assert m.op_counts()["stablehlo.pad"] == 2
    text = m.clone().optimize("pad-canonicalize", debug=True).explain()
    assert "pad_of_pad: not tried on 2 ops: patterns tried before it rewrote them first: noop_pad [2]" in text
    assert "pad_of_pad" not in text.split("never tried")[-1]
    text = m.optimize("pattern:noop_pad,pattern:pad_of_pad,pattern:noop_transpose", debug=True).explain()
    assert ("never tried (the module had their root ops, but earlier passes removed them, or MLIR folded them, "
            "before their pass ran): pad_of_pad") in text
    assert "never tried (the module has none of their root ops): noop_transpose" in text


def test_a_pattern_both_declined_and_preempted_says_both():
    def program(x):  # (the inner pad pads nothing: noop_pad takes it; pad_of_pad declines the outer one)
        return ops.pad(ops.pad(x, 0.0, [0], [0]), 1.0, [1], [0])
    text = hf.trace(program, F32).optimize("pad-canonicalize", debug=True).explain()
    line = next(line for line in text.splitlines() if line.startswith("  pad_of_pad:"))
    assert line.startswith("  pad_of_pad: declined ") and "the pads pad with different values" in line and line.endswith(
        "; and not tried on 1 op: patterns tried before it rewrote it first: noop_pad [1]"), line
