"""The columnar index of ``ratings.jsonl``: what the fast reader found, kept as Parquet files.

The log stays the only truth; the index is derived and disposable. Beside the log, under
``<data dir>/cache/index/<log name>/``, each *chunk* holds the events of a byte range of complete
lines as the fast reader (:mod:`analysis._reader`) checked them (:mod:`.chunks` has the files'
columns). A command reads the chunks and scans only the lines appended since, which become a chunk
of their own; many small chunks are merged into one.

The index is used only while it still describes the log (:mod:`.trust`): the same inode, not
shorter than what it covers, the first and last line of every chunk unchanged, and, when the size
is unchanged, the same modification time. Anything else (an editor's save, ``sed -i``, a rewrite
in place of the same size, a truncation, a damaged chunk file) rebuilds it from the log. An edit
in place that keeps every chunk's first and last line *and* is followed by an append before the
next command is not caught (the writer never does that; delete ``cache/index`` after such
surgery). ``HILBOT_NO_INDEX=1`` reads the log without the index.

Files are written aside and renamed into place, ``meta.json`` last, under a lock: a reader never
sees a half-written index, and a reader whose chunks vanished under it (another process merged
them) reads again. Where the index cannot be written (a read-only data directory, a symbolic link
in the way, a value Parquet cannot hold), the log is read without it: the results are the same.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from .log import DISABLE, TYPED, VERSION, IndexedLog, Snapshot, index_dir

MIN_BYTES = 1 << 20
"""Logs smaller than this (about 2,500 ratings) are read whole: for them the index saves nothing
(``HILBOT_INDEX_MIN_BYTES`` sets another size; 0 indexes every log)."""


def enabled(log: str | Path) -> bool:
    """Whether commands read the log at ``log`` through the index: ``HILBOT_NO_INDEX`` unset (or
    ``0``), and the log at least :data:`MIN_BYTES` long."""
    if os.environ.get(DISABLE, "") not in ("", "0"):
        return False
    try:
        smallest = int(os.environ.get("HILBOT_INDEX_MIN_BYTES", MIN_BYTES))
    except ValueError:
        smallest = MIN_BYTES
    try:
        return os.stat(log).st_size >= smallest
    except OSError:  # no log (or none readable): the readers say so
        return smallest <= 0


if TYPE_CHECKING:
    from .._scan import Scan


def start_indexed_scan(path: str | Path, jobs: int | None = None) -> Callable[[], "Scan"]:
    """:func:`analysis._reader.start_scan`, through the index when it is enabled."""
    from .._reader import start_scan

    if not enabled(path):
        return start_scan(path, jobs)
    return lambda: indexed_scan(path, jobs=jobs)


def indexed_scan(path: str | Path, *, jobs: int | None = None) -> "Scan":
    """The scan of the whole log (what :func:`analysis._reader.scan_log` gives), from the index
    plus the lines appended since it was written; the index is brought up to date on the way."""
    from .._reader import start_scan
    from .._scan import Scan, empty_events

    for _ in range(3):
        snapshot = indexed(path, jobs=jobs)
        if snapshot is None:
            return Scan(empty_events())
        try:
            return snapshot.scan()
        except FileNotFoundError:  # another process merged the chunks meanwhile: read again
            continue
    return start_scan(path, jobs)()


def indexed(path: str | Path, *, jobs: int | None = None) -> Snapshot | None:
    """The index of the log at ``path`` brought up to date (None: there is no log)."""
    return IndexedLog.open(Path(path), jobs)


__all__ = [
    "DISABLE",
    "MIN_BYTES",
    "TYPED",
    "VERSION",
    "Snapshot",
    "enabled",
    "index_dir",
    "indexed",
    "indexed_scan",
    "start_indexed_scan",
]
