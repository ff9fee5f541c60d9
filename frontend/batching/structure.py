"""Batching rules of ``frontend/ops/structure.py``: custom_call, optimization_barrier, map, composite.

- custom_call: a call that carries ``mhlo.frontend_attributes.num_batch_dims`` (the LAPACK and
  cuSOLVER calls of hloforge.lax.linalg, as jax emits them) loops over leading batch dimensions
  itself: the batch is moved first on every operand (unbatched ones broadcast) and the call is
  rebuilt with one more batch dimension (its layouts gain a most-major dimension). Any other
  target is opaque: it is called once per example inside a ``stablehlo.while`` over the batch,
  each result written with ``dynamic_update_slice`` (the loop vmap stands for, so a target with
  side effects runs once per example, as in the loop).
- optimization_barrier: the batched values through one barrier, their dimensions unchanged.
- map: the same scalar body over operands at one batch dimension (one more mapped dimension).
- composite: the decomposition is batched (traced over per-example placeholders, then swept).
  A ``hloforge.linalg.<fn>`` composite stays that composite, over operands batched at 0 (its
  functions take leading batch dimensions; its derivative rules read the composite), and so does
  a ``hloforge.lax.cumprod``/``cumlogsumexp`` scan, its ``axis`` one further; any other
  composite is replaced by its batched decomposition, since its name may promise a meaning at the
  per-example types that a backend matching the name would apply.
"""
from __future__ import annotations

import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.batching._regions import Tidy, batch_traced
from hloforge.frontend.batching._util import bdim_at, common_dim, to_front
from hloforge.frontend.batching.core import WHAT
from hloforge.frontend.context import ir
from hloforge.frontend.lax.ordering import SCAN_COMPOSITE
from hloforge.frontend.ops.structure import sharding_parts, sharding_text
from hloforge.frontend.registry import def_rule
from hloforge.frontend.tracing import current_builder

FRONTEND = "mhlo.frontend_attributes"
SHARDING_RULE = "sdy.sharding_rule"
LINALG = "hloforge.linalg."


# ---------------------------------------------------------------- custom_call

@def_rule("batch", "stablehlo.custom_call")
def _custom_call_batch(size, ins, dims, *, call_target_name, result_specs, has_side_effect, backend_config,
                       api_version, extra_attributes):
    """Pattern: call[n batch dims](x[b]) -> call[n + 1 batch dims](x with b first)[0]; an opaque
    call -> while i < size: out[i] = call(x[i]), results at 0."""
    params = dict(call_target_name=call_target_name, has_side_effect=has_side_effect,
                  backend_config=backend_config, api_version=api_version)
    extra = dict(extra_attributes)
    batch_dims = _num_batch_dims(extra.get(FRONTEND))
    if batch_dims is None:
        return _per_example_loop(size, ins, dims, result_specs, params, extra)
    specs = [((size, *s), d) for s, d in result_specs]
    # (jax's lowerings carry a Shardy rule that maps each per-example dimension: it does not fit
    # the batched ranks and the verifier refuses it; the call goes without one, as hloforge's own do)
    extra.pop(SHARDING_RULE, None)
    with current_builder(WHAT).ctx:
        extra[FRONTEND] = _with_batch_dims(extra[FRONTEND], batch_dims + 1)
        for key in ("operand_layouts", "result_layouts"):
            if key in extra:
                extra[key] = _outer_layouts(extra[key])
    outs = ops.custom_call(to_front(ins, dims, size), result_specs=specs, extra_attributes=extra, **params)
    return list(outs), [0] * len(outs)


def _num_batch_dims(text):
    if text is None:
        return None
    with current_builder(WHAT).ctx:
        attrs = ir.DictAttr(ir.Attribute.parse(text))
        if "num_batch_dims" not in attrs:
            return None
        value = attrs["num_batch_dims"]
        return int(ir.StringAttr(value).value) if isinstance(value, ir.StringAttr) else None


def _with_batch_dims(text, n) -> str:
    attrs = ir.DictAttr(ir.Attribute.parse(text))
    entries = {attrs[i].name: attrs[i].attr for i in range(len(attrs))}
    entries["num_batch_dims"] = ir.StringAttr.get(str(n))
    return str(ir.DictAttr.get(entries))


def _outer_layouts(text) -> str:
    """Each minor-to-major layout with one more, most-major, leading dimension."""
    index = ir.IndexType.get()
    out = []
    for layout in ir.ArrayAttr(ir.Attribute.parse(text)):
        order = [int(v) + 1 for v in ir.DenseIntElementsAttr(layout)] + [0]
        out.append(ir.DenseIntElementsAttr.get(np.asarray(order, np.int64), type=index))
    return str(ir.ArrayAttr.get(out))


