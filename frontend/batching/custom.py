"""Batch rules of hf.custom_vjp and hf.custom_jvp calls (jax's custom_vjp/custom_jvp batching).

The batching sweep asks ``CUSTOM_BATCH`` (batching/core.py) for the rule of a custom call's rule
object by its type; rule objects of the layers above (checkpoint, from_jax, named-axis
collectives) carry a ``custom_batch`` method instead. Kept here, not in frontend/ad/custom.py,
so that the AD package does not import the batching package (which builds on ad.core).
"""
from __future__ import annotations

from jax import tree_util

from hloforge.frontend import ops
from hloforge.frontend.ad import core
from hloforge.frontend.ad._util import zeros_like
from hloforge.frontend.ad.custom import _Call, _JvpRule, _VjpRule, custom_jvp, custom_vjp, emit_rule_call
from hloforge.frontend.batching._util import moveaxis
from hloforge.frontend.batching.api import vmap
from hloforge.frontend.batching.core import CUSTOM_BATCH


def batch_custom_vjp(rule: _VjpRule, entry, size, ins, dims):
    """hf.vmap of the call: a call of a new custom_vjp function whose fwd is fwd batched and whose
    bwd is bwd batched, so reverse mode of the batched call still uses the rule. Outputs and
    residuals get the batch dimension first; the cotangents of unbatched arguments are summed over
    the batch."""
    fwd = vmap(lambda *flat: tuple(rule.forward_flat(list(flat))), in_axes=tuple(dims))

    def bwd_example(res, ct):
        grads = rule.custom_vjp(_Call(entry.ins, list(ct) + list(res)), list(ct))
        return [zeros_like(x) if g is None else g for g, x in zip(grads, entry.ins)]

    def batched_fwd(*flat):
        out = fwd(*flat)
        return tuple(out[:rule.n_out]), tuple(out[rule.n_out:])

    def batched_bwd(res, ct):
        grads = vmap(bwd_example)(list(res), list(ct))
        return tuple(ops.reduce(g, 0, (0,), "add") if d is None else moveaxis(g, 0, d)
                     for g, d in zip(grads, dims))

    cv = custom_vjp(lambda *flat: batched_fwd(*flat)[0])
    cv.__name__ = f"vmap({rule.cv.__name__})"
    cv.defvjp(batched_fwd, batched_bwd)
    key = core.custom_key("custom_vjp", cv.__name__)
    batched = _VjpRule(cv, tree_util.tree_structure(tuple(ins)), f"custom_vjp({cv.__name__})", n_args=len(ins))
    outs = emit_rule_call(batched.forward_flat, list(ins), key)
    core.CUSTOM_RULES[key] = batched
    return outs, [0] * len(outs)


def batch_custom_jvp(rule: _JvpRule, entry, size, ins, dims):
    """hf.vmap of the call: a call of a new custom_jvp function whose primal is the function
    batched and whose jvp rule is the rule batched (primals and tangents at the arguments' batch
    dimensions), so differentiating the batched call still uses the rule. Outputs get the batch
    dimension first."""
    dims = tuple(dims)
    primal = vmap(lambda *flat: tuple(rule.primal_flat(list(flat))), in_axes=dims)

    def jvp_example(primals, tangents):
        p_out = rule.call(list(primals))
        t_out = rule._tangent_out(list(primals), list(tangents), p_out)
        return tuple(p_out), tuple(zeros_like(p) if t is None else t for t, p in zip(t_out, p_out))

    cj = custom_jvp(primal)
    cj.__name__ = f"vmap({rule.cj.__name__})"
    cj.defjvp(lambda primals, tangents: vmap(jvp_example, in_axes=(dims, dims))(tuple(primals), tuple(tangents)))
    return list(cj(*ins)), [0] * len(entry.outs)


CUSTOM_BATCH[_VjpRule] = batch_custom_vjp
CUSTOM_BATCH[_JvpRule] = batch_custom_jvp
