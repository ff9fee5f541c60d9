"""``hf.to_jax``: hloforge programs, and jax functions rewritten by hloforge's passes, inside jax.

A bridged call is one jax primitive, ``hloforge_call``, whose parameter is a ``Program``: one
module at one argument signature. Its lowering inlines the optimized module into jax's computation
(jax.export's call, frontend/jax_api.py); a module that calls hloforge's host callbacks
(hf.debug.print, hf.pure_callback, ...), whose Python functions jax's runtime cannot find, runs
compiled by hloforge from a jax.pure_callback instead. Its rules hand each transformation to hloforge:

- jvp: the outputs and the residuals from the forward program, and the output tangents from
  ``hloforge_linear_call`` of the module's tangent program (Module.jvp without its outputs), which is
  linear in the tangents; the forward program and the backward program (its transpose, which reads the
  residuals) are Module.vjp split at its cotangents (module_ad.split_vjp), so jax.grad runs the
  forward once (issue 51);
- transpose (of ``hloforge_linear_call`` only, as JAX gives linear ops a transpose only): the
  transpose the call carries (the backward program, or the cotangent program of the module a linear
  call's tangents came from, and of a module without a split: a while loop without a static trip
  count), or the linear program's own transpose;
- batch: the program of Module.vmap.

Each derived program is a module again, traced from the unoptimized source (so hf.custom_vjp rules
and hf.from_jax's jax derivatives still apply), optimized, and derived from in turn: any order of
jvp, grad and vmap composes, and every derivative module goes through the passes.
"""
from __future__ import annotations

import functools
import inspect
import json
import threading

import numpy as np

from hloforge import target
from hloforge.frontend import dtypes, jax_api
from hloforge.frontend.ad import core
from hloforge.frontend.ad.module_ad import _entry, _recursion_room, cotangent_module, split_vjp, tangent_module
from hloforge.frontend.batching.module_vmap import module_vmap
from hloforge.frontend.context import ir, portable_target, static_ops
from hloforge.frontend.from_jax import from_jax
from hloforge.frontend.module import Module, ShapeDtype
from hloforge.frontend.trace_function import trace_flat
from hloforge.frontend.tracing import Tensor
from hloforge.passes.cost import estimate
from hloforge.passes.pipeline import optimize as optimize_module
from hloforge.runtime import cache, pjrt
from hloforge.runtime.callbacks import has_callbacks
from hloforge.runtime.compiler import compile_module
from hloforge.runtime.settings import config
from hloforge.target import PARTIAL_DFT_ATTR

_OPTIONS = tuple(p for p in inspect.signature(optimize_module).parameters if p != "self")



def _exportable(module: Module) -> Module:
    """``module`` without the unit attributes hloforge's passes mark ops with (``hloforge.call_boundary`` on
    calls, ``hloforge.division_guard``, ``hloforge.spec_semantics``), a copy where it has some: jax's serializer
    for the PJRT plugin refuses an op with a unit attribute that is not its own. The marked ops stay, so XLA
    still sees inline's constants only once it has inlined their calls (passes/inline.py)."""
    if not any(_unit_marks(op) for op in module.walk()):
        return module
    copy = module.clone()
    for op in copy.walk():
        for name in _unit_marks(op):
            del op.attributes[name]
    return copy


def _unit_marks(op) -> list:
    return [name for name in op.attributes
            if name.startswith("hloforge.") and isinstance(op.attributes[name], ir.UnitAttr)]


def _on_disk(module: Module, what: str, extras: tuple, make, encode, decode, events: tuple):
    """``make()``; with a cache directory, its result is stored there (``encode``: to bytes, ``decode``: back)
    by ``module``'s text, ``what``, ``extras`` and hloforge's sources (``cache.source_stamp``), so a later
    process that traces the same program reads it instead (issue 51). ``events``: the cache.stats counts
    of a hit and of a write."""
    directory = config.cache_dir
    if not directory:
        return make()
    text = module.to_text().replace(core.PROCESS, "process")  # (from_jax's symbols name the process)
    key = cache.fingerprint(text, what, *extras, cache.source_stamp(), cache.KEY_VERSION)
    data = cache.disk_load(directory, key)
    if data is not None:
        try:
            found = decode(data)
        except (ValueError, TypeError):
            cache.disk_discard(directory, key)
        else:
            cache.count(events[0])
            return found
    result = make()
    cache.disk_store(directory, key, encode(result), config.cache_max_bytes, event=events[1])
    return result


