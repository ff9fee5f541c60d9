"""Does `Module.optimize()` change any output bit of StableHLO's testdata programs?

    python benchmarks/testdata_bits.py DIR [--sample N] [--match SUBSTRING] [--fired]

DIR holds StableHLO-style test files (e.g. stablehlo/testdata of openxla/stablehlo). For every file whose
@main takes no arguments, the check assertions become extra outputs (as `hloforge check` does), the module
runs raw and optimized, and every output is compared byte for byte (NaN payloads included). Files whose
@main takes arguments (the `dynamic/` ones) run on seeded inputs, their dimension variables bound as
`hloforge check` binds them. A file that changed runs once more with only its calls inlined, to tell a
change of the passes from one XLA makes because it compiles a call differently from its inlined body
(``check_file``). Prints one line per file that changed, failed to run or failed only after optimize,
and a summary; with --fired, the patterns that fired in the changed files. The persistent executable cache
(on by default) keeps the executables between runs (a cold run of the whole testdata takes about 6 minutes
here; HLOFORGE_CACHE_DIR='' for a cold run).
"""
from __future__ import annotations

import argparse
import collections
import pathlib
import random
import sys
import time

import numpy as np

import hloforge as hf
from hloforge.runtime import check_quant, checkfile


def _load(path: pathlib.Path):
    text = check_quant.lower_quantized(path.read_text())  # (per-tensor quantized programs, as hloforge check)
    return hf.Module.parse(checkfile.generic_check_ops(text), allow_unregistered=True)


def _inputs(module):
    """Seeded inputs for a module with arguments (the `hloforge check` convention)."""
    rng = np.random.default_rng(0)
    args = []
    for spec in module.signature[0]:
        shape = tuple(checkfile.DYNAMIC_SIZE if d is None else d for d in spec.shape)
        if spec.dtype == np.bool_:
            args.append(rng.random(shape) < 0.5)
        elif spec.dtype.kind in "iu":
            args.append(rng.integers(0, 4, shape).astype(spec.dtype))
        elif spec.dtype.kind == "c":
            args.append((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(spec.dtype))
        else:
            args.append(rng.standard_normal(shape).astype(spec.dtype))
    return args


def _bits(values) -> list:
    return [np.ascontiguousarray(np.asarray(v)).view(np.uint8).tobytes() for v in values]


def _differs(raw, opt) -> str | None:
    """None when every output has the same bits, else where they first differ."""
    for n, (r, o) in enumerate(zip(raw, opt)):
        r, o = np.asarray(r), np.asarray(o)
        if r.shape != o.shape or r.dtype != o.dtype:
            return f"output {n}: {r.dtype}{list(r.shape)} vs {o.dtype}{list(o.shape)}"
        if _bits([r]) != _bits([o]):
            rb = np.ascontiguousarray(r).view(np.uint8).reshape(r.size, -1)
            ob = np.ascontiguousarray(o).view(np.uint8).reshape(o.size, -1)
            bad = np.flatnonzero((rb != ob).any(axis=1))
            i = int(bad[0])
            flat_r, flat_o = r.reshape(-1), o.reshape(-1)
            return f"output {n}: {len(bad)} of {r.size} elements differ; first at {i}: {flat_r[i]!r} vs {flat_o[i]!r}"
    if len(raw) != len(opt):
        return f"{len(raw)} vs {len(opt)} outputs"
    return None


def check_file(path: pathlib.Path):
    """('same' | 'changed' | 'inlining' | 'raw-fails' | 'opt-fails', detail, fired patterns).

    'inlining': the module with only its calls inlined already has the optimized module's bits, and
    those differ from the raw module's: XLA compiles a call differently from its inlined body (it
    folds constants it cannot see through a call with its constant folder, whose transcendental
    functions round differently from its kernels, and rewrites x / c into x * (1 / c) once c is a
    constant), so the change is not the passes' doing."""
    try:
        module = _load(path)
        args = []
        if module.signature[0]:
            module = checkfile._bind_dimension_variables(module)
            args = _inputs(module)
        else:
            checkfile.instrument(module)
        raw = [np.asarray(o) for o in module.compile().call_flat(args)]
    except Exception as e:  # noqa: BLE001 (one file's failure is reported, the run goes on)
        return "raw-fails", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", {}
    try:
        optimized = module.clone()
        report = optimized.optimize()
        opt = [np.asarray(o) for o in optimized.compile().call_flat(args)]
    except Exception as e:  # noqa: BLE001
        return "opt-fails", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", {}
    problem = _differs(raw, opt)
    if not problem:
        return "same", "", dict(report.fired)
    inlined = module.clone()
    inlined.optimize("inline")
    by_inlining = _differs([np.asarray(o) for o in inlined.compile().call_flat(args)], opt) is None
    return ("inlining" if by_inlining else "changed"), problem, dict(report.fired)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=pathlib.Path)
    parser.add_argument("--sample", type=int, default=0, help="check N files drawn at random (seed 0)")
    parser.add_argument("--match", default="", help="only files whose name contains this")
    parser.add_argument("--fired", action="store_true", help="print the patterns that fired in changed files")
    args = parser.parse_args(argv)
    files = sorted(p for p in args.directory.rglob("*.mlir") if args.match in p.name)
    if args.sample:
        files = sorted(random.Random(0).sample(files, min(args.sample, len(files))))
    counts = collections.Counter()
    blame = collections.Counter()
    start = time.time()
    for path in files:
        status, detail, fired = check_file(path)
        counts[status] += 1
        if status != "same":
            print(f"{status.upper()} {path.relative_to(args.directory)}: {detail}", flush=True)
            if status == "changed":
                blame.update(fired.keys())
                if args.fired:
                    print(f"    fired: {fired}", flush=True)
    print(f"{len(files)} files in {time.time() - start:.0f} s: {counts['same']} same bits, {counts['changed']} changed by "
          f"the passes, {counts['inlining']} changed by inlining alone (XLA compiles calls differently), "
          f"{counts['opt-fails']} fail only optimized, {counts['raw-fails']} fail raw")
    if blame:
        print("patterns fired in changed files:", dict(blame.most_common()))
    return 1 if counts["changed"] or counts["opt-fails"] else 0


if __name__ == "__main__":
    sys.exit(main())
