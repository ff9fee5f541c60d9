"""hloforge.ops, control-flow family (frontend/ops/control_flow.py): the builders' validation messages
(their traced bodies, AD and batching are tested through hloforge.lax: tests/lax/test_lax.py,
tests/ad/test_ad_control.py, tests/batching/test_vmap_control_flow.py)."""
import numpy as np
import pytest

import hloforge as hf
from hloforge import ops

F = hf.ShapeDtype((3,), np.float32)


@pytest.mark.parametrize("fn,match", [
    (lambda x: ops.if_(x, lambda: x, lambda: x, [x]), r"if: pred must be a 0-d bool tensor"),
    (lambda x: ops.case(x[0], [lambda: x], [x]), r"case: index must be a 0-d int32 tensor"),
    (lambda x: ops.while_([x], lambda v: ops.compare(v[0], 1.0, "LT"), lambda v: ops.convert(v, np.int32)),
     r"while: body must return 1 value\(s\) of types \(float32\[3\]\), got .*; "
     r"output 0 has type int32\[3\], expected float32\[3\]"),
    (lambda x: ops.if_(x[0] > 0, lambda: x, lambda: x, 3), r"if: result_types must be a sequence of \(shape, dtype\) pairs, got 3"),
    (lambda x: ops.while_([x], lambda v: v, 3), r"while: body must be a callable, got int"),
])
def test_validation_messages(fn, match):
    with pytest.raises(TypeError, match=match):
        hf.trace(fn, F)
