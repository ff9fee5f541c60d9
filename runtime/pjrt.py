"""The one adapter between hloforge and jaxlib's PJRT runtime (version-specific calls only).

Everything that touches jax/jaxlib runtime internals (clients, compile options, executables,
serialization, sharded execution, jax's sharding classes) lives here.
"""
from __future__ import annotations

import os

import numpy as np

import jax
import jaxlib
from jax._src.xla_bridge import backends as _backends, default_backend as _default_backend
from jax._src.xla_bridge import get_backend  # (what jax.extend.backend exports; importing jax.extend loads Pallas, 40 ms)
from jax.sharding import Mesh, NamedSharding, PartitionSpec
from jax._src import config as _config
from jax._src import core as _core
from jax._src import mesh as _mesh
from jax._src import tree_util as _tree_util
from jax._src.interpreters import pxla as _pxla
from jax._src.lib import _jax
from jax._src.lib import utils as _absl
from jax._src.lib import xla_client as xc
from jax._src.sharding_impls import parse_flatten_op_sharding

from hloforge.target import DEVICE_KINDS, UnsupportedOnDevice, kind_of

_INSTALL = {"gpu": "install the CUDA plugin with `pip install 'hloforge[cuda12]'` (jax-cuda12-plugin) on a "
                   "machine with an NVIDIA GPU and driver",
            "tpu": "on a TPU VM, install jax's TPU support (`pip install 'jax[tpu]'`)"}

__all__ = ["Mesh", "NamedSharding", "PartitionSpec", "DeviceNotFoundError", "CompileError",
           "ExecutionError"]


class DeviceNotFoundError(RuntimeError):
    """The requested kind of device is not available."""


class CompileError(RuntimeError):
    """XLA rejected a module; the message carries XLA's diagnostic."""


class UnsupportedCompile(CompileError, UnsupportedOnDevice):
    """A module hloforge does not hand to XLA for this device kind (XLA would abort or crash on it)."""


class ExecutionError(RuntimeError):
    """Running a compiled executable failed (e.g. out of memory)."""


RuntimeFailure = jax.errors.JaxRuntimeError

# ---------------------------------------------------------------- devices


# jax's platforms by its own priority (xla_bridge's default): accelerators before the CPU
_PLATFORM_ORDER = ("tpu", "cuda", "rocm", "gpu", "cpu")


def platforms() -> list:
    """The platforms jax has a backend for ("tpu", "cuda", "cpu", ...), jax's default one first."""
    default = _default_backend()
    names = [n for n in _backends() if n in _PLATFORM_ORDER]
    return sorted(names, key=lambda n: (n != default, _PLATFORM_ORDER.index(n)))


def default_platform() -> str:
    """The platform of jax's default backend: "tpu", "cuda", "rocm" or "cpu"."""
    return _default_backend()


def _present() -> str:
    counts = [(kind_of(p), len(get_backend(p).devices())) for p in platforms()]
    return ", ".join(f"{kind} ({n} device{'s' * (n != 1)})" for kind, n in counts) or "no devices"


def client(kind: str = "cpu"):
    """The PJRT client of device kind ``kind`` ("cpu", "gpu" or "tpu"; GPUs and TPUs come from jax's
    plugin discovery); a DeviceNotFoundError naming the kind and what is present when there is none."""
    try:
        return get_backend(kind)
    except RuntimeError:
        kind = kind_of(kind) if kind in _PLATFORM_ORDER else kind
        how = _INSTALL.get(kind, "")
        label = kind.upper() if how else repr(kind)
        raise DeviceNotFoundError(f"no {label} found: this process has {_present()}" + (f"; {how}" if how else "")) \
            from None


def devices(kind: str | None = None, *, local: bool = False) -> list:
    """PJRT devices of ``kind`` ("cpu", "gpu" or "tpu"); None: jax's default backend's, as ``jax.devices()``
    (the TPU's or GPU's where there is one: a mesh over them never mixes in the CPU).

    In a multi-process run (``jax.distributed``) these are the *global* devices, every
    process's; ``local=True``: only the ones this process addresses (``jax.local_devices``)."""
    def of(c):
        return list(c.local_devices() if local else c.devices())

    if kind is not None and not isinstance(kind, str):
        raise TypeError(f"hloforge.devices: kind must be None or one of {DEVICE_KINDS}, got {kind!r}")
    if kind is not None and kind not in DEVICE_KINDS and kind not in _PLATFORM_ORDER:
        raise ValueError(f"hloforge.devices: kind must be None or one of {DEVICE_KINDS}, got {kind!r}")
    return of(client(default_platform() if kind is None else kind))


