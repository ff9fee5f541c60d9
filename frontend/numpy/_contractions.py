"""numpy's matmul and einsum (one or two operands), lowered to one dot_general plus transposes."""
from __future__ import annotations

import numpy as np
import opt_einsum

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax.convolution import _precision_names
from hloforge.frontend.numpy._base import asarray, astype, broadcast_shapes, broadcast_to
from hloforge.frontend.numpy._math import multiply
from hloforge.frontend.numpy._reductions import sum as _sum
from hloforge.frontend.numpy._shape import reshape, transpose
from hloforge.frontend.tracing import current_builder


def _bool_safe_dot(a, b, *dims, precision=None):
    if a.dtype == np.bool_:
        out = ops.dot_general(astype(a, np.int32), astype(b, np.int32), *dims)
        return astype(out, bool)
    return ops.dot_general(a, b, *dims, precision=precision)


def matmul(x1, x2, *, precision=None):
    """numpy.matmul (``@``): 1-D operands are promoted and squeezed, batch dims broadcast.
    Emits one stablehlo.dot_general; ``precision`` as jax.numpy's (None, a jax.lax.Precision or its
    name, or an (lhs, rhs) pair): on a TPU, float32 products at None or DEFAULT are one bfloat16 pass."""
    precision = _precision_names(precision)
    a, b = asarray(x1), asarray(x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions (0-d operand)")
    common = dtypes.result_type(a, b)
    a, b = astype(a, common), astype(b, common)
    a2 = reshape(a, (1,) + a.shape) if a.ndim == 1 else a
    b2 = reshape(b, b.shape + (1,)) if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 (size "
                         f"{b2.shape[-2]} is different from {a2.shape[-1]}); shapes {a.shape} and {b.shape}")
    batch = broadcast_shapes(a2.shape[:-2], b2.shape[:-2], what="matmul")
    if b2.ndim == 2:
        # (batch..., m, k) @ (k, n): batch dims of a are free dims, no broadcast needed
        out = _bool_safe_dot(a2, b2, (), (), (a2.ndim - 1,), (0,), precision=precision)
    elif a2.ndim == 2:
        # (m, k) @ (batch..., k, n): contract, then move m next to n
        out = _bool_safe_dot(a2, b2, (), (), (1,), (b2.ndim - 2,), precision=precision)
        out = transpose(out, tuple(range(1, b2.ndim - 1)) + (0, b2.ndim - 1))
    else:
        a2 = broadcast_to(a2, batch + a2.shape[-2:])
        b2 = broadcast_to(b2, batch + b2.shape[-2:])
        nb = len(batch)
        bd = tuple(range(nb))
        out = _bool_safe_dot(a2, b2, bd, bd, (nb + 1,), (nb,), precision=precision)
    shape = batch + ((a2.shape[-2],) if a.ndim > 1 else ()) + ((b2.shape[-1],) if b.ndim > 1 else ())
    return reshape(out, shape)


def dot(x1, x2, *, precision=None):
    """numpy.dot for 0-2-D operands (scalars multiply); ``precision`` as matmul's."""
    a, b = asarray(x1), asarray(x2)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if a.ndim > 2 or b.ndim > 2:
        raise ValueError("dot: operands of rank > 2 are not supported; use matmul or einsum")
    return matmul(a, b, precision=precision)


def _parse(subscripts, shapes):
    spec = subscripts.replace(" ", "")
    if "->" in spec:
        ins, out = spec.split("->")
    else:
        ins, out = spec, None
    terms = ins.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: {len(terms)} operand subscripts in {subscripts!r} for {len(shapes)} operands")
    # '...' becomes unused capital letters, right-aligned across operands
    free_letters = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in spec]
    ell_rank = max((len(s) - (len(t) - 3) for t, s in zip(terms, shapes) if "..." in t), default=0)
    ell = "".join(free_letters[:ell_rank])
    expanded = []
    for t, s in zip(terms, shapes):
        if "..." in t:
            n = len(s) - (len(t) - 3)
            t = t.replace("...", ell[ell_rank - n:])
        if not t.isalpha() and t:
            raise ValueError(f"einsum: invalid subscript {t!r} in {subscripts!r}")
        if len(t) != len(s):
            raise ValueError(f"einsum: subscript {t!r} has {len(t)} letters for an operand of rank {len(s)}")
        if len(set(t)) != len(t):
            raise ValueError(f"einsum: repeated subscript in {t!r} (diagonals) is not supported")
        expanded.append(t)
    if out is None:
        letters = "".join(expanded)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    for c in out:
        if out.count(c) > 1:
            raise ValueError(f"einsum: output subscript {c!r} appears more than once in {subscripts!r}")
    sizes = {}
    for t, s in zip(expanded, shapes):
        for c, n in zip(t, s):
            if sizes.setdefault(c, n) != n:
                raise ValueError(f"einsum: size of label {c!r} differs between operands ({sizes[c]} and {n})")
    for c in out:
        if c not in sizes:
            raise ValueError(f"einsum: output subscript {c!r} does not appear in the inputs")
    return expanded, out


