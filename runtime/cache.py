"""Executable caches: a bounded in-memory LRU and a directory of serialized executables.

Keys are sha256 fingerprints of the module without its locations (``module_key``: its bytecode, or
its text where there is no module) plus the devices, compile options and jaxlib/platform versions
(``pjrt.environment``), so a stale entry is never looked up.
An entry file holds its key, a line about the program (what ``hloforge cache --list`` shows), the
payload's length and a CRC-32 of those and the payload, then the payload, jaxlib's serialized
executable (``cache_entry.py``, which says why a CRC).
Anything else found under an entry's name (a bad checksum, another key's entry, a symbolic link, a
FIFO or device, a file over ``MAX_ENTRY_BYTES``, bytes XLA cannot deserialize) is deleted, counted
as a ``disk_error`` and rebuilt. Files of other names are left alone.

The directory is on by default (``default_directory``: ``$XDG_CACHE_HOME/hloforge``, else
``~/.cache/hloforge``) and bounded: after each write the least recently used entries go until the
entries add up to at most ``hf.config.cache_max_bytes``. An entry's modification time is its last
use (a load touches it; access times are not reliable on ``relatime`` or ``noatime`` mounts).
Several processes may share a directory: entries are written to a temp file and renamed, so a
reader sees a whole entry or none, and an entry deleted under a reader is just a miss. A directory
that cannot be created or written gives one RuntimeWarning per directory and process; compiles go
on with the memory cache only.

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
import time
import warnings

from hloforge.runtime.cache_entry import SUFFIX as _SUFFIX
from hloforge.runtime.cache_entry import about, decode_entry, encode_entry, entry_about  # noqa: F401  (cache.about, ...)
from hloforge.runtime.cache_entry import read_entry
from hloforge.runtime.files import open_regular_file

_TEMP_PREFIX = ".tmp-"
MAX_ENTRY_BYTES = 4 << 30  # larger executables are neither written nor read
DEFAULT_MAX_BYTES = 1 << 30  # hf.config.cache_max_bytes unless HLOFORGE_CACHE_MAX_BYTES says otherwise
# Part of every key: bump it when what hloforge passes to XLA besides the module text changes
# (the compile options of pjrt.compile_options), so entries written before are never looked up.
KEY_VERSION = 4  # (3 held executables compiled at LLVM level 1 for a few commits)
_STALE_TEMP_SECONDS = 3600  # a writer's temp file this old was left by a process that died
_LOW_WATER = 0.9  # eviction frees down to this fraction of the bound, so the next writes scan nothing
_RESCAN_FRACTION = 32  # rescan after a 32nd of the bound was written (other processes write too)


def default_directory(environ=None) -> str | None:
    """``$XDG_CACHE_HOME/hloforge``, else ``~/.cache/hloforge``; None when there is no home directory."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):  # (the XDG spec says to ignore a relative one)
        home = env.get("HOME") or os.path.expanduser("~")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "hloforge")


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


def count(event: str, n: int = 1) -> None:
    with _stats_lock:
        _stats[event] += n


def stats() -> dict:
    """Counts since start (or ``reset_stats``): compiles, memory_hits, disk_hits, disk_writes,
    disk_errors (corrupt or unusable entries that were rebuilt), disk_evictions (entries deleted
    to keep the directory within its bound), pipeline_hits and pipeline_writes (hf.jit programs
    whose pass pipeline was skipped, and the entries that let a later process skip it),
    pipeline_reverts (hf.optimize programs handed back as jax lowered them: the rewrite did not pay),
    split_hits and split_writes (hf.optimize's forward/backward programs of a gradient read from the
    directory, and written there), portable_hits and portable_writes (the serialized modules hf.optimize
    hands to jax.export)."""
    with _stats_lock:
        return {k: _stats[k] for k in ("compiles", "memory_hits", "disk_hits", "disk_writes", "disk_errors",
                                       "disk_evictions", "pipeline_hits", "pipeline_writes", "pipeline_reverts",
                                       "split_hits", "split_writes", "portable_hits", "portable_writes")}


