"""The builder that turns op calls into MLIR: one per trace, active on this thread."""
from __future__ import annotations

import contextlib
import linecache
import os
import sys
import threading
from typing import NamedTuple

import jax
import jaxlib
import numpy as np

from hloforge.frontend import dtypes, jax_api
from jax import tree_util

from hloforge.frontend.attributes import dense
from hloforge.frontend.context import (
    ir, is_token_type, make_context, shape_dtype_of, tensor_type, token_type, tuple_element_types, tuple_type)
from hloforge.frontend.location import call_site, is_internal, user_location

_state = threading.local()


class Builder:
    """Holds the MLIR context, module and insertion point of one trace.

    ``spmd``: the module will be partitioned over a mesh; lowerings that have a choice prefer
    forms XLA's SPMD partitioner shards well over the fastest single-device form.
    ``module``/``ip``: emit into an existing ``ir.Module`` at an insertion point (a parsed module
    being extended, as AD does) instead of a fresh one.
    """

    transform_state: dict
    """What the transformations (AD, batching) keep while this trace is built, keyed by the
    transformation's name (``"ad"``: ``frontend/ad/_util.ADState``; ``"splat"``: the constants
    ``splat(..., reuse=True)`` made); each owns its entry. The one
    place for such state: a rule keeps none in module attributes or on the Builder itself."""

    def __init__(self, spmd: bool = False, *, module: ir.Module | None = None,
                 ip: ir.InsertionPoint | None = None):
        self.spmd = spmd
        if module is None:
            self.ctx = make_context()
            with self.ctx, ir.Location.unknown():
                module = ir.Module.create()
        else:
            self.ctx = module.context
        self.module = module
        self.ip = ip if ip is not None else ir.InsertionPoint(module.body)
        self.scope = _Scope("the trace")
        self.visible = {self.scope}
        self._types: dict = {}
        self._specs: dict = {}  # ir.Type -> spec_of_type
        self._sites: dict = {}  # (code, instruction) -> the ir.Location of that call site
        self.reemitting: list = []  # old ir.Value -> Tensor maps of the regions being re-emitted (see reemitted)
        self.default_loc: ir.Location | None = None  # (see ``located``)
        self.transform_state = {}

    def type(self, shape, dtype) -> ir.RankedTensorType:
        key = (tuple(shape), dtype)
        t = self._types.get(key)
        if t is None:
            with self.ctx:
                t = self._types[key] = tensor_type(shape, dtype)
        return t

    def type_of(self, spec) -> ir.Type:
        """The ir.Type of a result spec: (shape, dtype), TOKEN or a TupleSpec."""
        try:
            t = self._types.get(spec)  # (a Spec is its own key: (shape tuple, dtype))
        except TypeError:  # (a list shape)
            t = None
        if t is not None:
            return t
        if spec is TOKEN:
            with self.ctx:
                return token_type()
        if isinstance(spec, TupleSpec):
            with self.ctx:
                return tuple_type([self.type_of(e) for e in spec.elements])
        return self.type(*spec)

    def tensor(self, value: ir.Value) -> "Tensor | Value":
        """A Tensor for an existing SSA value (its shape and dtype read from its type); a Value
        for a token or a tuple."""
        t = value.type
        spec = self._specs.get(t)
        if spec is None:  # (types live as long as the context: AD asks for every value of a tape)
            spec = self._specs[t] = spec_of_type(t)
        if is_opaque(spec):
            return Value(value, spec, self)
        if None in spec[0]:  # (a dynamic dimension: Tensor() says so)
            return Tensor(value, *spec, self)
        return Tensor.of_spec(value, spec, self)

    def reemitted(self, value: ir.Value, values: dict):
        """The Tensor standing for ``value`` of a region being re-emitted: from ``values`` (the
        region's own), else from the enclosing regions being re-emitted (a loop body reading a value
        of the function around it), else ``value`` itself (re-emitting into the module holding it)."""
        t = values.get(value)
        if t is not None:
            return t
        for outer in reversed(self.reemitting):
            t = outer.get(value)
            if t is not None:
                return t
        return self.tensor(value)

    @contextlib.contextmanager
    def at(self, block: ir.Block, scope: "_Scope | None" = None, isolated: bool = False):
        """Emit at the end of ``block`` for the duration. With ``scope``, Tensors made meanwhile
        belong to it; ``isolated`` hides the Tensors of every enclosing scope."""
        saved = self.ip, self.scope, self.visible
        self.ip = ir.InsertionPoint(block)
        if scope is not None:
            self.scope = scope
            self.visible = {scope} if isolated else self.visible | {scope}
        try:
            yield
        finally:
            self.ip, self.scope, self.visible = saved
            if scope is not None:
                scope.closed = True

    def located(self, loc: ir.Location) -> "_Located":
        """A context manager: ops emitted meanwhile without a ``loc`` of their own get ``loc``
        instead of the user's call site (AD gives a rule's ops the location of the op it
        differentiates)."""
        return _Located(self, loc)

    def location(self, loc=None) -> ir.Location:
        """A builder's ``loc`` argument as an ``ir.Location`` (None: ``located``'s, else the user's call site)."""
        if loc is not None:
            return user_location(loc)
        return self.default_loc if self.default_loc is not None else call_site(self._sites)

    def emit(self, name, operands, results, attributes=None, loc=None, regions=0) -> ir.Operation:
        """Create one op ``name`` at the insertion point.

        ``results`` is a list of (shape, dtype), TOKEN or TupleSpec; ``loc`` is a builder's ``loc`` argument.
        """
        with self.ctx:
            op = ir.Operation.create(
                name,
                results=[self.type_of(r) for r in results],
                operands=[o.value if isinstance(o, (Tensor, Value)) else o for o in operands],
                attributes=attributes,
                regions=regions,
                loc=self.location(loc),
                ip=self.ip,
            )
        return op

    def region(self, op: ir.Operation, index: int, arguments, body, results, what: str, *,
               isolated: bool = True, describe: str | None = None, loc=None) -> None:
        """Trace ``body`` into region ``index`` of ``op`` and end it with ``stablehlo.return``.

        ``arguments``: (shape, dtype) of each block argument, passed to ``body`` as Tensors.
        ``results``: the (shape, dtype) each returned leaf must have (a pytree of Tensors or
        scalars; scalars become constants of the expected dtype). ``isolated``: the body may not
        use Tensors from outside it (StableHLO reduce/sort bodies cannot capture values).
        ``describe``: the expected results in words, for the error message.
        Raises TypeError naming the leaf, the expected and the actual type; the caller erases
        ``op`` when this raises.
        """
        arg_types = [self.type(s, d) for s, d in arguments]
        reducer = getattr(body, "reducer", None)
        if reducer is not None and len(arguments) == 2 and list(results) == [arguments[0]]:
            return self._reducer_region(op, index, reducer, arguments, arg_types, loc)
        block = op.regions[index].blocks.append(*arg_types)
        scope = _Scope(what)
        with self.at(block, scope, isolated):
            args = [Tensor(v, s, d, self) for v, (s, d) in zip(block.arguments, arguments)]
            out = body(*args)
            leaves = tree_util.tree_leaves(out)
            expected = describe or f"{len(results)} value(s) of types {_types_str(results)}"
            if len(leaves) != len(results):
                raise TypeError(f"{what} must return {expected}, got {len(leaves)} value(s): {out!r}")
            outs = []
            for i, (leaf, (shape, dtype)) in enumerate(zip(leaves, results)):
                t = as_tensor(leaf, dtype if not isinstance(leaf, Tensor) else None,
                              what=f"{what} output {i}")
                if t.shape != tuple(shape) or t.dtype != dtype:
                    raise TypeError(f"{what} must return {expected}, got {out!r}; output {i} has type "
                                    f"{_type_str(t.shape, t.dtype)}, expected {_type_str(shape, dtype)}")
                outs.append(t)
            self.emit("stablehlo.return", outs, [], loc=loc)

    def _reducer_region(self, op, index, reducer, arguments, arg_types, loc) -> None:
        """A region ``return f(arg0, arg1)`` for ``reducer`` = (f's op name, its rule check): reduce's
        named bodies ("add", "max", ...), built directly rather than traced."""
        name, check = reducer
        check(tuple(arguments[0]))  # (the op's rule, as tracing the body would run it)
        block = op.regions[index].blocks.append(*arg_types)
        with self.ctx:
            where = self.location(loc)
            ip = ir.InsertionPoint(block)
            combined = ir.Operation.create(name, results=[arg_types[0]], operands=list(block.arguments),
                                           loc=where, ip=ip)
            ir.Operation.create("stablehlo.return", results=[], operands=[combined.result], loc=where, ip=ip)


