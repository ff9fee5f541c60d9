"""``hloforge.nn.initializers``: jax.nn.initializers over hloforge.random, bit-equal to jax's.

Each builder returns ``init(key, shape, dtype=<the builder's dtype>, out_sharding=None)``, as in
jax. The samples come from hloforge.random (bit-equal to jax.random) and are scaled with the
same StableHLO ops jax applies, so the same uint32[2] key gives the same values. The default
dtype is float32 (jax's with x64 off). Outside a trace an ``init`` call is compiled with hf.jit
(cached per shape, dtype and the builder's static parameters) and returns an array; inside one
it emits IR. ``out_sharding`` must be None (hloforge places results with hf.jit's shardings).
"""
from __future__ import annotations

import math

import numpy as np

from hloforge.frontend import dtypes
from hloforge.frontend import numpy as hnp
from hloforge.frontend import random as hr
from hloforge.frontend.nn.initializer_args import (
    Initializer, filled, float_sampler, init_dtype, init_shape, no_sharding, runtime, settled)
from hloforge.frontend.nn.orthogonal import delta_orthogonal, orthogonal
from hloforge.frontend.numpy._base import asarray, astype
from hloforge.frontend.random._eager import eager


# ---------------------------------------------------------------- constants

def zeros(key, shape, dtype=None, out_sharding=None):
    """An array of zeros (jax.nn.initializers.zeros; the key is ignored). Emits stablehlo.constant.

    Example:
      >>> b = hf.nn.initializers.zeros(key, (128,))
    """
    no_sharding("zeros", out_sharding)
    return filled(init_shape("zeros", shape), init_dtype("zeros", dtype, inexact=False), 0)


def ones(key, shape, dtype=None, out_sharding=None):
    """An array of ones (jax.nn.initializers.ones; the key is ignored). Emits stablehlo.constant.

    Example:
      >>> scale = hf.nn.initializers.ones(key, (128,))
    """
    no_sharding("ones", out_sharding)
    return filled(init_shape("ones", shape), init_dtype("ones", dtype, inexact=False), 1)


def constant(value, dtype=None):
    """An initializer filling arrays with ``value`` (jax.nn.initializers.constant).

    Args:
      value: a scalar or an array broadcastable to the shapes asked for.
      dtype: the initializer's default dtype (float32 if None).
    Example:
      >>> init = hf.nn.initializers.constant(-7.0); init(key, (2, 3))
    """
    def init(key, shape, dtype=dtype, out_sharding=None):
        no_sharding("constant", out_sharding)
        return filled(init_shape("constant", shape), init_dtype("constant", dtype, inexact=False), value)
    return init


# ---------------------------------------------------------------- plain distributions

@eager(static=("shape", "dtype", "kind"))
def _scaled(key, shape, dtype, kind, scale, lower=None, upper=None):
    """jax's ``random.<kind>(key, shape, dtype) * jnp.array(scale, dtype)``."""
    if kind == "uniform":
        sample = hr.uniform(key, shape, dtype)
    elif kind == "normal":
        sample = hr.normal(key, shape, dtype)
    else:
        sample = hr.truncated_normal(key, lower, upper, shape, dtype)
    return settled(sample) * asarray(scale, dtype)


def uniform(scale=1e-2, dtype=None):
    """An initializer of uniform values in [0, scale) (jax.nn.initializers.uniform): hloforge.random's
    uniform times ``scale`` (stablehlo.multiply).

    Args:
      scale: the upper bound (default 0.01).
      dtype: the initializer's default dtype (a float dtype; float32 if None).
    Example:
      >>> w = hf.nn.initializers.uniform(10.0)(key, (2, 3))
    """
    def init(key, shape, dtype=dtype, out_sharding=None):
        no_sharding("uniform", out_sharding)
        d = init_dtype("uniform", dtype)
        float_sampler("uniform", d)
        return _scaled(key, init_shape("uniform", shape), d, "uniform", runtime(scale, d))
    return init


def normal(stddev=1e-2, dtype=None):
    """An initializer of normal values with mean 0 and standard deviation ``stddev``
    (jax.nn.initializers.normal; complex dtypes draw complex normals).

    Args:
      stddev: the standard deviation (default 0.01).
      dtype: the initializer's default dtype (float32 if None).
    Example:
      >>> w = hf.nn.initializers.normal(0.02)(key, (512, 512))
    """
    def init(key, shape, dtype=dtype, out_sharding=None):
        no_sharding("normal", out_sharding)
        d = init_dtype("normal", dtype)
        return _scaled(key, init_shape("normal", shape), d, "normal", runtime(stddev, d))
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """An initializer of normal values truncated to (lower, upper), then times ``stddev``
    (jax.nn.initializers.truncated_normal; no variance correction, as in jax).

    Args:
      stddev: the scale applied after truncation (default 0.01).
      dtype: the initializer's default dtype (a float dtype; float32 if None).
      lower, upper: the truncation bounds in units of the untruncated standard deviation.
    Example:
      >>> w = hf.nn.initializers.truncated_normal(0.02)(key, (768, 768))
    """
    def init(key, shape, dtype=dtype, out_sharding=None):
        no_sharding("truncated_normal", out_sharding)
        d = init_dtype("truncated_normal", dtype)
        float_sampler("truncated_normal", d)
        return _scaled(key, init_shape("truncated_normal", shape), d, "truncated", runtime(stddev, d), runtime(lower),
                       runtime(upper))
    return init