def _sum_unused(x, term, keep):
    """Sum away letters of ``term`` not in ``keep``; returns (tensor, remaining term)."""
    drop = [i for i, c in enumerate(term) if c not in keep]
    if not drop:
        return x, term
    x = astype(_sum(x, axis=tuple(drop), dtype=x.dtype), x.dtype)
    return x, "".join(c for c in term if c in keep)


def _lead_as_batch(first, second, out):
    """If the output's leading letter belongs to one operand only and the other is small, broadcast
    the small one along it, so the contraction is batched over it (``'bihw,io->bohw'`` becomes a
    batched (o, i) @ (i, hw) per b). XLA's SPMD partitioner then keeps a batch-sharded dim sharded
    (with the plain form it may pick another dim and all-to-all); on one CPU device the plain form
    is ~7% faster (one large matmul), so this is used when tracing for SPMD only."""
    if not out:
        return first, second
    lead = out[0]
    (_, tx), (_, ty) = first, second
    if (lead in tx) == (lead in ty):
        return first, second
    (big, tbig), (small, tsmall) = (first, second) if lead in tx else (second, first)
    n = big.shape[tbig.index(lead)]
    if small.size * n > big.size:
        return first, second
    small = broadcast_to(small, (n,) + small.shape)
    widened = (small, lead + tsmall)
    return ((big, tbig), widened) if lead in tx else (widened, (big, tbig))


