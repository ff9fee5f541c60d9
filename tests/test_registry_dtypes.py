"""Every op's evaluate (what constant folding computes) against PJRT, bit for bit, for every dtype
the op takes, on random values and on edge values (0, -0, subnormals, inf, NaN, max, min, values next
to overflow). An evaluated result must equal both what XLA:CPU's kernels compute (the values passed
as arguments) and what XLA's own constant folder computes (the same values as constants): the two
differ (flushed subnormals, transcendental functions, NaN bits, a few folder bugs), and constant
folding must never change a result whichever of them would have computed it. Each dtype's cases run
as one module per path."""
from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
import pytest

import hloforge as hf
from hloforge import ops
from hloforge.frontend import dtypes, registry
from hloforge.frontend.registry import OPS

from helpers import ALL_DTYPES

N = 24  # values per row
# the rows of values; integers have random, special, small (shift counts) and small-signed rows
ROWS = ("random", "special", "NaN", "subnormal")


@dataclasses.dataclass
class Case:
    name: str
    args: tuple          # numpy arrays (elementwise cases: one row per entry of ROWS)
    params: dict         # builder keyword arguments
    per_row: bool = False

    def evaluations(self) -> list:
        """[(where, evaluate's result or None)]: ``where`` indexes the op's results. An elementwise
        case is evaluated row by row, and lane by lane in a row it declines (a lane that folds
        alone must be right too)."""
        if getattr(self, "_evaluations", None) is None:
            self._evaluations = self._evaluate()
        return self._evaluations

    def _evaluate(self) -> list:
        info = OPS[self.name]
        params = info.params(**self.params)
        if not self.per_row:
            return [((), info.evaluate(*self.args, **params))]
        out = []
        for r in range(len(ROWS)):
            out.append(((r,), info.evaluate(*(a[r] for a in self.args), **params)))
            if out[-1][1] is None:
                for where in [(r, slice(j, j + 1)) for j in range(N)]:
                    out.append((where, info.evaluate(*(a[where] for a in self.args), **params)))
        return out

    def build(self, operands):
        info = OPS[self.name]
        out = info.builder(*info.arrange(list(operands)), **self.params)
        return list(out) if isinstance(out, (list, tuple)) else [out]


# ---------------------------------------------------------------- values

def _finfo(dtype):
    return ml_dtypes.finfo(dtype if dtype.kind != "c" else dtypes.real_dtype(dtype))


def _float_rows(dtype, rng) -> list:
    fi = _finfo(dtype)
    tiny, big, sub = float(fi.tiny), float(fi.max), float(fi.smallest_subnormal)
    random = rng.uniform(-4, 4, N) * 10.0 ** rng.integers(-3, 4, N)
    random[:6] = [0.5, -0.5, 1.5, 2.5, -2.5, 3.0]  # (ties for the roundings)
    special = [0.0, -0.0, np.inf, -np.inf, tiny, -tiny, big, -big, big / 2, -0.75 * big, np.sqrt(big) * 1.5,
               2.0 ** (fi.nmant + 1) + 2, 2.0 ** (fi.nmant + 1) + 1, 1.0, -1.0, 1 + 2.0 ** -fi.nmant]
    nan = [np.nan, -np.nan, np.nan, np.inf, -0.0, big]
    subnormal = [tiny / 4, -tiny / 2, tiny * (1 - 2.0 ** -3), sub, -sub, tiny, tiny * 1.5, 2.0 * tiny]
    out = []
    for row in (random, special, nan, subnormal):
        row = np.array(list(row) + list(rng.uniform(-4, 4, N - len(row))))
        out.append(rng.permutation(row))
    return out