# ---------------------------------------------------------------- variance scaling

def _axis_size(shape, axis) -> int:
    if isinstance(axis, (int, np.integer)):
        return shape[axis]
    return math.prod(shape[i] for i in axis)


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out) of a dense or convolution kernel, as jax computes them: the axes
    that are none of in/out/batch form the receptive field, which multiplies both."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"hloforge.nn.initializers: can't compute input and output sizes of a {len(shape)}-"
                         "dimensional weights tensor with the default in_axis; it must be at least 2D, or pass "
                         "in_axis explicitly")
    try:
        in_size, out_size = _axis_size(shape, in_axis), _axis_size(shape, out_axis)
        batch_size = _axis_size(shape, batch_axis)
    except (IndexError, TypeError):
        raise ValueError(f"hloforge.nn.initializers: in_axis {in_axis!r}, out_axis {out_axis!r} and batch_axis "
                         f"{batch_axis!r} must be axes of the shape {tuple(shape)}") from None
    receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


_MODES = ("fan_in", "fan_out", "fan_avg", "fan_geo_avg")
_DISTRIBUTIONS = ("truncated_normal", "normal", "uniform")


def _split2(key):
    keys = hr.split(key)
    return keys[0], keys[1]


def _complex_uniform(key, shape, dtype):
    """jax's ``_complex_uniform``: uniform on the disk of radius sqrt(2) (unit variance)."""
    key_r, key_theta = _split2(key)
    real = dtypes.real_dtype(dtype)
    r = astype(hnp.sqrt(2 * hr.uniform(key_r, shape, real)), dtype)
    theta = 2 * np.pi * astype(hr.uniform(key_theta, shape, real), dtype)
    return r * hnp.exp(1j * theta)


def _complex_truncated_normal(key, neg_upper_sq, shape, dtype):
    """jax's ``_complex_truncated_normal``: a complex normal whose modulus is truncated (``neg_upper_sq``:
    -(upper ** 2) as a 0-d array of ``dtype``)."""
    key_r, key_theta = _split2(key)
    real = dtypes.real_dtype(dtype)
    t = (1 - hnp.exp(asarray(neg_upper_sq))) * astype(hr.uniform(key_r, shape, real), dtype)
    r = hnp.sqrt(-hnp.log(1 - t))
    theta = 2 * np.pi * astype(hr.uniform(key_theta, shape, real), dtype)
    return r * hnp.exp(1j * theta)


# jax's corrections of the truncated normals' standard deviations (truncated at 2)
_REAL_CORRECTION, _COMPLEX_CORRECTION = .87962566103423978, .95311164380491208

# variance_scaling's samples times the scale jax derives from ``variance`` (0-d, of ``dtype``); the
# other scalars are parameters too (see ``runtime``)


@eager(static=("shape", "dtype"))
def _truncated_scaled(key, shape, dtype, variance, correction, lower, upper):
    stddev = hnp.sqrt(asarray(variance)) / asarray(correction)
    return settled(hr.truncated_normal(key, lower, upper, shape, dtype)) * stddev


@eager(static=("shape", "dtype"))
def _complex_truncated_scaled(key, shape, dtype, variance, correction, neg_upper_sq):
    stddev = hnp.sqrt(asarray(variance)) / asarray(correction)
    return settled(_complex_truncated_normal(key, neg_upper_sq, shape, dtype)) * stddev


@eager(static=("shape", "dtype"))
def _normal_scaled(key, shape, dtype, variance):
    return settled(hr.normal(key, shape, dtype)) * hnp.sqrt(asarray(variance))


@eager(static=("shape", "dtype"))
def _uniform_scaled(key, shape, dtype, variance, minval):
    return settled(hr.uniform(key, shape, dtype, minval)) * hnp.sqrt(3 * asarray(variance))


@eager(static=("shape", "dtype"))
def _complex_uniform_scaled(key, shape, dtype, variance):
    return settled(_complex_uniform(key, shape, dtype)) * hnp.sqrt(asarray(variance))


