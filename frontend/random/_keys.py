"""PRNG keys and raw bits: the threefry2x32 hash, PRNGKey/key, split, fold_in, bits.

The derivations are jax.random's with its default ``jax_threefry_partitionable=True``
(jax 0.10): counters are a reshaped 64-bit iota split into (hi, lo) uint32 halves, one
threefry2x32 call per element, and ``bits`` xors the two output words.
"""
from __future__ import annotations

import math
import operator

import jax
import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.numpy._base import splat
from hloforge.frontend.random._eager import eager, jax_typed_key_data, uint32_array
from hloforge.frontend.tracing import Tensor, as_tensor

U32 = np.dtype(np.uint32)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KS_PARITY = 0x1BD11BDA


# ---------------------------------------------------------------- validation

def shape_tuple(name: str, shape) -> tuple:
    """A shape as a tuple of non-negative Python ints (an int means a 1-d shape)."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        out = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be a sequence of ints, got {shape!r}") from None
    if any(s < 0 for s in out):
        raise ValueError(f"{name}: shape {out} has a negative dimension")
    return out


def check_key(name: str, key, batched: bool = False):
    """``key`` validated as a uint32[2] PRNG key (or a batch ``(..., 2)`` of them with ``batched``):
    the Tensor, or the uint32 data of an array or jax typed key; wrong types, dtypes or shapes raise."""
    if not isinstance(key, Tensor):
        data = jax_typed_key_data(key)
        if data is None:
            try:
                data = np.asarray(key)
            except (TypeError, ValueError):
                data = None
            if data is None or data.dtype == object:
                raise TypeError(f"{name}: key must be a uint32[2] PRNG key (from PRNGKey, split or "
                                f"fold_in), got {type(key).__name__}")
        key = data
    if np.dtype(key.dtype) != U32:
        raise TypeError(f"{name}: key must be a uint32[2] PRNG key (from PRNGKey, split or fold_in), "
                        f"got dtype {key.dtype}")
    shape = tuple(key.shape)
    if batched:
        if shape[-1:] != (2,):
            raise ValueError(f"{name}: key data must have a trailing dimension of size 2 (threefry2x32 "
                             f"keys), got shape {shape}")
    elif shape != (2,):
        hint = "; index one key of split(key, n) first" if shape[-1:] == (2,) else ""
        raise ValueError(f"{name}: key must have shape (2,), got shape {shape}{hint}")
    return key


def key_operand(name: str, key) -> Tensor:
    """``key`` as a uint32[2] Tensor of the current trace; wrong shapes or dtypes raise."""
    return as_tensor(check_key(name, key), what=name)


def no_sharding(name: str, out_sharding) -> None:
    """jax's ``out_sharding`` keyword: only None (a sample's sharding is hf.jit's)."""
    if out_sharding is not None:
        raise ValueError(f"{name}: out_sharding is not supported (got {out_sharding!r}); pass None and shard "
                         "the result with hf.jit")


def key_words(key: Tensor):
    """The two 0-d uint32 words of a uint32[2] key."""
    return tuple(ops.reshape(ops.slice(key, (i,), (i + 1,)), ()) for i in (0, 1))


# ---------------------------------------------------------------- threefry2x32

def _rotate_left(x: Tensor, r: int) -> Tensor:
    return ops.or_(ops.shift_left(x, splat(r, U32, x.shape)),
                   ops.shift_right_logical(x, splat(32 - r, U32, x.shape)))


