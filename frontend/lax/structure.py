"""jax.lax's structural functions: tokens (after_all, create_token), optimization_barrier,
composite, stage, dce_sink and platform_dependent."""
from __future__ import annotations

from jax import tree_util

from hloforge.frontend import ops
from hloforge.frontend.lax._common import lax_operand
from hloforge.frontend.tracing import Value
from hloforge.target import default_kind


def create_token(_=None):
    """jax.lax.create_token: a fresh token; emits ``stablehlo.after_all`` of no tokens (what
    ``stablehlo.create_token`` means).

    Args:
      _: ignored, as in jax.
    Returns:
      A token Value.
    Example:
      >>> t = hf.lax.create_token()
    """
    return ops.after_all()


def after_all(*operands):
    """jax.lax.after_all: a token ordered after every token given; emits ``stablehlo.after_all``.

    Args:
      *operands: tokens.
    Returns:
      A token Value.
    Example:
      >>> t = hf.lax.after_all(t1, t2)
    """
    for i, t in enumerate(operands):
        if not (isinstance(t, Value) and t.is_token):
            raise TypeError(f"hloforge.lax.after_all: operand {i} must be a token, got {t!r}")
    return ops.after_all(*operands)


def optimization_barrier(operand, /):
    """jax.lax.optimization_barrier: a pytree of arrays unchanged, with no computation moved across
    it; emits one ``stablehlo.optimization_barrier`` over the leaves.

    Args:
      operand: a pytree of arrays.
    Returns:
      The same pytree.
    Example:
      >>> a, b = hf.lax.optimization_barrier((a, b))
    """
    leaves, tree = tree_util.tree_flatten(operand)
    if not leaves:
        return operand
    xs = [lax_operand(v, "hloforge.lax.optimization_barrier operand") for v in leaves]
    return tree_util.tree_unflatten(tree, list(ops.optimization_barrier(xs)))


def composite(decomposition, name, version=0):
    """jax.lax.composite: ``decomposition`` as a function that emits one ``stablehlo.composite``
    named ``name`` (its body a private function); keyword arguments of a call become the
    composite's attributes.

    Args:
      decomposition: a function of arrays (pytrees allowed) and static keyword attributes
        (bool, int, float or str), built with hloforge.lax / hloforge.ops; it may not use
        Tensors from outside its arguments.
      name: the composite's name, e.g. "my.tangent".
      version: the composite's version.
    Returns:
      The wrapped function.
    Example:
      >>> my_tan = hf.lax.composite(lambda x: hf.lax.div(hf.lax.sin(x), hf.lax.cos(x)), "my.tan")
    """
    if not callable(decomposition):
        raise TypeError(f"hloforge.lax.composite: decomposition must be callable, got {type(decomposition).__name__}")

    def call(*args, **kwargs):
        leaves, in_tree = tree_util.tree_flatten(args)
        xs = [lax_operand(v, f"hloforge.lax.composite {name} argument") for v in leaves]
        out_tree = []

        def body(*flat):
            out = decomposition(*tree_util.tree_unflatten(in_tree, list(flat)), **kwargs)
            out_leaves, tree = tree_util.tree_flatten(out)
            out_tree.append(tree)
            return [lax_operand(v, f"hloforge.lax.composite {name} output") for v in out_leaves]
        outs = ops.composite(xs, name, body, attributes=dict(kwargs), version=version)
        return tree_util.tree_unflatten(out_tree[0], list(outs))
    call.__name__ = call.__qualname__ = getattr(decomposition, "__name__", "composite")
    call.__doc__ = decomposition.__doc__
    return call


def stage(x, /):
    """jax.lax.stage: ``x`` lifted into the trace (a constant for an array or Python scalar, which
    is int32/float32/complex64 as in jax); emits a ``stablehlo.constant`` or nothing for a Tensor.

    Args:
      x: an array, scalar or Tensor.
    Returns:
      A Tensor.
    Example:
      >>> c = hf.lax.stage(np.arange(3))
    """
    return lax_operand(x, "hloforge.lax.stage operand")


def dce_sink(val, *, prevent_mlir_dce=False):
    """jax.lax.dce_sink: marks a pytree of values as used. As in jax, nothing is emitted unless
    ``prevent_mlir_dce``, which emits a side-effecting ``stablehlo.custom_call @dce_sink`` per leaf
    (the target jaxlib registers; jax's attributes), so dead-code elimination keeps its producers.

    Args:
      val: a pytree of arrays.
      prevent_mlir_dce: emit the custom call.
    Returns:
      None.
    Example:
      >>> hf.lax.dce_sink(debug_value)
    """
    leaves = [lax_operand(v, "hloforge.lax.dce_sink value") for v in tree_util.tree_leaves(val)]
    if prevent_mlir_dce:
        for x in leaves:
            ops.custom_call([x], "dce_sink", [], has_side_effect=True, extra_attributes={"mhlo.backend_config": "{}"})
    return None


_JAX_PLATFORM = {"cpu": "cpu", "gpu": "cuda"}


def platform_dependent(*args, default=None, **per_platform):
    """jax.lax.platform_dependent: the branch for the platform the trace targets
    (``hloforge.config.device`` at trace time, jax's default device when that is None: "cpu",
    "tpu", or "cuda" for "gpu"), else ``default``;
    only that branch is traced, so a program is built for one platform (jax traces every branch
    and lets the compiler choose).

    Args:
      *args: the branch arguments.
      default: the branch for other platforms (None: none).
      **per_platform: branches by jax platform name ("cpu", "cuda", "rocm", "tpu").
    Returns:
      The chosen branch's result.
    Example:
      >>> y = hf.lax.platform_dependent(x, cpu=cpu_impl, default=generic_impl)
    """
    for name, branch in per_platform.items():
        if not callable(branch):
            raise TypeError(f"hloforge.lax.platform_dependent: the '{name}' branch must be a callable.")
        if name == "gpu":
            raise ValueError("hloforge.lax.platform_dependent: use 'cuda' or 'rocm', not 'gpu'.")
    if default is not None and not callable(default):
        raise TypeError("hloforge.lax.platform_dependent: the 'default' branch must be a callable.")
    kind = default_kind()
    platform = _JAX_PLATFORM.get(kind, kind)
    branch = per_platform.get(platform, default)
    if branch is None:
        raise ValueError(f"hloforge.lax.platform_dependent: no branch for platform '{platform}' and no default "
                         f"(branches: {sorted(per_platform)})")
    return branch(*args)


__all__ = ["create_token", "after_all", "optimization_barrier", "composite", "stage", "dce_sink",
           "platform_dependent"]
