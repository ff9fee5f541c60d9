"""The one adapter for jax's own APIs that hf.to_jax needs (as ``context.py`` is for MLIR): jax
primitives with their rules, jax.export's call of a serialized StableHLO module, and jax's AD
values (symbolic zeros, undefined primals, float0 tangents). Every jax-version-specific call of the
bridge lives here.

A primitive's lowering calls ``jax.export.Exported.call`` on the module, so inside ``jax.jit`` jax
inlines the module into its own computation (jax.export merges it as a private function that XLA
inlines); called eagerly the primitive runs the same lowering under ``jax.jit``.
"""
from __future__ import annotations

import contextlib
import threading

import jax
import jax.numpy as jnp
import numpy as np
from jax import export
from jax.extend.core import Primitive, jaxprs_in_params
from jax.interpreters import ad, batching, mlir


def define_primitive(name: str, *, abstract_eval, exported_of, jvp, batch, transpose=None,
                     compiler_options_of=None, host_run_of=None) -> Primitive:
    """A jax primitive with multiple results that runs ``exported_of(**params)``; its ``program``
    parameter keeps the eager calls' jitted functions (in a dict ``eager``).

    Args:
      abstract_eval: ``(*avals, **params) -> [ShapedArray]``.
      exported_of: ``(**params) -> jax.export.Exported`` of the module to call.
      compiler_options_of: ``(**params) -> dict``, XLA options for the eager calls' jax.jit (inside
        a user's jax.jit the module is inlined and compiles with that jit's options: jax takes
        ``compiler_options`` only on a top-level jit).
      host_run_of: ``(**params) -> (run, out_specs) or None``: a module jax cannot inline (it calls
        hloforge's host callbacks) runs as ``run(*numpy arrays)`` from a jax.pure_callback instead.
      jvp, batch, transpose: rules with jax's signatures (``ad.primitive_jvps``,
        ``batching.primitive_batchers``, ``ad.primitive_transposes``).
    """
    prim = Primitive(name)
    prim.multiple_results = True

    def call(*args, **params):
        host = host_run_of(**params) if host_run_of is not None else None
        if host is not None:
            run, outs = host
            return jax.pure_callback(run, [jax.ShapeDtypeStruct(tuple(s), np.dtype(d)) for s, d in outs], *args)
        return exported_of(**params).call(*args)

    def impl(*args, **params):
        key = (name, *sorted((k, v) for k, v in params.items() if k != "program"))
        jitted = params["program"].eager
        fn = jitted.get(key)
        if fn is None:
            options = compiler_options_of(**params) if compiler_options_of is not None else None

            def run(*a):
                return prim.bind(*a, **params)
            # (jax's errors, e.g. arguments on two devices, name the jitted function: the program's name)
            run.__name__ = run.__qualname__ = f"hf.to_jax({getattr(params['program'], 'name', name)})"
            fn = jitted[key] = jax.jit(run, compiler_options=options or None)
        return fn(*args)

    lowering = mlir.lower_fun(call, multiple_results=True)

    def lower(ctx, *args, **params):
        outer, _IN_BRIDGE.on = getattr(_IN_BRIDGE, "on", False), True
        try:
            return lowering(ctx, *args, **params)
        finally:
            _IN_BRIDGE.on = outer

    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)
    mlir.register_lowering(prim, lower)
    ad.primitive_jvps[prim] = jvp
    batching.primitive_batchers[prim] = batch
    if transpose is not None:
        ad.primitive_transposes[prim] = transpose
    return prim


_IN_BRIDGE = threading.local()  # (on while jax lowers a bridge primitive)


def _skip_backend_init_in_the_bridge() -> None:
    """jax.export's call lowering initializes jaxlib's LAPACK kernels on the CPU for every module it calls,
    which imports scipy: 150-200 ms of a process's first hf.optimize call (issue 51). The bridge's modules
    seldom hold LAPACK calls, and the bridge loads LAPACK itself where they do (to_jax.Program.exported, as
    hloforge's runtime does for a module it compiles), so inside its lowerings jax's initialization is
    skipped; every other jax.export call keeps it. (A jax without that function: nothing is changed.)"""
    try:
        from jax._src.export import _export
        initialize = _export._ensure_backends_initialized
    except (ImportError, AttributeError):
        return

    def ensure_backends_initialized(platforms):
        if not getattr(_IN_BRIDGE, "on", False):
            initialize(platforms)
    _export._ensure_backends_initialized = ensure_backends_initialized


_skip_backend_init_in_the_bridge()


