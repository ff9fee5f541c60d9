"""Derivative rules of stablehlo.pad (frontend/ops/pad.py): linear in the operand and the
padding value (``deflinear``: the jvp pads the tangent with the padding value's tangent)."""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.ad._util import deflinear, needs, sum_to_scalar


def _pad_t(c, x, v, low, high, interior):
    """Undo the edges (negative edges were crops: their cotangent is 0), then take every
    (interior + 1)-th element; the padding value gets the sum of the rest."""
    if not any(interior) and min(low + high, default=0) >= 0:
        ct_x = ops.slice(c, low, [n - hi for n, hi in zip(c.shape, high)])
    else:
        ct_x = ops.pad(c, 0, [-lo for lo in low], [-hi for hi in high], [0] * c.ndim)
        if any(interior):
            ct_x = ops.slice(ct_x, [0] * c.ndim, ct_x.shape, [i + 1 for i in interior])
    ct_v = ops.subtract(sum_to_scalar(c), sum_to_scalar(ct_x)) if needs(1) else None
    return [ct_x, ct_v]


deflinear("stablehlo.pad", _pad_t)