def _text_of(module: Module) -> str:
    # (text with its locations, not bytecode: bytecode is read in a forked child, about 25 ms for an
    # FNO-2D's module against 5 ms to parse the text in this process)
    return module.to_text(debug_info=True)


def _optimized_copy(module: Module, options: dict) -> Module:
    """A copy of ``module`` after ``Module.optimize(**options)``, or a plain copy where that does not pay
    (_pays); kept on disk with a cache directory, so a later process runs no pass (issue 51)."""
    def make():
        copy = module.clone()
        copy.optimize(**options)
        if not _pays(module, copy, options.get("cost_model")):
            cache.count("pipeline_reverts")
            copy = module.clone()
        return copy

    return _on_disk(module, "to_jax pipeline", (repr(sorted(options.items())),), make,
                    lambda m: _text_of(m).encode(), lambda data: Module.parse(data, entry=module.entry),
                    ("pipeline_hits", "pipeline_writes"))


def _split(module: Module, wrt, prepare, options) -> tuple:
    """``split_vjp(module, wrt, prepare)``; with the pipeline on (``prepare``), kept on disk with a cache
    directory, so a later process neither differentiates nor optimizes the program again (issue 51)."""
    if prepare is None:
        return split_vjp(module, wrt, prepare)

    def encode(split):
        forward, backward, n_residuals = split
        return json.dumps([n_residuals, [(m.entry, _text_of(m)) for m in (forward, backward)]]).encode()

    def decode(data):
        n_residuals, parts = json.loads(data)
        forward, backward = (Module.parse(code, entry=entry) for entry, code in parts)
        return forward, backward, n_residuals

    return _on_disk(module, "to_jax split", (repr(tuple(wrt)), repr(sorted(options.items()))),
                    lambda: split_vjp(module, wrt, prepare), encode, decode, ("split_hits", "split_writes"))


def _portable(module: Module) -> bytes:
    """The portable artifact of ``module`` that jax.export calls (without shardings and hloforge's unit
    marks); kept on disk with a cache directory: serializing costs 10-20 ms of a second process's first
    call (issue 51)."""
    return _on_disk(module, "to_jax portable", (portable_target("current"),),
                    lambda: _exportable(module.without_shardings()).to_portable(), bytes, bytes,
                    ("portable_hits", "portable_writes"))


def _pays(source: Module, optimized: Module, cost_model) -> bool:
    """Whether the pipeline's result is estimated no slower than ``source`` (jax's program) on the target
    of ``cost_model`` (passes/cost.py: FFTs and dot_generals); otherwise hf.optimize hands back jax's."""
    model = target.resolve(cost_model)
    return estimate(optimized, model) <= estimate(source, model) * (1 + 1e-9)


