"""Derivative rules of the bit ops (frontend/ops/bits.py): bitcast_convert (bit reinterpretation,
jax: defjvp_zero) and rng_bit_generator (random bits) have zero tangents; reduce_precision is
linear (applied to the (co)tangent)."""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.ad._util import deflinear, zero_rules

zero_rules("stablehlo.bitcast_convert", "stablehlo.rng_bit_generator")
deflinear("stablehlo.reduce_precision", lambda ct, x, **p: [ops.reduce_precision(ct, **p)])
