"""Reading MLIR text, bytecode and portable artifacts safely: damaged input raises ValueError.

Three things in jaxlib's MLIR can take the process down on damaged input, and are avoided here:
MLIR's own diagnostic capture converts messages to Python strings inside C++ and aborts on one
that is not UTF-8 (``_errors_of`` collects them instead); reading a name that is not UTF-8 later
raises or aborts (``_check_strings`` refuses such modules up front); and the bytecode reader can
corrupt memory on a few flipped bytes (bytecode is read in a child process, ``_bytecode_as_text``).
MLIR's parser also recurses once per nested region, attribute dictionary, array or parenthesis and
overflows its stack a few thousand levels deep, so text is measured first (``check_nesting``).
"""
from __future__ import annotations

import contextlib
import faulthandler
import os
import re
import signal
import tempfile
import time
import warnings

import numpy as np

from hloforge.frontend.context import deserialize_portable, diagnostics, ir, make_context
from hloforge.frontend.location import name_source, source_prefix

BYTECODE_MAGIC = b"ML\xefR"
MAX_NESTING = 256  # braces: the module, functions, regions and attribute dictionaries nested in one another
MAX_BRACKETS = 1024  # {, [ and ( together (nested arrays, dense literals, generic-form regions)


def parse_source(source: bytes, allow_unregistered: bool, source_name: str | None = None) -> ir.Module:
    """MLIR text, bytecode or a portable artifact -> a verified ir.Module in a new context;
    ValueError (with MLIR's diagnostics) for anything invalid. ``source_name`` (a path, ``<stdin>``)
    is the file that diagnostics and the text's default op locations name, instead of MLIR's ``"-"``
    (bytecode keeps the locations it holds)."""
    if source.startswith(BYTECODE_MAGIC):
        return _parse_mlir(_bytecode_as_text(source, allow_unregistered), allow_unregistered)
    return _parse_mlir(source, allow_unregistered, source_name=source_name)


def _parse_mlir(source: bytes, allow_unregistered: bool, threads: bool = True,
                source_name: str | None = None) -> ir.Module:
    """MLIR text, bytecode or a portable artifact -> a verified ir.Module in a new context whose
    names and strings are valid UTF-8; ValueError with MLIR's diagnostics otherwise."""
    if not source.startswith(BYTECODE_MAGIC):
        check_nesting(source)
    ctx = make_context()
    ctx.allow_unregistered_dialects = allow_unregistered
    if not threads:
        ctx.enable_multithreading(False)
    with _errors_of(ctx) as errors:
        try:
            module = ir.Module.parse(source, context=ctx)
            _check_strings(module)
            if _is_portable(module):
                module = deserialize_portable(ctx, source)
                _check_strings(module)
        except (ir.MLIRError, ValueError) as e:
            message = '; '.join(errors) or diagnostics(e)
            if source_name is not None:
                message = message.replace('loc("-":', source_prefix(source_name, ctx))
            raise ValueError(f"Module.parse: invalid MLIR: {message}") from None
    if source_name is not None:
        name_source(module, source_name)
    return module


def _bytecode_as_text(data: bytes, allow_unregistered: bool) -> bytes:
    """The module in bytecode (or a portable artifact) ``data`` as MLIR text, read in a child process.

    MLIR's bytecode reader trusts its input: a few flipped bytes can make it corrupt memory or
    abort, so it never reads bytecode in this process. A forked child (fast) prints the module as
    text with its locations, which round-trips exactly; if that child hangs waiting (fork copies
    locks other threads may hold), a fresh interpreter does it; if it hangs computing (the reader
    loops on some corrupted inputs), that is the answer. ValueError if the child fails, crashes or
    hangs. Each child also ends itself (an alarm) should this process be killed while it reads.
    """
    size = len(data) / 1e6
    fork_timeout = FORK_SECONDS + 10 * size
    outcome = _in_forked_child(data, allow_unregistered, fork_timeout) if hasattr(os, "fork") else None
    if outcome == _LOOPING:
        raise ValueError(f"Module.parse: reading the {len(data)}-byte bytecode did not finish in "
                         f"{fork_timeout:.0f} s: MLIR's bytecode reader loops on it (corrupted input?)")
    if outcome is None:
        timeout = 60 + 10 * size
        outcome = _in_fresh_interpreter(data, allow_unregistered, timeout)
        if outcome is None:
            raise ValueError(f"Module.parse: reading the {len(data)}-byte bytecode did not finish in "
                             f"{timeout:.0f} s (corrupted input?)")
    status, output = outcome
    if status < 0:
        raise ValueError(f"Module.parse: invalid MLIR bytecode ({len(data)} bytes): MLIR's bytecode reader "
                         f"crashed on it with signal {-status} (corrupted input?)")
    if status != 0:
        raise ValueError(output.decode("utf-8", "backslashreplace") or
                         f"Module.parse: reading the bytecode failed (exit status {status})")
    return output