class Program:
    """One module at one signature as jax calls it: its source Module and, made on first use, the
    optimized module, its jax.export call and the derived programs.

    Derived programs come from the optimized module (hloforge's AD and batching of what runs, so an
    FNO's backward pass is differentiated from its truncated forward), unless the source calls
    functions with derivatives of their own (hf.custom_vjp / hf.custom_jvp, or hf.from_jax
    functions that use jax's custom_jvp, custom_vjp or stop_gradient), which the optimizer's
    inlining would lose: then from the source."""

    def __init__(self, source, options: dict | None, name: str, signature=None, optimized: bool = False):
        """``source``: a Module, or a function that makes it (derived programs are made only when
        jax lowers, batches or differentiates them: jax.grad transposes a tangent program and
        never runs it), then with its ``signature`` (argument and result ShapeDtypes).
        ``optimized``: the source went through the passes already (split()'s programs)."""
        self._source, self.options, self.name = source, options, name
        self._source_optimized = optimized
        self.ins, self.outs = source.signature if signature is None else signature
        self.out_avals = [jax_api.shaped(s.shape, s.dtype) for s in self.outs]
        self.eager = {}  # (jax_api.define_primitive: the jitted eager calls)
        self._optimized = None
        self._own_rules = None
        self._exported = None
        self._host = None
        self._derived = {}
        self._lock = threading.RLock()

    @property
    def source(self) -> Module:
        if callable(self._source):
            with self._lock:
                if callable(self._source):
                    self._source = self._source()
        return self._source

    def __repr__(self):
        return f"Program({self.name}: {_signature(self.ins)} -> {_signature(self.outs)})"

    @property
    def optimized(self) -> Module:
        if self._optimized is None:
            with self._lock:
                if self._optimized is None:
                    module = self.source
                    if self.options is not None and not self._source_optimized:
                        module = _optimized_copy(module, self.options)
                    self._optimized = module
        return self._optimized

    @property
    def exported(self):
        if self._exported is None:
            with self._lock:
                if self._exported is None:
                    portable = _portable(self.optimized)
                    pjrt.prepare_custom_calls(portable)  # (LAPACK: jax's own initialization is skipped)
                    self._exported = jax_api.exported(portable, self.ins, self.outs, f"hloforge_{self.name}")
        return self._exported

    @property
    def host_run(self):
        """None, or for a module that calls hloforge's host callbacks: (run, output specs), where
        ``run`` takes numpy arrays and runs the module compiled by hloforge (its callbacks then run
        each time; jax's computation hands the arguments over and takes the results back on the
        host)."""
        if self._host is None:
            with self._lock:
                if self._host is None:
                    module = self.optimized
                    if not has_callbacks(module.text):
                        self._host = (None,)
                    else:
                        executable = compile_module(module)

                        def run(*arrays):
                            return [np.asarray(r) for r in executable.call_flat(list(arrays))]
                        self._host = ((run, [(s.shape, s.dtype) for s in self.outs]),)
        return self._host[0]

    @property
    def compiler_options(self) -> dict:
        """The XLA options hloforge's own compiler gives the optimized module (runtime/pjrt.py's
        ``backend_options``: on CPU, LLVM at level 2, and YNNPACK fusions off for partial DFTs), for
        eager calls. Inside a user's jax.jit the module compiles with that jit's options, so XLA:CPU
        makes its DFT contractions YNNPACK fusions: 50-130 ms more on the first run of an FNO-2D
        forward, about 2.5% in steady state."""
        partial_dfts = PARTIAL_DFT_ATTR in self.optimized.mlir.operation.attributes
        return pjrt.backend_options(jax_api.default_platform(), partial_dfts)

    def _differentiated(self) -> Module:
        """The module derived programs come from."""
        if self._own_rules is None:
            self._own_rules = _has_own_rules(self.source)
        return self.source if self._own_rules else self.optimized

    def _derive(self, key, make, signature) -> "Program":
        program = self._derived.get(key)
        if program is None:
            with self._lock:
                program = self._derived.get(key)
                if program is None:
                    program = Program(lambda: self._derived_module(make), self.options, f"{self.name}_{key[0]}",
                                      signature)
                    self._derived[key] = program
        return program

    def _derived_module(self, make) -> Module:
        """``make`` of the module derived programs come from; of the source where hloforge cannot
        differentiate or batch an op of the optimized one (jax's lowering of cumlogsumexp, betainc's while
        loop): hf.from_jax's rules then give jax's own derivative or jax.vmap of the function."""
        module = self._differentiated()
        try:
            return make(module)
        except NotImplementedError:
            if module is self.source:
                raise
            return make(self.source)

    def tangent(self, wrt=None, unused=()) -> "Program":
        """(primals..., tangents...) -> output tangents; with ``wrt`` (input indices), the tangents of those
        inputs only; with ``unused`` (ShapeDtypes), arguments between primals and tangents it ignores."""
        wrt = tuple(range(len(self.ins))) if wrt is None else tuple(wrt)
        unused = tuple(unused)
        return self._derive(("jvp", wrt, unused), lambda m: tangent_module(m, wrt=wrt, unused=unused),
                            (self.ins + list(unused) + [self.ins[i] for i in wrt], self.outs))

    def split(self, wrt) -> tuple:
        """(forward, backward, number of residuals) for the cotangents of the inputs ``wrt`` (indices):
        forward (primals...) -> (outputs..., residuals...), backward (primals..., residuals..., output
        cotangents...) -> their cotangents (module_ad.split_vjp). Made at once: the residuals are part of
        the signatures. None where hloforge has no reverse mode of the module (a while loop without a
        static trip count): its jvp then transposes into the cotangent program."""
        key = ("split", tuple(wrt))
        found = self._derived.get(key)
        if found is None:
            with self._lock:
                found = self._derived.get(key)
                if found is None:
                    module = self._differentiated()
                    # (the passes run once, on the whole vjp before the split; not where the source
                    # has derivatives of its own: each part keeps its calls, for higher derivatives)
                    prepare = None if self.options is None or self._own_rules else \
                        functools.partial(_optimized_copy, options=self.options)
                    try:
                        forward, backward, n_residuals = _split(module, wrt, prepare, self.options)
                    except NotImplementedError:  # (no reverse mode: a while without a static trip count)
                        found = self._derived[key] = False
                        return None
                    done = prepare is not None
                    found = self._derived[key] = (
                        Program(forward, self.options, f"{self.name}_forward", optimized=done),
                        Program(backward, self.options, f"{self.name}_backward", optimized=done), n_residuals)
        return found or None

    def cotangent(self) -> "Program":
        """(primals..., output cotangents...) -> input cotangents: the transpose of ``tangent()``."""
        return self._derive(("vjp",), cotangent_module, (self.ins + self.outs, self.ins))

    def transpose(self, linear_from: int) -> "Program":
        """(inputs[:linear_from]..., output cotangents...) -> cotangents of the other inputs, for a
        program linear in them."""
        return self._derive(("transpose", linear_from), lambda m: cotangent_module(m, linear_from),
                            (self.ins[:linear_from] + self.outs, self.ins[linear_from:]))

    def batched(self, size: int, dims) -> "Program":
        ins = [s if d is None else _with_axis(s, d, size) for s, d in zip(self.ins, dims)]
        return self._derive(("vmap", size, tuple(dims)), lambda m: module_vmap(m, size, in_axes=list(dims), out_axes=0),
                            (ins, [_with_axis(s, 0, size) for s in self.outs]))


