"""The one store interface: every file hilbot writes goes through :class:`Store`.

Layout under the data directory (default ``results/``)::

    runs/<run-id>.jsonl   run_header, query_evaluation..., run_summary
    ratings.jsonl         rating, skip, note, review_summary ...
    llm-calls.jsonl       what was sent to an LLM provider (after redaction), tokens, cost
    connectors-calls.jsonl  what a connector sent to another tool, and where
    cache/llm/ab/<key>.json  LLM answers keyed by model and prompt

A run file is created whole and exclusively: its records are written to a temporary file in
``runs/``, fsynced, and hard-linked into place, which fails if anything (a run, a symbolic link)
already has the name. A crash or a full disk leaves no half run behind. Nothing but the store
writes to the logs: reports and exports (``write_file``/``write_bytes``) refuse their paths.
"""

from __future__ import annotations

import errno
import json
import os
import re
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Iterable

from pydantic import BaseModel

from .backends import Backend, Claim, Line, Mirror, RunTaken, SharedLog
from .backends.base import RATINGS, RUN_PREFIX
from .backends.mirror import STATE as MIRROR_STATE
from .backends.shared import CopyLog, read_copy
from .errors import HilbotError, LogError, RunNotFound
from .log import EventLog, LogIssue, encode_all, fsync_dir, os_fix, os_reason, read_log
from .records import QueryEvaluation, RunHeader, RunSummary
from .runs import Run
from .scrub import scrub

_RUN_ID = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$")


def validate_run_id(run_id: str) -> str:
    """Return ``run_id`` if it is safe as a file name, else raise a one-line error."""
    if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id) or run_id.endswith(".partial"):
        raise HilbotError(
            f"invalid run id {run_id!r}",
            fix="use letters, digits, '.', '_' and '-' only, no path separators, not starting with "
            "'.' (see `hilbot review --list`)",
        )
    return run_id


