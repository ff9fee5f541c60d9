"""numpy.vectorize as jax.numpy has it: the function is traced once, on one example, and batched with
``hf.vmap`` over the broadcast (loop) dimensions, one vmap per dimension; ``signature`` names the core
dimensions each argument keeps (``"(m,n),(n)->(m)"``), which the function sees whole."""
from __future__ import annotations

import functools
import re

import numpy as np

from hloforge.frontend import dtypes, eager
from hloforge.frontend.numpy._base import asarray, astype, broadcast_shapes
from hloforge.frontend.numpy._shape import expand_dims, squeeze
from hloforge.frontend.tracing import Tensor

_DIMS = r"\w+(?:,\w+)*"
_ARGUMENTS = rf"\((?:{_DIMS})?\)(?:,\((?:{_DIMS})?\))*"
_SIGNATURE = re.compile(rf"^{_ARGUMENTS}->{_ARGUMENTS}$")


def core_dims(signature: str) -> tuple:
    """(input core dims, output core dims) of a gufunc signature, each a list of tuples of names."""
    if not isinstance(signature, str):
        raise TypeError(f"hloforge.numpy.vectorize: signature must be a string such as '(n),(n)->()', "
                        f"got {signature!r}")
    text = signature.replace(" ", "")
    if not _SIGNATURE.match(text):
        raise ValueError(f"hloforge.numpy.vectorize: not a valid gufunc signature: {signature!r}")
    ins, outs = text.split("->")
    return _arguments(ins), _arguments(outs)


def _arguments(part: str) -> list:
    """``(m,n),(n)`` -> [("m", "n"), ("n",)]."""
    return [tuple(d for d in group.split(",") if d) for group in re.findall(r"\(([^)]*)\)", part)]


def _update_sizes(sizes: dict, shape, dims, where: str) -> None:
    core = shape[len(shape) - len(dims):] if dims else ()
    for name, n in zip(dims, core):
        if sizes.setdefault(name, n) != n:
            raise ValueError(f"hloforge.numpy.vectorize: inconsistent size for core dimension {name!r}: "
                             f"{n} vs {sizes[name]} ({where})")