def _with_axis(spec, axis, size) -> ShapeDtype:
    shape = list(spec.shape)
    shape.insert(axis, size)
    return ShapeDtype(shape, spec.dtype)


def _has_own_rules(module: Module) -> bool:
    """Whether ``module`` calls a function whose derivative is not that of its ops."""
    for op in module.walk():
        if op.name == "func.call" and core.CUSTOM_ATTR in op.attributes:
            rule = core.CUSTOM_RULES.get(ir.StringAttr(op.attributes[core.CUSTOM_ATTR]).value)
            if not getattr(rule, "plain", False):
                return True
    return False


def _signature(specs) -> str:
    return "(" + ", ".join(str(s) for s in specs) + ")"


# -- the primitives and their rules ------------------------------------------------------------------

def _abstract_eval(*avals, program, **_):
    return program.out_avals


def _exported_of(*, program, **_):
    return program.exported


def _compiler_options_of(*, program, **_):
    return program.compiler_options


def _host_run_of(*, program, **_):
    return program.host_run


def _as_primal(tangents, primals):
    """Tangents as the tangent program takes them: symbolic and float0 zeros become zeros of the
    primal's shape and dtype."""
    out = []
    for t, p in zip(tangents, primals):
        if jax_api.is_zero(t):
            shape, dtype = jax_api.shape_dtype(p)
            t = jax_api.zeros(shape, dtype)
        out.append(t)
    return out


def _tangents_out(program, tangents):
    """The tangent program's outputs, with jax's symbolic zeros (float0) for integer outputs."""
    return [t if jax_api.differentiable(a.dtype) else jax_api.zero_tangent(a)
            for t, a in zip(tangents, program.out_avals)]


def _zero_tangents(program):
    return [jax_api.zero_tangent(a) for a in program.out_avals]


