"""``hf.config``: the one place for hloforge's runtime settings.

Each setting starts from an environment variable when it is set:

==================  ========================  =========================================
setting             environment variable      meaning
==================  ========================  =========================================
``device``          ``HLOFORGE_DEVICE``       default device kind: "cpu", "gpu", "tpu" or None (the
                                              default: jax's default device, the TPU or GPU where
                                              there is one, else the CPU)
``cache_size``      ``HLOFORGE_CACHE_SIZE``   executables kept in memory (LRU; default 256; 0 = none)
``cache_dir``       ``HLOFORGE_CACHE_DIR``    persistent executable cache directory (default:
                                              ``$XDG_CACHE_HOME/hloforge``, else ``~/.cache/hloforge``;
                                              "" or None = no disk cache)
``cache_max_bytes`` ``HLOFORGE_CACHE_MAX_BYTES`` the most the directory's entries add up to (LRU;
                                              default 1 GiB; bytes, or with K/M/G/T: "512M")
``local_ffts``      ``HLOFORGE_LOCAL_FFTS``   sharded compiles keep batch-sharded FFTs local
                                              (default on; "0" turns it off; docs/runtime.md)
``log``             ``HLOFORGE_LOG``          XLA's C++ log lines shown: "error" (default: quiet),
                                              "warning", "info" or "debug"
``cost_model``      ``HLOFORGE_COST_MODEL``   what ``fft-truncate`` assumes about the target: "cpu",
                                              "gpu", "tpu", "keep-ffts" or a ``hloforge.target.CostModel``
                                              (default None: the model of the device; docs/passes.md)
``dft_precision``   ``HLOFORGE_DFT_PRECISION`` the precision of ``fft-truncate``'s DFT contractions: "highest"
                                              (the default: as accurate as an FFT), "high" or "default"
                                              (faster on a TPU, less accurate; docs/passes.md)
``dtypes``          ``HLOFORGE_DTYPES``       hloforge.numpy's dtype rules: "numpy" (numpy 2, the default)
                                              or "jax" (jax without x64: 32-bit defaults; docs/dtypes.md)
``first_call``      ``HLOFORGE_FIRST_CALL``   what hf.jit compiles first for a program that spectral truncation
                                              rewrites: "fast" (default: FFTs kept on the first call, the
                                              truncated program from the second call on, compiled in the
                                              background) or "steady" (the truncated program at once)
==================  ========================  =========================================
"""
from __future__ import annotations

import os
import re

from hloforge import target as _target
from hloforge.frontend import dtypes as _dtypes
from hloforge.runtime import cache, pjrt

FIRST_CALL_MODES = ("fast", "steady")
_SIZE = re.compile(r"\s*(\d+)\s*(?:([kmgt])(?:i?b)?|b)?\s*", re.IGNORECASE)
_UNITS = {None: 0, "k": 10, "m": 20, "g": 30, "t": 40}


def parse_size(text: str) -> int:
    """Bytes from "1073741824", "512M", "1G", "1GiB" (binary units); ValueError otherwise."""
    match = _SIZE.fullmatch(text)
    if match is None:
        raise ValueError(f"expected a size in bytes such as 1073741824, 512M or 1G, got {text!r}")
    return int(match.group(1)) << _UNITS[match.group(2) and match.group(2).lower()]


def _count(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"config.{name} must be an integer >= 0, got {value!r}")
    return value


def _cache_path(value) -> str | None:
    """``config.cache_dir``'s path: ``~`` and ``~user`` expanded (a directory named ``~`` is never
    meant); None for ""; ValueError for a path no file system takes (a null byte) or a ``~`` that
    does not expand (no home directory, no such user)."""
    path = os.fspath(value)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not path:
        return None
    if "\x00" in path:
        raise ValueError(f"config.cache_dir must be a path without null bytes, got {path!r}")
    expanded = os.path.expanduser(path)
    if expanded.startswith("~"):
        raise ValueError(f"config.cache_dir: cannot expand {path!r} (no such user, or no home directory)")
    return expanded


