"""Bringing a log's index up to date: trust it or rebuild it, add the new lines, merge chunks.

``meta.json`` lists the chunks in log order. Per chunk: ``name``, its byte range ``start``-``end``,
``lines`` (the log's lines it covers) and ``lines_before``, the checksums and lengths of its first
and last line, its bad lines (``issues``: line, reason, torn), ``raw`` observations, record
``counts`` and ``slow_lines``. Beside them: the log's inode, device, size and modification time
when it was last indexed, and ``end``, where the complete lines indexed end.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from evaluation.log import LogIssue

from . import chunks as chunk_files
from . import deliveries as delivery_files

if TYPE_CHECKING:
    import numpy as np

    from .._scan import Scan

VERSION = 6
"""The index format; an index of another format is rebuilt."""
DISABLE = "HILBOT_NO_INDEX"
"""Set (to anything but ``0`` or empty) to read the log without the index."""
MAX_CHUNKS = 12
"""More chunks than this are merged into one (appends make small chunks)."""
TYPED = ("adjudication", "review_summary", "triage_decision", "digest_posted")
"""Record types whose lines each chunk lists (few in a log: read by their offsets)."""
_BLOCK = 64 << 20
_EDGE = 1 << 16
"""Bytes of a chunk's first and last line its checksums cover."""


def index_dir(log: str | Path) -> Path:
    """Where the index of a log lives: ``<log's folder>/cache/index/<log name>/``."""
    log = Path(log)
    return log.parent / "cache" / "index" / log.stem


@dataclass(frozen=True)
class LogState:
    """What the log was when it was read: its identity, size and modification time."""

    inode: int
    device: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: Path) -> "LogState | None":
        """The state of the log at ``path``; None when there is none (a directory, a FIFO: the
        readers' one-line error)."""
        from evaluation.log import open_for_reading

        handle = open_for_reading(path)
        if handle is None:
            return None
        with handle:
            info = os.fstat(handle.fileno())
        return cls(info.st_ino, info.st_dev, info.st_size, info.st_mtime_ns)


