"""``hloforge.nn``: the layers neural operators are built from."""
from hloforge.frontend.nn.activations import gelu, relu, softmax
from hloforge.frontend.nn.layers import dense

__all__ = ["relu", "gelu", "softmax", "dense"]
