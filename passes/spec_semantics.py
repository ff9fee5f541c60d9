"""Spec-semantics rewrites: ops XLA:CPU computes otherwise than the StableHLO spec, rewritten into ops
it computes as the spec says.

XLA (and so jax) gives ``add`` of ``i1`` xor's truth table (the spec: logical or), orders complex
``maximum``/``minimum`` otherwise than the spec's lexicographic order on (real, imaginary), flushes
subnormal floats to zero on XLA:CPU (so ``ceil``/``floor`` of a subnormal give ±0), stores ``i1`` as a
byte (so ``bitcast_convert`` to and from ``i1`` fails to compile or gives 8 bits where the spec has 64),
refuses ``cbrt`` of complex numbers and has no XLA:CPU kernel for ``collective_broadcast``. Each
pattern here rewrites one such op into ops whose XLA:CPU result is the spec's (bit for bit, except
complex ``cbrt``, which follows the reference interpreter's formula to a few ULPs), built through
``hloforge.ops`` (the registry's rules give every result type).

The family is an opt-in (pass name ``spec-semantics``, e.g. ``m.optimize("default,spec-semantics")``);
the default pipeline and the compile path keep XLA's (= jax's) semantics and speed. ``hloforge check``,
which compares XLA's values with the reference interpreter's, applies it to every test function (and
to each ``interpreter.run_parallel`` program once its process grid is known).

Each pattern is a pure match (``plan_<name>``: a plan, or a string saying why it does not apply) and a
rewrite rooted at the op it replaces. The ``ceil``/``floor`` rewrites keep the original op on the normal lanes
and mark it with ``MARKER`` so that it is not rewritten again.
"""
from __future__ import annotations

import contextlib
from typing import NamedTuple

import ml_dtypes
import numpy as np

from hloforge.frontend import ops
from hloforge.frontend.context import ir, rewrite, stablehlo
from hloforge.frontend.tracing import Builder, active
from hloforge.passes._ir import NO_MATCH, Unsupported, begin_visit, dtype_of, params_of, shape_of

MARKER = "hloforge.spec_semantics"  # on an op a rewrite kept: it is not rewritten again
PASS = "spec-semantics"

_BF16 = np.dtype(ml_dtypes.bfloat16)
_FLOATS = tuple(np.dtype(d) for d in (np.float16, _BF16, np.float32, np.float64))
_UNSIGNED = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}


# ---------------------------------------------------------------- building

@contextlib.contextmanager
def _building(op, rewriter):
    """hloforge.ops builders emit at the rewriter's insertion point, at ``op``'s location, inside it;
    yields a function turning the op's ir.Values into Tensors."""
    begin_visit()  # (the callback is rewriting: values read before may be erased ones)
    scratch = ir.Module.create(loc=op.location)  # (only the Builder's context: nothing goes into it)
    b = Builder(module=scratch, ip=rewriter.ip)
    with active(b), b.located(op.location):
        yield b.tensor


def _full(value, like):
    """A splat constant of ``like``'s shape and dtype."""
    return ops.constant(np.full(like.shape, value, like.dtype))


def _bits(x):
    """``x``'s bits as the unsigned integer of its width (``x`` itself when it is unsigned)."""
    unsigned = _UNSIGNED[x.dtype.itemsize]
    return x if x.dtype == unsigned else ops.bitcast_convert(x, unsigned)


def _mark(t):
    t.value.owner.attributes[MARKER] = ir.UnitAttr.get()
    return t


def _marked(op) -> bool:
    return MARKER in op.attributes


def _element(value):
    """numpy dtype of a ranked static tensor's elements, None where numpy has none or the shape is dynamic
    (compare it with ``is None`` first: a numpy dtype equals None when it is float64)."""
    try:
        shape_of(value)
        return dtype_of(value)
    except Unsupported:
        return None


# ---------------------------------------------------------------- add of i1

def plan_add_of_booleans(op):
    """The plan of ``add_of_booleans`` for the add ``op`` (pure), or why it does not fire."""
    if _element(op.result) != np.bool_:
        return "the elements are not i1"
    return op.operands[0], op.operands[1]


