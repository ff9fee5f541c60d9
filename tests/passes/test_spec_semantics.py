"""passes/spec_semantics.py: each pattern fires where XLA:CPU computes otherwise than the StableHLO spec
and nowhere else, the default pipeline and the compile path leave those ops to XLA (jax's values), and
the rewritten programs compute the spec's values (against numpy's, which neither flushes subnormals nor
stores i1 as bytes), through hloforge check too (tests/data/check/spec_*.mlir)."""
import os
import subprocess
import sys

import jax
import ml_dtypes
import numpy as np
import pytest
from jax import lax

import hloforge as hf
from hloforge.passes import spec_semantics
from hloforge.passes.guards import guard_for_xla
from hloforge.runtime import checkfile

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "check")
BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(np.float32), BF16, np.dtype(np.float16), np.dtype(np.float64)]
_MLIR = {np.dtype(np.float32): "f32", BF16: "bf16", np.dtype(np.float16): "f16", np.dtype(np.float64): "f64",
         np.dtype(np.complex64): "complex<f32>", np.dtype(np.complex128): "complex<f64>", np.dtype(np.bool_): "i1",
         np.dtype(np.int16): "i16", np.dtype(np.uint8): "ui8", np.dtype(np.int32): "i32"}


def _t(shape, dtype):
    return f"tensor<{''.join(f'{d}x' for d in shape)}{_MLIR[np.dtype(dtype)]}>"


def _program(ops_, args, attributes=""):
    """A module whose @main takes ``args`` [(shape, dtype)] and returns one result per
    (op name, operand indices, result (shape, dtype)) of ``ops_``, in generic syntax."""
    params = ", ".join(f"%a{i}: {_t(*a)}" for i, a in enumerate(args))
    lines, results = [], []
    for k, (name, operands, result, *attrs) in enumerate(ops_):
        types = ", ".join(_t(*args[i]) for i in operands)
        extra = f" {{{attrs[0]}}}" if attrs else ""
        lines.append(f'  %r{k} = "{name}"({", ".join(f"%a{i}" for i in operands)}){extra} : ({types}) -> {_t(*result)}')
        results.append(result)
    outs = ", ".join(_t(*r) for r in results)
    body = "\n".join(lines)
    names = ", ".join(f"%r{k}" for k in range(len(ops_)))
    return (f"module {attributes} {{\nfunc.func @main({params}) -> ({outs}) {{\n{body}\n"
            f"  return {names} : {outs}\n}}\n}}")


def _one(name, args, result, attrs=None, module_attributes=""):
    return _program([(name, list(range(len(args))), result, *([attrs] if attrs else []))], args, module_attributes)


