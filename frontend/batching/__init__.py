"""Batching on StableHLO IR: hf.vmap and Module.vmap. Each op's rule is its registry entry's
``batch`` rule (``OpInfo.rules["batch"]``), set by the modules here, one per op family of
``frontend/ops/`` (same name), imported below."""
from hloforge.frontend.batching import elementwise  # noqa: F401  (they fill OPS[...].rules["batch"])
from hloforge.frontend.batching.api import vmap

__all__ = ["vmap"]
