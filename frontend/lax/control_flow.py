"""jax.lax control flow: cond, switch, while_loop, fori_loop, scan, map.

Bodies are Python functions over pytrees, traced once (``_trace.trace_body``). A while loop's
body and condition may use Tensors of the enclosing trace: those become extra loop operands
(carried unchanged), so the emitted ``stablehlo.while`` uses no value from outside it. Branches
of cond/switch use outside values directly (``stablehlo.if``/``case`` have no operands for them).
"""
from __future__ import annotations

import operator

import numpy as np
from jax import tree_util

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax._common import lax_operand
from hloforge.frontend.lax._trace import splice, trace_body
from hloforge.frontend.registry import Spec
from hloforge.frontend.tracing import Tensor, _type_str, as_tensor, current_builder

_BOOL = np.dtype(np.bool_)
_I32 = np.dtype(np.int32)


def _flatten(tree, what):
    leaves, treedef = tree_util.tree_flatten(tree)
    return [lax_operand(x, what) for x in leaves], treedef


def _paths(tree, prefix):
    return [prefix + tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(tree)[0]]


def _check_carry(what, in_tree, in_specs, out_tree, out_specs, names, input_name="input", output_name="output"):
    if in_tree != out_tree:
        raise TypeError(f"{what} output and input must have the same pytree structure, got {output_name} "
                        f"structure {out_tree} and {input_name} structure {in_tree}")
    for name, a, b in zip(names, in_specs, out_specs):
        if a != b:
            diff = "shapes" if a.shape != b.shape else "dtypes"
            raise TypeError(f"{what} output and input must have identical types, got\nthe {input_name} carry "
                            f"component {name} has type {_type_str(*a)} but the corresponding {output_name} "
                            f"carry component has type {_type_str(*b)}, so the {diff} do not match")


def _specs(tensors):
    return [Spec(t.shape, t.dtype) for t in tensors]


# ---------------------------------------------------------------- while_loop, fori_loop

def while_loop(cond_fun, body_fun, init_val):
    """jax.lax.while_loop: ``while cond_fun(val): val = body_fun(val)``; emits ``stablehlo.while``.

    Args:
      cond_fun: carry pytree -> 0-d bool Tensor.
      body_fun: carry pytree -> carry pytree of identical leaf types.
      init_val: the initial carry (a pytree of Tensors and scalars).
    Returns:
      The final carry.
    Example:
      >>> i, x = lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 2), (0, x))
    """
    for name, f in (("cond_fun", cond_fun), ("body_fun", body_fun)):
        if not callable(f):
            raise TypeError(f"while_loop: {name} must be callable, got {type(f).__name__}")
    carry, tree = _flatten(init_val, "while_loop init_val")
    specs = _specs(carry)
    names = _paths(tree_util.tree_unflatten(tree, carry), "init_val")
    body = trace_body(body_fun, specs, tree, "while_loop body_fun", hints=[s.dtype for s in specs])
    try:
        _check_carry("body_fun", tree, specs, body.out_tree, body.out_specs, names)
        cond = trace_body(cond_fun, specs, tree, "while_loop cond_fun")
        try:
            if len(cond.out_specs) != 1 or cond.out_specs[0] != Spec((), _BOOL):
                got = ", ".join(_type_str(*s) for s in cond.out_specs)
                raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) [{got}]")
            return tree_util.tree_unflatten(tree, _emit_while(carry, cond, body))
        finally:
            cond.discard()
    finally:
        body.discard()


def _emit_while(carry, cond, body):
    captures = list(dict.fromkeys(cond.captures + body.captures))
    b = current_builder("while_loop")
    extra = [b.tensor(v) for v in captures]
    n = len(carry)

    def cond_region(*args):
        return splice(cond, args[:n], captures, args[n:])[0]

    def body_region(*args):
        return (*splice(body, args[:n], captures, args[n:]), *args[n:])

    return ops.while_([*carry, *extra], cond_region, body_region)[:n]


