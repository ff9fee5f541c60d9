"""hloforge's default pipeline on another project's pad tests: the pad + fft ops it leaves.

    python benchmarks/outside_pad_tests.py PATH/TO/Enzyme-JAX/test/lit_tests [--all]

Reads every ``*.mlir`` file directly in the folder that mentions ``stablehlo.pad``, splits it at
``// -----``, parses each piece (files with dialects hloforge does not load are listed as skipped),
runs ``Module.optimize()`` and counts ``stablehlo.pad`` and ``stablehlo.fft`` before and after. The
``checked`` column counts the pads and ffts the file's own ``CHECK`` lines name: only a rough view
of the other optimizer's output (``CHECK-COUNT-n`` lines, pattern-specific ``RUN`` lines and pads a
rewrite creates all skew it), so no total is compared with it. ``--all`` prints every file, not only
those where hloforge leaves more than the CHECK lines name.
"""
from __future__ import annotations

import argparse
import glob
import os
import re

import hloforge as hf

COUNTED = ("stablehlo.pad", "stablehlo.fft")


def _count(module) -> int:
    counts = module.op_counts()
    return sum(counts.get(name, 0) for name in COUNTED)


def measure(path: str):
    """(before, after, checked) for one file, or the reason it was skipped."""
    text = open(path).read()
    checks = [line for line in text.splitlines() if re.match(r"\s*//\s*CHECK", line)]
    checked = sum(len(re.findall(r"stablehlo\.(?:pad|fft)\b", line)) for line in checks)
    before = after = 0
    for piece in re.split(r"^\s*// -----\s*$", text, flags=re.M):
        code = "\n".join(line for line in piece.splitlines() if not line.lstrip().startswith("//"))
        if "func.func" not in code:
            continue
        try:
            module = hf.Module.parse(code)
            before += _count(module)
            module.optimize()
        except ValueError as e:
            return str(e).splitlines()[0][:90]
        after += _count(module)
    return before, after, checked if checks else None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--all", action="store_true", help="print every file")
    args = parser.parse_args(argv)
    total_before = total_after = files = 0
    for path in sorted(glob.glob(os.path.join(args.folder, "*.mlir"))):
        if "stablehlo.pad" not in open(path).read():
            continue
        name, found = os.path.basename(path), measure(path)
        if isinstance(found, str):
            print(f"{name:36} skipped: {found}")
            continue
        before, after, checked = found
        files += 1
        total_before, total_after = total_before + before, total_after + after
        if args.all or (checked is not None and after > checked):
            print(f"{name:36} pad+fft {before:3} -> {after:3}   checked {'-' if checked is None else checked}")
    print(f"{files} files: pad+fft {total_before} -> {total_after}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
