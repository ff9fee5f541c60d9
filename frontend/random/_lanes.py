"""One key per element ("lanes"): what ``jax.vmap`` of a scalar sampler computes, written batched.

jax's gamma sampler runs a rejection loop per element under ``vmap``, each element with its own
key from ``split(key, n)``. Threefry is elementwise, so a batch of keys is two uint32 words per
lane, ``(k1, k2)`` of shape ``(n,)``; splitting them, or drawing one value per lane, hashes the
counters jax would hash for each lane's own call (``split(k, num)``: 0..num-1, a scalar draw: 0).

The hash here is threefry2x32 as jax lowers it on CPU, a ``stablehlo.while`` over its five groups
of four rounds (the same bits as the unrolled form of ``_keys.threefry2x32``): these draws sit in
rejection loops, and XLA compiles the rolled form several times faster.
"""
from __future__ import annotations

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.lax.control_flow import while_loop
from hloforge.frontend.numpy._base import splat
from hloforge.frontend.random._keys import _KS_PARITY, _ROTATIONS, U32, combine_bits, iota_2x32, key_words
from hloforge.frontend.random._samplers import uniform_bit_width, uniform_of_bits
from hloforge.frontend.tracing import Tensor


_I32 = np.dtype(np.int32)


def rolled_threefry(k1: Tensor, k2: Tensor, x1: Tensor, x2: Tensor):
    """``_keys.threefry2x32`` as a loop: each iteration four rounds with the rotations of its parity,
    then the next key-schedule words (the schedule and the rotations rotate through the carry)."""
    shape = x1.shape
    wide = [k if k.shape == shape else ops.broadcast_in_dim(k, shape, ()) for k in (k1, k2)]
    ks = wide + [ops.xor(ops.xor(wide[0], wide[1]), splat(_KS_PARITY, U32, shape))]
    rotations = [ops.constant(np.array(r, np.uint32)) for r in _ROTATIONS]

    def body(carry):
        i, x0, x1, a, b, c, now, later = carry
        for j in range(4):
            r = ops.broadcast_in_dim(ops.reshape(ops.slice(now, (j,), (j + 1,)), ()), shape, ())
            rotated = ops.or_(ops.shift_left(x1, r),
                              ops.shift_right_logical(x1, ops.subtract(splat(32, U32, shape), r)))
            x0 = ops.add(x0, x1)
            x1 = ops.xor(x0, rotated)
        i = ops.add(i, splat(1, _I32, ()))
        x0 = ops.add(x0, b)
        x1 = ops.add(ops.add(x1, c), ops.broadcast_in_dim(ops.convert(i, U32), shape, ()))
        return [i, x0, x1, b, c, a, later, now]
    init = [splat(0, _I32, ()), ops.add(x1, ks[0]), ops.add(x2, ks[1]), *ks, *rotations]
    out = while_loop(lambda carry: ops.compare(carry[0], splat(5, _I32, ()), "LT"), body, init)
    return out[1], out[2]


def lanes_of(keys: Tensor, n: int):
    """``split(key, n)`` of each key of ``keys`` (uint32 ``(m, 2)``), one after the other, as lane
    words ``(k1, k2)``, each uint32 of shape ``(m * n,)``."""
    if n > 2 ** 32:
        raise ValueError(f"hloforge.random: {n} samples need more than 2**32 keys")
    m = keys.shape[0]
    shape = (m, n)
    k1, k2 = (ops.broadcast_in_dim(ops.reshape(ops.slice(keys, (0, i), (m, i + 1)), (m,)), shape, (0,))
              for i in (0, 1))
    b1, b2 = rolled_threefry(k1, k2, splat(0, U32, shape), ops.iota(shape, U32, 1))
    return ops.reshape(b1, (m * n,)), ops.reshape(b2, (m * n,))


def lane_split(k1: Tensor, k2: Tensor, num: int):
    """Each lane's ``split(key, num)``: ``num`` pairs of lane words."""
    n = k1.shape[0]
    shape = (n, num)
    wide = [ops.broadcast_in_dim(k, shape, (0,)) for k in (k1, k2)]
    b1, b2 = rolled_threefry(*wide, splat(0, U32, shape), ops.iota(shape, U32, 1))

    def column(b, j):
        return ops.reshape(ops.slice(b, (0, j), (n, j + 1)), (n,))
    return [(column(b1, j), column(b2, j)) for j in range(num)]


def lane_bits(k1: Tensor, k2: Tensor, bit_width: int) -> Tensor:
    """Each lane's ``random_bits(key, bit_width, ())``: threefry of the counter (0, 0)."""
    zero = splat(0, U32, k1.shape)
    return combine_bits(*rolled_threefry(k1, k2, zero, zero), bit_width)


def lane_uniform(k1: Tensor, k2: Tensor, dtype, minval=0.0, maxval=1.0) -> Tensor:
    """Each lane's ``uniform(key, (), dtype, minval, maxval)``."""
    shape = k1.shape
    return uniform_of_bits(lane_bits(k1, k2, uniform_bit_width(dtype)), dtype, splat(minval, dtype, shape),
                           splat(maxval, dtype, shape))


def lane_normal(k1: Tensor, k2: Tensor, dtype) -> Tensor:
    """Each lane's ``normal(key, (), dtype)``: ``sqrt(2) * erf_inv(uniform(nextafter(-1, 0), 1))``."""
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = lane_uniform(k1, k2, dtype, lo, 1.0)
    return ops.multiply(splat(np.sqrt(2), dtype, u.shape), ops.erf_inv(u))


# ---------------------------------------------------------------- one key, inside loops

def loop_split(key: Tensor, num: int):
    """``split(key, num)`` as ``num`` uint32[2] keys, through the rolled hash."""
    k1, k2 = key_words(key)
    b1, b2 = rolled_threefry(k1, k2, splat(0, U32, (num,)), ops.iota((num,), U32))
    words = [ops.broadcast_in_dim(b, (num, 1), (0,)) for b in (b1, b2)]
    keys = ops.concatenate(words, 1)
    return [ops.reshape(ops.slice(keys, (j, 0), (j + 1, 2)), (2,)) for j in range(num)]


def loop_uniform(key: Tensor, shape, dtype) -> Tensor:
    """``uniform(key, shape, dtype)`` (in [0, 1)) through the rolled hash (counters as ``_keys``'s)."""
    k1, k2 = key_words(key)
    hi, lo = iota_2x32(shape)
    bits = combine_bits(*rolled_threefry(k1, k2, hi, lo), uniform_bit_width(dtype))
    return uniform_of_bits(bits, dtype, splat(0.0, dtype, shape), splat(1.0, dtype, shape))


__all__: list = []
