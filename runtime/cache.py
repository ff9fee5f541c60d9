"""Executable caches: a bounded in-memory LRU and an optional directory of serialized executables.

Keys are sha256 fingerprints of the module text (with locations) plus the devices, compile
options and jaxlib/platform versions (``pjrt.environment``), so a stale entry is never looked up;
a corrupt one (bad checksum, or XLA cannot deserialize it) is deleted and rebuilt.
"""
from __future__ import annotations

import collections
import hashlib
import os
import tempfile
import threading

_MAGIC = b"HLOFORGE-EXECUTABLE-1\n"
_SUFFIX = ".hfx"


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


def disk_load(directory: str, key: str) -> bytes | None:
    """The payload stored under ``key``, or None if absent; a corrupt file is deleted."""
    try:
        with open(_path(directory, key), "rb") as f:
            data = f.read()
    except OSError:
        return None
    head = len(_MAGIC)
    digest, payload = data[head:head + 32], data[head + 32:]
    if data[:head] != _MAGIC or hashlib.sha256(payload).digest() != digest:
        disk_discard(directory, key)
        return None
    return payload


def disk_store(directory: str, key: str, payload: bytes) -> bool:
    """Write atomically (temp file + rename); returns False if the directory is not writable."""
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=_SUFFIX)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(_MAGIC + hashlib.sha256(payload).digest() + payload)
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