class Store:
    """The data directory: run files and the ratings log (in its JSONL files, or in a shared
    backend named by ``url``, of which the data directory then holds a read copy)."""

    def __init__(self, data_dir: str | Path = "results", *, url: str | None = None):
        self.root = Path(data_dir)
        self.url = url
        """The shared backend's URL (None: the JSONL files)."""
        self.backend: Backend | None = None
        """The shared backend (None: the JSONL files are the store)."""
        self.mirror: Mirror | None = None
        """The data directory as the shared backend's read copy."""
        self.ratings: EventLog = EventLog(self.root / "ratings.jsonl")
        """The human events log."""
        self.copy = url is None and (self.root / MIRROR_STATE).exists()
        """Whether the data directory is a database store's read copy, opened without the
        database (readable; every write is refused)."""
        if url is not None:
            self._share(url)
        elif self.copy:
            self.ratings = CopyLog(self.root / "ratings.jsonl")
        self.llm_calls = EventLog(self.root / "llm-calls.jsonl")
        """Every call sent to an LLM provider, after redaction."""
        self.connector_calls = EventLog(self.root / "connectors-calls.jsonl")
        """Every call a connector made to another tool (what was sent where), scrubbed."""
        self._runs: dict[str, EventLog] = {}

    def _share(self, url: str) -> None:
        from .backends import Mirror, SharedLog, open_backend

        self.backend = open_backend(url)
        self.mirror = Mirror(self.root, self.backend)
        self.ratings = SharedLog(self.backend, RATINGS, self.mirror)
        try:
            self.sync()
        except BaseException:  # refused (or unreachable): the pool is not left running
            self.backend.close()
            raise

    @property
    def shared(self) -> bool:
        """Whether several processes (bot replicas) share this store through a backend."""
        return self.backend is not None

    def sync(self) -> list[Line]:
        """Bring the data directory's copy up to the shared backend; the lines that were new (none
        with the JSONL files, which are the store)."""
        return self.mirror.sync() if self.mirror is not None else []

    def claim(self, claim: Claim) -> list[str]:
        """Claim items to deal (a shared store: in the database, across replicas); with the JSONL
        files, one process deals and every candidate is granted."""
        if self.backend is None:
            return list(claim.item_ids[: claim.room])
        return self.backend.claim(claim)

    def release(self, run_id: str, dimension: str, reviewer_key: str, item_id: str) -> None:
        """Free a claim whose card never went out."""
        if self.backend is not None:
            self.backend.release(run_id, dimension, reviewer_key, item_id)

    def once(self, key: str) -> bool:
        """Whether this caller is the first to ask for ``key``: a shared store answers True to one
        replica only (a scheduled digest is posted once); the JSONL files, always True."""
        return self.backend.once(key) if self.backend is not None else True

    def expire(self) -> list[bytes]:
        """Expire the shared store's claims past their time (a delivery of kind ``expired`` is
        logged for each); none with the JSONL files."""
        return self.backend.expire() if self.backend is not None else []

    def close(self) -> None:
        """Close the backend's connections (the JSONL files hold none)."""
        if self.backend is not None:
            self.backend.close()

    # ------------------------------------------------------------------ runs

    def run_path(self, run_id: str) -> Path:
        """Path of a run's file (the id is validated first)."""
        return self.root / "runs" / f"{validate_run_id(run_id)}.jsonl"

    def run_log(self, run_id: str) -> EventLog:
        """The event log of one run."""
        if run_id not in self._runs:
            path = self.run_path(run_id)
            self._runs[run_id] = (
                SharedLog(self.backend, RUN_PREFIX + run_id, self.mirror)
                if self.backend is not None and self.mirror is not None
                else CopyLog(path)
                if self.copy
                else EventLog(path)
            )
        return self._runs[run_id]

    def run_exists(self, run_id: str) -> bool:
        """Whether a run file (or anything else) has the run's name."""
        return os.path.lexists(self.run_path(run_id))

    def ensure_free(self, run_id: str) -> None:
        """Raise the one-line error ``create_run`` would give if ``run_id`` is taken (to fail before
        any work)."""
        if self.run_exists(run_id):
            raise _taken(self.run_path(run_id))

    def new_run_id(self) -> str:
        """A timestamp id (``2025-12-17T22-32-30``), suffixed ``-2``, ``-3``… if taken."""
        base = datetime.now().strftime("%Y-%m-%dT%H-%M-%S")
        return self._free_id(base)

    def _free_id(self, base: str) -> str:
        run_id, n = base, 1
        while self.run_exists(run_id):
            n += 1
            run_id = f"{base}-{n}"
        return run_id

    def create_run(
        self,
        header: RunHeader,
        items: Iterable[QueryEvaluation],
        summary: RunSummary | None = None,
        *,
        generated: bool = False,
    ) -> Path:
        """Write a new run whole (aside, then linked into place); never touches an existing one.

        With ``generated`` the id was made up by hilbot, and a taken one is replaced by the next
        free id.
        """
        records: list[BaseModel] = [header, *items]
        if summary is not None:
            records.append(summary)
        return self._place_run(records, generated)

    def start_run(self, header: RunHeader, *, generated: bool = False) -> tuple[EventLog, str]:
        """Create a run file holding only ``header`` (exclusively); returns its log, for the items,
        and its id."""
        path = self._place_run([header], generated)
        run_id = path.stem
        return self.run_log(run_id), run_id

    def _place_run(self, records: list[BaseModel], generated: bool) -> Path:
        if self.backend is not None:
            return self._place_shared(records, generated)
        if self.copy:
            raise read_copy(self.root)
        folder = self._runs_folder()
        run_id = records[0].run_id  # type: ignore[attr-defined]
        while True:
            path = self.run_path(run_id)
            try:
                _write_aside_and_link(folder, path, records)
                return path
            except FileExistsError:
                if not generated or os.path.islink(path):
                    raise _taken(path) from None
                run_id = self._free_id(run_id)
                records = [_with_run_id(r, run_id) for r in records]

    def _place_shared(self, records: list[BaseModel], generated: bool) -> Path:
        """A run created whole in the backend (one transaction), then copied here."""
        assert self.backend is not None
        run_id = records[0].run_id  # type: ignore[attr-defined]
        while True:
            self.sync()
            if not generated or not self.run_exists(run_id):
                try:
                    self.backend.append(RUN_PREFIX + run_id, encode_all(records), new=True)
                    break
                except RunTaken:
                    if not generated:
                        raise _taken(self.run_path(run_id)) from None
            run_id = self._free_id(run_id)
            records = [_with_run_id(r, run_id) for r in records]
        self.sync()
        return self.run_path(run_id)

    def _runs_folder(self) -> Path:
        """``runs/``, created if missing; a symbolic link there is refused (runs stay in the data
        directory)."""
        folder = self.root / "runs"
        if folder.is_symlink():
            raise LogError(
                "it is a symbolic link, and hilbot never writes through one",
                where=str(folder),
                fix="replace the link with a directory, or point --data-dir at the real data "
                "directory",
            )
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LogError(
                f"cannot create the runs directory: {os_reason(exc)}",
                where=str(folder),
                fix="check --data-dir and its permissions",
            ) from None
        _sweep_partials(folder)
        return folder

    def run_ids(self) -> list[str]:
        """Ids of all runs in ``runs/``, newest file first (a dangling link is not a run)."""
        folder = self.root / "runs"
        if not folder.is_dir():
            return []
        found = []
        for path in folder.glob("*.jsonl"):
            try:
                info = path.stat()
            except OSError:  # a dangling link, or unreadable: not a run
                continue
            if _RUN_ID.fullmatch(
                path.stem
            ):  # a directory or a pipe is listed, for its readers to report
                found.append((info.st_mtime, path.name, path.stem))
        return [run_id for _, _, run_id in sorted(found, reverse=True)]

    def run_header(self, run_id: str) -> RunHeader | None:
        """The first record of a run file, if it is a readable header."""
        for record in read_log(self.run_path(run_id), []):
            return record if isinstance(record, RunHeader) else None
        return None

    def load_run(self, run_id: str, issues: list[LogIssue] | None = None) -> Run:
        """Read a run file into a :class:`Run`."""
        path = self.run_path(run_id)
        if not path.exists():
            raise RunNotFound(
                f"no run {run_id!r} in {self.root}", fix="list runs with `hilbot review --list`"
            )
        return Run.from_records(run_id, read_log(path, issues))

    # ------------------------------------------------------------------ human events

    def human_events(self, issues: list[LogIssue] | None = None) -> Iterable[BaseModel]:
        """Stream ratings.jsonl."""
        return self.ratings.read(issues)

    # ------------------------------------------------------------------ LLM cache

    def _cache_path(self, key: str) -> Path:
        if not re.fullmatch(r"[0-9a-f]{64}", key):
            raise ValueError(f"not a cache key: {key!r}")
        return self.root / "cache" / "llm" / key[:2] / f"{key}.json"

    def cache_get(self, key: str) -> dict | None:
        """A cached LLM answer, or None (a damaged entry counts as a miss)."""
        try:
            return json.loads(self._cache_path(key).read_text("utf-8"))
        except (OSError, ValueError):
            return None

    def cache_put(self, key: str, value: dict) -> None:
        """Store an LLM answer under its key (atomically, scrubbed of secrets)."""
        _write_atomic(
            self._cache_path(key),
            scrub(json.dumps(value)).encode("utf-8"),
            durable=False,
            private=True,
        )

    # ------------------------------------------------------------------ other files

    def write_file(self, path: str | Path, content: str, *, durable: bool = True) -> Path:
        """Write a whole text file (a report, an export) atomically, scrubbed of secrets;
        ``durable`` fsyncs it first."""
        return self.write_bytes(
            path,
            scrub(content)
            .encode("utf-8", "surrogatepass")
            .decode("utf-8", "replace")
            .encode("utf-8"),
            durable=durable,
        )

    def write_bytes(self, path: str | Path, content: bytes, *, durable: bool = True) -> Path:
        """Write a whole file (a report, a chart) atomically; refuses the store's own logs."""
        path = Path(path)
        self.refuse_logs(path)
        try:
            return _write_atomic(path, content, durable=durable)
        except (OSError, ValueError) as exc:
            reason = os_reason(exc) if isinstance(exc, OSError) else "the path holds a NUL byte"
            raise HilbotError(
                f"cannot write: {reason}",
                where=str(path),
                fix="choose another --out (a file in a writable directory)",
            ) from None

    def refuse_logs(self, path: str | Path) -> None:
        """Refuse a path that is, or leads to, one of the logs (or a run file, or the cache): a
        command that writes a file asks before it does the work."""
        path = Path(path)
        if _is_under(path, self._protected()):
            raise HilbotError(
                "that is one of hilbot's own logs, which only hilbot appends to",
                where=str(path),
                fix="choose another --out, outside the runs/ and cache/ folders and not a .jsonl log",
            )

    def _protected(self) -> list[Path]:
        return [
            self.ratings.path,
            self.llm_calls.path,
            self.connector_calls.path,
            self.root / "runs",
            self.root / "cache",
        ]