def add_of_booleans(op, rewriter):
    """add(a, b) -> or(a, b)

    Preconditions: i1 elements. The spec's add of booleans is logical or; XLA's is xor (true + true
    is false there).
    """
    plan = plan_add_of_booleans(op)
    if isinstance(plan, str):
        return plan
    a, b = plan
    with _building(op, rewriter) as tensor:
        out = ops.or_(tensor(a), tensor(b))
    rewriter.replace_op(op, [out.value])
    return None


# ---------------------------------------------------------------- ceil and floor of subnormals

def _match_rounding_of_subnormal(op):
    if _marked(op):
        return "already rewritten (the op keeps the normal lanes)"
    dtype = _element(op.result)
    if dtype is None or not any(dtype == f for f in _FLOATS):  # (np.dtype(...) == None holds for float64)
        return f"the elements are {dtype}, not f16, bf16, f32 or f64 (or the shape is dynamic)"
    return dtype


def _subnormal_and_negative(x):
    """(x is subnormal, x's sign bit is set), read from x's bits: a float compare would see a flushed value."""
    bits = _bits(x)
    width = 8 * x.dtype.itemsize
    magnitude = ops.and_(bits, _full((1 << (width - 1)) - 1, bits))
    smallest_normal = np.asarray(ml_dtypes.finfo(x.dtype).smallest_normal, x.dtype).view(bits.dtype)
    subnormal = ops.and_(ops.compare(magnitude, _full(0, bits), "NE"),
                         ops.compare(magnitude, _full(smallest_normal, bits), "LT"))
    negative = ops.compare(bits, _full(1 << (width - 1), bits), "GE")
    return subnormal, negative


def _rounding_of_subnormal(op, rewriter, builder, negative_result, positive_result):
    with _building(op, rewriter) as tensor:
        x = tensor(op.operands[0])
        rounded = _mark(builder(x))
        subnormal, negative = _subnormal_and_negative(x)
        spec = ops.select(negative, _full(negative_result, x), _full(positive_result, x))
        out = ops.select(subnormal, spec, rounded)
    rewriter.replace_op(op, [out.value])
    return None


def plan_ceil_of_subnormal(op):
    """The plan of ``ceil_of_subnormal`` for the ceil ``op`` (pure), or why it does not fire."""
    return _match_rounding_of_subnormal(op)


def ceil_of_subnormal(op, rewriter):
    """ceil(x) -> select(subnormal(x), select(x < 0, -0.0, 1.0), ceil(x))

    Preconditions: f16, bf16, f32 or f64 elements; the op is not one this rewrite kept (``MARKER``).
    XLA:CPU flushes subnormal inputs to zero (ceil of the smallest positive subnormal is 0 there, 1 in
    the spec); subnormal and sign are read from the bits (``bitcast_convert`` and integer compares).
    """
    plan = plan_ceil_of_subnormal(op)
    if isinstance(plan, str):
        return plan
    return _rounding_of_subnormal(op, rewriter, ops.ceil, -0.0, 1.0)


def plan_floor_of_subnormal(op):
    """The plan of ``floor_of_subnormal`` for the floor ``op`` (pure), or why it does not fire."""
    return _match_rounding_of_subnormal(op)


def floor_of_subnormal(op, rewriter):
    """floor(x) -> select(subnormal(x), select(x < 0, -1.0, 0.0), floor(x))

    Preconditions: f16, bf16, f32 or f64 elements; the op is not one this rewrite kept (``MARKER``).
    XLA:CPU flushes subnormal inputs to zero (floor of the largest negative subnormal is -0 there, -1
    in the spec); subnormal and sign are read from the bits.
    """
    plan = plan_floor_of_subnormal(op)
    if isinstance(plan, str):
        return plan
    return _rounding_of_subnormal(op, rewriter, ops.floor, -1.0, 0.0)


# ---------------------------------------------------------------- complex maximum and minimum

def _match_complex_extremum(op):
    dtype = _element(op.result)
    if dtype is None or dtype.kind != "c":
        return f"the elements are {dtype}, not complex"
    return dtype


