"""Batching rules of ``frontend/ops/slicing.py`` (see frontend/batching/core.py for the rule signature)."""
from __future__ import annotations