def _index_dtype(*xs):
    ds = [x.dtype if isinstance(x, Tensor) else np.asarray(x).dtype for x in xs
          if isinstance(x, Tensor) or dtypes.weak_type(x) is None]
    if not ds:
        return _I32
    for d in ds:
        if not dtypes.is_integer(d):
            raise TypeError(f"fori_loop: lower and upper must be integers, got dtype {d}")
    return dtypes.result_type(*[np.zeros((), d) for d in ds])


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """jax.lax.fori_loop: ``for i in range(lower, upper): val = body_fun(i, val)``; emits
    ``stablehlo.while`` (the index is carried; Python ints give an int32 index, as in jax).

    Example:
      >>> total = lax.fori_loop(0, 10, lambda i, s: s + i, 0)
    """
    for v, name in ((lower, "lower"), (upper, "upper")):
        if not isinstance(v, Tensor):
            try:
                operator.index(v)
            except TypeError:
                raise TypeError(f"fori_loop: {name} must be an integer, got {v!r}") from None
    dtype = _index_dtype(lower, upper)
    lo, hi = as_tensor(lower, dtype if not isinstance(lower, Tensor) else None), \
        as_tensor(upper, dtype if not isinstance(upper, Tensor) else None)
    lo, hi = ops.convert(lo, dtype) if lo.dtype != dtype else lo, ops.convert(hi, dtype) if hi.dtype != dtype else hi
    if lo.shape or hi.shape:
        raise TypeError(f"fori_loop: lower and upper must be scalars, got shapes {lo.shape} and {hi.shape}")
    def body(c):
        i, val = c
        return ops.add(i, as_tensor(1, dtype)), body_fun(i, val)

    _, out = while_loop(lambda c: ops.compare(c[0], hi, "LT"), body, (lo, init_val))
    return out


# ---------------------------------------------------------------- scan, map

def _index_at(x, i, length):
    """x[i] along the leading dim, i a 0-d int32 Tensor."""
    zero = as_tensor(0, i.dtype)
    piece = ops.dynamic_slice(x, (i,) + (zero,) * (x.ndim - 1), (1,) + x.shape[1:])
    return ops.reshape(piece, x.shape[1:])


def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """jax.lax.scan: ``carry, y = f(carry, x)`` over the leading axis of ``xs``; the ys stacked.

    Emits one ``stablehlo.while``; ``unroll`` is accepted (XLA unrolls as it sees fit).

    Example:
      >>> total, partial = lax.scan(lambda c, x: (c + x, c), 0.0, xs)
    """
    if not callable(f):
        raise TypeError(f"scan: f must be callable, got {type(f).__name__}")
    if not isinstance(unroll, (bool, int, np.integer)):
        raise TypeError(f"scan: unroll must be an int or a bool, got {unroll!r}")
    xs_leaves, xs_tree = _flatten(xs, "scan xs")
    if any(not x.shape for x in xs_leaves):
        raise ValueError(f"scan got value with no leading axis to scan over: "
                         f"{', '.join(str(x) for x in xs_leaves if not x.shape)}")
    sizes = [x.shape[0] for x in xs_leaves]  # (one per leaf, in leaf order, as jax names them)
    if length is not None:
        length = operator.index(length)
        if any(n != length for n in sizes):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with leading axis "
                             f"sizes {sizes}.")
    elif not sizes:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    elif len(set(sizes)) > 1:
        raise ValueError(f"scan got values with different leading axis sizes: {', '.join(str(n) for n in sizes)}.")
    else:
        length = sizes[0]
    carry, carry_tree = _flatten(init, "scan init")
    carry_specs = _specs(carry)
    x_specs = [Spec(x.shape[1:], x.dtype) for x in xs_leaves]
    n_carry = len(carry)
    pair_tree = tree_util.tree_structure((tree_util.tree_unflatten(carry_tree, [0] * n_carry),
                                          tree_util.tree_unflatten(xs_tree, [0] * len(x_specs))))
    step = trace_body(lambda pair: f(*pair), carry_specs + x_specs, pair_tree, "scan f",
                      hints=[s.dtype for s in carry_specs])
    try:
        out = tree_util.tree_unflatten(step.out_tree, step.out_leaves)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"scan body output must be a pair (carry, y), got {out!r}")
        out_carry_tree, y_tree = tree_util.tree_structure(out[0]), tree_util.tree_structure(out[1])
        names = _paths(tree_util.tree_unflatten(carry_tree, carry), "carry")
        _check_carry("scan body function carry", carry_tree, carry_specs, out_carry_tree,
                     step.out_specs[:n_carry], names, "input", "output")
        y_specs = step.out_specs[n_carry:]
        ys0 = [ops.broadcast_in_dim(as_tensor(np.zeros((), s.dtype)), (length, *s.shape), ()) for s in y_specs]
        zero = as_tensor(0, _I32)

        def body(c):
            i, cs, ys = c
            pos = ops.subtract(as_tensor(length - 1, _I32), i) if reverse else i
            x_now = [_index_at(x, pos, length) for x in xs_leaves]
            outs = splice(step, [*cs, *x_now])
            new_c, y_now = outs[:n_carry], outs[n_carry:]
            ys = [ops.dynamic_update_slice(buf, ops.reshape(y, (1, *y.shape)), (pos,) + (zero,) * y.ndim)
                  for buf, y in zip(ys, y_now)]
            return ops.add(i, as_tensor(1, _I32)), list(new_c), ys

        if length == 0:
            return tree_util.tree_unflatten(carry_tree, carry), tree_util.tree_unflatten(y_tree, ys0)
        _, final, ys = while_loop(lambda c: ops.compare(c[0], as_tensor(length, _I32), "LT"), body,
                                  (zero, list(carry), ys0))
        return tree_util.tree_unflatten(carry_tree, final), tree_util.tree_unflatten(y_tree, ys)
    finally:
        step.discard()


