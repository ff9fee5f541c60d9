"""hf.grad, value_and_grad, vjp, jvp, jacfwd, jacrev, hessian (JAX's signatures).

Inside a trace (any argument leaf is a Tensor) the function is traced into the current block and
its derivative is emitted right after it, from the ops it emitted (core.tape_of_block). Called on
numpy or jax arrays, the same symbolic transformation is compiled with hf.jit (once per
argument signature for grad and friends) and run.
"""
from __future__ import annotations

import functools
import operator

import numpy as np
from jax import tree_util

from hloforge.frontend import dtypes
from hloforge.frontend import ops
from hloforge.frontend.ad import core
from hloforge.frontend.ad._util import differentiable, full, zeros_like
from hloforge.frontend.jit import jit
from hloforge.frontend.tracing import Tensor, as_tensor, current_builder


def _name(fn) -> str:
    return getattr(fn, "__name__", None) or type(fn).__name__


def _or_zeros(t, like):
    return zeros_like(like) if t is None else t


def _symbolic(*trees) -> bool:
    return any(isinstance(l, Tensor) for t in trees for l in tree_util.tree_leaves(t))


def _dual(symbolic, fn):
    """Run ``symbolic`` inline inside a trace, or compile it once per signature on arrays."""
    compiled = jit(symbolic)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if _symbolic(args, kwargs):
            return symbolic(*args, **kwargs)
        return compiled(*args, **kwargs)
    return call


def _block():
    b = current_builder("hloforge AD")
    return b.ip.block


def _trace_inline(fn, primals, what):
    """Trace ``fn(*primals)`` into the current block; returns (in leaves, in tree, outputs, tape).

    Each primal leaf is copied first (a no-op reshape) so that its uses inside ``fn`` are told
    apart from uses of the same value outside it, and from other arguments that are the same value.
    """
    leaves, tree = tree_util.tree_flatten(primals)
    xs = []
    for i, leaf in enumerate(leaves):
        t = as_tensor(leaf, what=f"{what}: argument leaf {i}")
        xs.append(ops.reshape(t, t.shape))
    block = _block()
    start = len(block.operations)
    out = fn(*tree_util.tree_unflatten(tree, xs))
    new_ops = list(block.operations)[start:]
    return xs, tree, out, core.tape_of_block(new_ops)


def _flat_outputs(out, what):
    leaves, tree = tree_util.tree_flatten(out)
    return [as_tensor(o, what=f"{what}: output leaf {i}") for i, o in enumerate(leaves)], tree


def _split_aux(out, has_aux, what):
    if not has_aux:
        return out, None
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(f"{what}: with has_aux=True the function must return a pair (output, aux), got {out!r}")
    return out[0], out[1]


def _as_cotangent(c, o, what, i):
    c = as_tensor(c, o.dtype if not isinstance(c, Tensor) else None, what=f"{what}: cotangent leaf {i}")
    if c.shape != o.shape or c.dtype != o.dtype:
        raise ValueError(f"{what}: cotangent leaf {i} is {c}, but output leaf {i} is {o}")
    return c


def _vjp_symbolic(fn, primals, has_aux, what):
    xs, in_tree, out, tape = _trace_inline(fn, primals, what)
    out, aux = _split_aux(out, has_aux, what)
    outs, out_tree = _flat_outputs(out, what)
    active = core.active_values(tape, xs)

    def vjp_fn(cotangent):
        c_leaves, c_tree = tree_util.tree_flatten(cotangent)
        if c_tree != out_tree:
            raise ValueError(f"{what}: the cotangent's structure {c_tree} differs from the output's {out_tree}")
        seeds = {}
        for i, (o, c) in enumerate(zip(outs, c_leaves)):
            c = _as_cotangent(c, o, what, i)
            if differentiable(o.dtype):
                seeds[o.value] = c if o.value not in seeds else ops.add(seeds[o.value], c)
        cts = core.backward(tape, seeds, active)
        grads = [_or_zeros(cts.get(x.value), x) for x in xs]
        return tree_util.tree_unflatten(in_tree, grads)

    return tree_util.tree_unflatten(out_tree, outs), vjp_fn, aux