def resolve_device(device=None, default: str | None = None):
    """None -> the first addressable device of kind ``default`` (None: of jax's default backend, as
    jax.jit places a computation); "cpu"/"gpu"/"tpu" -> that kind's first addressable device; a
    Device as is (it must be one this process addresses)."""
    if device is None:
        device = default if default is not None else default_platform()
    if isinstance(device, str):
        if device not in DEVICE_KINDS and device not in _PLATFORM_ORDER:
            raise ValueError(f"device must be None or one of {DEVICE_KINDS}, got {device!r}")
        return devices(device, local=True)[0]
    if hasattr(device, "platform") and hasattr(device, "client"):
        if not addressable(device):
            raise ValueError(f"device {device} belongs to process {device.process_index}; this process "
                             f"({device.client.process_index()}) can only run on its own devices "
                             f"(hf.devices(local=True)); use a mesh over hf.devices() for all of them")
        return device
    raise TypeError(f"device must be None, 'cpu', 'gpu', 'tpu' or a jax Device, got {device!r}")


def environment(devs) -> tuple:
    """What, besides the module and options, decides the compiled code (part of cache keys)."""
    c = devs[0].client
    return (jaxlib.__version__, c.platform, c.platform_version, xla_flags(),
            tuple(d.id for d in devs), tuple(d.device_kind for d in devs))


def live_counts(device=None) -> tuple:
    """(live executables, live arrays) of the device's client (leak checks)."""
    c = resolve_device(device).client
    return len(c.live_executables()), len(c.live_arrays())

# ---------------------------------------------------------------- compiling


def use_shardy() -> bool:
    """Whether sharded modules are annotated for and partitioned by Shardy (jax's flag)."""
    return bool(jax.config.jax_use_shardy_partitioner)


# XLA:CPU's LLVM pipeline at level 2 instead of its default 3. On the 20 programs of docs/runtime.md
# ("XLA options") the results are the same bits and the run times the same; compiling takes up to 40%
# less. (Level 1 compiles as fast but flushed a bf16 subnormal that levels 2 and 3 move unchanged.)
_CPU_OPTIONS = {"xla_backend_optimization_level": 2}


def xla_flags() -> str:
    """The user's ``XLA_FLAGS`` (XLA reads them once per process, for jax's compiles and hloforge's)."""
    return os.environ.get("XLA_FLAGS", "")


def flag_names(flags: str) -> frozenset:
    """The option names an ``XLA_FLAGS`` string sets (``--name=value``, ``--name`` or ``-name``)."""
    return frozenset(token.lstrip("-").split("=", 1)[0] for token in flags.split() if token.startswith("-"))


def _unless_flagged(options: dict, flags: str | None) -> dict:
    """``options`` less those ``flags`` (None: ``xla_flags()``) names: the user's XLA_FLAGS win over
    hloforge's defaults, as they do over XLA's (a compile option would otherwise override them)."""
    named = flag_names(xla_flags() if flags is None else flags)
    return {name: value for name, value in options.items() if name not in named}


def partial_dft_options(platform: str, flags: str | None = None) -> dict:
    """XLA's options for a module that holds fft-truncate's DFT contractions on ``platform``
    (jax.jit's ``compiler_options``): XLA:CPU compiles them to YNNPACK fusions by default; those
    cost 7-130 ms more on the first execution (and some compile time) and run no faster here, so
    they are turned off. An option the user's ``XLA_FLAGS`` (or ``flags``) names is theirs."""
    return _unless_flagged({"xla_cpu_experimental_ynn_fusion_type": ""} if platform == "cpu" else {}, flags)


def backend_options(platform: str, partial_dfts: bool = False, flags: str | None = None) -> dict:
    """The XLA options hloforge compiles with on ``platform`` (``_CPU_OPTIONS`` on CPU, plus
    ``partial_dft_options`` when the module holds partial DFTs), less the options the user's
    ``XLA_FLAGS`` (or ``flags``) names: ``XLA_FLAGS=--xla_backend_optimization_level=3`` compiles
    hloforge's programs at level 3, as it does jax's."""
    options = _unless_flagged(dict(_CPU_OPTIONS) if platform == "cpu" else {}, flags)
    if partial_dfts:
        options.update(partial_dft_options(platform, flags))
    return options


