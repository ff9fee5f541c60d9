"""Batching rules of ``frontend/ops/bits.py``.

bitcast_convert and reduce_precision keep the batch dimension (a bitcast to a narrower type adds
a last dimension, one to a wider type removes it: a batch dimension there moves to the front).

rng_bit_generator with a batched state draws each example's bits from its own state, one op per
example (``_loop.per_example``), so the results are the loop's. jax.vmap of
jax.lax.rng_bit_generator does not give the loop: jax's rule draws all ``size`` examples' bits from
the first state alone (one call of shape ``(size, *shape)``) and advances only that state, leaving
the others as they were; hloforge gives the loop instead (docs/vmap.md).
"""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.batching._loop import per_example
from hloforge.frontend.batching._util import moveaxis
from hloforge.frontend.ops.bits import _bits
from hloforge.frontend.registry import def_rule


@def_rule("batch", "stablehlo.bitcast_convert")
def _bitcast_convert_batch(size, ins, dims, *, dtype):
    """Pattern: bitcast(x[b at d], t) -> bitcast(x, t)[b at d]; to a wider t with d last, moved first."""
    (x,), (d,) = ins, dims
    if _bits(dtype) > _bits(x.dtype) and d == x.ndim - 1:
        x, d = moveaxis(x, d, 0), 0
    return [ops.bitcast_convert(x, dtype)], [d]


@def_rule("batch", "stablehlo.reduce_precision")
def _reduce_precision_batch(size, ins, dims, *, exponent_bits, mantissa_bits):
    """Pattern: reduce_precision(x[b at d]) -> reduce_precision(x)[b at d]."""
    return [ops.reduce_precision(ins[0], exponent_bits, mantissa_bits)], [dims[0]]


@def_rule("batch", "stablehlo.rng_bit_generator")
def _rng_bit_generator_batch(size, ins, dims, *, shape, dtype, algorithm):
    """Pattern: rng(state[b]) -> stack_i rng(state[i]) [b at 0] (each example its own stream)."""
    return per_example(size, ins, dims, lambda state: list(ops.rng_bit_generator(state, shape, dtype, algorithm)))