def _call_jvp(primals, tangents, *, program):
    """The outputs and residuals from one forward program, and the output tangents from the tangent
    program, linear in the tangents, whose transpose is the backward program that reads those residuals:
    jax.grad runs the forward once (issue 51), jax.jvp runs the tangent program (forward mode, as jax's
    jvp: no transposed backward, so a custom_vjp inside is refused as jax refuses it)."""
    wrt = tuple(i for i, (t, s) in enumerate(zip(tangents, program.ins))
                if not jax_api.is_zero(t) and jax_api.differentiable(s.dtype))
    if not wrt:
        return call_p.bind(*primals, program=program), _zero_tangents(program)
    split = program.split(wrt)
    if split is None:  # (no reverse mode: the tangent program, transposed into the cotangent program)
        out_tangents = linear_call_p.bind(*primals, *_as_primal(tangents, primals), program=program.tangent(),
                                          linear_from=len(primals), transposed=program.cotangent())
        return call_p.bind(*primals, program=program), _tangents_out(program, out_tangents)
    forward, backward, n_residuals = split
    results = call_p.bind(*primals, program=forward)
    outs, residuals = results[:len(program.outs)], results[len(program.outs):]
    linear = program.tangent(wrt, forward.outs[len(program.outs):])
    out_tangents = linear_call_p.bind(*primals, *residuals, *[tangents[i] for i in wrt], program=linear,
                                      linear_from=len(primals) + n_residuals, transposed=backward)
    return outs, _tangents_out(program, out_tangents)


def _linear_call_jvp(primals, tangents, *, program, linear_from, transposed):
    # (the primal stays a linear call: it is linear in the same inputs, for an outer transposition)
    outs = linear_call_p.bind(*primals, program=program, linear_from=linear_from, transposed=transposed)
    if all(jax_api.is_zero(t) for t in tangents):
        return outs, _zero_tangents(program)
    out_tangents = linear_call_p.bind(*primals, *_as_primal(tangents, primals), program=program.tangent(),
                                      linear_from=len(primals), transposed=program.cotangent())
    return outs, _tangents_out(program, out_tangents)


def _linear_call_transpose(cts, *args, program, linear_from, transposed):
    fixed, linear = args[:linear_from], args[linear_from:]
    if any(jax_api.is_undefined(x) for x in fixed):
        raise TypeError(f"hf.to_jax: {program.name} is transposed in an input it is not linear in (inputs "
                        f"0..{linear_from - 1} are its primals)")
    cts = [jax_api.zeros(a.shape, a.dtype) if jax_api.is_zero(c) else c for c, a in zip(cts, program.out_avals)]
    if transposed is None:
        transposed = program.transpose(linear_from)
    grads = call_p.bind(*fixed, *cts, program=transposed)
    return [None] * linear_from + [g if jax_api.is_undefined(x) else None for g, x in zip(grads, linear)]


def _call_transpose(cts, *args, program):
    """jax transposes a call in the inputs it is linear in (a to_jax function applied to tangents, e.g. in a
    ``jax.custom_jvp`` rule): hloforge's cotangent program, those inputs' primals taken as zeros (the
    cotangents of a function linear in them do not depend on them)."""
    primals = [jax_api.zeros(x.aval.shape, x.aval.dtype) if jax_api.is_undefined(x) else x for x in args]
    cts = [jax_api.zeros(a.shape, a.dtype) if jax_api.is_zero(c) else c for c, a in zip(cts, program.out_avals)]
    grads = call_p.bind(*primals, *cts, program=program.cotangent())
    return [g if jax_api.is_undefined(x) else None for g, x in zip(grads, args)]


def _axis_size(args, dims) -> int:
    return next(jax_api.shape_dtype(a)[0][d] for a, d in zip(args, dims) if d is not None)


def _call_batch(args, dims, *, program):
    dims = list(dims)
    batched = program.batched(_axis_size(args, dims), dims)
    return call_p.bind(*args, program=batched), [0] * len(batched.outs)


def _linear_call_batch(args, dims, *, program, linear_from, transposed):
    dims = list(dims)
    size = _axis_size(args, dims)
    batched = program.batched(size, dims)
    # the batched transpose, where it returns the cotangents on the tangents' axis 0 (else the batched
    # program's own transpose)
    if transposed is not None and all(d == 0 for d in dims[linear_from:]):
        transposed = transposed.batched(size, dims[:linear_from] + [0] * len(program.outs))
    else:
        transposed = None
    outs = linear_call_p.bind(*args, program=batched, linear_from=linear_from, transposed=transposed)
    return outs, [0] * len(batched.outs)


