"""What the derivative rules share: rule definers (``deflinear``, ``defbilinear``, ``zero_rules``;
one op's rules otherwise come from ``registry.def_rule``), AD's per-trace state (``ADState``, in
``Builder.transform_state``) and small emitters (all build StableHLO through hloforge.ops)."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import dtypes
from hloforge.frontend import ops
from hloforge.frontend.attributes import constant_array
from hloforge.frontend.registry import OPS, def_rule
from hloforge.frontend.tracing import TOKEN, Tensor, TupleSpec, Value, current_builder
from hloforge.frontend.tracing import splat as splat_constant


class ADState:
    """What AD keeps while one trace is built (``Builder.transform_state["ad"]``, see ``ad_state``).

    - ``splat_values``: ir.Value of a constant ``full`` emitted -> its element (``splat`` reads it);
    - ``irfft_cotangents``: ir.Value of an IRFFT cotangent -> (the rfft of the incoming cotangent,
      the fft lengths), so the RFFT transpose can cancel the pair (fft.py);
    - ``needed``: inside a vjp rule, whether each operand's cotangent is used (``needs``), else None;
    - ``replaced``: ir.Value -> the ir.Value that took its uses (a while loop's results, once its
      vjp's forward loop takes its place), for traces that return primal outputs too.
    """
    __slots__ = ("splat_values", "irfft_cotangents", "needed", "replaced")

    def __init__(self):
        self.splat_values, self.irfft_cotangents, self.needed, self.replaced = {}, {}, None, {}


def ad_state(b=None) -> ADState:
    """The ADState of builder ``b`` (default: the current one), made on first use."""
    if b is None:
        b = current_builder("hloforge AD")
    state = b.transform_state.get("ad")
    if state is None:
        state = b.transform_state["ad"] = ADState()
    return state


def latest(v):
    """The ir.Value that now holds what ``v`` held (``ADState.replaced``: a while loop's result
    once its vjp's forward loop took the loop's place), else ``v``."""
    replaced = ad_state().replaced
    while v in replaced:
        v = replaced[v]
    return v


def deflinear(name: str, transpose) -> None:
    """The rules of op ``name``, linear in its operands (jax's ``ad.deflinear2``): only its
    transpose is written. The jvp is the op itself on the tangents (zeros of the operand where a
    tangent is a symbolic zero; no tangent where the results carry none, e.g. a convert to int);
    the vjp is ``transpose(ct, *operands, **params)``, a cotangent (or None) per operand, ``ct``
    the result's cotangent.

    Example:
      >>> deflinear("stablehlo.negate", lambda ct, x: [ops.neg(ct)])
    """
    info = OPS[name]

    @def_rule("jvp", name)
    def jvp(ins, outs, ts, **params):
        if all(t is None for t in ts) or not any(carries_tangent(o) for o in outs):
            return [None] * len(outs)
        out = info.builder(*info.arrange([instantiate(t, x) for t, x in zip(ts, ins)]), **params)
        return list(out) if isinstance(out, (list, tuple)) else [out]

    @def_rule("vjp", name)
    def vjp(ins, outs, cts, **params):
        return transpose(cts[0], *ins, **params)

    jvp.__name__, vjp.__name__ = f"{info.builder.__name__}_jvp", f"{info.builder.__name__}_transpose"


def defbilinear(name: str, lhs_transpose, rhs_transpose, *, op=None) -> None:
    """The rules of op ``name``, z = op(x, y) linear in each operand (jax's ``ad.defbilinear``):
    only its two partial transposes are written, ``lhs_transpose(ct, x, y, **params)`` (x's
    cotangent) and ``rhs_transpose(ct, x, y, **params)`` (y's). The jvp is
    ``op(tx, y) + op(x, ty)`` (a symbolic-zero tangent's term left out); the vjp gives each operand
    whose cotangent is needed (``needs``) its transpose. ``op(x, y, **params)``: the op itself
    (default: its registry builder).

    Example:
      >>> defbilinear("stablehlo.multiply", lambda ct, x, y: mul(ct, y), lambda ct, x, y: mul(ct, x), op=mul)
    """
    info = OPS[name]
    apply = op if op is not None else info.builder

    @def_rule("jvp", name)
    def jvp(ins, outs, ts, **params):
        x, y = ins
        out = None
        if ts[0] is not None:
            out = apply(ts[0], y, **params)
        if ts[1] is not None:
            out = add_any(out, apply(x, ts[1], **params))
        return [out]

    @def_rule("vjp", name)
    def vjp(ins, outs, cts, **params):
        x, y = ins
        return [lhs_transpose(cts[0], x, y, **params) if needs(0) else None,
                rhs_transpose(cts[0], x, y, **params) if needs(1) else None]

    jvp.__name__, vjp.__name__ = f"{info.builder.__name__}_jvp", f"{info.builder.__name__}_transpose"


def zero_rules(*names: str) -> None:
    """Zero (co)tangents for ops whose results are piecewise constant (rounding) or not
    differentiable (int, bool)."""
    def_rule("jvp", *names)(lambda ins, outs, ts, **p: [None] * len(outs))
    def_rule("vjp", *names)(lambda ins, outs, cts, **p: [None] * len(ins))


def differentiable(dtype) -> bool:
    """Float and complex values carry tangents; integers and bools have zero tangents."""
    return dtypes.is_inexact(dtype)


def carries_tangent(x) -> bool:
    """Whether the Tensor or Value ``x`` has a tangent: a float or complex Tensor, or a tuple
    holding one (tokens never have one)."""
    return _spec_carries(x.spec) if isinstance(x, Value) else differentiable(x.dtype)


def _spec_carries(spec) -> bool:
    if spec is TOKEN:
        return False
    if isinstance(spec, TupleSpec):
        return any(_spec_carries(e) for e in spec.elements)
    return differentiable(spec[1])


def zeros_of(spec):
    """Zeros of a spec: a splat for (shape, dtype), a fresh token, a tuple of zeros (the
    (co)tangent of a tuple always has every element, so that get_tuple_element can read it)."""
    if spec is TOKEN:
        return ops.after_all()
    if isinstance(spec, TupleSpec):
        return ops.tuple(*[zeros_of(e) for e in spec.elements])
    return full(0, *spec)


def full(value, shape, dtype) -> Tensor:
    """A splat constant of ``value``: one op storing one element, emitted once per trace body
    (``tracing.splat``'s reuse), its element remembered for ``splat``."""
    t = splat_constant(value, dtype, shape, reuse=True, what="hloforge AD")
    ad_state(t.builder).splat_values[t.value] = np.asarray(value).astype(t.dtype)[()]
    return t


def splat(t):
    """The element of ``t`` when it is a splat constant (made here, or a real-valued
    stablehlo.constant), else None: rules fold such operands instead of emitting ops the passes
    would fold again."""
    known = ad_state(t.builder).splat_values.get(t.value)
    if known is not None or dtypes.is_complex(t.dtype):
        return known
    owner = t.value.owner
    if getattr(owner, "name", None) != "stablehlo.constant":
        return None
    got = constant_array(owner, limit=1)
    return got[0][()] if got is not None and got[1] else None


def mul(a, b) -> Tensor:
    """a * b, folding splat constants and multiplications by one."""
    sa, sb = splat(a), splat(b)
    if sa is not None and sb is not None:
        return full(sa * sb, a.shape, a.dtype)
    if sa is not None and sa == 1:
        return b
    if sb is not None and sb == 1:
        return a
    if sa is not None or sb is not None:  # s * (x * s2) -> x * (s * s2): derivative code picks its order
        s, other = (sa, b) if sa is not None else (sb, a)
        owner = other.value.owner
        if getattr(owner, "name", None) == "stablehlo.multiply":
            for i in (0, 1):
                inner = other.builder.tensor(owner.operands[i])
                s2 = splat(inner)
                if s2 is not None:
                    rest = other.builder.tensor(owner.operands[1 - i])
                    return ops.multiply(rest, full(s * s2, a.shape, a.dtype))
    return ops.multiply(a, b)


def div(a, b) -> Tensor:
    """a / b, folding splat constants."""
    sa, sb = splat(a), splat(b)
    if sa is not None and sb is not None:
        return full(sa / sb, a.shape, a.dtype)
    if sb is not None and sb == 1:
        return a
    return ops.divide(a, b)


def neg(a) -> Tensor:
    sa = splat(a)
    return full(-sa, a.shape, a.dtype) if sa is not None else ops.neg(a)


def zeros_like(x) -> Tensor:
    return full(0, x.shape, x.dtype)


def like(value, x) -> Tensor:
    return full(value, x.shape, x.dtype)


def instantiate(t, x) -> Tensor:
    """``t``, or zeros of x's shape and dtype where ``t`` is a symbolic zero (None)."""
    return zeros_like(x) if t is None else t


def conj(x) -> Tensor:
    if not dtypes.is_complex(x.dtype):
        return x
    return ops.complex(ops.real(x), ops.neg(ops.imag(x)))


def mT(x) -> Tensor:
    """x with its last two dims swapped (a batch of matrices transposed)."""
    perm = list(range(x.ndim))
    perm[-2:] = perm[-1], perm[-2]
    return ops.transpose(x, tuple(perm))


def mH(x) -> Tensor:
    """The conjugate transpose of a batch of matrices."""
    return conj(mT(x))


def matmul(a, b) -> Tensor:
    """a @ b over the last two dims, the leading dims batched (HIGHEST precision)."""
    batch = tuple(range(a.ndim - 2))
    return ops.dot_general(a, b, batch, batch, (a.ndim - 1,), (b.ndim - 2,), precision="HIGHEST")


def sum_to_scalar(x) -> Tensor:
    return ops.reduce(x, 0, tuple(range(x.ndim)), "add") if x.ndim else x


def unbroadcast(ct, shape) -> Tensor:
    """Sum ``ct`` down to a 0-d ``shape`` (operands like select's pred or clamp's bounds)."""
    return sum_to_scalar(ct) if tuple(shape) == () and ct.shape != () else ct


def add_any(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, Value):  # (tuples add elementwise; a token stays a token)
        if a.is_token:
            return a
        return ops.tuple(*[add_any(ops.get_tuple_element(a, i), ops.get_tuple_element(b, i))
                           for i in range(len(a))])
    return ops.add(a, b)


def replace_zero(x) -> Tensor:
    """x with zeros replaced by ones (guards a division whose numerator is zero there)."""
    zero = zeros_like(x)
    return ops.select(ops.compare(x, zero, "EQ"), like(1, x), x)


def needs(i: int) -> bool:
    """Inside a vjp rule: whether operand ``i``'s cotangent is used (it depends on the
    differentiated inputs). Rules may skip emitting the others; returning them anyway is fine."""
    mask = ad_state().needed
    return mask is None or mask[i]


def set_needed(mask) -> None:
    """The operands whose cotangents the vjp rule about to run must give (core.Entry.vjp), or None."""
    ad_state().needed = mask
