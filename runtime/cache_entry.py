"""The persistent cache's entry files: ``MAGIC``, the key, a line of JSON about the program (its name,
device, kind and when it was written: what ``hloforge cache --list`` shows), the payload's length and a
CRC-32 of key, line and payload (``_CHECK``), then the payload. Entries of the formats before are still
read: ``MAGIC_V3`` (a sha256 where the length and CRC are) and ``MAGIC_V2`` (a sha256, no line about the
program; ``cache --list`` shows ``?`` for what they do not say).

Why a CRC and not a cryptographic hash: the check finds entries that are torn (a crash between write and
rename on a file system that reorders them: a short or zero-filled file) or corrupted (bit rot, a stray
write); the length field alone finds every truncated or extended file, and CRC-32 every error burst up to
32 bits and any other corruption but for one chance in 2**32. It never protected against someone who can
write the directory: they can write a matching sha256 as well (the directory is trusted, ``cache.py``).
A sha256 of an 8 MB payload cost a disk hit about 5 ms, the CRC about 1 ms (docs/benchmarks.md)."""
from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import struct
import time
import zlib

MAGIC = b"HLOFORGE-EXECUTABLE-4\n"
MAGIC_V3 = b"HLOFORGE-EXECUTABLE-3\n"
MAGIC_V2 = b"HLOFORGE-EXECUTABLE-2\n"
_CHECK = struct.Struct("<QI")  # (payload bytes, CRC-32 of the key line, the line about it and the payload)
_SHA256 = 32
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
    return MAGIC + name + line + _CHECK.pack(len(payload), zlib.crc32(payload, zlib.crc32(name + line))) + payload


def _split(data, name: bytes):
    """(magic, the line about the entry, where the check starts) of an entry of any format whose key
    line is ``name`` (``data``: the whole entry, or its first ``header_bytes``); None for anything else."""
    for magic, with_line in ((MAGIC, True), (MAGIC_V3, True), (MAGIC_V2, False)):
        if data[:len(magic)] == magic:
            start = len(magic) + len(name)
            if data[len(magic):start] != name:
                return None
            if not with_line:
                return magic, b"", start
            end = data.find(b"\n", start, start + MAX_ABOUT)
            return (magic, bytes(data[start:end + 1]), end + 1) if end >= 0 else None
    return None


def header_bytes(key: str) -> int:
    """How many bytes of an entry hold its header, at most (what ``read_entry`` reads first)."""
    return len(MAGIC) + len(key) + 1 + MAX_ABOUT + max(_CHECK.size, _SHA256)


def _intact(magic: bytes, name: bytes, line: bytes, check, payload) -> bool:
    if magic == MAGIC:
        length, crc = _CHECK.unpack(check)
        return len(payload) == length and zlib.crc32(payload, zlib.crc32(name + line)) == crc
    digest = hashlib.sha256(name + line)
    digest.update(payload)
    return digest.digest() == check


def _check_size(magic: bytes) -> int:
    return _CHECK.size if magic == MAGIC else _SHA256


def decode_entry(data: bytes, key: str) -> bytes | None:
    """The payload of an intact entry for ``key``; None for anything else (another key's entry too)."""
    name = key.encode("ascii") + b"\n"
    found = _split(data, name)
    if found is None:
        return None
    magic, line, head = found
    start = head + _check_size(magic)
    if len(data) < start:
        return None
    payload = memoryview(data)[start:]  # (no copy of a large payload to check it)
    return data[start:] if _intact(magic, name, line, data[head:start], payload) else None


def read_entry(fd: int, size: int, key: str) -> bytes | None:
    """The payload of the intact entry for ``key`` in the open regular file ``fd`` of ``size`` bytes;
    None for anything else. The header is read first, then the payload into one bytes object of its
    own: no copy of the file's bytes to cut the payload out of them."""
    name = key.encode("ascii") + b"\n"
    head = os.pread(fd, min(size, header_bytes(key)), 0)
    found = _split(head, name)
    if found is None:
        return None
    magic, line, at = found
    start = at + _check_size(magic)
    if size < start:
        return None
    check = head[at:start]
    if magic == MAGIC and _CHECK.unpack(check)[0] != size - start:
        return None  # (torn, or grown: nothing to read)
    payload = _pread_all(fd, size - start, start)
    return payload if _intact(magic, name, line, check, payload) else None


def _pread_all(fd: int, n: int, offset: int) -> bytes:
    data = os.pread(fd, n, offset)
    if len(data) == n or not data:  # (one read of a regular file gives all of it, bar a signal or a shrunk file)
        return data
    chunks, got = [data], len(data)
    while got < n:
        more = os.pread(fd, n - got, offset + got)
        if not more:
            break
        chunks.append(more)
        got += len(more)
    return b"".join(chunks)


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
        head = f.read(header_bytes(key))
    try:
        found = _split(head, key.encode("ascii") + b"\n")
        about = json.loads(found[1]) if found and found[1] else {}
    except (ValueError, UnicodeError):
        return {}
    return about if isinstance(about, dict) else {}
