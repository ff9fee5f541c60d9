"""The builder that turns op calls into MLIR: one per trace, active on this thread."""
from __future__ import annotations

import contextlib
import threading

import numpy as np

from hloforge.frontend import dtypes
from hloforge.frontend.context import dense_elements, ir, make_context, tensor_type
from hloforge.frontend.location import user_location

_state = threading.local()


class Builder:
    """Holds the MLIR context, module and insertion block of one trace.

    ``spmd``: the module will be partitioned over a mesh; lowerings that have a choice prefer
    forms XLA's SPMD partitioner shards well over the fastest single-device form.
    """

    def __init__(self, spmd: bool = False):
        self.spmd = spmd
        self.ctx = make_context()
        with self.ctx, ir.Location.unknown():
            self.module = ir.Module.create()
        self.block = self.module.body
        self._types: dict = {}

    def type(self, shape, dtype) -> ir.RankedTensorType:
        key = (tuple(shape), dtype)
        t = self._types.get(key)
        if t is None:
            with self.ctx:
                t = self._types[key] = tensor_type(shape, dtype)
        return t

    @contextlib.contextmanager
    def at(self, block: ir.Block):
        """Emit into ``block`` (a region body) for the duration."""
        saved, self.block = self.block, block
        try:
            yield
        finally:
            self.block = saved

    def emit(self, name, operands, results, attributes=None, loc=None, regions=0) -> ir.Operation:
        """Create one op ``name`` at the end of the current block.

        ``results`` is a list of (shape, dtype); ``loc`` is a builder's ``loc`` argument.
        """
        with self.ctx:
            op = ir.Operation.create(
                name,
                results=[self.type(s, d) for s, d in results],
                operands=[o.value if isinstance(o, Tensor) else o for o in operands],
                attributes=attributes,
                regions=regions,
                loc=user_location(loc),
                ip=ir.InsertionPoint(self.block),
            )
        return op


def current_builder(what: str = "this op") -> Builder:
    stack = getattr(_state, "stack", None)
    if not stack:
        raise RuntimeError(
            f"{what} builds IR and needs an active trace: call it inside a function "
            "passed to hloforge.trace or hloforge.jit")
    return stack[-1]


def has_builder() -> bool:
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
    """
    __slots__ = ("value", "shape", "dtype", "builder")
    __array_ufunc__ = None  # so that ndarray <op> Tensor defers to Tensor's reflected operator

    def __init__(self, value: ir.Value, shape, dtype, builder: Builder):
        self.value = value
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.builder = builder

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __repr__(self):
        return f"Tensor(shape={self.shape}, dtype={self.dtype.name})"

    def __bool__(self):
        raise TypeError(
            "the truth value of a traced Tensor is unknown at trace time; "
            "use hloforge.numpy.where or ops.select instead of Python control flow")

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


def result(op: ir.Operation, index: int, shape, dtype, builder: Builder) -> Tensor:
    return Tensor(op.results[index], shape, dtype, builder)


def constant(value, dtype=None, *, loc=None) -> Tensor:
    """Emit ``stablehlo.constant`` for an array-like ``value`` (splats stay compact)."""
    b = current_builder("constant")
    array = np.asarray(value, dtype=None if dtype is None else dtypes.canonical(dtype))
    d = dtypes.canonical(array.dtype)
    flat = array.reshape(-1)
    with b.ctx:
        if flat.size > 1 and (flat == flat[0]).all():
            attr = dense_elements(flat[:1], shape=array.shape)
        else:
            attr = dense_elements(array)
    op = b.emit("stablehlo.constant", [], [(array.shape, d)], {"value": attr}, loc=loc)
    return Tensor(op.result, array.shape, d, b)


def as_tensor(x, dtype=None, *, what="operand", loc=None) -> Tensor:
    """``x`` if it is a Tensor of this trace; array-likes become constants (of ``dtype`` if given)."""
    if isinstance(x, Tensor):
        if x.builder is not current_builder(what):
            raise ValueError(f"{what}: Tensor {x} belongs to another trace (a leaked tracer)")
        return x
    w = dtypes.weak_type(x)
    if w is not None and dtype is not None:
        dtypes.check_scalar_fits(x, np.dtype(dtype), what)
    try:
        array = np.asarray(x) if dtype is None else np.asarray(x, dtype=dtype)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what}: cannot convert {type(x).__name__} to a tensor ({e})") from None
    if array.dtype == object:
        raise TypeError(f"{what}: cannot convert {type(x).__name__} to a tensor")
    if dtype is None and w is not None:
        array = array.astype(dtypes.result_type(x))
    return constant(array, loc=loc)
