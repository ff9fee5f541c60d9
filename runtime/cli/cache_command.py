"""``hloforge cache``: where the persistent executable cache is, how full, and ``clear`` to empty it."""
from __future__ import annotations

import os
import time

from hloforge.runtime import cache
from hloforge.runtime.settings import config

_OFF = ("the persistent executable cache is off (HLOFORGE_CACHE_DIR is empty or hf.config.cache_dir is None); "
        "unset HLOFORGE_CACHE_DIR to use the default directory")


def human_bytes(n: int) -> str:
    """1536 -> "1.5 KiB"; under 1 KiB in bytes."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}"
    return f"{n} bytes"


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


def human_age(seconds) -> str:
    """45 -> "45 s", 5400 -> "1.5 h"; "?" for None (an entry that does not say when it was written)."""
    if not isinstance(seconds, (int, float)):
        return "?"
    seconds = max(seconds, 0)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}" if seconds < 10 * size else f"{seconds // size:.0f} {unit}"
    return f"{seconds:.0f} s"


def _entry_row(path: str, size: int, used: float, now: float) -> tuple:
    about = cache.entry_about(path)
    written = about.get("written")
    age = human_age(now - written if isinstance(written, (int, float)) else None)
    return (str(about.get("name", "?"))[:60], str(about.get("device", "?")), str(about.get("kind", "?")),
            human_bytes(size), age, _when(used), os.path.basename(path))


def list_entries_of(directory: str) -> None:
    """One line per entry, most recently used first: the program's name, its device, its kind (an
    ``executable``, or the ``pipeline`` result that names one), size, age (since it was written), last
    use and file name; ``?`` where an entry an older hloforge wrote does not say."""
    now = time.time()
    rows = [("PROGRAM", "DEVICE", "KIND", "SIZE", "AGE", "LAST USE", "FILE")]
    rows += [_entry_row(path, size, used, now) for path, size, used in reversed(cache.entries(directory))]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [cell.rjust(w) if i in (3, 4) else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths))]
        print("  " + "  ".join(cells).rstrip())


def _state(directory: str) -> str:
    if not os.path.exists(directory):
        return "not created yet; the first compile creates it"
    if not os.path.isdir(directory):
        return "not a directory: compiled executables are kept in memory only"
    reason = cache._untrusted_because(os.stat(directory))
    if reason is not None:
        return f"not used: it {reason} (the entries are native code)"
    if not os.access(directory, os.W_OK):
        return "read-only: entries are read, new ones are kept in memory only"
    return "in use"


def show(directory: str, list_entries: bool) -> None:
    usage = cache.usage(directory)
    print(f"location: {directory} ({_state(directory)})")
    print(f"entries:  {usage['entries']}")
    print(f"size:     {human_bytes(usage['bytes'])} of at most {human_bytes(config.cache_max_bytes)} "
          f"(HLOFORGE_CACHE_MAX_BYTES; least recently used entries go first)")
    if usage["entries"]:
        print(f"last use: {_when(usage['newest'])} (newest), {_when(usage['oldest'])} (oldest)")
    if list_entries and usage["entries"]:
        list_entries_of(directory)


def run(args) -> int:
    directory = config.cache_dir
    if directory is None:
        print(_OFF)
        return 0
    if args.action == "clear":
        deleted, freed = cache.disk_clear(directory)
        print(f"cleared {directory}: {deleted} entr{'y' if deleted == 1 else 'ies'}, {human_bytes(freed)}")
        return 0
    show(directory, args.list)
    return 0