def map(f, xs, *, batch_size=None):
    """jax.lax.map: ``f`` over the leading axis of ``xs`` (a scan without carry). With
    ``batch_size``, each loop iteration applies ``f`` to ``batch_size`` elements (unrolled: there
    is no vmap yet), and a remainder runs after the loop, as in jax."""
    if batch_size is None:
        _, ys = scan(lambda c, x: ((), f(x)), (), xs)
        return ys
    batch_size = operator.index(batch_size)
    if batch_size < 1:
        raise ValueError(f"map: batch_size must be a positive int, got {batch_size}")
    leaves, tree = _flatten(xs, "map xs")
    n = leaves[0].shape[0] if leaves and leaves[0].shape else 0
    full, rest = divmod(n, batch_size)
    y_tree = None

    def row(x, j):
        return ops.reshape(ops.slice(x, (j,) + (0,) * (x.ndim - 1), (j + 1,) + x.shape[1:]), x.shape[1:])

    def apply(rows):  # per leaf a (k, ...) Tensor -> per y leaf the (k, ...) stack of f on each row
        nonlocal y_tree
        outs = []
        for j in range(rows[0].shape[0]):
            leaves_j, y_tree = tree_util.tree_flatten(f(tree_util.tree_unflatten(tree, [row(r, j) for r in rows])))
            outs.append([lax_operand(v, "map f output") for v in leaves_j])
        return [ops.concatenate([ops.reshape(o[i], (1, *o[i].shape)) for o in outs], 0) for i in range(len(outs[0]))]

    parts = []
    if full:
        batched = [ops.reshape(ops.slice(x, (0,) * x.ndim, (full * batch_size,) + x.shape[1:]),
                               (full, batch_size) + x.shape[1:]) for x in leaves]
        ys = scan(lambda c, rows: ((), apply(list(rows))), (), batched)[1]
        parts.append([ops.reshape(y, (full * batch_size,) + y.shape[2:]) for y in ys])
    if rest:
        parts.append(apply([ops.slice(x, (full * batch_size,) + (0,) * (x.ndim - 1), x.shape) for x in leaves]))
    if not parts:
        raise ValueError("map: batch_size needs values with a nonempty leading axis")
    ys = parts[0] if len(parts) == 1 else [ops.concatenate([a, b], 0) for a, b in zip(*parts)]
    return tree_util.tree_unflatten(y_tree, ys)


# ---------------------------------------------------------------- cond, switch

