"""Module -> Executable: sharding plans, the executable caches, and readable compile errors."""
from __future__ import annotations

import json
import re
import threading
import time

from hloforge.frontend.module import Module
from hloforge.frontend.shape_assertions import has_shape_assertions
from hloforge.passes.guards import guard_for_xla
from hloforge.runtime import cache, callbacks, module_key, pjrt, sharding
from hloforge.runtime.dynamic import DynamicExecutable
from hloforge.runtime.executable import Executable
from hloforge.runtime.fft_sharding import keep_ffts_local
from hloforge.runtime.settings import config
from hloforge.runtime.sharded import ShardedExecutable
from hloforge.runtime.targets import resolve_target
from hloforge.runtime.unsupported import python_callback
from hloforge.target import PARTIAL_DFT_ATTR, check_compiler_options

# a dynamic dimension in a tensor type of the module text: tensor<?x4xf32>, tensor<2x?xi32>
_DYNAMIC_TYPE = re.compile(r"tensor<(?:\d+x)*\?")

# the module text's locations: inline references, and the alias definitions on lines of their own (each
# after a newline: a literal prefix, so a search skips a large module's constants quickly)
_LOCATION_REFERENCES = re.compile(r" loc\((?:#loc\d*|unknown)\)")
_LOCATION_DEFINITIONS = re.compile(r"\n#loc\d* = loc\(.*\)(?=\n|$)")

_inflight: dict = {}
_inflight_lock = threading.Lock()


def default_device(device=None):
    """``device`` resolved to a jax Device; None means ``hf.config.device`` (None: jax's default)."""
    return pjrt.resolve_device(device, config.device)


def compile_module(module, device=None, in_shardings=None, out_shardings=None, mesh=None,
                   *, in_place: bool = False, compiler_options=None) -> Executable:
    """Compile ``module`` for one device (``device``: as ``resolve_target`` takes it, a Target
    included), or over a mesh when shardings are given.

    ``compiler_options``: XLA options (checked: a dict or None) over those ``hf.jit(f).lower(x)`` left
    on the module (``module.compiler_options``) and hloforge's; the later wins, as in jax's
    ``jit(compiler_options=...).lower(x).compile(compiler_options=...)``.

    ``in_shardings``/``out_shardings`` are pytree prefixes of the flat argument/result lists
    (NamedSharding, PartitionSpec or None = replicated); ``out_shardings=None`` lets XLA choose.
    The annotated copy of the module (``module`` itself when ``in_place``) is what XLA compiles.
    """
    lowered_with = getattr(module, "compiler_options", None)
    if lowered_with:
        compiler_options = {**lowered_with, **(compiler_options or {})}
    if getattr(module, "pending_optimize", None) is not None:  # (hf.jit(f).lower(x).compile(): f(x)'s pipeline)
        pending, module = module.pending_optimize, module.clone()
        if device is None:
            device = pending["device"]
        target = resolve_target(device)
        module.optimize(cost_model=target.cost_model, dft_precision=target.dft_precision)
    module = guard_for_xla(module)  # (integer x / 0 and empty concatenate operands kill XLA:CPU)
    ins, outs = _signature(module)
    in_specs, out_specs = [tuple(s) for s in ins], [tuple(s) for s in outs]
    sharded = not (in_shardings is None and out_shardings is None and mesh is None)
    dynamic_args = module.dynamic_dims_message("argument", ins)
    if dynamic_args:
        if sharded:
            raise ValueError(f"{dynamic_args}: sharded compiles need static argument shapes "
                             f"(refine them first: module.refine(shapes))")
        target = resolve_target(device, compiler_options=compiler_options)
        return DynamicExecutable(in_specs, out_specs, target.device, module.entry,
                                 lambda specs: compile_module(module.refine(specs), target), dynamic_args)
    target = None if sharded else resolve_target(device, compiler_options=compiler_options)
    found = None if target is None else _cached_module(module, target)
    if found is not None:  # (found from the IR: the module's text is neither printed nor scanned)
        return Executable(found[0], in_specs, out_specs, target.device, module.entry, 0.0, found[1])
    code = module._code_for_compile()
    if _DYNAMIC_TYPE.search(code) or has_shape_assertions(code):  # static arguments, dynamic values inside
        # (or jax.export's shape assertions, which refinement checks and removes): refine them
        module = module.refine()
        code = module._code_for_compile()
        out_specs = [tuple(s) for s in module.signature[1]]
    pjrt.prepare_custom_calls(code)  # (every path below compiles or deserializes this module's calls)
    if callbacks.has_callbacks(code):  # (hf.debug.print, hf.pure_callback: compiled with their Python functions)
        if sharded:
            raise NotImplementedError(f"{module.entry}: host callbacks (hloforge.debug.print/callback, "
                                      f"hloforge.pure_callback) in sharded programs are not supported yet; "
                                      f"compile for one device")
        return callbacks.compile_with_callbacks(code, target, module.entry, in_specs, out_specs,
                                                has_partial_dfts(module))
    if not sharded:
        loaded, seconds, source = load_or_compile(code, target, module.entry, module)
        return Executable(loaded, in_specs, out_specs, target.device, module.entry, seconds, source)

    if device is not None:
        raise ValueError(f"compile: pass either device or shardings (the mesh decides the devices), "
                         f"got device={device!r}")
    mesh = sharding.find_mesh(mesh, in_shardings, out_shardings)
    in_flat = sharding.flat(in_shardings, tuple(range(len(ins))), "in_shardings")
    out_flat = None if out_shardings is None else sharding.flat(out_shardings, tuple(range(len(outs))),
                                                                "out_shardings")
    plan = sharding.Plan(mesh, in_flat, out_flat, in_specs, out_specs)
    annotated = module if in_place else module.clone()
    shardy = pjrt.use_shardy()
    sharding.annotate(annotated, plan, shardy)
    if config.local_ffts:
        keep_ffts_local(annotated, plan, shardy)
    target = resolve_target(devices=plan.devices, compiler_options=compiler_options)
    loaded, seconds, source = load_or_compile(annotated._code_for_compile(), target, module.entry, annotated, shardy)
    return ShardedExecutable(loaded, in_specs, out_specs, mesh, plan.in_shardings, plan.out_shardings,
                             module.entry, seconds, source)


