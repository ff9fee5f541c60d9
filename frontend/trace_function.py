"""``trace``: a Python function over Tensors -> a Module, and what hf.jit reads off its arguments
(each leaf's (shape, dtype), the weakly typed Python scalars, the signature key, jax mode's narrowing)."""
from __future__ import annotations

import numpy as np
from jax import tree_util

from hloforge.frontend import dtypes
from hloforge.frontend.context import func, ir
from hloforge.frontend.module import Module, ShapeDtype
from hloforge.frontend.tracing import Builder, Tensor, active, as_tensor, jax_error_of_tensor, refuse_masked
from hloforge.runtime import dispatch


def spec_of(leaf, index: int) -> tuple:
    if isinstance(leaf, ShapeDtype):
        if not leaf.is_static:
            raise ValueError(f"trace: argument leaf {index} {leaf}, dimension {leaf.dynamic_dims()[0]} is "
                             f"dynamic (?): tracing needs static shapes")
        return leaf.shape, leaf.dtype
    if isinstance(leaf, Tensor):
        raise TypeError(f"trace: argument leaf {index} is a traced Tensor; pass ShapeDtype or arrays")
    refuse_masked(leaf, f"trace: argument leaf {index}")
    w = dtypes.weak_type(leaf)
    if w is not None:
        return (), dtypes.result_type(leaf)
    shape, dtype = getattr(leaf, "shape", None), getattr(leaf, "dtype", None)
    if shape is None or dtype is None:
        try:
            array = np.asarray(leaf)
        except Exception:
            array = None
        if array is None or array.dtype == object:
            raise TypeError(f"trace: argument leaf {index} of type {type(leaf).__name__} is not an array, "
                            "scalar or ShapeDtype")
        shape, dtype = array.shape, array.dtype
    try:
        return tuple(shape), dtypes.canonicalize(native(dtype))  # (jax mode: 64-bit arrays as 32-bit ones)
    except TypeError as e:
        raise TypeError(f"trace: argument leaf {index}: {e}") from None


def native(dtype) -> np.dtype:
    """A numpy dtype in native byte order ('>f4' is float32's values, so it traces as float32)."""
    try:
        d = np.dtype(dtype)
    except TypeError:
        return dtype
    return d if d.isnative else d.newbyteorder("=")


def _function_location(fn) -> ir.Location:
    code = getattr(fn, "__code__", None)
    if code is None:
        return ir.Location.unknown()
    return ir.Location.file(code.co_filename, code.co_firstlineno, 1)


def weak_leaves(leaves) -> list:
    """The flat indices of Python int/float/complex leaves: weakly typed arguments (NEP 50, jax)."""
    return [i for i, leaf in enumerate(leaves) if dtypes.weak_type(leaf) in (int, float, complex)]


def jax_mode_leaves(leaves) -> tuple:
    """hf.config.dtypes = "jax": (the leaves with 64-bit arrays narrowed to 32 bits, as jax without
    x64 narrows them; each leaf as jax's C++ loop without x64 sees it, for ``fastpath_ok``: Python
    scalars weakly 32-bit, numpy arrays narrowed, jax arrays as they are)."""
    call, seen = [], []
    for leaf in leaves:
        if type(leaf) in dispatch.PYTHON_SCALARS:
            call.append(leaf)
            seen.append(np.empty((), dtypes.result_type(leaf)))
            continue
        d = getattr(leaf, "dtype", None)
        narrow = dtypes.X32.get(native(d)) if isinstance(d, np.dtype) else None
        if narrow is None:
            call.append(leaf)
            seen.append(leaf)
            continue
        array = np.asarray(leaf).astype(narrow)
        call.append(array)
        seen.append(array if type(leaf) in dispatch.NUMPY_TYPES else leaf)
    return call, seen


def trace_flat(fn, in_tree, in_specs, name="main", kwargs_tree=False, spmd=False, weak=()) -> Module:
    """Trace ``fn`` over flat (shape, dtype) specs unflattened with ``in_tree``; the arguments at
    the flat indices ``weak`` are weakly typed (Python scalars)."""
    b = Builder(spmd)
    with b.ctx, ir.Location.unknown(), active(b):
        in_types = [b.type(*s) for s in in_specs]
        with ir.InsertionPoint(b.module.body):
            fn_loc = _function_location(fn)
            f = func.FuncOp(name, ir.FunctionType.get(in_types, []), loc=fn_loc)
        block = f.add_entry_block()
        with b.at(block):
            args = [Tensor(v, s, d, b) for v, (s, d) in zip(block.arguments, in_specs)]
            for i in weak:
                args[i].weak = True
            tree_args = tree_util.tree_unflatten(in_tree, args)
            try:
                if kwargs_tree:
                    pos, kw = tree_args
                    out = fn(*pos, **kw)
                else:
                    out = fn(*tree_args)
            except TypeError as e:  # (jax's own words for a Tensor it was given: ours instead)
                error = jax_error_of_tensor(e)
                if error is None:
                    raise
                raise error from e
            out_leaves, out_tree = tree_util.tree_flatten(out)
            if dtypes.MODE[0] == "jax":  # (constants returned as they are: narrowed, as jax does)
                out_leaves = [o if isinstance(o, Tensor) else jax_mode_leaves([o])[0][0] for o in out_leaves]
            outs = [as_tensor(o, what=f"trace: output {i}") for i, o in enumerate(out_leaves)]
            b.emit("func.return", outs, [], loc=fn_loc)  # (not the caller's line: keeps the text,
                                                         # and the executable cache key, stable)
        f.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(in_types, [o.value.type for o in outs]))
    module = Module(b.module, name, out_tree)
    module.verify()
    return module


def trace(fn, *specs, name: str = "main", spmd: bool = False) -> Module:
    """Trace ``fn`` into a StableHLO module with one public function ``@name``.

    Args:
      fn: a Python function over Tensors (pytrees of them in and out).
      *specs: one per positional argument: ``ShapeDtype``, arrays, Python scalars
        (weakly typed 0-d of the default dtype: float64, float32 with hf.config.dtypes = "jax"),
        or pytrees of those.
      name: the entry function's name.
      spmd: the module will be compiled over a mesh (``m.compile(in_shardings=...)``): lowerings
        with a choice (einsum) keep leading batch dims as dot_general batching dims, which XLA's
        SPMD partitioner keeps sharded; on one device the default form is faster.
    Returns:
      A Module; closed-over numpy arrays became constants.
    Example:
      >>> m = hf.trace(lambda x: hnp.exp(x), hf.ShapeDtype((4,), np.float32))
    """
    leaves, in_tree = tree_util.tree_flatten(specs)
    return trace_flat(fn, in_tree, [spec_of(l, i) for i, l in enumerate(leaves)], name, spmd=spmd,
                      weak=weak_leaves(leaves))


def abstract_key(leaf):
    """A hashable (shape, dtype) for a leaf without touching its data."""
    t = type(leaf)
    if t in (bool, int, float, complex):
        return t
    try:
        return (tuple(leaf.shape), native(leaf.dtype))
    except AttributeError:
        a = np.asarray(leaf)
        return (a.shape, native(a.dtype))
