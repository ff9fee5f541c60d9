"""Every dtype each structured op takes: evaluate (what constant folding computes) against PJRT."""
import numpy as np
import pytest

import hloforge as hf
from hloforge.frontend.registry import OPS

from helpers import ALL_DTYPES
from test_registry import _agrees, _values

MOVEMENT = [
    ("stablehlo.pad", 2, dict(low=(1, -1), high=(-1, 2), interior=(1, 0))),
    ("stablehlo.slice", 1, dict(start_indices=(0, 1), limit_indices=(3, 4), strides=(2, 2))),
    ("stablehlo.reverse", 1, dict(dimensions=(0, 1))),
    ("stablehlo.transpose", 1, dict(permutation=(1, 0))),
    ("stablehlo.reshape", 1, dict(shape=(2, 8))),
    ("stablehlo.broadcast_in_dim", 1, dict(shape=(2, 3, 4), broadcast_dimensions=(2,))),
    ("stablehlo.concatenate", 2, dict(dimension=0)),
]
REDUCERS = ("add", "mul", "max", "min", "and", "or")


def _arrays(dtype):
    x = _values(dtype, 16, seed=3, tame=False).reshape(4, 4)
    tame = _values(dtype, 16, seed=4, tame=True).reshape(4, 4)
    return x, tame


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
def test_structured_evaluate_matches_pjrt_for_every_dtype(dtype):
    x, tame = _arrays(dtype)
    pad_value = x.reshape(-1)[5]
    cases = []
    for name, arity, params in MOVEMENT:
        args = (x, pad_value) if name == "stablehlo.pad" else (x, tame) if arity == 2 else (x,)
        if name == "stablehlo.broadcast_in_dim":
            args = (x[0],)
        cases.append((name, args, params))
    for body in REDUCERS:
        init = tame.reshape(-1)[0]
        try:
            OPS["stablehlo.reduce"].rule((tame.shape, dtype), ((), dtype), dimensions=(1,), body=body)
        except (TypeError, ValueError):
            continue
        cases.append(("stablehlo.reduce", (tame, init), dict(dimensions=(1,), body=body)))
    if dtype.kind != "c":
        cases.append(("stablehlo.sort", (tame, x), dict(dimension=1, comparator="LT", is_stable=True)))
        cases.append(("stablehlo.sort", (tame,), dict(dimension=0, comparator="GT", is_stable=True)))
    if dtype != np.bool_:
        cases.append(("stablehlo.dot_general", (tame, tame), dict(
            lhs_batching_dimensions=(0,), rhs_batching_dimensions=(0,), lhs_contracting_dimensions=(1,),
            rhs_contracting_dimensions=(1,), precision=None)))
    cases.append(("stablehlo.select", (tame > tame.T if dtype.kind != "c" else tame == tame, x, tame), {}))

    def fn(*flat):
        outs, i = [], 0
        for name, args, params in cases:
            info = OPS[name]
            out = info.builder(*info.arrange(list(flat[i:i + len(args)])), **params)
            outs += list(out) if isinstance(out, tuple) else [out]
            i += len(args)
        return outs

    flat = [a for _, args, _ in cases for a in args]
    got = iter(hf.jit(fn, optimize=False)(*flat))
    evaluated = 0
    for name, args, params in cases:
        want = OPS[name].evaluate(*args, **params)
        results = [next(got) for _ in range(len(args) if name == "stablehlo.sort" else 1)]
        if want is None:
            continue
        for g, w in zip(results, want if isinstance(want, list) else [want]):
            problem = _agrees(name, np.asarray(g), np.asarray(w))
            assert problem is None, f"{name} {params} on {dtype}: {problem}"
        evaluated += 1
    assert evaluated >= len(MOVEMENT)