_GRID = 'attributes {mhlo.num_replicas = 4 : i32, mhlo.num_partitions = 2 : i32}'
_BROADCAST = "replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>"
V4, V2x8 = (4,), (2, 8)
CASES = [
    ("add_of_booleans", True, "i1: the spec's or", _one("stablehlo.add", [(V4, bool)] * 2, (V4, bool))),
    ("add_of_booleans", False, "i32", _one("stablehlo.add", [(V4, np.int32)] * 2, (V4, np.int32))),
    ("ceil_of_subnormal", True, "f32", _one("stablehlo.ceil", [(V4, np.float32)], (V4, np.float32))),
    ("ceil_of_subnormal", True, "bf16", _one("stablehlo.ceil", [(V4, BF16)], (V4, BF16))),
    ("ceil_of_subnormal", False, "the ceil a rewrite kept", _one("stablehlo.ceil", [(V4, np.float32)], (V4, np.float32),
                                                                  spec_semantics.MARKER)),
    ("ceil_of_subnormal", False, "a dynamic shape", 'func.func @main(%x: tensor<?xf64>) -> tensor<?xf64> {\n'
     '  %0 = stablehlo.ceil %x : tensor<?xf64>\n  return %0 : tensor<?xf64>\n}'),
    ("floor_of_subnormal", True, "f64", _one("stablehlo.floor", [(V4, np.float64)], (V4, np.float64))),
    ("floor_of_subnormal", False, "the floor a rewrite kept", _one("stablehlo.floor", [(V4, np.float16)], (V4, np.float16),
                                                                    spec_semantics.MARKER)),
    ("maximum_of_complex", True, "complex64", _one("stablehlo.maximum", [(V4, np.complex64)] * 2, (V4, np.complex64))),
    ("maximum_of_complex", False, "f32 (XLA's is the spec's)", _one("stablehlo.maximum", [(V4, np.float32)] * 2,
                                                                     (V4, np.float32))),
    ("minimum_of_complex", True, "complex128", _one("stablehlo.minimum", [(V4, np.complex128)] * 2, (V4, np.complex128))),
    ("minimum_of_complex", False, "i32", _one("stablehlo.minimum", [(V4, np.int32)] * 2, (V4, np.int32))),
    ("bitcast_of_booleans", True, "i1[2, 8] -> ui8[2]", _one("stablehlo.bitcast_convert", [(V2x8, bool)], ((2,), np.uint8))),
    ("bitcast_of_booleans", False, "i32 -> f32", _one("stablehlo.bitcast_convert", [(V4, np.int32)], (V4, np.float32))),
    ("bitcast_to_booleans", True, "f64 -> i1[64]", _one("stablehlo.bitcast_convert", [((), np.float64)], ((64,), bool))),
    ("bitcast_to_booleans", False, "i1 -> ui8 goes the other way", _one("stablehlo.bitcast_convert", [(V2x8, bool)],
                                                                          ((2,), np.uint8))),
    ("cbrt_of_complex", True, "complex64", _one("stablehlo.cbrt", [(V4, np.complex64)], (V4, np.complex64))),
    ("cbrt_of_complex", False, "f32", _one("stablehlo.cbrt", [(V4, np.float32)], (V4, np.float32))),
    ("collective_broadcast_as_all_reduce", True, "a 4 x 2 grid",
     _one("stablehlo.collective_broadcast", [(V4, np.complex64)], (V4, np.complex64), _BROADCAST, _GRID)),
    ("collective_broadcast_as_all_reduce", False, "the module does not say its grid",
     _one("stablehlo.collective_broadcast", [(V4, np.float32)], (V4, np.float32), _BROADCAST)),
]
ROOTS = {name: roots[0] for name, (roots, _) in spec_semantics.PATTERNS.items()}


@pytest.mark.parametrize("name, fires, why, text", CASES,
                         ids=[f"{c[0]}-{'fires' if c[1] else 'not'}-{i}" for i, c in enumerate(CASES)])
def test_pattern_fires_only_where_xla_differs(name, fires, why, text):
    m = hf.Module.parse(text)
    report = m.optimize(f"pattern:{name}")
    assert report.fired[name] == (1 if fires else 0), why
    m.verify()
    left = [op for op in m.walk() if op.name == ROOTS[name]]
    if name.startswith("bitcast"):  # (the bits of a float are read with a bitcast to an integer)
        left = [op for op in left if "i1>" in f"{op.operands[0].type} {op.result.type}"]
    if fires and name in ("ceil_of_subnormal", "floor_of_subnormal"):  # (the op stays for the normal lanes, marked)
        assert len(left) == 1 and spec_semantics.MARKER in left[0].attributes, m.text
    elif fires:
        assert not left, m.text
    else:
        assert m.text == hf.Module.parse(text).text


def test_every_pattern_has_cases():
    assert {c[0] for c in CASES if c[1]} == {c[0] for c in CASES if not c[1]} == set(spec_semantics.PATTERNS)


def test_the_default_pipeline_and_the_compile_path_keep_xla_semantics():
    for name, fires, why, text in CASES:
        m = hf.Module.parse(text)
        assert guard_for_xla(m) is m, name
        report = m.optimize()
        assert not set(report.fired) & set(spec_semantics.PATTERNS), (name, report.fired)
        assert ROOTS[name] in m.op_counts(), (name, m.text)
    assert "spec-semantics" in hf.passes.pass_names() and "spec-semantics" not in str(hf.passes.DEFAULT)


def test_collective_broadcast_needs_the_grid_and_one_operand():
    m = hf.Module.parse(CASES[-1][3])
    op = next(op for op in m.walk() if op.name == "stablehlo.collective_broadcast")
    with m.context:
        assert spec_semantics.plan_collective_broadcast_as_all_reduce(op) == (
            "the module does not say its replica and partition counts (mhlo.num_replicas, mhlo.num_partitions)")
    assert spec_semantics.apply(m) == 0


def test_a_plan_says_why_in_words():
    m = hf.Module.parse(_one("stablehlo.cbrt", [(V4, np.float32)], (V4, np.float32)))
    text = m.optimize("pattern:cbrt_of_complex", debug=True).explain()
    assert "cbrt_of_complex: declined 1 time: the elements are float32, not complex [1]" in text


