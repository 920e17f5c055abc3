"""The append-only JSONL event log: durable appends with group commit, streaming reads.

Append: one ``write`` per line on an ``O_APPEND`` descriptor under an exclusive ``flock``,
then ``fsync`` before the caller is told the record is stored. Appends that arrive together
in one process (threads, or asyncio tasks) share one ``fsync``: the first caller becomes the
leader, writes everything queued so far and syncs once; the others wait for it.

Read: streaming, line by line. A torn last line (a crash mid-write) is reported and skipped;
before the next batch is written the writer checks the file's last byte and starts a fresh
line, so two records never share a line. Any other bad line is reported as
``file:line: reason`` and left in place. Nothing is ever rewritten.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from pydantic import BaseModel, ValidationError

from .errors import LogError
from .records import parse_record


@dataclass(frozen=True)
class LogIssue:
    """A line of a log that could not be read."""

    path: Path
    line: int
    reason: str
    torn: bool = False

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


def encode(record: BaseModel | dict[str, Any]) -> bytes:
    """One record as one JSON line (UTF-8, newline-terminated)."""
    if isinstance(record, BaseModel):
        text = record.model_dump_json(exclude_none=True)
    else:
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.encode("utf-8") + b"\n"


class _Ticket:
    __slots__ = ("lines", "done", "error")

    def __init__(self, lines: list[bytes]):
        self.lines = lines
        self.done = False
        self.error: BaseException | None = None


class EventLog:
    """One append-only JSONL file. Thread-safe; usable from sync code and from asyncio."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.fsyncs = 0
        """How many fsyncs this instance has issued (group commit makes it < appends)."""
        self._fd: int | None = None
        self._cond = threading.Condition()
        self._queue: list[_Ticket] = []
        self._leader = False
        self._aio: dict[int, _AsyncBatcher] = {}

    # ------------------------------------------------------------------ writing

    def append(self, record: BaseModel | dict[str, Any]) -> None:
        """Append one record; returns once it is on disk (fsynced)."""
        self.append_many([record])

    def append_many(self, records: Iterable[BaseModel | dict[str, Any]]) -> None:
        """Append records in order; returns once all are on disk (one fsync, shared with concurrent callers)."""
        lines = [encode(r) for r in records]
        if lines:
            self._commit(lines)

    async def aappend(self, record: BaseModel | dict[str, Any]) -> None:
        """Async append: resolves once the record is on disk. Concurrent tasks share fsyncs."""
        await self.aappend_many([record])

    async def aappend_many(self, records: Iterable[BaseModel | dict[str, Any]]) -> None:
        """Async append of several records in order; resolves once all are on disk."""
        lines = [encode(r) for r in records]
        if not lines:
            return
        loop = asyncio.get_running_loop()
        batcher = self._aio.get(id(loop))
        if batcher is None or batcher.loop is not loop:
            batcher = self._aio[id(loop)] = _AsyncBatcher(self, loop)
        await batcher.submit(lines)

    def close(self) -> None:
        """Close the descriptor (appends reopen it)."""
        with self._cond:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def _commit(self, lines: list[bytes]) -> None:
        ticket = _Ticket(lines)
        with self._cond:
            self._queue.append(ticket)
            while not ticket.done:
                if self._leader:
                    self._cond.wait()
                    continue
                self._leader = True
                batch, self._queue = self._queue, []
                self._cond.release()
                try:
                    error = self._write_batch([line for t in batch for line in t.lines])
                finally:
                    self._cond.acquire()
                    self._leader = False
                for t in batch:
                    t.done, t.error = True, error
                self._cond.notify_all()
        if ticket.error is not None:
            raise LogError(f"could not append ({ticket.error})", where=str(self.path),
                           fix="check the disk and the file's permissions; the record was not stored") from ticket.error

    def _open(self) -> int:
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            created = not self.path.exists()
            self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            if created:  # make the new directory entry durable too
                dir_fd = os.open(self.path.parent, os.O_RDONLY)
                try:
                    os.fsync(dir_fd)
                finally:
                    os.close(dir_fd)
        return self._fd

    def _write_batch(self, lines: list[bytes]) -> BaseException | None:
        try:
            fd = self._open()
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    os.write(fd, b"\n")  # a torn last line: start a fresh one
                for line in lines:
                    _write_all(fd, line)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.fsync(fd)
            self.fsyncs += 1
            return None
        except OSError as exc:
            return exc

    # ------------------------------------------------------------------ reading

    def read(self, issues: list[LogIssue] | None = None, *, raw: bool = False) -> Iterator[Any]:
        """Stream the log's records (pydantic models, or dicts with ``raw``); bad lines go to ``issues``."""
        return read_log(self.path, issues, raw=raw)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class _AsyncBatcher:
    """Collects appends from asyncio tasks; one worker thread writes each batch with one fsync."""

    def __init__(self, log: EventLog, loop: asyncio.AbstractEventLoop):
        self.log = log
        self.loop = loop
        self.pending: list[tuple[list[bytes], asyncio.Future[None]]] = []
        self.flusher: asyncio.Task[None] | None = None

    async def submit(self, lines: list[bytes]) -> None:
        future: asyncio.Future[None] = self.loop.create_future()
        self.pending.append((lines, future))
        if self.flusher is None or self.flusher.done():
            self.flusher = self.loop.create_task(self._flush())
        await asyncio.shield(future)

    async def _flush(self) -> None:
        while self.pending:
            batch, self.pending = self.pending, []
            lines = [line for chunk, _ in batch for line in chunk]
            try:
                await asyncio.to_thread(self.log._commit, lines)
                error: BaseException | None = None
            except BaseException as exc:  # delivered to every waiter of the batch
                error = exc
            for _, future in batch:
                if not future.done():
                    future.set_result(None) if error is None else future.set_exception(error)


def _reason(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON ({exc.msg} at column {exc.colno})"
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply"
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"][1:] or err["loc"])
        return f"{loc}: {err['msg']}" if loc else err["msg"]
    return str(exc)


def _parse_line(raw: bytes, as_dict: bool) -> Any:
    obj = json.loads(raw)
    if not isinstance(obj, dict):
        raise ValueError("a record must be a JSON object")
    if "type" not in obj:
        raise ValueError("missing field 'type'")
    return obj if as_dict else parse_record(obj)


def read_log(path: str | Path, issues: list[LogIssue] | None = None, *, raw: bool = False) -> Iterator[Any]:
    """Stream records from ``path``; a missing file reads as empty. Bad lines are reported, never fatal."""
    path = Path(path)
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        return
    except OSError as exc:
        raise LogError(f"cannot read ({exc.strerror})", where=str(path), fix="check the path and its permissions") from None
    with handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                yield _parse_line(line, raw)
            except (ValueError, ValidationError, RecursionError) as exc:
                if issues is not None:
                    torn = not line.endswith(b"\n")
                    reason = ("torn last line (a crash mid-write?), skipped; the next append starts on a fresh line"
                              if torn else _reason(exc) + "; line left in place, fix or ignore it")
                    issues.append(LogIssue(path, number, reason, torn))
