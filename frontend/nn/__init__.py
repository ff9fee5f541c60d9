"""``hloforge.nn``: the layers neural operators and vision/sequence models are built from."""
from hloforge.frontend.nn.activations import gelu, relu, softmax
from hloforge.frontend.nn.attention import dot_product_attention, dropout, embedding
from hloforge.frontend.nn.conv import avg_pool, conv, max_pool
from hloforge.frontend.nn.layers import dense, layer_norm
from hloforge.frontend.nn.normalization import batch_norm
from hloforge.frontend.nn.fno import FNO, pointwise
from hloforge.frontend.nn.spectral import SpectralConv

__all__ = ["relu", "gelu", "softmax", "dense", "layer_norm", "batch_norm", "conv", "max_pool", "avg_pool",
           "dot_product_attention", "dropout", "embedding", "pointwise", "SpectralConv", "FNO"]