@dataclass
class Snapshot:
    """The index of a log as one command reads it: the chunks written, plus what could not be."""

    path: Path
    """The log (as the caller named it: bad lines are reported under it)."""
    folder: Path
    """The index's folder."""
    chunks: list[dict] = field(default_factory=list)
    """The chunks on disk, in log order (``meta.json``'s entries)."""
    unwritten: list["Scan"] = field(default_factory=list)
    """Scans of lines not in a chunk: new lines that could not be written, and a last line still
    without its newline (lines numbered from 1 within each)."""
    jobs: int | None = None
    spans: list[tuple[int, int]] = field(default_factory=list)
    """The byte range of each unwritten part."""
    log: LogState | None = None
    """The log as it was when the index was brought up to date (its chunks' offsets are into
    this file)."""

    @property
    def complete(self) -> bool:
        """Whether the chunks hold every event of the log (what a query of the files needs)."""
        return not any(len(s.events["line"]) for s in self.unwritten)

    def event_files(self) -> list[str]:
        """The chunks' events files."""
        return chunk_files.files(self.folder, [c["name"] for c in self.chunks], "events")

    @property
    def whole(self) -> bool:
        """Whether the chunks hold every valid record of the log (deliveries and adjudications too,
        not only the events): what the bot's start needs."""
        return not any(sum(s.counts.values()) for s in self.unwritten)

    def delivery_files(self) -> list[str]:
        """The chunks' deliveries files."""
        return chunk_files.files(self.folder, [c["name"] for c in self.chunks], "deliveries")

    def names_file(self) -> str | None:
        """The names of every chunk's codes (the last chunk's)."""
        return (
            chunk_files.files(self.folder, [self.chunks[-1]["name"]], "names")[0]
            if self.chunks
            else None
        )

    def issues(self) -> list[LogIssue]:
        """The bad lines of the whole log, in order (no event is read)."""
        found = [
            LogIssue(self.path, n, why, torn) for c in self.chunks for n, why, torn in c["issues"]
        ]
        lines = sum(c["lines"] for c in self.chunks)
        for part in self.unwritten:
            found += [LogIssue(self.path, i.line + lines, i.reason, i.torn) for i in part.issues]
            lines += part.lines
        return found

    def counts(self) -> dict[str, int]:
        """Valid records per type, of the whole log (no event is read)."""
        counts: dict[str, int] = {}
        for part in [*(c["counts"] for c in self.chunks), *(p.counts for p in self.unwritten)]:
            for name, n in part.items():
                counts[name] = counts.get(name, 0) + n
        return counts

    def typed(self, kind: str, issues: list[LogIssue] | None = None) -> list[tuple[int, Any]]:
        """Every valid ``kind`` record (one of :data:`TYPED`) of the log with its line, in order:
        the chunks' candidate lines read at their offsets, the unwritten parts searched. A bad
        candidate line goes to ``issues`` as :func:`analysis._records.read_typed` reports it."""
        from .._records import candidate

        found: list[tuple[int, Any]] = []

        def read(raw: bytes, line: int) -> None:
            torn = not raw.endswith(b"\n")
            record = candidate(raw, kind, self.path, line, issues, torn=torn)
            if record is not None:
                found.append((line, record))

        with open(self.path, "rb") as handle:
            for chunk in self.chunks:
                for line, offset in chunk["typed"][kind]:
                    handle.seek(offset)
                    read(handle.readline(), line)
            lines = sum(c["lines"] for c in self.chunks)
            for (start, end), part in zip(self.spans, self.unwritten):
                starts, typed = _layout(self.path, start, end)
                for n in typed[kind]:
                    handle.seek(int(starts[n]))
                    read(handle.readline(), lines + n + 1)
                lines += part.lines
        return found

    def scan(self) -> "Scan":
        """The whole log's scan (the chunks' events read back, the unwritten parts added)."""
        import numpy as np

        from .._reader import merge_scans
        from .._scan import Scan, empty_events

        whole = not self.unwritten  # every event in the chunks: their ``first`` is the fold's
        if self.chunks:
            names = [c["name"] for c in self.chunks]
            events, tags, dictionary, first = chunk_files.read(self.folder, names, keys=not whole)
            scan = Scan(events)
            scan.tags, scan.tag_names = tags, dictionary.values[chunk_files.TAG]
            for chunk in self.chunks:
                _add_meta(scan, chunk)
            if whole:
                scan.first = first
            else:
                scan = merge_scans([scan, *self.unwritten])
        elif self.unwritten:
            scan = merge_scans(self.unwritten) if len(self.unwritten) > 1 else self.unwritten[0]
        else:
            scan = Scan(empty_events())
        if scan.first is None:
            keys = scan.events["idempotency_key"]
            scan.events["idem_hash"] = np.fromiter(map(hash, keys), np.int64, count=len(keys))
        scan.issues = [LogIssue(self.path, i.line, i.reason, i.torn) for i in scan.issues]
        return scan


def _add_meta(scan: "Scan", chunk: dict) -> None:
    scan.issues += [LogIssue(Path(), line, reason, torn) for line, reason, torn in chunk["issues"]]
    scan.raw += [(line, what, detail) for line, what, detail in chunk["raw"]]
    for name, n in chunk["counts"].items():
        scan.counts[name] = scan.counts.get(name, 0) + n
    scan.slow_lines += chunk["slow_lines"]
    scan.lines += chunk["lines"]