# compiler options that jax 0.10.2's get_compile_options sets on the ExecutableBuildOptions, not as overrides
_BUILD_OPTIONS = ("exec_time_optimization_effort", "memory_fitting_effort", "optimization_level",
                  "memory_fitting_level")


def compile_options(devs, shardy: bool | None = None, xla_options: dict | None = None, *,
                    partial_dfts: bool = False):
    """One device: that device assigned to the one replica. Several: SPMD over ``devs`` (their
    order = partition ids). ``xla_options``: the XLA options (a Target's ``options()``); None:
    ``backend_options`` of the devices' platform (``partial_dfts``: the module holds fft-truncate's
    DFT contractions)."""
    options = xc.CompileOptions()
    overrides = dict(backend_options(devs[0].platform, partial_dfts) if xla_options is None else xla_options)
    for name in _BUILD_OPTIONS:  # (as jax.jit's compiler_options: these are set on the build options)
        if name in overrides:
            setattr(options.executable_build_options, name, overrides.pop(name))
    if overrides:
        options.env_option_overrides = list(overrides.items())
    if len(devs) == 1:
        # (without an assignment PJRT runs replica 0 on the client's first device, whatever
        # device the executable was loaded for)
        options.device_assignment = xc.DeviceAssignment.create(np.array([[devs[0].id]]))
        return options
    options.num_replicas = 1
    options.num_partitions = len(devs)
    build = options.executable_build_options
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = use_shardy() if shardy is None else shardy
    options.device_assignment = xc.DeviceAssignment.create(np.array([[d.id for d in devs]]))
    return options


_lapack_loaded = False


def prepare_custom_calls(code: str | bytes) -> None:
    """Load what the custom calls in module text (or bytecode) ``code`` need before XLA compiles (or the disk
    cache deserializes) it: jaxlib's ``lapack_*`` kernels are registered with XLA from the start,
    but find their LAPACK routines only once ``jaxlib.lapack`` initialized them, which jax (and
    hloforge.lax.linalg) do while emitting such a call; a module parsed from text never did, and
    running its calls then segfaults. Once per process."""
    if not _lapack_loaded and ("lapack_" if isinstance(code, str) else b"lapack_") in code:
        load_lapack()


def load_lapack() -> None:
    """Make jaxlib's ``lapack_*`` kernels find their LAPACK routines (once per process)."""
    global _lapack_loaded
    if not _lapack_loaded:
        from jaxlib import lapack
        lapack._lapack.initialize()
        _lapack_loaded = True


def compile(code, devs, options=None, host_callbacks=None):
    """Compile StableHLO (text or bytecode) for ``devs`` (one device, or an SPMD device list).

    ``host_callbacks``: the Python functions the module's FFI callbacks call, by index (then
    ``code`` is a parsed ``ir.Module``: jaxlib takes the list only with one); the executable
    keeps them alive, and comes back wrapped in ``WithHostCallbacks``."""
    if not isinstance(devs, (list, tuple)):
        devs = (devs,)
    options = compile_options(devs) if options is None else options
    try:
        if host_callbacks is None:
            return devs[0].client.compile_and_load(code, xc.DeviceList(tuple(devs)), options)
        return WithHostCallbacks(devs[0].client.compile_and_load(
            code, executable_devices=xc.DeviceList(tuple(devs)), compile_options=options,
            host_callbacks=list(host_callbacks)))
    except RuntimeFailure as e:
        raise CompileError(str(e)) from None


# jaxlib's FFI targets of Python callbacks (jax 0.10.2's emit_python_callback): the one place that
# picks them per platform. (jax's TPU callbacks are send/recv pairs with host channels instead, which
# hloforge does not emit yet.)
_PYTHON_CALLBACK_TARGETS = {"cpu": "xla_ffi_python_cpu_callback", "gpu": "xla_ffi_python_gpu_callback",
                            "cuda": "xla_ffi_python_gpu_callback", "rocm": "xla_ffi_python_gpu_callback"}


