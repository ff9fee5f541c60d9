"""hloforge.ops across families: locations pointing at user code, the registry, ops outside a trace,
tensors leaked from another trace."""
import numpy as np
import pytest

import hloforge as hf
from hloforge import ops
from helpers import random
from ops_helpers import F32


def test_locations_point_at_user_code():
    x = random((2,), np.float32)
    m = hf.trace(lambda x: ops.exp(x), x)
    text = m.to_text(debug_info=True)
    assert "test_common.py" in text
    assert "loc(" not in m.text
    named = hf.trace(lambda x: ops.exp(x, loc="my_exp"), x).to_text(debug_info=True)
    assert '"my_exp"' in named
    with pytest.raises(TypeError, match="loc must be None, a str or an ir.Location, got int"):
        hf.trace(lambda x: ops.exp(x, loc=3), x)


def test_registry_knows_every_op():
    from hloforge.frontend.registry import OPS, lookup
    assert lookup("stablehlo.fft").builder is ops.fft.__wrapped__  # (ops.fft: its eager wrapper, frontend/eager.py)
    assert ops.add.stablehlo_op == "stablehlo.add"
    for name in ("stablehlo.pad", "stablehlo.reduce", "stablehlo.dot_general", "stablehlo.compare"):
        assert name in OPS
    with pytest.raises(KeyError, match="no hloforge builder for 'stablehlo.nope'"):
        lookup("stablehlo.nope")


def test_ops_outside_a_trace_run_eagerly():
    out = ops.constant(np.arange(3, dtype=np.float32))  # (frontend/eager.py; tests/test_eager.py has the rest)
    np.testing.assert_array_equal(np.asarray(out), np.arange(3, dtype=np.float32))


def test_leaked_tensor_from_another_trace():
    leaked = []
    hf.trace(lambda x: leaked.append(x) or x, F32)
    with pytest.raises(ValueError, match="belongs to another trace"):
        hf.trace(lambda x: ops.add(x, leaked[0]), F32)
