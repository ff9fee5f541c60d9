"""What hloforge knows about the machine a program runs on, below both the passes and the runtime.

The device kinds, the cost models that ``fft-truncate`` (``passes/spectral.py``) consults, the
``Target`` a program is compiled for (resolved once by ``runtime/targets.py``), and the
``hloforge.partial_dft`` module attribute by which the passes tell the compiler
(``runtime/compiler.py``) that a module holds partial DFTs. ``hf.config`` (``runtime/settings.py``)
sets the defaults here, as it sets ``frontend.dtypes``' mode, so that ``Module.optimize`` resolves
its ``cost_model=None`` without importing the runtime.
"""
from __future__ import annotations

import dataclasses
import math

DEVICE_KINDS = ("cpu", "gpu", "tpu")
# jax's platform names -> hloforge's device kinds
_KIND_OF_PLATFORM = {"cpu": "cpu", "gpu": "gpu", "cuda": "gpu", "rocm": "gpu", "tpu": "tpu"}
# set on a module once it holds partial DFTs (the compiler then picks backend options for them)
PARTIAL_DFT_ATTR = "hloforge.partial_dft"


class UnsupportedOnDevice(NotImplementedError):
    """What hloforge refuses to build or compile for a device kind (complex128 or host callbacks on a
    TPU, LAPACK factorizations there): one line naming it, the device kind and what to do instead.

    Example:
      >>> try:
      ...     hf.jit(f, device="tpu")(x)
      ... except hf.UnsupportedOnDevice as e:
      ...     print(e)
    """


@dataclasses.dataclass(frozen=True)
class CostModel:
    """Estimated run times (ns) of an FFT and of the partial DFT that would replace it.

    ``fft_ns`` maps an fft_type to ns per point and log2 of the transform size (an FFT over
    lengths L of a batch B costs ``fft_ns[type] * B * prod(L) * log2(prod(L))``); ``flop_ns`` is
    ns per flop of a small real ``dot_general``; ``byte_ns`` ns per byte of a materialized zero-filled
    spectrum (the pads and concatenates an inverse truncation removes). A partial DFT is used
    when its cost is below ``margin`` times the FFT's.

    Example:
      >>> m.optimize(cost_model=hloforge.target.CostModel("mine", {...}, 0.005, 0.1))
    """
    name: str
    fft_ns: dict
    flop_ns: float
    byte_ns: float
    margin: float = 1.0

    def __post_init__(self):
        if set(self.fft_ns) != {"FFT", "IFFT", "RFFT", "IRFFT"}:
            raise ValueError(f"CostModel.fft_ns needs exactly the keys FFT, IFFT, RFFT, IRFFT, got "
                             f"{sorted(self.fft_ns)}")
        for name in ("flop_ns", "byte_ns", "margin"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"CostModel.{name} must be a number >= 0, got {value!r}")

    def fft_cost(self, kind: str, batch: int, lengths, zero_filled_bytes: int = 0) -> float:
        points = math.prod(lengths)
        return self.fft_ns[kind] * batch * points * max(math.log2(points), 1.0) + self.byte_ns * zero_filled_bytes

    def dft_cost(self, flops: int) -> float:
        return self.flop_ns * flops

    def prefers_partial_dft(self, fft_ns: float, dft_ns: float) -> bool:
        return dft_ns < self.margin * fft_ns


# Measured on the project's 2-core CPU (jax 0.10.2, f32, batch 256 of 64x64): rfft2 0.56 ms with the
# slices of its modes, irfft2 0.68 ms, 0.8 ms more with the zero-filling of its 4 MB spectrum (in
# cache, small spectra cost less: byte_ns is set below that), real dots ~200 GFLOP/s.
CPU = CostModel("cpu", {"FFT": 0.045, "IFFT": 0.048, "RFFT": 0.044, "IRFFT": 0.054}, flop_ns=0.0048,
                byte_ns=0.05)
