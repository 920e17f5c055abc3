"""A log kept by a shared backend: the :class:`~evaluation.log.EventLog` interface, its lines
committed to the backend (appends that arrive together share one transaction, as they share one
fsync in a file), read from the data directory's copy after pulling what is new."""

from __future__ import annotations

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

    def write_batch(self, lines: list[bytes]) -> BaseException | None:
        """Commit ``lines`` to the backend; the transaction is durable before this returns."""
        if not lines:
            return None
        try:
            self.backend.append(self.stream, lines)
        except HilbotError as exc:
            return exc
        self.fsyncs += 1
        return None

    def read(self, issues: list[LogIssue] | None = None, *, raw: bool = False) -> Iterator[Any]:
        """The stream's records, after pulling what other writers committed."""
        self.mirror.sync()
        return super().read(issues, raw=raw)

    def close(self) -> None:
        """Nothing is held open: the backend's connections are the store's."""
