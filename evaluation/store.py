"""The one store interface: every file hilbot writes goes through :class:`Store`.

Layout under the data directory (default ``results/``)::

    runs/<run-id>.jsonl   run_header, query_evaluation..., run_summary
    ratings.jsonl         rating, skip, note, review_summary ...
    llm-calls.jsonl       what was sent to an LLM provider (after redaction), tokens, cost
    cache/llm/ab/<key>.json  LLM answers keyed by model and prompt
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Iterable

from pydantic import BaseModel

from .errors import HilbotError, RunNotFound
from .log import EventLog, LogIssue, read_log
from .records import QueryEvaluation, RunHeader, RunSummary
from .runs import Run

_RUN_ID = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$")


def validate_run_id(run_id: str) -> str:
    """Return ``run_id`` if it is safe as a file name, else raise a one-line error."""
    if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):
        raise HilbotError(
            f"invalid run id {run_id!r}",
            fix="use letters, digits, '.', '_' and '-' only, no path separators, not starting with '.' "
            "(see `hilbot review --list`)",
        )
    return run_id


class Store:
    """The data directory: run files and the ratings log."""

    def __init__(self, data_dir: str | Path = "results"):
        self.root = Path(data_dir)
        self.ratings = EventLog(self.root / "ratings.jsonl")
        """The human events log."""
        self.llm_calls = EventLog(self.root / "llm-calls.jsonl")
        """Every call sent to an LLM provider, after redaction."""
        self._runs: dict[str, EventLog] = {}

    # ------------------------------------------------------------------ runs

    def run_path(self, run_id: str) -> Path:
        """Path of a run's file (the id is validated first)."""
        return self.root / "runs" / f"{validate_run_id(run_id)}.jsonl"

    def run_log(self, run_id: str) -> EventLog:
        """The event log of one run."""
        if run_id not in self._runs:
            self._runs[run_id] = EventLog(self.run_path(run_id))
        return self._runs[run_id]

    def run_exists(self, run_id: str) -> bool:
        """Whether a run file exists."""
        return self.run_path(run_id).exists()

    def create_run(self, header: RunHeader, items: Iterable[QueryEvaluation], summary: RunSummary | None = None) -> Path:
        """Write a new run; refuses to touch an existing one."""
        if self.run_exists(header.run_id):
            raise HilbotError(f"run {header.run_id!r} already exists", where=str(self.run_path(header.run_id)),
                              fix="choose another --run-id; runs are never overwritten")
        records: list[BaseModel] = [header, *items]
        if summary is not None:
            records.append(summary)
        self.run_log(header.run_id).append_many(records)
        return self.run_path(header.run_id)

    def run_ids(self) -> list[str]:
        """Ids of all runs, newest file first."""
        folder = self.root / "runs"
        if not folder.is_dir():
            return []
        files = sorted(folder.glob("*.jsonl"), key=lambda p: (p.stat().st_mtime, p.name), reverse=True)
        return [p.stem for p in files if _RUN_ID.fullmatch(p.stem)]

    def run_header(self, run_id: str) -> RunHeader | None:
        """The first record of a run file, if it is a readable header."""
        for record in read_log(self.run_path(run_id), []):
            return record if isinstance(record, RunHeader) else None
        return None

    def load_run(self, run_id: str, issues: list[LogIssue] | None = None) -> Run:
        """Read a run file into a :class:`Run`."""
        path = self.run_path(run_id)
        if not path.exists():
            raise RunNotFound(f"no run {run_id!r} in {self.root}", fix="list runs with `hilbot review --list`")
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
        """Store an LLM answer under its key (atomically)."""
        self.write_file(self._cache_path(key), json.dumps(value, ensure_ascii=False), durable=False)

    # ------------------------------------------------------------------ other files

    def write_file(self, path: str | Path, content: str, *, durable: bool = True) -> Path:
        """Write a whole text file atomically (temp file + rename); ``durable`` fsyncs it first."""
        return self.write_bytes(path, content.encode("utf-8"), durable=durable)

    def write_bytes(self, path: str | Path, content: bytes, *, durable: bool = True) -> Path:
        """Write a whole file (a report, a chart) atomically; ``durable`` fsyncs it first."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
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
