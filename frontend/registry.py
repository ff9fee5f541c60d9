"""The op registry: one ``OpInfo`` per StableHLO op hloforge can emit, and the one ``bind`` path.

An entry holds everything about one op, in the op family's module (``frontend/ops/*``):

- ``builder``: the public ``hloforge.ops`` function;
- ``rule(*operand_specs, **params)``: result (shape, dtype) pairs from operand (shape, dtype)
  pairs (tokens and tuples: TOKEN and TupleSpec, traced as ``tracing.Value``); validates and
  raises TypeError/ValueError with the actual values; no IR;
- ``decode(op)``: the builder's keyword arguments read back from an ``ir.Operation``, so that
  ``reemit(op, operands)`` (``builder(*operands, **decode(op))``) builds the same op;
- ``evaluate(*arrays, **params)``: the op on numpy arrays, or None where the result would differ
  from what XLA computes on this backend (constant folding folds only what it evaluates);
- ``rules``: the transformation rules by kind (``RULE_KINDS``: ``jvp``, ``vjp``, ``batch``; room
  for more, e.g. a per-platform lowering), set with ``def_rule`` by the modules that mirror the op
  families (``frontend/ad/``, ``frontend/batching/``) and read with ``rule_of``.

Builders convert their operands to Tensors and call ``bind(name, operands, **params)``, which
normalizes the parameters once, applies the rule, encodes the attributes, traces region bodies
(``Builder.region``) and emits the op. Passes and AD ask ``names(trait)`` for op sets, never name
lists: ``TRAITS`` declares every trait an entry may have.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, NamedTuple, Optional

import numpy as np

from hloforge.frontend import dtypes
from hloforge.frontend.tracing import TOKEN, Tensor, TupleSpec, Value, current_builder, is_opaque  # noqa: F401


class Spec(NamedTuple):
    """The abstract value of an operand: a static shape and a numpy dtype."""
    shape: tuple
    dtype: np.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __repr__(self):  # (as a Tensor prints: rules name operands in their messages)
        return f"Tensor(shape={self.shape}, dtype={self.dtype.name})"

    @classmethod
    def of(cls, x) -> "Spec":
        """A Spec of a Tensor or a (shape, dtype) pair; tokens and tuples (Values, TOKEN,
        TupleSpec) give their TOKEN or TupleSpec."""
        kind = type(x)
        if kind is Spec:
            return x
        if kind is Tensor:  # (the hot path: Tensor shapes and dtypes are canonical already)
            return tuple.__new__(cls, (x.shape, x.dtype))
        if isinstance(x, Spec) or is_opaque(x):
            return x
        if isinstance(x, Value):
            return x.spec
        if isinstance(x, Tensor):
            return cls(x.shape, x.dtype)
        shape, dtype = x
        return cls(tuple(int(s) for s in shape), dtypes.canonical(dtype))


class Region(NamedTuple):
    """A region body ``bind`` traces: block argument specs, the Python body, and what it must
    return (a list of Specs). ``isolated``: the body may not use values from outside it."""
    arguments: list
    body: Callable
    results: list
    what: str
    isolated: bool = True
    describe: Optional[str] = None


def _no_params(**params) -> dict:
    return params


def _no_attributes(**params) -> dict:
    return {}


def _no_regions(operands, **params) -> list:
    return []


def _positional(operands) -> tuple:
    return tuple(operands)


@dataclasses.dataclass(eq=False)
class OpInfo:
    name: str                               # the StableHLO op, e.g. "stablehlo.add"
    builder: Callable                       # the public hloforge.ops function
    rule: Callable                          # rule(*operand_specs, **params) -> [(shape, dtype), ...]
    decode: Callable                        # decode(op) -> builder keyword arguments
    evaluate: Optional[Callable] = None     # evaluate(*arrays, **params) -> array(s) or None
    params: Callable = _no_params           # normalize(**params) -> canonical params (validated)
    attributes: Callable = _no_attributes   # canonical params -> {MLIR attribute name: Attribute}
    regions: Callable = _no_regions         # (operand specs, **params) -> [Region]
    arrange: Callable = _positional         # flat operand list -> the builder's positional arguments
    traits: frozenset = frozenset()         # names from TRAITS
    rules: dict = dataclasses.field(default_factory=dict)  # kind ("jvp", "vjp", "batch", ...) -> rule

    jvp = property(lambda self: self.rules.get("jvp"), lambda self, f: self._set("jvp", f))
    vjp = property(lambda self: self.rules.get("vjp"), lambda self, f: self._set("vjp", f))
    batch = property(lambda self: self.rules.get("batch"), lambda self, f: self._set("batch", f))

    def _set(self, kind, rule):
        if rule is None:
            self.rules.pop(kind, None)
        else:
            self.rules[kind] = rule

    def abstract(self, *operand_specs, **params) -> list:
        """The rule on canonical params: [Spec] of the results."""
        return self._results(list(map(Spec.of, operand_specs)), params)

    def _results(self, specs: list, params: dict) -> list:
        """The rule on operand Specs and canonical params, its results as Specs."""
        out = self._rule(*specs, **params)
        return [_result_spec(self.name, r) for r in (out if isinstance(out, list) else [out])]

    def reemit(self, operands, op):
        """Build a copy of ``op`` over ``operands`` (Tensors of the current trace)."""
        return self.builder(*self.arrange(list(operands)), **self.decode(op))

    def summary(self, op) -> str:
        """``op``'s parameters in one line, as its builder takes them (``decode``), for inspection:
        ``low=[0, 1] high=[0, 1] interior=[0, 0]``; arrays as ``dtype[shape]`` unless they hold one value."""
        return " ".join(f"{name}={_brief(value)}" for name, value in self.decode(op).items())


def _brief(value) -> str:
    if isinstance(value, np.ndarray):
        return repr(value.item()) if value.size == 1 else f"{value.dtype.name}[{', '.join(map(str, value.shape))}]"
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(map(_brief, value)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_brief(v)}" for k, v in value.items()) + "}"
    if value is None or isinstance(value, (str, bool, int, float, complex, np.generic)):
        return str(value)
    return getattr(value, "__name__", type(value).__name__)  # (a region's body, an attribute object)


# Every trait an op may declare (``register(traits=...)``), with what it promises; "x op 0" means
# a zero of x's dtype (False for bool) on either side.
TRAITS = {
    "elementwise": "result element i depends only on the operands' elements i (scalar select/clamp operands aside)",
    "unary": "elementwise, one operand",
    "binary": "elementwise, two operands of one shape and dtype (compare included)",
    "zero_identity": "binary, x op 0 = 0 op x = x (for floats up to a zero's sign: -0.0 + 0.0 is +0.0)",
    "zero_absorbing": "binary, x op 0 = 0 op x = 0 (for floats only with finite math: Inf * 0 is NaN, -x * 0 is -0.0)",
    "linear": "linear in its operands, up to rounding (select: in its two branches): AD's linear tangent maps",
    "bilinear": "linear in each of its two operands (multiply, dot_general, convolution)",
    "movement": "only moves or copies operand elements (reshape, transpose, broadcast, slice, ...)",
    "variadic": "the builder takes and returns lists (bind returns a list even of one result)",
    "control_flow": "runs its regions at run time (while, if, case)",
    "non_tensor": "token or tuple results, which no constant holds",
}
# traits that imply another one, checked at registration
_IMPLIES = {"unary": "elementwise", "binary": "elementwise", "zero_identity": "binary", "zero_absorbing": "binary"}


def _checked_traits(name: str, traits) -> frozenset:
    """``traits`` as a frozenset; ValueError naming the op for an undeclared trait or a missing implied one."""
    if isinstance(traits, str):
        raise TypeError(f"hloforge.frontend.registry.register({name!r}): traits must be a collection of "
                        f"names, got the string {traits!r}")
    out = frozenset(traits)
    unknown = sorted(out - TRAITS.keys())
    if unknown:
        raise ValueError(f"hloforge.frontend.registry.register({name!r}): unknown traits {unknown}; "
                         f"declared: {sorted(TRAITS)}")
    missing = sorted(f"{t} needs {_IMPLIES[t]}" for t in out if t in _IMPLIES and _IMPLIES[t] not in out)
    if missing:
        raise ValueError(f"hloforge.frontend.registry.register({name!r}): traits {sorted(out)}: {', '.join(missing)}")
    return out


OPS: dict[str, OpInfo] = {}
# The rule kinds every registered op has (tests/test_registry_rules.py): jvp and vjp (frontend/ad/),
# batch (frontend/batching/). A linear op's vjp is its transpose (frontend/ad/_util.deflinear).
RULE_KINDS = ("jvp", "vjp", "batch")


def def_rule(kind: str, *names: str):
    """Decorator: ``fn`` is the ``kind`` rule of each op in ``names`` (``OpInfo.rules[kind]``).

    Example:
      >>> @def_rule("batch", "stablehlo.negate")
      ... def _negate_batch(size, ins, dims): ...
    """
    if not names:
        raise TypeError(f"hloforge.frontend.registry.def_rule({kind!r}): name at least one op")
    unknown = [n for n in names if n not in OPS]
    if unknown:
        raise ValueError(f"hloforge.frontend.registry.def_rule({kind!r}): no registered op {unknown}")

    def wrap(fn):
        for n in names:
            OPS[n].rules[kind] = fn
        return fn
    return wrap


def rule_of(name: str, kind: str, what: str = "hloforge") -> Callable:
    """The ``kind`` rule of op ``name``; NotImplementedError naming both when there is none."""
    info = OPS.get(name)
    if info is None:
        raise NotImplementedError(f"{what}: {name} has no registry entry (known ops: {len(OPS)}; see "
                                  f"hloforge.frontend.registry.OPS)")
    rule = info.rules.get(kind)
    if rule is None:
        raise NotImplementedError(f"{what}: no {kind} rule for {name}; add one with "
                                  f"hloforge.frontend.registry.def_rule({kind!r}, {name!r})")
    return rule
_INT64_MAX = (1 << 63) - 1


def register(name: str, *, rule, decode=None, evaluate=None, params=None, attributes=None,
             regions=None, arrange=None, traits=()):
    """Decorator: record ``builder`` as the hloforge.ops function that emits ``name``.

    ``rule`` takes Specs and canonical params and returns one (shape, dtype) or a list of them;
    ``traits`` are names from ``TRAITS``.
    """
    normalize = params or _no_params
    traits = _checked_traits(name, traits)

    def wrap(builder):
        def public_rule(*operand_specs, **raw):
            return info.abstract(*operand_specs, **normalize(**raw))

        public_rule.__name__ = public_rule.__qualname__ = f"{builder.__name__}_rule"
        public_rule.__doc__ = rule.__doc__
        info = OpInfo(name, builder, public_rule, decode or (lambda op: {}), evaluate,
                      normalize, attributes or _no_attributes, regions or _no_regions,
                      arrange or _positional, traits)
        info._rule = rule
        OPS[name] = info
        builder.stablehlo_op = name
        return builder
    return wrap


_RESULT_SPECS: dict = {}  # a rule's (shape, dtype) result -> its Spec (rules return a few shapes many times)


def _result_spec(name: str, r):
    """``r`` as a Spec (a TOKEN or TupleSpec as is), its dimensions checked to fit int64."""
    try:
        spec = _RESULT_SPECS.get(r)
    except TypeError:  # (unhashable: a list shape)
        return _checked_spec(name, r)
    if spec is None:
        if len(_RESULT_SPECS) >= 1 << 14:
            _RESULT_SPECS.clear()
        spec = _RESULT_SPECS[r] = _checked_spec(name, r)
    return spec


def _checked_spec(name: str, r):
    spec = Spec.of(r)
    if not is_opaque(spec) and any(d > _INT64_MAX for d in spec.shape):
        raise ValueError(f"{name}: result shape {spec.shape} has a dimension larger than int64 holds")
    return spec


def lookup(name: str) -> OpInfo:
    try:
        return OPS[name]
    except KeyError:
        raise KeyError(f"no hloforge builder for {name!r}; known: {', '.join(sorted(OPS))}") from None


def names(*traits: str) -> tuple:
    """The registered op names that have every trait in ``traits`` (names from ``TRAITS``), sorted."""
    want = set(traits)
    if not want <= TRAITS.keys():
        raise ValueError(f"hloforge.frontend.registry.names: unknown traits {sorted(want - TRAITS.keys())}; "
                         f"declared: {sorted(TRAITS)}")
    return tuple(sorted(n for n, info in OPS.items() if want <= info.traits))


def bind(name: str, operands, *, loc=None, **params):
    """Emit op ``name`` over ``operands`` (Tensors or Values of the current trace); returns its
    result Tensor (a Value for a token or tuple result), or a list of Tensors for ops with several results.

    Normalizes ``params`` once, applies the rule, traces region bodies, then emits; nothing is
    emitted when any of that fails.
    """
    info = OPS[name]
    b = current_builder(name)
    params = info.params(**params)
    specs = list(map(Spec.of, operands))
    results = info._results(specs, params)
    regions = info.regions(specs, **params) if info.regions is not _no_regions else ()
    with b.ctx:
        attrs = info.attributes(**params)
    op = b.emit(name, operands, results, attrs, loc=loc, regions=len(regions))
    try:
        for index, r in enumerate(regions):
            b.region(op, index, r.arguments, r.body, r.results, r.what, isolated=r.isolated,
                     describe=r.describe, loc=loc)
    except BaseException:
        op.erase()
        raise
    if len(results) == 1 and "variadic" not in info.traits:
        r = results[0]
        return Value(op.result, r, b) if is_opaque(r) else Tensor.of_spec(op.result, r, b)
    tensors = [Value(v, r, b) if is_opaque(r) else Tensor.of_spec(v, r, b) for v, r in zip(op.results, results)]
    return tensors if "variadic" in info.traits else tensors[0]


def body_of(region) -> Callable:
    """A Python body that re-emits the ops of ``region``'s block through the registry (for
    ``decode`` of ops with regions): it takes Tensors for the block arguments and returns the
    terminator's operands as Tensors."""
    block = region.blocks[0]

    def body(*args):
        outputs = reemit_block(block, args)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    return body


