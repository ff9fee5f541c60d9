"""``hloforge.lax``: a jax.lax-compatible layer over :mod:`hloforge.ops`.

Same names, signatures, semantics and errors as ``jax.lax``, emitting StableHLO: control flow,
indexing, convolution, windows, linear algebra and special functions, each family in its own
module of this package.
"""
from hloforge.frontend.lax import linalg  # noqa: E402,F401
