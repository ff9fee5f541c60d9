"""The pass registry and the pipeline runner behind ``Module.optimize``.

A pass is either a family of patterns (a ``PATTERNS`` table: name -> (tuple of root op
names, callback returning NO_MATCH when it did not rewrite)) applied by MLIR's greedy driver, one pattern of any family
(``pattern:NAME``), or one of MLIR's own passes (``canonicalize``, ``cse``, ``symbol-dce``).
A pipeline is a comma-separated list of pass names; ``default`` is
``inline, symbol-dce, canonicalize, cse``, then the ``FIXPOINT`` families together, then
``dot-layout`` (after fft-truncate has seen the einsums it reads) and ``division-guard``. The
families of ``FIXPOINT`` run as one pattern set in one greedy-driver run (in
family order where several patterns share a root op), so the driver revisits only what changed
instead of re-sweeping every family until a round fires nothing. The module is verified after
every pattern pass that fired (MLIR's own passes and folds are trusted, which keeps verification
off the hot path).
"""
from __future__ import annotations

import contextlib
import os
import re
import time

from hloforge import target
from hloforge.frontend.context import ir, passmanager
from hloforge.frontend.context import diagnostics
from hloforge.frontend.module import Module
from hloforge.passes import (
    dot_layout, driver, explain, fft, fold, guards, indexing, inline, pad, pad_push, spec_semantics, spectral)
from hloforge.passes._ir import assume_finite, run_cache, using_cost_model, using_dft_precision
from hloforge.passes.isolate import sink_constants
from hloforge.passes.report import PassReport

FAMILIES = {
    "inline": inline.PATTERNS,
    "constant-fold": fold.PATTERNS,
    "pad-canonicalize": pad.PATTERNS,
    "pad-push": pad_push.PATTERNS,
    "index-windows": indexing.PATTERNS,
    "fft-canonicalize": fft.CANONICALIZE,
    "inverse-fft-elimination": fft.INVERSE,
    "division-guard": guards.PATTERNS,
    "fft-truncate": spectral.PATTERNS,
    "dot-layout": dot_layout.PATTERNS,
    "spec-semantics": spec_semantics.PATTERNS,  # (opt-in: in no default pipeline; hloforge check applies it)
}
FINITE_MATH_ONLY = frozenset({"inverse-fft-elimination", "fft-truncate", "dot-layout"})
MLIR_PASSES = ("canonicalize", "cse", "symbol-dce")
FIXPOINT = ("constant-fold", "pad-canonicalize", "pad-push", "index-windows", "fft-canonicalize",
            "inverse-fft-elimination", "fft-truncate")
# (dot-layout's flattened products leave reshape pairs, [b, c, h*w] -> [b, c, h, w] -> [b, c, h*w] between two
# products and the biases' [c] -> [1, c, 1, 1] -> [1, c]: index-windows' reshape_of_reshape merges them in the
# same run)
DEFAULT = ("inline", "symbol-dce", "canonicalize", "cse", FIXPOINT, ("dot-layout", "pattern:reshape_of_reshape"),
           "division-guard")
SYMBOL_PASSES = ("inline", "symbol-dce")  # no-ops on a module of one public function
MAX_ITERATIONS = 64  # the greedy driver's sweeps per pass (it stops after a sweep that changed nothing)


def patterns() -> dict:
    """Every pattern: name -> (family, roots, callback), read from the family tables."""
    table = {}
    for family, entries in FAMILIES.items():
        for name, (root, fn) in entries.items():
            if name in table:
                raise ValueError(f"pattern {name!r} is defined by both {table[name][0]} and {family}")
            table[name] = (family, root, fn)
    return table


def pass_names() -> list:
    return ["default", *FAMILIES, *MLIR_PASSES, *(f"pattern:{p}" for p in patterns())]


def parse(pipeline: str, table: dict | None = None) -> list:
    """The steps of ``pipeline``: pass names, and tuples for groups run together to a fixpoint."""
    if not isinstance(pipeline, str):
        raise TypeError(f"pipeline must be a comma-separated string of pass names, got {pipeline!r}")
    steps, known = [], patterns() if table is None else table
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


