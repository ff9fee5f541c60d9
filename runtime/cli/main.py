"""Argument parsing and dispatch for the ``hloforge`` command.

Exit codes: 0 ok, 1 a check failed, 2 bad input (one-line message, no traceback).
"""
from __future__ import annotations

import argparse
import sys


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def _demo(args) -> int:
    from hloforge.runtime.cli import demo
    return demo.run(device=args.device, quiet=args.quiet)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hloforge", description="Build, inspect, rewrite and run StableHLO programs.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    demo = commands.add_parser("demo", help="trace, print and run an FNO spectral block; check it against numpy",
                               description="Trace an FNO spectral block with hloforge.ops, print its MLIR, "
                                           "run it and compare with numpy (exit 1 if the error exceeds 1e-4).")
    demo.add_argument("--device", default="cpu", help="cpu (default) or gpu")
    demo.add_argument("--quiet", action="store_true", help="do not print the MLIR")
    demo.set_defaults(run=_demo)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except UsageError as e:
        print(f"hloforge {args.command}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
