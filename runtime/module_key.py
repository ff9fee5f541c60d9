"""What the executable caches' keys are computed from: a module's IR, not its text.

A module with large constants prints to megabytes of text, and the regex passes over it (its locations
dropped for the key, its nesting measured, its custom calls looked for) cost about what XLA's compile
does. A module's key is computed from the sha256 of the bytecode of a copy without locations instead
(constants as raw bytes; written in milliseconds), so a cache hit finds the executable before the
module is printed or its text scanned (``compiler._cached_module``). Locations aside, the bytecode
holds everything the text does: two modules that differ only in locations share a key, any other
difference (a constant's bits included) gives another.
"""
from __future__ import annotations

import hashlib

from hloforge.frontend.context import ir, passmanager


class _Sha256Sink:
    """A file that hashes what is written to it (the bytecode is never held whole)."""

    def __init__(self):
        self.hash = hashlib.sha256()

    def write(self, data) -> int:
        self.hash.update(data)
        return len(data)


def ir_text(module) -> str | None:
    """A short text that stands for ``module`` in its executable key (the sha256 of its bytecode with
    debug info stripped, and its entry function), or None if MLIR cannot write it."""
    with module.context:
        copy = module.mlir.operation.clone()
        try:
            passmanager.PassManager.parse("builtin.module(strip-debuginfo)").run(copy)
            sink = _Sha256Sink()
            copy.write_bytecode(sink)
        except (ir.MLIRError, RuntimeError, ValueError):
            return None
        finally:
            copy.erase()
    return f"hloforge module bytecode sha256 {sink.hash.hexdigest()} entry @{module.entry}"


def key_text(module, code: str) -> str:
    """What the executable key of ``module`` (printed: ``code``) is computed from: ``ir_text(module)``,
    or ``code`` where there is no module or MLIR cannot write one."""
    return (module is not None and ir_text(module)) or code


def outline(module) -> str:
    """``module``'s text without its large constants (enough to tell what its custom calls need)."""
    return module.mlir.operation.get_asm(large_elements_limit=16, large_resource_limit=16)