class _Scope:
    """Where Tensors were made: a trace's function body or one region body."""
    __slots__ = ("what", "closed")

    def __init__(self, what: str):
        self.what, self.closed = what, False


class _Located:
    """``Builder.located`` (a class, not a generator: AD enters one per differentiated op)."""
    __slots__ = ("builder", "loc", "saved")

    def __init__(self, builder, loc):
        self.builder, self.loc = builder, loc

    def __enter__(self):
        self.saved, self.builder.default_loc = self.builder.default_loc, self.loc

    def __exit__(self, *exc):
        self.builder.default_loc = self.saved


def _type_str(shape, dtype) -> str:
    return f"{np.dtype(dtype).name}[{', '.join(map(str, shape))}]"


def _types_str(specs) -> str:
    return "(" + ", ".join(_type_str(s, d) for s, d in specs) + ")"


class NoTraceError(RuntimeError):
    """An op builder was called outside a trace (``frontend/eager.py`` then compiles the call)."""


def current_builder(what: str = "this op") -> Builder:
    stack = getattr(_state, "stack", None)
    if not stack:
        raise NoTraceError(
            f"{what} builds IR and needs an active trace: call it inside a function "
            "passed to hloforge.trace or hloforge.jit")
    return stack[-1]


def is_tracing() -> bool:
    """Whether this thread is inside a trace (ops build IR rather than run)."""
    return bool(getattr(_state, "stack", None))


