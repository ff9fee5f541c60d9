"""Executable caches: a bounded in-memory LRU and an optional directory of serialized executables.

Keys are sha256 fingerprints of the module text (with locations) plus the devices, compile
options and jaxlib/platform versions (``pjrt.environment``), so a stale entry is never looked up.
An entry file is ``_MAGIC``, its key, a sha256 of key and payload, then the payload (jaxlib's
serialized executable). Anything else found under an entry's name (a bad checksum, another key's
entry, a symbolic link, a FIFO or device, a file over ``MAX_ENTRY_BYTES``, bytes XLA cannot
deserialize) is deleted, counted as a ``disk_error`` and rebuilt.

Trust: the payload is native machine code that this process runs. The checksum proves an entry is
intact, not who wrote it; a payload altered with a matching checksum runs as it is (and may kill
the process). So the directory must be trusted like a Python site-packages directory: only you
should be able to write it. Directories this module creates are private (mode 0700); one that is
writable by every user, or that belongs to another user (not root), is not used at all (one
RuntimeWarning per directory and process; compiles go on without the disk cache). A
group-writable directory is used: everyone in the group can put code into your processes.
"""
from __future__ import annotations

import collections
import hashlib
import os
import stat
import tempfile
import threading
import warnings

from hloforge.runtime.files import read_regular_file

_MAGIC = b"HLOFORGE-EXECUTABLE-2\n"
_SUFFIX = ".hfx"
MAX_ENTRY_BYTES = 4 << 30  # larger executables are neither written nor read


def fingerprint(code: str | bytes, *parts) -> str:
    """sha256 hex digest of the module code and the ``repr`` of everything else that matters."""
    h = hashlib.sha256(code.encode() if isinstance(code, str) else code)
    h.update(repr(parts).encode())
    return h.hexdigest()


class MemoryCache:
    """A thread-safe LRU map of fingerprint -> loaded executable, at most ``maxsize`` entries."""

    def __init__(self, maxsize: int = 256):
        self.maxsize = maxsize
        self._entries: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key, value) -> None:
        with self._lock:
            if self.maxsize == 0:
                return
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.maxsize:
                self._entries.popitem(last=False)

    def resize(self, maxsize: int) -> None:
        with self._lock:
            self.maxsize = maxsize
            while len(self._entries) > maxsize:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self):
        return len(self._entries)

    def __contains__(self, key):
        return key in self._entries


MEMORY = MemoryCache()

_stats = collections.Counter()
_stats_lock = threading.Lock()


def count(event: str) -> None:
    with _stats_lock:
        _stats[event] += 1


def stats() -> dict:
    """Counts since start (or ``reset_stats``): compiles, memory_hits, disk_hits, disk_writes,
    disk_errors (corrupt or unusable entries that were rebuilt)."""
    with _stats_lock:
        return {k: _stats[k] for k in ("compiles", "memory_hits", "disk_hits", "disk_writes",
                                       "disk_errors")}


def reset_stats() -> None:
    with _stats_lock:
        _stats.clear()


def clear() -> None:
    """Empty the in-memory cache (the directory is left alone)."""
    MEMORY.clear()


def _path(directory: str, key: str) -> str:
    return os.path.join(directory, key + _SUFFIX)


def encode_entry(key: str, payload: bytes) -> bytes:
    """The bytes of the entry file for ``key``."""
    name = key.encode("ascii") + b"\n"
    return _MAGIC + name + hashlib.sha256(name + payload).digest() + payload


def decode_entry(data: bytes, key: str) -> bytes | None:
    """The payload of an intact entry for ``key``; None for anything else (another key's entry too)."""
    name = key.encode("ascii") + b"\n"
    head = len(_MAGIC) + len(name)
    if not data.startswith(_MAGIC) or data[len(_MAGIC):head] != name:
        return None
    digest, payload = data[head:head + 32], data[head + 32:]
    return payload if hashlib.sha256(name + payload).digest() == digest else None


_refused: set = set()  # directories already warned about
_refused_lock = threading.Lock()


def _untrusted_because(info) -> str | None:
    if info.st_mode & stat.S_IWOTH:
        return "is writable by every user"
    uid = os.getuid() if hasattr(os, "getuid") else None
    if uid is not None and info.st_uid not in (uid, 0):
        return f"belongs to another user (uid {info.st_uid}, this process runs as {uid})"
    return None


def trusted(directory: str) -> bool:
    """Whether ``directory`` (existing) may hold executables this process runs (see the module
    docstring); the first refusal of each directory warns."""
    try:
        info = os.stat(directory)
    except OSError:
        return False
    reason = _untrusted_because(info)
    if reason is None:
        return True
    with _refused_lock:
        first = directory not in _refused
        _refused.add(directory)
    if first:
        warnings.warn(f"hf.config.cache_dir {directory} {reason}: the executable cache holds native code, "
                      f"so it is not used (make the directory yours and not writable by others: "
                      f"chmod o-w, or choose another)", RuntimeWarning, stacklevel=2)
    return False


def disk_load(directory: str, key: str) -> bytes | None:
    """The payload stored under ``key``, or None if absent, unusable (deleted) or the directory is
    not trusted."""
    if not trusted(directory):
        return None
    try:
        data = read_regular_file(_path(directory, key), MAX_ENTRY_BYTES, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):  # a link, a FIFO, a device, too large, unreadable
        data = None
    payload = None if data is None else decode_entry(data, key)
    if payload is None:
        disk_discard(directory, key)
    return payload


def disk_store(directory: str, key: str, payload: bytes) -> bool:
    """Write atomically (temp file + rename); returns False if the directory is not writable or
    not trusted, or the payload is over ``MAX_ENTRY_BYTES``."""
    if len(payload) > MAX_ENTRY_BYTES:
        return False
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError:
        return False
    if not trusted(directory):
        return False
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=_SUFFIX)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(encode_entry(key, payload))
        os.replace(tmp, _path(directory, key))
    except OSError:
        try:
            os.remove(tmp)
        except OSError:
            pass
        return False
    count("disk_writes")
    return True


def disk_discard(directory: str, key: str) -> None:
    count("disk_errors")
    try:
        os.remove(_path(directory, key))
    except OSError:
        pass
