"""Source locations: every emitted op carries the user's call site; a parsed text's ops name its file."""
from __future__ import annotations

import functools
import os
import re
import sys

from hloforge.frontend.context import ir

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# Files inside the package directory that are user code, not hloforge internals.
_USER_SUBDIRS = tuple(_PACKAGE_DIR + d + os.sep for d in ("tests", "examples", "benchmarks"))


def is_internal(filename: str) -> bool:
    """Whether ``filename`` is one of hloforge's own files (not its tests, examples or benchmarks)."""
    return filename.startswith(_PACKAGE_DIR) and not filename.startswith(_USER_SUBDIRS)



_INTERNAL: dict = {}  # code object -> whether its file is inside hloforge (looked up per frame per op)


def user_frame():
    """The innermost Python frame outside hloforge (the user's call site)."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        internal = _INTERNAL.get(code)
        if internal is None:
            if len(_INTERNAL) > 1 << 16:
                _INTERNAL.clear()
            internal = _INTERNAL[code] = is_internal(code.co_filename)
        if not internal:
            break
        frame = frame.f_back
    return frame


@functools.lru_cache(maxsize=4096)
def _columns(code) -> tuple:
    """1-based start column of every instruction of ``code`` (walking co_positions per op was a
    fifth of tracing time)."""
    try:
        return tuple((pos[2] or 0) + 1 for pos in code.co_positions())
    except AttributeError:  # Python < 3.11
        return ()


def _column(frame) -> int:
    columns = _columns(frame.f_code)
    i = frame.f_lasti // 2
    return columns[i] if i < len(columns) else 1


def call_site(cache: dict) -> ir.Location:
    """``user_location(None)``, remembered in ``cache`` per call site (one trace's: locations
    belong to its context)."""
    frame = user_frame()
    key = None if frame is None else (frame.f_code, frame.f_lasti)
    site = cache.get(key)
    if site is None:
        site = cache[key] = _site(frame)
    return site


def _site(frame) -> ir.Location:
    if frame is None:
        return ir.Location.unknown()
    return ir.Location.file(frame.f_code.co_filename, frame.f_lineno, _column(frame))


def user_location(loc=None) -> ir.Location:
    """Resolve a builder's ``loc`` argument into an ``ir.Location`` (needs an active context).

    ``None`` means the user's call site; a ``str`` names the call site
    (``"layer1"(file:line:col)``); an ``ir.Location`` is used as is.
    """
    if isinstance(loc, ir.Location):
        return loc
    site = _site(user_frame())
    if loc is None:
        return site
    if isinstance(loc, str):
        return ir.Location.name(loc, childLoc=site)
    raise TypeError(f"loc must be None, a str or an ir.Location, got {type(loc).__name__}")


# ---------------------------------------------------------------- parsed text

# MLIR's parser gives the ops of a text without locations of their own ``loc("-":LINE:COL)``: "-" is the
# only name its Python binding gives the buffer
_PARSED = re.compile(r'loc\("-":(\d+):(\d+)\)')


def source_prefix(name: str, context) -> str:
    """How MLIR prints a location in the source ``name``, up to the line: ``loc("m.mlir":``."""
    text = str(ir.Location.file(name, 0, 0, context=context))
    return text[:-len("0:0)")]


def name_source(module: ir.Module, name: str) -> None:
    """Give the ops (and block arguments) of a just-parsed text ``module`` that the parser placed in
    ``"-"`` the source file ``name`` instead (``<stdin>``, a path), as MLIR's tools do with the file they
    read: locations in messages, ``--debug-info`` and compile errors then point into that file."""
    context = module.context

    def renamed(location):
        found = _PARSED.fullmatch(str(location))
        return found and ir.Location.file(name, int(found[1]), int(found[2]), context=context)

    def visit(op):
        location = renamed(op.location)
        if location:
            op.location = location
        for region in op.regions:
            for block in region.blocks:
                for argument in block.arguments:
                    location = renamed(argument.location)
                    if location:
                        argument.set_location(location)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