def test_apply_rewrites_in_place_without_folds_or_dead_code_removal():
    m = hf.Module.parse("""func.func @main(%a: tensor<4xi1>) -> tensor<4xi1> {
      %c = stablehlo.constant dense<3> : tensor<4xi32>
      %unused = stablehlo.multiply %c, %c : tensor<4xi32>
      %0 = stablehlo.add %a, %a : tensor<4xi1>
      return %0 : tensor<4xi1>
    }""")
    assert spec_semantics.apply(m) == 1
    assert m.op_counts()["stablehlo.or"] == 1 and m.op_counts()["stablehlo.multiply"] == 1
    assert spec_semantics.apply(m) == 0

# ---------------------------------------------------------------- values: the spec's, at run time


def _float_edges(dtype):
    """Subnormals of both signs (the smallest and the largest), normals next to them, ±0, ±2.5, inf, NaN."""
    width = 8 * dtype.itemsize
    unsigned = np.dtype(f"uint{width}")
    sign = 1 << (width - 1)
    normal = int(np.asarray(ml_dtypes.finfo(dtype).smallest_normal, dtype).view(unsigned))
    bits = [1, normal - 1, normal, 0]
    bits = bits + [b | sign for b in bits]
    values = np.array(bits, unsigned).view(dtype)
    return np.concatenate([values, np.array([2.5, -2.5, np.inf, np.nan], dtype)])


TINY = np.float32(1.401298464324817e-45)
PAIRS = [(1.5 + 2.5j, 7.5 + 1.5j), (1.5 + 7.5j, 1.5 + 2.5j), (1.5j, complex(-0.0, 2.5)), (1.5j, 1.5j),
         (complex(TINY, 0), 5j), (complex(-TINY, 0), 0j), (complex(np.nan, 1), 1 + 1j), (1 + 1j, complex(np.nan, 1)),
         (complex(1, np.nan), 1 + 2j), (complex(-0.0, 1), complex(0.0, 1))]
ROOTS_OF = np.array([3 + 4j, -8, 27j, -1 - 1j, 1e-3 + 2j, -5e2 + 1e-2j])


def _spec_extremum(a, b, greater):
    """The reference interpreter's complex maximum (greater) or minimum, with Python's IEEE compares."""
    first = (a.imag > b.imag if greater else a.imag < b.imag) if a.real == b.real else \
        (a.real > b.real if greater else a.real < b.real)
    return a if first else b


def _inputs():
    bools = np.random.default_rng(0).random((3, 16)) < 0.5
    args = [np.array([False, False, True, True]), np.array([False, True, False, True])]
    args += [_float_edges(d) for d in FLOATS]
    for dtype in (np.complex64, np.complex128):
        args += [np.array([p[0] for p in PAIRS], dtype), np.array([p[1] for p in PAIRS], dtype)]
    args += [bools, np.array([1, -2, 0x1234], np.int16), np.array([1.0, -np.pi]), ROOTS_OF, ROOTS_OF.astype(np.complex64)]
    return args


def _spec_program(args):
    spec = [(a.shape, a.dtype) for a in args]
    ops_ = [("stablehlo.add", [0, 1], spec[0])]
    for k in range(len(FLOATS)):
        ops_ += [("stablehlo.ceil", [2 + k], spec[2 + k]), ("stablehlo.floor", [2 + k], spec[2 + k])]
    for k in (6, 8):
        ops_ += [("stablehlo.maximum", [k, k + 1], spec[k]), ("stablehlo.minimum", [k, k + 1], spec[k])]
    ops_ += [("stablehlo.bitcast_convert", [10], ((3,), np.int16)), ("stablehlo.bitcast_convert", [11], ((3, 16), bool)),
             ("stablehlo.bitcast_convert", [12], ((2, 64), bool)), ("stablehlo.cbrt", [13], spec[13]),
             ("stablehlo.cbrt", [14], spec[14])]
    return _program(ops_, spec)