# element types XLA aborts the process on (not an error it returns), by platform: XLA:TPU has no complex128
_UNSUPPORTED_TYPES = {"tpu": ("complex<f64>",)}


def unsupported_types(platform: str) -> tuple:
    """The MLIR element types a program for ``platform`` must not hold (XLA would abort on them)."""
    return _UNSUPPORTED_TYPES.get(platform, ())


def python_callback_target(platform: str) -> str | None:
    """The custom-call target of a Python host callback on ``platform`` (a device's ``platform``),
    or None where hloforge has none (the TPU)."""
    return _PYTHON_CALLBACK_TARGETS.get(platform)


class WithHostCallbacks:
    """A loaded executable whose module calls back into Python: every attribute is the
    executable's, except that ``execute`` waits for the run to end (its callbacks have run, a
    failing one's error is raised), and jax's C++ dispatch loop never runs it (``fastpath_data`` is
    None; jax skips it for host callbacks too)."""
    __slots__ = ("loaded",)

    def __init__(self, loaded):
        self.loaded = loaded

    def __getattr__(self, name):
        return getattr(self.loaded, name)

    def execute(self, arrays):
        outs, token = self.loaded.execute_with_token(arrays)
        token.block_until_ready()
        return outs


def process_grid_options(grid):
    """Compile options for a grid of processes, ``grid[replica][partition]`` = its device, each running
    the whole program (replica_id, partition_id and the collectives tell them apart, as in StableHLO's
    interpreter.run_parallel). With several partitions, the module's arguments and results must be
    ``{manual}`` (GSPMD's partitioner then leaves the program as it is)."""
    options = xc.CompileOptions()
    options.num_replicas, options.num_partitions = len(grid), len(grid[0])
    options.device_assignment = xc.DeviceAssignment.create(np.array([[d.id for d in row] for row in grid]))
    if len(grid[0]) > 1:  # (XLA takes partitions only through its partitioner: the module must be all {manual})
        options.executable_build_options.use_spmd_partitioning = True
        options.executable_build_options.use_shardy_partitioner = False
    return options


def execute_per_device(loaded, devs, args) -> list:
    """Run a multi-device executable with other arguments on every device: ``args[k]`` are the host
    arrays of ``devs[k]``. Returns the host results of every device, in the order of ``devs``."""
    mesh = Mesh(np.array(devs), ("process",))
    replicated = NamedSharding(mesh, PartitionSpec())  # (each device holds its own value: never read as one)
    arrays = [jax.make_array_from_single_device_arrays(
        per_device[0].shape, replicated, [put(np.asarray(a), d) for a, d in zip(per_device, devs)])
        for per_device in zip(*args)] if args and args[0] else []
    try:
        results = loaded.execute_sharded(arrays).disassemble_into_single_device_arrays()
    except RuntimeFailure as e:
        raise ExecutionError(str(e)) from None
    by_device = [dict((next(iter(r.devices())), np.asarray(r)) for r in result) for result in results]
    return [[outputs[d] for outputs in by_device] for d in devs]


def serialize(loaded) -> bytes:
    return loaded.serialize()


def deserialize(data: bytes, devs, options):
    """A loaded executable from ``serialize``'s bytes; raises ValueError if they are unusable."""
    try:
        return devs[0].client.deserialize_executable(data, xc.DeviceList(tuple(devs)), options)
    except (RuntimeFailure, RuntimeError, ValueError, TypeError) as e:
        raise ValueError(f"cannot deserialize executable: {e}") from None

# ---------------------------------------------------------------- running


def x64_scope():
    """jax's thread-local ``enable_x64`` (never the user's global flag): inside it jax keeps
    64-bit dtypes and makes Python floats/ints float64/int64, as hloforge does."""
    return jax.enable_x64(True)


_X64 = _config.enable_x64


def call_x64(fn, args):
    """``fn(*args)`` inside ``x64_scope()``, at a third of the context manager's cost (the
    per-call path of 64-bit arguments)."""
    hook = _X64._update_thread_local_hook
    prev = _X64.swap_local(True)
    if hook:
        hook(True)
    try:
        return fn(*args)
    finally:
        _X64.set_local(prev)
        if hook:
            hook(None if prev is _config.config_ext.unset else prev)


def single_device_sharding(device):
    return jax.sharding.SingleDeviceSharding(device)