def _is_under(path: Path, protected: list[Path]) -> bool:
    """Whether ``path`` (as given, or with every link resolved) is one of ``protected`` or inside
    one."""
    try:
        candidates = {
            Path(os.path.abspath(path)),
            Path(os.path.realpath(path)),
            Path(os.path.realpath(path.parent)) / path.name,
        }
        roots = [Path(os.path.realpath(p)) for p in protected] + [
            Path(os.path.abspath(p)) for p in protected
        ]
    except (OSError, ValueError):
        return False
    return any(c == r or r in c.parents for c in candidates for r in roots)


def _mode_for(path: Path) -> int:
    """The permissions a file written whole gets: those of the file it replaces, else what
    ``open`` would give a new one (the umask), never the temporary file's 0600."""
    try:
        return os.stat(path, follow_symlinks=False).st_mode & 0o777
    except OSError:
        mask = os.umask(0o022)
        os.umask(mask)
        return 0o666 & ~mask


def _write_atomic(path: Path, content: bytes, *, durable: bool, private: bool = False) -> Path:
    """Write ``path`` whole: a temporary file beside it, fsynced if ``durable``, renamed over it;
    readable as the file it replaces (or a new file) is, or by the owner only when ``private``."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a parent is a file
        raise NotADirectoryError(errno.ENOTDIR, "Not a directory", str(path.parent)) from None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        if not private:
            os.fchmod(fd, _mode_for(path))
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _write_aside_and_link(folder: Path, path: Path, records: list[BaseModel]) -> None:
    """Write a run's records to a temporary file in ``folder``, fsync, and hard-link it to ``path``
    (exclusive)."""
    tmp = ""
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.stem}.", suffix=".partial")
        with os.fdopen(fd, "wb") as handle:
            for line in encode_all(records):
                handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
        os.link(tmp, path, follow_symlinks=False)  # fails if the name is taken, by a run or a link
        fsync_dir(folder)
    except FileExistsError:
        raise
    except OSError as exc:
        raise LogError(
            f"could not write the run: {os_reason(exc)}",
            where=str(path),
            fix=f"{_run_fix(exc)}, then run the command again; nothing was written",
        ) from None
    finally:
        if tmp:
            Path(tmp).unlink(missing_ok=True)


def _run_fix(exc: OSError) -> str:
    """What to do when a run file cannot be written: the OS error's own fix, or the usual two."""
    if exc.errno in (
        errno.ENOSPC,
        errno.EDQUOT,
        errno.EFBIG,
        errno.EROFS,
        errno.EACCES,
        errno.EPERM,
    ):
        return os_fix(exc)
    return "free disk space or raise the file size limit (ulimit -f)"


def _sweep_partials(folder: Path, older_than_s: float = 3600.0) -> None:
    """Remove what a killed writer left aside (``.<id>.*.partial``) more than an hour ago."""
    now = time.time()
    for leftover in folder.glob(".*.partial"):
        try:
            if now - leftover.lstat().st_mtime > older_than_s:
                leftover.unlink()
        except OSError:
            pass


def _taken(path: Path) -> HilbotError:
    if os.path.islink(path):
        return LogError(
            "a symbolic link has the run's name, and hilbot never writes through one",
            where=str(path),
            fix="remove the link, or choose another --run-id",
        )
    return HilbotError(
        f"run {path.stem!r} already exists",
        where=str(path),
        fix="choose another --run-id; runs are never overwritten",
    )


def _with_run_id(record: BaseModel, run_id: str) -> BaseModel:
    return record.model_copy(update={"run_id": run_id}) if hasattr(record, "run_id") else record
