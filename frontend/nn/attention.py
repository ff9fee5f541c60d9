"""Attention, embedding lookup and dropout."""
from __future__ import annotations

import math

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend import numpy as hnp
from hloforge.frontend.nn.functions import softmax
from hloforge.frontend.numpy._base import asarray


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None, is_causal=False):
    """Scaled dot-product attention, jax.nn.dot_product_attention's "xla" form:
    ``softmax(q k^T * scale + bias, masked) v``.

    Args:
      query: (batch, T, N, H). key, value: (batch, S, K, H), N a multiple of K (grouped heads).
      bias: optional, broadcastable to (batch, N, T, S), added to the logits.
      mask: optional bool, broadcastable to (batch, N, T, S); False entries are left out.
      scale: the logits' scale (default 1 / sqrt(H)).
      is_causal: also mask out keys after each query (T and S aligned at the start).
    Returns:
      (batch, T, N, H).
    Example:
      >>> y = hf.nn.dot_product_attention(q, k, v, mask=padding_mask)
    """
    q, k, v = asarray(query), asarray(key), asarray(value)
    if q.ndim != 4 or k.ndim != 4 or v.shape != k.shape:
        raise ValueError(f"dot_product_attention: query {q.shape}, key {k.shape} and value {v.shape} must be "
                         "(batch, T, N, H), (batch, S, K, H), (batch, S, K, H)")
    b, t, n, h = q.shape
    s, kh = k.shape[1], k.shape[2]
    if k.shape[0] != b or k.shape[3] != h or n % kh:
        raise ValueError(f"dot_product_attention: key {k.shape} does not fit query {q.shape} (same batch and H, "
                         "N a multiple of K)")
    if not dtypes.is_float(q.dtype):
        raise TypeError(f"dot_product_attention: needs float inputs, got {q.dtype}")
    scale = 1.0 / math.sqrt(h) if scale is None else float(scale)
    g = n // kh
    qg = hnp.reshape(q, (b, t, kh, g, h))
    logits = hnp.einsum("btkgh,bskh->bkgts", qg, k)
    logits = hnp.reshape(logits, (b, n, t, s)) * np.asarray(scale, q.dtype)
    if bias is not None:
        logits = logits + asarray(bias, q.dtype)
    keep = None
    if mask is not None:
        keep = hnp.broadcast_to(asarray(mask, np.bool_), (b, n, t, s))
    if is_causal:
        causal = hnp.arange(t)[:, None] >= hnp.arange(s)[None, :]
        keep = causal if keep is None else keep & causal
    if keep is not None:
        logits = hnp.where(keep, logits, np.asarray(np.finfo(np.dtype(q.dtype) if q.dtype.name != "bfloat16"
                                                                else np.float32).min, q.dtype))
    probs = softmax(logits, axis=-1)
    out = hnp.einsum("bkgts,bskh->btkgh", hnp.reshape(probs, (b, kh, g, t, s)), v)
    return hnp.reshape(out, (b, t, n, h))


def embedding(ids, table):
    """``table[ids]``: rows of ``table`` (vocab, features) for integer ``ids`` of any shape; emits
    a one-hot ``stablehlo.dot_general`` (exact for finite tables; ids outside [0, vocab) give zeros).

    Example:
      >>> h = hf.nn.embedding(tokens, params["embed"])
    """
    ids, table = asarray(ids), asarray(table)
    if not dtypes.is_integer(ids.dtype):
        raise TypeError(f"embedding: ids must be integers, got {ids.dtype}")
    if table.ndim != 2:
        raise ValueError(f"embedding: table must be (vocab, features), got shape {table.shape}")
    vocab = table.shape[0]
    index = ops.iota(ids.shape + (vocab,), ids.dtype, ids.ndim)
    wide = ops.broadcast_in_dim(ids, ids.shape + (vocab,), tuple(range(ids.ndim)))
    onehot = ops.convert(ops.compare(index, wide, "EQ"), table.dtype)
    return ops.dot_general(onehot, table, (), (), (ids.ndim,), (0,), precision="HIGHEST")


def _bits_from_key(key, shape):
    """uint32 bits of ``shape`` from a uint32[2] key (rng_bit_generator's THREE_FRY on [key, 0])."""
    key = asarray(key)
    if key.shape != (2,) or key.dtype != np.uint32:
        raise TypeError(f"dropout: key must be a uint32[2] array (a PRNG key's data), got {key}")
    word = ops.bitcast_convert(ops.reshape(key, (1, 2)), np.uint64)
    state = ops.concatenate([word, ops.constant(np.zeros(1, np.uint64))], 0)
    _, bits = ops.rng_bit_generator(state, shape, np.uint32, "THREE_FRY")
    return bits


def dropout(key, x, rate, deterministic=False, *, mask=None):
    """Zero each element with probability ``rate`` and scale the rest by 1 / (1 - rate).

    Args:
      key: uint32[2] (a PRNG key's data); the bits come from ``stablehlo.rng_bit_generator``
        (THREE_FRY over [key, 0]) — they are not jax.random's.
      x: float array.
      rate: the drop probability in [0, 1).
      deterministic: return ``x`` unchanged (inference).
      mask: a precomputed bool keep-mask of x's shape instead of random bits (``key`` unused).
    Returns:
      An array of x's shape and dtype.
    Example:
      >>> h = hf.nn.dropout(key, h, 0.1)
    """
    x = asarray(x)
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"dropout: rate {rate} must be in [0, 1)")
    if not dtypes.is_float(x.dtype):
        raise TypeError(f"dropout: needs a float input, got {x.dtype}")
    if deterministic or rate == 0.0:
        return x
    if mask is not None:
        keep = asarray(mask)
        if keep.dtype != np.bool_ or keep.shape != x.shape:
            raise TypeError(f"dropout: mask must be a bool array of shape {x.shape}, got {keep}")
    else:
        threshold = min(int(round((1.0 - rate) * 2 ** 32)), 2 ** 32 - 1)
        keep = _bits_from_key(key, x.shape) < np.uint32(threshold)
    return hnp.where(keep, x * (1.0 / (1.0 - rate)), hnp.zeros((), x.dtype))


__all__ = ["dot_product_attention", "embedding", "dropout"]
