"""Derivative rules of hloforge.lax.ordering's composites: ``hloforge.lax.cumprod`` and
``hloforge.lax.cumlogsumexp`` (frontend/lax/ordering.py), whose forward is one reduce_window as jax
lowers them. As in jax (``_cumulative_jvp_rule``), the tangent is the jvp of the associative scan of
the same function, not the window's (jax: reduce_window is not arbitrarily differentiable); the vjp is
that jvp's transpose."""
from __future__ import annotations

from hloforge.frontend.ad import api
from hloforge.frontend.ad.lax_linalg import transposed
from hloforge.frontend.ad.structure import COMPOSITE_RULES
from hloforge.frontend.lax import ordering


def _scan_jvp(what):
    combine = ordering.scan_combine(what)

    def jvp(ins, outs, ts, axis, reverse):
        (x,), (t,) = ins, ts
        if t is None:
            return [None]
        _, tangent = api.jvp(lambda v: ordering.associative_scan(combine, v, reverse=reverse, axis=axis), (x,), (t,))
        return [tangent]
    jvp.__name__ = f"_{what}_jvp"
    return jvp


RULES = {f"{ordering.SCAN_COMPOSITE}{what}": (_scan_jvp(what), transposed(_scan_jvp(what)))
         for what in ("cumprod", "cumlogsumexp")}
COMPOSITE_RULES.update(RULES)

__all__ = ["RULES"]