# GPUs run small matmuls at tens of TFLOP/s while FFTs stay memory-bound.
GPU = CostModel("gpu", {"FFT": 4e-4, "IFFT": 4e-4, "RFFT": 3e-4, "IRFFT": 3e-4}, flop_ns=2e-5, byte_ns=3e-4)
# Measured on one TPU v5e chip (jax 0.10.2; benchmarks/cost_model.py --device tpu, docs/passes.md "The TPU
# cost model"): FFTs cost 7.5e-3 to 1e-2 ns per point and log2 of the transform size over 1-D lengths 1024-4096
# and 2-D 256x256; real dot_generals of partial-DFT shapes at HIGHEST precision (up to 1 GFLOP) and
# zero-filling 32 MB stay under the ~0.12 ms a call costs, so flop_ns and byte_ns are bounds from above.
TPU = CostModel("tpu", {"FFT": 9.5e-3, "IFFT": 9.8e-3, "RFFT": 7.5e-3, "IRFFT": 8.0e-3}, flop_ns=1e-4,
                byte_ns=2.5e-3)
# Never prefers a partial DFT: FFTs stay FFTs (e.g. ``hf.config.cost_model = target.KEEP_FFTS``).
KEEP_FFTS = CostModel("keep-ffts", dict(CPU.fft_ns), flop_ns=math.inf, byte_ns=0.0)
COST_MODELS = {"cpu": CPU, "gpu": GPU, "tpu": TPU, "keep-ffts": KEEP_FFTS}

# The precisions a partial DFT's contractions may have (``optimize(dft_precision=...)``), most accurate first.
DFT_PRECISIONS = ("highest", "high", "default")

# hf.config's device (None: jax's default backend), cost_model and dft_precision (runtime/settings.py keeps
# them here)
_defaults = {"device": None, "cost_model": None, "dft_precision": "highest"}


def kind_of(platform: str) -> str:
    """hloforge's device kind ("cpu", "gpu" or "tpu") of a jax platform name ("cuda", "rocm", ...)."""
    try:
        return _KIND_OF_PLATFORM[platform]
    except KeyError:
        raise ValueError(f"hloforge knows the device kinds {DEVICE_KINDS}; jax's platform {platform!r} is "
                         f"none of them") from None


def default_kind() -> str:
    """The device kind programs are built for when none is given: ``hf.config.device``, or when that
    is None the kind of jax's default backend (the TPU or GPU when there is one, else the CPU)."""
    if _defaults["device"] is not None:
        return _defaults["device"]
    import jax  # (here, not at import: ``import hloforge`` starts no backend)
    return kind_of(jax.default_backend())


@dataclasses.dataclass(frozen=True)
class Target:
    """Where and how one program is compiled, resolved once (``runtime/targets.py``'s
    ``resolve_target``) from ``device=`` and ``hf.config``, then carried through optimize, compile
    and the caches.

    Attributes:
      devices: the jax Devices (one, or the SPMD list in partition order).
      kind: "cpu", "gpu" or "tpu".
      cost_model: the CostModel ``fft-truncate`` uses for this program.
      xla_options: the XLA options hloforge adds on this platform, as sorted (name, value) pairs.
      partial_dft_options: more options for a module holding fft-truncate's DFT contractions.
      callback_target: the custom-call target of a Python host callback, or None where hloforge
        has none (the TPU: jax's send/recv callbacks are not supported yet).
      environment: what besides the module decides the compiled code (the caches' keys).
      unsupported_types: MLIR element types XLA aborts on for this platform (complex<f64> on a TPU),
        refused in one line before XLA sees them.
      dft_precision: the precision of ``fft-truncate``'s DFT contractions ("highest", "high" or
        "default": ``hf.config.dft_precision``).
    Example:
      >>> t = hloforge.runtime.targets.resolve_target("cpu"); t.kind, t.cost_model.name
      ('cpu', 'cpu')
    """
    devices: tuple
    kind: str
    cost_model: CostModel
    xla_options: tuple
    partial_dft_options: tuple
    callback_target: str | None
    environment: tuple
    unsupported_types: tuple = ()
    dft_precision: str = "highest"

    @property
    def device(self):
        return self.devices[0]

    def options(self, partial_dfts: bool = False) -> dict:
        """The XLA options to compile a module with (``partial_dfts``: it holds DFT contractions)."""
        return dict(self.xla_options + (self.partial_dft_options if partial_dfts else ()))

    def with_compiler_options(self, compiler_options: dict | None) -> "Target":
        """This Target with the user's XLA options (``hf.jit(compiler_options=...)``, checked by
        ``check_compiler_options``) over hloforge's: an option both name is the user's."""
        if not compiler_options:
            return self
        options = dict(self.xla_options)
        options.update(compiler_options)
        return dataclasses.replace(
            self, xla_options=tuple(sorted(options.items())),
            partial_dft_options=tuple(kv for kv in self.partial_dft_options if kv[0] not in compiler_options))


