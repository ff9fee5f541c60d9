"""hloforge.ops, factorization family (frontend/ops/factorization.py): the validation messages of
cholesky and triangular_solve (their batching: tests/batching/test_vmap_factorization.py; their derivatives
against jax: tests/ad/test_ad_model.py; hloforge.lax.linalg's factorizations:
tests/numpy/test_numpy_linalg.py)."""
import numpy as np
import pytest

import hloforge as hf
from hloforge.frontend.ops import factorization


# ---------------------------------------------------------------- validation messages

@pytest.mark.parametrize("fn,exc,match", [
    (lambda x: factorization.cholesky(x.astype(np.int32)), TypeError, "cholesky: operand dtype int32 is not supported"),
    (lambda x: factorization.triangular_solve(x, x[:2]), ValueError, "does not match b"),
    (lambda x: factorization.triangular_solve(x, x, transpose_a="CONJ"), ValueError, "transpose_a 'CONJ' is not one of"),
])
def test_validation_messages(fn, exc, match):
    with pytest.raises(exc, match=match):
        hf.trace(fn, np.ones((3, 3), np.float32))