def exported(portable: bytes, in_specs, out_specs, name: str):
    """A ``jax.export.Exported`` that calls the StableHLO portable artifact ``portable`` (its public
    ``@main`` takes ``in_specs`` and returns ``out_specs``, (shape, dtype) pairs) on jax's default
    platform, unsharded, as ``jax.export.export`` makes one for a jitted function of that signature
    (built directly: exporting a stand-in costs 8-20 ms per program, part of a second process's first
    call, issue 51; tests/test_to_jax.py checks it field by field against jax's)."""
    in_avals = tuple(shaped(s, d) for s, d in in_specs)
    out_avals = tuple(shaped(s, d) for s, d in out_specs)
    return export.Exported(
        fun_name=name, in_tree=jax.tree_util.tree_structure((tuple(in_avals), {})),
        out_tree=jax.tree_util.tree_structure(tuple(out_avals)), in_avals=in_avals, out_avals=out_avals,
        _has_named_shardings=True, _in_named_shardings=(None,) * len(in_avals),
        _out_named_shardings=(None,) * len(out_avals), in_shardings_hlo=(None,) * len(in_avals),
        out_shardings_hlo=(None,) * len(out_avals), nr_devices=1, platforms=(default_platform(),),
        ordered_effects=(), unordered_effects=(), disabled_safety_checks=(), mlir_module_serialized=portable,
        module_kept_var_idx=tuple(range(len(in_avals))), uses_global_constants=False,
        calling_convention_version=jax.config.jax_export_calling_convention_version, _get_vjp=None)


# primitives whose derivative is not the derivative of the ops they lower to
_OWN_DERIVATIVES = ("custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr", "custom_lin", "stop_gradient")


def has_own_derivatives(closed_jaxpr) -> bool:
    """Whether a jaxpr (or one nested in it) uses a primitive with a derivative of its own
    (custom_jvp, custom_vjp, stop_gradient): differentiating its lowered ops would differ."""
    stack = [closed_jaxpr.jaxpr if hasattr(closed_jaxpr, "jaxpr") else closed_jaxpr]
    while stack:
        jaxpr = stack.pop()
        for eqn in jaxpr.eqns:
            if eqn.primitive.name in _OWN_DERIVATIVES:
                return True
            stack.extend(j.jaxpr if hasattr(j, "jaxpr") else j for j in jaxprs_in_params(eqn.params))
    return False


def x64_if(wide: bool):
    """jax's thread-scoped 64-bit mode where a signature has 64-bit types (never the global flag)."""
    return jax.enable_x64(True) if wide else contextlib.nullcontext()


def promote_types(a, b) -> np.dtype:
    """jax.numpy.promote_types: jax's promotion lattice over two dtypes (not narrowed to 32 bits:
    ``float64, float32`` is float64), for hf.config.dtypes = "jax"."""
    return np.dtype(jnp.promote_types(a, b))


def x64_enabled() -> bool:
    return bool(jax.config.read("jax_enable_x64"))


def default_platform() -> str:
    """The platform jax compiles for by default: "cpu", "cuda", "rocm" or "tpu"."""
    return export.default_export_platform()


def refuse_type(cls, error_of) -> None:
    """Make jax raise ``error_of(x)`` (an exception) wherever it asks a value ``x`` of type ``cls`` for
    its abstract value or canonical value (jax.jit's and jax.numpy's arguments, jax.vmap, device_put),
    instead of "is not a valid JAX type". (jax 0.10 consults these two tables before ``__jax_array__``,
    which a Tensor must not have: a jax.Array's operators would then call it instead of deferring to
    the Tensor's reflected operator.)"""
    try:
        from jax._src import core, dtypes as jax_dtypes
        tables = (core.pytype_aval_mappings, jax_dtypes.canonicalize_value_handlers)
    except (ImportError, AttributeError):  # (another jax: its own "not a valid JAX type" then)
        return

    def refuse(x):
        raise error_of(x)
    for table in tables:
        table[cls] = refuse


def raw_keys(leaves) -> list:
    """``leaves`` with jax's typed PRNG keys (``jax.random.key(1)``) as their raw uint32 key data, which
    jax's samplers take as well (the default threefry2x32 implementation); a key of another
    implementation is a TypeError."""
    out = []
    for leaf in leaves:
        if is_typed_key(leaf):
            impl = str(jax.random.key_impl(leaf))
            if impl != "threefry2x32":
                raise TypeError(f"a typed PRNG key of the {impl!r} implementation cannot cross into hloforge "
                                f"(only threefry2x32 keys, jax's default); pass jax.random.key_data(key)")
            leaf = jax.random.key_data(leaf)
        out.append(leaf)
    return out


def is_key_dtype(dtype) -> bool:
    return jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key)


def is_typed_key(leaf) -> bool:
    dtype = getattr(leaf, "dtype", None)
    return dtype is not None and is_key_dtype(dtype)


def key_dtypes(leaves) -> tuple:
    """Per leaf (an array or its abstract value): its typed PRNG key dtype, or None."""
    return tuple(leaf.dtype if is_typed_key(leaf) else None for leaf in leaves)


def wrap_keys(tree, dtypes):
    """``tree`` with the leaves that ``dtypes`` (``key_dtypes``) names typed keys again, from their key data."""
    if not any(d is not None for d in dtypes):
        return tree
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    leaves = [leaf if d is None else jax.random.wrap_key_data(leaf, dtype=d) for leaf, d in zip(leaves, dtypes)]
    return jax.tree_util.tree_unflatten(treedef, leaves)


