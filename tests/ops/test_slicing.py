"""hloforge.ops, slicing family (frontend/ops/slicing.py): the builders' validation messages (their
values, AD and batching are tested through hloforge.lax and hloforge.numpy: tests/lax/test_lax.py,
tests/numpy/test_indexing.py, tests/batching/test_vmap_slicing.py)."""
import numpy as np
import pytest

import hloforge as hf
from hloforge import numpy as hnp
from hloforge import ops

F = hf.ShapeDtype((3,), np.float32)


@pytest.mark.parametrize("fn,match", [
    (lambda x: ops.gather(x, hnp.zeros((2, 2), np.int32), (), (0,), (0, 0), 1, (1,)),
     r"gather: start_index_map \[0, 0\] repeat a dimension"),
    (lambda x: ops.scatter(x, hnp.zeros((2, 1), np.int32), x, (), (0,), (0,), 1),
     r"scatter: updates dim 0 \(size 3\) must match indices dim 0 \(size 2\)"),
    (lambda x: ops.scatter(x, hnp.zeros((3, 1), np.int32), x, (), (0,), (0,), 1, "sub"),
     r"scatter: computation 'sub' is not one of set, add"),
    (lambda x: ops.dynamic_update_slice(x, hnp.zeros(4, np.float32), (0,)),
     r"dynamic_update_slice: update shape \(4,\) does not fit in operand shape \(3,\)"),
])
def test_validation_messages(fn, match):
    with pytest.raises(ValueError, match=match):
        hf.trace(fn, F)