def _through_registry(op, operands, value_of):
    return lookup(op.name).reemit(operands, op)


def reemit_block(block, args, *, outer=None, take=None) -> list:
    """Re-emit the ops of ``block`` over ``args`` (Tensors for its arguments); returns the
    terminator's operands as Tensors. Each op goes through ``take(op, operands, value_of)`` (its
    result Tensors; default: the registry's ``reemit``), where AD records its tape; ``value_of``
    maps any old value to its Tensor. A value defined outside the block comes from ``outer`` (a
    region's captures), else from the blocks being re-emitted around this one (``Builder.reemitted``:
    a loop body may read a value of the block around it), else is used as it is."""
    b = current_builder("region body")
    values = dict(outer or {})
    values.update(zip(block.arguments, args))
    take = take or _through_registry

    def value_of(v):
        return b.reemitted(v, values)

    b.reemitting.append(values)
    try:
        for inner in block.operations:
            inner = inner.operation
            operands = [value_of(v) for v in inner.operands]
            if inner.name in ("stablehlo.return", "func.return"):
                return operands
            out = take(inner, operands, value_of)
            out = out if isinstance(out, (list, tuple)) else [out]
            for r, t in zip(inner.results, out):
                values[r] = t
    finally:
        b.reemitting.pop()
    raise ValueError("region body has no terminator (stablehlo.return or func.return)")