def aval(shape, dtype):
    return _core.ShapedArray(tuple(shape), np.dtype(dtype))


def put_host(array: np.ndarray, aval, sharding, device) -> jax.Array:
    """One host array -> a committed jax.Array on ``device``, exact in every dtype, through
    PJRT's C++ buffer creation (no canonicalization: ``enable_x64=True`` applies to this call only)."""
    return xc.batched_device_put(aval, sharding, [array], [device], True, enable_x64=True)


def put(array, target) -> jax.Array:
    """Place a host (or device) array on ``target`` (a Device or a NamedSharding) keeping its dtype
    (f64/c128 too), without touching jax's global x64 flag: the scoped ``enable_x64`` is
    thread-local."""
    if array.dtype.itemsize == 8 or array.dtype == np.complex128:
        with x64_scope():
            return jax.device_put(array, target)
    return jax.device_put(array, target)


def addressable(device) -> bool:
    """Whether this process can hold buffers on ``device`` (multi-process runs see every
    process's devices, but address only their own)."""
    return device.process_index == device.client.process_index()


def execute(loaded, arrays) -> list:
    """Run on the executable's single device; returns one jax.Array per result."""
    try:
        return loaded.execute(arrays)
    except RuntimeFailure as e:
        raise ExecutionError(str(e)) from None


def result_handlers(out_specs, shardings) -> list:
    """Per result: turns its per-device buffers into one global jax.Array with ``sharding``."""
    return [xc.array_result_handler(_core.ShapedArray(tuple(shape), np.dtype(dtype)), s,
                                    committed=True, _skip_checks=True)
            for (shape, dtype), s in zip(out_specs, shardings)]


def execute_sharded(loaded, arrays, handlers) -> list:
    """Run an SPMD executable on sharded global arrays; returns global sharded jax.Arrays."""
    try:
        return loaded.execute_sharded(arrays).consume_with_handlers(handlers)
    except RuntimeFailure as e:
        raise ExecutionError(str(e)) from None


def uncommitted(array: jax.Array) -> jax.Array:
    """``array`` (a result on one device) as jax gives the result of a computation none of whose
    arguments was committed to a device: uncommitted, so a later jax computation may move it. The
    buffer is shared, not copied."""
    return xc.ArrayImpl(array.aval, array.sharding, [array], committed=False, _skip_checks=True)


def committed_device(arrays, where: str):
    """The device the committed single-device jax arrays among ``arrays`` live on (None: none is
    committed), as jax.jit places a computation; arrays committed to different devices are the
    ValueError jax raises."""
    device = None
    for i, a in enumerate(arrays):
        if type(a) is DEVICE_ARRAY_TYPE and a.committed:
            devs = a.sharding.device_set
            if len(devs) != 1:
                continue
            (d,) = devs
            if device is None:
                device, first = d, i
            elif d != device:
                raise ValueError(f"{where}: argument leaves {first} and {i} are committed to different devices "
                                 f"({device} and {d}); put them on one device (jax.device_put), as jax.jit "
                                 f"requires")
    return device


def is_device_array(x) -> bool:
    return isinstance(x, jax.Array)


def is_sharding(x) -> bool:
    """A jax Sharding (NamedSharding, SingleDeviceSharding, ...): a placement target as it is."""
    return isinstance(x, jax.sharding.Sharding)


def block_until_ready(tree):
    """``tree``, once every jax.Array leaf's computation has finished (jax.block_until_ready)."""
    return jax.block_until_ready(tree)


# ---------------------------------------------------------------- logging

# absl's severities: what XLA's C++ logs at or above the level reach stderr
LOG_LEVELS = {"debug": 0, "info": 0, "warning": 1, "error": 2, "fatal": 3}


def set_log_level(name: str) -> None:
    """Show XLA/PJRT C++ log lines of severity ``name`` ("info", "warning", "error", ...) and up."""
    level = LOG_LEVELS[name]
    _absl.absl_set_min_log_level(level)
    _absl.absl_set_stderr_threshold(level)

# ---------------------------------------------------------------- fast dispatch

DEVICE_ARRAY_TYPE = xc.ArrayImpl


