"""``jit``: trace (frontend/trace_function.py), compile once per signature, run; ``trace`` is
re-exported from here."""
from __future__ import annotations

import collections
import contextlib
import functools
import inspect
import threading
import warnings
import weakref

from jax import tree_util

from hloforge.frontend import dtypes, eager, first_call
from hloforge.frontend.context import ir
from hloforge.frontend.module import Module
from hloforge.frontend.trace_function import (  # noqa: F401  (trace: hloforge.frontend.jit.trace, as before)
    abstract_key, jax_mode_leaves, spec_of, trace, trace_flat, weak_leaves)
from hloforge.frontend.tracing import Tensor
from hloforge.runtime import dispatch, pjrt, sharding
from hloforge.runtime.compiler import (
    compile_module, has_partial_dfts, load_optimized, pipeline_key, remember_optimized)
from hloforge.runtime.settings import config
from hloforge.runtime.targets import resolve_target
from hloforge.target import check_compiler_options


def _refuse_recursion(jitted, active=None) -> None:
    if id(jitted) in (getattr(_tracing, "active", ()) if active is None else active):
        raise RecursionError(f"jit: {jitted.__name__} calls itself while it is being traced; hloforge "
                             f"cannot trace recursion (unroll it with a Python loop instead)")


_DEVICE_ARRAY = pjrt.DEVICE_ARRAY_TYPE
_RUNTIME_FAILURE = pjrt.RuntimeFailure
_CONTAINERS = dispatch.CONTAINERS
_MODE = dtypes.MODE  # (the one list hf.config.dtypes writes: read per call)
_tracing = threading.local()  # .active: the Jitted functions this thread is tracing


@contextlib.contextmanager
def _tracing_guard(jitted):
    """Marks ``jitted`` as being traced by this thread; calling it again meanwhile is recursion,
    which tracing can only unroll forever (and which would wait on its own lock)."""
    active = getattr(_tracing, "active", None)
    if active is None:
        active = _tracing.active = set()
    _refuse_recursion(jitted, active)
    active.add(id(jitted))
    try:
        yield
    finally:
        active.discard(id(jitted))