FORK_SECONDS = 10.0  # how long the forked child may take (plus 10 s per MB)
_LOOPING = "looping"  # (a child killed at its timeout that spent it computing: the reader loops on the input)


def _in_forked_child(data: bytes, allow_unregistered: bool, timeout: float):
    """(exit status, or -signal; output) of reading ``data`` in a forked child; None if it hung
    waiting (a lock fork copied: a fresh interpreter will do), ``_LOOPING`` if it hung computing."""
    with tempfile.TemporaryFile() as out:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # (Python >= 3.12: fork with threads)
            warnings.filterwarnings("ignore", r"os\.fork\(\) was called", RuntimeWarning)  # (jax's)
            pid = os.fork()
        if pid == 0:
            code = 2
            try:
                faulthandler.disable()
                signal.alarm(int(timeout) + 5)  # (dies on its own should the parent be killed first)
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
                os.dup2(devnull, 2)
                code = _read_bytecode(data, allow_unregistered, out)
            finally:
                os._exit(code)
        status, busy = _wait(pid, timeout)
        out.seek(0)
        output = out.read()
    if status is None:
        return _LOOPING if busy > timeout / 2 else None
    return (-os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)), output


def _in_fresh_interpreter(data: bytes, allow_unregistered: bool, timeout: float):
    import subprocess
    import sys
    script = (f"import signal, sys; signal.alarm({int(timeout) + 5}); "  # (dies on its own should the parent die)
              "from hloforge.frontend.parsing import _read_bytecode; "
              "sys.exit(_read_bytecode(sys.stdin.buffer.read(), sys.argv[1] == '1', sys.stdout.buffer))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    try:
        done = subprocess.run([sys.executable, "-c", script, "1" if allow_unregistered else "0"], input=data,
                              capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None
    return done.returncode, done.stdout


def _read_bytecode(data: bytes, allow_unregistered: bool, out) -> int:
    """Parse ``data``, write the module's text (exit status 0) or the error (1) to ``out``."""
    try:
        module = _parse_mlir(data, allow_unregistered, threads=False)
        out.write(module.operation.get_asm(binary=True, enable_debug_info=True))
        code = 0
    except Exception as e:  # (reported by the parent)
        message = str(e) if isinstance(e, ValueError) else f"Module.parse: {type(e).__name__}: {e}"
        out.write(message.encode("utf-8", "backslashreplace"))
        code = 1
    out.flush()
    return code


def _wait(pid: int, timeout: float):
    """(the child's wait status, or None after killing it at ``timeout`` seconds; the CPU seconds it used)."""
    deadline, delay = time.monotonic() + timeout, 0.0002
    while True:
        try:
            done, status, usage = os.wait4(pid, os.WNOHANG)
        except ChildProcessError:  # (reaped elsewhere, e.g. SIGCHLD ignored): its outcome is unknown
            return None, 0.0
        if done:
            return status, usage.ru_utime + usage.ru_stime
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            _, _, usage = os.wait4(pid, 0)
            return None, usage.ru_utime + usage.ru_stime
        time.sleep(delay)
        delay = min(2 * delay, 0.02)


@contextlib.contextmanager
def _errors_of(ctx: ir.Context):
    """Collect the error diagnostics emitted in ``ctx`` as text. (MLIR's own capture turns them
    into Python strings inside C++, which aborts the process on a message that is not UTF-8,
    e.g. one quoting a corrupted op name.)"""
    errors = []

    def handler(d):
        if d.severity == ir.DiagnosticSeverity.ERROR:
            errors.append(f"{_readable(lambda: str(d.location))}: {_readable(lambda: d.message)}")
        return True

    ctx.emit_error_diagnostics = True
    handle = ctx.attach_diagnostic_handler(handler)
    try:
        yield errors
    finally:
        handle.detach()
        ctx.emit_error_diagnostics = False


def _readable(get) -> str:
    try:
        return get()
    except (RuntimeError, UnicodeDecodeError):
        return "<text that is not valid UTF-8>"


def _check_strings(module: ir.Module) -> None:
    """ValueError if an op name, attribute name or string/symbol attribute is not valid UTF-8
    (reading one later would raise nanobind's RuntimeError, or abort inside C++)."""
    stack = [module.operation]
    while stack:
        op = stack.pop()
        try:
            op.name
            attributes = op.attributes
            for name in list(attributes):  # (NamedAttribute.name aborts on a bad name; this raises)
                try:
                    attr = attributes[name]
                except TypeError:  # (no Python class for it, e.g. complex dense elements: no strings)
                    continue
                _check_attribute(attr)
            for region in op.regions:
                for block in region.blocks:
                    stack.extend(inner.operation for inner in block.operations)
        except (RuntimeError, UnicodeDecodeError):
            text = op.get_asm(binary=True, print_generic_op_form=True)
            text = text.decode("utf-8", "backslashreplace").splitlines()[0][:200]
            raise ValueError("a name or string in this op (or one nested in it) is not valid UTF-8 "
                             f"(input corrupted?): {text}") from None


def _check_attribute(attr) -> None:
    stack = [attr]  # (iteratively: arrays nest up to MAX_BRACKETS deep)
    while stack:
        attr = stack.pop()
        if isinstance(attr, (ir.StringAttr, ir.FlatSymbolRefAttr, ir.SymbolRefAttr)):
            attr.value
        elif isinstance(attr, ir.ArrayAttr):
            stack.extend(attr)
        elif isinstance(attr, ir.DictAttr):
            stack.extend(attr[i].attr for i in range(len(attr)))


def _is_portable(module: ir.Module) -> bool:
    return any(op.operation.name.startswith("vhlo.") for op in module.body.operations)


# MLIR's strings (no line breaks; a backslash escapes the next character) and comments; brackets in
# them do not nest. Text MLIR's lexer rejects is measured as if it were valid up to where it fails.
_STRINGS_AND_COMMENTS = re.compile(rb'"[^"\\\n]*(?:\\.[^"\\\n]*)*"|//[^\n]*')
# a text that opens with a module op (after comments and alias definitions, one a line) has no
# implicit module
_EXPLICIT_MODULE = re.compile(rb'(?:\s|//[^\n]*|[#!][^\n]*)*(?:module|"builtin\.module")\b')
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"{}[]()")
_BRACE_STEP = np.zeros(256, np.int8)
_BRACE_STEP[ord("{")], _BRACE_STEP[ord("}")] = 1, -1
_BRACKET_STEP = _BRACE_STEP.copy()
_BRACKET_STEP[[ord("["), ord("(")]], _BRACKET_STEP[[ord("]"), ord(")")]] = 1, -1


def nesting_depth(text: bytes) -> tuple:
    """(how deep braces nest, how deep {, [ and ( nest together) in MLIR ``text``, outside strings
    and comments, counting the module's braces where the text leaves the module implicit (so a
    module printed and parsed again measures the same): a scan of the brackets, without parsing."""
    implicit = 0 if _EXPLICIT_MODULE.match(text) else 1
    code = _STRINGS_AND_COMMENTS.sub(b"", text)
    brackets = np.frombuffer(code.translate(None, _NOT_BRACKETS), np.uint8)
    if brackets.size == 0:
        return implicit, implicit
    return (implicit + int(np.cumsum(_BRACE_STEP[brackets], dtype=np.int64).max(initial=0)),
            implicit + int(np.cumsum(_BRACKET_STEP[brackets], dtype=np.int64).max(initial=0)))


def check_nesting(text: bytes, what: str = "Module.parse") -> None:
    """ValueError if ``text`` nests deeper than MLIR's parser (which recurses once per level and
    overflows its stack at a few thousand) or hloforge's own walks take."""
    braces, brackets = nesting_depth(text)
    if braces > MAX_NESTING:
        raise ValueError(f"{what}: the text nests regions (or attribute dictionaries) {braces} deep, counting "
                         f"the braces {{ }} of the module (implicit or not) and its functions; hloforge accepts at "
                         f"most {MAX_NESTING}")
    if brackets > MAX_BRACKETS:
        raise ValueError(f"{what}: the text nests brackets ({{, [ and ( together) {brackets} deep; hloforge "
                         f"accepts at most {MAX_BRACKETS}")
