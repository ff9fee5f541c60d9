"""Shared by the hloforge.lax-against-jax.lax tests: run one function of a lax module both ways
(one hf.jit, one jax.jit) and compare every leaf; check that both refuse the same inputs."""
from __future__ import annotations

import jax
import numpy as np
import pytest
from jax import tree_util

import hloforge as hf
from hloforge import lax

from helpers import assert_close

WIDE = {np.dtype(d) for d in (np.float64, np.complex128, np.int64, np.uint64)}


def needs_x64(*arrays) -> bool:
    return any(np.asarray(a).dtype in WIDE for a in tree_util.tree_leaves(arrays))


def both(fn, *args, rtol=None, exact=False, labels=None):
    """fn(lax_module, *args) under hf.jit (hloforge.lax) and jax.jit (jax.lax, x64 for 64-bit
    inputs): same leaves, shapes, dtypes and values (the dtype's tolerance, or bit-exact).
    ``labels``: a name per leaf, for the failure message."""
    got = tree_util.tree_leaves(hf.jit(lambda *a: fn(lax, *a))(*args))
    with jax.enable_x64(needs_x64(args)):
        want = tree_util.tree_leaves(jax.jit(lambda *a: fn(jax.lax, *a))(*args))
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        w = np.asarray(w)
        try:
            if exact or w.dtype.kind not in "fc":
                assert np.asarray(g).dtype == w.dtype, f"dtype {np.asarray(g).dtype} != {w.dtype}"
                np.testing.assert_array_equal(np.asarray(g), w)
            else:
                assert_close(np.asarray(g), w, dtype=w.dtype, rtol=rtol)
        except AssertionError as e:
            raise AssertionError(f"leaf {i} ({labels[i] if labels else ''}): {e}") from None
    return got


def jax_accepts(jax_fn, *args) -> bool:
    """Whether jax.lax traces ``jax_fn`` on arrays like ``args`` (TypeError: it refuses them)."""
    specs = [jax.ShapeDtypeStruct(np.shape(a), np.asarray(a).dtype) for a in args]
    with jax.enable_x64(needs_x64(args)):
        try:
            jax.eval_shape(jax_fn, *specs)
        except TypeError:
            return False
    return True


def refuses(hf_fn, *args, exc=TypeError, match=None):
    """hloforge.lax refuses too, while tracing (no compile)."""
    specs = [hf.ShapeDtype(np.shape(a), np.asarray(a).dtype) for a in args]
    with pytest.raises(exc, match=match):
        hf.trace(hf_fn, *specs)