class Jitted:
    """A function compiled once per argument signature (pytree structure, shapes, dtypes)."""

    def __init__(self, fn, *, optimize: bool = True, device=None, name: str = "main",
                 in_shardings=None, out_shardings=None, mesh=None, donate_argnums=(), compiler_options=None):
        if not callable(fn):
            raise TypeError(f"hf.jit: expected a callable value, got {fn!r}")
        self.fn = fn
        self.compiler_options = check_compiler_options(compiler_options, "hf.jit")
        self.donate_argnums = frozenset(donate_argnums)
        self.optimize = optimize
        self.device = device
        self.name = name
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        self.mesh = mesh
        self._sharded = not (in_shardings is None and out_shardings is None and mesh is None)
        if self._sharded and device is not None:
            raise ValueError(f"jit: pass either device or shardings (the mesh decides the devices), "
                             f"got device={device!r}")
        self._cache: dict = {}
        self._deferred: dict = {}  # key -> first_call.Deferred (hf.config.first_call = "fast")
        self._lock = threading.Lock()
        # jax's C++ dispatch loops for positional jax arrays, numpy arrays and scalars (single
        # device; runtime/dispatch.py); they hold their cache-miss callback, so that callback must
        # not hold self (a cycle through a C++ object is never collected)
        self._loops = None if self._sharded else dispatch.Loops(
            getattr(fn, "__name__", "jitted"), fn, _cache_miss(weakref.ref(self)), containers_plain=True)
        self._jax_loops = None  # (hf.config.dtypes = "jax": loops of their own, made on first use)
        self.__wrapped__ = fn
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__name__ = getattr(fn, "__name__", "jitted")

    def _trace(self, leaves, in_tree) -> Module:
        specs = [spec_of(l, i) for i, l in enumerate(leaves)]
        with _tracing_guard(self):
            module = trace_flat(self.fn, in_tree, specs, self.name, kwargs_tree=True, spmd=self._sharded,
                                weak=weak_leaves(leaves))
        if self.donate_argnums:
            donate(module, _donated_leaves(in_tree, len(leaves), self.donate_argnums))
        return module

    def lower(self, *args, **kwargs) -> Module:
        """Trace for these arguments' shapes and dtypes; returns the Module (nothing compiled).
        Its ``compile()`` runs the pass pipeline ``f(x)`` runs first (unless ``optimize()`` is
        called on it), so ``f.lower(x).compile()(x)`` is ``f(x)``."""
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        module = self._trace(leaves, in_tree)
        if self.optimize:
            module.pending_optimize = {"device": self.device}  # (compile() resolves it: runtime/targets.py)
        module.compiler_options = self.compiler_options
        return module

    @staticmethod
    def _key(leaves, in_tree, device):
        return (in_tree, tuple(map(abstract_key, leaves)), dtypes.MODE[0], device)

    def _placement(self, leaves):
        """``(device, committed)`` for a call, as jax.jit places one: the jit's own device (results
        committed to it); else the device that committed arguments live on (results committed);
        else None, jax's default device (results uncommitted, free to move). Single device only."""
        if self.device is not None or self._sharded:
            return self.device, True
        device = pjrt.committed_device(leaves, f"hf.jit: {self.__name__}")
        if device is None:
            return None, False
        return (None if device == pjrt.resolve_device(None, config.device) else device), True

    def _compiled(self, key, leaves, in_tree, device):
        entry = self._cache.get(key)
        if entry is None:
            _refuse_recursion(self)  # (this thread holds the lock: waiting on it would never end)
            with self._lock:
                entry = self._cache.get(key)
                if entry is None:
                    module = self._trace(leaves, in_tree)
                    if self.optimize and not self._sharded:
                        entry = self._cache[key] = (self._optimize_and_compile(key, module, device),
                                                    module.out_tree)
                    else:
                        if self.optimize:  # (sharded: the mesh decides the devices, jax's default their kind)
                            target = resolve_target(self.device)
                            module.optimize(cost_model=target.cost_model, dft_precision=target.dft_precision)
                        entry = self._cache[key] = (self._compile(module, leaves, in_tree, device),
                                                    module.out_tree)
        return entry

    def _optimize_and_compile(self, key, module, device):
        """The executable of the traced ``module`` after the pass pipeline: straight from the disk
        cache when a pipeline entry names it (a later process skips the passes), else optimized
        (``first_call.plan``) and compiled, the entry written once the final program is known."""
        # (once: the cost model, the compile and the caches read it)
        target = resolve_target(device, compiler_options=self.compiler_options)
        try:
            signature = module.signature
        except TypeError:  # (a token argument: jax's ordered callbacks, which compile() refuses)
            signature = None
        pipeline = None
        if config.cache_dir and signature is not None:
            pipeline = pipeline_key(module, target)
            executable = load_optimized(pipeline, module, target)
            if executable is not None:
                return executable
        module, later = first_call.plan(module, target.cost_model, target.dft_precision)
        executable = module.compile(target)
        if later is not None:
            self._deferred[key] = first_call.Deferred(
                later, functools.partial(_optimize_later, target, pipeline, signature, module),
                _install(weakref.ref(self), key, module.out_tree))
        elif pipeline is not None:
            remember_optimized(pipeline, module, signature, target)
        return executable

    def _deferred_call(self, key) -> bool:
        """Whether this signature's truncated program is still to come (then jax's C++ loop must
        not learn the running one); its second call starts compiling it."""
        deferred = self._deferred.get(key)
        if deferred is None:
            return False
        deferred.calls += 1
        if deferred.calls >= 2:
            deferred.start()
        return True

    def finish_compiling(self, timeout=None) -> bool:
        """Compile now the programs ``hf.config.first_call = "fast"`` left for later (the
        spectrally truncated ones, normally compiled in the background from a signature's second
        call) and wait for them; True once none is left. Benchmarks call it before timing the
        steady state.

        Example:
          >>> f = hf.jit(fno); f(x); f.finish_compiling()  # later calls run the truncated program
        """
        for deferred in list(self._deferred.values()):
            deferred.start()
        for deferred in list(self._deferred.values()):
            deferred.wait(timeout)
        return not self._deferred

    def _compile(self, module: Module, leaves, in_tree, device):
        if not self._sharded:
            return compile_module(module, device, compiler_options=self.compiler_options)
        args, kwargs = tree_util.tree_unflatten(in_tree, leaves)
        # in_shardings is a prefix of the positional arguments (like jax.jit); keyword arguments
        # are replicated.
        in_flat = (sharding.flat(self.in_shardings, args, "in_shardings")
                   + [None] * len(tree_util.tree_leaves(kwargs)))
        out_flat = None
        if self.out_shardings is not None:
            n_out = len(module.signature[1])
            outs = tree_util.tree_unflatten(module.out_tree, list(range(n_out)))
            out_flat = sharding.flat(self.out_shardings, outs, "out_shardings")
        return compile_module(module, None, in_flat, out_flat, self.mesh, in_place=True,
                              compiler_options=self.compiler_options)

    def __call__(self, *args, **kwargs):
        loops = self._loops
        if loops is not None and not kwargs:
            # the common case first, with as little Python as possible (this frame is all hloforge
            # adds to jax's C++ loop): every argument a jax array, numpy dtype rules
            # (or containers of them, a model's parameters: dispatch.Loops' containers_plain)
            if _MODE[0] == "numpy":
                for a in args:
                    kind = type(a)
                    if kind is not _DEVICE_ARRAY and kind not in _CONTAINERS:
                        break
                else:
                    try:
                        return loops.plain(*args)
                    except (RecursionError, ValueError, _RUNTIME_FAILURE) as e:
                        self._raise_from_loop(e)
            return self._call_routed(loops, args)
        return self._call(args, kwargs)

    def _call_routed(self, loops, args):
        kind = dispatch.route(args)
        if dtypes.MODE[0] == "jax":  # (jax's loop without x64 narrows 64-bit values, as jax mode does)
            loops = self._jax_loops or self._make_jax_loops()
            kind = dispatch.PYTHON if kind == dispatch.PYTHON else dispatch.PLAIN
        try:
            if kind == dispatch.PLAIN:
                return loops.plain(*args)
            if kind == dispatch.WIDE:
                return pjrt.call_x64(loops.wide, args)
        except (RecursionError, ValueError, _RUNTIME_FAILURE) as e:
            self._raise_from_loop(e)
        return self._call(args, {})

    def _raise_from_loop(self, e):
        """Re-raise an exception of jax's C++ loop as hloforge's (our message for recursion; XLA's
        runtime status, which the loop raises as is, as an execution error)."""
        if isinstance(e, RecursionError):
            _refuse_recursion(self)
            raise e
        failure = dispatch.execution_error(self.name, e)
        if failure is None:
            raise e
        raise failure from None

    def _make_jax_loops(self):
        self._jax_loops = dispatch.Loops(self.__name__, self.fn, _cache_miss(weakref.ref(self)))
        return self._jax_loops

    def _call(self, args, kwargs, fast_path=False):
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        if any(isinstance(leaf, Tensor) for leaf in leaves):
            # called inside another trace: trace the body inline, as jax does
            with _tracing_guard(self):
                result = self.fn(*args, **kwargs)
            return (result, None, False) if fast_path else result
        dispatch.refuse_tracers(f"hf.jit: {self.__name__}", leaves)
        device, committed = self._placement(leaves)
        seen = leaves
        if dtypes.MODE[0] == "jax":
            leaves, seen = jax_mode_leaves(leaves)
        key = self._key(leaves, in_tree, device)
        executable, out_tree = self._compiled(key, leaves, in_tree, device)
        outs = executable.call_flat(leaves)
        if not committed:
            outs = [pjrt.uncommitted(o) if type(o) is pjrt.DEVICE_ARRAY_TYPE else o for o in outs]
        result = tree_util.tree_unflatten(out_tree, outs)
        later = bool(self._deferred) and self._deferred_call(key)
        if not fast_path:
            return result
        if later:
            return result, None, False
        data = None
        if (all(type(o) is pjrt.DEVICE_ARRAY_TYPE for o in outs)
                and dispatch.fastpath_ok(seen, executable.in_specs, executable._sharding)):
            data = pjrt.fastpath_data(executable._loaded, executable.device, out_tree, len(leaves), outs)
        return result, data, False

    def cache_size(self) -> int:
        return len(self._cache)


