"""The op registry: one entry per StableHLO op hloforge can emit.

Each entry ties the public builder to its shape/dtype rule; later work (reverse-mode
differentiation) attaches a derivative rule to the same entry.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Optional


@dataclasses.dataclass
class OpInfo:
    name: str                      # the StableHLO op, e.g. "stablehlo.add"
    builder: Callable              # the public hloforge.ops function
    rule: Optional[Callable]       # shape/dtype rule: (operands..., params) -> [(shape, dtype)]
    vjp: Optional[Callable] = None  # derivative rule, filled in by the AD work


OPS: dict[str, OpInfo] = {}


def register(name: str, rule: Optional[Callable] = None):
    """Decorator: record ``builder`` as the hloforge.ops function that emits ``name``."""
    def wrap(builder):
        OPS[name] = OpInfo(name, builder, rule)
        builder.stablehlo_op = name
        return builder
    return wrap


def lookup(name: str) -> OpInfo:
    try:
        return OPS[name]
    except KeyError:
        raise KeyError(f"no hloforge builder for {name!r}; known: {', '.join(sorted(OPS))}") from None