def threefry2x32(k1: Tensor, k2: Tensor, x1: Tensor, x2: Tensor):
    """The Threefry-2x32 block cipher (20 rounds) of counters (x1, x2) under key (k1, k2).

    ``k1``, ``k2``: 0-d uint32 Tensors (or Tensors of the counters' shape: one key per counter);
    ``x1``, ``x2``: uint32 Tensors of one shape. Returns the
    two uint32 output words, each of the counters' shape. Emits stablehlo.add/xor/shift_left/
    shift_right_logical/or only.
    """
    shape = x1.shape
    wide = [k if k.shape == shape else ops.broadcast_in_dim(k, shape, ()) for k in (k1, k2)]
    ks = wide + [ops.xor(ops.xor(wide[0], wide[1]), splat(_KS_PARITY, U32, shape))]
    x = [ops.add(x1, ks[0]), ops.add(x2, ks[1])]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = ops.add(x[0], x[1])
            x = [x0, ops.xor(x0, _rotate_left(x[1], r))]
        x = [ops.add(x[0], ks[(i + 1) % 3]),
             ops.add(ops.add(x[1], ks[(i + 2) % 3]), splat(i + 1, U32, shape))]
    return x[0], x[1]


def iota_2x32(shape):
    """(hi, lo) uint32 words of ``arange(prod(shape), dtype=uint64).reshape(shape)``."""
    size = math.prod(shape)
    if size > 2 ** 64:
        raise ValueError(f"random bits: shape {shape} has more than 2**64 elements")
    if not shape or size == 0:
        zero = splat(0, U32, shape)
        return zero, zero
    if size <= 2 ** 32:
        lo = ops.reshape(ops.iota((size,), U32), shape)
        return splat(0, U32, shape), lo
    u64 = np.dtype(np.uint64)
    flat = ops.reshape(ops.iota((size,), u64), shape)
    hi = ops.shift_right_logical(flat, splat(32, u64, shape))
    return ops.convert(hi, U32), ops.convert(flat, U32)


def hash_counters(key: Tensor, shape):
    """threefry2x32 of the reshaped 64-bit iota of ``shape``: the two uint32 output words."""
    k1, k2 = key_words(key)
    hi, lo = iota_2x32(shape)
    return threefry2x32(k1, k2, hi, lo)


def raw_bits(key: Tensor, bit_width: int, shape) -> Tensor:
    """jax's ``random_bits``: uniform unsigned integers of ``bit_width`` bits and ``shape``."""
    return combine_bits(*hash_counters(key, shape), bit_width)


def combine_bits(b1: Tensor, b2: Tensor, bit_width: int) -> Tensor:
    """The threefry output words as ``bit_width``-bit random integers (jax's: ``b1 << 32 | b2`` for 64
    bits, ``b1 ^ b2`` converted for 8, 16 and 32)."""
    shape = b1.shape
    if bit_width == 64:
        u64 = np.dtype(np.uint64)
        hi = ops.shift_left(ops.convert(b1, u64), splat(32, u64, shape))
        return ops.or_(hi, ops.convert(b2, u64))
    bits = ops.xor(b1, b2)
    return bits if bit_width == 32 else ops.convert(bits, np.dtype(f"uint{bit_width}"))


def split_keys(key: Tensor, shape) -> Tensor:
    b1, b2 = hash_counters(key, shape)
    shape = tuple(shape)
    dims = tuple(range(len(shape)))
    return ops.concatenate([ops.broadcast_in_dim(b, shape + (1,), dims) for b in (b1, b2)], len(shape))


def split2(key: Tensor):
    """``split(key)`` as two uint32[2] Tensors."""
    keys = split_keys(key, (2,))
    return tuple(ops.reshape(ops.slice(keys, (i, 0), (i + 1, 2)), (2,)) for i in (0, 1))


# ---------------------------------------------------------------- public API

def _seed_words_numpy(seed: int, wide: bool):
    """jax's seed derivation for a concrete value: 64-bit seeds keep their high word; Python ints and
    narrower seeds are taken modulo 2**32 with a zero high word (jax's default, x64 disabled)."""
    low = seed & 0xFFFFFFFF
    high = (seed >> 32) & 0xFFFFFFFF if wide else 0
    return np.array([high, low], U32)


