"""Derivative rules of the bit ops (frontend/ops/bits.py): bitcast_convert (bit reinterpretation,
jax: defjvp_zero) and rng_bit_generator (random bits) have zero tangents; reduce_precision is
linear (applied to the (co)tangent)."""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.ad._util import zero_rules
from hloforge.frontend.registry import def_rule

zero_rules("stablehlo.bitcast_convert", "stablehlo.rng_bit_generator")

def_rule("jvp", "stablehlo.reduce_precision")(lambda ins, outs, ts, **p: [ops.reduce_precision(ts[0], **p)])
def_rule("vjp", "stablehlo.reduce_precision")(lambda ins, outs, cts, **p: [ops.reduce_precision(cts[0], **p)])