def _donated_leaves(in_tree, n_leaves, argnums) -> list:
    """The flat leaf indices of the positional arguments ``argnums``."""
    args, _ = tree_util.tree_unflatten(in_tree, list(range(n_leaves)))
    return [i for k, a in enumerate(args) if k in argnums for i in tree_util.tree_leaves(a)]


def donate(module: Module, leaves) -> list:
    """Let each argument in ``leaves`` (flat indices) give its buffer to a result of the same shape
    and dtype (``tf.aliasing_output``, as jax marks donated buffers; XLA then writes that result in
    place and PJRT deletes the donated jax array). Returns the specs of those no result could take,
    after jax's warning."""
    ins, outs = module.signature
    taken, unusable, aliases = set(), [], {}
    for i in leaves:
        k = next((k for k, o in enumerate(outs) if k not in taken and o == ins[i]), None)
        if k is None:
            unusable.append(ins[i])
        else:
            taken.add(k)
            aliases[i] = k
    if aliases:
        f = module.entry_function()
        with module.context:
            i32 = ir.IntegerType.get_signless(32)
            old = list(f.attributes["arg_attrs"]) if "arg_attrs" in f.attributes else [ir.DictAttr.get({})] * len(ins)
            new = []
            for i, a in enumerate(old):
                entries = {n.name: n.attr for n in ir.DictAttr(a)}
                if i in aliases:
                    entries["tf.aliasing_output"] = ir.IntegerAttr.get(i32, aliases[i])
                new.append(ir.DictAttr.get(entries))
            f.attributes["arg_attrs"] = ir.ArrayAttr.get(new)
    if unusable:
        warnings.warn(f"Some donated buffers were not usable: {', '.join(str(s) for s in unusable)} (hf.jit: no "
                      "result has the same shape and dtype)", stacklevel=4)
    return unusable


