"""The append-only JSONL event log: durable appends with group commit, streaming reads.

Append: one ``write`` per line on an ``O_APPEND`` descriptor under an exclusive ``flock``,
then ``fsync`` before the caller is told the record is stored. Appends that arrive together
in one process (threads, or asyncio tasks) share one ``fsync``: the first caller becomes the
leader, writes everything queued so far and syncs once; the others wait for it.

Read: streaming, line by line. A torn last line (a crash mid-write) is reported and skipped;
before the next batch is written the writer checks the file's last byte and starts a fresh
line, so two records never share a line. Any other bad line is reported as
``file:line: reason`` and left in place. Nothing is ever rewritten.

Files that others replace: before every write (and after it) the writer checks, under the lock,
that the path still names the file it holds open (device and inode), that the file has not
shrunk, and that the last line it wrote is still where it wrote it (one ``pread``): a lock-less
``cp older.jsonl ratings.jsonl`` keeps the inode, and another writer's appends can grow the file
past its old size again, so neither size nor inode tells that a record is gone. When an editor's
save-by-rename or ``sed -i`` replaced the file, or a deletion removed it, the writer reopens the
path. Records this writer acknowledged in the last ten minutes that the file lacks (the editor
read the file before they were written) are appended again, once. A writer that finds no file
and creates one watches the path for a moment after writing: an editor may have moved the log
aside under its lock, to move it back over the new file. A program that edits the log while hilbot
runs should hold the same lock (``flock FILE sed -i …``) and keep the log away no longer than that
moment; then nothing is ever at risk.

Files are opened without following a symbolic link, and must be regular files.
"""

from __future__ import annotations

import asyncio
import errno
import fcntl
import json
import logging
import os
import stat
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from pydantic import BaseModel, ValidationError

from . import _json
from .errors import HilbotError, LogError
from .records import parse_record
from .scrub import scrub, scrubber

RECENT_S = 600.0
"""How long a writer remembers what it wrote, to put it back if a replacement of the file drops
it."""
_RECENT_BYTES = 16 << 20
_ATTEMPTS = 50
_SETTLE_S, _SETTLE_POLLS = 0.02, 10
_CREATED_SETTLE_S = 0.02
"""How long a writer that created the log watches for the log moved back over it."""
_log = logging.getLogger("hilbot.log")


@dataclass(frozen=True)
class LogIssue:
    """A line of a log that could not be read."""

    path: Path
    line: int
    reason: str
    torn: bool = False

    def __str__(self) -> str:
        text = f"{self.path}:{self.line}: {self.reason}"
        if self.torn:
            return text
        return (
            f"{text} (to delete it while hilbot runs, edit under its lock: flock {self.path} "
            f"sed -i '{self.line}d' {self.path})"
        )


def encode(record: BaseModel | dict[str, Any], clean: Callable[[str], str] | None = None) -> bytes:
    """One record as one JSON line (UTF-8, newline-terminated), every secret the process holds
    scrubbed.

    ``clean`` is :func:`evaluation.scrub.scrubber`'s function for a batch (default: :func:`scrub`).
    A lone surrogate, which UTF-8 cannot hold (a model's or a target's text can carry one),
    becomes U+FFFD rather than failing the write.
    """
    clean = clean or scrub
    try:
        return clean(_dumps(record)).encode("utf-8") + b"\n"
    except (
        ValueError
    ):  # UnicodeEncodeError, or pydantic's serialization error, for a lone surrogate
        data = (
            record.model_dump(mode="json", exclude_none=True)
            if isinstance(record, BaseModel)
            else record
        )
        text = clean(
            json.dumps(
                data, ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False
            )
        )
        return (
            text.encode("utf-8", "surrogatepass").decode("utf-8", "replace").encode("utf-8") + b"\n"
        )


def encode_all(records: Iterable[BaseModel | dict[str, Any]]) -> list[bytes]:
    """:func:`encode` for a batch (the environment is looked at once for its secrets)."""
    clean = scrubber()
    return [encode(r, clean) for r in records]