call_p = jax_api.define_primitive("hloforge_call", abstract_eval=_abstract_eval, exported_of=_exported_of,
                                  jvp=_call_jvp, batch=_call_batch, transpose=_call_transpose,
                                  compiler_options_of=_compiler_options_of, host_run_of=_host_run_of)
linear_call_p = jax_api.define_primitive(
    "hloforge_linear_call", abstract_eval=_abstract_eval, exported_of=_exported_of, jvp=_linear_call_jvp,
    batch=_linear_call_batch, transpose=_linear_call_transpose, compiler_options_of=_compiler_options_of,
    host_run_of=_host_run_of)


# -- the public functions ----------------------------------------------------------------------------

def to_jax(fn_or_module, *, optimize: bool = True, **optimize_options):
    """A jax-traceable function that runs an hloforge program.

    Inside ``jax.jit`` the program's optimized StableHLO is inlined into jax's computation; called
    eagerly it runs and returns jax arrays. ``jax.grad``/``vjp``/``jvp``/``jacfwd``/``jacrev``/
    ``hessian`` through it use hloforge's AD of the module (its derivative modules are optimized
    too), and ``jax.vmap`` uses hloforge's batching (Module.vmap). A Python function is traced once
    per argument signature (pytree structure, shapes, jax's dtypes).

    Args:
      fn_or_module: a Python function written with hloforge (pytrees in and out), an
        ``hf.from_jax`` function, or an ``hf.Module`` (parsed, loaded or traced; its arguments are
        passed flat, and a module with dynamic dimensions is refined at each call's shapes).
      optimize: run hloforge's pass pipeline (``Module.optimize``) on every module jax calls.
      **optimize_options: ``Module.optimize``'s keyword arguments (``pipeline``, ``finite_math``,
        ``cost_model``, ...); the cost model defaults to ``hf.config.cost_model``, else the model of jax's
        default platform (``target.TPU`` on a TPU).
    Returns:
      A function taking jax arrays, tracers, numpy arrays or Python scalars.
    Raises:
      TypeError: an unknown option; at a call, a leaf that is neither an array nor hashable (other
        leaves that are not arrays are static, as in eqx.filter_jit), or arguments that do
        not match a module's signature (the values are printed).
    Example:
      >>> f = hf.to_jax(lambda x: hnp.fft.irfft(hnp.fft.rfft(x)))
      >>> jax.jit(jax.grad(lambda x: f(x).sum()))(np.ones(8, np.float32))
    """
    options = _options(optimize, optimize_options)
    if isinstance(fn_or_module, Module):
        return _module_function(fn_or_module, options)
    if not callable(fn_or_module):
        raise TypeError(f"hf.to_jax: expected a function or an hf.Module, got {fn_or_module!r}")
    return _traced_function(fn_or_module, options)


def optimize(fn=None, **optimize_options):
    """``hf.to_jax(hf.from_jax(fn))``: the jax function ``fn``, lowered by jax and rewritten by
    hloforge's passes, as a jax function again (a decorator).

    Derivatives are jax's own derivatives of ``fn`` (so stop_gradient and custom_vjp rules hold),
    rewritten by the passes too; jax.vmap uses hloforge's batching of the rewritten module. Typed PRNG
    keys cross as their key data, and those ``fn`` returns come back typed keys.

    Args:
      fn: a jax-traceable function without host callbacks.
      **optimize_options: ``Module.optimize``'s keyword arguments.
    Returns:
      A jax-traceable function with ``fn``'s signature.
    Example:
      >>> @hf.optimize
      ... def model(params, x): return fno_forward(params, x)   # pure jax
      >>> loss, grads = jax.jit(jax.value_and_grad(loss_fn))(params, x)
    """
    if fn is None:
        return functools.partial(optimize, **optimize_options)
    if not callable(fn):
        raise TypeError(f"hf.optimize: expected a jax function, got {fn!r}")
    if jax_api.tree_flatten(fn)[0] not in ([], [fn]):  # (a callable pytree: an eqx.Module, a flax nnx module)
        return functools.partial(optimize(_call_pytree, **optimize_options), fn)
    jax_fn = from_jax(fn)
    bridged = to_jax(jax_fn, **optimize_options)

    @functools.wraps(fn)
    def optimized(*args, **kwargs):
        outs = bridged(*args, **kwargs)
        leaves = jax_api.tree_flatten(outs)[0]
        # (typed keys cross as key data, uint32: only then are the results' key dtypes looked up, which
        # costs a fifth of an eager call; inside an hloforge trace they stay Tensors)
        if any(isinstance(leaf, Tensor) for leaf in leaves) or \
                not any(getattr(leaf, "dtype", None) == np.uint32 for leaf in leaves):
            return outs
        return jax_api.wrap_keys(outs, jax_fn.result_keys(*args, **kwargs))

    optimized.cache_size = bridged.cache_size
    return optimized