def _traced_seed_key(seed: Tensor) -> Tensor:
    lo = ops.convert(seed, U32)
    if seed.dtype.itemsize < 8:
        hi = splat(0, U32, ())
    else:
        hi = ops.convert(ops.shift_right_logical(seed, splat(32, seed.dtype, ())), U32)
    return ops.concatenate([ops.reshape(hi, (1,)), ops.reshape(lo, (1,))], 0)


def PRNGKey(seed, *, impl=None):
    """A threefry2x32 key for an integer seed: the uint32[2] array jax.random.PRNGKey returns.

    A Python int seed is taken modulo 2**32 with a zero high word (what jax does in its default
    configuration, jax_enable_x64 off); an int64/uint64 array or Tensor seed keeps its high 32
    bits (jax with x64 on), narrower integer dtypes are sign-extended into the low word.

    Outside a trace the key is computed in numpy; inside a trace a traced integer seed emits
    stablehlo.shift_right_logical and stablehlo.convert.

    Args:
      seed: a Python int, a 0-d integer array, or a 0-d integer Tensor.
      impl: None or "threefry2x32" (or jax's spec or key dtype of it): the only implementation.
    Returns:
      A uint32[2] numpy array (outside a trace, or for a concrete seed) or Tensor.
    Example:
      >>> key = hf.random.PRNGKey(0)          # array([0, 0], dtype=uint32)
    """
    check_impl("hloforge.random.PRNGKey", impl)
    return _make_key("PRNGKey", seed)


def key(seed, *, impl=None, dtype=None):
    """The same as :func:`PRNGKey`: hloforge keys are plain uint32[2] arrays, never typed key
    arrays (``jax.random.key_data(k)`` is what jax calls this data).

    Args:
      seed: a Python int, a 0-d integer array, or a 0-d integer Tensor.
      impl, dtype: None or "threefry2x32" (or jax's spec or key dtype of it), at most one of them.
    Returns:
      A uint32[2] numpy array or Tensor.
    Example:
      >>> k = hf.random.key(42)               # array([0, 42], dtype=uint32)
    """
    if impl is not None and dtype is not None:
        raise ValueError("hloforge.random.key: pass impl or dtype, not both")
    check_impl("hloforge.random.key", impl if dtype is None else dtype)
    return _make_key("key", seed)


def check_impl(name: str, impl) -> None:
    """``impl`` must name threefry2x32 (None, the string, or jax's PRNGSpec/key dtype of it): the only
    implementation hloforge has."""
    if impl is None or (isinstance(impl, str) and impl == "threefry2x32"):
        return
    try:
        same = jax.random.key_dtype(impl) == jax.random.key_dtype("threefry2x32")
    except (TypeError, ValueError):
        same = None
    if same is None:
        raise ValueError(f"{name}: unrecognized PRNG implementation {impl!r}; hloforge implements "
                         "'threefry2x32' only")
    if not same:
        raise ValueError(f"{name}: PRNG implementation {impl!r} is not supported; hloforge implements "
                         "'threefry2x32' only")


def _make_key(name, seed):
    if jax_typed_key_data(seed) is not None:
        raise TypeError(f"{name}: accepts a scalar seed, but was given a PRNG key")
    if isinstance(seed, bool) or isinstance(seed, np.bool_):
        raise TypeError(f"{name}: seed must be an integer, got bool {seed!r}")
    if isinstance(seed, int):
        if not -2 ** 63 <= seed < 2 ** 64:
            raise ValueError(f"{name}: seed {seed} does not fit in 64 bits")
        return _seed_words_numpy(seed, False)
    if isinstance(seed, Tensor):
        if seed.shape != () or not dtypes.is_integer(seed.dtype):
            raise TypeError(f"{name}: seed must be a 0-d integer, got {seed}")
        return _traced_seed_key(as_tensor(seed, what=name))
    try:
        value = np.asarray(seed)
    except (TypeError, ValueError):
        value = np.asarray(None)
    if value.ndim != 0:
        raise TypeError(f"{name}: seed must be a scalar integer, got an array of shape {value.shape}")
    if not dtypes.is_integer(value.dtype):
        raise TypeError(f"{name}: seed must be an integer, got {type(seed).__name__} {seed!r}")
    return _seed_words_numpy(int(value), value.dtype.itemsize == 8)