def _per_example_loop(size, ins, dims, result_specs, params, extra):
    """A stablehlo.while over the examples: call the target on example i, write its results at i."""
    i32 = np.dtype(np.int32)
    accs = [ops.broadcast_in_dim(ops.constant(np.zeros((), d)), (size, *s), ()) for s, d in result_specs]
    if size == 0:  # (no example to call the target on, nor to slice out of the batch)
        return accs, [0] * len(accs)
    n = len(ins)

    def cond(i, *rest):
        return ops.compare(i, ops.constant(np.asarray(size, i32)), "LT")

    def body(i, *rest):
        xs, outs = rest[:n], rest[n:]
        examples = [x if d is None else _example_at(x, d, i) for x, d in zip(xs, dims)]
        got = ops.custom_call(examples, result_specs=result_specs, extra_attributes=extra, **params)
        zero = ops.constant(np.zeros((), i32))
        new = [ops.dynamic_update_slice(acc, ops.reshape(r, (1, *r.shape)), [i] + [zero] * r.ndim)
               for acc, r in zip(outs, got)]
        return [ops.add(i, ops.constant(np.ones((), i32))), *xs, *new]

    loop = ops.while_([ops.constant(np.zeros((), i32)), *ins, *accs], cond, body)
    outs = list(loop[1 + n:])
    return outs, [0] * len(outs)


def _example_at(x, d, i):
    """Example ``i`` (a 0-d int32 Tensor) of ``x`` along ``d``."""
    zero = ops.constant(np.zeros((), np.int32))
    starts = [i if k == d else zero for k in range(x.ndim)]
    sizes = [1 if k == d else n for k, n in enumerate(x.shape)]
    return ops.reshape(ops.dynamic_slice(x, starts, sizes), x.shape[:d] + x.shape[d + 1:])


# ---------------------------------------------------------------- optimization_barrier

@def_rule("batch", "stablehlo.optimization_barrier")
def _optimization_barrier_batch(size, ins, dims):
    """Pattern: barrier(x[b], y) -> barrier(x, y), each value's dimension unchanged."""
    return list(ops.optimization_barrier(list(ins))), list(dims)


# ---------------------------------------------------------------- sharding_constraint

@def_rule("batch", "sdy.sharding_constraint")
def _sharding_constraint_batch(size, ins, dims, *, sharding, mesh):
    """Pattern: sharding_constraint(x[b at d], [s...]) -> sharding_constraint(x, [s[:d], {}, s[d:]])[b at d]:
    the batch dimension stays where it is, unsharded."""
    (x,), (d,) = ins, dims
    if d is None:
        return [ops.sharding_constraint(x, sharding, mesh)], [None]
    name, shardings, rest = sharding_parts(sharding)
    return [ops.sharding_constraint(x, sharding_text(name, shardings[:d] + ["{}"] + shardings[d:], rest), mesh)], [d]


# ---------------------------------------------------------------- map

@def_rule("batch", "stablehlo.map")
def _map_batch(size, ins, dims, *, body, dimensions, dtype):
    """Pattern: map(f, x[b], y) -> map(f, x, broadcast(y))[b]: the same scalar body over one more dim."""
    ins, d = common_dim(ins, dims, size)
    return [ops.map(ins, body, dtype=dtype)], [d]


# ---------------------------------------------------------------- composite

@def_rule("batch", "stablehlo.composite")
def _composite_batch(size, ins, dims, *, name, decomposition, attributes, version):
    """Pattern: composite "hloforge.linalg.f"(x[b]) -> composite "hloforge.linalg.f"(x with b
    first) over the batched decomposition, results at 0; other composites -> their batched
    decomposition, inline."""
    scan = name.startswith(SCAN_COMPOSITE) and "axis" in (attributes or {})
    if not (name.startswith(LINALG) or scan):
        tidy = Tidy()
        results = batch_traced(decomposition, ins, dims, size)
        tidy([t for t, _ in results])
        return [t for t, _ in results], [d for _, d in results]
    ins = to_front(ins, dims, size)

    def batched(*args):
        tidy = Tidy()
        outs = [bdim_at(t, d, size, 0) for t, d in batch_traced(decomposition, args, [0] * len(args), size)]
        tidy(outs)
        return outs

    if scan:  # (the scanned axis moves behind the batch dimension)
        attributes = {**attributes, "axis": attributes["axis"] + 1}
    outs = ops.composite(ins, name, batched, attributes=attributes, version=version)
    return list(outs), [0] * len(outs)
