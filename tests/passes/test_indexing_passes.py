"""index-windows (passes/indexing.py): its plans say in words why a pattern does not fire."""
import numpy as np

import hloforge as hf
from hloforge import ops

F32, I32 = np.float32, np.int32


def test_an_index_window_plan_says_why_in_words():
    def reversed_columns(x):  # (rows 1:3 of a 4x5 array, each row's columns backwards: not row-major)
        grid = ops.slice(ops.reshape(ops.iota((20,), I32, 0), (4, 5)), (1, 0), (3, 2))
        return ops.gather(ops.reshape(x, (20,)), ops.reverse(grid, (1,)), (), (0,), (0,), 2, (1,))
    m = hf.trace(reversed_columns, hf.ShapeDtype((4, 5), F32))
    text = m.optimize("pattern:flat_gather_slice", debug=True).explain()
    assert ("flat_gather_slice: declined 1 time: the positions list no box of a shape the operand was "
            "flattened from, in row-major order [1]") in text

    m = hf.trace(lambda x, i, u: x.at[i].set(u), hf.ShapeDtype((6,), F32), hf.ShapeDtype((2,), I32),
                 hf.ShapeDtype((2,), F32))
    text = m.optimize("pattern:flat_scatter_window", debug=True).explain()
    assert "flat_scatter_window: declined 1 time: the positions are not known at compile time [1]" in text