def _signature(module):
    """``module.signature``; jax's ordered callbacks give @main a token argument, so such a module
    is refused for its callback first."""
    try:
        return module.signature
    except TypeError:
        _refuse_python_callbacks(module._code_for_compile(), module.entry)
        raise


def _refuse_python_callbacks(code, name):
    refused = python_callback(code)  # (XLA would compile it, and running it kills the process)
    if refused:
        raise pjrt.CompileError(f"{name}: {refused}")


def _refuse_unsupported_types(code, target, name):
    for element in target.unsupported_types:
        if element in code:
            raise pjrt.UnsupportedCompile(
                f"{name}: {element} values are not supported on {target.kind.upper()} devices (XLA aborts on them); "
                f"use 32-bit complex numbers there, or compile this function for the CPU (device='cpu')")


def load_or_compile(code, target, name="main", module=None, shardy=None):
    """(loaded executable, compile seconds, source) of ``code`` for the Target ``target``: from the
    memory cache, the disk cache (``hf.config.cache_dir``) or XLA. One thread compiles a given key at
    a time."""
    _refuse_python_callbacks(code, name)
    _refuse_unsupported_types(code, target, name)
    shardy = pjrt.use_shardy() if shardy is None and len(target.devices) > 1 else shardy
    key = _cache_key(module_key.key_text(module, code), target, shardy)
    loaded = cache.MEMORY.get(key)
    if loaded is not None:
        cache.count("memory_hits")
        return loaded, 0.0, "memory"
    with _inflight_lock:
        lock = _inflight.setdefault(key, threading.Lock())
    try:
        with lock:
            return _load_or_compile_locked(key, code, target, name, module, shardy)
    finally:
        with _inflight_lock:
            _inflight.pop(key, None)


def _cache_key(code, target, shardy) -> str:
    """The executable caches' key: the module without its locations (as jax's cache key drops debug
    info: one program traced from two call sites compiles once; ``module_key.key_text``), the target's
    environment (platform, devices, versions) and the XLA options hloforge adds for its platform."""
    return cache.fingerprint(without_locations(code), target.environment, shardy, list(target.xla_options),
                             cache.KEY_VERSION)