def vjp(fn, *primals, has_aux=False):
    """``(fn(*primals), vjp_fn)`` where ``vjp_fn(cotangent)`` returns the cotangents of the primals
    as a tuple (JAX's jax.vjp). With ``has_aux``: ``(out, vjp_fn, aux)``.

    Example:
      >>> y, f_vjp = hf.vjp(hnp.sin, x); (dx,) = f_vjp(np.ones_like(y))
    """
    what = f"vjp({_name(fn)})"
    if _symbolic(primals):
        out, pullback, aux = _vjp_symbolic(fn, primals, has_aux, what)
        vjp_fn = lambda ct: tuple(pullback(ct))  # noqa: E731
        return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)
    forward = jit(lambda *p: fn(*p))
    result = forward(*primals)
    out = result[0] if has_aux else result
    backward = jit(lambda p, ct: tuple(_vjp_symbolic(fn, p, has_aux, what)[1](ct)))
    vjp_fn = lambda ct: backward(primals, ct)  # noqa: E731
    return (out, vjp_fn, result[1]) if has_aux else (out, vjp_fn)


def _argnums_spec(argnums, what):
    """``argnums`` as an int or a tuple of ints (jax's types), checked when the transformation is made."""
    bad = TypeError(f"{what}: argnums must be an int or a tuple of ints, got {argnums!r} "
                    f"(of type {type(argnums).__name__})")
    if isinstance(argnums, (bool, np.bool_)):
        raise bad
    if isinstance(argnums, (tuple, list)):
        if any(isinstance(a, (bool, np.bool_)) for a in argnums):
            raise bad
        try:
            nums = tuple(operator.index(a) for a in argnums)
        except TypeError:
            raise bad from None
        if not nums:
            raise ValueError(f"{what}: argnums {argnums!r} names no argument; give an int or a nonempty tuple of ints")
        return nums
    try:
        return operator.index(argnums)
    except TypeError:
        raise bad from None


def _argnums(spec, args, what):
    """(the argnums as a tuple, their positions in ``args``), checked against the call's arguments."""
    nums = (spec,) if isinstance(spec, int) else spec
    for a in nums:
        if not -len(args) <= a < len(args):
            raise ValueError(f"{what}: argnums {spec!r} out of range for {len(args)} positional argument(s): "
                             f"differentiating with respect to argnums={a} requires at least "
                             f"{a + 1 if a >= 0 else -a} positional arguments")
    positions = [a % len(args) for a in nums]
    if len(set(positions)) != len(positions):
        raise ValueError(f"{what}: argnums {spec!r} names argument(s) more than once for {len(args)} positional "
                         "argument(s)")
    return nums, positions


def _kind(what) -> str:
    return what.split("(")[0]


def _check_inputs(dargs, what, kind="float or complex", holomorphic=False):
    for i, leaf in enumerate(tree_util.tree_leaves(dargs)):
        dtype = leaf.dtype if hasattr(leaf, "dtype") else np.asarray(leaf).dtype
        if isinstance(leaf, (int, bool)) or not dtypes.is_inexact(dtype):
            raise TypeError(f"{what}: differentiated argument leaf {i} has dtype {np.dtype(dtype) if not isinstance(leaf, (int, bool)) else type(leaf).__name__}; "
                            f"{_kind(what)} needs {kind} inputs (value {leaf!r})")
        dtype = np.dtype(dtype)
        if holomorphic and not dtypes.is_complex(dtype):
            raise TypeError(f"{what}: {_kind(what)} with holomorphic=True requires inputs with complex dtype, but "
                            f"got {dtype.name} (argument leaf {i}).")
        if _kind(what) == "jacfwd" and not holomorphic and dtypes.is_complex(dtype):
            raise TypeError(f"{what}: jacfwd requires real-valued inputs (input dtype that is a sub-dtype of "
                            f"np.floating), but got {dtype.name} (argument leaf {i}). For holomorphic "
                            "differentiation, pass holomorphic=True. For differentiation of non-holomorphic "
                            "functions involving complex inputs, use hf.jvp directly.")


def _check_outputs(outs, what, holomorphic, reverse=True):
    """jax's rules for the output dtypes of grad/jacrev (``reverse``) and jacfwd."""
    for i, o in enumerate(outs):
        dtype = o.dtype
        if holomorphic:
            if not dtypes.is_complex(dtype):
                raise TypeError(f"{what}: {_kind(what)} with holomorphic=True requires outputs with complex dtype, "
                                f"but got {dtype.name} (output leaf {i}).")
        elif not reverse:
            continue
        elif dtypes.is_complex(dtype):
            raise TypeError(f"{what}: {_kind(what)} requires real-valued outputs (output dtype that is a sub-dtype "
                            f"of np.floating), but got {dtype.name} (output leaf {i}). For holomorphic "
                            "differentiation, pass holomorphic=True. For differentiation of non-holomorphic "
                            "functions involving complex outputs, use hf.vjp directly.")
        elif not dtypes.is_float(dtype):
            raise TypeError(f"{what}: {_kind(what)} requires real-valued outputs (output dtype that is a sub-dtype "
                            f"of np.floating), but got {dtype.name} (output leaf {i}). For differentiation of "
                            "functions with integer outputs, use hf.vjp directly.")