def vectorize(pyfunc, *, otypes=None, doc=None, excluded=None, cache=False, signature=None):
    """numpy.vectorize (jax.numpy's: batched with hf.vmap, so ``pyfunc`` is traced once).

    Args:
      pyfunc: a function of arrays (of the core shapes ``signature`` gives, scalars without one).
      otypes: optional result dtypes (the first is applied to every result).
      doc: the docstring of the result (``pyfunc``'s by default).
      excluded: positions (ints) and keyword names (strs) passed through unbatched.
      cache: accepted, no effect (numpy's first-call cache).
      signature: a gufunc signature such as ``"(n),(n)->()"``.
    Returns:
      The vectorized function.
    Example:
      >>> inner = hnp.vectorize(lambda a, b: a @ b, signature="(n),(n)->()")
      >>> inner(xs, ys)   # xs: (batch, n), ys: (n,)
    """
    excluded = frozenset(excluded or ())
    if any(not isinstance(e, (int, str)) or isinstance(e, bool) for e in excluded):
        raise TypeError(f"hloforge.numpy.vectorize: excluded takes integer positions and keyword names, "
                        f"got excluded={set(excluded)!r}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"hloforge.numpy.vectorize: excluded={set(excluded)!r} contains negative positions")
    ins_core, outs_core = core_dims(signature) if signature is not None else (None, None)

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        dynamic = [i for i, a in enumerate(args) if i not in excluded and a is not None]
        unbatched = sorted(set(kwargs) - {e for e in excluded if isinstance(e, str)})
        if unbatched:
            raise TypeError(f"hloforge.numpy.vectorize: keyword arguments {unbatched} are not in excluded "
                            "(keyword arguments pass through unbatched only when excluded names them)")
        cores = ins_core if ins_core is not None else [()] * len(dynamic)
        if ins_core is not None and len(cores) != len(dynamic):
            raise TypeError(f"hloforge.numpy.vectorize: wrong number of positional arguments: expected "
                            f"{len(cores)}, got {len(dynamic)} (signature={signature!r})")
        arrays = [_as_array(args[i]) for i in dynamic]
        sizes: dict = {}
        for x, dims in zip(arrays, cores):
            if x.ndim < len(dims):
                raise ValueError(f"hloforge.numpy.vectorize: input with shape {x.shape} does not have enough "
                                 f"dimensions for all core dimensions {dims} (signature={signature!r})")
            _update_sizes(sizes, x.shape, dims, f"signature={signature!r}")
        loops = [x.shape[:x.ndim - len(dims)] for x, dims in zip(arrays, cores)]
        shape = broadcast_shapes(*loops, what="vectorize")

        def one_example(*values):
            call = list(args)
            for i, v in zip(dynamic, values):
                call[i] = v
            out = pyfunc(*call, **kwargs)
            if outs_core is not None:
                _check_outputs(out, outs_core, dict(sizes), signature)
            return out

        # (as jax.numpy: size-1 loop dims are squeezed and not mapped, so an argument broadcast along a
        # dim is passed unbatched there instead of being materialized)
        filled = [(1,) * (len(shape) - len(loop)) + loop for loop in loops]
        squeezed = [squeeze(x, tuple(d for d, n in enumerate(loop) if n == 1)) if 1 in loop else x
                    for x, loop in zip(arrays, loops)]
        from hloforge.frontend.batching.api import vmap  # (on first use: hloforge.numpy does not load AD)
        fn, kept_out = one_example, []
        for d in reversed(range(len(shape))):
            in_axes = tuple(None if f[d] == 1 else 0 for f in filled)
            if all(a is None for a in in_axes):
                kept_out.append(d)
            else:
                fn = vmap(fn, in_axes=in_axes)
        result = fn(*squeezed)
        if kept_out:
            result = tuple(expand_dims(r, tuple(sorted(kept_out))) for r in result) if isinstance(result, tuple) \
                else expand_dims(result, tuple(sorted(kept_out)))
        if otypes:
            dt = dtypes.canonical(np.dtype(otypes[0]))
            result = tuple(astype(r, dt) for r in result) if isinstance(result, tuple) else astype(result, dt)
        return result

    if doc is not None:
        wrapped.__doc__ = doc
    return eager.wrap(wrapped)  # (called on arrays outside a trace: compiled once per signature)


def _as_array(x):
    """numpy's rule: every argument becomes an array, so a Python 2.0 is float64 in "numpy" mode (float32 in
    "jax" mode), not a weak scalar that takes the other operand's dtype."""
    if isinstance(x, Tensor):
        return Tensor.of_spec(x.value, (x.shape, x.dtype), x.builder) if x.weak else x
    if dtypes.weak_type(x) is not None:
        return asarray(x, dtypes.canonicalize(np.asarray(x).dtype))
    return asarray(x)


def _check_outputs(out, outs_core, sizes, signature):
    results = out if isinstance(out, tuple) else (out,)
    if len(outs_core) > 1 and not isinstance(out, tuple):
        raise TypeError(f"hloforge.numpy.vectorize: the function must return a tuple of {len(outs_core)} results "
                        f"(signature={signature!r}), got {type(out).__name__}")
    if len(results) != len(outs_core):
        raise TypeError(f"hloforge.numpy.vectorize: wrong number of results: expected {len(outs_core)}, got "
                        f"{len(results)} (signature={signature!r})")
    for r, dims in zip(results, outs_core):
        shape = r.shape if isinstance(r, Tensor) else np.shape(r)
        if len(shape) != len(dims):
            raise ValueError(f"hloforge.numpy.vectorize: result shape {shape} does not match core dimensions "
                             f"{dims} (signature={signature!r})")
        _update_sizes(sizes, shape, dims, f"signature={signature!r}")

