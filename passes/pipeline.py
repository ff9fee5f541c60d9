"""The pass registry and the pipeline runner behind ``Module.optimize``.

A pass is either a family of patterns (a ``PATTERNS``-style table: name -> (root op
class or names, callback)) applied by MLIR's greedy driver, one pattern of any family
(``pattern:NAME``), or one of MLIR's own passes (``canonicalize``, ``cse``, ``symbol-dce``).
A pipeline is a comma-separated list of pass names; ``default`` is
``inline, symbol-dce, canonicalize, cse`` followed by ``FIXPOINT`` repeated until a round
fires no pattern. The module is verified after every pass.
"""
from __future__ import annotations

import collections
import os
import re
import time

from hloforge.frontend.context import ir, passmanager, rewrite
from hloforge.frontend.module import diagnostics
from hloforge.passes import fft, fold, inline, pad, pad_push, spectral
from hloforge.passes._ir import Unsupported, assume_finite
from hloforge.passes.report import PassReport

FAMILIES = {
    "inline": inline.PATTERNS,
    "constant-fold": fold.PATTERNS,
    "pad-canonicalize": pad.PATTERNS,
    "pad-push": pad_push.PATTERNS,
    "fft-canonicalize": fft.CANONICALIZE,
    "inverse-fft-elimination": fft.INVERSE,
    "fft-truncate": spectral.PATTERNS,
}
FINITE_MATH_ONLY = frozenset({"inverse-fft-elimination", "fft-truncate"})
MLIR_PASSES = ("canonicalize", "cse", "symbol-dce")
FIXPOINT = ("constant-fold", "pad-canonicalize", "pad-push", "fft-canonicalize", "inverse-fft-elimination",
            "fft-truncate")
DEFAULT = ("inline", "symbol-dce", "canonicalize", "cse", FIXPOINT)
MAX_ROUNDS = 32  # rounds of the FIXPOINT group
MAX_ITERATIONS = 64  # the greedy driver's sweeps per pass


def patterns() -> dict:
    """Every pattern: name -> (family, root, callback). Read from the family tables on each call."""
    table = {}
    for family, entries in FAMILIES.items():
        for name, (root, fn) in entries.items():
            if name in table:
                raise ValueError(f"pattern {name!r} is defined by both {table[name][0]} and {family}")
            table[name] = (family, root, fn)
    return table


def pass_names() -> list:
    return ["default", *FAMILIES, *MLIR_PASSES, *(f"pattern:{p}" for p in patterns())]


def parse(pipeline: str) -> list:
    """The steps of ``pipeline``: pass names, and tuples for groups repeated to a fixpoint."""
    if not isinstance(pipeline, str):
        raise TypeError(f"pipeline must be a comma-separated string of pass names, got {pipeline!r}")
    steps, known = [], patterns()
    for name in (p.strip() for p in pipeline.split(",")):
        if name == "default":
            steps.extend(DEFAULT)
        elif name in FAMILIES or name in MLIR_PASSES:
            steps.append(name)
        elif name.startswith("pattern:") and name[len("pattern:"):] in known:
            steps.append(name)
        elif name.startswith("pattern:"):
            raise ValueError(f"unknown pattern {name[8:]!r} in pipeline {pipeline!r}; known patterns: "
                             f"{', '.join(sorted(known))}")
        else:
            raise ValueError(f"unknown pass {name!r} in pipeline {pipeline!r}; known passes: "
                             f"{', '.join(['default', *FAMILIES, *MLIR_PASSES])}, pattern:NAME")
    return steps


def run(module, pipeline: str = "default", finite_math: bool = True, dump_dir=None,
        print_ir_after_change: bool = False) -> PassReport:
    """Rewrite ``module`` (an ``hloforge.Module``) in place; returns a PassReport.

    ``dump_dir`` receives ``NN_<pass>.mlir`` (NN: the pass's position in the run) after each pass
    that changed the module; ``print_ir_after_change`` prints the same text to stdout.
    """
    steps = parse(pipeline)
    report = PassReport(ops_before=module.op_counts())
    start = time.perf_counter()
    watcher = _ChangeWatcher(module, dump_dir, print_ir_after_change) if dump_dir or print_ir_after_change else None
    runner = _Runner(module, report, finite_math, watcher)
    with module.context, ir.Location.unknown(), assume_finite(finite_math):
        for step in steps:
            if isinstance(step, tuple):
                for _ in range(MAX_ROUNDS):
                    if not sum(runner.run(name) for name in step):
                        break
            else:
                runner.run(step)
    report.seconds = time.perf_counter() - start
    report.ops_after = module.op_counts()
    return report


