"""fft-truncate's index sets as intervals: the same answers as plain sets, and planning that does not grow
with the transform's length."""
from __future__ import annotations

import resource
import time

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import hloforge as hf
import hloforge.numpy as hnp
from hloforge.passes import spectral
from hloforge.passes.spectral_positions import MAX_SPANS, Positions

ranges = st.builds(lambda a, n, s: range(a, a + n * s, s), st.integers(0, 40), st.integers(0, 12), st.integers(1, 4))


@settings(max_examples=300, deadline=None)
@given(st.lists(ranges, min_size=1, max_size=5), st.integers(0, 4), st.integers(1, 3), st.integers(0, 5),
       st.integers(1, 3))
def test_positions_agree_with_sets(parts, first, every, low, step):
    p = Positions.of(parts)
    want = sorted(set().union(*map(set, parts)))
    assert list(p.array()) == want and len(p) == len(want)
    assert p == Positions.of([range(i, i + 1) for i in want])  # one canonical form per set
    assert [p.rank(i) for i in range(50)] == [want.index(i) if i in want else None for i in range(50)]
    assert list(p.spread(low, step).array()) == [low + i * step for i in want]
    r = parts[0][first::every]  # (indices of the set, as a slice reads them)
    ranks = [want.index(i) for i in r]
    d = ranks[1] - ranks[0] if len(ranks) > 1 else 1
    got = p.ranks_of(r)
    if ranks and ranks == list(range(ranks[0], ranks[-1] + 1, d)):
        assert got == range(ranks[0], ranks[-1] + 1, d)
    else:
        assert got is None


def test_too_many_intervals_is_unknown():
    assert Positions.of([range(0, 4 * MAX_SPANS, 2)]) is None
    assert Positions.full(1 << 40).spread(0, 2) is None
    assert len(Positions.full(1 << 40).spread(3, 1)) == 1 << 40


def test_a_2_33_point_rfft_is_planned_without_a_list_of_its_bins():
    """(A list per bin made a 2**26-point rfft cost 4 s and 4 GB here, and 2**33 points a MemoryError.)"""
    for fn in (hnp.fft.rfft, lambda x: hnp.fft.rfft(x)[:5]):
        m = hf.trace(fn, hf.ShapeDtype((2**33,), np.float32))
        before, start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.perf_counter()
        report = m.optimize(cost_model="gpu")
        assert time.perf_counter() - start < 2 and resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000
        assert sum(report.fired[p] for p in spectral.PATTERNS) == 0, report
        assert m.op_counts()["stablehlo.fft"] == 1