def _partial(fn, args, positions, kwargs):
    def f(*dargs):
        full_args = list(args)
        for p, d in zip(positions, dargs):
            full_args[p] = d
        return fn(*full_args, **kwargs)
    return f


def value_and_grad(fn, argnums=0, has_aux=False, holomorphic=False):
    """``fn``'s value and its gradient w.r.t. the ``argnums`` positional arguments (jax.value_and_grad).

    ``fn`` must return a real 0-d float (and aux with ``has_aux``); with ``holomorphic=True`` a
    complex 0-d output of complex inputs, whose gradient is the complex derivative f'(z), as in jax.
    Gradients of complex inputs of a real ``fn`` follow JAX: conj(df/dz).
    Example:
      >>> loss, g = hf.value_and_grad(loss_fn)(params, x, y)
    """
    what = f"grad({_name(fn)})"
    spec = _argnums_spec(argnums, what)

    def symbolic(*args, **kwargs):
        nums, positions = _argnums(spec, args, what)
        dargs = tuple(args[p] for p in positions)
        _check_inputs(dargs, what, holomorphic=holomorphic)
        out, pullback, aux = _vjp_symbolic(_partial(fn, args, positions, kwargs), dargs, has_aux, what)
        if not isinstance(out, Tensor) or out.shape != ():
            raise TypeError(f"{what}: the function must return a real 0-d float scalar, got {out!r}"
                            + ("" if isinstance(out, Tensor) else " (use hf.vjp or hf.jacrev for other outputs)"))
        _check_outputs([out], what, holomorphic)
        grads = pullback(full(1, (), out.dtype))
        g = grads[0] if isinstance(spec, int) else tuple(grads)
        return ((out, aux), g) if has_aux else (out, g)

    return _dual(symbolic, fn)


def grad(fn, argnums=0, has_aux=False, holomorphic=False):
    """The gradient of a real scalar ``fn`` w.r.t. the ``argnums`` positional arguments (jax.grad).

    Composes with hf.jit and with itself (``hf.grad(hf.grad(f))``).
    Example:
      >>> dfdx = hf.grad(lambda x: hnp.sum(hnp.sin(x)))(np.ones(3, np.float32))
    """
    vg = value_and_grad(fn, argnums, has_aux, holomorphic)

    @functools.wraps(fn)
    def g(*args, **kwargs):
        (value, aux), grads = vg(*args, **kwargs) if has_aux else ((None, None), vg(*args, **kwargs)[1])
        return (grads, aux) if has_aux else grads
    return g


def _jvp_symbolic(fn, primals, tangents, what, has_aux=False):
    xs, in_tree, out, tape = _trace_inline(fn, primals, what)
    out, aux = _split_aux(out, has_aux, what)
    t_leaves, t_tree = tree_util.tree_flatten(tangents)
    if t_tree != in_tree:
        raise ValueError(f"{what}: tangents structure {t_tree} differs from primals structure {in_tree}")
    seeds = {}
    for i, (x, t) in enumerate(zip(xs, t_leaves)):
        t = as_tensor(t, x.dtype if not isinstance(t, Tensor) else None, what=f"{what}: tangent leaf {i}")
        if t.shape != x.shape or t.dtype != x.dtype:
            raise ValueError(f"{what}: tangent leaf {i} is {t}, but primal leaf {i} is {x}")
        if differentiable(x.dtype):
            seeds[x.value] = t
    tans = core.forward(tape, seeds)
    outs, out_tree = _flat_outputs(out, what)
    out_t = [_or_zeros(tans.get(o.value), o) for o in outs]
    result = (tree_util.tree_unflatten(out_tree, outs), tree_util.tree_unflatten(out_tree, out_t))
    return result + (aux,) if has_aux else result


def jvp(fn, primals, tangents, has_aux=False):
    """``(fn(*primals), J tangents)`` (jax.jvp): ``primals`` and ``tangents`` are tuples of one structure.

    Example:
      >>> y, dy = hf.jvp(hnp.sin, (x,), (np.ones_like(x),))
    """
    what = f"jvp({_name(fn)})"
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(f"{what}: primals and tangents must be tuples, got {type(primals).__name__} and "
                        f"{type(tangents).__name__}")
    if _symbolic(primals, tangents):
        return _jvp_symbolic(fn, tuple(primals), tuple(tangents), what, has_aux)
    return jit(lambda p, t: _jvp_symbolic(fn, p, t, what, has_aux))(tuple(primals), tuple(tangents))


