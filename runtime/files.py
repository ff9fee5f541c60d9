"""Reading files that may not be regular files: a FIFO must not hang the reader, /dev/zero (or a link
to it) must not be read until memory runs out."""
from __future__ import annotations

import os
import stat

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
    _check_kind(path, os.stat(path, follow_symlinks=follow_symlinks).st_mode)  # (devices are never opened)
    flags = _NO_WAIT | (0 if follow_symlinks else getattr(os, "O_NOFOLLOW", 0))
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb", buffering=0) as f:
        info = os.fstat(fd)
        _check_kind(path, info.st_mode)  # (what was opened is what was checked)
        if info.st_size > max_bytes:
            raise ValueError(f"{path} is larger than {_describe_size(max_bytes)} ({info.st_size} bytes)")
        data = _read_at_most(f, max_bytes + 1, info.st_size + 1)
        if len(data) > max_bytes:  # (it grew while being read, or it is a /proc file of size 0)
            raise ValueError(f"{path} is larger than {_describe_size(max_bytes)}")
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