class _Runner:
    """Runs single passes on one module, caching the frozen pattern sets."""

    def __init__(self, module, report: PassReport, finite_math: bool, watcher=None):
        self.module, self.report, self.finite_math = module, report, finite_math
        self.watcher = watcher
        self.frozen: dict = {}

    def run(self, name: str) -> int:
        """Run pass ``name`` and verify; returns how many patterns fired."""
        family = patterns()[name[8:]][0] if name.startswith("pattern:") else name
        if family in FINITE_MATH_ONLY and not self.finite_math:
            if name not in self.report.skipped:
                self.report.skipped.append(name)
            return 0
        start, before = time.perf_counter(), sum(self.report.fired.values())
        text_before = self.watcher.text() if self.watcher else None
        try:
            if name in MLIR_PASSES:
                self._mlir_pass(name)
            else:
                self._patterns(name)
        except Exception as e:
            e.add_note(f"(in hloforge pass {name!r})")
            raise
        self._verify(name)
        fired = sum(self.report.fired.values()) - before
        self.report.passes.append((name, time.perf_counter() - start, fired))
        if self.watcher:
            self.watcher.after(len(self.report.passes), name, text_before)
        return fired

    def _mlir_pass(self, name: str) -> None:
        pm = passmanager.PassManager.parse(f"builtin.module({name})", context=self.module.context)
        try:
            pm.run(self.module.mlir.operation)
        except ir.MLIRError as e:
            raise ValueError(f"pass {name!r} failed: {diagnostics(e)}") from None

    def _patterns(self, name: str) -> None:
        frozen = self.frozen.get(name)
        if frozen is None:
            if name.startswith("pattern:"):
                _, root, fn = patterns()[name[8:]]
                entries = {name[8:]: (root, fn)}
            else:
                entries = FAMILIES[name]
            frozen = self.frozen[name] = _pattern_set(entries, self.report.fired)
        config = rewrite.GreedyRewriteConfig()
        config.max_iterations = MAX_ITERATIONS
        config.region_simplification_level = rewrite.GreedySimplifyRegionLevel.DISABLED
        try:
            rewrite.apply_patterns_and_fold_greedily(self.module.mlir, frozen, config)
        except RuntimeError as e:
            if "converge" not in str(e):
                raise
            raise RuntimeError(f"pass {name!r}: patterns did not converge in {MAX_ITERATIONS} sweeps "
                               "(two patterns undo each other?)") from None

    def _verify(self, name: str) -> None:
        try:
            self.module.mlir.operation.verify()
        except ir.MLIRError as e:
            raise ValueError(f"pass {name!r} produced an invalid module: {diagnostics(e)}") from None


class _ChangeWatcher:
    """Dumps and/or prints the module after every pass that changed its text."""

    def __init__(self, module, dump_dir, echo: bool):
        self.module, self.dump_dir, self.echo = module, dump_dir, echo
        if dump_dir:
            os.makedirs(dump_dir, exist_ok=True)

    def text(self) -> str:
        return self.module.to_text()

    def after(self, index: int, name: str, before: str) -> None:
        text = self.text()
        if text == before:
            return
        if self.echo:
            print(f"// ----- IR after {name} (pass {index}) -----\n{text}", flush=True)
        if self.dump_dir:
            safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
            with open(os.path.join(self.dump_dir, f"{index:02d}_{safe}.mlir"), "w") as f:
                f.write(text)


def _pattern_set(entries: dict, fired: collections.Counter):
    patterns = rewrite.RewritePatternSet()
    for name, (root, fn) in entries.items():
        counted = _counted(name, fn, fired)
        for r in root if isinstance(root, tuple) else (root,):
            patterns.add(r, counted)
    return patterns.freeze()


def _counted(name: str, fn, fired: collections.Counter):
    def pattern(op, rewriter):
        try:
            if fn(op, rewriter):
                return True
        except Unsupported:
            return True
        fired[name] += 1
        return False
    pattern.__name__ = pattern.__qualname__ = name
    pattern.__doc__ = fn.__doc__
    return pattern
