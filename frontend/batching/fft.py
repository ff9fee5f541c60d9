"""Batching rules of ``frontend/ops/fft.py`` (see frontend/batching/core.py for the rule signature)."""
from __future__ import annotations