def einsum(subscripts, *operands, out=None, optimize="auto", precision=None, preferred_element_type=None,
           _dot_general=None, out_sharding=None):
    """numpy.einsum with jax.numpy's signature, e.g. ``einsum("bix,iox->box", x, w)``; emits
    stablehlo.dot_general.

    Args:
      subscripts: the contraction, e.g. "ij,jk,kl->il" (implicit output and ``...`` too).
      *operands: the arrays (promoted to one dtype).
      optimize: the pairwise contraction order of three or more operands, as jax.numpy: opt_einsum's
        path ("auto", the default; "greedy", "optimal", ..., True: "optimal"; an explicit path),
        or False (left to right).
      precision: as jax.numpy's: None, a jax.lax.Precision or its name ("highest", ...), or an (lhs,
        rhs) pair, on every dot_general (on a TPU, float32 products at None are one bfloat16 pass;
        a CPU computes at the operands' precision whatever it is).
      preferred_element_type: the dtype to compute and return in (the operands are cast to it).
      out, _dot_general, out_sharding: only their defaults.
    Returns:
      A Tensor.
    Example:
      >>> y = hnp.einsum("ij,jk,kl->il", a, b, c)
    """
    if not isinstance(subscripts, str):
        raise TypeError(f"hloforge.numpy.einsum: subscripts must be a string such as 'ij,jk->ik', got {subscripts!r} "
                        f"({type(subscripts).__name__}); numpy's sublist form is not supported")
    for name, value in (("out", out), ("_dot_general", _dot_general), ("out_sharding", out_sharding)):
        if value is not None:
            raise NotImplementedError(f"hloforge.numpy.einsum: {name}={value!r} is not supported")
    if not operands:
        raise ValueError("hloforge.numpy.einsum: needs at least one operand")
    xs = [asarray(o) for o in operands]
    common = dtypes.result_type(*xs) if preferred_element_type is None else dtypes.canonical(preferred_element_type)
    xs = [astype(x, common) for x in xs]
    precision = _precision_names(precision)
    if len(xs) <= 2:
        return _einsum_pair(subscripts, xs, precision)
    path = [(0, 1)] * (len(xs) - 1) if optimize is False else "optimal" if optimize is True else optimize
    try:
        _, steps = opt_einsum.contract_path(subscripts, *[x.shape for x in xs], shapes=True, einsum_call=True,
                                            use_blas=True, optimize=path)
    except (ValueError, TypeError, KeyError) as e:
        raise ValueError(f"hloforge.numpy.einsum: {subscripts!r} for shapes {[x.shape for x in xs]} "
                         f"(optimize={optimize!r}): {e}") from None
    for indices, _, spec, *_ in steps:  # (opt_einsum's order: pop the operands, append the result)
        picked = [xs.pop(i) for i in indices]
        xs.append(_einsum_pair(spec, picked, precision))
    return xs[0]


def _einsum_pair(subscripts, xs, precision=None):
    """One or two operands of one dtype: one stablehlo.dot_general (plus a reduce for letters that
    appear once and not in the output, and a transpose into the output order)."""
    terms, out = _parse(subscripts, [x.shape for x in xs])
    if len(xs) == 1:
        x, t = _sum_unused(xs[0], terms[0], out)
        return transpose(x, [t.index(c) for c in out])
    (a, b), (ta, tb) = xs, terms
    a, ta = _sum_unused(a, ta, tb + out)
    b, tb = _sum_unused(b, tb, ta + out)
    if current_builder("einsum").spmd:
        (a, ta), (b, tb) = _lead_as_batch((a, ta), (b, tb), out)
    (a, ta), (b, tb) = _dot_operand_order((a, ta), (b, tb), out)
    batch = [c for c in out if c in ta and c in tb]
    contract = sorted(c for c in ta if c in tb and c not in out)
    res = _bool_safe_dot(a, b, [ta.index(c) for c in batch], [tb.index(c) for c in batch],
                         [ta.index(c) for c in contract], [tb.index(c) for c in contract], precision=precision)
    rt = "".join(batch) + "".join(c for c in ta if c not in tb) + "".join(c for c in tb if c not in ta)
    return transpose(res, [rt.index(c) for c in out])


def _dot_operand_order(first, second, out):
    """The (lhs, rhs) order jax's einsum gives dot_general (batch letters in output order, contracted
    letters sorted, as there): the operands as written when the dot's (batch, lhs free, rhs free)
    result is already the output, else swapped. Besides sparing a transpose of the minor dims in the
    common cases (``'bi...,io->bo...'`` yields (o, b, ...), whose transpose moves whole rows), this
    gives XLA:CPU jax's operand layouts: for the FNO's ``'bixy,ioxy->boxy'`` the spectrum becomes the
    rhs, laid out (x, y, i, b), and with ``cost_model="keep-ffts"`` XLA builds exactly jax's kernels
    (docs/benchmarks.md, startup)."""
    (_, ta), (_, tb) = first, second
    shared = set(ta) & set(tb)
    written = ("".join(c for c in out if c in shared) + "".join(c for c in ta if c not in shared)
               + "".join(c for c in tb if c not in shared))
    return (first, second) if written == out else (second, first)