def _call_pytree(module, *args, **kwargs):
    """``module(*args, **kwargs)``: hf.optimize of a callable pytree passes it as an argument, so its arrays
    are arguments (not constants of the program) and its other leaves static."""
    return module(*args, **kwargs)


def _options(optimize, options) -> dict | None:
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise TypeError(f"hf.to_jax: unknown option(s) {unknown}; Module.optimize takes {list(_OPTIONS)}")
    if not optimize:
        return None
    options = dict(options)
    if options.get("cost_model") is None:  # (hf.config.cost_model, else the model of the platform jax compiles for)
        options["cost_model"] = target.resolve(None, target.kind_of(jax_api.default_platform()))
    options["dft_precision"] = target.resolve_dft_precision(  # (hf.config's, in the keys)
        options.get("dft_precision"), "hf.to_jax / hf.optimize: dft_precision")
    return options


def _leaf_specs(leaves, what) -> list:
    specs = []
    for i, leaf in enumerate(leaves):
        try:
            aval = jax_api.aval_of(leaf)
        except TypeError:
            raise TypeError(f"{what}: argument leaf {i} is not an array, got {leaf!r}") from None
        specs.append(ShapeDtype(tuple(aval.shape), np.dtype(aval.dtype)))
    return specs


def _bound(programs: dict) -> None:
    """Keep the newest ``hf.config.cache_size`` programs (at least one) of a to_jax function, as hf.jit's
    executable cache is bounded: a function called with ever new shapes must not grow without end."""
    while len(programs) > max(config.cache_size, 1):
        programs.pop(next(iter(programs)))


_WIDE = tuple(np.dtype(d) for d in (np.float64, np.complex128, np.int64, np.uint64))


def _refuse_wide_results(what, module) -> None:
    """With jax's 64-bit types off, a result that hloforge's numpy promotion makes 64-bit (a float64 mean
    of int32 values, say) has no jax type: one clear error instead of a float64 array jax's
    transformations then trip over."""
    if jax_api.x64_enabled():
        return
    for i, spec in enumerate(module.signature[1]):
        dtype = np.dtype(spec.dtype)
        if dtype in _WIDE:
            raise TypeError(f"{what}: result {i} is {dtype.name}{list(spec.shape)} (numpy's promotion), and jax has "
                            f"64-bit types disabled; return a 32-bit value (e.g. hf.config.dtypes = 'jax', or "
                            f".astype(np.float32)), or enable them with jax.config.update('jax_enable_x64', True)")


