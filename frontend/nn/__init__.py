"""``hloforge.nn``: the layers neural operators are built from."""
from hloforge.frontend.nn.activations import gelu, relu, softmax
from hloforge.frontend.nn.layers import dense, layer_norm
from hloforge.frontend.nn.fno import FNO, pointwise
from hloforge.frontend.nn.spectral import SpectralConv

__all__ = ["relu", "gelu", "softmax", "dense", "layer_norm", "pointwise", "SpectralConv", "FNO"]
