"""Vision models written once against a numpy-like module ``xp`` (hloforge.numpy or jax.numpy)
and the matching lax (hloforge.lax or jax.lax), so hloforge and jax.jit run the same computation:
VGG-11/16 (with and without batch norm), ResNet-18 and ViT-tiny. Channels-last (NHWC, HWIO),
inference-mode batch norm."""
from __future__ import annotations

import math

import jax
import numpy as np

import hloforge as hf
from models import layer_norm, vit_block  # (the encoder block the vit_block benchmark runs)

VGG = {11: [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
       16: [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]}
DN = ("NHWC", "HWIO", "NHWC")


def lax_of(xp):
    return jax.lax if xp.__name__.startswith("jax") else hf.lax


def conv(xp, x, w, stride=1, padding="SAME"):
    return lax_of(xp).conv_general_dilated(x, w, (stride, stride), padding, dimension_numbers=DN)


def max_pool(xp, x, window=2, stride=2, padding="VALID"):
    return lax_of(xp).reduce_window(x, -np.inf, jax.lax.max, (1, window, window, 1), (1, stride, stride, 1), padding)


def batch_norm(xp, x, p, eps=1e-5):
    scale = p["scale"] / xp.sqrt(p["var"] + eps)
    return x * scale + (p["bias"] - p["mean"] * scale)


def relu(xp, x):
    return xp.maximum(x, 0.0)


# ---------------------------------------------------------------- parameters

def _conv_params(rng, k, cin, cout):
    return (rng.standard_normal((k, k, cin, cout)) * math.sqrt(2.0 / (k * k * cin))).astype(np.float32)


def _bn_params(rng, c):
    return {"scale": rng.uniform(0.5, 1.5, c).astype(np.float32), "bias": rng.uniform(-0.2, 0.2, c).astype(np.float32),
            "mean": rng.uniform(-0.2, 0.2, c).astype(np.float32), "var": rng.uniform(0.5, 1.5, c).astype(np.float32)}


def _dense_params(rng, i, o):
    return {"w": (rng.standard_normal((i, o)) / math.sqrt(i)).astype(np.float32), "b": np.zeros(o, np.float32)}


# ---------------------------------------------------------------- VGG

def vgg_params(depth, rng, width=1.0, image=224, hidden=4096, classes=1000, bn=False):
    layers, cin = [], 3
    for v in VGG[depth]:
        if v == "M":
            continue
        c = max(1, int(v * width))
        layer = {"w": _conv_params(rng, 3, cin, c), "b": np.zeros(c, np.float32)}
        if bn:
            layer["bn"] = _bn_params(rng, c)
        layers.append(layer)
        cin = c
    side = image // 32
    return {"convs": layers, "fc1": _dense_params(rng, side * side * cin, hidden), "fc2": _dense_params(rng, hidden, hidden),
            "fc3": _dense_params(rng, hidden, classes)}


def vgg(xp, x, params, depth):
    """VGG (Simonyan & Zisserman 2015), configuration A (11) or D (16): 3x3 convs, 2x2 max pools,
    three dense layers; batch norm after each conv when the parameters have it."""
    convs = iter(params["convs"])
    for v in VGG[depth]:
        if v == "M":
            x = max_pool(xp, x)
            continue
        p = next(convs)
        x = conv(xp, x, p["w"]) + p["b"]
        if "bn" in p:
            x = batch_norm(xp, x, p["bn"])
        x = relu(xp, x)
    x = xp.reshape(x, (x.shape[0], -1))
    x = relu(xp, x @ params["fc1"]["w"] + params["fc1"]["b"])
    x = relu(xp, x @ params["fc2"]["w"] + params["fc2"]["b"])
    return x @ params["fc3"]["w"] + params["fc3"]["b"]


# ---------------------------------------------------------------- ResNet-18

def resnet18_params(rng, width=1.0, classes=1000):
    def c(v):
        return max(1, int(v * width))
    params = {"stem": {"w": _conv_params(rng, 7, 3, c(64)), "bn": _bn_params(rng, c(64))}, "stages": []}
    cin = c(64)
    for i, v in enumerate((64, 128, 256, 512)):
        blocks = []
        for j in range(2):
            stride = 2 if i > 0 and j == 0 else 1
            block = {"conv1": _conv_params(rng, 3, cin, c(v)), "bn1": _bn_params(rng, c(v)),
                     "conv2": _conv_params(rng, 3, c(v), c(v)), "bn2": _bn_params(rng, c(v))}
            if stride != 1 or cin != c(v):
                block["proj"] = _conv_params(rng, 1, cin, c(v))
                block["proj_bn"] = _bn_params(rng, c(v))
            blocks.append(block)
            cin = c(v)
        params["stages"].append(blocks)
    params["fc"] = _dense_params(rng, cin, classes)
    return params


def resnet18(xp, x, params):
    """ResNet-18 (He et al. 2016): a 7x7/2 stem, 3x3/2 max pool, four stages of two basic blocks
    (projection shortcuts where the shape changes), global average pool, dense."""
    x = relu(xp, batch_norm(xp, conv(xp, x, params["stem"]["w"], 2), params["stem"]["bn"]))
    x = max_pool(xp, x, 3, 2, "SAME")
    for i, blocks in enumerate(params["stages"]):
        for j, p in enumerate(blocks):
            stride = 2 if i > 0 and j == 0 else 1
            h = relu(xp, batch_norm(xp, conv(xp, x, p["conv1"], stride), p["bn1"]))
            h = batch_norm(xp, conv(xp, h, p["conv2"]), p["bn2"])
            shortcut = batch_norm(xp, conv(xp, x, p["proj"], stride, "VALID"), p["proj_bn"]) if "proj" in p else x
            x = relu(xp, h + shortcut)
    x = xp.mean(x, axis=(1, 2))
    return x @ params["fc"]["w"] + params["fc"]["b"]


# ---------------------------------------------------------------- ViT-tiny

def vit_tiny_params(rng, image=256, patch=16, dim=192, depth=12, classes=1000):
    tokens = (image // patch) ** 2 + 1

    def w(*shape):
        return (rng.standard_normal(shape) / math.sqrt(shape[0])).astype(np.float32)
    ln = (np.ones(dim, np.float32), np.zeros(dim, np.float32))
    return {"patch": (rng.standard_normal((patch, patch, 3, dim)) / math.sqrt(patch * patch * 3)).astype(np.float32),
            "patch_b": np.zeros(dim, np.float32), "cls": w(1, 1, dim) * 0.02,
            "pos": (rng.standard_normal((1, tokens, dim)) * 0.02).astype(np.float32),
            "blocks": [{"ln1": ln, "ln2": ln, "qkv": w(dim, 3 * dim), "proj": w(dim, dim), "fc1": w(dim, 4 * dim),
                        "fc2": w(4 * dim, dim)} for _ in range(depth)],
            "ln": ln, "head": _dense_params(rng, dim, classes)}


def vit_tiny(xp, x, params, patch=16, heads=3):
    """ViT-Ti/16 (Dosovitskiy et al. 2021): patch-embedding convolution, class token, learned
    position embeddings, pre-norm encoder blocks, a dense head on the class token."""
    h = conv(xp, x, params["patch"], patch, "VALID") + params["patch_b"]
    b, gh, gw, d = h.shape
    h = xp.reshape(h, (b, gh * gw, d))
    cls = xp.broadcast_to(params["cls"], (b, 1, d))
    h = xp.concatenate([cls, h], axis=1) + params["pos"]
    for p in params["blocks"]:
        h = vit_block(xp, h, p, heads)
    h = layer_norm(xp, h[:, 0], *params["ln"])
    return h @ params["head"]["w"] + params["head"]["b"]