def _ordered(part):
    """(key, is NaN) of a float Tensor: signed integers ordered as the floats are, -0 and +0 both 0,
    from the bits (XLA:CPU's float compares flush subnormals)."""
    bits = _bits(part)
    width = 8 * part.dtype.itemsize
    magnitude = ops.and_(bits, _full((1 << (width - 1)) - 1, bits))
    infinity = np.asarray(np.inf, part.dtype).view(bits.dtype)
    nan = ops.compare(magnitude, _full(infinity, bits), "GT")
    signed = ops.bitcast_convert(magnitude, np.dtype(f"int{width}"))
    negative = ops.compare(bits, _full(1 << (width - 1), bits), "GE")
    return ops.select(negative, ops.neg(signed), signed), nan


def _ieee(direction, a, b):
    """The IEEE comparison ``a direction b`` of float Tensors (false when either is NaN), exact on subnormals."""
    (ka, na), (kb, nb) = _ordered(a), _ordered(b)
    ordered = ops.not_(ops.or_(na, nb))
    return ops.and_(ordered, ops.compare(ka, kb, direction))


def _complex_extremum(op, rewriter, direction):
    with _building(op, rewriter) as tensor:
        a, b = tensor(op.operands[0]), tensor(op.operands[1])
        ra, rb, ia, ib = ops.real(a), ops.real(b), ops.imag(a), ops.imag(b)
        first = ops.select(_ieee("EQ", ra, rb), _ieee(direction, ia, ib), _ieee(direction, ra, rb))
        out = ops.select(first, a, b)
    rewriter.replace_op(op, [out.value])
    return None


def plan_maximum_of_complex(op):
    """The plan of ``maximum_of_complex`` for the maximum ``op`` (pure), or why it does not fire."""
    return _match_complex_extremum(op)


def maximum_of_complex(op, rewriter):
    """maximum(a, b) -> select(re(a) == re(b) ? im(a) > im(b) : re(a) > re(b), a, b)

    Preconditions: complex elements. The spec's (and the reference interpreter's) lexicographic
    order on (real, imaginary): -0 equals +0, a comparison with NaN is false (so b is chosen); the
    float comparisons are made on the parts' bits, exact on subnormals.
    """
    plan = plan_maximum_of_complex(op)
    if isinstance(plan, str):
        return plan
    return _complex_extremum(op, rewriter, "GT")


def plan_minimum_of_complex(op):
    """The plan of ``minimum_of_complex`` for the minimum ``op`` (pure), or why it does not fire."""
    return _match_complex_extremum(op)


def minimum_of_complex(op, rewriter):
    """minimum(a, b) -> select(re(a) == re(b) ? im(a) < im(b) : re(a) < re(b), a, b)

    Preconditions: complex elements. As ``maximum_of_complex``, with the order reversed.
    """
    plan = plan_minimum_of_complex(op)
    if isinstance(plan, str):
        return plan
    return _complex_extremum(op, rewriter, "LT")


# ---------------------------------------------------------------- bitcast_convert to and from i1

def _match_bitcast_of_booleans(op, from_booleans: bool):
    """(the wide side's dtype, its bit width) for a bitcast_convert from i1 (``from_booleans``) or to
    i1, the other side an 8- to 64-bit integer or float type."""
    source, target = _element(op.operands[0]), _element(op.result)
    narrow, wide = (source, target) if from_booleans else (target, source)
    if narrow != np.bool_ or wide is None or wide == np.bool_:
        return f"not a bitcast_convert {'from' if from_booleans else 'to'} i1 of another type"
    if wide.kind not in "iuf" and wide != _BF16:
        return f"the other side is {wide}, not an integer or float type"
    if wide.itemsize not in _UNSIGNED:
        return f"the other side is {wide}"
    return wide, 8 * wide.itemsize