def run(module, pipeline: str = "default", *, finite_math: bool = True, dump_dir=None,
        print_ir_after_change: bool = False, cost_model: target.CostModel | None = None,
        debug: bool = False, dft_precision: str = "highest") -> PassReport:
    """Rewrite ``module`` (an ``hloforge.Module``) in place; returns a PassReport.

    ``dump_dir`` receives ``NN_<pass>.mlir`` (NN: the pass's position in the run) after each pass
    that changed the module; ``print_ir_after_change`` prints the same text to stdout.
    ``cost_model`` is what ``fft-truncate`` assumes about the target (None: ``target.CPU``);
    ``Module.optimize`` resolves names and ``hf.config``'s default into one. ``debug`` records why
    each pattern declined (``PassReport.explain()``; slower: the patterns run under a trace function).
    ``dft_precision`` is the precision of the partial DFTs' contractions (``Module.optimize``).
    """
    precision = target.check_dft_precision(dft_precision, "hloforge.passes.run: dft_precision").upper()
    if cost_model is not None and not isinstance(cost_model, target.CostModel):
        raise TypeError(f"hloforge.passes.run: cost_model must be a hloforge.target.CostModel or None, got "
                        f"{cost_model!r} (Module.optimize takes names)")
    table = patterns()
    steps = parse(pipeline, table)
    report = PassReport(ops_before=module.op_counts())
    start = time.perf_counter()
    watcher = _ChangeWatcher(module, dump_dir, print_ir_after_change) if dump_dir or print_ir_after_change else None
    declines = explain.Declines() if debug else None
    runner = _Runner(module, report, finite_math, table, watcher, declines)
    with module.context, ir.Location.unknown(), assume_finite(finite_math), run_cache(), \
            using_cost_model(cost_model or target.CPU), using_dft_precision(precision):
        for step in steps:
            runner.run(step)
        sink_constants(module)  # (MLIR's folders hoist constants out of the bodies hloforge treats as isolated)
    report.seconds = time.perf_counter() - start
    report.ops_after = module.op_counts()
    report.declines = declines
    return report