def fast_dispatcher(name: str, fn, cache_miss, capacity: int = 64):
    """jax's C++ dispatch loop around our executables: after ``cache_miss(*args)`` returned
    ``(outputs, fastpath_data(...), False)`` for a signature, calls with jax arrays of that
    signature run the executable from C++ without entering Python.

    Only call it with jax arrays: for numpy arguments it would canonicalize 64-bit dtypes the
    way jax does without x64 (f64 -> f32), which hloforge never does.
    """
    return _jax.pjit(name, fn, cache_miss, (), (), _pxla.JitGlobalCppCacheKeys(), _tree_util.dispatch_registry,
                     _pxla.cc_shard_arg, _jax.PjitFunctionCache(capacity=capacity))


def fastpath_data(loaded, device, out_tree, n_args: int, outs):
    """What the C++ dispatch loop needs to run ``loaded`` again without Python (single device);
    None for an executable with host callbacks."""
    if type(loaded) is WithHostCallbacks:
        return None
    sharding = jax.sharding.SingleDeviceSharding(device)
    return _pxla.MeshExecutableFastpathData(
        loaded, out_tree, [sharding] * n_args, [sharding] * len(outs), [o.aval for o in outs],
        [o._committed for o in outs], [True] * n_args, [None] * n_args, [])

# ---------------------------------------------------------------- shardings


def context_mesh():
    """The mesh set by ``jax.set_mesh(mesh)`` or ``with mesh:``, or None."""
    mesh = _mesh.get_concrete_mesh()
    if mesh is None or mesh.empty:
        mesh = _mesh.thread_resources.env.physical_mesh
    return None if mesh.empty else mesh


def mesh_devices(mesh) -> tuple:
    """The mesh's devices in partition order."""
    return tuple(mesh.devices.flat)


def sdy_mesh_text(mesh, name: str = "mesh") -> str:
    axes = ", ".join(f'"{a}"={n}' for a, n in mesh.shape.items())
    return f"sdy.mesh @{name} = <[{axes}]>"


def sdy_sharding_text(sharding, ndim: int, mesh_name: str = "mesh") -> str:
    """``#sdy.sharding<@mesh, [{"x"}, {}]>`` for a NamedSharding of a rank-``ndim`` value."""
    sdy = sharding._to_sdy_sharding(ndim)
    dims = []
    for d in sdy.dim_shardings:
        items = [f'"{a}"' for a in d.axes] + (["?"] if d.is_open else [])
        dims.append("{" + ", ".join(items) + "}")
    text = f"#sdy.sharding<@{mesh_name}, [{', '.join(dims)}]"
    for label, axes in (("replicated", sdy.replicated_axes), ("unreduced", sdy.unreduced_axes)):
        ordered = [a for a in sharding.mesh.axis_names if a in axes]
        if ordered:
            text += f", {label}={{{', '.join(f'{chr(34)}{a}{chr(34)}' for a in ordered)}}}"
    return text + ">"


def hlo_sharding_text(sharding, ndim: int) -> str:
    """The ``mhlo.sharding`` string (GSPMD) for a NamedSharding of a rank-``ndim`` value."""
    return str(sharding._to_xla_hlo_sharding(ndim))


def manual_sharding_text(mesh, axes, ndim: int) -> str:
    """The ``mhlo.sharding`` of a value inside a region manual over ``axes`` (jax's shard_map)."""
    if set(axes) == set(mesh.axis_names):
        return "{manual}"
    aval = _core.ShapedArray((1,) * ndim, np.float32)
    return str(xc.HloSharding.from_proto(_pxla.manual_proto(aval, frozenset(axes), mesh)))


def output_shardings(loaded, mesh, count: int) -> list:
    """The compiled executable's ``count`` result shardings as NamedShardings over ``mesh``
    (a one-device mesh is never partitioned: replicated)."""
    ops = loaded.get_output_shardings() if mesh.size > 1 else None
    if not ops:
        return [NamedSharding(mesh, PartitionSpec())] * count
    return [NamedSharding(mesh, parse_flatten_op_sharding(xc.HloSharding.from_proto(op), mesh)[0])
            for op in ops]

# ---------------------------------------------------------------- introspection


def hlo_text(loaded) -> str:
    return loaded.get_hlo_text()


def cost_analysis(loaded) -> dict:
    return dict(loaded.cost_analysis())


def memory_stats(loaded):
    return loaded.get_compiled_memory_stats()
