"""A log kept by a shared backend: the :class:`~evaluation.log.EventLog` interface, its lines
committed to the backend (appends that arrive together share one transaction, as they share one
fsync in a file), read from the data directory's copy after pulling what is new."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

from ..errors import HilbotError
from ..log import EventLog, LogIssue

if TYPE_CHECKING:
    from .base import Backend
    from .mirror import Mirror


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
