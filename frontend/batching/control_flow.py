"""Batching rules of ``frontend/ops/control_flow.py`` (see frontend/batching/core.py for the rule signature)."""
from __future__ import annotations