def _bit_positions(shape, width):
    """iota along a new last dimension of ``width`` elements, as the unsigned type of that width."""
    return ops.iota((*shape, width), _UNSIGNED[width // 8], dimension=len(shape))


def plan_bitcast_of_booleans(op):
    """The plan of ``bitcast_of_booleans`` for the bitcast_convert ``op`` (pure), or why it does not fire."""
    return _match_bitcast_of_booleans(op, from_booleans=True)


def bitcast_of_booleans(op, rewriter):
    """bitcast_convert(x: i1[..., N]) -> bitcast_convert(or-reduce(convert(x, uN) << iota(N)))

    Preconditions: x has i1 elements and a last dimension of N, the result's bit width (8 to 64, an
    integer or float type). Element k of the last dimension is bit k (the spec's little-endian
    order); XLA's i1 is a byte and refuses this bitcast.
    """
    plan = plan_bitcast_of_booleans(op)
    if isinstance(plan, str):
        return plan
    wide, width = plan
    with _building(op, rewriter) as tensor:
        x = tensor(op.operands[0])
        shape = x.shape[:-1]
        bits = ops.shift_left(ops.convert(x, _UNSIGNED[width // 8]), _bit_positions(shape, width))
        packed = ops.reduce(bits, np.zeros((), bits.dtype), (len(shape),), "or")
        out = packed if packed.dtype == wide else ops.bitcast_convert(packed, wide)
    rewriter.replace_op(op, [out.value])
    return None


def plan_bitcast_to_booleans(op):
    """The plan of ``bitcast_to_booleans`` for the bitcast_convert ``op`` (pure), or why it does not fire."""
    return _match_bitcast_of_booleans(op, from_booleans=False)


def bitcast_to_booleans(op, rewriter):
    """bitcast_convert(x) -> ((broadcast(bits(x)) >> iota(N)) & 1) != 0 : i1[..., N]

    Preconditions: the result has i1 elements; x is an integer or float type of N = 8 to 64 bits.
    Element k of the new last dimension is bit k (the spec's little-endian order); XLA's i1 is a
    byte and gives N / 8 elements.
    """
    plan = plan_bitcast_to_booleans(op)
    if isinstance(plan, str):
        return plan
    _, width = plan
    with _building(op, rewriter) as tensor:
        x = tensor(op.operands[0])
        spread = _bits(ops.broadcast_in_dim(x, (*x.shape, width), tuple(range(len(x.shape)))))
        shifted = ops.shift_right_logical(spread, _bit_positions(x.shape, width))
        out = ops.compare(ops.and_(shifted, _full(1, shifted)), _full(0, shifted), "NE")
    rewriter.replace_op(op, [out.value])
    return None


# ---------------------------------------------------------------- cbrt of complex

def plan_cbrt_of_complex(op):
    """The plan of ``cbrt_of_complex`` for the cbrt ``op`` (pure), or why it does not fire."""
    dtype = _element(op.result)
    if dtype is None or dtype.kind != "c":
        return f"the elements are {dtype}, not complex"
    return dtype


def cbrt_of_complex(op, rewriter):
    """cbrt(z) -> complex(r cos t, r sin t), r = (re(z)^2 + im(z)^2)^(1/6), t = atan2(im(z), re(z)) / 3

    Preconditions: complex elements. The reference interpreter's formula (the principal cube root),
    in f64 as it computes it (complex<f32> is widened and rounded back); XLA refuses complex cbrt.
    Its values match the interpreter's to a few ULPs (XLA's pow, atan2, cos and sin are not libm's).
    """
    plan = plan_cbrt_of_complex(op)
    if isinstance(plan, str):
        return plan
    with _building(op, rewriter) as tensor:
        z = tensor(op.operands[0])
        part = np.dtype(np.float32) if z.dtype == np.complex64 else np.dtype(np.float64)
        re, im = ops.real(z), ops.imag(z)
        if part != np.float64:
            re, im = ops.convert(re, np.float64), ops.convert(im, np.float64)
        r = ops.power(ops.add(ops.multiply(re, re), ops.multiply(im, im)), _full(1.0 / 6.0, re))
        t = ops.divide(ops.atan2(im, re), _full(3.0, re))
        re, im = ops.multiply(r, ops.cos(t)), ops.multiply(r, ops.sin(t))
        if part != np.float64:
            re, im = ops.convert(re, part), ops.convert(im, part)
        out = ops.complex(re, im)
    rewriter.replace_op(op, [out.value])
    return None


# ---------------------------------------------------------------- collective_broadcast

def _grid(op):
    """(replicas, partitions) from the enclosing module's ``mhlo.num_replicas``/``mhlo.num_partitions``,
    or None where it does not say."""
    parent = op.parent
    while parent is not None and parent.name != "builtin.module":
        parent = parent.parent
    if parent is None:
        return None
    attrs = parent.attributes
    if "mhlo.num_replicas" not in attrs or "mhlo.num_partitions" not in attrs:
        return None
    return ir.IntegerAttr(attrs["mhlo.num_replicas"]).value, ir.IntegerAttr(attrs["mhlo.num_partitions"]).value


def _module_of(op):
    parent = op.parent
    while parent.name != "builtin.module":
        parent = parent.parent
    return parent


def _fresh_channel(op) -> int:
    """One more than every channel handle of the module."""
    top = [0]

    def visit(o):
        if "channel_handle" in o.attributes:
            top[0] = max(top[0], stablehlo.ChannelHandle(o.attributes["channel_handle"]).handle)
        return ir.WalkResult.ADVANCE

    _module_of(op).walk(visit)
    return top[0] + 1


def _at(table, index):
    """``table[index]`` of a constant 1-d table at a 0-d index Tensor, as a 0-d Tensor."""
    return ops.reshape(ops.dynamic_slice(ops.constant(table), [index], (1,)), ())


class _AllReducePlan(NamedTuple):
    devices: int            # replicas * partitions
    handle: int             # the all_reduce's channel handle
    slots: int              # how many process groups the grid has
    slot: np.ndarray        # per device, its group's slot
    source: np.ndarray      # per device, whether it is its group's source
    member: np.ndarray      # per device, whether it is in a group


def plan_collective_broadcast_as_all_reduce(op):
    """The plan of ``collective_broadcast_as_all_reduce`` for ``op`` (pure), or why it does not fire."""
    if len(op.operands) != 1 or len(op.results) != 1:
        return "a dynamic root or several operands"
    if _element(op.result) is None:
        return "an element type numpy has no dtype for, or a dynamic shape"
    grid = _grid(op)
    if grid is None:
        return "the module does not say its replica and partition counts (mhlo.num_replicas, mhlo.num_partitions)"
    replicas, partitions = grid
    params = params_of(op)
    groups, channel = [list(g) for g in params["replica_groups"]], params["channel_handle"]
    cross_partition = channel is not None and channel[0] > 0  # (the spec: cross_partition when channel_id > 0)
    inner, outer = (partitions, replicas) if cross_partition else (replicas, partitions)
    ids = [i for g in groups for i in g]
    if any(i < 0 or i >= inner for i in ids) or len(set(ids)) != len(ids):
        return f"replica_groups {groups} are not distinct ids below {inner}"
    devices = replicas * partitions
    slot, source, member = np.zeros(devices, np.int32), np.zeros(devices, bool), np.zeros(devices, bool)
    slots = 0
    for o in range(outer):  # (slot k: the k-th group of the grid, each group once per other coordinate)
        for g in groups:
            flat = [o * partitions + i if cross_partition else i * partitions + o for i in g]
            slot[flat], member[flat], source[flat[0]] = slots, True, True
            slots += 1
    handle = channel[0] if cross_partition else _fresh_channel(op)
    return _AllReducePlan(devices, handle, slots, slot, source, member)


def collective_broadcast_as_all_reduce(op, rewriter):
    """collective_broadcast(x) -> all_reduce(add, slots with the sources' bits of x)[my group's slot]

    Preconditions: one operand (no dynamic root); the module states ``mhlo.num_replicas`` and
    ``mhlo.num_partitions``; the groups are distinct ids. The spec's process groups (cross-replica
    without a channel handle or with handle <= 0, cross-partition with handle > 0) are numbered over
    the grid of ``replica_id * partitions + partition_id``; every device sends a tensor of one slot
    per group, all zero but, on a group's first device, its own group's slot: x's bits as unsigned
    integers (i1 as u8, complex as its two parts stacked). One all_reduce over every device
    (``use_global_device_ids``) sums them, which is exact (one addend is not zero), and each device
    reads its group's slot, a device in no group zeros (as the spec says). XLA:CPU has no
    collective_broadcast kernel.
    """
    plan = plan_collective_broadcast_as_all_reduce(op)
    if isinstance(plan, str):
        return plan
    devices, handle, slots, slot, source, member = plan
    partitions = _grid(op)[1]
    with _building(op, rewriter) as tensor:
        x = tensor(op.operands[0])
        replica = ops.replica_id()
        me = ops.add(ops.multiply(replica, _full(partitions, replica)), ops.partition_id())
        mine, sends, belongs = _at(slot, me), _at(source, me), _at(member, me)
        parts = [ops.real(x), ops.imag(x)] if x.dtype.kind == "c" else [x]
        bits = [ops.convert(p, np.uint8) if p.dtype == np.bool_ else _bits(p) for p in parts]
        one = (len(bits), *x.shape)  # (the parts stacked: one all_reduce operand)
        stacked = ops.concatenate([ops.reshape(b, (1, *x.shape)) for b in bits], 0)
        start = [mine] + [ops.constant(np.zeros((), np.int32))] * len(one)
        empty = ops.constant(np.zeros((slots, *one), stacked.dtype))
        sent = ops.select(sends, ops.dynamic_update_slice(empty, ops.reshape(stacked, (1, *one)), start), empty)
        total = ops.all_reduce(sent, [list(range(devices))], computation="add", channel_handle=(handle, 1),
                               use_global_device_ids=True)
        got = ops.reshape(ops.dynamic_slice(total, start, (1, *one)), one)
        got = ops.select(belongs, got, _full(0, got))
        values = []
        for k, p in enumerate(parts):
            b = ops.reshape(ops.slice(got, (k, *[0] * len(x.shape)), (k + 1, *x.shape)), x.shape)
            if p.dtype == np.bool_:
                values.append(ops.compare(b, _full(0, b), "NE"))
            else:
                values.append(b if b.dtype == p.dtype else ops.bitcast_convert(b, p.dtype))
        out = ops.complex(*values) if len(values) == 2 else values[0]
    rewriter.replace_op(op, [out.value])
    return None


PATTERNS = {
    "add_of_booleans": (("stablehlo.add",), add_of_booleans),
    "ceil_of_subnormal": (("stablehlo.ceil",), ceil_of_subnormal),
    "floor_of_subnormal": (("stablehlo.floor",), floor_of_subnormal),
    "maximum_of_complex": (("stablehlo.maximum",), maximum_of_complex),
    "minimum_of_complex": (("stablehlo.minimum",), minimum_of_complex),
    "bitcast_of_booleans": (("stablehlo.bitcast_convert",), bitcast_of_booleans),
    "bitcast_to_booleans": (("stablehlo.bitcast_convert",), bitcast_to_booleans),
    "cbrt_of_complex": (("stablehlo.cbrt",), cbrt_of_complex),
    "collective_broadcast_as_all_reduce": (("stablehlo.collective_broadcast",), collective_broadcast_as_all_reduce),
}


def apply(module) -> int:
    """Rewrite ``module`` (an ``hloforge.Module``) in place with this family and nothing else, in one
    walk (MLIR's ``walkAndApplyPatterns``: no folds, no dead-code removal, so every other op, an
    unused ``@check.eq`` included, reaches XLA as it was). Returns how many ops were rewritten.

    Example:
      >>> spec_semantics.apply(m)  # what m.optimize("spec-semantics") does, without the folds
    """
    count = [0]

    def counted(fn):
        def pattern(op, rewriter):
            try:
                if fn(op, rewriter):
                    return NO_MATCH
            except Unsupported:
                return NO_MATCH
            count[0] += 1
            return None
        return pattern

    with module.context, ir.Location.unknown():
        if not any(op.name in _ROOTS for op in module.walk()):
            return 0
        patterns = rewrite.RewritePatternSet()
        for roots, fn in PATTERNS.values():
            for root in roots:
                patterns.add(root, counted(fn))
        rewrite.walk_and_apply_patterns(module.mlir.operation, patterns.freeze())
    if count[0]:
        module.verify()
    return count[0]


_ROOTS = frozenset(root for roots, _ in PATTERNS.values() for root in roots)