def reset_stats() -> None:
    with _stats_lock:
        _stats.clear()


def clear() -> None:
    """Empty the in-memory cache (the directory is left alone)."""
    MEMORY.clear()


_stamp: list = []
_SOURCE_FOLDERS = ("frontend", "passes", "runtime")  # (and the package's top-level files)


def source_stamp() -> str:
    """A fingerprint of hloforge's own sources (each ``.py`` file's path, size and modification
    time): part of the keys of entries that stand for what hloforge computed (the pass pipeline's
    result), so an edited or upgraded hloforge never reads what an older one wrote."""
    if not _stamp:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        found, folders = [], [root]
        while folders:
            folder = folders.pop()
            with os.scandir(folder) as scan:
                for entry in sorted(scan, key=lambda e: e.name):
                    if entry.name.endswith(".py") and entry.is_file():
                        info = entry.stat()
                        found.append((entry.path[len(root):], info.st_size, info.st_mtime_ns))
                    elif entry.is_dir() and (entry.name in _SOURCE_FOLDERS if folder == root
                                             else entry.name != "__pycache__"):
                        folders.append(entry.path)
        _stamp.append(fingerprint(repr(found)))
    return _stamp[0]


def _path(directory: str, key: str) -> str:
    return os.path.join(directory, key + _SUFFIX)


_warned: set = set()  # directories already warned about (one warning per directory and process)
_warned_lock = threading.Lock()


def _warn_once(directory: str, message: str) -> None:
    with _warned_lock:
        first = directory not in _warned
        _warned.add(directory)
    if first:
        warnings.warn(message, RuntimeWarning, stacklevel=4)


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
    _warn_once(directory, f"hf.config.cache_dir {directory} {reason}: the executable cache holds native code, "
                          f"so it is not used (make the directory yours and not writable by others: "
                          f"chmod o-w, or choose another)")
    return False


def _unusable(directory: str, what: str, error: OSError) -> None:
    reason = error.strerror or type(error).__name__
    _warn_once(directory, f"hf.config.cache_dir {directory}: cannot {what} ({reason}); compiled executables "
                          f"are kept in memory only (choose another directory with HLOFORGE_CACHE_DIR or "
                          f"hf.config.cache_dir, or turn the disk cache off with HLOFORGE_CACHE_DIR='')")


def disk_load(directory: str, key: str) -> bytes | None:
    """The payload stored under ``key``, or None if absent, unusable (deleted) or the directory is
    not trusted. A hit marks the entry as just used (its modification time)."""
    if not trusted(directory):
        return None
    path = _path(directory, key)
    try:
        with open_regular_file(path, MAX_ENTRY_BYTES, follow_symlinks=False) as (fd, size):
            payload = read_entry(fd, size, key)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):  # a link, a FIFO, a device, too large, unreadable
        payload = None
    if payload is None:
        disk_discard(directory, key)
    else:
        _touch(path)
    return payload


def disk_has(directory: str, key: str) -> bool:
    """Whether an entry file for ``key`` exists in a trusted ``directory`` (not read: a corrupt one
    is found, and replaced, when it is loaded)."""
    return trusted(directory) and os.path.isfile(_path(directory, key))


def _touch(path: str) -> None:
    try:
        if os.utime in os.supports_follow_symlinks:
            os.utime(path, follow_symlinks=False)
        else:
            os.utime(path)
    except OSError:  # (a read-only directory still serves its entries)
        pass