@contextlib.contextmanager
def active(builder: Builder):
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    stack.append(builder)
    try:
        yield builder
    finally:
        stack.pop()


class Tensor:
    """A symbolic value in the function being traced: an SSA value with a static shape and dtype.

    Operators follow numpy (``+ - * / // % ** @``, comparisons, indexing) and
    emit StableHLO through :mod:`hloforge.numpy`.

    ``weak``: weakly typed, as a Python scalar is (NEP 50, jax's weak types): hf.jit's Python scalar
    arguments, and hloforge.numpy's results computed from them that jax keeps weak; promotion
    (``dtypes.result_type``) lets the other operand's dtype win, so ``x_f32 * lr`` is float32.
    """
    __slots__ = ("value", "shape", "dtype", "builder", "scope", "weak")
    __array_ufunc__ = None  # so that ndarray <op> Tensor defers to Tensor's reflected operator

    def __init__(self, value: ir.Value, shape, dtype, builder: Builder):
        self.value = value
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.builder = builder
        self.scope = builder.scope
        self.weak = False

    @classmethod
    def of_spec(cls, value: ir.Value, spec, builder: Builder) -> "Tensor":
        """A Tensor of a canonical (tuple shape of ints, np.dtype) spec, taken without conversion."""
        t = object.__new__(cls)
        t.value, (t.shape, t.dtype), t.builder, t.scope = value, spec, builder, builder.scope
        t.weak = False
        return t

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __repr__(self):
        weak = ", weak_type=True" if self.weak else ""
        return f"Tensor(shape={self.shape}, dtype={self.dtype.name}{weak})"

    def __bool__(self):
        raise TypeError(
            f"the truth value of a traced Tensor is unknown at trace time ({self!r}; Python `if`, "
            "`while`, `and`/`or`/`not` and bool() need a concrete value): use hloforge.lax.cond or "
            "hloforge.lax.while_loop for control flow, hloforge.numpy.where to select values")

    def __int__(self):
        raise TypeError(
            f"int() of a traced {self!r}: its value is unknown at trace time; keep it a Tensor "
            "(hloforge.numpy.astype), index with it directly, or branch with hloforge.lax.cond / "
            "hloforge.numpy.where")

    def __index__(self):
        raise TypeError(
            f"a traced {self!r} cannot be used as a Python integer (range(), list indexing, "
            "shapes): its value is unknown at trace time; use hloforge.lax.fori_loop for loops "
            "and index Tensors with Tensors, or branch with hloforge.lax.cond / hloforge.numpy.where")

    def __float__(self):
        raise TypeError(f"float() of a traced {self!r}: its value is unknown at trace time; "
                        "keep it a Tensor (hloforge.numpy.astype)")

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            f"cannot convert a traced {self!r} to a numpy array: its value is only known when the "
            "compiled function runs. Inside hloforge.jit/trace use hloforge.numpy (hnp.asarray, "
            "hnp.sum, ...) instead of numpy functions")

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d Tensor")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    __hash__ = object.__hash__


class JaxGotTensorError(TypeError):
    """A jax function was given a traced Tensor (``jax_got_tensor``)."""


_JAX_DIRS = tuple(os.path.dirname(m.__file__) + os.sep for m in (jax, jaxlib))
_STDLIB = os.path.dirname(os.__file__) + os.sep
_TENSOR_TYPE_TEXT = str(Tensor)  # ("<class 'hloforge.frontend.tracing.Tensor'>", as jax's messages show it)


def _user_code(filename: str) -> bool:
    return not (is_internal(filename) or filename.startswith(_JAX_DIRS) or filename.startswith(_STDLIB))


