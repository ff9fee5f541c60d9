"""``hloforge.nn``: jax.nn's functions (activations, softmax and its relatives, one_hot,
standardize, ``hloforge.nn.initializers``) and the layers neural operators and vision/sequence
models are built from."""
from hloforge.frontend.nn.activations import (
    celu, elu, gelu, hard_sigmoid, hard_silu, hard_swish, hard_tanh, identity, leaky_relu, relu, relu6, selu,
    soft_sign, sparse_plus, sparse_sigmoid, squareplus)
from hloforge.frontend.nn.sigmoids import glu, log1mexp, log_sigmoid, mish, sigmoid, silu, softplus, swish
from hloforge.frontend.nn.functions import log_softmax, logmeanexp, logsumexp, one_hot, softmax, standardize
from hloforge.frontend.numpy import tanh
from hloforge.frontend.nn.attention import dot_product_attention, dropout, embedding
from hloforge.frontend.nn.conv import avg_pool, conv, max_pool
from hloforge.frontend.nn.layers import dense, layer_norm
from hloforge.frontend.nn.normalization import batch_norm
from hloforge.frontend.nn.fno import FNO, pointwise
from hloforge.frontend.nn.spectral import SpectralConv
from hloforge.frontend.nn import initializers

__all__ = ["celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "identity",
           "leaky_relu", "log1mexp", "log_sigmoid", "log_softmax", "logmeanexp", "logsumexp", "mish", "one_hot",
           "relu", "relu6", "selu", "sigmoid", "silu", "soft_sign", "softmax", "softplus", "sparse_plus",
           "sparse_sigmoid", "squareplus", "standardize", "swish", "tanh", "initializers",
           "dense", "layer_norm", "batch_norm", "conv", "max_pool", "avg_pool",
           "dot_product_attention", "dropout", "embedding", "pointwise", "SpectralConv", "FNO"]

from hloforge.frontend import eager as _eager  # noqa: E402
_eager.wrap_namespace(globals(), __all__)  # (callable eagerly: frontend/eager.py)
from hloforge.frontend.naming import name_missing_attributes as _public_errors  # noqa: E402
_public_errors(globals())  # (AttributeErrors name hloforge.<module>)
