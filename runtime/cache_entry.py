"""The persistent cache's entry files: ``MAGIC``, the key, a line of JSON about the program (its name,
device, kind and when it was written: what ``hloforge cache --list`` shows), a sha256 of key, line and
payload, then the payload. Entries of the format before (``MAGIC_V2``, no line about the program)
are still read; ``cache --list`` shows ``?`` for what they do not say."""
from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import time

MAGIC = b"HLOFORGE-EXECUTABLE-3\n"
MAGIC_V2 = b"HLOFORGE-EXECUTABLE-2\n"
MAX_ABOUT = 4096  # bytes of the line about an entry, newline included
SUFFIX = ".hfx"


def about(name: str, devices, kind: str = "executable", module=None) -> dict:
    """What an entry's header says about it: the program's name (with the file and line its entry
    function comes from, when ``module`` says: ``main (train.py:12)``), its device(s) (``cpu:0``,
    ``8 tpu devices``) and ``kind`` (``executable``, or ``pipeline``: the pass pipeline's result)."""
    devices = tuple(devices)
    platforms = sorted({d.platform for d in devices})
    device = (f"{devices[0].platform}:{devices[0].id}" if len(devices) == 1
              else f"{len(devices)} {'/'.join(platforms)} devices")
    return {"name": _program_name(str(name), module), "device": device, "kind": kind}


_FILE_LOCATION = re.compile(r'loc\("([^"]+)":(\d+):\d+\)')


def _program_name(name: str, module) -> str:
    try:
        found = _FILE_LOCATION.fullmatch(str(module.entry_function().location)) if module is not None else None
    except (AttributeError, ValueError):  # (not a Module; no entry function)
        found = None
    if found is None or found[1] == "-":
        return name
    return f"{name} ({os.path.basename(found[1])}:{found[2]})"


def _about_line(about: dict | None) -> bytes:
    line = json.dumps(dict(about or {}, written=round(time.time(), 3)), sort_keys=True).encode("ascii") + b"\n"
    return line if len(line) <= MAX_ABOUT else b"{}\n"


def encode_entry(key: str, payload: bytes, about: dict | None = None) -> bytes:
    """The bytes of the entry file for ``key``; ``about`` (``about(...)``) goes in its header, with the
    time of writing."""
    name, line = key.encode("ascii") + b"\n", _about_line(about)
    return MAGIC + name + line + hashlib.sha256(name + line + payload).digest() + payload


def _split(data: bytes, name: bytes):
    """(the line about the entry, where the checksum starts) of an entry of either format whose key
    line is ``name``; None for anything else."""
    for magic, with_line in ((MAGIC, True), (MAGIC_V2, False)):
        if data.startswith(magic):
            start = len(magic) + len(name)
            if data[len(magic):start] != name:
                return None
            if not with_line:
                return b"", start
            end = data.find(b"\n", start, start + MAX_ABOUT)
            return (data[start:end + 1], end + 1) if end >= 0 else None
    return None


def decode_entry(data: bytes, key: str) -> bytes | None:
    """The payload of an intact entry for ``key``; None for anything else (another key's entry too)."""
    name = key.encode("ascii") + b"\n"
    found = _split(data, name)
    if found is None:
        return None
    line, head = found
    check = hashlib.sha256(name + line)
    check.update(memoryview(data)[head + 32:])  # (no copy of a large payload to check it)
    return data[head + 32:] if check.digest() == data[head:head + 32] else None


def entry_about(path: str) -> dict:
    """What the header of the entry file at ``path`` says about it (``about``'s keys and ``written``);
    {} for an entry of the older format, or one that cannot be read."""
    key = os.path.basename(path)[:-len(SUFFIX)]
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return {}
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return {}
        head = f.read(len(MAGIC) + len(key) + 1 + MAX_ABOUT)
    try:
        found = _split(head, key.encode("ascii") + b"\n")
        about = json.loads(found[0]) if found and found[0] else {}
    except (ValueError, UnicodeError):
        return {}
    return about if isinstance(about, dict) else {}