def _cached_module(module, target):
    """(loaded executable, "memory" or "disk") of ``module`` compiled before for the Target ``target``,
    by its IR key, or None."""
    text = module_key.ir_text(module)
    if text is None:
        return None
    key = _cache_key(text, target, None)
    if key not in cache.MEMORY and config.cache_dir:  # (deserializing needs what its custom calls need)
        pjrt.prepare_custom_calls(module_key.outline(module))
    return _cached(key, target.devices, pjrt.compile_options(target.devices, None,
                                                             target.options(has_partial_dfts(module))))


def without_locations(code: str) -> str:
    """Module text without its location references and definitions (their lines stay, empty)."""
    return _LOCATION_REFERENCES.sub("", _LOCATION_DEFINITIONS.sub("\n", "\n" + code))[1:]


def _plain_code(module) -> str | None:
    """The text XLA compiles for ``module`` on one device when it takes the plain path of
    ``compile_module`` (static shapes, no shape assertions, no host callbacks); else None."""
    code = guard_for_xla(module)._code_for_compile()
    if _DYNAMIC_TYPE.search(code) or has_shape_assertions(code) or callbacks.has_callbacks(code):
        return None
    return code


# ---------------------------------------------------------------- the pass pipeline's result
# In a second process hf.jit's executable comes from the disk cache, but the pass pipeline would run
# again, and its result (DFT matrices included) be printed for the executable's key. A pipeline
# entry, keyed by the traced module, names the optimized program's executable instead, so a later
# process loads it right after tracing. Only with a cache directory: the entries live there.

def pipeline_key(module, target) -> str:
    """The pipeline entry's key of a traced ``module`` (not yet optimized) for the Target ``target``:
    its text, the target's cost model and DFT precision, hloforge's sources (``cache.source_stamp``: a
    changed pass never reads an old entry), the target's environment and its XLA options (the entry
    names an executable compiled with them)."""
    return cache.fingerprint(module.to_text(), "pipeline", repr(target.cost_model), target.dft_precision,
                             cache.source_stamp(), target.environment, list(target.xla_options), cache.KEY_VERSION)


def load_optimized(key, module, target):
    """The Executable of the optimized program that the pipeline entry ``key`` names, or None (no
    cache directory, no entry, or its executable is gone). ``module`` is the traced module: the
    pipeline keeps its signature."""
    directory = config.cache_dir
    payload = cache.disk_load(directory, key) if directory else None
    if payload is None:
        return None
    entry = _decode_pipeline_entry(payload)
    if entry is None:
        cache.disk_discard(directory, key)
        return None
    exe_key, partial_dfts, lapack = entry
    if lapack:
        pjrt.load_lapack()
    found = _cached(exe_key, target.devices, pjrt.compile_options(target.devices, None, target.options(partial_dfts)))
    if found is None:
        return None
    loaded, source = found
    cache.count("pipeline_hits")
    ins, outs = module.signature
    return Executable(loaded, [tuple(s) for s in ins], [tuple(s) for s in outs], target.device, module.entry, 0.0,
                      source)


def remember_optimized(key, optimized, signature, target) -> None:
    """Write the pipeline entry ``key``: the traced module of ``signature`` optimizes to
    ``optimized``, whose executable the memory cache now holds. Nothing for modules that compile
    through another path (dynamic shapes, host callbacks) or whose signature the passes changed."""
    if not config.cache_dir or optimized.signature != signature:
        return
    code = _plain_code(optimized)
    text = None if code is None else module_key.key_text(guard_for_xla(optimized), code)
    exe_key = None if text is None else _cache_key(text, target, None)
    if exe_key is None or exe_key not in cache.MEMORY:
        return
    entry = [exe_key, has_partial_dfts(optimized), "lapack_" in code]
    cache.disk_store(config.cache_dir, key, json.dumps(entry).encode(), config.cache_max_bytes,
                     event="pipeline_writes",
                     about=cache.about(optimized.entry, target.devices, "pipeline", optimized))


def _decode_pipeline_entry(payload: bytes):
    try:
        exe_key, partial_dfts, lapack = json.loads(payload)
    except (ValueError, TypeError):
        return None
    if not (isinstance(exe_key, str) and isinstance(partial_dfts, bool) and isinstance(lapack, bool)):
        return None
    return exe_key, partial_dfts, lapack


def has_partial_dfts(module) -> bool:
    """Whether ``fft-truncate`` rewrote ``module``'s FFTs into partial DFTs (its mark on the module)."""
    return module is not None and PARTIAL_DFT_ATTR in module.mlir.operation.attributes