def _layout(
    path: Path, start: int, end: int, kinds: tuple[str, ...] = TYPED
) -> tuple["np.ndarray", dict[str, list[int]]]:
    """The byte offset of every line in [start, end), and per record type of ``kinds`` the index
    of each line holding ``"<type>"`` (the candidates: the record parser decides)."""
    import numpy as np

    parts, typed = [], {kind: [] for kind in kinds}  # type: ignore[var-annotated]
    needles = {kind: f'"{kind}"'.encode() for kind in kinds}
    seen = 0
    with open(path, "rb") as handle:
        position = start
        while position < end:
            handle.seek(position)
            block = handle.read(min(_BLOCK, end - position))
            cut = block.rfind(b"\n") + 1 or len(block)
            block = block[:cut]
            ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)
            line_starts = np.concatenate([[0], ends[:-1] + 1]) if len(ends) else np.zeros(1, int)
            for kind, needle in needles.items():
                at = block.find(needle)
                while at != -1:
                    line = int(np.searchsorted(line_starts, at, side="right")) - 1
                    typed[kind].append(seen + line)
                    at = block.find(b"\n", at)
                    at = -1 if at == -1 else block.find(needle, at)
            parts.append(line_starts + position)
            seen += len(line_starts)
            position += cut
    return np.concatenate(parts).astype(np.int64), typed


