"""``resolve_target``: the one place a user's ``device=`` (and ``hf.config``) becomes a ``target.Target``.

The path of a device: ``hf.jit(f, device=...)`` (or ``Module.compile(device)``, an eager call, ``to_jax``)
-> ``resolve_target`` -> a Target (devices, kind, cost model, DFT precision, XLA options, callback target,
cache-key environment) -> ``first_call.plan``/``Module.optimize`` take its cost model and DFT precision ->
``compiler.compile_module`` takes the Target -> the caches key on its environment and options ->
``pjrt.compile`` for its devices.
"""
from __future__ import annotations

import functools

from hloforge import target as _target
from hloforge.runtime import pjrt
from hloforge.runtime.settings import config


@functools.lru_cache(maxsize=16)
def _facts(platform: str, flags: str) -> tuple:
    """What a platform (and the user's XLA_FLAGS ``flags``) decide, asked of the PJRT adapter once per
    platform: (kind, XLA options, partial-DFT options, callback target, unsupported element types)."""
    return (_target.kind_of(platform), tuple(sorted(pjrt.backend_options(platform, flags=flags).items())),
            tuple(sorted(pjrt.partial_dft_options(platform, flags).items())), pjrt.python_callback_target(platform),
            pjrt.unsupported_types(platform))


def resolve_target(device=None, cost_model=None, *, devices=None, compiler_options=None) -> _target.Target:
    """The Target of a program compiled for ``device``.

    Args:
      device: None (``hf.config.device``; when that is None too, jax's default backend: the TPU or
        GPU where there is one, else the CPU), "cpu", "gpu", "tpu", a jax Device, or a Target
        (returned as it is).
      cost_model: the ``fft-truncate`` cost model: a CostModel or a name of ``target.COST_MODELS``;
        None: ``hf.config.cost_model``, else the device kind's (``target.TPU`` on a TPU).
      devices: an SPMD device list (partition order) instead of ``device``.
      compiler_options: the user's XLA options (``hf.jit(compiler_options=...)``: checked, a dict or
        None); they win over hloforge's, and a Target passed as ``device`` takes them too.
    Returns:
      A ``hloforge.target.Target``.
    Raises:
      DeviceNotFoundError: no device of the kind asked for (the message names what is present).
    Example:
      >>> resolve_target("cpu").kind
      'cpu'
    """
    if isinstance(device, _target.Target):
        return device.with_compiler_options(compiler_options)
    devs = tuple(devices) if devices is not None else (pjrt.resolve_device(device, config.device),)
    kind, options, dft_options, callback, unsupported = _facts(devs[0].platform, pjrt.xla_flags())
    return _target.Target(devs, kind, _target.resolve(cost_model, kind), options, dft_options, callback,
                          pjrt.environment(devs), unsupported,
                          _target.resolve_dft_precision(None)).with_compiler_options(compiler_options)
