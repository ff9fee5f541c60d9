"""The batching sweep: each op of a tape (``frontend/ad/core``: ops in program order with their
operand and result Tensors) re-emitted over batched operands by its ``batch`` rule.

``env`` maps an ``ir.Value`` of the per-example program to ``(Tensor, batch dimension)``. A value
that is not in it is unbatched and used as it is (it depends on no batched input: a closed-over
value, a constant, or an op whose operands are all unbatched). Ops whose operands are all
unbatched are left as they are.
"""
from __future__ import annotations

from hloforge.frontend.ad.core import Entry, _located
from hloforge.frontend.context import has_uses
from hloforge.frontend.batching._util import broadcast_batch
from hloforge.frontend.registry import Spec, TupleSpec, rule_of
from hloforge.frontend.tracing import Tensor, current_builder

WHAT = "hloforge.vmap"


def batch_tape(tape, env: dict, size: int) -> dict:
    """Batch every op of ``tape`` that reads a batched value; returns ``env`` extended."""
    for e in tape:
        if e.sub is not None:  # an inlined call: its copy's ops are on the sub-tape
            sub_outs, sub_tape = e.sub
            batch_tape(sub_tape, env, size)
            for o, s in zip(e.outs, sub_outs):
                if s.value in env:
                    env[o.value] = env[s.value]
            continue
        ins, dims = _operands(e, env, size)
        if all(d is None for d in dims):
            continue
        outs, out_dims = batch_entry(e, size, ins, dims)
        for o, t, d in zip(e.outs, outs, out_dims):
            env[o.value] = (t, d)
    return env


def _operands(e: Entry, env: dict, size: int) -> tuple:
    """The batched operands of ``e`` and their batch dimensions (None: unbatched, used as it is).
    A value a rule computed anew without a batch dimension (a named-axis reduction's result, the
    same for every example) is broadcast along the batch for the ops that read it (tuples, which
    cannot be, are read as the per-example value)."""
    ins, dims = [], []
    for x in e.ins:
        t, d = env.get(x.value, (x, None))
        if d is None and isinstance(t, Tensor) and t.value != x.value:
            t, d = broadcast_batch(t, size, 0), 0
        ins.append(t)
        dims.append(d)
    return ins, dims


# rule-object type -> batch rule(rule, entry, size, ins, dims), for custom calls whose rule objects
# live below this package (hf.custom_vjp / custom_jvp: batching/custom.py)
CUSTOM_BATCH: dict = {}


def batch_entry(e: Entry, size: int, ins, dims) -> tuple:
    """The batch rule of one tape entry, its results checked against the per-example results."""
    by_type = CUSTOM_BATCH.get(type(e.info))
    custom = getattr(e.info, "custom_batch", None)
    if by_type is not None:
        outs, out_dims = by_type(e.info, e, size, ins, dims)
    elif custom is not None:
        outs, out_dims = custom(e, size, ins, dims)
    else:
        rule = rule_of(e.name, "batch", WHAT)
        with _located(e.op):
            outs, out_dims = rule(size, ins, dims, **e.params)
    return _checked(e, list(outs), list(out_dims), size)


def _checked(e, outs, out_dims, size) -> tuple:
    if len(outs) != len(e.outs) or len(out_dims) != len(e.outs):
        raise RuntimeError(f"{WHAT}: the batch rule of {e.name} returned {len(outs)} values and "
                           f"{len(out_dims)} dimensions for {len(e.outs)} results")
    for i, (o, d, x) in enumerate(zip(outs, out_dims, e.outs)):
        if not _fits(Spec.of(o), d, Spec.of(x), size):
            raise RuntimeError(f"{WHAT}: the batch rule of {e.name} returned {o} (batch dimension {d}) for "
                               f"result {i} of type {x} and batch size {size}")
    return outs, out_dims


def _fits(got, d, want, size) -> bool:
    """``got`` is ``want`` with ``size`` inserted at dimension ``d``. A tuple's ``d`` is None
    (no element batched) or a tuple of its elements' dimensions (``frontend/batching/tuples``)."""
    if d is None:
        return got == want
    if isinstance(d, tuple):
        return (isinstance(got, TupleSpec) and isinstance(want, TupleSpec)
                and len(d) == len(got.elements) == len(want.elements)
                and all(_fits(Spec.of(g), e, Spec.of(w), size) for g, e, w in zip(got.elements, d, want.elements)))
    return (isinstance(got, Spec) and isinstance(want, Spec) and 0 <= d < len(got.shape) and got.shape[d] == size
            and got.shape[:d] + got.shape[d + 1:] == want.shape and got.dtype == want.dtype)


# an op with a side effect (hf.debug.print's call): kept, unless the batch rule that replaced it
# dropped the attribute (frontend/callbacks.py)
EFFECT = "hloforge.effect"


def erase_dead(operations) -> None:
    """Erase the ops of ``operations`` (in program order) whose results nothing uses, last first:
    the per-example copy a vmap traced to learn the program (ops marked ``EFFECT`` stay). An erased
    constant leaves the builder's reused splats (``tracing.splat``), so no later rule is handed it."""
    splats = current_builder(WHAT).transform_state.get("splat") or {}
    reused = {t.value: key for key, t in splats.items()}
    for op in reversed(list(operations)):
        op = op.operation
        if op.name in ("func.return", "stablehlo.return"):
            continue
        if not any(has_uses(r) for r in op.results) and EFFECT not in op.attributes:
            for r in op.results:
                if r in reused:
                    del splats[reused.pop(r)]
            op.erase()