def _line_sum(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class IndexedLog:
    """One command's update of a log's index."""

    def __init__(self, path: Path, log: LogState, jobs: int | None):
        self.path, self.log, self.jobs = path, log, jobs
        self.folder = index_dir(path)

    @classmethod
    def open(cls, path: Path, jobs: int | None) -> Snapshot | None:
        """The log's index, brought up to date; None when there is no log."""
        for _ in range(5):  # another process updated the index meanwhile: look again
            log = LogState.of(path)
            if log is None:
                return None
            snapshot = cls(path, log, jobs).update()
            if snapshot is not None:
                return snapshot
        from .._reader import start_scan

        scan = start_scan(path, jobs)()  # never settled: read the log without the index
        return Snapshot(path, index_dir(path), [], [scan], jobs)

    def update(self) -> Snapshot | None:
        """Trust or rebuild the index, add the new lines; None when another process changed the
        index between this one's look and its write."""
        self.seen = _read_meta(self.folder)
        meta = self._trusted_meta(self.seen)
        chunks = list(meta["chunks"]) if meta else []
        covered = meta["end"] if meta else 0
        end = self._whole_lines_end(covered)
        snapshot = Snapshot(self.path, self.folder, chunks, jobs=self.jobs, log=self.log)
        fresh = self._scan_fresh(covered, end)
        if fresh is not None or (meta is not None and meta["size"] != self.log.size):
            saved = self._save(meta, fresh, end, snapshot)
            if saved is None:
                return None
            if not saved and fresh is not None:
                snapshot.chunks = chunks
                snapshot.unwritten.append(fresh.scan)
                snapshot.spans.append((fresh.start, fresh.end))
        if end < self.log.size:  # a last line without its newline: read, never indexed
            from .._reader import scan_range

            snapshot.unwritten.append(scan_range(self.path, end, self.log.size))
            snapshot.spans.append((end, self.log.size))
        return snapshot

    # ----------------------------------------------------------- is the index still the log's?

    def _trusted_meta(self, meta: dict | None) -> dict | None:
        if meta is None or meta.get("version") != VERSION:
            return None
        if (meta["inode"], meta["device"]) != (self.log.inode, self.log.device):
            return None
        if meta["end"] > self.log.size:
            return None
        if meta["size"] == self.log.size and meta["mtime_ns"] != self.log.mtime_ns:
            return None  # rewritten in place
        if not self._boundaries_hold(meta["chunks"]) or not _readable(self.folder, meta):
            return None
        return meta

    def _boundaries_hold(self, chunks: list[dict]) -> bool:
        try:
            with open(self.path, "rb") as handle:
                for chunk in chunks:
                    for at, length, digest in (
                        (chunk["start"], chunk["first_len"], chunk["first_sum"]),
                        (chunk["end"] - chunk["last_len"], chunk["last_len"], chunk["last_sum"]),
                    ):
                        handle.seek(at)
                        if _line_sum(handle.read(length)) != digest:
                            return False
        except OSError:
            return False
        return True

    # ----------------------------------------------------------- the new lines

    def _whole_lines_end(self, start: int) -> int:
        """Just after the last newline at or after ``start`` (``start`` when there is none)."""
        with open(self.path, "rb") as handle:
            position = self.log.size
            while position > start:
                step = min(1 << 16, position - start)
                handle.seek(position - step)
                cut = handle.read(step).rfind(b"\n")
                if cut != -1:
                    return position - step + cut + 1
                position -= step
        return start

    def _scan_fresh(self, start: int, end: int) -> "_Fresh | None":
        if end <= start:
            return None
        from .._reader import scan_range, start_scan

        if start == 0:  # a whole log: read by several processes when it is big
            scan = start_scan(self.path, self.jobs, end)()
        else:
            scan = scan_range(self.path, start, end)
        with open(self.path, "rb") as handle:
            handle.seek(start)
            first = handle.readline(_EDGE)
            back = min(end - start, _EDGE)
            handle.seek(end - back)
            tail = handle.read(back)
        last = tail[tail.rfind(b"\n", 0, len(tail) - 1) + 1 :]
        return _Fresh(scan, start, end, first, last)

    # ----------------------------------------------------------- writing

    def _save(
        self, meta: dict | None, fresh: "_Fresh | None", end: int, snap: Snapshot
    ) -> bool | None:
        """Write the new chunk and the meta: True when written, False when the index cannot be
        written, None when another process wrote it since this one read it."""
        try:
            with _locked(self.folder):
                if _read_meta(self.folder) != self.seen:
                    return None
                if meta is None:
                    _clear(self.folder)
                chunks = list(snap.chunks)
                if fresh is not None:
                    chunks.append(self._write(fresh, chunks))
                if len(chunks) > MAX_CHUNKS:
                    chunks = [_merged(self.folder, chunks)]
                _write_meta(self.folder, self._meta(chunks, end))
                _remove_unlisted(self.folder, chunks)
        except Exception:  # noqa: BLE001 - a cache: without it the results are the same
            return False
        snap.chunks = chunks
        return True

    def _write(self, fresh: "_Fresh", chunks: list[dict]) -> dict:
        before = sum(c["lines"] for c in chunks)
        scan = fresh.scan
        shifted = type(scan)(dict(scan.events), tags=scan.tags, tag_names=scan.tag_names)
        shifted.events["line"] = scan.events["line"] + before
        name = f"{fresh.start:012x}-{fresh.end:012x}-{os.getpid()}"
        con = chunk_files.connect()
        try:
            last = chunk_files.files(self.folder, [chunks[-1]["name"]], "names") if chunks else []
            names = chunk_files.Names.read(con, Path(last[0]) if last else None)
        finally:
            con.close()
        starts, typed = _layout(self.path, fresh.start, fresh.end, (*TYPED, "delivery"))
        shifted.events["byte_offset"] = starts[scan.events["line"] - 1]
        earlier = chunk_files.files(self.folder, [c["name"] for c in chunks], "events")
        bad = {i.line for i in scan.issues}
        sent = delivery_files.rows(self.path, starts, typed.pop("delivery"), bad, before)
        chunk_files.write(self.folder, name, shifted, names, earlier, sent)
        return {
            "name": name,
            "start": fresh.start,
            "end": fresh.end,
            "lines_before": before,
            "lines": scan.lines,
            "first_len": len(fresh.first),
            "first_sum": _line_sum(fresh.first),
            "last_len": len(fresh.last),
            "last_sum": _line_sum(fresh.last),
            "issues": [[i.line + before, i.reason, i.torn] for i in scan.issues],
            "raw": [[line + before, what, detail] for line, what, detail in scan.raw],
            "counts": scan.counts,
            "slow_lines": scan.slow_lines,
            "typed": {
                kind: [[int(n) + 1 + before, int(starts[n])] for n in found]
                for kind, found in typed.items()
            },
        }

    def _meta(self, chunks: list[dict], end: int) -> dict:
        return {
            "version": VERSION,
            "log": self.path.name,
            "inode": self.log.inode,
            "device": self.log.device,
            "size": self.log.size,
            "mtime_ns": self.log.mtime_ns,
            "end": end,
            "chunks": chunks,
        }


@dataclass
class _Fresh:
    scan: "Scan"
    start: int
    end: int
    first: bytes
    last: bytes


def _merged(folder: Path, chunks: list[dict]) -> dict:
    """One chunk holding every chunk (their files are removed once the new meta is in place)."""
    first, last = chunks[0], chunks[-1]
    name = f"{first['start']:012x}-{last['end']:012x}-{os.getpid()}"
    chunk_files.merge(folder, [c["name"] for c in chunks], name)
    counts: dict[str, int] = {}
    for chunk in chunks:
        for key, n in chunk["counts"].items():
            counts[key] = counts.get(key, 0) + n
    return {
        "name": name,
        "start": first["start"],
        "end": last["end"],
        "lines_before": first["lines_before"],
        "lines": sum(c["lines"] for c in chunks),
        "first_len": first["first_len"],
        "first_sum": first["first_sum"],
        "last_len": last["last_len"],
        "last_sum": last["last_sum"],
        "issues": [i for c in chunks for i in c["issues"]],
        "raw": [r for c in chunks for r in c["raw"]],
        "counts": counts,
        "slow_lines": sum(c["slow_lines"] for c in chunks),
        "typed": {k: [t for c in chunks for t in c["typed"][k]] for k in TYPED},
    }


# --------------------------------------------------------------------------- files


def _read_meta(folder: Path) -> dict | None:
    try:
        with open(folder / "meta.json", "rb") as handle:
            meta = json.loads(handle.read())
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def _readable(folder: Path, meta: dict) -> bool:
    """Whether every chunk file the meta lists is there and is Parquet (a damaged one: rebuild)."""
    try:
        for chunk in meta["chunks"]:
            for kind in ("events", "tags", "deliveries", "names"):
                with open(folder / f"{chunk['name']}.{kind}.parquet", "rb") as handle:
                    if handle.read(4) != b"PAR1":
                        return False
                    handle.seek(-4, os.SEEK_END)
                    if handle.read(4) != b"PAR1":
                        return False
    except (OSError, KeyError, TypeError):
        return False
    return True


def _safe_folder(folder: Path) -> Path:
    """Create the index folder; refuse to write through a symbolic link on the way."""
    for part in (folder.parent.parent, folder.parent, folder):
        if part.is_symlink():
            raise OSError(f"{part} is a symbolic link")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    _safe_folder(folder)
    fd = os.open(folder / "lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _clear(folder: Path) -> None:
    """Remove an untrusted index's files."""
    (folder / "meta.json").unlink(missing_ok=True)
    for stale in folder.glob("*.parquet"):
        stale.unlink(missing_ok=True)


def _remove_unlisted(folder: Path, chunks: list[dict]) -> None:
    """Remove chunk files the meta no longer lists (merged into one, or left by a crash)."""
    listed = {c["name"] for c in chunks}
    for file in folder.glob("*.parquet"):
        if file.name.split(".", 1)[0] not in listed:
            file.unlink(missing_ok=True)


def _write_meta(folder: Path, meta: dict[str, Any]) -> None:
    write_json(folder / "meta.json", meta)


def write_json(path: Path, value: Any) -> None:
    """Write ``value`` as JSON to a file beside ``path``, renamed over it: a reader sees the old
    file or the new one, never half of one. Raises ``OSError`` (nothing is left behind)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(json.dumps(value).encode("utf-8"))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


__all__ = [
    "DISABLE",
    "MAX_CHUNKS",
    "TYPED",
    "VERSION",
    "IndexedLog",
    "LogState",
    "Snapshot",
    "index_dir",
    "write_json",
]