def _site(frames) -> str:
    """" at FILE:LINE: `source`" for the innermost of ``frames`` (outermost first) in user code, or ""."""
    found = None
    for code, line in frames:
        if _user_code(code.co_filename):
            found = (code.co_filename, line)
    if found is None:
        return ""
    text = linecache.getline(*found).strip()
    return f" at {found[0]}:{found[1]}" + (f": `{text}`" if text else "")


def jax_got_tensor(x=None, site: str | None = None) -> JaxGotTensorError:
    """The error for a traced Tensor ``x`` passed to a jax function (``site``: where, else the innermost
    user frame on the stack)."""
    if site is None:
        frames, frame = [], sys._getframe(1)
        while frame is not None:
            frames.append((frame.f_code, frame.f_lineno))
            frame = frame.f_back
        site = _site(reversed(frames))
    what = "a traced Tensor" if x is None else f"the traced {x!r}"
    return JaxGotTensorError(
        f"hloforge: {what} was passed to a jax function{site}; jax cannot compute on hloforge Tensors. Inside "
        f"hf.jit and hf.trace use hloforge.numpy, hloforge.lax or hloforge.nn (hnp.sin for jnp.sin), or wrap the "
        f"jax code in a function and call hf.from_jax(that function) on the Tensors")


def jax_error_of_tensor(error: TypeError) -> "JaxGotTensorError | None":
    """``jax_got_tensor``'s error when ``error`` is jax's about a traced Tensor (jax wraps the one its
    tables raise, ``jax_api.refuse_type``, or says "got <class ...Tensor>"), else None."""
    if isinstance(error, JaxGotTensorError):
        return None  # (already said)
    seen, e = set(), error
    while e is not None and id(e) not in seen:
        if isinstance(e, JaxGotTensorError):
            return JaxGotTensorError(*e.args)
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    if _TENSOR_TYPE_TEXT not in str(error):
        return None
    tb, frames = error.__traceback__, []
    while tb is not None:
        frames.append((tb.tb_frame.f_code, tb.tb_lineno))
        tb = tb.tb_next
    return jax_got_tensor(site=_site(frames))


jax_api.refuse_type(Tensor, jax_got_tensor)


class _TokenSpec:
    """The abstract value of a ``!stablehlo.token`` (the one instance is TOKEN)."""
    __slots__ = ()

    def __repr__(self):
        return "Token"

    def __reduce__(self):
        return "TOKEN"


TOKEN = _TokenSpec()


class TupleSpec(NamedTuple):
    """The abstract value of a ``tuple<...>``: its elements' specs ((shape, dtype), TOKEN or TupleSpec)."""
    elements: tuple

    def __repr__(self):
        return f"Tuple({', '.join(_spec_str(e) for e in self.elements)})"


def is_opaque(spec) -> bool:
    """Whether ``spec`` describes a token or a tuple (not a tensor)."""
    return spec is TOKEN or isinstance(spec, TupleSpec)


def _spec_str(spec) -> str:
    return repr(spec) if is_opaque(spec) else f"Tensor(shape={tuple(spec[0])}, dtype={np.dtype(spec[1]).name})"


def spec_of_type(t: ir.Type):
    """(shape, dtype) of a ranked tensor type, TOKEN or a TupleSpec; TypeError for anything else."""
    if is_token_type(t):
        return TOKEN
    elements = tuple_element_types(t)
    if elements is not None:
        return TupleSpec(tuple(spec_of_type(e) for e in elements))
    return shape_dtype_of(t)


class Value:
    """A symbolic token or tuple of the function being traced: an SSA value that is not a tensor.

    ``spec`` is TOKEN or a TupleSpec. Only ``ops.after_all``, ``ops.tuple`` and
    ``ops.get_tuple_element`` (and ops that take tokens) accept them.
    """
    __slots__ = ("value", "spec", "builder", "scope")

    def __init__(self, value: ir.Value, spec, builder: Builder):
        self.value, self.spec, self.builder, self.scope = value, spec, builder, builder.scope

    @property
    def is_token(self) -> bool:
        return self.spec is TOKEN

    def __len__(self):
        if self.is_token:
            raise TypeError("len() of a Token")
        return len(self.spec.elements)

    def __repr__(self):
        return _spec_str(self.spec)

    def __bool__(self):
        raise TypeError(f"the truth value of a traced {self!r} is undefined")

    __hash__ = object.__hash__