class StaticJitted:
    """hf.jit with static arguments: one Jitted per distinct (hashable) value of them, each
    compiling the function with those values bound (jax.jit's static_argnums/static_argnames)."""

    MAX_VALUES = 256  # static signatures kept (least recently used evicted)

    def __init__(self, fn, static_argnums, static_argnames, donate_argnums, options):
        self.fn, self.options = fn, options
        self.static_argnums, self.static_argnames = _static_positions(fn, static_argnums, static_argnames)
        overlap = sorted(set(donate_argnums) & set(self.static_argnums))
        if overlap:
            raise ValueError(f"hf.jit: static arguments {overlap} cannot be donated")
        self.donate_argnums = tuple(donate_argnums)
        self._jitted = collections.OrderedDict()
        self._lock = threading.Lock()
        functools.update_wrapper(self, fn)

    def _split(self, args, kwargs):
        n = len(args)
        statics = tuple((i, args[i]) for i in self.static_argnums if i < n)
        kw_statics = tuple(sorted((k, v) for k, v in kwargs.items() if k in self.static_argnames))
        key = (statics, kw_statics)
        try:
            hash(key)
        except TypeError as e:
            bad = next(v for _, v in statics + kw_statics if not _hashable(v))
            raise ValueError(f"Non-hashable static arguments are not supported. An error occurred while trying to "
                             f"hash an object of type {type(bad)}, {bad!r}. The error was:\nTypeError: {e}") from None
        positions = [i for i, _ in statics]
        dynamic = [a for i, a in enumerate(args) if i not in positions]
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        return key, dynamic, dyn_kwargs

    def _for(self, key, n_args) -> Jitted:
        inner = self._jitted.get(key)
        if inner is not None:
            self._jitted.move_to_end(key)
            return inner
        with self._lock:
            statics, kw_statics = dict(key[0]), dict(key[1])
            fn = self.fn

            def bound(*dynamic, **dyn_kwargs):
                rest = iter(dynamic)
                args = [statics[i] if i in statics else next(rest) for i in range(len(dynamic) + len(statics))]
                return fn(*args, **dyn_kwargs, **kw_statics)

            bound.__name__ = getattr(fn, "__name__", "jitted")
            shift = [sum(1 for s in statics if s < i) for i in range(n_args)]
            donate = tuple(i - shift[i] for i in self.donate_argnums if i < n_args)
            inner = self._jitted[key] = Jitted(bound, donate_argnums=donate, **self.options)
            if len(self._jitted) > self.MAX_VALUES:
                self._jitted.popitem(last=False)
        return inner

    def __call__(self, *args, **kwargs):
        key, dynamic, dyn_kwargs = self._split(args, kwargs)
        return self._for(key, len(args))(*dynamic, **dyn_kwargs)

    def lower(self, *args, **kwargs) -> Module:
        key, dynamic, dyn_kwargs = self._split(args, kwargs)
        return self._for(key, len(args)).lower(*dynamic, **dyn_kwargs)

    def cache_size(self) -> int:
        return sum(j.cache_size() for j in self._jitted.values())

    def finish_compiling(self, timeout=None) -> bool:
        """``Jitted.finish_compiling`` for every static signature's function."""
        return all([j.finish_compiling(timeout) for j in list(self._jitted.values())])