_OPTION_VALUE_TYPES = (str, bool, int, float)


def check_compiler_options(value, what: str = "compiler_options") -> dict | None:
    """None for None; a copy of ``value`` if it is a dict of XLA option names (str) to str, bool, int or float
    values, as jax.jit's ``compiler_options`` takes; else a TypeError naming ``what`` and the bad entry.
    (XLA itself refuses an unknown name or a value of the wrong kind when it compiles.)"""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise TypeError(f"{what}: compiler_options must be a dict of XLA option names to values, got {value!r}")
    for name, option in value.items():
        if not isinstance(name, str) or not isinstance(option, _OPTION_VALUE_TYPES):
            raise TypeError(f"{what}: compiler_options maps XLA option names (str) to str, bool, int or float "
                            f"values, got {name!r}: {option!r}")
    return dict(value)


def check_cost_model(value, what: str = "cost_model"):
    """``value`` if it is None, a name of ``COST_MODELS`` or a CostModel; else a ValueError naming ``what``."""
    if value is None or isinstance(value, CostModel) or (isinstance(value, str) and value in COST_MODELS):
        return value
    raise ValueError(f"{what} must be None, {', '.join(map(repr, COST_MODELS))} or a "
                     f"hloforge.target.CostModel, got {value!r}")


def check_device_kind(value, what: str = "device"):
    """``value`` if it is None (jax's default backend) or one of ``DEVICE_KINDS``; else a ValueError."""
    if value is not None and value not in DEVICE_KINDS:
        raise ValueError(f"{what} must be None (jax's default device) or one of {DEVICE_KINDS}, got {value!r}")
    return value


def check_dft_precision(value, what: str = "dft_precision") -> str:
    """``value`` in lower case if it names one of ``DFT_PRECISIONS`` (in any case); else a ValueError."""
    if not isinstance(value, str) or value.lower() not in DFT_PRECISIONS:
        raise ValueError(f"{what} must be one of {list(DFT_PRECISIONS)}, got {value!r}")
    return value.lower()


def set_defaults(device, cost_model, dft_precision: str = "highest") -> None:
    """The device kind (None: jax's default backend's), cost model (None: the device's) and DFT
    precision that ``resolve(None)`` and ``resolve_dft_precision(None)`` use: hf.config's."""
    check_device_kind(device, "config.device")
    _defaults.update(device=device, cost_model=check_cost_model(cost_model, "config.cost_model"),
                     dft_precision=check_dft_precision(dft_precision, "config.dft_precision"))


def resolve_dft_precision(value=None, what: str = "dft_precision") -> str:
    """``value`` checked (a ValueError naming ``what``) and in lower case; None: ``hf.config.dft_precision``."""
    return _defaults["dft_precision"] if value is None else check_dft_precision(value, what)


def resolve(model=None, kind: str | None = None) -> CostModel:
    """A CostModel from a CostModel or a name of ``COST_MODELS``; None: ``hf.config.cost_model``,
    and when that is None too the model of device kind ``kind`` (None: ``default_kind()``)."""
    check_cost_model(model)
    if model is None:
        model = _defaults["cost_model"] or kind or default_kind()
    return model if isinstance(model, CostModel) else COST_MODELS[model]
