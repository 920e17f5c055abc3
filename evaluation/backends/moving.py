"""Moving a store between backends: ``hilbot store export`` writes the JSONL files from a shared
backend, ``hilbot store import`` loads JSONL files into one. JSONL stays the interchange format.

Each line moves byte for byte, in its file's order, runs before ratings. An import is idempotent:
a line the backend already holds (the same bytes in the same stream, or the same idempotency key)
is not stored again, so a second import adds nothing. What does not move, and is counted in the
report: a torn last line (a crash mid-write: no record), and a line repeating another's bytes or
idempotency key, which no reader counts anyway (the first is what counts).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from ..errors import HilbotError
from .base import RATINGS, RUN_PREFIX, Backend, StoreError

BATCH = 5_000
"""Lines per transaction of an import."""


@dataclass
class Moved:
    """What an export or import moved."""

    runs: int = 0
    """Run files (streams) read."""
    lines: int = 0
    """Lines read."""
    stored: int = 0
    """Lines written (an import: new to the backend)."""
    torn: list[str] = field(default_factory=list)
    """``file:line`` of each torn last line left out."""

    @property
    def repeated(self) -> int:
        """Lines the backend already held (or repeats of another line's key or bytes)."""
        return self.lines - self.stored

    def summary(self, verb: str) -> str:
        """One line for the user."""
        text = (
            f"{verb} {self.stored:,} line(s) of {self.runs:,} run(s) and the ratings log; "
            f"{self.repeated:,} already there"
        )
        if self.torn:
            text += f"; torn last line left out: {', '.join(self.torn)}"
        return text


def import_into(url: str | None, source: Path) -> Moved:
    """``hilbot store import``: the JSONL files of ``source`` loaded into the store at ``url``."""
    return _with_backend(url, "import", lambda backend: import_store(backend, source))


def export_from(url: str | None, destination: Path) -> Moved:
    """``hilbot store export``: the store at ``url`` written as JSONL files under
    ``destination``."""
    return _with_backend(url, "export", lambda backend: export_store(backend, destination))


def _with_backend(url: str | None, what: str, work: Callable[[Backend], Moved]) -> Moved:
    from .base import open_backend

    if not url:
        raise no_store(what)
    backend = open_backend(url)
    try:
        return work(backend)
    finally:
        backend.close()


def import_store(backend: Backend, source: Path) -> Moved:
    """Load the JSONL files of a data directory into ``backend`` (runs first, then ratings)."""
    source = Path(source)
    if not source.is_dir():
        raise HilbotError(
            f"no data directory at {source}", fix="give the directory holding ratings.jsonl"
        )
    moved = Moved()
    runs = sorted((source / "runs").glob("*.jsonl")) if (source / "runs").is_dir() else []
    for path in runs:
        moved.runs += 1
        _load(backend, RUN_PREFIX + path.stem, path, moved)
    if (source / "ratings.jsonl").exists():
        _load(backend, RATINGS, source / "ratings.jsonl", moved)
    return moved


def _load(backend: Backend, stream: str, path: Path, moved: Moved) -> None:
    batch: list[bytes] = []
    for number, line in _lines(path):
        if not line.endswith(b"\n"):
            moved.torn.append(f"{path}:{number}")
            continue
        moved.lines += 1
        batch.append(line)
        if len(batch) >= BATCH:
            moved.stored += backend.append(stream, batch)
            batch = []
    if batch or stream.startswith(RUN_PREFIX):
        moved.stored += backend.append(stream, batch)


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    try:
        with open(path, "rb") as handle:
            yield from enumerate(handle, 1)
    except OSError as exc:
        raise HilbotError(
            f"cannot read: {exc.strerror or exc}", where=str(path), fix="check the file"
        ) from None


def export_store(backend: Backend, destination: Path) -> Moved:
    """Write every line of ``backend`` to JSONL files under ``destination``, which must not hold
    any of them yet (nothing is overwritten); each file is written aside and moved into place."""
    destination = Path(destination)
    moved = Moved()
    cursor = ""
    handles: dict[str, tuple[Path, int]] = {}
    try:
        while True:
            lines, after = backend.pull(cursor)
            for line in lines:
                fd = _handle(handles, destination, line.stream, moved)
                if fd is not None:
                    _write(fd, line.data)
                    moved.lines += 1
                    moved.stored += 1
            if after == cursor or not lines:
                break
            cursor = after
        for stream, (aside, fd) in handles.items():
            os.fsync(fd)
            os.link(aside, _target(destination, stream))
    except FileExistsError as exc:
        raise HilbotError(
            f"{exc.filename} already exists, and an export never overwrites a file",
            fix="export into a new, empty directory",
        ) from None
    finally:
        for aside, fd in handles.values():
            os.close(fd)
            aside.unlink(missing_ok=True)
    return moved


def _target(destination: Path, stream: str) -> Path:
    if stream == RATINGS:
        return destination / "ratings.jsonl"
    return destination / "runs" / f"{stream[len(RUN_PREFIX) :]}.jsonl"


def _handle(
    handles: dict[str, tuple[Path, int]], destination: Path, stream: str, moved: Moved
) -> int | None:
    from ..store import validate_run_id

    if stream not in handles:
        if stream.startswith(RUN_PREFIX):
            try:
                validate_run_id(stream[len(RUN_PREFIX) :])
            except HilbotError:
                return None
            moved.runs += 1
        elif stream != RATINGS:
            return None
        target = _target(destination, stream)
        if os.path.lexists(target):
            raise FileExistsError(0, "exists", str(target))
        target.parent.mkdir(parents=True, exist_ok=True)
        aside = target.with_name(f".{target.name}.partial")
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
        handles[stream] = (aside, os.open(aside, flags, 0o644))
    return handles[stream][1]


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def no_store(what: str) -> StoreError:
    """The error of ``hilbot store`` without a database to move from or to."""
    return StoreError(
        f"hilbot store {what} needs a database store, and none is set",
        fix="set HILBOT_STORE_URL (or [store] url) to postgresql://user@host:5432/db",
    )
