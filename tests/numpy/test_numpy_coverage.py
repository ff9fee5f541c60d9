"""How much of jax.numpy's public API hloforge.numpy offers: at least 90% of its callables, not
counting classes/dtypes and the few functions listed in EXCLUDED (with the reason)."""
import inspect

import jax.numpy as jnp

from hloforge import numpy as hnp

# callables that have no meaning for a traced, static-shape frontend
EXCLUDED = {
    "array_repr": "formats an array's values, which a traced Tensor does not have",
    "array_str": "formats an array's values, which a traced Tensor does not have",
    "save": "writes an array's values to a file: host I/O of values a trace does not have",
    "savez": "writes an array's values to a file: host I/O of values a trace does not have",
    "frompyfunc": "makes object-dtype ufuncs; StableHLO has no object dtype",
}

def _jax_callables():
    return sorted(n for n in dir(jnp) if not n.startswith("_") and callable(getattr(jnp, n))
                  and not inspect.isclass(getattr(jnp, n)))


def test_exclusions_are_real_jax_numpy_callables():
    names = set(_jax_callables())
    assert set(EXCLUDED) <= names


def test_covers_every_jax_numpy_callable_but_the_excluded():
    missing = [n for n in _jax_callables() if n not in EXCLUDED and not callable(getattr(hnp, n, None))]
    assert not missing, missing


def test_linalg_namespace():
    for name in ("solve", "inv", "det", "slogdet", "cholesky", "qr", "eigh", "eigvalsh", "svd", "svdvals", "norm",
                 "pinv", "lstsq", "matrix_power", "matrix_rank", "cond", "matmul", "multi_dot",
                 "vector_norm", "matrix_norm", "tensorinv", "tensorsolve", "LinAlgError", "eig", "eigvals"):
        assert hasattr(hnp.linalg, name), name
    import jax.numpy as jnp
    import hloforge.numpy.linalg as imported
    assert imported is hnp.linalg
    assert [n for n in dir(jnp.linalg) if not n.startswith("_") and not hasattr(hnp.linalg, n)] == []


def test_namespaces_expose_only_their_api():
    """No module's own imports (np, ops, annotations, dtypes) or implementation submodules leak out."""
    import jax.numpy as jnp
    public_linalg = {n for n in dir(hnp.linalg) if not n.startswith("_")}
    assert public_linalg == set(hnp.linalg.__all__)
    assert public_linalg - {n for n in dir(jnp.linalg) if not n.startswith("_")} == {
        "LinAlgError", "EigResult", "EighResult", "QRResult", "SlogdetResult", "SVDResult"}
    assert {n for n in dir(hnp.fft) if not n.startswith("_")} == set(hnp.fft.__all__)
    for leaked in ("np", "ops", "annotations", "dtypes", "math", "reductions", "creation", "tensor_methods"):
        assert not hasattr(hnp, leaked), leaked
    assert callable(hnp.shape) and callable(hnp.pad)  # numpy's functions, not the modules behind them