def _variance_scaled(key, shape, dtype, distribution, variance):
    real = dtypes.is_float(dtype)
    if distribution == "truncated_normal":
        if real:
            return _truncated_scaled(key, shape, dtype, variance, runtime(_REAL_CORRECTION, dtype), runtime(-2),
                                     runtime(2))
        return _complex_truncated_scaled(key, shape, dtype, variance, runtime(_COMPLEX_CORRECTION, dtype),
                                         runtime(-(2 ** 2), dtype))
    if distribution == "normal":
        return _normal_scaled(key, shape, dtype, variance)
    if real:
        return _uniform_scaled(key, shape, dtype, variance, runtime(-1))
    return _complex_uniform_scaled(key, shape, dtype, variance)


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """An initializer whose samples have variance ``scale / n`` (jax.nn.initializers.variance_scaling).

    ``n`` is fan_in, fan_out, their mean ("fan_avg") or geometric mean ("fan_geo_avg"), with
    the fans from ``in_axis``/``out_axis`` times the receptive field (the axes that are none of
    in/out/batch, e.g. a conv kernel's spatial axes). "truncated_normal" truncates at 2 standard
    deviations and corrects the scale (stddev / 0.8796...); "uniform" draws from
    [-sqrt(3 var), sqrt(3 var)) (complex dtypes: from a disk).

    Args:
      scale: the scale (a positive number).
      mode: "fan_in", "fan_out", "fan_avg" or "fan_geo_avg".
      distribution: "truncated_normal", "normal" or "uniform".
      in_axis, out_axis, batch_axis: an axis or a sequence of axes of the weight shape.
      dtype: the initializer's default dtype (float32 if None).
    Returns:
      ``init(key, shape, dtype=dtype)``. Invalid modes and distributions raise ValueError there.
    Example:
      >>> init = hf.nn.initializers.variance_scaling(2.0, "fan_in", "truncated_normal")
      >>> w = init(key, (3, 3, 16, 32))
    """
    def init(key, shape, dtype=dtype, out_sharding=None):
        no_sharding("variance_scaling", out_sharding)
        shape = init_shape("variance_scaling", shape)
        dtype = init_dtype("variance_scaling", dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            denominator = fan_in
        elif mode == "fan_out":
            denominator = fan_out
        elif mode == "fan_avg":
            denominator = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            denominator = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(f"hloforge.nn.initializers.variance_scaling: invalid mode {mode!r}; expected one of "
                             f"{', '.join(_MODES)}")
        if distribution not in _DISTRIBUTIONS:
            raise ValueError(f"hloforge.nn.initializers.variance_scaling: invalid distribution {distribution!r}; "
                             f"expected one of {', '.join(_DISTRIBUTIONS)}")
        variance = np.asarray(scale / denominator).astype(dtype)
        return _variance_scaled(key, shape, dtype, distribution, variance)
    return init


def _variance_builder(name, scale, mode, distribution, jax_name):
    def builder(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
        return variance_scaling(scale, mode, distribution, in_axis=in_axis, out_axis=out_axis,
                                batch_axis=batch_axis, dtype=dtype)
    builder.__name__ = builder.__qualname__ = name
    builder.__doc__ = (
        f"{jax_name}: variance_scaling({scale}, {mode!r}, {distribution!r}) (jax.nn.initializers.{name}).\n\n"
        "    Args:\n      in_axis, out_axis, batch_axis: axes of the weight shape (see variance_scaling).\n"
        "      dtype: the initializer's default dtype (float32 if None).\n"
        f"    Example:\n      >>> w = hf.nn.initializers.{name}()(key, (784, 256))\n")
    return builder


glorot_uniform = _variance_builder("glorot_uniform", 1.0, "fan_avg", "uniform", "Glorot (Xavier) uniform")
glorot_normal = _variance_builder("glorot_normal", 1.0, "fan_avg", "truncated_normal", "Glorot (Xavier) normal")
lecun_uniform = _variance_builder("lecun_uniform", 1.0, "fan_in", "uniform", "LeCun uniform")
lecun_normal = _variance_builder("lecun_normal", 1.0, "fan_in", "truncated_normal", "LeCun normal")
he_uniform = _variance_builder("he_uniform", 2.0, "fan_in", "uniform", "He (Kaiming) uniform")
he_normal = _variance_builder("he_normal", 2.0, "fan_in", "truncated_normal", "He (Kaiming) normal")
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


__all__ = ["Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform", "he_normal",
           "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform", "normal", "ones",
           "orthogonal", "truncated_normal", "uniform", "variance_scaling", "xavier_normal", "xavier_uniform",
           "zeros"]

from hloforge.frontend.naming import name_missing_attributes as _public_errors  # noqa: E402
_public_errors(globals())  # (AttributeErrors name hloforge.<module>)