def _cached(key, devs, options):
    """(loaded executable, "memory" or "disk") from the executable caches, or None. An entry XLA
    cannot deserialize is deleted."""
    loaded = cache.MEMORY.get(key)
    if loaded is not None:
        cache.count("memory_hits")
        return loaded, "memory"
    directory = config.cache_dir
    data = cache.disk_load(directory, key) if directory else None
    if data is None:
        return None
    try:
        loaded = pjrt.deserialize(data, devs, options)
    except ValueError:
        cache.disk_discard(directory, key)
        return None
    cache.count("disk_hits")
    cache.MEMORY.put(key, loaded)
    return loaded, "disk"


def _load_or_compile_locked(key, code, target, name, module, shardy):
    devs = target.devices
    options = pjrt.compile_options(devs, shardy, target.options(has_partial_dfts(module)))
    found = _cached(key, devs, options)
    if found is not None:
        return found[0], 0.0, found[1]
    directory = config.cache_dir
    start = time.perf_counter()
    try:
        loaded = pjrt.compile(code, devs, options)
    except pjrt.CompileError as e:
        raise pjrt.CompileError(describe_error(name, str(e), module)) from None
    seconds = time.perf_counter() - start
    cache.count("compiles")
    cache.MEMORY.put(key, loaded)
    if directory:
        cache.disk_store(directory, key, pjrt.serialize(loaded), config.cache_max_bytes,
                         about=cache.about(name, devs, module=module))
    return loaded, seconds, "compiled"


# XLA names HLO opcodes (`recv`), instructions (add.3) and custom-call targets in its messages.
_OPCODE = re.compile(r"`([a-z][a-z0-9-]*)`|\bopcode:? ([a-z][a-z0-9-]*)|\b([a-z][a-z-]*)\.\d+\b")
_TARGET = re.compile(r"custom[ -]call (?:to|target) `?([\w.$-]+)")


def op_locations(module, message: str, limit: int = 5) -> list:
    """Best effort: "op at location" for the module's ops that ``message`` names."""
    names = {"stablehlo." + n.replace("-", "_") for m in _OPCODE.findall(message) for n in m if n}
    targets = set(_TARGET.findall(message))
    found = []
    for op in module.walk():
        hit = op.name in names
        if not hit and targets and op.name == "stablehlo.custom_call":
            hit = str(op.attributes["call_target_name"]).strip('"') in targets
        if hit:
            loc = str(op.location)
            found.append(f"{op.name} at {loc[4:-1] if loc.startswith('loc(') else loc}")
            if len(found) == limit:
                return found
    return found


def describe_error(name: str, message: str, module=None) -> str:
    text = f"{name}: XLA could not compile the module: {message}"
    if module is not None:
        try:
            where = op_locations(module, message)
        except Exception:  # (best effort: never hide XLA's own message)
            where = []
        if where:
            text += "\n  the op(s) it names: " + "; ".join(where)
    return text


def compile(self, device=None, *, in_shardings=None, out_shardings=None, mesh=None, compiler_options=None):
    """Compile with XLA through hloforge's executable caches; returns an Executable.

    Args:
      device: None (``hf.config.device``; when that is None, as by default, jax's default device:
        the TPU or GPU where there is one, else the CPU), "cpu", "gpu", "tpu" or a jax Device.
      in_shardings, out_shardings: for SPMD over a jax Mesh: a NamedSharding, PartitionSpec
        or None (replicated) per argument/result (a single one applies to all);
        ``out_shardings=None`` lets XLA choose. This module is left unchanged.
      mesh: the Mesh for PartitionSpecs (default: a NamedSharding's mesh or ``jax.set_mesh``).
      compiler_options: XLA options, as jax's ``Lowered.compile(compiler_options=...)`` takes them (a
        dict of option names to str, bool, int or float values); they win over hloforge's own and
        over those of the ``hf.jit`` that lowered this module.
    Raises:
      TypeError: ``compiler_options`` is not such a dict.
      CompileError: XLA refuses an option (an unknown name, a value of the wrong kind).
    Example:
      >>> exe = m.compile(in_shardings=hf.NamedSharding(mesh, hf.P("batch")))
      >>> exe = m.compile("cpu", compiler_options={"xla_backend_optimization_level": 0})
    """
    return compile_module(self, device, in_shardings, out_shardings, mesh,
                          compiler_options=check_compiler_options(compiler_options, "Module.compile"))


Module.compile = compile
