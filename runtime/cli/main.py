"""Argument parsing and dispatch for the ``hloforge`` command.

Exit codes: 0 ok, 1 a check failed, 2 any error: one line on stderr, no traceback (``--verbose``
adds the traceback and XLA's INFO log lines), 141 (128 + SIGPIPE, as a tool the signal ends) when
the reader of the output went away (``hloforge inspect m.mlir | head -1``): quietly.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import os
import sys
import tomllib
import traceback

from hloforge.target import DEVICE_KINDS
from hloforge.runtime.cli import cache_command, commands
from hloforge.runtime.settings import config

BROKEN_PIPE = 141  # (128 + SIGPIPE: what a shell reports for `cat big | head -1`'s cat)
_PYPROJECT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                          "pyproject.toml")


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors on the one error path: one line, exit 2."""

    def error(self, message):
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(2)


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text}")
    return value


def version() -> str:
    """hloforge's version: the installed distribution's, else (a checkout used without installing it)
    pyproject.toml's."""
    try:
        return importlib.metadata.version("hloforge")
    except importlib.metadata.PackageNotFoundError:
        pass
    try:
        with open(_PYPROJECT, "rb") as f:
            return tomllib.load(f)["project"]["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        import hloforge
        return hloforge.__version__


class _Version(argparse.Action):
    """``--version``: ``hloforge <version>``, exit 0 (looked up only when asked)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print hloforge's version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"hloforge {version()}")
        parser.exit(0)


def _add(sub, name, fn, help, description=None):
    p = sub.add_parser(name, help=help, description=description or help)
    p.set_defaults(run=fn)
    p.add_argument("--verbose", action="store_true",
                   help="show XLA's log lines and a traceback on errors (also: HLOFORGE_LOG=info)")
    return p


def describe(error: BaseException) -> str:
    """One line for any error."""
    if isinstance(error, OSError) and error.strerror:
        where = f"{error.filename}: " if error.filename else ""
        return f"{where}{error.strerror}"
    if isinstance(error, MemoryError):
        return f"out of memory{': ' + str(error).splitlines()[0] if str(error) else ''}"
    lines = [line for line in str(error).splitlines() if line.strip()]
    text = lines[0].strip("'\"") if lines else ""
    return text or type(error).__name__


_DEVICE_HELP = "cpu, gpu or tpu (default: hf.config.device, else jax's default device)"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="hloforge",
                                     description="Build, inspect, rewrite and run StableHLO programs.")
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = _add(sub, "demo", commands.demo, "trace, print and run an FNO spectral block; check it against numpy",
             "Trace an FNO spectral block with hloforge.ops, print its MLIR, run it and compare with numpy "
             "(exit 1 if the max abs error exceeds 1e-4).")
    p.add_argument("--device", default=None, choices=DEVICE_KINDS, help=_DEVICE_HELP)
    p.add_argument("--quiet", action="store_true", help="do not print the MLIR")

    p = _add(sub, "opt", commands.opt, "run a pass pipeline over a module")
    p.add_argument("input", help="module file (.mlir text, .mlirbc bytecode or portable artifact)")
    p.add_argument("-p", "--pipeline", default="default",
                   help="comma-separated pass names, e.g. 'inline,canonicalize' or 'pattern:pad_of_pad' "
                        "(default: %(default)s)")
    p.add_argument("-o", "--output", help="write the result here (.mlir or .mlirbc) instead of stdout")
    p.add_argument("--stats", action="store_true", help="print the pass report (patterns fired, op counts)")
    p.add_argument("--explain", action="store_true",
                   help="after the module, list the patterns that did not fire and the precondition that stopped each")
    p.add_argument("--print-ir-after-change", action="store_true", help="print the module after each pass that changed it")
    p.add_argument("--dump-dir", help="write NN_<pass>.mlir after each pass that changed the module")
    p.add_argument("--debug-info", action="store_true", help="print source locations")

    p = _add(sub, "run", commands.run, "compile and run a module; print and save its outputs")
    p.add_argument("input", help="module file")
    p.add_argument("--arg", action="append", metavar="FILE.npy", help="an argument, in order (repeatable)")
    p.add_argument("--random-inputs", action="store_true", help="random arguments of @main's types")
    p.add_argument("--seed", type=_non_negative_int, default=0, help="seed for --random-inputs (default 0)")
    p.add_argument("--save-dir", help="save output_<i>.npy files here")
    p.add_argument("--device", default=None, choices=DEVICE_KINDS, help=_DEVICE_HELP)
    p.add_argument("--optimize", action="store_true", help="run the default pass pipeline first")

    p = _add(sub, "inspect", commands.inspect, "summarize a module: signature, op counts, fft and pad details")
    p.add_argument("input", help="module file")
    p.add_argument("--json", action="store_true", help="machine-readable output")

    p = _add(sub, "graph", commands.graph, "write the entry function as a Graphviz graph")
    p.add_argument("input", help="module file")
    p.add_argument("-o", "--output", required=True, help="OUT.dot, or OUT.svg / OUT.png (needs Graphviz's dot)")

    p = _add(sub, "convert", commands.convert, "convert between text, bytecode and portable artifacts")
    p.add_argument("input", help="module file")
    p.add_argument("-o", "--output", required=True, help="OUT.mlir (text) or OUT.mlirbc (bytecode)")
    p.add_argument("--portable", metavar="TARGET",
                   help="write a versioned portable artifact: current, week4, week12 or 1.x.y")

    p = _add(sub, "check", commands.check, "run StableHLO test files (check.expect_* assertions) on PJRT",
             "Run StableHLO's test files: the interpreter's tests (split at '// -----'; every public function "
             "without arguments, or @main, is a test; check.expect_eq/expect_almost_eq/expect_close/... ops, "
             "interpreter.run_parallel on several CPU devices) and testdata (@main asserting with "
             "@check.expect_* custom calls). Prints 'PASS file::function' or 'FAIL file::function: reason' per "
             "test function, then 'N passed, M failed'; exit 1 if any failed.")
    p.add_argument("inputs", nargs="+", metavar="IN", help="test files")
    p.add_argument("--optimize", action="store_true",
                   help="also run each function after the default pass pipeline; it must keep every bit")
    p.add_argument("--finite-math", action="store_true",
                   help="with --optimize: run the finite-math rewrites too (they change rounding), and only ask "
                        "the optimized values to pass the file's assertions")
    p.add_argument("--timeout", type=_positive_float, default=600.0, metavar="SECONDS",
                   help="a file still running after this long fails (default 600)")
    p.add_argument("--device", default=None, choices=DEVICE_KINDS, help=_DEVICE_HELP)

    p = _add(sub, "cache", cache_command.run, "show or clear the persistent executable cache",
             "Show where the persistent executable cache is (HLOFORGE_CACHE_DIR, default $XDG_CACHE_HOME/hloforge "
             "or ~/.cache/hloforge), how many entries it holds and their size; 'clear' deletes the entries (only "
             "hloforge's own .hfx files).")
    p.add_argument("action", nargs="?", default="show", choices=("show", "clear"),
                   help="show (default) or clear")
    p.add_argument("--list", action="store_true",
                   help="also list the entries (program, device, size, age, last use), most recently used first")
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if args.verbose:
        config.log = "info"
    try:
        code = args.run(args)
        sys.stdout.flush()  # (here, so that a reader gone away is seen below, not at exit)
        return code
    except BrokenPipeError:
        return _reader_gone()
    except Exception as e:  # (the one error path of every command: MemoryError included)
        if args.verbose:
            traceback.print_exc()
        print(f"hloforge {args.command}: error: {describe(e)}", file=sys.stderr)
        return 2


def _reader_gone() -> int:
    """The output's reader closed it (``| head``): what is left unwritten goes nowhere, no message,
    exit 141, as for a tool that SIGPIPE ends."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # (Python flushes stdout again at exit)
        os.close(devnull)
    except (OSError, ValueError):  # (stdout is not a file: a test's capture)
        pass
    return BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
