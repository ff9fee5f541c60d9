"""``PassReport``: what ``Module.optimize`` did."""
from __future__ import annotations

import collections
import dataclasses


@dataclasses.dataclass
class PassReport:
    """The result of running a pass pipeline on a module.

    Attributes:
      fired: pattern name -> how many times it rewrote the module.
      ops_before, ops_after: op name -> count (``Module.op_counts``) around the pipeline.
      seconds: wall time of the whole pipeline.
      passes: (pass name, seconds, patterns fired) for every pass run, in order.
      skipped: passes not run because ``finite_math=False``.
      declines: with ``optimize(debug=True)``, why each pattern declined (``explain()``); else None.
    """
    fired: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    ops_before: dict = dataclasses.field(default_factory=dict)
    ops_after: dict = dataclasses.field(default_factory=dict)
    seconds: float = 0.0
    passes: list = dataclasses.field(default_factory=list)
    skipped: list = dataclasses.field(default_factory=list)
    declines: object = None

    def explain(self) -> str:
        """The run's patterns that never fired, each with the preconditions that stopped it and how
        often (op visits); needs ``optimize(debug=True)``."""
        if self.declines is None:
            raise ValueError("PassReport.explain: this report has no reasons; run Module.optimize(..., debug=True)")
        from hloforge.passes import explain
        return explain.explain(self.declines, self.fired, self.ops_before)

    def __str__(self):
        before, after = sum(self.ops_before.values()), sum(self.ops_after.values())
        lines = [f"PassReport: {len(self.passes)} passes in {self.seconds:.3f} s, {before} -> {after} ops"]
        if self.fired:
            lines.append(f"  {'pattern':<32}{'fired':>8}")
            lines += [f"  {name:<32}{n:>8}" for name, n in sorted(self.fired.items())]
        changed = sorted(n for n in set(self.ops_before) | set(self.ops_after)
                         if self.ops_before.get(n, 0) != self.ops_after.get(n, 0))
        if changed:
            lines.append(f"  {'op':<32}{'before':>8}{'after':>8}")
            lines += [f"  {n:<32}{self.ops_before.get(n, 0):>8}{self.ops_after.get(n, 0):>8}"
                      for n in changed]
        if self.skipped:
            lines.append(f"  skipped (finite_math=False): {', '.join(self.skipped)}")
        return "\n".join(lines)