def _hashable(v) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


def _static_positions(fn, argnums, argnames) -> tuple:
    """(static positional indices, static keyword names), each completed from the other through
    ``fn``'s signature and checked against it, as jax.jit does."""
    argnums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    argnames = (argnames,) if isinstance(argnames, str) else tuple(argnames)
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return tuple(sorted(argnums)), frozenset(argnames)
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    varargs = any(p.kind == p.VAR_POSITIONAL for p in params)
    if not varargs:
        for i in argnums:
            if not -len(positional) <= i < len(positional):
                raise ValueError(f"Jitted function has static_argnums={argnums}, but only accepts "
                                 f"{len(positional)} positional arguments.")
    nums = {i % len(positional) if i < 0 and positional else i for i in argnums}
    names = set(argnames)
    named = {p.name for p in params if p.kind != p.VAR_POSITIONAL}
    bad = names - named if not any(p.kind == p.VAR_KEYWORD for p in params) else set()
    if bad:
        raise ValueError(f"Jitted function has invalid argnames {bad} in static_argnames. Function does not "
                         "take these args.")
    for i, p in enumerate(positional):
        if p.name in names:
            nums.add(i)
        if i in nums:
            names.add(p.name)
    return tuple(sorted(nums)), frozenset(names)


def _optimize_later(target, pipeline, signature, first, module):
    """A ``first_call.Deferred``'s work: the traced ``module`` optimized with the Target's cost model
    and, if that truncated FFTs, compiled; None when it did not (then ``first``, the program running
    already, is the final one). The pipeline entry ``pipeline`` (None: none) is written for the final
    program."""
    module.optimize(cost_model=target.cost_model, dft_precision=target.dft_precision)
    final = module if has_partial_dfts(module) else first
    executable = module.compile(target) if final is module else None
    if pipeline is not None:
        remember_optimized(pipeline, final, signature, target)
    return executable


def _install(jitted_ref, key, out_tree):
    """``install`` for a ``first_call.Deferred``: the truncated executable replaces the first one
    (None: the first one stays), and the C++ loops start afresh to learn it."""
    def install(executable):
        jitted = jitted_ref()
        if jitted is None:
            return
        if executable is not None:
            jitted._cache[key] = (executable, out_tree)
        jitted._deferred.pop(key, None)
        if jitted._loops is not None:
            jitted._loops = dispatch.Loops(jitted.__name__, jitted.fn, _cache_miss(jitted_ref),
                                           containers_plain=True)
        jitted._jax_loops = None
    return install


def _cache_miss(jitted_ref):
    """The C++ dispatch loop met a new signature: run in Python, hand it the executable."""
    def cache_miss(*args, **kwargs):
        return jitted_ref()._call(args, kwargs, fast_path=True)
    return cache_miss


