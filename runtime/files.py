"""Reading files that may not be regular files: a FIFO must not hang the reader, /dev/zero (or a link
to it) must not be read until memory runs out. ``read_input`` also takes pipes, FIFOs and ``-`` (standard
input), as command-line tools do."""
from __future__ import annotations

import contextlib
import os
import stat
import sys
import time

_NO_WAIT = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def _describe_size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} bytes"


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return f" ({name})"
    return ""


def read_regular_file(path, max_bytes: int, *, follow_symlinks: bool = True) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``max_bytes``.

    The checks are made on the opened descriptor (``fstat``), so the file cannot be swapped between
    check and read; the open does not wait on a FIFO. ``follow_symlinks=False`` refuses a symbolic
    link (``O_NOFOLLOW``). Raises ValueError ("... is not a regular file (a FIFO)", "... is larger
    than ...") or OSError (missing, unreadable, a refused link).
    """
    with open_regular_file(path, max_bytes, follow_symlinks=follow_symlinks) as (fd, size):
        with os.fdopen(fd, "rb", buffering=0, closefd=False) as f:
            data = _read_at_most(f, max_bytes + 1, size + 1)
    if len(data) > max_bytes:  # (it grew while being read, or it is a /proc file of size 0)
        raise ValueError(f"{path} is larger than {_describe_size(max_bytes)}")
    return data


@contextlib.contextmanager
def open_regular_file(path, max_bytes: int, *, follow_symlinks: bool = True):
    """``with open_regular_file(path, max_bytes) as (fd, size)``: the open descriptor of ``path`` and its
    size, checked as ``read_regular_file`` checks them (the same errors), for a reader that reads
    parts of the file itself."""
    _check_kind(path, os.stat(path, follow_symlinks=follow_symlinks).st_mode)  # (devices are never opened)
    flags = _NO_WAIT | (0 if follow_symlinks else getattr(os, "O_NOFOLLOW", 0))
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        _check_kind(path, info.st_mode)  # (what was opened is what was checked)
        if info.st_size > max_bytes:
            raise ValueError(f"{path} is larger than {_describe_size(max_bytes)} ({info.st_size} bytes)")
        yield fd, info.st_size
    finally:
        os.close(fd)


STDIN = "-"
STDIN_NAME = "<stdin>"  # (what MLIR's tools call it in diagnostics)


def input_name(path) -> str:
    """What messages and locations call the input ``path``: ``<stdin>`` for ``-``, else the path as given."""
    return STDIN_NAME if os.fspath(path) == STDIN else os.fspath(path)


def read_input(path, max_bytes: int) -> bytes:
    """The bytes of an input: a regular file (``read_regular_file``), or all that a pipe or FIFO gives
    until its writers close it; ``-`` is standard input (a file, a pipe or a terminal).

    The open of a FIFO does not wait: the reader waits up to ``FIFO_WAIT_SECONDS`` for a process to
    open it for writing (then for as long as that process takes), so a FIFO nobody writes to is one
    error, never a hang. Devices (but a terminal on standard input), directories and sockets are
    refused, as is more than ``max_bytes``: ValueError; OSError for a missing or unreadable file.
    """
    if os.fspath(path) == STDIN:
        fd = sys.stdin.fileno() if sys.stdin is not None else 0
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)):
            _check_kind(STDIN_NAME, mode)
        return _read_stream(STDIN_NAME, fd, max_bytes)
    if not stat.S_ISFIFO(os.stat(path).st_mode):
        return read_regular_file(path, max_bytes)
    fd = os.open(path, _NO_WAIT)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISFIFO(mode):  # (swapped for something else meanwhile)
            _check_kind(path, mode)
        first = _first_bytes(path, fd)
        os.set_blocking(fd, True)  # (the writer may take its time: a pipe's reader waits for it)
        return _read_stream(path, fd, max_bytes, first)
    finally:
        os.close(fd)


FIFO_WAIT_SECONDS = 10.0  # how long the reader of a FIFO waits for a writer


def _first_bytes(path, fd: int) -> bytes:
    """The first bytes of the FIFO ``fd`` (opened non-blocking), or none once a writer has opened it;
    ValueError if no writer came within FIFO_WAIT_SECONDS. (With no writer, a read says end of file;
    with a writer and nothing written yet, it would block.)"""
    deadline, delay = time.monotonic() + FIFO_WAIT_SECONDS, 0.001
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return b""
        if chunk:
            return chunk
        if time.monotonic() > deadline:
            raise ValueError(f"{path} is a FIFO no process wrote to within {FIFO_WAIT_SECONDS:g} s")
        time.sleep(delay)
        delay = min(2 * delay, 0.05)


def _read_stream(name, fd: int, max_bytes: int, first: bytes = b"") -> bytes:
    with os.fdopen(fd, "rb", buffering=0, closefd=False) as f:
        data = first + _read_at_most(f, max_bytes + 1 - len(first), 1 << 16)
    if len(data) > max_bytes:
        raise ValueError(f"{name} is larger than {_describe_size(max_bytes)}")
    return data


def _check_kind(path, mode: int) -> None:
    if stat.S_ISLNK(mode):
        raise ValueError(f"{path} is not a regular file (a symbolic link)")
    if not stat.S_ISREG(mode):
        raise ValueError(f"{path} is not a regular file{_kind(mode)}")


def _read_at_most(f, n: int, first: int) -> bytes:
    """Up to ``n`` bytes; the first read asks for ``first`` (the size fstat gave, plus one)."""
    chunks, left, size = [], n, first
    while left > 0:
        chunk = f.read(min(left, size))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
        size = 1 << 24
    return b"".join(chunks)