def is_array_leaf(leaf) -> bool:
    """Whether a pytree leaf is an array (jax arrays, tracers, numpy arrays and scalars, Python numbers,
    hloforge Tensors); other leaves (functions, strings, objects) are static, as ``eqx.filter_jit``
    makes them."""
    return (isinstance(leaf, (np.ndarray, np.generic, bool, int, float, complex))
            or (hasattr(leaf, "shape") and hasattr(leaf, "dtype")))


def bind_static(fn, tree, leaves, what: str):
    """None when every leaf is an array; else (the static leaves' key, a function of the array leaves alone
    that calls ``fn`` with the static ones in place, the array leaves). The key holds the static values
    (so they must be hashable) and ``tree``."""
    values = {i: leaf for i, leaf in enumerate(leaves) if not is_array_leaf(leaf)}
    if not values:
        return None
    key = (tree, tuple(values.items()))
    try:
        hash(key)
    except TypeError:
        bad = next(i for i, v in values.items() if not _hashable(v))
        raise TypeError(f"{what}: argument leaf {bad} ({type(values[bad]).__name__}) is neither an array nor "
                        f"hashable; leaves that are not arrays are static and key the compiled program") from None

    def bound(*arrays):
        it = iter(arrays)
        full = [values[i] if i in values else next(it) for i in range(len(leaves))]
        args, kwargs = jax.tree_util.tree_unflatten(tree, full)
        return fn(*args, **kwargs)
    return key, bound, [leaf for i, leaf in enumerate(leaves) if i not in values]


def _hashable(value) -> bool:
    try:
        hash(value)
        return True
    except TypeError:
        return False


def aval_of(leaf):
    """jax's abstract value of an argument leaf (arrays, tracers, numpy arrays, Python scalars),
    with jax's dtype canonicalization; TypeError for a leaf jax does not take."""
    return jax.typeof(leaf)


def shaped(shape, dtype):
    return jax.core.ShapedArray(tuple(shape), np.dtype(dtype))


def is_tracer(leaf) -> bool:
    return isinstance(leaf, jax.core.Tracer)


def differentiable(dtype) -> bool:
    return bool(jnp.issubdtype(dtype, jnp.inexact))


def is_zero(tangent) -> bool:
    """A symbolic zero tangent or cotangent, or a float0 one (an integer value's)."""
    return type(tangent) is ad.Zero or getattr(tangent, "dtype", None) == jax.dtypes.float0


def zero_tangent(aval):
    """The symbolic zero tangent of a value of ``aval`` (float0 for integers and bools)."""
    return ad.Zero(aval.to_tangent_aval())


def zeros(shape, dtype):
    return jnp.zeros(shape, dtype)


def is_undefined(x) -> bool:
    """A linear input of a transpose rule (what the transposition solves for)."""
    return ad.is_undefined_primal(x)


def shape_dtype(x):
    """(shape, dtype) of a value or of a transpose rule's undefined primal."""
    aval = x.aval if ad.is_undefined_primal(x) else jax.typeof(x)
    return tuple(aval.shape), aval.dtype if is_key_dtype(aval.dtype) else np.dtype(aval.dtype)


def tree_flatten(tree):
    return jax.tree_util.tree_flatten(tree)


def tree_unflatten(treedef, leaves):
    return jax.tree_util.tree_unflatten(treedef, leaves)


# ---------------------------------------------------------------- jax.checkpoint_policies (hf.checkpoint)

def remat_policy(policy):
    """One of ``jax.checkpoint_policies``' objects as ``(kind, argument)`` for hf.checkpoint to
    translate ("everything"/"nothing", None; "dots", only_if_no_batch_dims; "only_names" or
    "names_but", a frozenset of names; "offload", the policy's name), None for anything else
    (jax's policies are dataclasses of jax._src.ad_checkpoint in this version)."""
    cp = jax.checkpoint_policies
    if policy is cp.everything_saveable:
        return "everything", None
    if policy is cp.nothing_saveable:
        return "nothing", None
    if not str(getattr(policy, "__module__", "")).startswith("jax."):
        return None
    kind = type(policy).__name__
    made_by = getattr(policy, "__qualname__", "").split(".")[0]  # (the offloading ones are closures here)
    if made_by in ("offload_dot_with_no_batch_dims", "save_and_offload_only_these_names"):
        return "offload", made_by
    if kind == "DotsSaveable":
        return "dots", bool(policy.only_if_no_batch_dims)
    if kind == "SaveOnlyTheseNames":
        return "only_names", frozenset(policy.saveable_names)
    if kind == "SaveAnyNamesButThese":
        return "names_but", frozenset(policy.names)
    if kind == "OffloadDotWithNoBatchDims":
        return "offload", "offload_dot_with_no_batch_dims"
    if kind == "SaveAndOffloadOnlyTheseNames":
        return "offload", "save_and_offload_only_these_names"
    return None