def _dumps(record: BaseModel | dict[str, Any]) -> str:
    if isinstance(record, BaseModel):
        return record.model_dump_json(exclude_none=True)
    return json.dumps(
        record, ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False
    )


class _Ticket:
    __slots__ = ("lines", "done", "error")

    def __init__(self, lines: list[bytes]):
        self.lines = lines
        self.done = False
        self.error: BaseException | None = None


class EventLog:
    """One append-only JSONL file. Thread-safe; usable from sync code and from asyncio."""

    def __init__(self, path: str | Path, *, recent_s: float = RECENT_S):
        self.path = Path(path)
        self.fsyncs = 0
        """How many fsyncs this instance has issued (group commit makes it < appends)."""
        self.restored = 0
        """Records appended again because a replacement of the file had dropped them."""
        self._fd: int | None = None
        self._created = False
        """Whether this writer created the file it holds (see :meth:`_until_moved_back`)."""
        self._identity: tuple[int, int] = (-1, -1)
        self._end = 0
        self._last: tuple[int, bytes] | None = None
        """Where this writer's last line starts in the file it holds, and the line."""
        self._recent: deque[tuple[float, bytes]] = deque()
        self._recent_bytes = 0
        self._recent_s = recent_s
        self._cond = threading.Condition()
        self._queue: list[_Ticket] = []
        self._leader = False
        self._aio: dict[int, _AsyncBatcher] = {}

    # ------------------------------------------------------------------ writing

    def append(self, record: BaseModel | dict[str, Any]) -> None:
        """Append one record; returns once it is on disk (fsynced)."""
        self.append_many([record])

    def append_many(self, records: Iterable[BaseModel | dict[str, Any]]) -> None:
        """Append records in order; returns once all are on disk (one fsync, shared with concurrent
        callers)."""
        lines = encode_all(records)
        if lines:
            self._commit(lines)

    async def aappend(self, record: BaseModel | dict[str, Any]) -> None:
        """Async append: resolves once the record is on disk. Concurrent tasks share fsyncs."""
        await self.aappend_many([record])

    async def aappend_many(self, records: Iterable[BaseModel | dict[str, Any]]) -> None:
        """Async append of several records in order; resolves once all are on disk."""
        lines = encode_all(records)
        if not lines:
            return
        loop = asyncio.get_running_loop()
        batcher = self._aio.get(id(loop))
        if batcher is None or batcher.loop is not loop:
            batcher = self._aio[id(loop)] = _AsyncBatcher(self, loop)
        await batcher.submit(lines)

    def close(self) -> None:
        """Put back what a replacement of the file dropped, then close the descriptor (appends
        reopen it)."""
        if self._fd is not None and self._recent:
            try:
                self._commit([])
            except LogError as exc:
                _log.error("%s", exc)
        with self._cond:
            while self._leader:
                self._cond.wait()
            self._drop()

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
                    error = self.write_batch([line for t in batch for line in t.lines])
                finally:
                    self._cond.acquire()
                    self._leader = False
                for t in batch:
                    t.done, t.error = True, error
                self._cond.notify_all()
        if isinstance(ticket.error, HilbotError):  # a backend's error says its own fix
            raise ticket.error
        if ticket.error is not None:
            raise LogError(
                f"could not append: {os_reason(ticket.error)}",
                where=str(self.path),
                fix=os_fix(ticket.error) + "; the record was not stored",
            ) from ticket.error

    def write_batch(self, lines: list[bytes]) -> BaseException | None:
        """Write ``lines`` to the file the path names, fsync, and check it still names it
        afterwards; the error, if any. The one place lines reach the medium: a log kept elsewhere
        (:class:`evaluation.backends.SharedLog`) overrides it."""
        try:
            for _ in range(_ATTEMPTS):
                fd, restore, size = self._lock()
                try:
                    missing = self._missing(fd) if restore else []
                    self._append_locked(fd, missing + lines, size)
                finally:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                if missing or lines:
                    os.fsync(fd)
                    self.fsyncs += 1
                self._note_restored(len(missing))
                self._remember(lines)
                lines = []
                if self._created:
                    self._created = False
                    self._until_moved_back()
                if self._state()[0] in (
                    "same",
                    "shrunk",
                ):  # a shrink is put right at the next write
                    return None
            raise OSError(errno.EAGAIN, "the file kept being replaced while hilbot wrote to it")
        except OSError as exc:
            return exc

    def _lock(self) -> tuple[int, bool, int]:
        """The locked descriptor of the file the path names now, whether it may lack records of
        ours, and its size."""
        restore = False
        for _ in range(_ATTEMPTS):
            fd = self._open()
            fcntl.flock(fd, fcntl.LOCK_EX)
            state, size = self._state()
            if state == "shrunk":
                return fd, True, _settled(fd)
            if state == "same":
                return fd, restore, size
            fcntl.flock(fd, fcntl.LOCK_UN)
            self._drop()
            if state == "gone":  # deleted or moved away: what was in it went with it
                self._recent.clear()
                self._recent_bytes = 0
            restore = state == "replaced"
        raise OSError(errno.EAGAIN, "the file kept being replaced while hilbot wrote to it")

    def _until_moved_back(self) -> None:
        """After writing to a file this writer created: wait a moment for the log to come back.

        The path had no file, so this writer made one; but an editor holding the lock may have
        moved the log aside, to move it back over the new file (``flock FILE mv …``). Acknowledged
        now, the records would vanish with the new file if this writer died before its next write
        put them back. For :data:`_CREATED_SETTLE_S` after such a write the path is watched; if it
        names another file by then, the write loop puts the records into that one first."""
        deadline = time.monotonic() + _CREATED_SETTLE_S
        while time.monotonic() < deadline:
            if self._state()[0] != "same":
                return
            time.sleep(_CREATED_SETTLE_S / 8)

    def _state(self) -> tuple[str, int]:
        """What the path names now, and its size: ``same``; ``shrunk`` (rewritten in place: smaller,
        or our last line no longer where we wrote it); ``replaced`` or ``gone`` (another file, or
        none). One ``stat`` (the file held open is known by its device and inode) and one
        ``pread``."""
        try:
            named = os.stat(self.path, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return "gone", 0
        if (named.st_dev, named.st_ino) != self._identity:
            return "replaced", 0
        if named.st_size < self._end or not self._last_in_place():
            return "shrunk", named.st_size
        return "same", named.st_size

    def _last_in_place(self) -> bool:
        """Whether the last line this writer wrote is still at the offset it was written at."""
        if self._last is None or self._fd is None:
            return True
        offset, line = self._last
        return os.pread(self._fd, len(line), offset) == line

    def _append_locked(self, fd: int, lines: list[bytes], size: int) -> None:
        """Append ``lines`` at the end of a file of ``size`` bytes (locked), on a fresh line."""
        if lines and size and os.pread(fd, 1, size - 1) != b"\n":
            size += os.write(fd, b"\n")  # a torn last line: start a fresh one
        for line in lines:
            _write_all(fd, line)
            self._last = (size, line)
            size += len(line)
        self._end = size

    def _missing(self, fd: int) -> list[bytes]:
        """Our recent records the file does not hold (it replaced the one they were written to)."""
        wanted = {line.rstrip(b"\r\n") for _, line in self._recent}
        if wanted:
            with open(os.dup(fd), "rb") as handle:
                handle.seek(0)
                for raw in handle:
                    wanted.discard(raw.rstrip(b"\r\n"))
                    if not wanted:
                        break
        missing, seen = [], set()
        for _, line in self._recent:
            key = line.rstrip(b"\r\n")
            if key in wanted and key not in seen:
                seen.add(key)
                missing.append(line)
        return missing

    def _remember(self, lines: list[bytes]) -> None:
        now = time.monotonic()
        for line in lines:
            self._recent.append((now, line))
            self._recent_bytes += len(line)
        while self._recent and (
            self._recent_bytes > _RECENT_BYTES or now - self._recent[0][0] > self._recent_s
        ):
            self._recent_bytes -= len(self._recent.popleft()[1])

    def _note_restored(self, count: int) -> None:
        if count:
            self.restored += count
            _log.warning(
                "%s was replaced while hilbot wrote to it; %d record(s) the new file lacked were "
                "appended again",
                self.path,
                count,
            )

    def _open(self) -> int:
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, created = _open_append(self.path)
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                os.close(fd)
                raise OSError(errno.EINVAL, "not a regular file")
            if created:  # make the new directory entry durable too
                fsync_dir(self.path.parent)
            self._fd, self._end, self._identity = fd, info.st_size, (info.st_dev, info.st_ino)
            self._created = created
            self._last = None
        return self._fd

    def _drop(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    # ------------------------------------------------------------------ reading

    def read(self, issues: list[LogIssue] | None = None, *, raw: bool = False) -> Iterator[Any]:
        """Stream the log's records (pydantic models, or dicts with ``raw``); bad lines go to
        ``issues``."""
        return read_log(self.path, issues, raw=raw)


def _open_append(path: Path) -> tuple[int, bool]:
    """An append descriptor of ``path`` (created if missing), never through a symbolic link; (fd,
    created)."""
    flags = os.O_RDWR | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW
    for _ in range(_ATTEMPTS):
        try:
            return os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644), True
        except FileExistsError:
            pass
        try:
            return os.open(path, flags), False
        except FileNotFoundError:
            continue
    raise OSError(errno.EAGAIN, "the file kept appearing and disappearing")


def _settled(fd: int) -> int:
    """The size of a file rewritten in place once it stops changing (at most ~0.1 s).

    A program that rewrites the file without the lock (``cp older.jsonl ratings.jsonl``) may
    still be writing it: what it will hold is known only when it is done.
    """
    before = os.fstat(fd)
    for _ in range(_SETTLE_POLLS):
        time.sleep(_SETTLE_S)
        now = os.fstat(fd)
        if (now.st_size, now.st_mtime_ns) == (before.st_size, before.st_mtime_ns):
            break
        before = now
    return before.st_size


def fsync_dir(folder: Path) -> None:
    """Make a directory's entries (a file created, linked or renamed in it) durable."""
    dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


_REASONS = {
    errno.ELOOP: "it is a symbolic link, and hilbot never writes through one",
    errno.EINVAL: "it is not a regular file",
    errno.ENOSPC: "no space left on the device (its disk or its inodes are full)",
    errno.EDQUOT: "the disk quota is used up",
    errno.EFBIG: "the file size limit was reached (ulimit -f)",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EROFS: "the file system is read-only",
    errno.ENOTDIR: "a part of the path is a file, not a directory",
    errno.EISDIR: "it is a directory",
    errno.ENAMETOOLONG: "the path is too long",
}
_FIXES = {
    errno.ELOOP: "replace the link with the file itself, or point --data-dir at the real directory",
    errno.EINVAL: "move it away so hilbot can create the file",
    errno.ENOSPC: "free some disk space (or inodes: df -i)",
    errno.EDQUOT: "free some space",
    errno.EFBIG: "raise the limit (ulimit -f unlimited)",
    errno.EACCES: "check the file's and directory's permissions",
    errno.EPERM: "check the file's and directory's permissions",
    errno.EROFS: "use a writable data directory (--data-dir)",
    errno.ENOTDIR: "choose a path whose parents are directories",
    errno.EISDIR: "name a file, not a directory",
    errno.ENAMETOOLONG: "choose a shorter path",
}


def os_reason(exc: BaseException) -> str:
    """What an OS error means for the file, in words (``permission denied``)."""
    if (
        isinstance(exc, OSError)
        and exc.errno in _REASONS
        and not (exc.errno == errno.EINVAL and exc.strerror != "not a regular file")
    ):
        return _REASONS[exc.errno]
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror[0].lower() + exc.strerror[1:]
    return str(exc) or type(exc).__name__


def os_fix(exc: BaseException) -> str:
    """How to put right what an OS error says of a file (``free some disk space``)."""
    default = "check the disk and the file's permissions"
    errno_ = getattr(exc, "errno", None)
    if errno_ is None or (
        errno_ == errno.EINVAL and getattr(exc, "strerror", None) != "not a regular file"
    ):
        return default
    return _FIXES.get(errno_, default)


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
    if isinstance(
        exc, _json.JSONInputError
    ):  # the column, as the standard library's errors give it
        if exc.reason.startswith("invalid JSON (") and exc.column:
            return f"{exc.reason[:-1]} at column {exc.column})"
        return exc.reason
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON ({exc.msg} at column {exc.colno})"
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply"
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"][1:] or err["loc"])
        return f"{loc}: {err['msg']}" if loc else err["msg"]
    return str(exc)


def issue_reason(exc: Exception, torn: bool = False) -> str:
    """The reason a bad line is reported with (:attr:`LogIssue.reason`): a torn last line, or what
    is wrong with the line (``exc``, as :func:`parse_line` raised it) and that it is skipped."""
    if torn:
        return TORN_LINE
    return _reason(exc) + "; " + BAD_LINE


def parse_line(raw: bytes, as_dict: bool = False) -> Any:
    """One line of a log as :func:`read_log` reads it: its JSON (hostile input refused, duplicate
    keys too) as a record model, or as a dict with ``as_dict``. A ``ValueError`` (JSON, or not a
    record object), ``RecursionError`` or pydantic ``ValidationError`` when the line is bad."""
    obj = _json.loads(raw, duplicates=True)
    if not isinstance(obj, dict):
        raise ValueError("a record must be a JSON object")
    if "type" not in obj:
        raise ValueError("missing field 'type'")
    return obj if as_dict else parse_record(obj)


def open_for_reading(path: Path) -> Any:
    """A binary file object for ``path``, or None when it does not exist; only regular files are
    read (a directory, a FIFO or a device is a one-line ``LogError``, and opening never blocks)."""
    try:
        fd = os.open(
            path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
        )  # a FIFO must not block the reader
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LogError(f"cannot read: {os_reason(exc)}", where=str(path), fix=os_fix(exc)) from None
    kind = os.fstat(fd).st_mode
    if not stat.S_ISREG(kind):
        os.close(fd)
        what = "it is a directory" if stat.S_ISDIR(kind) else "it is not a regular file"
        raise LogError(
            f"cannot read: {what}",
            where=str(path),
            fix="give the path of a JSONL file, or move this away",
        )
    return os.fdopen(fd, "rb")


def read_log(
    path: str | Path, issues: list[LogIssue] | None = None, *, raw: bool = False
) -> Iterator[Any]:
    """Stream records from ``path``; a missing file reads as empty. Bad lines are reported, never
    fatal."""
    return (record for _, record in read_numbered(path, issues, raw=raw))


def read_numbered(
    path: str | Path, issues: list[LogIssue] | None = None, *, raw: bool = False
) -> Iterator[tuple[int, Any]]:
    """Stream ``(line number, record)`` from ``path``, as :func:`read_log` does."""
    path = Path(path)
    handle = open_for_reading(path)
    if handle is None:
        return
    with handle:
        try:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    yield number, parse_line(line, raw)
                except (ValueError, ValidationError, RecursionError) as exc:
                    if issues is not None:
                        torn = not line.endswith(b"\n")
                        issues.append(LogIssue(path, number, issue_reason(exc, torn), torn))
        except OSError as exc:
            raise LogError(
                f"cannot read: {os_reason(exc)}", where=str(path), fix=os_fix(exc)
            ) from None


BAD_LINE = "skipped and left in place"
"""What happens to a bad line, said after its reason."""
TORN_LINE = "torn last line (a crash mid-write?), skipped; the next append starts on a fresh line"
"""The reason a torn last line is reported with."""