class _Runner:
    """Runs single passes on one module, caching frozen pattern sets and pass managers."""

    def __init__(self, module, report: PassReport, finite_math: bool, table: dict, watcher=None, declines=None):
        self.module, self.report, self.finite_math = module, report, finite_math
        self.table, self.watcher, self.declines = table, watcher, declines
        self.frozen: dict = {}

    def run(self, step) -> int:
        """Run pass ``step`` (a name, or a tuple of families run together) and verify if it fired;
        returns how many patterns fired."""
        if isinstance(step, tuple):
            names = tuple(f for f in step if self._enabled(f))
            label = "+".join(names)
        else:
            names, label = (step,), step
            family = self.table[step[8:]][0] if step.startswith("pattern:") else step
            if not self._enabled(family, step):
                return 0
        if not names:
            return 0
        start, before = time.perf_counter(), sum(self.report.fired.values())
        text_before = self.watcher.text() if self.watcher else None
        try:
            if label in SYMBOL_PASSES and _one_public_function(self.module):
                pass  # (nothing to inline or to drop; the driver would still visit every op)
            elif label == "symbol-dce":
                with _entry_kept(self.module):
                    self._mlir_pass(label)
            elif label in MLIR_PASSES:
                self._mlir_pass(label)
            elif label in ("inline", f"pattern:{inline.PATTERN}"):
                self._inline()
            else:
                self._patterns(names)
        except Exception as e:
            e.add_note(f"(in hloforge pass {label!r})")
            raise
        fired = sum(self.report.fired.values()) - before
        if fired:
            self._verify(label)
        self.report.passes.append((label, time.perf_counter() - start, fired))
        if self.watcher:
            self.watcher.after(len(self.report.passes), label, text_before)
        return fired

    def _enabled(self, family: str, name: str | None = None) -> bool:
        if family in FINITE_MATH_ONLY and not self.finite_math:
            if (name or family) not in self.report.skipped:
                self.report.skipped.append(name or family)
            return False
        return True

    def _mlir_pass(self, name: str) -> None:
        pm = self.frozen.get(name)
        if pm is None:
            pm = self.frozen[name] = passmanager.PassManager.parse(f"builtin.module({name})",
                                                                   context=self.module.context)
            pm.enable_verifier(False)
        try:
            pm.run(self.module.mlir.operation)
        except ir.MLIRError as e:
            raise ValueError(f"pass {name!r} failed: {diagnostics(e)}") from None

    def _inline(self) -> None:
        # (one pass over the call graph, not the greedy driver: that would also inline into every
        # private function of a call chain, quadratic in its length)
        count = inline.run(self.module)
        if count:
            self.report.fired[inline.PATTERN] += count

    def _patterns(self, names: tuple) -> None:
        frozen = self.frozen.get(names)
        if frozen is None:
            entries = {}
            for name in names:
                if name.startswith("pattern:"):
                    _, root, fn = self.table[name[8:]]
                    entries[name[8:]] = (root, fn)
                else:
                    entries.update(FAMILIES[name])
            if self.declines is not None:
                for name, (roots, _) in entries.items():
                    self.declines.expect(name, roots)
            frozen = self.frozen[names] = driver.pattern_set(entries, self.report.fired, self.declines)
        try:
            driver.apply(self.module.mlir, frozen, MAX_ITERATIONS)
        except RuntimeError as e:
            if "converge" not in str(e):
                raise
            raise RuntimeError(f"pass {'+'.join(names)!r}: patterns did not converge in {MAX_ITERATIONS} sweeps "
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


def _one_public_function(module) -> bool:
    """Whether the module holds a single op, a public func.func: no call can reach another
    function (``inline`` inlines only those) and ``symbol-dce`` keeps public symbols."""
    ops = iter(module.mlir.body.operations)
    first, second = next(ops, None), next(ops, None)
    if first is None or second is not None or first.operation.name != "func.func":
        return False
    visibility = first.attributes["sym_visibility"] if "sym_visibility" in first.attributes else None
    return visibility is None or ir.StringAttr(visibility).value == "public"


@contextlib.contextmanager
def _entry_kept(module):
    """The module's entry function made public while the block runs, so that symbol-dce keeps it
    (and what it calls) even when it is private: hloforge never deletes the entry; compile()
    refuses a private one with a message saying so."""
    entry = next((f for f in module.functions()
                  if ir.StringAttr(f.attributes["sym_name"]).value == module.entry), None)
    private = entry is not None and "sym_visibility" in entry.attributes
    saved = entry.attributes["sym_visibility"] if private else None
    if private:
        del entry.attributes["sym_visibility"]
    try:
        yield
    finally:
        if private:
            entry.attributes["sym_visibility"] = saved


def optimize(self, pipeline: str = "default", *, finite_math: bool = True, dump_dir=None,
             print_ir_after_change: bool = False, cost_model=None, debug: bool = False,
             dft_precision: str | None = None):
    """Rewrite this module in place with a pass pipeline; returns a ``PassReport``.

    Args:
      pipeline: comma-separated pass names (``hloforge.passes.pass_names()``), e.g.
        ``"default"``, ``"inline,symbol-dce"`` or ``"pattern:pad_of_pad"``.
      finite_math: assume no Inf/NaN, which allows removing FFT round trips (an Inf
        in x becomes NaN everywhere through ``irfft(rfft(x))``) and reassociating
        float scales; False keeps FFT pairs, and skips the families that change rounding
        (``FINITE_MATH_ONLY``: inverse-fft-elimination, fft-truncate, dot-layout).
      dump_dir: write ``NN_<pass>.mlir`` there after each pass that changed the module
        (NN: the pass's position in the run).
      print_ir_after_change: print the module after each pass that changed it.
      cost_model: what ``fft-truncate`` (and ``dot-layout``, CPU only) assumes about the target: "cpu",
        "gpu", "keep-ffts" or a ``hloforge.target.CostModel``; None uses ``hf.config.cost_model``, and
        when that is None too the model of ``hf.config.device`` (``target.resolve``).
      debug: record why each pattern declined; ``report.explain()`` lists the patterns that never
        fired with the precondition that stopped them (slower: for finding a missed rewrite).
      dft_precision: the precision of the contractions a partial DFT (``fft-truncate``) is made of:
        "highest" (as accurate as an FFT on every device), or, trading accuracy for speed,
        "high" (on a TPU three bfloat16 passes, about 1e-5 relative) or "default" (the device's
        fastest: one bfloat16 pass on a TPU, as jax's f32 dots there); None: ``hf.config.dft_precision``
        ("highest" unless set). XLA:CPU computes f32 dots in f32 whatever is asked (docs/passes.md,
        "Spectral truncation and the cost model").
    Raises:
      ValueError: an unknown pass name, or a pass left an invalid module (the
        message names the pass and carries MLIR's diagnostic).
    Example:
      >>> report = m.optimize(); print(report)
      >>> print(m.optimize("pattern:pad_of_pad", debug=True).explain())
    """
    self.pending_optimize = None  # (an explicit pipeline replaces the one hf.jit's lower() left for compile)
    return run(self, pipeline, finite_math=finite_math, dump_dir=dump_dir,
               print_ir_after_change=print_ir_after_change, cost_model=target.resolve(cost_model), debug=debug,
               dft_precision=target.resolve_dft_precision(dft_precision, "Module.optimize: dft_precision"))


Module.optimize = optimize