def jit(fn=None, *, optimize: bool = True, device=None, name: str = "main",
        in_shardings=None, out_shardings=None, mesh=None, static_argnums=(), static_argnames=(),
        donate_argnums=(), donate_argnames=(), compiler_options=None):
    """Compile ``fn`` on first call, once per argument signature; later calls only run.

    Args:
      fn: a Python function over Tensors; arguments and results may be pytrees.
      optimize: run hloforge's default pass pipeline before compiling.
      device: None (where committed arguments live, as in jax.jit; else ``hf.config.device``; when
        that is None, as by default, jax's default device: the TPU or GPU where there is one, else
        the CPU, and the results are uncommitted), "cpu", "gpu", "tpu" or a jax Device.
      name: the entry function's name.
      in_shardings: SPMD over a jax Mesh: a pytree prefix of the positional arguments with a
        ``NamedSharding``, ``PartitionSpec`` or None (replicated) per leaf, like jax.jit's.
        Arguments are placed as sharded jax.Arrays; keyword arguments are replicated.
      out_shardings: the same for the results; None lets XLA choose.
      mesh: the Mesh for PartitionSpecs (default: a NamedSharding's mesh, or ``jax.set_mesh``).
      static_argnums, static_argnames: arguments that are Python values, not arrays (as in
        jax.jit): hashable, part of the signature (each new value traces again), bound in the
        trace; positions and names complete each other through ``fn``'s signature.
      donate_argnums, donate_argnames: positional arguments whose buffers the call may reuse for
        results of the same shape and dtype (XLA writes them in place); a donated jax array is
        deleted after the call, as in jax. Buffers no result can take are kept, with jax's warning.
      compiler_options: XLA options for this function's compiles, as jax.jit's (a dict of option
        names to str, bool, int or float values, e.g. ``{"xla_backend_optimization_level": 0}``);
        they win over hloforge's own options and the user's ``XLA_FLAGS``, and are part of the
        executable caches' keys. ``.lower(x).compile(compiler_options=...)`` adds to them.
    Returns:
      A callable; ``.lower(*args)`` returns the traced Module without compiling (its
      ``compile()`` runs the same pass pipeline as the call). Sharded functions return global
      sharded jax.Arrays.
    Raises:
      ValueError: static or donated argument positions or names ``fn`` does not take; at a call,
        a static argument that is not hashable (jax's messages).
      TypeError: ``compiler_options`` is not a dict of option names to such values (XLA refuses an
        unknown name or a value of the wrong kind at the first call, as a CompileError).
    Example:
      >>> f = hf.jit(lambda x: hnp.sin(x) * 2.0)
      >>> y = f(np.ones(3, np.float32))
      >>> g = hf.jit(model, in_shardings=(hf.P("batch"), None), mesh=hf.Mesh(devices, ("batch",)))
      >>> step = hf.jit(update, static_argnames="steps", donate_argnums=0)
      >>> quick = hf.jit(f, compiler_options={"xla_backend_optimization_level": 0})
    """
    options = dict(optimize=optimize, device=device, name=name, in_shardings=in_shardings,
                   out_shardings=out_shardings, mesh=mesh,
                   compiler_options=check_compiler_options(compiler_options, "hf.jit"))

    def make(f):
        if not callable(f):
            raise TypeError(f"hf.jit: expected a callable value, got {f!r}")
        donated = _donated_positions(f, donate_argnums, donate_argnames)
        if static_argnums not in ((), None) or static_argnames not in ((), None):
            return StaticJitted(f, () if static_argnums is None else static_argnums,
                                () if static_argnames is None else static_argnames, donated, options)
        return Jitted(f, donate_argnums=donated, **options)
    return make if fn is None else make(fn)


def _donated_positions(fn, argnums, argnames) -> tuple:
    """The donated positional indices, from ``argnums`` and ``argnames`` through ``fn``'s signature;
    ValueError (jax's) for a position ``fn`` does not take, where its signature has no ``*args``."""
    argnums = (argnums,) if isinstance(argnums, int) else tuple(argnums or ())
    argnames = (argnames,) if isinstance(argnames, str) else tuple(argnames or ())
    try:
        every = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        every = None
    params = [p for p in every or () if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if every is not None and not any(p.kind == p.VAR_POSITIONAL for p in every):
        beyond = [i for i in argnums if i >= len(params)]
        if beyond:
            raise ValueError(f"Jitted function has donate_argnums={argnums}, but only accepts {len(params)} "
                             f"positional arguments.")
    if not argnames:
        return argnums
    names = {p.name: i for i, p in enumerate(params)}
    bad = set(argnames) - set(names)
    if bad:
        raise ValueError(f"Jitted function has invalid argnames {bad} in donate_argnames. Function does not take "
                         "these args.")
    return tuple(sorted(set(argnums) | {names[n] for n in argnames}))


eager.use_jit(jit, pjrt.DEVICE_ARRAY_TYPE)  # (hloforge.numpy/lax/nn/ops called outside a trace compile with hf.jit)