def disk_store(directory: str, key: str, payload: bytes, max_bytes: int = DEFAULT_MAX_BYTES,
               event: str = "disk_writes", about: dict | None = None) -> bool:
    """Write atomically (temp file + rename), then evict the least recently used entries until the
    directory's entries add up to at most ``max_bytes``. Returns False, writing nothing, if the
    directory cannot be created or written (one warning), is not trusted, or the entry is larger
    than ``max_bytes`` or ``MAX_ENTRY_BYTES``. ``about``: what its header says (``about(...)``)."""
    if len(payload) > MAX_ENTRY_BYTES:
        return False
    data = encode_entry(key, payload, about)
    if len(data) > max_bytes:
        return False
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError as e:  # (a file in the way, no permission, a read-only file system)
        _unusable(directory, "create the directory", e)
        return False
    if not trusted(directory):
        return False
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=_TEMP_PREFIX, suffix=_SUFFIX)
    except OSError as e:
        _unusable(directory, "write to the directory", e)
        return False
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, _path(directory, key))
    except OSError as e:  # (the disk is full)
        try:
            os.remove(tmp)
        except OSError:
            pass
        _unusable(directory, "write to the directory", e)
        return False
    count(event)
    _account(directory, len(data), max_bytes)
    return True


def disk_discard(directory: str, key: str) -> None:
    count("disk_errors")
    try:
        os.remove(_path(directory, key))
    except OSError:
        pass


def entries(directory: str) -> list:
    """(path, bytes, last use) of the directory's entry files, least recently used first. Temp
    files that writers which died left behind are deleted on the way."""
    found = []
    now = time.time()
    try:
        scan = list(os.scandir(directory))
    except OSError:
        return []
    for entry in scan:
        if not entry.name.endswith(_SUFFIX):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:  # (deleted by another process meanwhile)
            continue
        if entry.name.startswith(_TEMP_PREFIX):
            if now - info.st_mtime > _STALE_TEMP_SECONDS:
                _remove(entry.path)
        elif stat.S_ISREG(info.st_mode):
            found.append((entry.path, info.st_size, info.st_mtime))
    found.sort(key=lambda e: e[2])
    return found


_written: dict = {}  # directory -> [its entries' bytes at the last scan + this process's writes since, those writes]
_written_lock = threading.Lock()


def _account(directory: str, size: int, max_bytes: int) -> None:
    """Count a write; scan and evict when the directory may be over its bound. A scan lists every
    entry, so it runs on a process's first write, when the estimate passes the bound, and after
    a 32nd of the bound was written (by this process; others' writes are seen at the next scan)."""
    with _written_lock:
        state = _written.get(directory)
        if state is not None:
            state[0] += size
            state[1] += size
        if state is not None and state[0] <= max_bytes and state[1] <= max_bytes // _RESCAN_FRACTION:
            return
    total = evict(directory, max_bytes)
    with _written_lock:
        _written[directory] = [total, 0]


def evict(directory: str, max_bytes: int) -> int:
    """If the entries add up to more than ``max_bytes``, delete the least recently used until the
    rest add up to at most 90% of it; returns the bytes left. Several processes may evict at once
    (a file already gone is skipped)."""
    found = entries(directory)
    total = sum(size for _, size, _ in found)
    if total <= max_bytes:
        return total
    evicted = 0
    for path, size, _ in found:
        if total <= max_bytes * _LOW_WATER:
            break
        _remove(path)
        total -= size
        evicted += 1
    count("disk_evictions", evicted)
    return total


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:  # (another process removed it first, or the directory is read-only)
        pass


def usage(directory: str) -> dict:
    """What ``hloforge cache`` prints: entries, their total bytes, the oldest and newest last use."""
    found = entries(directory)
    return {"entries": len(found), "bytes": sum(size for _, size, _ in found),
            "oldest": found[0][2] if found else None, "newest": found[-1][2] if found else None}


def disk_clear(directory: str) -> tuple:
    """Delete every entry file (and writers' temp files) of ``directory``, nothing else; returns
    (files deleted, bytes freed)."""
    deleted = freed = 0
    with _written_lock:
        _written.pop(directory, None)
    try:
        scan = list(os.scandir(directory))
    except FileNotFoundError:
        return 0, 0
    for entry in scan:
        if not entry.name.endswith(_SUFFIX):
            continue
        try:
            size = entry.stat(follow_symlinks=False).st_size
            os.remove(entry.path)
        except FileNotFoundError:
            continue
        deleted += 1
        freed += size
    return deleted, freed