def _stack_rows(rows, out_shape, in_shape):
    """Rows (one per output element, each of in_shape) -> a Tensor of out_shape + in_shape."""
    if not rows:
        return full(0, tuple(out_shape) + tuple(in_shape), np.float32)
    return ops.reshape(_stacked(rows, 0), tuple(out_shape) + tuple(in_shape))


def _stacked(parts, axis: int):
    """Tensors of one shape and dtype stacked along a new ``axis`` (0, or -1 for the last)."""
    at = 0 if axis == 0 else parts[0].ndim
    return ops.concatenate([ops.reshape(p, p.shape[:at] + (1,) + p.shape[at:]) for p in parts], at)


def jacrev(fn, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian by reverse mode, one vjp per output element (jax.jacrev): for output leaf
    shape S and input leaf shape T, a leaf of shape S + T. Outputs must be real floats, or, with
    ``holomorphic=True``, complex (of complex inputs: the Jacobian is then df/dz), as in jax."""
    what = f"jacrev({_name(fn)})"
    spec = _argnums_spec(argnums, what)

    def symbolic(*args, **kwargs):
        nums, positions = _argnums(spec, args, what)
        dargs = tuple(args[p] for p in positions)
        _check_inputs(dargs, what, holomorphic=holomorphic)
        out, pullback, aux = _vjp_symbolic(_partial(fn, args, positions, kwargs), dargs, has_aux, what)
        outs, out_tree = tree_util.tree_flatten(out)
        _check_outputs(outs, what, holomorphic)
        in_leaves, in_tree = tree_util.tree_flatten(dargs)
        per_out = []
        for i, o in enumerate(outs):
            rows = [[] for _ in in_leaves]
            for j in range(o.size):
                basis = np.zeros(o.size, o.dtype)
                basis[j] = 1
                ct = [ops.constant(basis.reshape(o.shape)) if k == i else zeros_like(q) for k, q in enumerate(outs)]
                for k, g in enumerate(tree_util.tree_leaves(pullback(tree_util.tree_unflatten(out_tree, ct)))):
                    rows[k].append(g)
            jac = [_stack_rows(r, o.shape, x.shape) if r else full(0, o.shape + x.shape, x.dtype)
                   for r, x in zip(rows, in_leaves)]
            j_tree = tree_util.tree_unflatten(in_tree, jac)
            per_out.append(j_tree[0] if isinstance(spec, int) else j_tree)
        result = tree_util.tree_unflatten(out_tree, per_out)
        return (result, aux) if has_aux else result

    return _dual(symbolic, fn)


def jacfwd(fn, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian by forward mode, one jvp per input element (jax.jacfwd); same layout as jacrev.
    Inputs must be real floats, or, with ``holomorphic=True``, complex (as must the outputs)."""
    what = f"jacfwd({_name(fn)})"
    spec = _argnums_spec(argnums, what)

    def symbolic(*args, **kwargs):
        nums, positions = _argnums(spec, args, what)
        dargs = tuple(args[p] for p in positions)
        _check_inputs(dargs, what, holomorphic=holomorphic)
        in_leaves, in_tree = tree_util.tree_flatten(dargs)
        xs, _, out, tape = _trace_inline(_partial(fn, args, positions, kwargs), dargs, what)
        out, aux = _split_aux(out, has_aux, what)
        outs, out_tree = _flat_outputs(out, what)
        _check_outputs(outs, what, holomorphic, reverse=False)
        cols = [[[] for _ in xs] for _ in outs]  # [out][in] -> list of tangents per input element
        for k, x in enumerate(xs):
            for j in range(x.size):
                basis = np.zeros(x.size, x.dtype)
                basis[j] = 1
                tans = core.forward(tape, {x.value: ops.constant(basis.reshape(x.shape))})
                for i, o in enumerate(outs):
                    cols[i][k].append(_or_zeros(tans.get(o.value), o))
        per_out = []
        for i, o in enumerate(outs):
            jac = []
            for k, x in enumerate(xs):
                if not cols[i][k]:
                    jac.append(full(0, o.shape + x.shape, o.dtype))
                    continue
                stacked = _stacked(cols[i][k], -1)  # o.shape + (x.size,)
                jac.append(ops.reshape(stacked, o.shape + x.shape))
            j_tree = tree_util.tree_unflatten(in_tree, jac)
            per_out.append(j_tree[0] if isinstance(spec, int) else j_tree)
        result = tree_util.tree_unflatten(out_tree, per_out)
        return (result, aux) if has_aux else result

    return _dual(symbolic, fn)


def hessian(fn, argnums=0, has_aux=False, holomorphic=False):
    """``jacfwd(jacrev(fn))`` (jax.hessian)."""
    return jacfwd(jacrev(fn, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)