class Config:
    """hloforge's runtime settings; change them as attributes: ``hf.config.cache_size = 64``."""

    __slots__ = ("_device", "_cache_size", "_cache_dir", "_cache_max_bytes", "_local_ffts", "_log", "_cost_model",
                 "_dft_precision", "_dtypes", "_first_call")

    def __init__(self, environ=None):
        env = os.environ if environ is None else environ
        device = (env.get("HLOFORGE_DEVICE") or "").strip().lower() or None
        try:
            self.device = device
        except ValueError:
            raise ValueError(f"HLOFORGE_DEVICE must be unset (jax's default device) or one of "
                             f"{_target.DEVICE_KINDS}, got {env.get('HLOFORGE_DEVICE')!r}") from None
        size = env.get("HLOFORGE_CACHE_SIZE")
        try:
            self.cache_size = 256 if size in (None, "") else int(size)
        except ValueError:
            raise ValueError(f"HLOFORGE_CACHE_SIZE must be an integer >= 0, got {size!r}") from None
        directory = env.get("HLOFORGE_CACHE_DIR")
        try:
            self.cache_dir = cache.default_directory(env) if directory is None else directory
        except ValueError as e:
            raise ValueError(f"HLOFORGE_CACHE_DIR: {e}") from None
        limit = env.get("HLOFORGE_CACHE_MAX_BYTES")
        try:
            self.cache_max_bytes = cache.DEFAULT_MAX_BYTES if limit in (None, "") else parse_size(limit)
        except ValueError as e:
            raise ValueError(f"HLOFORGE_CACHE_MAX_BYTES: {e}") from None
        self.local_ffts = env.get("HLOFORGE_LOCAL_FFTS", "1").strip().lower() not in ("0", "false", "no", "off")
        log = (env.get("HLOFORGE_LOG") or "error").strip().lower()
        try:
            self.log = log
        except ValueError:
            raise ValueError(f"HLOFORGE_LOG must be one of {tuple(pjrt.LOG_LEVELS)}, got {log!r}") from None
        self.cost_model = env.get("HLOFORGE_COST_MODEL") or None
        precision = (env.get("HLOFORGE_DFT_PRECISION") or "highest").strip()
        try:
            self.dft_precision = precision
        except ValueError:
            raise ValueError(f"HLOFORGE_DFT_PRECISION must be one of {list(_target.DFT_PRECISIONS)}, got "
                             f"{env.get('HLOFORGE_DFT_PRECISION')!r}") from None
        mode = (env.get("HLOFORGE_DTYPES") or "numpy").strip().lower()
        try:
            self.dtypes = mode
        except ValueError:
            raise ValueError(f"HLOFORGE_DTYPES must be one of {_dtypes.MODES}, got {env.get('HLOFORGE_DTYPES')!r}") from None
        first = (env.get("HLOFORGE_FIRST_CALL") or "fast").strip().lower()
        if first not in FIRST_CALL_MODES:
            raise ValueError(f"HLOFORGE_FIRST_CALL must be one of {FIRST_CALL_MODES}, got "
                             f"{env.get('HLOFORGE_FIRST_CALL')!r}")
        self._first_call = first

    def _publish_target_defaults(self):
        """hf.config's device, cost model and DFT precision, where ``hloforge.target`` reads them."""
        if self is _GLOBAL[0]:
            _target.set_defaults(self._device, self._cost_model, self._dft_precision)

    @property
    def device(self):
        """The device kind used when none is given: "cpu", "gpu", "tpu", or None (the default: jax's
        default device, as jax.jit picks it: the TPU or GPU where there is one, else the CPU). A kind
        that is absent raises ``hf.DeviceNotFoundError`` at the first compile, naming what is present."""
        return self._device

    @device.setter
    def device(self, value):
        self._device = _target.check_device_kind(value, "config.device")
        self._publish_target_defaults()

    @property
    def cache_size(self) -> int:
        """How many compiled executables the in-memory cache keeps (least recently used go first)."""
        return self._cache_size

    @cache_size.setter
    def cache_size(self, value):
        self._cache_size = _count("cache_size", value)
        if self is _GLOBAL[0]:
            cache.MEMORY.resize(value)  # (a smaller size evicts now)

    @property
    def cache_dir(self) -> str | None:
        """Directory of serialized executables shared between processes (by default
        ``$XDG_CACHE_HOME/hloforge``, else ``~/.cache/hloforge``), or None: no disk cache ("" too)."""
        return self._cache_dir

    @cache_dir.setter
    def cache_dir(self, value):
        if value is not None and not isinstance(value, (str, os.PathLike)):
            raise TypeError(f"config.cache_dir must be a path or None, got {type(value).__name__} {value!r}")
        self._cache_dir = None if value is None else _cache_path(value)

    @property
    def cache_max_bytes(self) -> int:
        """The most bytes the entries of ``cache_dir`` add up to; the least recently used go first."""
        return self._cache_max_bytes

    @cache_max_bytes.setter
    def cache_max_bytes(self, value):
        self._cache_max_bytes = _count("cache_max_bytes", value)

    @property
    def local_ffts(self) -> bool:
        """Whether sharded compiles wrap batch-sharded FFTs in manual regions so XLA does not
        all-gather them (see ``runtime/fft_sharding.py``)."""
        return self._local_ffts

    @local_ffts.setter
    def local_ffts(self, value):
        if not isinstance(value, bool):
            raise TypeError(f"config.local_ffts must be True or False, got {value!r}")
        self._local_ffts = value

    @property
    def log(self) -> str:
        """The least severe XLA/PJRT C++ log lines printed on stderr: "error" (the default, so
        importing hloforge and its CLI print no INFO/WARNING lines), "warning", "info", "debug"."""
        return self._log

    @log.setter
    def log(self, value):
        if value not in pjrt.LOG_LEVELS:
            raise ValueError(f"config.log must be one of {tuple(pjrt.LOG_LEVELS)}, got {value!r}")
        self._log = value
        if self is _GLOBAL[0]:
            pjrt.set_log_level(value)

    @property
    def cost_model(self):
        """What the ``fft-truncate`` passes assume about the target: None (the model of the device a
        program is compiled for), "cpu", "gpu", "tpu", "keep-ffts" (never truncate) or a
        ``hloforge.target.CostModel``."""
        return self._cost_model

    @cost_model.setter
    def cost_model(self, value):
        self._cost_model = _target.check_cost_model(value, "config.cost_model")
        self._publish_target_defaults()

    @property
    def dft_precision(self) -> str:
        """The precision of the contractions ``fft-truncate``'s partial DFTs are made of, where
        ``optimize(dft_precision=None)``: "highest" (the default: as accurate as the FFT it replaces on
        every device), "high" (on a TPU three bfloat16 passes, about 1e-5 relative) or "default" (one
        bfloat16 pass on a TPU, as jax's f32 dots there). Set it before the first call: programs
        already optimized keep theirs."""
        return self._dft_precision

    @dft_precision.setter
    def dft_precision(self, value):
        self._dft_precision = _target.check_dft_precision(value, "config.dft_precision")
        self._publish_target_defaults()

    @property
    def dtypes(self) -> str:
        """hloforge.numpy's dtype rules: "numpy" (numpy 2: float64/int64 defaults, the default) or
        "jax" (jax without x64: float32/int32 defaults, 64-bit inputs narrowed to 32 bits, jax's
        promotion table). Python scalars are weakly typed in both, hf.jit's scalar arguments too.
        Set it before tracing: hf.jit traces again for the other mode; docs/dtypes.md lists the
        differences."""
        return self._dtypes

    @dtypes.setter
    def dtypes(self, value):
        if value not in _dtypes.MODES:
            raise ValueError(f"config.dtypes must be one of {_dtypes.MODES}, got {value!r}")
        self._dtypes = value
        if self is _GLOBAL[0]:
            _dtypes.set_mode(value)

    @property
    def first_call(self) -> str:
        """What ``hf.jit`` compiles on the first call of a program that ``fft-truncate`` rewrites:
        "fast" (the default: the program with its FFTs, which XLA compiles as fast as jax's; the
        truncated one from the second call on, compiled in a background thread and used once ready,
        unless the executable cache already holds it) or "steady" (the truncated program at once).
        Results of the two programs agree to a few ulps, not bit for bit (docs/passes.md)."""
        return self._first_call

    @first_call.setter
    def first_call(self, value):
        if value not in FIRST_CALL_MODES:
            raise ValueError(f"config.first_call must be one of {FIRST_CALL_MODES}, got {value!r}")
        self._first_call = value

    def __repr__(self):
        return (f"Config(device={self.device!r}, cache_size={self.cache_size}, cache_dir={self.cache_dir!r}, "
                f"cache_max_bytes={self.cache_max_bytes}, local_ffts={self.local_ffts}, log={self.log!r}, "
                f"cost_model={self.cost_model!r}, dft_precision={self.dft_precision!r}, "
                f"dtypes={self.dtypes!r}, first_call={self.first_call!r})")


_GLOBAL = [None]
config = Config()
_GLOBAL[0] = config
cache.MEMORY.resize(config.cache_size)
pjrt.set_log_level(config.log)
_dtypes.set_mode(config.dtypes)
config._publish_target_defaults()
