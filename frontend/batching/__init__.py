"""Batching on StableHLO IR: hf.vmap and Module.vmap. Each op's rule is its registry entry's
``batch`` rule (``OpInfo.rules["batch"]``), set by the modules here, one per op family of
``frontend/ops/`` (same name), imported below."""
from hloforge.frontend.batching import (  # noqa: F401  (they fill OPS[...].rules["batch"])
    bits, collective, compare, control_flow, convert, convolution, custom, elementwise, factorization, fft, linalg,
    normalization, pad, shape, slicing, sort, structure, top_k, tuples, window)
from hloforge.frontend.batching.api import vmap

__all__ = ["vmap"]
