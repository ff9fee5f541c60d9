"""Sets of indices along one axis, for ``fft-truncate``: the positions where a value may be nonzero and the
modes slices read, as sorted half-open intervals, so planning costs O(intervals), not O(transform length)
(a 2**33-point rfft is planned without a list of its bins)."""
from __future__ import annotations

import bisect

import numpy as np

MAX_SPANS = 1 << 12  # the most intervals a set keeps; more (strided slices, interior pads): unknown


class Positions:
    """A set of indices: ``spans``, sorted, disjoint, non-adjacent (start, stop) pairs (so equal sets are
    equal objects); ``len`` counts the indices."""

    __slots__ = ("spans", "starts", "ranks", "count")

    def __init__(self, spans: tuple):
        self.spans = spans
        self.starts = [a for a, _ in spans]
        self.ranks = [0]  # ranks[i]: the indices before spans[i]
        for a, b in spans:
            self.ranks.append(self.ranks[-1] + b - a)
        self.count = self.ranks[-1]

    @classmethod
    def full(cls, n: int) -> Positions:
        return cls(((0, n),) if n > 0 else ())

    @classmethod
    def of(cls, ranges) -> Positions | None:
        """The union of ``ranges`` (Python ranges of positive step), or None past MAX_SPANS intervals."""
        pieces = []
        for r in ranges:
            if len(r) == 0:
                continue
            if r.step == 1 or len(r) == 1:
                pieces.append((r[0], r[-1] + 1))
            elif len(pieces) + len(r) > 4 * MAX_SPANS:
                return None
            else:
                pieces.extend((p, p + 1) for p in r)
        pieces.sort()
        spans = []
        for a, b in pieces:
            if spans and a <= spans[-1][1]:
                spans[-1] = (spans[-1][0], max(b, spans[-1][1]))
            else:
                spans.append((a, b))
        return cls(tuple(spans)) if len(spans) <= MAX_SPANS else None

    def __len__(self) -> int:
        return self.count

    def __eq__(self, other) -> bool:
        return isinstance(other, Positions) and self.spans == other.spans

    def __hash__(self) -> int:
        return hash(self.spans)

    def __repr__(self) -> str:
        return f"Positions({list(self.spans)})"

    def spread(self, low: int, step: int) -> Positions | None:
        """{low + p * step for p in self}, or None past MAX_SPANS intervals."""
        if step == 1:
            return Positions(tuple((a + low, b + low) for a, b in self.spans))
        if self.count > MAX_SPANS:
            return None
        return Positions.of(range(low + a * step, low + (b - 1) * step + 1, step) for a, b in self.spans)

    def rank(self, p: int) -> int | None:
        """How many indices of the set are below ``p``, ``p`` one of them; None when it is not."""
        i = bisect.bisect_right(self.starts, p) - 1
        if i < 0 or p >= self.spans[i][1]:
            return None
        return self.ranks[i] + p - self.spans[i][0]

    def ranks_of(self, r: range) -> range | None:
        """The ranks of the indices of ``r`` (all in the set) as a range when evenly spaced, else None."""
        first = self.rank(r[0]) if len(r) else None
        if first is None:
            return None
        i = bisect.bisect_right(self.starts, r[0]) - 1
        if r[-1] < self.spans[i][1]:  # one interval: the ranks step as r does
            return range(first, first + r[-1] - r[0] + 1, r.step if len(r) > 1 else 1)
        # Two indices of r in one interval step by r.step, across a gap by less; so evenly spaced
        # ranks over several intervals have each index in an interval of its own.
        if len(r) > len(self.spans):
            return None
        where = [self.rank(p) for p in r]
        if None in where:
            return None
        step = where[1] - where[0]
        return range(where[0], where[-1] + 1, step) if where == list(range(where[0], where[-1] + 1, step)) else None

    def array(self) -> np.ndarray:
        """The indices in order (for the DFT matrices, which the cost model bounds)."""
        return np.concatenate([np.arange(a, b, dtype=np.int64) for a, b in self.spans] or [np.zeros(0, np.int64)])