def _int_rows(dtype, rng) -> list:
    info = np.iinfo(dtype)
    bits = info.bits
    special = [0, 1, 2, 3, 7, info.max, info.min, info.max - 1, bits - 1, bits, bits + 1]
    special += [-1, -2, -7, info.min + 1] if dtype.kind == "i" else [info.max // 2 + 1]
    random = rng.integers(info.min, info.max, N, endpoint=True, dtype=dtype)
    special = np.array(special + list(rng.integers(info.min, info.max, N - len(special), endpoint=True,
                                                   dtype=dtype)), dtype)
    small = rng.integers(0, 9, N).astype(dtype)
    signed = rng.integers(-8 if dtype.kind == "i" else 0, 9, N).astype(dtype)
    return [random, rng.permutation(special), small, signed]


def values(dtype, seed) -> np.ndarray:
    """(len(ROWS), N) values of ``dtype``."""
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return np.stack([rng.random(N) < 0.5 for _ in ROWS])
    if dtype.kind in "iu":
        return np.stack(_int_rows(dtype, rng))
    rows = np.stack(_float_rows(dtype, rng))
    if dtype.kind == "c":  # (real + 1j * imag would turn an infinite imaginary part into a NaN real part)
        parts = rows
        rows = np.empty(parts.shape, np.complex128)
        rows.real, rows.imag = parts, rng.permuted(parts, axis=1)
    with np.errstate(all="ignore"):
        return rows.astype(dtype)


# ---------------------------------------------------------------- cases

REDUCE_PRECISION_FORMATS = ((5, 10), (8, 7), (5, 0), (2, 1), (4, 3), (8, 0), (11, 52), (8, 23))


def _accepts(name, specs, params) -> bool:
    try:
        OPS[name].rule(*specs, **params)
    except (TypeError, ValueError):
        return False
    return True


def _elementwise_cases(dtype, x, y, z) -> list:
    """Every elementwise op with an evaluate that takes ``dtype``, per row."""
    pred = np.random.default_rng(7).random(x.shape) < 0.5
    out = []
    for name in registry.names("elementwise"):
        if OPS[name].evaluate is None:
            continue
        arity = 1 if "unary" in OPS[name].traits else 2
        variants = [{}]
        if name == "stablehlo.compare":
            directions = ("EQ", "NE", "LT", "LE", "GT", "GE") if dtype.kind in "fV" else ("EQ", "NE", "LT", "GE")
            variants = [{"direction": d} for d in directions]
        elif name == "stablehlo.convert":
            variants = [{"dtype": t} for t in ALL_DTYPES]
        elif name == "stablehlo.reduce_precision":
            variants = [{"exponent_bits": e, "mantissa_bits": m} for e, m in REDUCE_PRECISION_FORMATS]
        for params in variants:
            if name == "stablehlo.select":
                args = (pred, x, y)
            elif name == "stablehlo.clamp":
                args = (np.minimum(x, y), z, np.maximum(x, y)) if dtype.kind != "c" else (x, z, y)
            elif name in ("stablehlo.divide", "stablehlo.remainder") and dtype.kind in "iu":
                # (XLA's folder kills the process on an integer x / 0 and MIN / -1; evaluate declines both)
                args = (x, np.where((y == 0) | (y == np.array(-1).astype(dtype)), np.array(3, dtype), y))
            elif name == "stablehlo.sqrt" and dtype.kind != "c":
                args = (np.abs(x),)  # (a negative gives NaN, which evaluate leaves to the backend)
            else:
                args = (x, y)[:arity]
            if _accepts(name, [(a.shape, a.dtype) for a in args], params):
                out.append(Case(name, args, params, per_row=True))
    return out


def _i32(v):
    return np.array(v, np.int32)


def _movement_cases(dtype, m, t) -> list:
    """Data movement on ``m`` (edge values, 6 x 12) and ``t`` (random values, 6 x 8)."""
    return [
        Case("stablehlo.pad", (m, m[0, 5]), dict(low=(1, -1), high=(-1, 2), interior=(1, 0))),
        Case("stablehlo.slice", (m,), dict(start_indices=(0, 1), limit_indices=(5, 12), strides=(2, 3))),
        Case("stablehlo.reverse", (m,), dict(dimensions=(0, 1))),
        Case("stablehlo.transpose", (m,), dict(permutation=(1, 0))),
        Case("stablehlo.reshape", (m,), dict(shape=(8, 9))),
        Case("stablehlo.broadcast_in_dim", (m[0],), dict(shape=(2, 12, 3), broadcast_dimensions=(1,))),
        Case("stablehlo.concatenate", (m[:, :8], t[:2]), dict(dimension=0)),
        Case("stablehlo.dynamic_slice", (m, _i32(4), _i32(-1)), dict(slice_sizes=(3, 2))),
        Case("stablehlo.dynamic_update_slice", (m, t[:2, :3], _i32(5), _i32(6)), {}),
        Case("stablehlo.gather", (m, np.array([[3, 5], [0, -2], [5, 11]], np.int32)),
             dict(offset_dims=(1,), collapsed_slice_dims=(0,), operand_batching_dims=(),
                  start_indices_batching_dims=(), start_index_map=(0, 1), index_vector_dim=1, slice_sizes=(1, 3),
                  indices_are_sorted=False)),
    ] + ([Case("stablehlo.iota", (), dict(shape=(2, 300), dtype=dtype, dimension=1))]
         if _accepts("stablehlo.iota", [], dict(shape=(2, 300), dtype=dtype, dimension=1)) else [])


def _scatter(x, indices, updates, computation, window=False):
    dims = dict(update_window_dims=(1,), inserted_window_dims=(0,)) if window else dict(
        update_window_dims=(), inserted_window_dims=(0,))
    return Case("stablehlo.scatter", (x, indices, updates),
                dict(**dims, input_batching_dims=(), scatter_indices_batching_dims=(), scatter_dims_to_operand_dims=(0,),
                     index_vector_dim=1, computation=computation, indices_are_sorted=False, unique_indices=False))


def _identity(body, dtype) -> np.ndarray:
    if dtype == np.bool_:
        return np.array(body in ("mul", "and", "min"))
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.array({"add": 0, "mul": 1, "max": info.min, "min": info.max, "or": 0,
                         "and": -1 if dtype.kind == "i" else info.max}[body], dtype)
    return np.array({"add": 0.0, "mul": 1.0, "max": -np.inf, "min": np.inf}[body]).astype(dtype)


def _reduction_cases(dtype, m, t, s) -> list:
    spec = (t.shape, dtype)
    out = []
    for body in ("add", "mul", "max", "min", "and", "or"):
        if not _accepts("stablehlo.reduce", [spec, ((), dtype)], dict(dimensions=(1,), body=body)):
            continue
        init = _identity(body, dtype)
        out += [Case("stablehlo.reduce", (t, init), dict(dimensions=(1,), body=body)),
                Case("stablehlo.reduce", (t[:, :1], init), dict(dimensions=(1,), body=body)),
                Case("stablehlo.reduce", (s[:, :3], init), dict(dimensions=(1,), body=body)),
                Case("stablehlo.reduce", (m, init), dict(dimensions=(0,), body=body))]
        if body in ("add", "max"):
            out += [Case("stablehlo.reduce", (t[:, :1], t[1, 1]), dict(dimensions=(1,), body=body)),  # (no identity)
                    _scatter(t[0, :5], np.array([[1], [1], [4], [9]], np.int32), t[1, :4], body)]
    window = dict(window_strides=(1, 2), base_dilations=None, window_dilations=None, padding=((0, 0), (1, 1)))
    zero = np.zeros((), dtype)
    low = np.array(-np.inf).astype(dtype) if dtype.kind in "fV" else np.array(
        np.iinfo(dtype).min if dtype.kind in "iu" else False, dtype)
    for x, init, size, body in ((t, zero, (1, 2), "add"), (s, zero, (2, 3), "add"), (m, zero, (2, 1), "add"),
                                (m, low, (2, 3), "max")):
        params = dict(window_dimensions=size, body=body, **window)
        if _accepts("stablehlo.reduce_window", [spec, ((), dtype)], params):
            out.append(Case("stablehlo.reduce_window", (x, init), params))
    out.append(_scatter(m[:3, :8], np.array([[2], [0]], np.int32), t[:2], "set", window=True))
    if _accepts("stablehlo.select_and_scatter", [spec, ((3, 4), dtype), ((), dtype)],
                dict(window_dimensions=(2, 2), window_strides=(2, 2), padding=((0, 0), (0, 0)), select="GE",
                     scatter="add")):
        out.append(Case("stablehlo.select_and_scatter", (t, t[:3, :4], np.zeros((), dtype)),
                        dict(window_dimensions=(2, 2), window_strides=(2, 2), padding=((0, 0), (0, 0)), select="GE",
                             scatter="add")))
    return out


def _sort_cases(dtype, m, t) -> list:
    top_k = [Case("chlo.top_k", (t,), dict(k=3)), Case("chlo.top_k", (m,), dict(k=12))] \
        if _accepts("chlo.top_k", [(t.shape, dtype)], dict(k=3)) else []
    if not _accepts("stablehlo.sort", [(t.shape, dtype)], dict(dimension=1, comparator="LT", is_stable=False)):
        return []
    return top_k + [Case("stablehlo.sort", (t,), dict(dimension=1, comparator="LT", is_stable=False)),
            Case("stablehlo.sort", (t, m[:, :8]), dict(dimension=0, comparator="GT", is_stable=True)),
            Case("stablehlo.sort", (m,), dict(dimension=1, comparator="LT", is_stable=True))]


def _dot(lhs, rhs):
    return Case("stablehlo.dot_general", (lhs, rhs), dict(
        lhs_batching_dimensions=(), rhs_batching_dimensions=(), lhs_contracting_dimensions=(1,),
        rhs_contracting_dimensions=(0,), precision=None))


def _contraction_cases(dtype, s, t) -> list:
    if not _accepts("stablehlo.dot_general", [((2, 3), dtype), ((3, 2), dtype)], dict(
            lhs_batching_dimensions=(), rhs_batching_dimensions=(), lhs_contracting_dimensions=(1,),
            rhs_contracting_dimensions=(0,))):
        return []
    out = [_dot(s[:3, :6], s[:, :4]), _dot(t[:3, :6], t[:, :4]), _dot(s[:3, :0], s[:0, :4])]
    conv = dict(dimension_numbers=ops.ConvDimensions.default(3), window_strides=(2,), padding=((1, 2),),
                lhs_dilation=(1,), rhs_dilation=(2,), window_reversal=(True,), feature_group_count=2,
                batch_group_count=1, precision=None)
    if _accepts("stablehlo.convolution", [((1, 4, 6), dtype), ((2, 2, 2), dtype)], conv):
        out.append(Case("stablehlo.convolution", (s[:4, :6].reshape(1, 4, 6), s[4:, :4].reshape(2, 2, 2)), conv))
    return out


def _spectral_and_linalg_cases(dtype, t) -> list:
    out = []
    kind = "RFFT" if dtype.kind == "f" else "FFT"
    for lengths in ((8,), (1,)):
        x = t[:, :lengths[0]]
        if _accepts("stablehlo.fft", [(x.shape, dtype)], dict(fft_type=kind, fft_length=lengths)):
            out.append(Case("stablehlo.fft", (x,), dict(fft_type=kind, fft_length=lengths)))
    if dtype in (np.float32, np.float64, np.complex64, np.complex128):  # (what XLA compiles)
        spd = (t[:4, :4] @ t[:4, :4].T.conj() + 4 * np.eye(4)).astype(dtype)
        out += [Case("stablehlo.cholesky", (spd,), dict(lower=True)),
                Case("stablehlo.cholesky", (np.zeros((2, 0, 0), dtype),), dict(lower=False)),
                Case("stablehlo.triangular_solve", (spd, t[:4, :3]), dict(left_side=True, lower=True,
                                                                           unit_diagonal=False,
                                                                           transpose_a="NO_TRANSPOSE")),
                Case("stablehlo.triangular_solve", (spd, t[:4, :0]), dict(left_side=True, lower=False,
                                                                           unit_diagonal=True,
                                                                           transpose_a="TRANSPOSE"))]
    return out


def _bitcast_cases(dtype, m) -> list:
    if dtype.kind not in "iufV":
        return []
    out = []
    for target in ALL_DTYPES:
        if target.kind in "iufV" and target.itemsize == dtype.itemsize and target != dtype:  # (no complex)
            out.append(Case("stablehlo.bitcast_convert", (m,), dict(dtype=target)))
    if dtype.itemsize > 1:
        out.append(Case("stablehlo.bitcast_convert", (m,), dict(dtype=np.dtype(np.uint8))))
    wider = [t for t in ALL_DTYPES if t.itemsize == 2 * dtype.itemsize and t.kind in "iuf"]
    if wider:
        out.append(Case("stablehlo.bitcast_convert", (m[:, :8].reshape(6, 4, 2),), dict(dtype=wider[-1])))
    return out


def _small(dtype) -> np.ndarray:
    rng = np.random.default_rng(4)
    if dtype == np.bool_:
        return rng.random((6, 8)) < 0.5
    v = rng.integers(-8 if dtype.kind == "i" else 0, 9, (6, 8)).astype(np.float64)
    if dtype.kind not in "iu":
        v = v / 2 + 0.5  # (positive: a zero float sum declines)
    if dtype.kind == "c":
        v = v + 1j * v[::-1]
    return v.astype(dtype)


def cases(dtype) -> list:
    x, y, z = values(dtype, 1), values(dtype, 2), values(dtype, 3)
    m = x[1:].reshape(6, 12)                         # edge values: special, NaN (small ints), subnormal
    t = np.concatenate([y[0], z[0]]).reshape(6, 8)   # random values
    s = _small(dtype)                                 # small integers and halves: exact float sums
    return (_elementwise_cases(dtype, x, y, z) + _movement_cases(dtype, m, t) + _reduction_cases(dtype, m, t, s)
            + _sort_cases(dtype, m, t) + _contraction_cases(dtype, s, t) + _spectral_and_linalg_cases(dtype, t)
            + _bitcast_cases(dtype, m) + _bitcast_cases(dtype, t))


# ---------------------------------------------------------------- running and comparing

def _as_words(t) -> list:
    """A result's bits as flat uint64 Tensors (a complex one as its real and imaginary parts)."""
    if t.dtype.kind == "c":
        return _as_words(ops.real(t)) + _as_words(ops.imag(t))
    if t.dtype != np.bool_:
        t = ops.bitcast_convert(t, np.dtype(f"u{t.dtype.itemsize}"))
    return [ops.reshape(ops.convert(t, np.uint64), (int(np.prod(t.shape)),))]


def _packed(results):
    """Every result's bits in one (K, L) uint64 Tensor, row by row (zero-padded): XLA:CPU fuses
    the ops into a few kernels, which compile several times faster than one kernel per op."""
    words = [w for r in results for w in _as_words(r)]
    length = max(1, max(w.shape[0] for w in words))
    shape = (len(words), length)
    row = ops.iota(shape, np.int32, 0)
    packed = None
    for k, w in enumerate(words):
        w = ops.pad(w, np.uint64(0), (0,), (length - w.shape[0],)) if w.shape[0] < length else w
        w = ops.broadcast_in_dim(w, shape, (1,))
        packed = w if packed is None else ops.select(
            ops.compare(row, ops.broadcast_in_dim(ops.constant(np.int32(k)), shape, ()), "EQ"), w, packed)
    return packed


def _unpacked(packed: np.ndarray, specs) -> list:
    """The results ``_packed`` packed, from their (shape, dtype)s."""
    out, rows = [], iter(packed)

    def part(dtype, size):
        word = next(rows)[:size]
        return word.astype(bool) if dtype == np.bool_ else word.astype(f"u{dtype.itemsize}").view(dtype)

    for shape, dtype in specs:
        size = int(np.prod(shape))
        if dtype.kind == "c":
            value = np.empty(size, dtype)
            value.real, value.imag = part(dtypes.real_dtype(dtype), size), part(dtypes.real_dtype(dtype), size)
        else:
            value = part(dtype, size)
        out.append(value.reshape(shape))
    return out


# How XLA sees a case's operands: "kernels" (arguments, all results packed into one tensor of their
# bits), "constant folder" (constants; an elementwise case's rows and evaluated lanes each on their
# own, since whether XLA folds a constant, and how, depends on all its values: the StableHLO folders
# XLA runs on import decline a constant holding a NaN, and compute sign(-0) as +0 where XLA's
# kernels and evaluator give -0) and, for elementwise cases, the first or the last operand a
# broadcast of a constant and the others constants of the broadcast shape (XLA's algebraic
# simplifier rewrites ops of a non-constant and a constant before folding them, x / c into
# x * (1 / c) among them).
PATHS = ("kernels", "constant folder", "broadcast first operand", "broadcast last operand")


def _operand(a: np.ndarray, path: str, index: int, count: int):
    if path == "constant folder":
        return ops.constant(a)
    broadcast = index == (0 if path == "broadcast first operand" else count - 1)
    if broadcast:
        return ops.broadcast_in_dim(ops.constant(a[None]), (2,) + a.shape, tuple(range(a.ndim + 1)))
    return ops.constant(np.broadcast_to(a, (2,) + a.shape).copy())


def _crashes_xla(case, where) -> bool:
    """XLA's compiler crashes (SIGSEGV) on a convert of a complex splat constant to a real type."""
    x = case.args[0][where]
    return case.name == "stablehlo.convert" and x.dtype.kind == "c" and np.dtype(case.params["dtype"]).kind != "c" \
        and len({v.tobytes() for v in x.reshape(-1)}) == 1


def _units(case_list, path: str) -> list:
    """(case, where): what ``path`` builds one op for; ``where`` selects the operands (None: all)."""
    if path == "constant folder":
        return [(c, where if c.per_row else None) for c in case_list for where, want in c.evaluations()
                if (want is not None or not c.per_row) and not (c.per_row and _crashes_xla(c, where))]
    return [(c, None) for c in case_list if c.per_row or not path.startswith("broadcast")]


def _run(case_list, path: str) -> dict:
    """Results from XLA along ``path`` (one of PATHS): (id(case), where) -> the op's results."""
    units = _units(case_list, path)
    flat = [a if where is None else a[where] for c, where in units for a in c.args]
    counts, specs = [], []

    def program(*operands):
        counts.clear()
        specs.clear()
        outs, i = [], 0
        for c, _ in units:
            args = operands[i:i + len(c.args)]
            if path != "kernels":
                args = [_operand(a, path, k, len(args)) for k, a in enumerate(args)]
            results = c.build(args)
            counts.append(len(results))
            specs.extend((r.shape, r.dtype) for r in results)
            outs += results
            i += len(c.args)
        return _packed(outs) if path == "kernels" else outs

    if path == "kernels":
        results = _unpacked(np.asarray(hf.jit(program, optimize=False)(*flat)), specs)
    else:
        results = [np.asarray(r) for r in hf.trace(lambda: program(*flat)).compile().call_flat([])]
        if path.startswith("broadcast"):
            results = [r[0] for r in results]
    results = iter(results)
    return {_key(c, where): [next(results) for _ in range(n)] for (c, where), n in zip(units, counts)}


def _key(case, where) -> tuple:
    """A dictionary key for ``case`` and the operands ``where`` selects (None: all of them)."""
    return id(case), None if where is None else tuple(w.start if isinstance(w, slice) else w for w in where)


def _bits(a) -> bytes:
    a = np.ascontiguousarray(a)
    return a.dtype.str.encode() + str(a.shape).encode() + a.view(np.uint8).tobytes()


def _mismatch(want, got) -> str | None:
    want, got = np.asarray(want), np.asarray(got)
    if _bits(want) == _bits(got):
        return None
    if want.shape != got.shape or want.dtype != got.dtype:
        return f"{want.dtype}{list(want.shape)} vs {got.dtype}{list(got.shape)}"
    w = np.ascontiguousarray(want).view(np.uint8).reshape(want.size, -1)
    g = np.ascontiguousarray(got).view(np.uint8).reshape(got.size, -1)
    bad = np.flatnonzero((w != g).any(axis=1))
    return f"{len(bad)} of {want.size} differ, e.g. evaluate {want.reshape(-1)[bad[:3]]} vs {got.reshape(-1)[bad[:3]]}"


def _problems(case_list, results: dict) -> list:
    """What differs between evaluate and XLA; ``results``: PATHS entry -> ``_run``'s results."""
    out = []
    for c in case_list:
        for where, want in c.evaluations():
            if want is None:
                continue
            wants = list(want) if isinstance(want, (list, tuple)) else [want]
            for path, by_unit in results.items():
                own = c.per_row and _key(c, where) in by_unit  # (the op on these operands alone)
                got = by_unit.get(_key(c, where) if own else _key(c, None), ())
                for w, g in zip(wants, got):
                    problem = _mismatch(w, g if own else g[where])
                    if problem:
                        at = f" ({ROWS[where[0]]} row{'' if len(where) == 1 else f', lane {where[1].start}'})" \
                            if c.per_row else ""
                        out.append(f"{c.name} {c.params}{at} vs XLA's {path}: {problem}")
    return out


def check(case_list) -> list:
    """Every evaluation of ``case_list`` that differs from XLA along some path."""
    return _problems(case_list, {path: _run(case_list, path) for path in PATHS})


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
def test_evaluate_matches_xla_bit_for_bit(dtype):
    problems = check(cases(dtype))
    assert not problems, f"{len(problems)} evaluations differ from XLA:\n" + "\n".join(problems[:25])


def test_cases_cover_every_evaluated_op():
    """Every op with an evaluate has cases, and evaluate computes (does not decline) some of them."""
    built, evaluated = set(), set()
    for dtype in ALL_DTYPES:
        for c in cases(dtype):
            built.add(c.name)
            if any(v is not None for _, v in c.evaluations()):
                evaluated.add(c.name)
    expected = {n for n, info in OPS.items() if info.evaluate is not None and "non_tensor" not in info.traits
                and n != "stablehlo.constant"}
    assert expected - built == set()
    assert expected - evaluated == set()
