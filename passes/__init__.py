"""Pattern-rewrite passes over StableHLO modules, applied by MLIR's greedy driver.

``Module.optimize(pipeline)`` runs them; see ``pipeline`` for the pass names and the
``PATTERNS`` tables of ``inline``, ``fold``, ``pad``, ``pad_push``, ``fft`` and ``spectral`` for the
patterns (``hloforge.target.CostModel`` decides where ``fft-truncate`` pays off).
"""
from hloforge.passes.pipeline import DEFAULT, FAMILIES, MLIR_PASSES, parse, pass_names, patterns, run
from hloforge.passes.report import PassReport

__all__ = ["PassReport", "run", "parse", "patterns", "pass_names", "FAMILIES", "MLIR_PASSES", "DEFAULT"]
