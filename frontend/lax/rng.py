"""jax.lax.rng_bit_generator and jax's RandomAlgorithm enum (plain Python data, re-exported)."""
from __future__ import annotations

import operator

import jax
import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax._common import lax_operand

RandomAlgorithm = jax.lax.RandomAlgorithm
_ALGORITHMS = {RandomAlgorithm.RNG_DEFAULT: "DEFAULT", RandomAlgorithm.RNG_THREE_FRY: "THREE_FRY",
               RandomAlgorithm.RNG_PHILOX: "PHILOX"}
_U32, _U64 = np.dtype(np.uint32), np.dtype(np.uint64)


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *, out_sharding=None):
    """jax.lax.rng_bit_generator: random bits from a uint32[4] (or uint64[2]) key and the next key,
    as jax lowers it: ``stablehlo.rng_bit_generator`` on the key as uint64[2] (a ``reshape`` and a
    ``bitcast_convert`` each way for uint32 keys). The bits are the backend's, bit-equal to jax's.

    Args:
      key: a uint32[4] or uint64[2] array.
      shape: the shape of the bits.
      dtype: uint8, uint16, uint32 or uint64.
      algorithm: a RandomAlgorithm.
      out_sharding: None.
    Returns:
      (new key, bits).
    Example:
      >>> key, bits = hf.lax.rng_bit_generator(key, (4,))
    """
    if out_sharding is not None:
        raise ValueError(f"hloforge.lax.rng_bit_generator: out_sharding={out_sharding!r} is not supported here; "
                         "pass None")
    dtype = dtypes.canonical(dtype)
    if dtype not in (np.uint8, np.uint16, np.uint32, np.uint64):
        raise TypeError(f"hloforge.lax.rng_bit_generator: unsupported dtype {dtype}")
    shape = tuple(operator.index(n) for n in shape)
    k = lax_operand(key, "hloforge.lax.rng_bit_generator key")
    if (k.shape, k.dtype) not in (((4,), _U32), ((2,), _U64)):
        raise TypeError(f"hloforge.lax.rng_bit_generator: key must be a uint32[4] or uint64[2] array, got {k}")
    state = ops.bitcast_convert(ops.reshape(k, (2, 2)), _U64) if k.dtype == _U32 else k
    state, bits = ops.rng_bit_generator(state, shape, dtype, _ALGORITHMS[RandomAlgorithm(algorithm)])
    if k.dtype == _U32:
        state = ops.reshape(ops.bitcast_convert(state, _U32), (4,))
    return state, bits


__all__ = ["RandomAlgorithm", "rng_bit_generator"]
