"""A log kept by a shared backend: the :class:`~evaluation.log.EventLog` interface, its lines
committed to the backend (appends that arrive together share one transaction, as they share one
fsync in a file), read from the data directory's copy after pulling what is new."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from ..errors import HilbotError
from ..log import EventLog, LogIssue
from .base import StoreError

if TYPE_CHECKING:
    from .base import Backend
    from .mirror import Mirror


class CopyLog(EventLog):
    """A log file of a data directory that is a database store's read copy, opened without the
    database: readable, never written (a line written here would not be in the store, and the
    next sync would cut it off)."""

    def write_batch(self, lines: list[bytes]) -> BaseException | None:
        return read_copy(self.path.parent)


def _digest(line: bytes) -> bytes:
    return hashlib.blake2b(line, digest_size=16).digest()


def read_copy(root: Path) -> StoreError:
    """The error of a write to a database store's read copy."""
    return StoreError(
        f"{root} is the read copy of a database store, and nothing is written to it",
        fix="set HILBOT_STORE_URL (or [store] url) to that database to write, or export it to "
        "JSONL files with `hilbot store export DIR`",
    )


class SharedLog(EventLog):
    """One stream of a shared backend, behind the event log's interface."""

    def __init__(self, backend: "Backend", stream: str, mirror: "Mirror"):
        path = mirror.file_of(stream)
        assert path is not None, stream  # the store names only streams the mirror knows
        super().__init__(path)
        self.backend = backend
        self.stream = stream
        self.mirror = mirror
        self._written: dict[bytes, int] = {}
        """Digests of the lines this process stored, not yet read back by :meth:`since`."""
        self._guard = threading.Lock()

    def write_batch(self, lines: list[bytes]) -> BaseException | None:
        """Commit ``lines`` to the backend; the transaction is durable before this returns."""
        if not lines:
            return None
        try:
            self.backend.append(self.stream, lines)
        except HilbotError as exc:
            return exc
        self.fsyncs += 1
        with self._guard:
            for line in lines:
                digest = _digest(line)
                self._written[digest] = self._written.get(digest, 0) + 1
        return None

    def since(self, offset: int) -> tuple[list[bytes], int]:
        """The complete lines of the copy after byte ``offset`` that this process did not store
        itself, and the offset after them. Whoever pulled them into the copy (this process, or
        another reader of the data directory), every line is handed out once per caller's offset.
        A copy shorter than ``offset`` (being pulled again) hands out nothing yet."""
        try:
            with open(self.path, "rb") as handle:
                handle.seek(offset)
                data = handle.read()
        except FileNotFoundError:
            return [], offset
        end = data.rfind(b"\n") + 1
        lines = data[:end].splitlines(keepends=True)
        with self._guard:
            theirs = [line for line in lines if not self._mine(line)]
        return theirs, offset + end

    def _mine(self, line: bytes) -> bool:
        digest = _digest(line)
        left = self._written.get(digest, 0)
        if not left:
            return False
        if left == 1:
            del self._written[digest]
        else:
            self._written[digest] = left - 1
        return True

    def read(self, issues: list[LogIssue] | None = None, *, raw: bool = False) -> Iterator[Any]:
        """The stream's records, after pulling what other writers committed."""
        self.mirror.sync()
        return super().read(issues, raw=raw)

    def close(self) -> None:
        """Nothing is held open: the backend's connections are the store's."""