def _scalar_index(x, what):
    t = as_tensor(x, np.int32 if dtypes.weak_type(x) is not None else None, what=what)
    if t.shape != ():
        raise TypeError(f"{what} must be a scalar, got a Tensor of shape {t.shape}")
    return t


def _jax_typed_outputs(fn, what):
    """``fn`` whose Python scalar outputs become int32/float32/complex64 Tensors (jax's weak types
    without x64), so ``lambda: 1.0`` and a float32 branch agree, as in jax."""
    def wrapped(*args):
        leaves, tree = tree_util.tree_flatten(fn(*args))
        return tree_util.tree_unflatten(tree, [lax_operand(x, f"{what} output {i}") if dtypes.weak_type(x) else x
                                               for i, x in enumerate(leaves)])
    return wrapped


def _branches(fns, operands, what):
    traced = []
    try:
        for i, fn in enumerate(fns):
            name = f"{what} branch {i}"
            traced.append(trace_body(_jax_typed_outputs(fn, name), [], None, name, args=operands))
        first = traced[0]
        for i, t in enumerate(traced[1:], 1):
            if t.out_tree != first.out_tree:
                raise TypeError(f"{what}: branch 0 and {i} outputs must have same type structure, got "
                                f"{first.out_tree} and {t.out_tree}.")
            for k, (a, b) in enumerate(zip(first.out_specs, t.out_specs)):
                if a != b:
                    raise TypeError(f"{what}: branch 0 and {i} outputs must have identical types, got output "
                                    f"{k} of type {_type_str(*a)} in branch 0 and {_type_str(*b)} in branch {i}")
    except BaseException:
        for t in traced:
            t.discard()
        raise
    return traced


def _emit_branches(traced, emit):
    try:
        result_types = list(traced[0].out_specs)
        outs = emit([lambda t=t: splice(t, []) for t in traced], result_types)
        return tree_util.tree_unflatten(traced[0].out_tree, outs)
    finally:
        for t in traced:
            t.discard()


def cond(pred, true_fun, false_fun, *operands, operand=None):
    """jax.lax.cond: ``true_fun(*operands) if pred else false_fun(*operands)``; emits
    ``stablehlo.if`` (the branches use outside Tensors directly).

    Example:
      >>> y = lax.cond(x.sum() > 0, lambda v: v * 2, lambda v: -v, x)
    """
    if operand is not None:
        operands = operands + (operand,)
    for name, f in (("true_fun", true_fun), ("false_fun", false_fun)):
        if not callable(f):
            raise TypeError(f"cond: {name} argument should be callable.")
    p = as_tensor(pred, what="cond pred")
    if p.shape != ():
        raise TypeError(f"Pred must be a scalar, got {p} of shape {p.shape}.")
    if p.dtype != _BOOL:
        if not (dtypes.is_integer(p.dtype) or dtypes.is_float(p.dtype)):
            raise TypeError(f"Pred type must be either boolean or number, got {p.dtype}.")
        p = ops.compare(p, as_tensor(0, p.dtype), "NE")
    traced = _branches([true_fun, false_fun], operands, "cond")
    return _emit_branches(traced, lambda bodies, types: ops.if_(p, bodies[0], bodies[1], types))


def switch(index, branches, *operands, operand=None):
    """jax.lax.switch: ``branches[clamp(index, 0, n - 1)](*operands)``; emits ``stablehlo.case``.

    Example:
      >>> y = lax.switch(i, [lambda v: v, lambda v: v * 2, jnp.sin], x)
    """
    if operand is not None:
        operands = operands + (operand,)
    branches = list(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    for i, f in enumerate(branches):
        if not callable(f):
            raise TypeError(f"switch: branch {i} argument should be callable.")
    i = _scalar_index(index, "switch index")
    if not dtypes.is_integer(i.dtype):
        raise TypeError(f"Index type must be an integer, got {i.dtype}.")
    if len(branches) == 1:
        return branches[0](*operands)
    i = ops.convert(i, _I32) if i.dtype != _I32 else i
    i = ops.clamp(as_tensor(0, _I32), i, as_tensor(len(branches) - 1, _I32))
    traced = _branches(branches, operands, "switch")
    return _emit_branches(traced, lambda bodies, types: ops.case(i, bodies, types))


__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map"]
