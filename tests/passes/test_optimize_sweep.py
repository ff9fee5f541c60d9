"""benchmarks/optimize_sweep.py: random programs on special-value inputs (signed zeros, NaNs of both
signs and several payloads, infinities, subnormals, complex numbers with inf/NaN parts) keep every
output bit through ``optimize(finite_math=False)``; a fixed-seed slice of the sweep, and its parts."""
from __future__ import annotations

import io
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks"))
import optimize_sweep as sweep  # noqa: E402

SEEDS = 24  # (about 3 s on the 2-core machine)


def test_a_fixed_slice_of_the_sweep_changes_no_bit():
    out = io.StringIO()
    fired, bad, _ = sweep.sweep(SEEDS, start=0, out=out)  # (NaN signs and payloads: docs/passes.md)
    assert not bad, out.getvalue()
    assert sum(fired.values()) >= 20 and len(fired) >= 8, fired  # (the programs reach the patterns)


def test_inputs_hold_every_kind_of_special_value():
    x = sweep.special_values((4096,), np.float32, 0)
    u = x.view(np.uint32)
    assert (u == 0x80000000).any() and (u == 0).any()                        # -0.0, +0.0
    assert (np.isnan(x) & np.signbit(x)).any() and (np.isnan(x) & ~np.signbit(x)).any()
    assert len(set(u[np.isnan(x)].tolist())) >= 4                            # distinct payloads
    assert np.isposinf(x).any() and np.isneginf(x).any()
    assert ((x != 0) & (np.abs(x) < np.finfo(np.float32).tiny)).any()         # subnormals
    z = sweep.special_values((4096,), np.complex64, 1)
    assert (np.isinf(z.real) & np.isfinite(z.imag)).any() and (np.isnan(z.imag) & np.isfinite(z.real)).any()


def test_differences_compare_bits_not_values():
    a = np.float32([0.0, np.nan, 1.0])
    b = np.float32([-0.0, -np.nan, 1.0])
    assert [(i, k, kind) for i, k, _, _, kind in sweep.differences([a], [b])] == [(0, 0, "value"), (0, 1, "nan")]
    z = np.complex64([complex(np.inf, 0.0)])
    assert sweep.differences([z], [np.complex64([complex(np.inf, -0.0)])])
    assert not sweep.differences([a.copy()], [a.copy()])


def test_the_programs_that_found_bugs_keep_their_bits():
    """Seeds whose programs once changed bits or raised (docs/passes.md, "The optimize sweep"): 20 (complex
    x * (1+0j)), 522 (complex x / 0j), 1139 (f of constant padding values XLA folds otherwise), 279 (a
    constant divisor where there was a run-time one), 59 (concatenate_of_pads of a crop past its operand), 1795
    (reduce_of_pad's float min and a subnormal)."""
    for seed in (20, 522, 1139, 279, 59, 1795):
        found, _ = sweep.check(seed)
        assert not [d for d in found if d[-1] == "value"], (seed, found)
