"""Derivative rules of stablehlo.sort (frontend/ops/sort.py): the (co)tangents follow the
operands' permutation."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.ad._util import instantiate
from hloforge.frontend.registry import def_rule


# ---------------------------------------------------------------- sort

def _keys_only(comparator, n):
    """The comparator over the first ``n`` operand pairs, ignoring the pairs appended after them."""
    if isinstance(comparator, str):
        return comparator
    return lambda *args: comparator(*args[:2 * n])


@def_rule("jvp", "stablehlo.sort")
def _sort_jvp(ins, outs, ts, dimension, comparator, is_stable):
    """Sort the tangents along with the operands: the same permutation applies to them."""
    n = len(ins)
    carried = [instantiate(t, x) for t, x in zip(ts, ins)]
    out = ops.sort(list(ins) + carried, dimension, _keys_only(comparator, n), is_stable=is_stable)
    return list(out[n:])


@def_rule("vjp", "stablehlo.sort")
def _sort_vjp(ins, outs, cts, dimension, comparator, is_stable):
    """The permutation from sorting an iota with the operands; sorting the cotangents by it undoes it."""
    n = len(ins)
    x = ins[0]
    index = ops.iota(x.shape, np.int32, dimension)
    perm = ops.sort(list(ins) + [index], dimension, _keys_only(comparator, n), is_stable=is_stable)[n]
    carried = [instantiate(c, o) for c, o in zip(cts, outs)]
    back = ops.sort([perm] + carried, dimension, "LT", is_stable=True)
    return [b if c is not None else None for b, c in zip(back[1:], cts)]