def _traced_function(fn, options):
    name = getattr(fn, "__name__", "fn")
    what = f"hf.to_jax({name})"
    programs: dict = {}
    with_static: dict = {}  # static leaves' key -> the to_jax function of the array leaves alone
    lock = threading.Lock()

    def program_for(in_tree, specs) -> Program:
        # (hf.config.dtypes is part of the key: the other mode traces another program, as hf.jit does)
        key = (in_tree, tuple((s.shape, s.dtype) for s in specs), dtypes.MODE[0])
        program = programs.get(key)
        if program is None:
            with lock:
                program = programs.get(key)
                if program is None:
                    source = trace_flat(fn, in_tree, [(s.shape, s.dtype) for s in specs], kwargs_tree=True)
                    _refuse_wide_results(what, source)
                    program = programs[key] = Program(source, options, name)
                    _bound(programs)
        return program

    @functools.wraps(fn)
    def bridged(*args, **kwargs):
        leaves, in_tree = jax_api.tree_flatten((args, kwargs))
        if any(isinstance(leaf, Tensor) for leaf in leaves):
            return fn(*args, **kwargs)  # (inside an hloforge trace: the function's ops, inline)
        leaves = jax_api.raw_keys(leaves)
        if not all(map(jax_api.is_array_leaf, leaves)):  # (functions, strings: static, as eqx.filter_jit)
            key, bound, arrays = jax_api.bind_static(fn, in_tree, leaves, what)
            inner = with_static.get(key)
            if inner is None:
                inner = with_static.setdefault(key, _traced_function(bound, options))
            return inner(*arrays)
        program = program_for(in_tree, _leaf_specs(leaves, what))
        outs = call_p.bind(*leaves, program=program)
        return jax_api.tree_unflatten(program.source.out_tree, outs)

    bridged.cache_size = lambda: len(programs)
    return bridged


def _module_function(module: Module, options):
    what = f"hf.to_jax(Module @{module.entry})"
    ins, outs = module.signature
    programs: dict = {}
    lock = threading.Lock()

    def program_for(specs) -> Program:
        key = tuple((s.shape, s.dtype) for s in specs)
        program = programs.get(key)
        if program is None:
            with lock:
                program = programs.get(key)
                if program is None:
                    program = programs[key] = Program(_entry_module(module, specs), options, module.entry)
                    _bound(programs)
        return program

    def bridged(*args):
        leaves, _ = jax_api.tree_flatten(args)
        if any(isinstance(leaf, Tensor) for leaf in leaves):
            results = _inline(module, leaves)  # (inside an hloforge trace: the module's ops, inline)
        else:
            specs = _leaf_specs(leaves, what)
            _check_signature(what, ins, specs)
            results = call_p.bind(*leaves, program=program_for(specs))
        if module.out_tree is not None:
            return jax_api.tree_unflatten(module.out_tree, results)
        return results[0] if len(results) == 1 else tuple(results)

    bridged.__name__ = module.entry
    bridged.__doc__ = f"@{module.entry}{_signature(ins)} -> {_signature(outs)}, run by jax (hf.to_jax)."
    bridged.cache_size = lambda: len(programs)
    return bridged


def _check_signature(what, ins, specs) -> None:
    if len(specs) != len(ins):
        raise TypeError(f"{what}: takes {len(ins)} arguments {_signature(ins)}, got {len(specs)} "
                        f"{_signature(specs)}")
    for i, (want, got) in enumerate(zip(ins, specs)):
        dims_ok = len(want.shape) == len(got.shape) and all(
            w is None or w == g for w, g in zip(want.shape, got.shape))
        if not dims_ok or np.dtype(want.dtype) != np.dtype(got.dtype):
            hint = ""
            if np.dtype(want.dtype).itemsize == 8 and not jax_api.x64_enabled():
                hint = (" (jax has 64-bit types disabled and turns 64-bit arrays into 32-bit ones: "
                        "enable them with jax.config.update('jax_enable_x64', True) or jax.enable_x64)")
            raise TypeError(f"{what}: argument {i} must be {want}, got {got}{hint}")


def _entry_module(module: Module, specs) -> Module:
    """The module as jax.export calls it: a public ``@main`` at static shapes (a copy re-emitted
    op for op, refined at ``specs`` where the module has dynamic dimensions)."""
    if module.entry == "main" and all(s.is_static for s in module.signature[0]):
        return module
    source = module
    if not all(s.is_static for s in module.signature[0]):
        source = module.refine(specs)
        with source.context:
            static_ops(source.mlir)
    leaves, in_tree = jax_api.tree_flatten((tuple(range(len(specs))), {}))
    return trace_flat(lambda *args: tuple(_inline(source, args)), in_tree, [(s.shape, s.dtype) for s in specs],
                      kwargs_tree=True)


def _inline(module: Module, args) -> list:
    """The entry function of ``module`` re-emitted over ``args`` (Tensors) in the current trace."""
    func_op, symbols, source, depth = _entry(module, "hf.to_jax")
    with _recursion_room(depth):
        return list(core.reemit_function(func_op, list(args), symbols)[0])