@eager(static=("num",))
def split(key, num=2):
    """Split a key into ``num`` new keys (jax.random.split, bit-for-bit).

    Emits one threefry2x32 (stablehlo.add/xor/shift/or) over a stablehlo.iota of counters.
    Outside a trace it runs under hf.jit and returns an array.

    Args:
      key: uint32[2] key.
      num: a positive int, or a tuple of ints: the shape of the new key array.
    Returns:
      uint32 array of shape ``(num, 2)`` (or ``(*num, 2)``).
    Example:
      >>> k1, k2 = hf.random.split(key)
    """
    key = key_operand("split", key)
    shape = shape_tuple("split", num)
    return split_keys(key, shape)


@eager(dynamic={"data": uint32_array})
def fold_in(key, data):
    """A new key that is a function of ``key`` and the 32-bit integer ``data`` (jax.random.fold_in).

    Emits threefry2x32 of the counter pair ``(0, uint32(data))``.

    Args:
      key: uint32[2] key.
      data: a 0-d integer (Python int, array or Tensor); converted to uint32 (wrapping, as a
        traced conversion does).
    Returns:
      uint32[2] key.
    Example:
      >>> k = hf.random.fold_in(key, step)
    """
    key = key_operand("fold_in", key)
    data_shape = data.shape if isinstance(data, Tensor) else np.shape(data)
    if data_shape:
        raise TypeError(f"fold_in: data must be a scalar, got an array of shape {tuple(data_shape)}")
    if isinstance(data, Tensor):
        if not dtypes.is_integer(data.dtype):
            raise TypeError(f"fold_in: data must be an integer, got dtype {data.dtype}")
        d = data if data.dtype == U32 else ops.convert(data, U32)
    else:
        value = np.asarray(data)
        if not (dtypes.is_integer(value.dtype) or value.dtype == np.bool_):
            raise TypeError(f"fold_in: data must be an integer, got {data!r}")
        if isinstance(data, int) and not 0 <= data < 2 ** 32:  # (numpy integers wrap, as in jax)
            raise ValueError(f"fold_in: data {int(data)} does not fit in uint32")
        d = as_tensor(value.astype(U32), what="fold_in data")
    k1, k2 = key_words(key)
    y1, y2 = threefry2x32(k1, k2, splat(0, U32, ()), d)
    return ops.concatenate([ops.reshape(y1, (1,)), ops.reshape(y2, (1,))], 0)


_UINTS = {np.dtype(f"uint{b}"): b for b in (8, 16, 32, 64)}


@eager(static=("shape", "dtype"))
def bits(key, shape=(), dtype=None, *, out_sharding=None):
    """Uniform random unsigned integers (jax.random.bits, bit-for-bit).

    Emits threefry2x32 over the counters; 64-bit results join the two words with
    stablehlo.shift_left/or, 8/16-bit ones stablehlo.convert their xor.

    Args:
      key: uint32[2] key.
      shape: result shape (default ``()``).
      dtype: uint8, uint16, uint32 (default, jax's with x64 off) or uint64.
      out_sharding: None (sharding is hf.jit's).
    Returns:
      An array of ``shape`` and ``dtype``.
    Example:
      >>> b = hf.random.bits(key, (4,), np.uint64)
    """
    key = key_operand("bits", key)
    no_sharding("hloforge.random.bits", out_sharding)
    dtype = U32 if dtype is None else dtypes.canonical(dtype)
    if dtype not in _UINTS:
        raise ValueError(f"bits: dtype must be an unsigned integer dtype, got {dtype}")
    return raw_bits(key, _UINTS[dtype], shape_tuple("bits", shape))


__all__ = ["PRNGKey", "key", "split", "fold_in", "bits"]