def _same_bits(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, what
    if want.dtype.kind == "c":
        _same_bits(got.real, want.real, what)
        return _same_bits(got.imag, want.imag, what)
    if want.dtype.kind == "b":
        return np.testing.assert_array_equal(got, want, what)
    nan = np.isnan(want.astype(np.float64))
    np.testing.assert_array_equal(np.isnan(got.astype(np.float64)), nan, what)
    unsigned = np.dtype(f"uint{8 * want.dtype.itemsize}")
    np.testing.assert_array_equal(got.view(unsigned)[~nan], want.view(unsigned)[~nan], what)


def test_rewritten_programs_compute_the_spec_values():
    args = _inputs()
    m = hf.Module.parse(_spec_program(args))
    report = m.optimize("default,spec-semantics,default")  # (the default pipeline keeps the rewrites' values)
    assert set(report.fired) >= set(spec_semantics.PATTERNS) - {"collective_broadcast_as_all_reduce"}
    out = [np.asarray(v) for v in m.compile().call_flat(args)]
    _same_bits(out[0], np.logical_or(args[0], args[1]), "add of i1")
    for k, dtype in enumerate(FLOATS):
        x = args[2 + k].astype(np.float64)
        _same_bits(out[1 + 2 * k], np.ceil(x).astype(dtype), f"ceil of {dtype}")
        _same_bits(out[2 + 2 * k], np.floor(x).astype(dtype), f"floor of {dtype}")
    for j, k in enumerate((6, 8)):
        a, b = args[k], args[k + 1]
        for n, greater in enumerate((True, False)):
            want = np.array([_spec_extremum(x, y, greater) for x, y in zip(a, b)], a.dtype)
            _same_bits(out[9 + 2 * j + n], want, f"{'max' if greater else 'min'}imum of {a.dtype}")
    bools, int16, f64 = args[10:13]
    _same_bits(out[13], np.packbits(bools, axis=-1, bitorder="little").view("<i2")[:, 0], "i1[3, 16] -> i16")
    _same_bits(out[14], np.unpackbits(int16.view(np.uint8).reshape(3, 2), axis=-1, bitorder="little").astype(bool),
               "i16 -> i1[3, 16]")
    _same_bits(out[15], np.unpackbits(f64.view(np.uint8).reshape(2, 8), axis=-1, bitorder="little").astype(bool),
               "f64 -> i1[2, 64]")
    principal = ROOTS_OF ** (1 / 3)  # (numpy's principal cube root)
    np.testing.assert_allclose(out[16], principal, rtol=1e-14)
    np.testing.assert_allclose(out[17], principal.astype(np.complex64), rtol=3e-7)


def test_the_default_path_computes_what_jax_computes():
    """Without the opt-in, ceil/floor of subnormals are XLA:CPU's (jax's) values. (jax lowers complex
    max/min to compares and selects of its own, not to stablehlo.maximum/minimum.)"""
    args = _inputs()[2:6]
    spec = [(a.shape, a.dtype) for a in args]
    ops_ = [(name, [k], spec[k]) for k in range(4) for name in ("stablehlo.ceil", "stablehlo.floor")]
    out = [np.asarray(v) for v in hf.Module.parse(_program(ops_, spec)).compile().call_flat(args)]
    with jax.enable_x64(True):
        want = [np.asarray(v) for v in jax.jit(lambda *xs: [f(x) for x in xs for f in (lax.ceil, lax.floor)])(*args)]
    for n, (got, w) in enumerate(zip(out, want)):
        _same_bits(got, w, f"result {n}")
    spec_ceil = [np.ceil(a.astype(np.float64)).astype(a.dtype) for a in args]
    assert any(not np.array_equal(o, c, equal_nan=True) for o, c in zip(out[::2], spec_ceil))  # (XLA:CPU flushes)

# ---------------------------------------------------------------- hloforge check


def test_check_applies_it_raw_and_optimized():
    results = checkfile.check_file(os.path.join(DATA, "spec_semantics.mlir"), optimize=True)
    assert [str(r) for r in results] == [f"PASS {os.path.join(DATA, 'spec_semantics.mlir')}::spec_values"]


def test_check_runs_collective_broadcast_as_the_spec_says():
    """Cross-replica on 4 replicas (complex, i1, bf16; replicas in no group get zeros) and cross-partition
    on a 2 x 2 grid (f64 with -0, a subnormal and inf), raw and optimized, on the CLI's CPU devices."""
    path = os.path.join(DATA, "spec_collective_broadcast.mlir")
    result = subprocess.run([sys.executable, "-m", "hloforge.runtime.cli", "check", "--optimize", path],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [f"PASS {path}:1::main", f"PASS {path}:45::main", "2 passed, 0 failed"]
