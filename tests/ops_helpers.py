"""Shared by the tests of hloforge.ops (tests/ops/): the operand their validation cases trace with."""
import numpy as np

import hloforge as hf

F32 = hf.ShapeDtype((2, 3), np.float32)