def constant(value, dtype=None, *, loc=None) -> Tensor:
    """Emit ``stablehlo.constant`` for an array-like ``value`` (splats stay compact)."""
    b = current_builder("constant")
    array = np.asarray(value, dtype=None if dtype is None else dtypes.canonical(dtype))
    d = dtypes.canonical(array.dtype)
    with b.ctx:
        attr = dense(array, array.shape)
    op = b.emit("stablehlo.constant", [], [(array.shape, d)], {"value": attr}, loc=loc)
    return Tensor(op.result, array.shape, d, b)


def splat(value, dtype, shape, *, reuse: bool = False, what: str = "splat", loc=None) -> Tensor:
    """One ``stablehlo.constant`` of ``shape`` storing one element, ``value`` cast to ``dtype``
    (numpy's cast: 300 in int8 is 44); hloforge's one splat emitter (hloforge.numpy's ``splat``,
    AD's ``full``).

    ``reuse``: return the constant this builder emitted for the same element, shape and dtype in
    the same block and scope, if any (``transform_state["splat"]``); only for callers that never
    insert before an op they emitted (AD's rules). Otherwise one new constant per call.
    """
    b = current_builder(what)
    dtype, shape = dtypes.canonical(dtype), tuple(int(s) for s in shape)
    element = np.asarray(value).astype(dtype).reshape(1)
    cache = key = None
    if reuse:
        cache = b.transform_state.setdefault("splat", {})
        key = (b.scope, b.ip.block, element.tobytes(), shape, dtype)
        hit = cache.get(key)
        if hit is not None:
            return hit
    with b.ctx:
        attr = dense(element, shape)
    op = b.emit("stablehlo.constant", [], [(shape, dtype)], {"value": attr}, loc=loc)
    t = Tensor(op.result, shape, dtype, b)
    if reuse:
        cache[key] = t
    return t


def refuse_masked(x, what: str) -> None:
    """ValueError for a numpy masked array (``np.asarray`` would drop its mask silently), as jax refuses one."""
    if isinstance(x, np.ma.MaskedArray):
        raise ValueError(f"{what}: numpy masked arrays are not supported (their mask would be ignored); use "
                         f"x.filled(value) for a plain array, or pass the mask as an array of its own")


def as_tensor(x, dtype=None, *, what="operand", loc=None) -> Tensor:
    """``x`` if it is a Tensor of this trace; array-likes become constants (of ``dtype`` if given)."""
    if isinstance(x, Tensor):
        stack = getattr(_state, "stack", None)
        if stack and x.builder is stack[-1] and x.scope is stack[-1].scope:
            return x  # (the common case: made in the body being traced)
        return _of_this_trace(x, what)
    if isinstance(x, Value):
        raise TypeError(f"{what}: expected a tensor, got a {x!r} (tokens and tuples go only to ops that "
                        "take them: ops.after_all, ops.get_tuple_element, ...)")
    refuse_masked(x, what)
    w = dtypes.weak_type(x)
    if w is not None:
        if dtype is not None:
            dtypes.check_scalar_fits(x, np.dtype(dtype), what)
        elif w is int:
            dtype = dtypes.python_int_dtype(x, what)
    try:
        array = np.asarray(x) if dtype is None else np.asarray(x, dtype=dtype)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what}: cannot convert {type(x).__name__} to a tensor ({e})") from None
    if array.dtype == object:
        big = next((v for v in array.reshape(-1) if type(v) is int and not -2**63 <= v < 2**64), None)
        if big is not None:
            raise OverflowError(f"{what}: Python int {big} too large to convert to int64 or uint64")
        raise TypeError(f"{what}: cannot convert {type(x).__name__} to a tensor")
    if dtype is None and dtypes.mode() == "jax" and type(x) in (list, tuple) and array.dtype.itemsize == 8 \
            and array.dtype.kind in "iu" and array.size:
        dtypes.check_ints_fit(array, what)  # (jax makes int32 of Python ints, and refuses what does not fit)
    if dtype is None and w is not None:
        array = array.astype(dtypes.result_type(x))
    return constant(array, loc=loc)


def _of_this_trace(x, what):
    b = current_builder(what)
    kind = "Tensor" if isinstance(x, Tensor) else "Value"
    if x.builder is not b:
        raise ValueError(f"{what}: {kind} {x} belongs to another trace (a leaked tracer)")
    if x.scope not in b.visible:
        where = "has ended" if x.scope.closed else "is not visible here"
        raise ValueError(f"{what}: {kind} {x} was made in {x.scope.what}, which {where}; pass it "
                         "in as an operand or return it from that body instead (a leaked tracer)")
    return x


def as_value(x, *, what="operand"):
    """``x`` if it is a Tensor or a Value (token, tuple) of this trace; array-likes become constants."""
    if isinstance(x, Value):
        return _of_this_trace(x, what)
    return as_tensor(x, what=what)
